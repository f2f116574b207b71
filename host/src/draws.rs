//! The draws of a run: what the runner produces and every output format
//! (CmdStan CSV, JSON summary, plots, `qnmc check`) reads.

use crate::metric_kind::MetricKind;
use crate::run::StopReason;

/// Kept draws of one chain, in the layout CmdStan writes them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChainDraws {
    /// 1-based chain id, as in CmdStan's `id=` argument.
    pub chain_id: usize,
    /// Seed the chain's generator was made from.
    pub seed: u64,
    /// `lp__`: log density (−U) at each kept draw, on the unconstrained scale
    /// with Jacobians, as Stan reports it. NaN where it was not computed
    /// (minibatch samplers with `--lp none` or `every N`, see
    /// [`LpMode`](crate::run::LpMode)).
    pub lp: Vec<f64>,
    /// `accept_stat__`: acceptance probability of the transition (1 for
    /// samplers without a Metropolis test).
    pub accept_stat: Vec<f64>,
    /// `stepsize__`: step size used for the transition (HAMCMC's and the
    /// SG-MCMC weights for step-size-weighted averages).
    pub step_size: Vec<f64>,
    /// `n_leapfrog__`: gradient evaluations of the transition.
    pub n_leapfrog: Vec<u32>,
    /// `divergent__`: the transition diverged or hit a non-finite value.
    pub divergent: Vec<bool>,
    /// Reported quantities, row-major: draw `i`, quantity `j` at
    /// `(i - values_from_row) * names.len() + j` (the names live in
    /// [`RunDraws::names`]).
    pub values: Vec<f64>,
    /// The first kept draw whose values [`values`](Self::values) holds: 0,
    /// unless a [`DrawSink`](crate::run::DrawSink) that keeps the values
    /// took them as they came (`qnmc run`: [`ValueSpills`](crate::output::ValueSpills)),
    /// so that a run's memory does not grow with its draws; the earlier
    /// draws' values are then read from the sink's files
    /// ([`DrawValues`](crate::draw_values::DrawValues)).
    pub values_from_row: usize,
    /// Warm-up iterations run (`--warmup`, or fewer when NUTS ended its
    /// warm-up early or the run was interrupted in it).
    pub warmup_draws: u64,
    /// Iterations run, warm-up included (`warmup_draws` plus `draws × thin`
    /// for a chain that ran to its end).
    pub iterations: u64,
    /// The chain ended before its last iteration because the run was asked
    /// to stop ([`RunDraws::interrupted`]); its draws are those kept until
    /// then.
    pub interrupted: bool,
    /// Wall time of warm-up, seconds.
    pub warmup_seconds: f64,
    /// Wall time of sampling (kept draws), seconds, without
    /// [`lp_seconds`](Self::lp_seconds).
    pub sampling_seconds: f64,
    /// Wall time spent computing `lp__` with a full-data pass after a
    /// minibatch sampler's steps (not part of the sampler's cost), seconds.
    pub lp_seconds: f64,
    /// Gradient evaluations over the whole chain (warm-up included).
    pub gradient_evaluations: u64,
    /// NUTS only (empty otherwise): tree depth of each kept transition
    /// (Stan's `treedepth__`).
    pub tree_depth: Vec<u32>,
    /// `energy__`, for the samplers with a Hamiltonian (NUTS, HMC, QNHMC,
    /// HMC-BFGS; empty otherwise): H = U + ½pᵀM⁻¹p at each kept draw, U the
    /// potential (−`lp__`: −log density on the unconstrained scale, Jacobians
    /// included) and p the momentum the kept state had on its trajectory (the
    /// momentum drawn at the start when the draw stayed put), as in Stan.
    /// E-BFMI is computed from it.
    pub energy: Vec<f64>,
    /// NUTS only, when its warm-up adapted: the metric it then kept, as
    /// CmdStan's adaptation block writes it.
    pub adapted_metric: Option<AdaptedMetric>,
    /// Set when the chain's first start found a minor mode, no optimum, or
    /// an optimum the secants could not measure, and it started again from another chain's initial point
    /// ([`crate::run::MINOR_MODE_LOG_MASS`]).
    pub restart: Option<ChainRestart>,
    /// The warm-up's draws, every `thin`-th iteration from the first, when
    /// `--save-warmup` asked for them (CmdStan's `save_warmup`); empty
    /// otherwise. Nothing else of the run (summary, diagnostics, charts)
    /// reads them.
    pub saved_warmup: WarmupDraws,
}

