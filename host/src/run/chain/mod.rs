//! One chain: build the sampler for its kind, warm up (dual averaging, QNHMC
//! memory freezing), then keep every `thin`-th iteration as a CmdStan-style
//! row of [`ChainDraws`].

use std::time::Instant;

use qnmc::adaptation::{
    AcceptanceStatistic, AdaptiveNuts, DEFAULT_RANK_TOLERANCE, DenseEstimator,
    DualAveragingSettings, IdentityEstimator, LbfgsEstimator, LbfgsEstimatorSettings,
    LbfgsStartDiagonalEstimator, MetricEstimator, Warmup, WarmupSchedule,
};
use qnmc::in_place::ZeroValid;
use qnmc::lbfgs::InitialScaling;
use qnmc::{
    Amagold, AmagoldSettings, Error, Hamcmc, HamcmcSettings, Hmc, HmcBfgs, HmcBfgsSettings,
    HmcSettings, MemoryUpdate, MhBfgs, MhBfgsProposal, MhBfgsSettings, NutsSettings, Potential,
    Psgld, PsgldSettings, Qnhmc, QnhmcSettings, Sampler, Sghmc, SghmcSettings, Sgld, SgldSettings,
    Sgnht, SgnhtSettings, Sgrhmc, SgrhmcSettings, Sgrld, SgrldSettings, StepSizeSchedule,
    StepStats,
};
use rand_core::SeedableRng;

use super::checkpoint::run_fingerprint;
use super::checkpointing::{Checkpointing, LoopPoint};
use super::draw_sink::{ChainSink, DrawSink};
use super::progress::Progress;
use super::samplers::{
    AmagoldChain, ChainSampler, ENSEMBLE_MEMORY, ENSEMBLE_WALKERS, NutsChain, Sweep, sg_metric,
};
use super::sink_error::{SinkError, output_error};
use super::{
    DIVERGENCE_TARGET_ACCEPTANCE, MetricKind, NUTS_EARLY_REFRESH,
    NUTS_NO_OPTIMUM_COVARIANCE_BUCKET, NUTS_WINDOW_COVARIANCE_MEMORY, RunError, RunSettings,
    SamplerKind, chain_seed, nuts_dimension,
};
use crate::draws::{ChainDraws, ChainRestart, RunDraws};
use crate::model::{Model, ModelRng, PaddedModel};

/// Jitter of the adapted step sizes: each iteration's ε is drawn uniform on
/// (0.9 ε̄, 1.1 ε̄]. Independent of the state, so the kept draws stay exact,
/// and it breaks the periodic trajectories a fixed ε·L can fall into on
/// near-Gaussian targets (the core's QNHMC notes). Against none, for NUTS's
/// kept draws: 34 against 27 passes of 60 on the hierarchical suite (seeds
/// 1–10) at 1.10× the ESS per gradient, even on posteriordb (1.01× [0.99,
/// 1.03], 43 posteriors × 3 seeds); docs/CLI.md, "`stepsize__`".
pub const STEP_SIZE_JITTER: f64 = 0.1;

/// Curvature pairs the L-BFGS start of `--metric diag` keeps (its diagonal
/// is read off them): 2·10·D numbers, idle after the start.
const DIAGONAL_START_MEMORY: usize = 10;

/// What every chain of a run shares.
pub(crate) struct ChainJob<'a> {
    pub(crate) model: &'a dyn Model,
    pub(crate) kind: SamplerKind,
    pub(crate) settings: &'a RunSettings,
    pub(crate) progress: &'a Progress,
    /// Where each chain's draws go as they are made, if anywhere.
    pub(crate) sink: Option<SinkFor<'a>>,
}

/// A [`DrawSink`] with what it needs to know of the run.
#[derive(Clone, Copy)]
pub(crate) struct SinkFor<'a> {
    pub(crate) sink: &'a dyn DrawSink,
    /// The run's description, without chains.
    pub(crate) run: &'a RunDraws,
}

/// Per-chain state shared by the two construction functions below.
struct Setup<'a, const D: usize> {
    target: PaddedModel<'a, D>,
    rng: ModelRng,
    /// Boxed: at [`LARGE_DIMENSION`](super::LARGE_DIMENSION) an array of D
    /// numbers is 8 MB.
    start: Box<[f64; D]>,
    eps: f64,
    steps: u32,
    chain: ChainDraws,
}

