//! Settings of a run: chain counts, lengths and every sampler's tuning knobs,
//! with the defaults documented where they come from.

use qnmc::lbfgs::InitialScaling;
use qnmc::{QnhmcMass, SghmcUpdate};

use super::SamplerKind;
use super::sampler_memory::SamplerMemory;
use crate::metric_kind::{MAX_DENSE_DIMENSION, MetricKind};

/// Everything `qnmc run` needs besides the sampler and the target.
///
/// `None` fields take a per-sampler default (see each field). Chain k
/// (0-based) draws from a generator seeded with [`chain_seed`]`(seed, k)`.
///
/// ```
/// use qnmc_host::run::{RunSettings, SamplerKind};
///
/// let settings = RunSettings::default();
/// assert_eq!(settings.chains, 4);
/// assert!(settings.validate(SamplerKind::Hmc).is_ok());
/// let bad = RunSettings { draws: 2, ..RunSettings::default() };
/// assert!(bad.validate(SamplerKind::Hmc).unwrap_err().contains("--draws"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RunSettings {
    /// Independent chains (run in parallel). Default 4.
    pub chains: usize,
    /// Seed; chain k uses [`chain_seed`]`(seed, k)`. Default 2016.
    pub seed: u64,
    /// Warm-up iterations per chain, discarded (step-size adaptation, QNHMC
    /// memory learning). Default 1000 ([`RunSettings::for_sampler`] takes
    /// the sampler's own, [`default_warmup`]).
    pub warmup: usize,
    /// Kept draws per chain (after thinning). Default 1000.
    pub draws: usize,
    /// Keep every `thin`-th iteration after warm-up. Default 1.
    pub thin: usize,
    /// Keep the warm-up's draws too (every `thin`-th iteration from the
    /// first) and write them before the kept ones, as CmdStan's
    /// `save_warmup`. Default false.
    pub save_warmup: bool,
    /// Step size ε. `None`: dual averaging during warm-up (Stan's settings,
    /// δ = [`target_acceptance`](Self::target_acceptance)) for the samplers
    /// with a Metropolis test; for the others the default of
    /// [`default_step_size`].
    pub step_size: Option<f64>,
    /// Leapfrog steps L (HMC, QNHMC, HMC-BFGS) or inner steps T (AMAGOLD,
    /// L2MC). `None`: 10 for HMC, QNHMC and HMC-BFGS (QNHMC paper §5 uses
    /// L = 10–20), 10 inner steps for AMAGOLD/L2MC.
    pub leapfrog_steps: Option<u32>,
    /// L-BFGS memory: pairs kept by QNHMC (any value 1–20), memory size M of
    /// HAMCMC (5, 10 or 20). `None`: 10 for QNHMC (the QNHMC paper's m),
    /// 5 for HAMCMC.
    pub memory: Option<usize>,
    /// QNHMC mass. Default M = C = H ([`QnhmcMass::InverseHessian`]:
    /// effective inverse metric H); the paper's M = I gives H², whose step
    /// size is set by the ratio of the posterior's largest to smallest
    /// variance rather than its square root. Measured with `qnmc run`
    /// (`scripts/qnhmc-defaults-sweep.sh`: L = 20, frozen, seeds 1–3): M = I failed to mix on
    /// eight-schools, arK or sblrc-blr for some seed (R-hat up to 2.2); M = C
    /// with the default γ mixed on all six test targets (R-hat ≤ 1.03).
    pub qnhmc_mass: QnhmcMass,
    /// QNHMC frozen mode: the memory learns during the first n warm-up
    /// iterations, then freezes, and the dual averaging restarts so the final
    /// step size averages frozen-kernel draws only; draws after warm-up are
    /// then exact. `None`: the paper's adaptive mode (the memory learns for
    /// ever; not an exact kernel). Default `Some(500)`, half the default
    /// warm-up (the CLI uses half of `--warmup`); values past the warm-up are
    /// clamped to it.
    pub qnhmc_freeze_after: Option<usize>,
    /// HAMCMC step-size decay exponent κ ∈ (0.5, 1]: ε_t = ε · t_b^(−κ) with
    /// t_b the first draw of t's block of M draws (the paper's schedule, with
    /// κ = 0.51). `None`: constant ε (the default).
    pub hamcmc_decay: Option<f64>,
    /// γ of the L-BFGS base matrix H⁰ = γI (QNHMC, HAMCMC). `None`: γ =
    /// sᵀy / yᵀy of the newest pair for QNHMC ([`InitialScaling::NewestPair`],
    /// Nocedal & Wright's choice, starting from 1 while the memory is empty),
    /// the fixed γ = 1 for HAMCMC (its paper fixes γ; HAMCMC accepts only
    /// [`InitialScaling::Fixed`]).
    ///
    /// Why QNHMC's default is not the fixed γ = 1 of its paper: a direction
    /// the memory's pairs do not reach keeps variance γ. On sblrc-blr
    /// (posterior sds 0.001 and 0.07) a memory frozen with γ = 1 kept
    /// variances 10⁶–10⁷ times too large, the step size collapsed and the
    /// chains did not mix; with the newest pair's γ the same memory is within
    /// a factor 0.8–4.4 of the posterior covariance in every direction.
    pub gamma: Option<InitialScaling<f64>>,
    /// When samplers that never compute the full-data U (the minibatch
    /// samplers: SGLD, pSGLD, SGRLD, SGHMC, SGNHT, SGRHMC, HAMCMC) spend a
    /// full-data pass on `lp__` for a kept draw. `None`: [`LpMode::Full`] up
    /// to [`LP_AUTO_MAX_DATA`] data points, [`LpMode::None`] above (there
    /// the pass costs far more than the step). The time it takes is kept out
    /// of `sampling_seconds` (and so of ESS/s) and reported as `lp_seconds`.
    pub lp: Option<LpMode>,
    /// Minibatch size of the stochastic-gradient samplers and AMAGOLD. `None`:
    /// 10% of the data, at least 32 (all of it when smaller), for targets with
    /// data; ignored by targets without.
    pub batch_size: Option<usize>,
    /// Friction: C of SGHMC, A of SGNHT, β of AMAGOLD. `None`: 1 for SGHMC
    /// and SGNHT (Chen et al. 2014 use C of order 1), 0.1 for AMAGOLD.
    pub friction: Option<f64>,
    /// SGHMC update order. Default [`SghmcUpdate::PositionFirst`] (Chen et
    /// al.'s Algorithm 2: θ first, then r with the gradient at the new θ);
    /// [`SghmcUpdate::RecipeEuler`] is the complete recipe's eq. (18), which
    /// diverges once ε·(curvature) exceeds the friction.
    pub sghmc_update: SghmcUpdate,
    /// Target acceptance δ of the dual averaging. `None`: 0.8 (Stan's
    /// default), 0.3 for MH-BFGS (a random-walk proposal; Roberts et al.'s
    /// optimum is 0.234).
    pub target_acceptance: Option<f64>,
    /// Starting points: the model's initial point plus a perturbation uniform
    /// on (−r, r) per unconstrained coordinate (Stan draws inits uniform on
    /// (−2, 2)). Default r = 2; 0 starts every chain at the initial point.
    /// With [`pilot`](Self::pilot) settings the chains start at the pilot's
    /// mode plus uniform(−r, r) Laplace sds instead.
    pub init_radius: f64,
    /// NUTS metric. `None`: [`DEFAULT_NUTS_METRIC`].
    pub metric: Option<MetricKind>,
    /// NUTS maximum tree depth, 1–[`MAX_TREE_DEPTH`]. `None`: [`DEFAULT_MAX_TREE_DEPTH`] (Stan's).
    pub max_tree_depth: Option<u32>,
    /// NUTS: end the warm-up after this many consecutive quiet slow windows
    /// kept the metric (`AdaptiveNuts::set_early_end`; 0: never). `None`:
    /// [`DEFAULT_NUTS_EARLY_END`].
    pub early_end: Option<u32>,
    /// NUTS with the quasi-Newton metric: also score the window's
    /// covariance metric at each window end where the window's gradient is
    /// close to linear in its draws, for a model of dimension ≤ the memory
    /// (`LbfgsEstimatorSettings::window_covariance`; on by default, the CLI's
    /// `--no-window-covariance` turns it off; docs/NUTS.md "The window's
    /// covariance metric").
    pub window_covariance: bool,
    /// NUTS with the quasi-Newton metric, a model of dimension ≤ the L-BFGS
    /// storage: measure the first metric by central secants at the L-BFGS
    /// start's optimum (`LbfgsEstimatorSettings::optimum_secants`), and
    /// start again from the best chain's initial point any chain whose
    /// optimum is a minor mode ([`MINOR_MODE_LOG_MASS`](super::MINOR_MODE_LOG_MASS)).
    /// On by default since 2026-11-28; the CLI's `--no-optimum-secants`
    /// turns it off (docs/NUTS.md "Secants at the optimum" and "Minor
    /// modes").
    pub optimum_secants: bool,
    /// What the pilot of a stochastic-gradient sampler chose
    /// ([`apply_pilot`](super::apply_pilot) sets it with the step size, γ,
    /// friction, warm-up and thinning it wrote here). Its `inverse_metric`
    /// is the constant G⁻¹ of SGRLD and SGRHMC; `None` (or no metric): G = I.
    pub pilot: Option<super::SgDefaults>,
}

