//! The sampler runner: any [`Model`] with any core sampler, several chains in
//! parallel, draws in the CmdStan layout of [`RunDraws`].
//!
//! - [`SamplerKind`]: the 14 samplers by their `--sampler` names (`nuts` is
//!   the default), each described by one [`SamplerEntry`] of [`REGISTRY`]
//!   (`registry/`, one file per sampler);
//! - [`RunSettings`]: chains, lengths, seeds and tuning, defaults documented
//!   ([`RunSettings::for_sampler`]); [`LpMode`]: which kept draws of a
//!   minibatch sampler get a full-data `lp__`, timed apart; [`MetricKind`]
//!   (`--metric identity|diag|dense|lbfgs`) is defined in `metric_kind.rs`
//!   and re-exported here;
//! - dimension dispatch (`dispatch.rs`: [`padded_dimension`],
//!   [`nuts_dimension`]): a run-time dimension to a compile-time size —
//!   every sampler up to 1000, NUTS alone in 2048–16 384, the samplers of
//!   any dimension above 1000 in the one size [`LARGE_DIMENSION`] = 2²⁰,
//!   built by `new_boxed` in zeroed memory; NUTS and those samplers move
//!   the model's n coordinates only, the ensembles pad with N(0, 1);
//! - [`run`] and [`run_into`]: one chain loop for every sampler (the
//!   adapters of `samplers.rs`; `chain/`: construction in `mod.rs`, start
//!   points in `start_points.rs`, the quasi-Newton NUTS start in
//!   `nuts_start.rs`, the loop in `drive.rs`, its state a `ChainLoop`),
//!   chains in parallel on rayon. NUTS with the quasi-Newton metric runs
//!   two parallel passes, every chain's start and then the draws; between
//!   them `minor_modes.rs` restarts from the best chain's initial point a
//!   chain whose optimum holds under e^−20 of the best one's Laplace mass,
//!   or that has no mass while the best has one
//!   ([`RestartReason`](crate::draws::RestartReason)). Each chain reports
//!   warm-up, thinning, lp__ = −U, acceptance, step size, gradient
//!   evaluations, divergences and constrained values;
//! - a [`DrawSink`] (`draw_sink.rs`) receives each chain's kept draws as
//!   they are made ([`run_into`]; `qnmc run --output` streams the chain
//!   files through it);
//! - checkpoints (`checkpoint.rs`): the chain loop's state saved into the
//!   sink's [`CheckpointStore`] at the warm-up's end, every interval, at a
//!   stop and at the end, and restored by the chain loop before it draws,
//!   its rows replayed into the sink (tests in `checkpoint_tests.rs`);
//! - [`Progress`] (indicatif) carries the run's [`StopFlag`] (`stop.rs`): a
//!   request ends every chain at its next iteration with its draws
//!   ([`RunDraws::interrupted`](crate::draws::RunDraws::interrupted));
//! - [`pilot`]: the stochastic-gradient samplers' step size, γ, friction,
//!   metric (SGRLD, SGRHMC), warm-up and thinning from the mode and Hessian
//!   of the full-data U (docs/DEFAULTS.md); [`refused_defaults`]: defaults
//!   refused with a reason (MH-BFGS from 10-D and AMAGOLD on data need
//!   `--thin`);
//! - [`check`](check::check): z-scores of means and sds against a
//!   [`KnownPosterior`](crate::model::KnownPosterior), Bonferroni-corrected,
//!   R̂, pass/fail ([`check::check_with_tolerance`] with
//!   [`check::SG_BIAS_TOLERANCE`] for the samplers without a Metropolis
//!   test); [`reference_run`] builds one from a long NUTS run with the
//!   diagonal metric (on a model's
//!   [`reference_model`](crate::model::Model::reference_model), a
//!   non-centred twin, when it has one) and says whether that run mixed
//!   ([`ReferenceMixing`]: R̂ > 1.01 or bulk ESS < 400 fails the check);
//!   [`reference_posterior`] is the long HMC run of `amagold-fig4`.
//!
//! Ensembles (HMC-BFGS, MH-BFGS): every chain is an independent ensemble of
//! [`ENSEMBLE_WALKERS`] walkers; one iteration is a sweep that moves each
//! walker once, and the chain reports walker 0 (every walker is marginally
//! exact; reporting one keeps the chains independent so R̂ means what it
//! says). `n_leapfrog__` counts the gradients of the whole sweep.
//!
//! SGRLD and SGRHMC need a metric G(θ); general targets have none, so they
//! run with the constant G = I, with which they reduce to SGLD and SGHMC
//! (unit friction, in SGHMC's recipe-Euler order). Samplers without a Metropolis test report
//! `accept_stat__` = 1; a step they refuse (non-finite gradient) is a
//! divergent iteration that keeps the previous state.
//!
//! ```
//! use qnmc_host::model::Model;
//! use qnmc_host::run::{run, Progress, RunSettings, SamplerKind};
//!
//! struct StandardNormal;
//! impl Model for StandardNormal {
//!     fn name(&self) -> String { "normal".into() }
//!     fn dimension(&self) -> usize { 1 }
//!     fn potential_and_gradient(&self, x: &[f64], g: &mut [f64]) -> f64 {
//!         g[0] = x[0];
//!         0.5 * x[0] * x[0]
//!     }
//! }
//!
//! let settings = RunSettings { chains: 2, warmup: 200, draws: 300, ..RunSettings::default() };
//! let draws = run(&StandardNormal, SamplerKind::Hmc, &settings, &Progress::hidden()).unwrap();
//! assert_eq!(draws.chains.len(), 2);
//! assert_eq!(draws.chains[0].len(), 300);
//! assert_eq!(draws.names, ["x[1]"]);
//! ```