fn setup<'a, const D: usize>(job: &ChainJob<'a>, k: usize) -> Result<Setup<'a, D>, RunError> {
    let s = job.settings;
    let data_size = job.model.data_size();
    let mut target = PaddedModel::<D>::new(job.model)
        .map_err(|e| RunError::Settings(e.to_string()))?
        .with_batch_size(s.batch_size_for(data_size));
    if job.kind == SamplerKind::Nuts || job.kind.runs_any_dimension() {
        // NUTS and the samplers of any dimension move the model's n
        // coordinates only and keep n.. at zero (`set_dimension`).
        target = target.frozen_padding();
    }
    let seed = chain_seed(s.seed, k);
    let mut rng = ModelRng::seed_from_u64(seed);
    let (start, start_evaluations) = match &s.pilot {
        Some(p) => (
            start_near_mode(
                &p.mode,
                &p.posterior_sd,
                s.init_radius,
                target.moved_dimension(),
                &mut rng,
            ),
            0,
        ),
        None => start_point(
            &target,
            s.init_radius,
            !job.kind.uses_minibatches(),
            &mut rng,
        ),
    };
    Ok(Setup {
        target,
        rng,
        start,
        eps: s.step_size_for(job.kind, data_size),
        steps: s.leapfrog_steps_for(job.kind),
        chain: ChainDraws {
            chain_id: k + 1,
            seed,
            gradient_evaluations: start_evaluations,
            ..ChainDraws::default()
        },
    })
}

fn sampler_error(kind: SamplerKind) -> impl Fn(Error) -> RunError {
    move |e: Error| RunError::Sampler {
        sampler: kind,
        message: e.to_string(),
    }
}

/// Drives a sampler built by its in-place constructor (`new_boxed`), after
/// giving it the model's dimension when the padding is frozen, and returns
/// the chain.
macro_rules! go_boxed {
    ($job:expr, $setup:ident, $sampler:expr) => {{ go_boxed!($job, $setup, $sampler, |sampler| *sampler) }};
    ($job:expr, $setup:ident, $sampler:expr, |$built:ident| $wrap:expr) => {{
        let mut $built = $sampler.map_err(sampler_error($job.kind))?;
        let n = $setup.target.moved_dimension();
        if n < Sampler::position(&*$built).len() {
            $built.set_dimension(n).map_err(sampler_error($job.kind))?;
        }
        let sampler = &mut $wrap;
        drive(
            $job,
            &$setup.target,
            sampler,
            &mut $setup.rng,
            &mut $setup.chain,
        )?;
        Ok($setup.chain)
    }};
}

/// Builds the sampler (boxed: the quasi-Newton states are large), drives it
/// and returns the chain.
macro_rules! go {
    ($job:expr, $setup:ident, $sampler:expr) => {{
        let mut sampler = Box::new($sampler.map_err(sampler_error($job.kind))?);
        drive(
            $job,
            &$setup.target,
            &mut *sampler,
            &mut $setup.rng,
            &mut $setup.chain,
        )?;
        Ok($setup.chain)
    }};
}

/// Runs chain `k` (0-based) of a sampler with an L-BFGS memory (QNHMC,
/// HAMCMC) with compile-time dimension `D` and memory `M`.
pub(crate) fn run_memory_chain<const D: usize, const M: usize>(
    job: &ChainJob<'_>,
    k: usize,
) -> Result<ChainDraws, RunError> {
    let s = job.settings;
    let mut x = setup::<D>(job, k)?;
    match job.kind {
        SamplerKind::Qnhmc => {
            let mut settings = QnhmcSettings::new(x.eps, x.steps, s.memory_for(job.kind));
            settings.mass = s.qnhmc_mass;
            settings.lbfgs.scaling = s.gamma_for(job.kind);
            if let Some(n) = s.qnhmc_freeze_after {
                settings.memory_update = MemoryUpdate::FreezeAfter(n.min(s.warmup) as u64);
            }
            go_boxed!(
                job,
                x,
                Qnhmc::<f64, D, M>::new_boxed(settings, &x.start, &x.target)
            )
        }
        SamplerKind::Hamcmc => {
            let schedule = match s.hamcmc_decay {
                None => StepSizeSchedule::Constant(x.eps),
                Some(kappa) => StepSizeSchedule::BlockDecaying {
                    scale: x.eps.powf(1.0 / kappa),
                    exponent: kappa,
                },
            };
            let gamma = match s.gamma_for(job.kind) {
                InitialScaling::Fixed(g) => g,
                InitialScaling::NewestPair(_) => {
                    return Err(RunError::Settings(
                        "--gamma newest is for qnhmc; hamcmc takes a number".into(),
                    ));
                }
            };
            let settings = HamcmcSettings::new(schedule, gamma, 0.0);
            go_boxed!(job, x, Hamcmc::<f64, D, M>::new_boxed(settings, &x.start))
        }
        // NUTS with the quasi-Newton metric runs from `start_nuts_lbfgs_chain`
        // (the runner compares the chains' starts before they draw).
        other => Err(RunError::Settings(format!(
            "internal: {other} is not run with an L-BFGS memory here"
        ))),
    }
}