/// NUTS's maximum tree depth when `--max-tree-depth` is not given (Stan's
/// default: at most 1023 leapfrog steps per transition).
pub const DEFAULT_MAX_TREE_DEPTH: u32 = 10;

/// The largest `--max-tree-depth`: 2³⁰ − 1 ≈ 1.07 × 10⁹ leapfrog steps per
/// transition, 18 minutes of gradients at 1 µs each, beyond any depth a run
/// can use (Stan takes any; posteriordb's diamonds reference used 20). The
/// host's NUTS chains are built for it (`HostNuts`): a deeper tree keeps
/// five D-vectors per level, 30 · 5 · D numbers in all, on the heap, and a
/// transition only touches the levels it reaches.
pub const MAX_TREE_DEPTH: u32 = 30;

/// Consecutive quiet slow windows that must keep the metric before NUTS ends
/// its warm-up early (docs/NUTS.md, "Early end").
pub const DEFAULT_NUTS_EARLY_END: u32 = 2;

/// NUTS: a chain that starts where it was (the L-BFGS start refused what it
/// reached, as in a centred hierarchy's neck) sets its metric from its last
/// 10 draws at draws 10 and 20 of the initial buffer
/// (`AdaptiveNuts::set_early_refresh`), instead of sampling the first 50
/// draws on the gradient-scaled guess 1/|∂ᵢU| at its start. On the
/// hierarchical suite (docs/HIERARCHICAL.md), seeds 1–40, ESS per gradient
/// including warm-up against the same build without it: 1.09× overall,
/// every target ≥ 1.00×, warm-up gradients per run 27.4 k → 20.5 k on
/// radon-centered. Refreshing every draw, or every 10 draws through the
/// first window too, lost on the funnel (0.67–0.75×) or the hierarchical
/// logistic regression (0.62–0.76×) on seeds 1–20
/// (docs/journal/2026-12-01-early-metric-refresh.md).
pub const NUTS_EARLY_REFRESH: u64 = 10;