/// Warm-up draws kept for the output files (`--save-warmup`), with the
/// columns of [`ChainDraws`]' kept draws. `lp__` is NaN where the sampler
/// did not have U at hand (the minibatch samplers: no full-data pass is
/// spent on a warm-up draw).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WarmupDraws {
    /// `lp__` of each saved warm-up draw.
    pub lp: Vec<f64>,
    /// `accept_stat__`.
    pub accept_stat: Vec<f64>,
    /// `stepsize__`: the step size the transition used, while it adapts.
    pub step_size: Vec<f64>,
    /// `n_leapfrog__`: gradient evaluations of the transition and of what
    /// the warm-up spent after it (for NUTS, at a window's end: the probes
    /// and the step-size search). The start (the initial point's search,
    /// NUTS's L-BFGS start) is in the chain's
    /// [`gradient_evaluations`](ChainDraws::gradient_evaluations), not here.
    pub n_leapfrog: Vec<u32>,
    /// `divergent__`.
    pub divergent: Vec<bool>,
    /// `treedepth__` (NUTS only).
    pub tree_depth: Vec<u32>,
    /// `energy__` (the samplers with a Hamiltonian).
    pub energy: Vec<f64>,
    /// Reported quantities, row-major as [`ChainDraws::values`].
    pub values: Vec<f64>,
}

impl WarmupDraws {
    /// Number of saved warm-up draws.
    pub fn len(&self) -> usize {
        self.lp.len()
    }

    /// `true` when none was saved.
    pub fn is_empty(&self) -> bool {
        self.lp.is_empty()
    }
}

/// Largest dimension whose dense inverse metric (quasi-Newton or dense)
/// is written into the CmdStan files (n lines of n numbers).
pub const MAX_WRITTEN_METRIC_DIMENSION: usize = 100;

/// NUTS's metric M after warm-up, by its inverse M⁻¹ (what CmdStan's
/// adaptation block lists).
#[derive(Debug, Clone, PartialEq)]
pub enum AdaptedMetric {
    /// M = I (CmdStan's `unit_e`).
    Unit,
    /// The diagonal of M⁻¹ (CmdStan's `diag_e`).
    Diagonal(Vec<f64>),
    /// M⁻¹, n × n row-major (CmdStan's `dense_e`): the dense metric's, or the
    /// quasi-Newton metric's, whose M⁻¹ (an L-BFGS inverse Hessian on a
    /// diagonal base) is a dense matrix kept fixed after warm-up.
    Dense(Vec<f64>),
    /// A quasi-Newton metric above [`MAX_WRITTEN_METRIC_DIMENSION`]: its
    /// n × n M⁻¹ is not written.
    NotWritten,
}

/// A chain of NUTS with the quasi-Newton metric that started again from
/// another chain's initial point, before drawing anything.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainRestart {
    /// 1-based id of the chain whose initial point it started from.
    pub from_chain: usize,
    /// Why.
    pub reason: RestartReason,
}

/// Why a chain started again ([`ChainRestart`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RestartReason {
    /// The Laplace approximation at its optimum held a negligible share of
    /// the mass of the other chain's.
    MinorMode {
        /// log(mass of that chain's optimum ÷ mass of this chain's first
        /// optimum), both Laplace approximations.
        log_mass_deficit: f64,
    },
    /// Its L-BFGS optimisation ran out of budget unconverged (or took no
    /// step), so it would have started at its initial point, while the
    /// other chain's found an optimum.
    NoOptimum,
    /// Its optimisation ended at a point whose curvature the secants could
    /// not measure (a secant with sᵀy ≤ 0 or not finite — the curvature
    /// there not positive along it — or a pair lost in conjugation), while
    /// the other chain's optimum was measured.
    UnmeasuredOptimum,
}

