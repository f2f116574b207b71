//! One chain: build the sampler for its kind (this file), start it
//! (`start_points.rs`; NUTS with the quasi-Newton metric in two passes,
//! `nuts_start.rs`), then warm up and keep every `thin`-th iteration as a
//! CmdStan-style row of [`ChainDraws`] (`drive.rs`).

use qnmc::adaptation::{
    AcceptanceStatistic, AdaptiveNuts, DenseEstimator, IdentityEstimator,
    LbfgsStartDiagonalEstimator, MetricEstimator, WarmupSchedule,
};
use qnmc::in_place::ZeroValid;
use qnmc::lbfgs::InitialScaling;
use qnmc::{
    Amagold, AmagoldSettings, Error, Hamcmc, HamcmcSettings, Hmc, HmcBfgs, HmcBfgsSettings,
    HmcSettings, MemoryUpdate, MhBfgs, MhBfgsProposal, MhBfgsSettings, NutsSettings, Psgld,
    PsgldSettings, Qnhmc, QnhmcSettings, Sampler, Sghmc, SghmcSettings, Sgld, SgldSettings, Sgnht,
    SgnhtSettings, Sgrhmc, SgrhmcSettings, Sgrld, SgrldSettings, StepSizeSchedule,
};
use rand_core::SeedableRng;

use super::draw_sink::DrawSink;
use super::progress::Progress;
use super::samplers::{
    AmagoldChain, ENSEMBLE_MEMORY, ENSEMBLE_WALKERS, NutsChain, Sweep, sg_metric,
};
use super::{
    DIVERGENCE_TARGET_ACCEPTANCE, MetricKind, NUTS_EARLY_REFRESH, RunError, RunSettings,
    SamplerKind, chain_seed,
};
use crate::draws::{ChainDraws, RunDraws};
use crate::model::{Model, ModelRng, PaddedModel};

mod drive;
mod nuts_start;
mod start_points;

use drive::drive;
pub(crate) use nuts_start::{StartedChain, start_nuts_lbfgs_chain};
use start_points::{start_near_mode, start_point, walker_starts};

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