/// NUTS: the target acceptance of the warm-up's terminal buffer when the last
/// slow window diverged (`AdaptiveNuts::set_divergence_target`; a larger
/// `--target-acceptance` wins). On posteriordb's gp_pois_regr, 10 seeds: the
/// z-tests failed on 2 at δ = 0.8, on none at 0.95 (divergent transitions
/// after warm-up 959 → 14 in all; docs/NUTS.md).
pub const DIVERGENCE_TARGET_ACCEPTANCE: f64 = 0.95;

/// The metric `--sampler nuts` learns unless `--metric` says otherwise.
pub const DEFAULT_NUTS_METRIC: MetricKind = MetricKind::Lbfgs;

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            chains: 4,
            seed: 2016,
            warmup: 1000,
            draws: 1000,
            thin: 1,
            save_warmup: false,
            step_size: None,
            leapfrog_steps: None,
            memory: None,
            qnhmc_mass: QnhmcMass::InverseHessian,
            qnhmc_freeze_after: Some(500),
            hamcmc_decay: None,
            gamma: None,
            batch_size: None,
            friction: None,
            sghmc_update: SghmcUpdate::PositionFirst,
            target_acceptance: None,
            init_radius: 2.0,
            metric: None,
            max_tree_depth: None,
            early_end: None,
            window_covariance: true,
            optimum_secants: true,
            lp: None,
            pilot: None,
        }
    }
}

/// Warm-up length of a run that does not set one (`qnmc run` without
/// `--warmup`, [`Sampling`](crate::fit::Sampling) without `warmup`): the
/// sampler's row ([`SamplerEntry::warmup`](super::SamplerEntry::warmup)),
/// 500 for NUTS, Stan's 1000 otherwise.
pub fn default_warmup(sampler: SamplerKind) -> usize {
    sampler.entry().warmup
}