mod chain;
pub mod check;
mod checkpoint;
mod checkpointing;
mod dispatch;
mod draw_sink;
mod minor_modes;
pub mod pilot;
mod progress;
mod reference;
mod refused_defaults;
mod registry;
mod sampler_kind;
mod sampler_memory;
pub(crate) mod samplers;
mod settings;
mod sink_error;
mod stop;

use std::fmt;

use rayon::prelude::*;

pub use crate::metric_kind::{MAX_DENSE_DIMENSION, MetricKind, sampler_label};
pub use chain::STEP_SIZE_JITTER;
pub use check::{CheckReport, CheckRow, check};
pub use checkpoint::{CheckpointError, CheckpointStore, DEFAULT_CHECKPOINT_SECONDS, ReplayedRow};
pub use dispatch::{
    DIMENSIONS, LARGE_DIMENSION, MEMORY_SIZES, NUTS_DIMENSIONS, NUTS_LARGE_MEMORY,
    NUTS_NO_OPTIMUM_COVARIANCE_BUCKET, NUTS_WINDOW_COVARIANCE_MEMORY, dimension_for, memory_bucket,
    nuts_dimension, nuts_lbfgs_storage, padded_dimension,
};
pub use draw_sink::{ChainSink, DrawSink, SinkError};
pub use pilot::{MAX_PILOT_DIMENSION, PilotLengths, SgDefaults, apply_pilot};
pub use progress::{Progress, progress_message};
pub use reference::{
    REFERENCE_MAX_RHAT, REFERENCE_MIN_ESS_BULK, REFERENCE_USABLE_MIN_ESS_BULK, ReferenceMixing,
    ReferenceRun, ReferenceSettings, reference_posterior, reference_run,
};
pub use refused_defaults::{MH_BFGS_MAX_UNTHINNED_DIMENSION, refused_defaults};
pub use registry::{
    DefaultStepSize, HeaderContext, HeaderLines, REGISTRY, SAMPLER_SPECIFIC_OPTIONS, SamplerEntry,
    UnthinnedRefusal,
};
pub use sampler_kind::{SamplerKind, UnknownSampler};
pub use sampler_memory::SamplerMemory;
pub use samplers::{ENSEMBLE_MEMORY, ENSEMBLE_WALKERS, SgMetric, sg_metric};
pub use settings::{
    DEFAULT_MAX_TREE_DEPTH, DEFAULT_NUTS_EARLY_END, DEFAULT_NUTS_METRIC,
    DIVERGENCE_TARGET_ACCEPTANCE, HAMCMC_MEMORY_SIZES, LP_AUTO_MAX_DATA, LpMode, MAX_QNHMC_MEMORY,
    MAX_TREE_DEPTH, NUTS_EARLY_REFRESH, RunSettings, chain_seed, default_step_size, default_warmup,
};
pub use stop::{StopFlag, StopReason};

