//! The nuts-rs side: a `CpuLogpFunc` over any qnmc-host `Model`, and chains
//! driven one after another through nuts-rs's `Chain` interface.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use nuts_rs::rand::SeedableRng;
use nuts_rs::rand::rngs::ChaCha8Rng;
use nuts_rs::{
    Chain, CpuLogpFunc, CpuMath, CpuMathError, DiagNutsSettings, HasDims, LogpError,
    LowRankNutsSettings, Settings,
};
use qnmc_host::model::{Model, ModelRng};
use qnmc_host::run::chain_seed;

use crate::runs::{ChainRun, SamplerRun};

/// Which nuts-rs mass-matrix adaptation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NutsRsMetric {
    /// `DiagNutsSettings` (alias `DiagGradNutsSettings`): diagonal mass matrix
    /// from draws and gradients.
    Diag,
    /// `LowRankNutsSettings`: diagonal plus low-rank corrections.
    LowRank,
}

/// U or ∇U was not finite: nuts-rs treats a recoverable error as a divergence,
/// as qnmc rejects such a step and counts it divergent.
#[derive(Debug, thiserror::Error)]
#[error("the potential or its gradient is not finite")]
pub struct NotFinite;

impl LogpError for NotFinite {
    fn is_recoverable(&self) -> bool {
        true
    }
}

/// log p = −U and ∇ log p = −∇U of a qnmc-host model, with a call counter.
struct Density<'a> {
    model: &'a dyn Model,
    calls: &'a AtomicU64,
}

impl HasDims for Density<'_> {
    fn dim_sizes(&self) -> HashMap<String, u64> {
        let n = self.model.dimension() as u64;
        HashMap::from([
            ("unconstrained_parameter".to_string(), n),
            ("dim".to_string(), n),
        ])
    }
}

impl CpuLogpFunc for Density<'_> {
    type LogpError = NotFinite;
    type FlowParameters = ();
    type ExpandedVector = Vec<f64>;

    fn dim(&self) -> usize {
        self.model.dimension()
    }

    fn logp(&mut self, position: &[f64], gradient: &mut [f64]) -> Result<f64, NotFinite> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let u = self.model.potential_and_gradient(position, gradient);
        if !u.is_finite() {
            return Err(NotFinite);
        }
        for g in gradient.iter_mut() {
            if !g.is_finite() {
                return Err(NotFinite);
            }
            *g = -*g;
        }
        Ok(-u)
    }

    fn expand_vector<R: nuts_rs::rand::Rng + ?Sized>(
        &mut self,
        _rng: &mut R,
        position: &[f64],
    ) -> Result<Vec<f64>, CpuMathError> {
        Ok(position.to_vec())
    }
}

/// The starting point of chain `k`: exactly qnmc's (`RunSettings::init_radius`
/// = r): the model's initial point plus r (2u − 1), u uniform on (0, 1] from
/// `ModelRng` seeded with `chain_seed(seed, k)`, in coordinate order. A
/// further attempt (where log p was not finite) continues the same stream.
fn start_point(model: &dyn Model, rng: &mut ModelRng, r: f64) -> Vec<f64> {
    let mut x = model.initial_point();
    for v in x.iter_mut() {
        let u: f64 = qnmc::Real::uniform_open_closed(rng);
        *v += r * (2.0 * u - 1.0);
    }
    x
}

/// What every chain of a nuts-rs run shares.
pub struct NutsRsJob<'a> {
    pub model: &'a dyn Model,
    pub metric: NutsRsMetric,
    pub chains: usize,
    pub tune: u64,
    pub draws: u64,
    pub seed: u64,
    pub init_radius: f64,
}

/// Runs `job.chains` chains one after another on this thread.
pub fn run(job: &NutsRsJob<'_>) -> Result<SamplerRun, String> {
    let calls = AtomicU64::new(0);
    let wall = Instant::now();
    let mut chains = Vec::with_capacity(job.chains);
    for k in 0..job.chains {
        let chain = match job.metric {
            NutsRsMetric::Diag => {
                let settings = DiagNutsSettings {
                    num_tune: job.tune,
                    num_draws: job.draws,
                    num_chains: job.chains,
                    seed: job.seed,
                    ..DiagNutsSettings::default()
                };
                run_chain(job, settings, k, &calls)?
            }
            NutsRsMetric::LowRank => {
                let settings = LowRankNutsSettings {
                    num_tune: job.tune,
                    num_draws: job.draws,
                    num_chains: job.chains,
                    seed: job.seed,
                    ..LowRankNutsSettings::default()
                };
                run_chain(job, settings, k, &calls)?
            }
        };
        chains.push(chain);
    }
    Ok(SamplerRun {
        dimension: job.model.dimension(),
        chains,
        counted_calls: calls.load(Ordering::Relaxed),
        seconds_wall: wall.elapsed().as_secs_f64(),
    })
}

fn run_chain<S: Settings>(
    job: &NutsRsJob<'_>,
    settings: S,
    k: usize,
    calls: &AtomicU64,
) -> Result<ChainRun, String> {
    let n = job.model.dimension();
    let seed = chain_seed(job.seed, k);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let math = CpuMath::new(Density {
        model: job.model,
        calls,
    });
    let mut chain = settings
        .new_chain(k as u64, math, &mut rng)
        .map_err(|e| format!("nuts-rs new_chain: {e:#}"))?;
    let mut init_rng = <ModelRng as rand_core::SeedableRng>::seed_from_u64(seed);
    let mut started = false;
    for _ in 0..100 {
        let x = start_point(job.model, &mut init_rng, job.init_radius);
        if chain.set_position(&x).is_ok() {
            started = true;
            break;
        }
    }
    if !started {
        return Err("nuts-rs: no finite starting point in 100 attempts".into());
    }

    let mut out = ChainRun {
        draws: Vec::with_capacity(job.draws as usize * n),
        divergences_tuning: Some(0),
        ..ChainRun::default()
    };
    let clock = Instant::now();
    for _ in 0..job.tune {
        let (_, progress) = chain.draw().map_err(|e| format!("nuts-rs draw: {e:#}"))?;
        out.gradients_tuning += progress.num_gradients;
        if progress.diverging {
            *out.divergences_tuning.as_mut().unwrap() += 1;
        }
    }
    out.seconds_tuning = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    for _ in 0..job.draws {
        let (position, progress) = chain.draw().map_err(|e| format!("nuts-rs draw: {e:#}"))?;
        out.gradients_sampling += progress.num_gradients;
        out.divergences_sampling += u64::from(progress.diverging);
        out.step_size_sum += progress.step_size;
        out.draws.extend_from_slice(&position);
    }
    out.seconds_sampling = clock.elapsed().as_secs_f64();
    Ok(out)
}