impl ChainDraws {
    /// Number of kept draws.
    pub fn len(&self) -> usize {
        self.lp.len()
    }

    /// `true` when the chain kept no draws.
    pub fn is_empty(&self) -> bool {
        self.lp.is_empty()
    }

    /// Keeps the chain's first `n` kept draws (all of them when it has
    /// fewer); everything else (warm-up, times, metric) stays. `quantities`
    /// is the number of reported quantities.
    pub fn truncate(&mut self, n: usize, quantities: usize) {
        let n = n.min(self.len());
        self.values_from_row = self.values_from_row.min(n);
        self.lp.truncate(n);
        self.accept_stat.truncate(n);
        self.step_size.truncate(n);
        self.n_leapfrog.truncate(n);
        self.divergent.truncate(n);
        self.tree_depth.truncate(n);
        self.energy.truncate(n);
        self.values
            .truncate((n - self.values_from_row) * quantities);
    }

    /// Draws of quantity `j` (`quantities` = number of reported quantities)
    /// held in [`values`](Self::values): every kept draw's unless a sink
    /// kept them ([`values_from_row`](Self::values_from_row); read those
    /// with [`DrawValues`](crate::draw_values::DrawValues)).
    pub fn column(&self, j: usize, quantities: usize) -> Vec<f64> {
        self.values
            .iter()
            .skip(j)
            .step_by(quantities.max(1))
            .copied()
            .collect()
    }
}

/// Everything a run produced: settings, quantity names and one
/// [`ChainDraws`] per chain.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunDraws {
    /// Target identifier (as given to `--target`).
    pub target: String,
    /// Sampler identifier (as given to `--sampler`).
    pub sampler: String,
    /// Settings as `key = value` pairs, written into output headers.
    pub settings: Vec<(String, String)>,
    /// Names of the reported quantities (Stan style, 1-based: `w[1]`).
    pub names: Vec<String>,
    /// The chains.
    pub chains: Vec<ChainDraws>,
    /// The acceptance the step size was adapted to (`None`: fixed or not
    /// adapted), for the "acceptance far from its target" warning.
    pub target_acceptance: Option<f64>,
    /// NUTS's maximum tree depth (`None` for the other samplers), for the
    /// tree-depth saturation warning.
    pub max_tree_depth: Option<u32>,
    /// How the step size was chosen: the CmdStan header's `adapt engaged`
    /// and the wording of the low-acceptance warning follow it.
    pub step_size_origin: StepSizeOrigin,
    /// NUTS's metric (`None` for the other samplers), named in the summary.
    pub metric: Option<MetricKind>,
    /// What the model reported about evaluations of its log density that
    /// failed during the run ([`Model::evaluation_failures`]: a Stan model's
    /// `reject()` or a function called outside its domain), for the health
    /// report's advice; `None` when none failed or the model cannot tell.
    ///
    /// [`Model::evaluation_failures`]: crate::model::Model::evaluation_failures
    pub evaluation_failures: Option<String>,
    /// Set when the run was asked to stop ([`StopFlag`]) and at least one
    /// chain ended before its last iteration: the chains hold the draws
    /// kept until then, possibly as many in each.
    ///
    /// [`StopFlag`]: crate::run::StopFlag
    pub interrupted: Option<Interruption>,
}

/// How far an interrupted run got ([`RunDraws::interrupted`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Interruption {
    /// What stopped it.
    pub reason: StopReason,
    /// Iterations run, all chains, warm-up included.
    pub iterations: u64,
    /// Iterations asked for, all chains: chains × (warm-up + draws × thin).
    pub planned: u64,
    /// Kept draws of each chain when it stopped, in chain order (for the
    /// diagnostics the chains may since have been cut to a common length,
    /// [`RunDraws::truncate`], and those without draws left out).
    pub kept: Vec<usize>,
}