use chain::{ChainJob, SinkFor, StartedChain};
use dispatch::{with_dimension, with_memory, with_nuts_dimension};
pub use minor_modes::MINOR_MODE_LOG_MASS;

use crate::draws::{ChainDraws, Interruption, RunDraws, StepSizeOrigin};
use crate::model::Model;

/// Stack of each chain's thread: the quasi-Newton samplers keep their L-BFGS
/// memory in arrays (6·M·D numbers, ~1 MB at D = 1000, M = 20), built on the
/// stack before they are boxed.
const CHAIN_STACK_BYTES: usize = 64 << 20;

/// Why a run could not start.
#[derive(Debug, Clone, PartialEq)]
pub enum RunError {
    /// A setting is invalid (the message names the option).
    Settings(String),
    /// The model is larger than the largest compile-time dimension.
    DimensionTooLarge {
        /// The model's dimension.
        dimension: usize,
        /// The largest supported dimension.
        largest: usize,
    },
    /// The core sampler refused its settings or starting point.
    Sampler {
        /// Which sampler.
        sampler: SamplerKind,
        /// The core's message.
        message: String,
    },
    /// The [`DrawSink`] could not take the draws (a chain file could not be
    /// written), or its [`CheckpointStore`] could not save or give back a
    /// checkpoint, or a chain could not continue from its checkpoint (one
    /// of another run, damaged): the run stopped.
    Output(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Settings(m) => f.write_str(m),
            RunError::DimensionTooLarge { dimension, largest } => write!(
                f,
                "the target has dimension {dimension}; the samplers are compiled for at most {largest}"
            ),
            RunError::Sampler { sampler, message } => write!(f, "{sampler}: {message}"),
            RunError::Output(message) => write!(f, "the draws could not be written: {message}"),
        }
    }
}

impl std::error::Error for RunError {}

/// Runs `settings.chains` chains of `sampler` on `model` in parallel and
/// returns their draws. `progress` counts iterations (warm-up included) of
/// all chains, the chains still in warm-up and the divergent transitions of
/// the kept draws. A request on its [`StopFlag`]
/// ([`Progress::with_stop`]) ends every chain at its next iteration: the
/// run then returns the draws kept so far, with
/// [`RunDraws::interrupted`](crate::draws::RunDraws::interrupted) set (the
/// starts before the first iteration, such as NUTS's L-BFGS optimisation,
/// run to their end first).
pub fn run(
    model: &dyn Model,
    sampler: SamplerKind,
    settings: &RunSettings,
    progress: &Progress,
) -> Result<RunDraws, RunError> {
    run_into(model, sampler, settings, progress, None)
}