/// Runs chain `k` (0-based) of a sampler without a memory parameter, with
/// compile-time dimension `D`.
pub(crate) fn run_chain<const D: usize>(
    job: &ChainJob<'_>,
    k: usize,
) -> Result<ChainDraws, RunError> {
    let s = job.settings;
    let kind = job.kind;
    if kind == SamplerKind::Nuts && s.metric_for(kind) != MetricKind::Dense {
        return run_nuts_chain::<D>(job, k);
    }
    if kind.runs_any_dimension() {
        return run_any_dimension_chain::<D>(job, k);
    }
    let mut x = setup::<D>(job, k)?;
    let eps = x.eps;
    match kind {
        SamplerKind::MhBfgs => {
            let (starts, evaluations) =
                walker_starts(&x.target, &x.start, s.init_radius, &mut x.rng);
            x.chain.gradient_evaluations += evaluations;
            go!(
                job,
                x,
                MhBfgs::<f64, D, ENSEMBLE_WALKERS, ENSEMBLE_MEMORY>::new(
                    MhBfgsSettings::new(eps, MhBfgsProposal::RandomWalk),
                    *starts,
                    &x.target
                )
                .map(|sampler| Sweep(Box::new(sampler)))
            )
        }
        // The other metrics went to `run_nuts_chain` above.
        SamplerKind::Nuts => go!(
            job,
            x,
            adaptive_nuts::<D, DenseEstimator<f64, D>>(job, &x, (), WarmupSchedule::stan)
        ),
        SamplerKind::Qnhmc | SamplerKind::Hamcmc => Err(RunError::Settings(format!(
            "internal: {kind} needs a memory size"
        ))),
        SamplerKind::Hmc
        | SamplerKind::HmcBfgs
        | SamplerKind::Amagold
        | SamplerKind::L2mc
        | SamplerKind::Sgld
        | SamplerKind::Psgld
        | SamplerKind::Sgrld
        | SamplerKind::Sghmc
        | SamplerKind::Sgnht
        | SamplerKind::Sgrhmc => Err(RunError::Settings(format!(
            "internal: {kind} runs from run_any_dimension_chain"
        ))),
    }
}

/// Runs chain `k` (0-based) of a sampler without a memory parameter that
/// runs any dimension ([`SamplerKind::runs_any_dimension`]), in storage of
/// compile-time dimension `D` (the next of `DIMENSIONS`, or
/// [`LARGE_DIMENSION`](super::LARGE_DIMENSION)): built in place, moving only
/// the model's coordinates.
pub(crate) fn run_any_dimension_chain<const D: usize>(
    job: &ChainJob<'_>,
    k: usize,
) -> Result<ChainDraws, RunError> {
    let s = job.settings;
    let kind = job.kind;
    let mut x = setup::<D>(job, k)?;
    let eps = x.eps;
    match kind {
        SamplerKind::Hmc => go_boxed!(
            job,
            x,
            Hmc::<f64, D>::new_boxed(HmcSettings::new(eps, x.steps), &x.start, &x.target)
        ),
        SamplerKind::HmcBfgs => {
            let (starts, evaluations) =
                walker_starts(&x.target, &x.start, s.init_radius, &mut x.rng);
            x.chain.gradient_evaluations += evaluations;
            go_boxed!(
                job,
                x,
                HmcBfgs::<f64, D, ENSEMBLE_WALKERS, ENSEMBLE_MEMORY>::new_boxed(
                    HmcBfgsSettings::new(eps, x.steps),
                    &starts,
                    &x.target
                ),
                |sampler| Sweep(sampler)
            )
        }
        SamplerKind::Amagold | SamplerKind::L2mc => {
            let settings = AmagoldSettings::new(eps, x.steps, s.friction_for(kind));
            go_boxed!(
                job,
                x,
                Amagold::<f64, D>::new_boxed(settings, &x.start, &x.target),
                |sampler| AmagoldChain {
                    sampler,
                    full_batch: kind == SamplerKind::L2mc,
                }
            )
        }
        SamplerKind::Sgld => go_boxed!(
            job,
            x,
            Sgld::<f64, D>::new_boxed(SgldSettings::new(eps), &x.start)
        ),
        SamplerKind::Psgld => go_boxed!(
            job,
            x,
            Psgld::<f64, D>::new_boxed(PsgldSettings::new(eps, 0.99, 1e-5), &x.start)
        ),
        SamplerKind::Sgrld => go_boxed!(
            job,
            x,
            Sgrld::<f64, D, _>::new_boxed(
                SgrldSettings::new(eps),
                &x.start,
                sg_metric(s.pilot.as_ref().and_then(|p| p.inverse_metric.as_deref()))
            )
        ),
        SamplerKind::Sghmc => go_boxed!(
            job,
            x,
            Sghmc::<f64, D>::new_boxed(
                SghmcSettings {
                    update: s.sghmc_update,
                    ..SghmcSettings::new(eps, s.friction_for(kind))
                },
                &x.start
            )
        ),
        SamplerKind::Sgnht => go_boxed!(
            job,
            x,
            Sgnht::<f64, D>::new_boxed(SgnhtSettings::new(eps, s.friction_for(kind)), &x.start)
        ),
        SamplerKind::Sgrhmc => go_boxed!(
            job,
            x,
            Sgrhmc::<f64, D, _>::new_boxed(
                SgrhmcSettings::new(eps),
                &x.start,
                sg_metric(s.pilot.as_ref().and_then(|p| p.inverse_metric.as_deref()))
            )
        ),
        other => Err(RunError::Settings(format!(
            "internal: {other} is not a sampler of any dimension without a memory"
        ))),
    }
}