impl RunSettings {
    /// The settings `qnmc run --sampler KIND` runs with when no other option
    /// is given, and [`Sampling`](crate::fit::Sampling)'s: [`Default`] with
    /// the sampler's warm-up length ([`default_warmup`]) and QNHMC's memory
    /// frozen after half of it. A test parses the CLI's defaults and
    /// compares them with these for every sampler.
    ///
    /// ```
    /// use qnmc_host::run::{RunSettings, SamplerKind};
    ///
    /// assert_eq!(RunSettings::for_sampler(SamplerKind::Nuts).warmup, 500);
    /// assert_eq!(RunSettings::for_sampler(SamplerKind::Hmc).warmup, 1000);
    /// ```
    pub fn for_sampler(sampler: SamplerKind) -> RunSettings {
        let warmup = default_warmup(sampler);
        RunSettings {
            warmup,
            qnhmc_freeze_after: Some(warmup / 2),
            ..RunSettings::default()
        }
    }
}

/// Data sizes up to which minibatch samplers compute `lp__` by default.
pub const LP_AUTO_MAX_DATA: usize = 10_000;

/// Which kept draws of a minibatch sampler get `lp__` (a full-data pass);
/// the others hold NaN ("not computed").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LpMode {
    /// Every kept draw.
    Full,
    /// None.
    None,
    /// Every n-th kept draw (the 1st, (n+1)-th, …).
    Every(usize),
}

impl LpMode {
    /// The mode `--lp` names: `full`, `none`, or `every N` (N ≥ 1), as two
    /// arguments or one (`--lp 'every 10'`, the form `--help` shows).
    ///
    /// ```
    /// use qnmc_host::run::LpMode;
    /// assert_eq!(LpMode::from_words(&["every", "10"]).unwrap(), LpMode::Every(10));
    /// assert_eq!(LpMode::from_words(&["every 10"]).unwrap(), LpMode::Every(10));
    /// assert_eq!(LpMode::from_words(&["none"]).unwrap(), LpMode::None);
    /// assert!(LpMode::from_words(&["every", "0"]).is_err());
    /// ```
    pub fn from_words<S: AsRef<str>>(words: &[S]) -> Result<Self, String> {
        let words: Vec<&str> = words
            .iter()
            .flat_map(|w| w.as_ref().split_whitespace())
            .collect();
        match words.as_slice() {
            ["full"] => Ok(LpMode::Full),
            ["none"] => Ok(LpMode::None),
            ["every", n] => match n.parse::<usize>() {
                Ok(n) if n >= 1 => Ok(LpMode::Every(n)),
                _ => Err(format!(
                    "--lp every N: N must be a whole number >= 1, got `{n}`"
                )),
            },
            _ => Err(format!(
                "--lp takes `full`, `none` or `every N`, got `{}`",
                words.join(" ")
            )),
        }
    }

    /// Whether kept draw `k` (0-based) gets `lp__`.
    pub fn computes(self, k: usize) -> bool {
        match self {
            LpMode::Full => true,
            LpMode::None => false,
            LpMode::Every(n) => k % n.max(1) == 0,
        }
    }
}

impl RunSettings {
    /// The [`LpMode`] of a minibatch sampler on a model with `data_size`
    /// data points: [`lp`](Self::lp), or the automatic choice.
    pub fn lp_mode(&self, data_size: Option<usize>) -> LpMode {
        self.lp.unwrap_or(match data_size {
            Some(n) if n > LP_AUTO_MAX_DATA => LpMode::None,
            _ => LpMode::Full,
        })
    }
}

/// Memory sizes HAMCMC accepts (compile-time buckets).
pub const HAMCMC_MEMORY_SIZES: [usize; 3] = [5, 10, 20];
/// Largest QNHMC memory (pairs).
pub const MAX_QNHMC_MEMORY: usize = 20;

impl RunSettings {
    /// Checks the settings for `sampler`; the message names the offending
    /// command-line option.
    pub fn validate(&self, sampler: SamplerKind) -> Result<(), String> {
        self.validate_lengths(sampler)?;
        self.validate_sampler_options(sampler)?;
        self.validate_nuts_options(sampler)
    }