/// [`run`], giving each chain's draws to `sink` as they are made (`qnmc run
/// --output` writes them to the chain files this way). The draws are also
/// returned, as by [`run`]. An error of the sink asks every chain to stop
/// and ends the run with [`RunError::Output`].
pub fn run_into(
    model: &dyn Model,
    sampler: SamplerKind,
    settings: &RunSettings,
    progress: &Progress,
    sink: Option<&dyn DrawSink>,
) -> Result<RunDraws, RunError> {
    settings.validate(sampler).map_err(RunError::Settings)?;
    progress.start_chains(settings.chains);
    let n = model.dimension();
    settings
        .validate_dimension(sampler, n)
        .map_err(RunError::Settings)?;
    let d = dimension_for(sampler, n)?;
    let memory_size = compiled_memory(sampler, settings);
    let step_size_origin = step_size_origin(sampler, settings);
    let description = describe_run(
        model,
        sampler,
        settings,
        d,
        step_size_origin,
        Vec::new(),
        None,
    );
    let job = ChainJob {
        model,
        kind: sampler,
        settings,
        progress,
        sink: sink.map(|sink| SinkFor {
            sink,
            run: &description,
        }),
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .stack_size(CHAIN_STACK_BYTES)
        .num_threads(settings.chains.min(rayon::current_num_threads()).max(1))
        .build()
        .map_err(|e| RunError::Settings(format!("cannot start the chain threads: {e}")))?;
    let chains: Vec<_> =
        if sampler == SamplerKind::Nuts && settings.metric_for(sampler) == MetricKind::Lbfgs {
            pool.install(|| run_lbfgs_nuts_chains(&job, d, memory_size))?
        } else {
            pool.install(|| {
                (0..settings.chains)
                    .into_par_iter()
                    .map(|k| run_one_chain(&job, d, memory_size, k))
                    .collect::<Result<Vec<_>, _>>()
            })?
        };
    let interrupted = interruption(&chains, settings, progress);
    Ok(describe_run(
        model,
        sampler,
        settings,
        d,
        step_size_origin,
        chains,
        interrupted,
    ))
}

/// The memory compiled for `sampler`'s L-BFGS pairs, if it keeps any (its
/// row's [`SamplerMemory`]; NUTS only with the quasi-Newton metric).
fn compiled_memory(sampler: SamplerKind, settings: &RunSettings) -> Option<usize> {
    let memory = settings.memory_for(sampler);
    match sampler.entry().memory {
        SamplerMemory::Pairs { .. } => memory_bucket(memory),
        SamplerMemory::Sizes { .. } => Some(memory),
        SamplerMemory::NutsMetric { .. } if settings.metric_for(sampler) == MetricKind::Lbfgs => {
            memory_bucket(memory)
        }
        SamplerMemory::NutsMetric { .. } | SamplerMemory::None => None,
    }
}

/// NUTS with the quasi-Newton metric: every chain makes its start, the
/// chains' optima are compared (`minor_modes`) and a chain in a minor mode
/// restarts from the best chain's initial point, then they draw.
fn run_lbfgs_nuts_chains(
    job: &ChainJob<'_>,
    d: usize,
    memory_size: Option<usize>,
) -> Result<Vec<ChainDraws>, RunError> {
    let mut started = (0..job.settings.chains)
        .into_par_iter()
        .map(|k| start_lbfgs_nuts_chain(job, d, memory_size, k))
        .collect::<Result<Vec<_>, _>>()?;
    let starts: Vec<_> = started
        .iter()
        .map(|c| minor_modes::ChainStart {
            laplace_log_mass: c.laplace_log_mass(),
            at_optimum: c.started_at_optimum(),
        })
        .collect();
    let initial: Vec<_> = started.iter().map(|c| c.initial_point()).collect();
    let restarts = minor_modes::restarts(&starts);
    started
        .par_iter_mut()
        .zip(restarts.into_par_iter())
        .try_for_each(|(chain, restart)| match restart {
            Some(r) => chain.restart_from(job, &initial[r.from_chain - 1], r),
            None => Ok(()),
        })?;
    started
        .into_par_iter()
        .map(|chain| chain.finish(job))
        .collect()
}

/// Chain `k`'s start of NUTS with the quasi-Newton metric, in the
/// compile-time dimension `d` and memory `memory_size`.
fn start_lbfgs_nuts_chain<'a>(
    job: &'a ChainJob<'a>,
    d: usize,
    memory_size: Option<usize>,
    k: usize,
) -> Result<Box<dyn StartedChain + 'a>, RunError> {
    let window_covariance = job.settings.window_covariance;
    match memory_size {
        // Beyond `DIMENSIONS` only NUTS is compiled (the L-BFGS memory
        // is NUTS_LARGE_MEMORY).
        _ if d > DIMENSIONS[DIMENSIONS.len() - 1] => with_nuts_dimension!(
            d,
            |D| chain::start_nuts_lbfgs_chain::<D, NUTS_LARGE_MEMORY>(job, k),
            unsupported(d)
        ),
        // The 32 bucket (models of 26–32 coordinates) with the default
        // memory: storage for NUTS_WINDOW_COVARIANCE_MEMORY pairs, so
        // that the window's covariance metric (n ≤ M pairs) applies;
        // still `--memory` pairs between draws ([`nuts_lbfgs_storage`]).
        Some(m)
            if nuts_lbfgs_storage(d, Some(m), window_covariance)
                == Some(NUTS_WINDOW_COVARIANCE_MEMORY) =>
        {
            chain::start_nuts_lbfgs_chain::<
                NUTS_WINDOW_COVARIANCE_MEMORY,
                NUTS_WINDOW_COVARIANCE_MEMORY,
            >(job, k)
        }
        Some(m) => with_dimension!(
            d,
            |D| with_memory!(
                m,
                |M| chain::start_nuts_lbfgs_chain::<D, M>(job, k),
                Err(RunError::Settings(format!("no memory size {m} compiled")))
            ),
            unsupported(d)
        ),
        None => Err(RunError::Settings(
            "internal: the quasi-Newton metric needs a memory size".into(),
        )),
    }
}