/// A chain of NUTS with the quasi-Newton metric that has made its start —
/// the L-BFGS optimisation, the secants at the optimum, the first step size
/// — and drawn nothing yet: the runner compares the chains' optima before
/// the draws ([`super::minor_modes`]).
pub(crate) trait StartedChain: Send {
    /// [`LbfgsEstimator::laplace_log_mass`] of the chain's optimum.
    fn laplace_log_mass(&self) -> Option<f64>;
    /// [`LbfgsEstimator::started_at_optimum`]: whether the chain's
    /// optimisation found an optimum.
    fn started_at_optimum(&self) -> bool;
    /// The point the chain's optimisation started from (the model's
    /// coordinates).
    fn initial_point(&self) -> Vec<f64>;
    /// Makes the start again from `initial` (another chain's initial point),
    /// its gradients and time counted with the chain's, and records why.
    fn restart_from(
        &mut self,
        job: &ChainJob<'_>,
        initial: &[f64],
        restart: ChainRestart,
    ) -> Result<(), RunError>;
    /// Warm-up and sampling.
    fn finish(self: Box<Self>, job: &ChainJob<'_>) -> Result<ChainDraws, RunError>;
}

struct StartedNutsLbfgs<'a, const D: usize, const M: usize> {
    setup: Setup<'a, D>,
    settings: LbfgsEstimatorSettings<f64>,
    sampler: NutsChain<D, LbfgsEstimator<f64, D, M>>,
    /// Wall time of the starts (counted with the warm-up's).
    start_seconds: f64,
}

/// Builds the sampler at `x.start` and makes its start (counting its
/// gradients in `x.chain`); returns it and the seconds it took.
fn started_sampler<const D: usize, const M: usize>(
    job: &ChainJob<'_>,
    x: &mut Setup<'_, D>,
    settings: LbfgsEstimatorSettings<f64>,
) -> Result<(NutsChain<D, LbfgsEstimator<f64, D, M>>, f64), RunError> {
    let clock = Instant::now();
    let mut sampler = adaptive_nuts::<D, LbfgsEstimator<f64, D, M>>(
        job,
        x,
        settings,
        WarmupSchedule::after_optimization,
    )
    .map_err(sampler_error(job.kind))?;
    sampler.chain.prepare_warmup(&x.target, &mut x.rng);
    x.chain.gradient_evaluations += sampler.chain.warmup_gradient_evaluations();
    Ok((sampler, clock.elapsed().as_secs_f64()))
}

impl<const D: usize, const M: usize> StartedChain for StartedNutsLbfgs<'_, D, M> {
    fn laplace_log_mass(&self) -> Option<f64> {
        self.sampler.chain.estimator().laplace_log_mass()
    }
    fn started_at_optimum(&self) -> bool {
        self.sampler.chain.estimator().started_at_optimum()
    }
    fn initial_point(&self) -> Vec<f64> {
        self.setup.start[..self.setup.target.model_dimension()].to_vec()
    }
    fn restart_from(
        &mut self,
        job: &ChainJob<'_>,
        initial: &[f64],
        restart: ChainRestart,
    ) -> Result<(), RunError> {
        let n = initial.len().min(D);
        self.setup.start[..n].copy_from_slice(&initial[..n]);
        self.setup.chain.restart = Some(restart);
        let (sampler, seconds) = started_sampler::<D, M>(job, &mut self.setup, self.settings)?;
        self.sampler = sampler;
        self.start_seconds += seconds;
        Ok(())
    }
    fn finish(self: Box<Self>, job: &ChainJob<'_>) -> Result<ChainDraws, RunError> {
        let StartedNutsLbfgs {
            mut setup,
            mut sampler,
            start_seconds,
            ..
        } = *self;
        // The start (the L-BFGS optimisation) counts as warm-up time.
        setup.chain.warmup_seconds = start_seconds;
        drive(
            job,
            &setup.target,
            &mut sampler,
            &mut setup.rng,
            &mut setup.chain,
        )?;
        Ok(setup.chain)
    }
}

/// Chain `k` of NUTS with the quasi-Newton metric, in storage of compile-time
/// dimension `D` with memory `M` (`--memory` pairs kept), after its start
/// (the estimator moves it to the mode by L-BFGS, then a draw away).
pub(crate) fn start_nuts_lbfgs_chain<'a, const D: usize, const M: usize>(
    job: &ChainJob<'a>,
    k: usize,
) -> Result<Box<dyn StartedChain + 'a>, RunError> {
    let mut setup = setup::<D>(job, k)?;
    let mut settings = LbfgsEstimatorSettings::new(DEFAULT_RANK_TOLERANCE);
    settings.max_pairs = job.settings.memory_for(job.kind);
    settings.window_covariance = job.settings.window_covariance;
    settings.optimum_secants = job.settings.optimum_secants;
    if M == NUTS_WINDOW_COVARIANCE_MEMORY
        && nuts_dimension(job.model.dimension()).ok() == Some(NUTS_NO_OPTIMUM_COVARIANCE_BUCKET)
    {
        // The 25 bucket in the 32 bucket's storage: as with 20 pairs where
        // the start finds an optimum (`NUTS_NO_OPTIMUM_COVARIANCE_BUCKET`).
        settings.covariance_without_optimum_only = true;
        settings.optimum_secants = false;
    }
    let (sampler, start_seconds) = started_sampler::<D, M>(job, &mut setup, settings)?;
    Ok(Box::new(StartedNutsLbfgs {
        setup,
        settings,
        sampler,
        start_seconds,
    }))
}

