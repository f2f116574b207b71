//! A reference posterior from a long HMC run, for targets without analytic
//! moments or reference draws (the logistic regressions).

use super::{Progress, RunError, RunSettings, SamplerKind, run};
use crate::model::{KnownPosterior, Model};

/// Length of the reference run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReferenceSettings {
    /// Chains.
    pub chains: usize,
    /// Warm-up iterations per chain.
    pub warmup: usize,
    /// Kept draws per chain.
    pub draws: usize,
    /// Seed (use one different from the run being checked).
    pub seed: u64,
}

impl Default for ReferenceSettings {
    /// 4 chains × (1000 warm-up + 5000 kept) draws of HMC with L = 10 and
    /// dual averaging: ≥ 5000 effective draws on the logistic regressions,
    /// so the reference MCSE is well below the checked run's.
    fn default() -> Self {
        ReferenceSettings {
            chains: 4,
            warmup: 1000,
            draws: 5000,
            seed: 0x5EF0_2E4C,
        }
    }
}

/// Means and sds of `model`'s reported quantities, with their MCSEs, from a
/// long HMC run. Nothing is cached.
pub fn reference_posterior(
    model: &dyn Model,
    reference: &ReferenceSettings,
    progress: &Progress,
) -> Result<KnownPosterior, RunError> {
    let settings = RunSettings {
        chains: reference.chains,
        warmup: reference.warmup,
        draws: reference.draws,
        seed: reference.seed,
        ..RunSettings::default()
    };
    let draws = run(model, SamplerKind::Hmc, &settings, progress)?;
    let q = draws.names.len();
    let mut known = KnownPosterior {
        source: format!(
            "long HMC run ({} chains x {} draws after {} warm-up, seed {})",
            reference.chains, reference.draws, reference.warmup, reference.seed
        ),
        mean: Vec::with_capacity(q),
        sd: Vec::with_capacity(q),
        mean_mcse: Some(Vec::with_capacity(q)),
        sd_mcse: Some(Vec::with_capacity(q)),
        gaussian_marginals: false,
    };
    for j in 0..q {
        let columns = draws.chains_of(j);
        let chains: Vec<&[f64]> = columns.iter().map(|c| c.as_slice()).collect();
        known.push_estimated(&chains);
    }
    Ok(known)
}