/// Chain `k` of every sampler but NUTS with the quasi-Newton metric, in the
/// compile-time dimension `d` and memory `memory_size`.
fn run_one_chain(
    job: &ChainJob<'_>,
    d: usize,
    memory_size: Option<usize>,
    k: usize,
) -> Result<ChainDraws, RunError> {
    match memory_size {
        // The samplers of any dimension beyond `DIMENSIONS`.
        None if d == LARGE_DIMENSION => chain::run_any_dimension_chain::<LARGE_DIMENSION>(job, k),
        Some(m) if d == LARGE_DIMENSION => with_memory!(
            m,
            |M| chain::run_memory_chain::<LARGE_DIMENSION, M>(job, k),
            Err(RunError::Settings(format!("no memory size {m} compiled")))
        ),
        // Beyond `DIMENSIONS` only NUTS is compiled (identity and diagonal
        // metrics here).
        _ if d > DIMENSIONS[DIMENSIONS.len() - 1] => {
            with_nuts_dimension!(d, |D| chain::run_nuts_chain::<D>(job, k), unsupported(d))
        }
        None => with_dimension!(d, |D| chain::run_chain::<D>(job, k), unsupported(d)),
        Some(m) => with_dimension!(
            d,
            |D| with_memory!(
                m,
                |M| chain::run_memory_chain::<D, M>(job, k),
                Err(RunError::Settings(format!("no memory size {m} compiled")))
            ),
            unsupported(d)
        ),
    }
}

/// The run's interruption, when a chain stopped before its end.
fn interruption(
    chains: &[ChainDraws],
    settings: &RunSettings,
    progress: &Progress,
) -> Option<Interruption> {
    chains.iter().any(|c| c.interrupted).then(|| Interruption {
        reason: progress
            .stop_flag()
            .reason()
            .unwrap_or(StopReason::Requested),
        iterations: chains.iter().map(|c| c.iterations).sum(),
        planned: (settings.chains * (settings.warmup + settings.draws * settings.thin)) as u64,
        kept: chains.iter().map(|c| c.len()).collect(),
    })
}

/// The run's draws: `chains` with the run's description.
fn describe_run(
    model: &dyn Model,
    sampler: SamplerKind,
    settings: &RunSettings,
    d: usize,
    step_size_origin: StepSizeOrigin,
    chains: Vec<ChainDraws>,
    interrupted: Option<Interruption>,
) -> RunDraws {
    RunDraws {
        target: model.name(),
        sampler: sampler.name().to_string(),
        settings: describe(model, sampler, settings, d),
        names: model.output_names(),
        chains,
        target_acceptance: step_size_origin
            .adapted()
            .then(|| settings.target_acceptance_for(sampler)),
        max_tree_depth: (sampler == SamplerKind::Nuts).then(|| settings.max_tree_depth_for()),
        step_size_origin,
        metric: (sampler == SamplerKind::Nuts).then(|| settings.metric_for(sampler)),
        evaluation_failures: model.evaluation_failures(),
        interrupted,
    }
}