/// Runs chain `k` of NUTS with the identity or diagonal metric in storage
/// of compile-time dimension `D` (the dense metric, offered up to dimension
/// 100, runs from [`run_chain`]).
pub(crate) fn run_nuts_chain<const D: usize>(
    job: &ChainJob<'_>,
    k: usize,
) -> Result<ChainDraws, RunError> {
    let mut x = setup::<D>(job, k)?;
    match job.settings.metric_for(job.kind) {
        MetricKind::Identity => go!(
            job,
            x,
            adaptive_nuts::<D, IdentityEstimator>(job, &x, (), WarmupSchedule::stan)
        ),
        // The chain starts from an L-BFGS optimisation, as with the
        // quasi-Newton metric: from Stan's uniform(−2, 2) start the plain
        // diagonal warm-up spent most of its draws descending
        // (sblrc-blr, earn_height) or never moved (arma11, U ≈ 10¹⁰⁵).
        MetricKind::Diagonal => go!(
            job,
            x,
            adaptive_nuts::<D, LbfgsStartDiagonalEstimator<f64, D, DIAGONAL_START_MEMORY>>(
                job,
                &x,
                (),
                WarmupSchedule::after_optimization
            )
        ),
        other => Err(RunError::Settings(format!(
            "internal: nuts --metric {other:?} is not run here"
        ))),
    }
}

/// NUTS with Stan's windowed warm-up over at most `--warmup` draws (no
/// adaptation when `--step-size` fixes ε), built zeroed on the heap (at
/// D = 16 384 it takes ~38 MB), moving the model's n coordinates only
/// ([`AdaptiveNuts::set_dimension`]; `x.target` has frozen padding).
fn adaptive_nuts<const D: usize, E>(
    job: &ChainJob<'_>,
    x: &Setup<'_, D>,
    estimator: E::Settings,
    schedule: fn(u64) -> Result<WarmupSchedule, Error>,
) -> Result<NutsChain<D, E>, Error>
where
    E: MetricEstimator<f64, D> + ZeroValid,
    E::Metric: ZeroValid,
{
    let s = job.settings;
    let warmup = if s.step_size.is_some() {
        0
    } else {
        s.warmup as u64
    };
    let mut settings = NutsSettings::new(x.eps);
    settings.max_tree_depth = s.max_tree_depth_for();
    let mut chain =
        AdaptiveNuts::new_boxed(settings, schedule(warmup)?, estimator, &x.start, &x.target)?;
    chain.set_dimension(x.target.model_dimension())?;
    chain.set_target_acceptance(s.target_acceptance_for(job.kind))?;
    chain.set_acceptance_statistic(AcceptanceStatistic::Symmetric);
    chain.set_early_end(s.early_end_for());
    chain.set_early_refresh(NUTS_EARLY_REFRESH);
    chain.set_divergence_target(Some(DIVERGENCE_TARGET_ACCEPTANCE))?;
    if warmup > 0 {
        chain.set_jitter(STEP_SIZE_JITTER)?;
    }
    Ok(NutsChain {
        chain,
        last_depth: None,
    })
}

/// Perturbed starting points tried per chain before the last one is used
/// as it is (Stan's rule: 100).
pub const START_TRIES: u64 = 100;

/// The model's initial point plus a perturbation uniform on (−r, r) in every
/// coordinate the sampler moves (auxiliary padding coordinates included,
/// NUTS's zero padding not), drawn again until U
/// and ∇U are finite there, at most [`START_TRIES`] times (Stan's rule: a
/// model whose support is not all of ℝⁿ, such as an ARMA model with
/// |θ| < 1, would otherwise start a chain where every trajectory diverges).
/// Returns the point and the evaluations of U and ∇U this took (counted
/// with the chain's gradients). With r = 0 the initial point; without
/// `check` (the minibatch samplers, which never pay for a full-data
/// gradient) the first perturbed point; both unevaluated.
fn start_point<const D: usize>(
    target: &PaddedModel<'_, D>,
    r: f64,
    check: bool,
    rng: &mut ModelRng,
) -> (Box<[f64; D]>, u64) {
    let mut x = qnmc::in_place::zeroed_box::<[f64; D]>();
    target.write_initial_point(&mut x);
    if r <= 0.0 {
        return (x, 0);
    }
    let moved = target.moved_dimension();
    let initial = x[..moved].to_vec();
    let mut gradient = qnmc::in_place::zeroed_box::<[f64; D]>();
    let mut evaluations = 0;
    loop {
        for (v, x0) in x.iter_mut().zip(&initial) {
            let u: f64 = qnmc::Real::uniform_open_closed(rng);
            *v = x0 + r * (2.0 * u - 1.0);
        }
        if !check {
            return (x, 0);
        }
        evaluations += 1;
        let u = target.potential_and_gradient(&x, &mut gradient);
        if (u.is_finite() && gradient[..moved].iter().all(|g| g.is_finite()))
            || evaluations == START_TRIES
        {
            return (x, evaluations);
        }
    }
}