    /// Chains, draws, thinning, `--lp`, step size and trajectory length.
    fn validate_lengths(&self, sampler: SamplerKind) -> Result<(), String> {
        if self.chains == 0 {
            return Err("--chains must be at least 1".into());
        }
        if self.draws < 4 {
            return Err(format!("--draws must be at least 4, got {}", self.draws));
        }
        if self.thin == 0 {
            return Err("--thin must be at least 1".into());
        }
        if self.lp.is_some() && (sampler.is_exact() || !sampler.uses_minibatches()) {
            return Err(format!(
                "--lp applies to the minibatch samplers without a Metropolis test (hamcmc, sgld, \
                 psgld, sgrld, sghmc, sgnht, sgrhmc); {sampler} has lp__ at no extra cost"
            ));
        }
        if let Some(LpMode::Every(0)) = self.lp {
            return Err("--lp every N: N must be at least 1".into());
        }
        if let Some(e) = self.step_size {
            if !(e.is_finite() && e > 0.0) {
                return Err(format!("--step-size must be a positive number, got {e}"));
            }
        }
        if self.leapfrog_steps == Some(0) {
            return Err("--leapfrog-steps must be at least 1".into());
        }
        Ok(())
    }

    /// Memory, step decay, γ, batch size, friction and target acceptance.
    fn validate_sampler_options(&self, sampler: SamplerKind) -> Result<(), String> {
        match (sampler.entry().memory, self.memory) {
            (SamplerMemory::Pairs { .. }, Some(m)) if m == 0 || m > MAX_QNHMC_MEMORY => {
                return Err(format!(
                    "--memory for {sampler} must be between 1 and {MAX_QNHMC_MEMORY}, got {m}"
                ));
            }
            (SamplerMemory::Sizes { sizes, .. }, Some(m)) if !sizes.contains(&m) => {
                return Err(format!(
                    "--memory for {sampler} must be one of {sizes:?}, got {m}"
                ));
            }
            _ => {}
        }
        if let Some(k) = self.hamcmc_decay {
            if !(k > 0.5 && k <= 1.0) {
                return Err(format!("--step-decay must be in (0.5, 1], got {k}"));
            }
        }
        if let Some(InitialScaling::Fixed(g) | InitialScaling::NewestPair(g)) = self.gamma {
            if !(g.is_finite() && g > 0.0) {
                return Err(format!("--gamma must be a positive number, got {g}"));
            }
        }
        (sampler.entry().check)(self)?;
        if self.batch_size == Some(0) {
            return Err("--batch-size must be at least 1".into());
        }
        if let Some(f) = self.friction {
            if !(f.is_finite() && f >= 0.0) {
                return Err(format!("--friction must be a number >= 0, got {f}"));
            }
        }
        if let Some(d) = self.target_acceptance {
            if !(d > 0.0 && d < 1.0) {
                return Err(format!("--target-acceptance must be in (0, 1), got {d}"));
            }
        }
        Ok(())
    }

    /// The options only NUTS takes, and the initial radius.
    fn validate_nuts_options(&self, sampler: SamplerKind) -> Result<(), String> {
        if sampler != SamplerKind::Nuts {
            if let Some(m) = self.metric {
                return Err(format!("--metric {m} is for --sampler nuts, not {sampler}"));
            }
            if self.max_tree_depth.is_some() {
                return Err(format!(
                    "--max-tree-depth is for --sampler nuts, not {sampler}"
                ));
            }
            if self.early_end.is_some() {
                return Err(format!("--early-end is for --sampler nuts, not {sampler}"));
            }
        }
        if let Some(d) = self.max_tree_depth {
            if !(1..=MAX_TREE_DEPTH).contains(&d) {
                return Err(format!(
                    "--max-tree-depth must be between 1 and {MAX_TREE_DEPTH}, got {d}"
                ));
            }
        }
        if sampler == SamplerKind::Nuts && self.metric_for(sampler) == MetricKind::Lbfgs {
            if let Some(m) = self.memory {
                if m == 0 || m > MAX_QNHMC_MEMORY {
                    return Err(format!(
                        "--memory for nuts --metric lbfgs must be between 1 and {MAX_QNHMC_MEMORY}, got {m}"
                    ));
                }
            }
        }
        if !(self.init_radius.is_finite() && self.init_radius >= 0.0) {
            return Err(format!(
                "--init-radius must be a number >= 0, got {}",
                self.init_radius
            ));
        }
        Ok(())
    }

    /// The NUTS metric, default applied.
    pub fn metric_for(&self, _sampler: SamplerKind) -> MetricKind {
        self.metric.unwrap_or(DEFAULT_NUTS_METRIC)
    }

    /// Checks what depends on the model's dimension `n` (the dense metric's
    /// D² storage).
    pub fn validate_dimension(&self, sampler: SamplerKind, n: usize) -> Result<(), String> {
        if sampler == SamplerKind::Nuts
            && self.metric_for(sampler) == MetricKind::Dense
            && n > MAX_DENSE_DIMENSION
        {
            return Err(format!(
                "--metric dense stores a {n}x{n} matrix; it is offered up to dimension {MAX_DENSE_DIMENSION} (use lbfgs or diag)"
            ));
        }
        Ok(())
    }