/// How `settings` choose the step size of `sampler`.
fn step_size_origin(sampler: SamplerKind, settings: &RunSettings) -> StepSizeOrigin {
    match settings.step_size {
        Some(_) if settings.pilot.is_some() => StepSizeOrigin::Pilot,
        Some(_) => StepSizeOrigin::Given,
        None if sampler.adapts_step_size() && settings.warmup > 0 => StepSizeOrigin::Adapted,
        None => StepSizeOrigin::Default,
    }
}

fn unsupported<T>(d: usize) -> Result<T, RunError> {
    Err(RunError::Settings(format!("no dimension {d} compiled")))
}

/// The settings as `key = value` pairs for output headers (defaults applied).
fn describe(
    model: &dyn Model,
    sampler: SamplerKind,
    s: &RunSettings,
    padded: usize,
) -> Vec<(String, String)> {
    let data_size = model.data_size();
    let mut out = vec![
        ("dimension".to_string(), model.dimension().to_string()),
        ("chains".to_string(), s.chains.to_string()),
        ("seed".to_string(), s.seed.to_string()),
        ("num_warmup".to_string(), s.warmup.to_string()),
        ("num_samples".to_string(), s.draws.to_string()),
        ("thin".to_string(), s.thin.to_string()),
    ];
    let mut push = |k: &str, v: String| out.push((k.to_string(), v));
    if padded > model.dimension() && (sampler == SamplerKind::Nuts || sampler.runs_any_dimension())
    {
        push(
            "storage",
            format!(
                "compiled size {padded}; {sampler} moves the model's {} coordinates only (the other {} stay zero and are never computed)",
                model.dimension(),
                padded - model.dimension()
            ),
        );
    } else if padded > model.dimension() {
        push(
            "padding",
            format!(
                "run in dimension {padded}: {} auxiliary N(0,1) coordinates, dropped from the output",
                padded - model.dimension()
            ),
        );
    }
    if let Some(p) = &s.pilot {
        push("pilot", p.to_string());
    }
    match s.step_size {
        Some(e) if s.pilot.is_some() => push("step_size", format!("{e} (from the pilot)")),
        Some(e) => push("step_size", format!("{e} (fixed)")),
        None if sampler == SamplerKind::Nuts => push(
            "step_size",
            format!(
                "adapted by dual averaging in Stan's windowed warm-up, delta = {}",
                s.target_acceptance_for(sampler)
            ),
        ),
        None if sampler.adapts_step_size() => push(
            "step_size",
            format!(
                "adapted by dual averaging, delta = {}, jitter {}",
                s.target_acceptance_for(sampler),
                STEP_SIZE_JITTER
            ),
        ),
        None => push(
            "step_size",
            format!("{} (default)", default_step_size(sampler, data_size)),
        ),
    }
    (sampler.entry().header)(
        &HeaderContext {
            kind: sampler,
            model,
            settings: s,
            padded,
        },
        &mut out,
    );
    let mut push = |k: &str, v: String| out.push((k.to_string(), v));
    if sampler.uses_minibatches() {
        match data_size {
            Some(n) => push(
                "batch_size",
                format!("{} of {n}", s.batch_size_for(Some(n))),
            ),
            None => push(
                "batch_size",
                "n/a (the target's gradient noise)".to_string(),
            ),
        }
    }
    push("init_radius", s.init_radius.to_string());
    out
}

#[cfg(test)]
mod checkpoint_tests;
#[cfg(test)]
mod large_dimension_tests;
#[cfg(test)]
mod lp_tests;
#[cfg(test)]
mod minor_mode_tests;
#[cfg(test)]
mod stop_tests;
#[cfg(test)]
mod tests;