/// The start of a chain whose settings came from the pilot: the mode plus
/// uniform(−r, r) Laplace sds per coordinate (auxiliaries: uniform(−r, r)),
/// overdispersed for R̂ yet where the pilot's step size holds. From a start
/// far in the tails (Stan's uniform(−2, 2) on ark) the first unadjusted
/// steps overshoot to non-finite points and, with the state unchanged on
/// error, never stop doing so.
fn start_near_mode<const D: usize>(
    mode: &[f64],
    sd: &[f64],
    r: f64,
    moved: usize,
    rng: &mut ModelRng,
) -> Box<[f64; D]> {
    let mut x = qnmc::in_place::zeroed_box::<[f64; D]>();
    for (i, v) in x.iter_mut().take(moved).enumerate() {
        let (centre, scale) = (
            mode.get(i).copied().unwrap_or(0.0),
            sd.get(i).copied().unwrap_or(1.0),
        );
        let u: f64 = qnmc::Real::uniform_open_closed(rng);
        *v = centre + r * scale * (2.0 * u - 1.0);
    }
    x
}

/// Ensemble starts: walker 0 at `first`, the others perturbed likewise (with
/// radius at least 0.5 so the walkers differ and the metric has pairs); the
/// second value counts the evaluations of U and ∇U this took.
fn walker_starts<const D: usize>(
    target: &PaddedModel<'_, D>,
    first: &[f64; D],
    r: f64,
    rng: &mut ModelRng,
) -> (Box<[[f64; D]; ENSEMBLE_WALKERS]>, u64) {
    // Zeroed, and only the moved coordinates written: the walkers of a model
    // of n coordinates in 2^20 storage touch n coordinates' pages each.
    let moved = target.moved_dimension();
    let mut starts = qnmc::in_place::zeroed_box::<[[f64; D]; ENSEMBLE_WALKERS]>();
    starts[0][..moved].copy_from_slice(&first[..moved]);
    let mut evaluations = 0;
    for walker in starts.iter_mut().skip(1) {
        let (x, n) = start_point(target, r.max(0.5), true, rng);
        walker[..moved].copy_from_slice(&x[..moved]);
        evaluations += n;
    }
    (starts, evaluations)
}

/// Adapter: the dual-averaging driver sees any [`ChainSampler`].
struct Adaptable<'s, const D: usize, S: ?Sized>(&'s mut S);

impl<const D: usize, S: ChainSampler<D> + ?Sized> Sampler<f64, D> for Adaptable<'_, D, S> {
    /// The chain loop keeps the settings; the driver needs only the step size.
    type Settings = ();
    fn settings(&self) -> &() {
        &()
    }
    fn set_step_size(&mut self, step_size: f64) -> Result<(), Error> {
        self.0.set_step_size(step_size)
    }
    fn position(&self) -> &[f64; D] {
        self.0.position()
    }
}