    /// NUTS maximum tree depth, default applied.
    pub fn max_tree_depth_for(&self) -> u32 {
        self.max_tree_depth.unwrap_or(DEFAULT_MAX_TREE_DEPTH)
    }

    /// NUTS early end (quiet kept windows; 0: never), default applied.
    pub fn early_end_for(&self) -> u32 {
        self.early_end.unwrap_or(DEFAULT_NUTS_EARLY_END)
    }

    /// Leapfrog (or inner) steps for `sampler`, default applied.
    pub fn leapfrog_steps_for(&self, _sampler: SamplerKind) -> u32 {
        self.leapfrog_steps.unwrap_or(10)
    }

    /// Memory for `sampler`, default applied: its row's
    /// ([`SamplerEntry::memory`](super::SamplerEntry::memory); 10 for QNHMC,
    /// 5 for HAMCMC, 20 pairs for NUTS's L-BFGS metric).
    pub fn memory_for(&self, sampler: SamplerKind) -> usize {
        self.memory.unwrap_or(match sampler.entry().memory {
            SamplerMemory::Pairs { default }
            | SamplerMemory::Sizes { default, .. }
            | SamplerMemory::NutsMetric { default } => default,
            SamplerMemory::None => 10,
        })
    }

    /// γ of the L-BFGS base matrix for `sampler`, default applied (see
    /// [`gamma`](Self::gamma)).
    pub fn gamma_for(&self, sampler: SamplerKind) -> InitialScaling<f64> {
        self.gamma.unwrap_or(sampler.entry().gamma)
    }

    /// Friction for `sampler`, default applied.
    pub fn friction_for(&self, sampler: SamplerKind) -> f64 {
        self.friction.unwrap_or(sampler.entry().friction)
    }

    /// Target acceptance δ for `sampler`, default applied.
    pub fn target_acceptance_for(&self, sampler: SamplerKind) -> f64 {
        self.target_acceptance
            .unwrap_or(sampler.entry().target_acceptance)
    }

    /// Minibatch size for a target with `data_size` points, default applied.
    pub fn batch_size_for(&self, data_size: Option<usize>) -> usize {
        match (self.batch_size, data_size) {
            (Some(b), Some(n)) => b.min(n),
            (Some(b), None) => b,
            (None, Some(n)) => (n / 10).max(32).min(n),
            (None, None) => 1,
        }
    }

    /// The (initial) step size for `sampler` on a target with `data_size`
    /// points: the user's, else [`default_step_size`].
    pub fn step_size_for(&self, sampler: SamplerKind, data_size: Option<usize>) -> f64 {
        self.step_size
            .unwrap_or_else(|| default_step_size(sampler, data_size))
    }
}

/// Default step size when `--step-size` is absent.
///
/// For the samplers with dual averaging this is only ε₀ of the adaptation
/// (1, as Stan's; 0.5 for MH-BFGS). For the others, with n the number of data
/// points (1 for targets without data), so that ε·(curvature ≈ n) stays small:
/// Langevin-type samplers (HAMCMC, SGLD, SGRLD) ε = 0.1/n, pSGLD 0.01/√n
/// (its preconditioner divides the gradient by its RMS), momentum samplers
/// (SGHMC, SGNHT, SGRHMC) ε = 0.1/√n. These are starting points: the
/// SG samplers are biased by O(ε), so check a smaller ε gives the same answer.
pub fn default_step_size(sampler: SamplerKind, data_size: Option<usize>) -> f64 {
    sampler.entry().step_size.for_data_size(data_size)
}

/// Seed of chain `k` (0-based) of a run seeded with `seed`: a SplitMix64
/// finaliser of `seed` and `k`, so neighbouring seeds and chains give unrelated
/// streams.
///
/// ```
/// use qnmc_host::run::chain_seed;
/// assert_ne!(chain_seed(1, 0), chain_seed(1, 1));
/// assert_ne!(chain_seed(1, 1), chain_seed(2, 0));
/// assert_eq!(chain_seed(7, 3), chain_seed(7, 3));
/// ```
pub fn chain_seed(seed: u64, k: usize) -> u64 {
    let mut z = seed
        .wrapping_add(
            (k as u64)
                .wrapping_add(1)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15),
        )
        .wrapping_add(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
