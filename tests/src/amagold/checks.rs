//! z-scores built from Monte-Carlo standard errors, for the AMAGOLD and
//! adaptation tests.
//!
//! For a scalar series f(θ) over several chains: estimate = pooled mean,
//! MCSE = sd(f)/√ESS, with Stan's bulk ESS for means of coordinates and the
//! basic split-chain ESS for means of squared deviations (the χ²-like f whose
//! mean is a variance; see `tests/posteriors/hmc.rs` for the reasoning).
//! z = (estimate − truth)/MCSE, or for two independent runs
//! (a − b)/√(MCSE_a² + MCSE_b²), is ≈ N(0, 1) for a correct sampler; because
//! the ESS is itself estimated, its spread is taken as up to 1.15 (the value
//! measured on replicate runs in `tests/posteriors/hmc.rs`).

use qnmc_host::diagnostics::{ess_basic_split, ess_bulk, mean, normal_quantile, variance};

/// One z-score.
#[derive(Debug, Clone)]
pub struct Z {
    /// What was estimated.
    pub label: String,
    /// Pooled mean.
    pub estimate: f64,
    /// Truth (or the other run's estimate).
    pub truth: f64,
    /// MCSE used (combined for two-sample scores).
    pub mcse: f64,
    /// The z-score.
    pub z: f64,
}

/// Which ESS goes into the MCSE.
#[derive(Debug, Clone, Copy)]
pub enum Ess {
    /// Stan's bulk ESS (means of coordinates).
    Bulk,
    /// Basic split-chain ESS (means of squared deviations).
    BasicSplit,
}

/// Pooled mean and MCSE of one series per chain.
pub fn estimate(series: &[Vec<f64>], ess: Ess) -> (f64, f64) {
    let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
    let n_eff = match ess {
        Ess::Bulk => ess_bulk(&views),
        Ess::BasicSplit => ess_basic_split(&views),
    };
    let pooled = series.concat();
    (mean(&pooled), (variance(&pooled) / n_eff).sqrt())
}

/// z-score of `series` against a known truth.
pub fn z_known(label: &str, series: &[Vec<f64>], truth: f64, ess: Ess) -> Z {
    let (est, mcse) = estimate(series, ess);
    Z {
        label: label.to_string(),
        estimate: est,
        truth,
        mcse,
        z: (est - truth) / mcse,
    }
}

/// Two-sample z-score: both runs' MCSEs.
pub fn z_two_sample(label: &str, a: &[Vec<f64>], b: &[Vec<f64>], ess: Ess) -> Z {
    let (ea, ma) = estimate(a, ess);
    let (eb, mb) = estimate(b, ess);
    let mcse = (ma * ma + mb * mb).sqrt();
    Z {
        label: label.to_string(),
        estimate: ea,
        truth: eb,
        mcse,
        z: (ea - eb) / mcse,
    }
}

/// Spread allowed to the z of a correct sampler.
pub const Z_SD: f64 = 1.15;

/// Bonferroni limit for `n` z-scores with total false-alarm probability
/// `alpha`: the smallest h with n·P(|N(0, Z_SD²)| > h) ≤ alpha. Valid for
/// any correlation between the z's.
pub fn bonferroni_limit(n: usize, alpha: f64) -> f64 {
    Z_SD * normal_quantile(1.0 - alpha / (2.0 * n as f64))
}

/// Series f(θ) per chain.
pub fn series<const D: usize>(
    chains: &[Vec<[f64; D]>],
    f: impl Fn(&[f64; D]) -> f64,
) -> Vec<Vec<f64>> {
    chains.iter().map(|c| c.iter().map(&f).collect()).collect()
}

/// Checks a family of z-scores against the Bonferroni limit at α = 0.005 and
/// returns (min z, max z) for the report.
pub fn check_family(name: &str, zs: &[Z]) -> (f64, f64) {
    let limit = bonferroni_limit(zs.len(), 0.005);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for z in zs {
        lo = lo.min(z.z);
        hi = hi.max(z.z);
    }
    println!(
        "{name}: {} z-scores in [{lo:.2}, {hi:.2}], limit ±{limit:.2}",
        zs.len()
    );
    for z in zs {
        assert!(
            z.z.is_finite() && z.z.abs() <= limit,
            "{name}: {z:?} beyond ±{limit:.2}"
        );
    }
    (lo, hi)
}

/// Whether any z of the family is beyond the limit (for negative controls).
pub fn family_fails(zs: &[Z]) -> bool {
    let limit = bonferroni_limit(zs.len(), 0.005);
    zs.iter().any(|z| !z.z.is_finite() || z.z.abs() > limit)
}