/// Warm-up then sampling, recording every `thin`-th kept iteration.
fn drive<const D: usize, S: ChainSampler<D> + ?Sized>(
    job: &ChainJob<'_>,
    target: &PaddedModel<'_, D>,
    sampler: &mut S,
    rng: &mut ModelRng,
    chain: &mut ChainDraws,
) -> Result<(), RunError> {
    let s = job.settings;
    let kind = job.kind;
    let mut sink = match job.sink {
        Some(to) => Some(
            to.sink
                .open_chain(to.run, s, chain)
                .map_err(|e| sink_error(job, e))?,
        ),
        None => None,
    };
    // NUTS runs its own windowed warm-up (AdaptiveNuts).
    let adapt = kind.adapts_step_size() && kind != SamplerKind::Nuts && s.step_size.is_none();
    let mut warmup = if adapt {
        let mut da = DualAveragingSettings::stan(s.step_size_for(kind, job.model.data_size()));
        da.target_acceptance = s.target_acceptance_for(kind);
        let mut w = Warmup::new(da, s.warmup as u64, STEP_SIZE_JITTER)
            .map_err(|e| RunError::Settings(format!("step-size adaptation: {e}")))?;
        if kind == SamplerKind::Qnhmc {
            if let Some(n) = s.qnhmc_freeze_after {
                w = w.with_restart(n.min(s.warmup) as u64);
            }
        }
        w.start(&mut Adaptable::<D, S>(sampler), rng)
            .map_err(|e| RunError::Settings(format!("step-size adaptation: {e}")))?;
        Some(w)
    } else {
        None
    };

    let quantities = job.model.output_names().len();
    let n = job.model.dimension();
    // A sink that keeps the values takes each kept draw's, and the chain
    // drops them: its memory does not grow with its draws.
    let sink_keeps_values = job.sink.is_some_and(|to| to.sink.keeps_values());
    chain.lp.reserve(s.draws);
    if !sink_keeps_values {
        chain.values.reserve(s.draws * quantities);
    }
    let mut row = vec![0.0; quantities];
    let mut gradient = qnmc::in_place::zeroed_box::<[f64; D]>();
    let moved = target.moved_dimension();
    // energy__: H = U + K at the kept draw, for the samplers with a
    // Hamiltonian. They all move the model's coordinates only; with
    // auxiliaries H would be that of the padded target, not the model's, so
    // none is recorded then.
    let records_energy = kind.has_hamiltonian() && moved == n;
    let sampling_iterations = s.draws * s.thin;
    let mut unreported = 0u64;
    // Divergent kept draws not yet counted by the progress bar.
    let mut unreported_divergent = 0u64;
    let lp_mode = s.lp_mode(job.model.data_size());
    let mut lp_seconds = 0.0;
    let mut kept = 0usize;
    // Warm-up iterations done; a sampler with its own warm-up (NUTS) may end
    // it before `--warmup` (then the progress bar skips the rest), or one
    // terminal buffer after it when that buffer diverged
    // (`AdaptiveNuts::set_divergence_target`).
    let mut warmup_done: Option<usize> = None;
    let mut iteration = 0usize;
    // Seconds of sampling before a restored checkpoint.
    let mut sampling_before = 0.0;
    let mut checkpoints = job
        .sink
        .and_then(|to| to.sink.checkpoints())
        .map(|store| Checkpointing::new(store, run_fingerprint(job.model, kind, s)));
    let stop_flag = job.progress.stop_flag();
    if let Some(cp) = &checkpoints {
        if let Some(restored) = cp.restore(stop_flag, sampler, warmup.as_mut(), rng, chain)? {
            let point = restored.point;
            iteration = point.iteration;
            kept = point.kept;
            lp_seconds = point.lp_seconds;
            sampling_before = point.sampling_seconds;
            if let Some(w) = point.warmup_done {
                warmup_done = Some(w);
                chain.warmup_draws = w as u64;
                if kind == SamplerKind::Nuts && s.step_size.is_none() && w > 0 {
                    chain.adapted_metric = sampler.adapted_metric(s.metric_for(kind), n);
                }
                job.progress.warmup_ended();
                unreported += (s.warmup - w.min(s.warmup)) as u64;
            }
            // The warm-up is known: the files can take the rows again.
            cp.replay(stop_flag, &restored, chain, &mut |chain| {
                give_kept(&mut sink, chain, sink_keeps_values)
            })?;
            unreported += iteration as u64;
            unreported_divergent += chain.divergent.iter().filter(|&&d| d).count() as u64;
        }
    }
    let warmup_clock = Instant::now();
    let mut sampling_clock = Instant::now();
    loop {
        let mut warmup_ended = false;
        if warmup_done.is_none() {
            let over = match sampler.is_warming_up() {
                Some(warming_up) => !warming_up,
                None => iteration >= s.warmup,
            };
            if over {
                warmup_done = Some(iteration);
                chain.warmup_draws = iteration as u64;
                chain.warmup_seconds += warmup_clock.elapsed().as_secs_f64();
                // NUTS's metric is fixed from here on.
                if kind == SamplerKind::Nuts && s.step_size.is_none() && iteration > 0 {
                    chain.adapted_metric = sampler.adapted_metric(s.metric_for(kind), n);
                }
                sampling_clock = Instant::now();
                unreported += (s.warmup - iteration.min(s.warmup)) as u64;
                job.progress.warmup_ended();
                warmup_ended = true;
            }
        }
        let sampled = warmup_done.map_or(0, |w| iteration - w);
        let done = sampled == sampling_iterations;
        let stop = !done && job.progress.stop_requested();
        // A checkpoint at the warm-up's end, every `interval`, when the
        // chain stops or is done; with saved warm-up draws, not before the
        // first kept draw (until then the chain's file holds no row).
        if let Some(cp) = checkpoints.as_mut() {
            if cp.due(warmup_ended || done || stop) && (!s.save_warmup || !chain.is_empty()) {
                let seconds = |clock: Instant| clock.elapsed().as_secs_f64();
                let point = LoopPoint {
                    iteration,
                    warmup_done,
                    kept,
                    lp_seconds,
                    warmup_seconds: chain.warmup_seconds
                        + if warmup_done.is_none() {
                            seconds(warmup_clock)
                        } else {
                            0.0
                        },
                    sampling_seconds: if warmup_done.is_some() {
                        sampling_before + seconds(sampling_clock)
                    } else {
                        0.0
                    },
                };
                if let Some(sink) = sink.as_mut() {
                    sink.flush().map_err(|e| sink_error(job, e))?;
                }
                cp.save(stop_flag, &*sampler, warmup.as_ref(), rng, chain, &point)?;
            }
        }
        if done {
            break;
        }
        // A stop request (Ctrl-C in `qnmc run`) ends the chain here, in
        // warm-up or sampling, with the draws kept so far.
        if stop {
            chain.interrupted = true;
            if warmup_done.is_none() {
                chain.warmup_draws = iteration as u64;
                chain.warmup_seconds += warmup_clock.elapsed().as_secs_f64();
            }
            break;
        }
        let stats = match sampler.step(target, rng) {
            Ok(stats) => stats,
            Err(_) => StepStats {
                accepted: false,
                acceptance_probability: 0.0,
                energy_error: f64::NAN,
                divergent: true,
                gradient_evaluations: 1,
                pairs_skipped: 0,
                step_size: f64::NAN,
                energy: None,
            },
        };
        chain.gradient_evaluations += u64::from(stats.gradient_evaluations);
        if let Some(w) = warmup.as_mut() {
            // A refused step size leaves the previous one: nothing to count.
            let _ = w.after_draw(&mut Adaptable::<D, S>(&mut *sampler), &stats, rng);
        }
        // CmdStan saves warm-up iterations 0, thin, 2·thin, …
        if s.save_warmup && warmup_done.is_none() && iteration % s.thin == 0 {
            let saved = &mut chain.saved_warmup;
            let x = sampler.position();
            let auxiliary: f64 = x[n..moved].iter().map(|v| 0.5 * v * v).sum();
            saved
                .lp
                .push(sampler.potential().map_or(f64::NAN, |u| -(u - auxiliary)));
            saved.accept_stat.push(stats.acceptance_probability);
            saved.step_size.push(stats.step_size);
            saved.n_leapfrog.push(stats.gradient_evaluations);
            saved.divergent.push(stats.divergent);
            if let Some(depth) = sampler.tree_depth() {
                saved.tree_depth.push(depth);
            }
            if records_energy {
                saved.energy.push(stats.energy.unwrap_or(f64::NAN));
            }
            job.model.constrain(&x[..n], &mut row);
            saved.values.extend_from_slice(&row);
        }
        if warmup_done.is_some() && (sampled + 1) % s.thin == 0 {
            let x = sampler.position();
            // Minibatch samplers never compute the full-data U: lp__ costs a
            // full pass, timed apart from sampling; NaN when not computed.
            let u_padded = match sampler.potential() {
                Some(u) => Some(u),
                None if lp_mode.computes(kept) => {
                    let clock = Instant::now();
                    let u = target.potential_and_gradient(x, &mut gradient);
                    lp_seconds += clock.elapsed().as_secs_f64();
                    Some(u)
                }
                None => None,
            };
            kept += 1;
            let auxiliary: f64 = x[n..moved].iter().map(|v| 0.5 * v * v).sum();
            chain
                .lp
                .push(u_padded.map_or(f64::NAN, |u| -(u - auxiliary)));
            chain.accept_stat.push(stats.acceptance_probability);
            chain.step_size.push(stats.step_size);
            chain.n_leapfrog.push(stats.gradient_evaluations);
            chain.divergent.push(stats.divergent);
            unreported_divergent += u64::from(stats.divergent);
            if let Some(depth) = sampler.tree_depth() {
                chain.tree_depth.push(depth);
            }
            if records_energy {
                // A refused step (no statistics) has no energy: NaN.
                chain.energy.push(stats.energy.unwrap_or(f64::NAN));
            }
            job.model.constrain(&x[..n], &mut row);
            chain.values.extend_from_slice(&row);
            give_kept(&mut sink, chain, sink_keeps_values).map_err(|e| sink_error(job, e))?;
        }
        iteration += 1;
        unreported += 1;
        if unreported >= 64 {
            job.progress
                .advance_with_divergences(unreported, unreported_divergent);
            unreported = 0;
            unreported_divergent = 0;
        }
    }
    job.progress
        .advance_with_divergences(unreported, unreported_divergent);
    chain.iterations = iteration as u64;
    chain.lp_seconds = lp_seconds;
    chain.sampling_seconds = if warmup_done.is_some() {
        (sampling_before + sampling_clock.elapsed().as_secs_f64() - lp_seconds).max(0.0)
    } else {
        0.0
    };
    if let Some(sink) = sink {
        sink.finished(chain).map_err(|e| sink_error(job, e))?;
    }
    Ok(())
}

/// Gives the chain's last kept draw to `sink`, if any; a sink that
/// `keeps_values` takes them, and the chain drops them.
fn give_kept(
    sink: &mut Option<Box<dyn ChainSink>>,
    chain: &mut ChainDraws,
    keeps_values: bool,
) -> Result<(), SinkError> {
    if let Some(sink) = sink.as_mut() {
        sink.kept(chain)?;
        if keeps_values {
            chain.values.clear();
            chain.values_from_row = chain.len();
        }
    }
    Ok(())
}

/// A sink's error: the other chains are asked to stop (their draws would
/// not be written), and the run ends with [`RunError::Output`].
fn sink_error(job: &ChainJob<'_>, e: SinkError) -> RunError {
    output_error(job.progress.stop_flag(), e.to_string())
}