impl Interruption {
    /// `interrupted by SIGINT after 1234 of 4000 iterations`.
    pub fn describe(&self) -> String {
        format!(
            "interrupted by {} after {} of {} iterations",
            self.reason, self.iterations, self.planned
        )
    }
}

/// How a run's step size was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StepSizeOrigin {
    /// Not recorded (draws read from files or put together by hand).
    #[default]
    Unknown,
    /// Adapted during the warm-up by dual averaging (NUTS also learned its
    /// metric there).
    Adapted,
    /// Given with `--step-size`, kept fixed.
    Given,
    /// Chosen by the stochastic-gradient pilot, kept fixed.
    Pilot,
    /// The sampler's default, not adapted: the sampler does not adapt, or
    /// there was no warm-up to adapt it in (`--warmup 0`).
    Default,
}

impl StepSizeOrigin {
    /// Whether the warm-up adapted the step size.
    pub fn adapted(self) -> bool {
        self == StepSizeOrigin::Adapted
    }
}

impl RunDraws {
    /// Draws of quantity `j`, one vector per chain (the layout the
    /// [`diagnostics`](crate::diagnostics) functions take as slices).
    pub fn chains_of(&self, j: usize) -> Vec<Vec<f64>> {
        self.chains
            .iter()
            .map(|c| c.column(j, self.names.len()))
            .collect()
    }

    /// Kept draws of the shortest chain (0 without chains).
    pub fn shortest_chain(&self) -> usize {
        self.chains.iter().map(ChainDraws::len).min().unwrap_or(0)
    }

    /// Cuts every chain to its first `n` kept draws
    /// ([`ChainDraws::truncate`]): the diagnostics need chains of equal
    /// length, which an interrupted run's may not have.
    pub fn truncate(&mut self, n: usize) {
        let quantities = self.names.len();
        for chain in &mut self.chains {
            chain.truncate(n, quantities);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_read_row_major() {
        let chain = ChainDraws {
            lp: vec![0.0; 3],
            values: vec![1.0, 10.0, 2.0, 20.0, 3.0, 30.0],
            ..ChainDraws::default()
        };
        let run = RunDraws {
            names: vec!["a".into(), "b".into()],
            chains: vec![chain.clone(), chain],
            ..RunDraws::default()
        };
        assert_eq!(run.chains_of(0), vec![vec![1.0, 2.0, 3.0]; 2]);
        assert_eq!(run.chains_of(1)[1], vec![10.0, 20.0, 30.0]);
        assert_eq!(run.chains[0].len(), 3);
    }

    #[test]
    fn truncation_keeps_the_first_draws_of_every_column() {
        let long = ChainDraws {
            lp: vec![-1.0, -2.0, -3.0],
            accept_stat: vec![0.9; 3],
            step_size: vec![0.1; 3],
            n_leapfrog: vec![3; 3],
            divergent: vec![false, true, false],
            energy: vec![1.0, 2.0, 3.0],
            values: vec![1.0, 10.0, 2.0, 20.0, 3.0, 30.0],
            ..ChainDraws::default()
        };
        let mut short = long.clone();
        short.truncate(2, 2);
        let mut run = RunDraws {
            names: vec!["a".into(), "b".into()],
            chains: vec![long, short],
            ..RunDraws::default()
        };
        assert_eq!(run.shortest_chain(), 2);
        let before = run.clone();
        run.truncate(5);
        assert_eq!(run, before, "longer than every chain: unchanged");
        run.truncate(2);
        assert_eq!(run.chains[0], run.chains[1]);
        assert_eq!(run.chains_of(1)[0], vec![10.0, 20.0]);
        assert_eq!(run.chains[0].divergent, [false, true]);
        assert_eq!(run.chains[0].energy, [1.0, 2.0]);
    }
}
