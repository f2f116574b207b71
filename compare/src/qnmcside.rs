//! The qnmc side: the host library's runner, with its chains on one thread.

use std::time::Instant;

use qnmc_host::model::Model;
use qnmc_host::run::{Progress, RunSettings, SamplerKind};

use crate::runs::{ChainRun, Counted, SamplerRun};

/// Runs `kind` on `model` through `qnmc_host::run::run`.
///
/// The runner puts its chains on a rayon pool of min(chains, current rayon
/// threads) threads; called inside a one-thread pool it runs them one after
/// another, like the nuts-rs chains. The model is wrapped in [`Counted`],
/// whose `constrain` is the identity, so the draws are unconstrained.
pub fn run(
    model: &dyn Model,
    kind: SamplerKind,
    settings: &RunSettings,
) -> Result<SamplerRun, String> {
    let counted = Counted::new(model);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| format!("cannot build a one-thread pool: {e}"))?;
    let wall = Instant::now();
    let draws = pool
        .install(|| qnmc_host::run::run(&counted, kind, settings, &Progress::hidden()))
        .map_err(|e| format!("qnmc {kind}: {e}"))?;
    let seconds_wall = wall.elapsed().as_secs_f64();
    let dimension = model.dimension();
    if draws.names.len() != dimension {
        return Err(format!(
            "qnmc {kind}: {} reported quantities for dimension {dimension}",
            draws.names.len()
        ));
    }
    let chains = draws
        .chains
        .into_iter()
        .map(|c| {
            let kept: u64 = c.n_leapfrog.iter().map(|&n| u64::from(n)).sum();
            ChainRun {
                gradients_tuning: c.gradient_evaluations.saturating_sub(kept),
                gradients_sampling: kept,
                divergences_sampling: c.divergent.iter().filter(|&&d| d).count() as u64,
                divergences_tuning: None,
                seconds_tuning: c.warmup_seconds,
                seconds_sampling: c.sampling_seconds,
                step_size_sum: c.step_size.iter().sum(),
                draws: c.values,
            }
        })
        .collect();
    Ok(SamplerRun {
        dimension,
        chains,
        counted_calls: counted.calls(),
        seconds_wall,
    })
}
