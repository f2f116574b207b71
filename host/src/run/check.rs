//! `qnmc check`: are the draws consistent with a known posterior?
//!
//! For every reported quantity the posterior mean and sd estimated from the
//! draws are compared with the reference by z-scores that use both Monte
//! Carlo standard errors,
//!
//! ```text
//! z_mean = (mean − ref_mean) / √(mcse_mean² + ref_mean_mcse²)
//! z_sd   = (sd − ref_sd)     / √(mcse_sd² + ref_sd_mcse²)
//! ```
//!
//! (the reference's MCSE is 0 for analytic moments). With q quantities there
//! are 2q z-scores; the check passes when every |z| is below the Bonferroni
//! threshold Φ⁻¹(1 − α / (2·2q)) for the family-wise level
//! α = [`FAMILY_WISE_LEVEL`] = 0.001 (so a correct sampler fails at most once
//! in a thousand runs, and a bias of ~4–5 MCSE is caught), and every
//! rank-normalised R̂ is below [`RHAT_THRESHOLD`] = 1.05 (Vehtari et al. 2021
//! recommend 1.01 for final inferences; 1.05 suits the short runs of a check).

use std::fmt::Write as _;

use crate::diagnostics::{
    ess_bulk, mcse_mean, mcse_sd, mean, normal_quantile, rank_normalized_rhat, variance,
};
use crate::draws::RunDraws;
use crate::model::KnownPosterior;

/// Family-wise false-alarm probability of a check.
pub const FAMILY_WISE_LEVEL: f64 = 0.001;
/// Largest rank-normalised R̂ a passing check accepts.
pub const RHAT_THRESHOLD: f64 = 1.05;

/// One quantity of a check.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckRow {
    /// Quantity name.
    pub name: String,
    /// Posterior mean from the draws.
    pub mean: f64,
    /// Reference mean.
    pub reference_mean: f64,
    /// z-score of the mean.
    pub z_mean: f64,
    /// Posterior sd from the draws.
    pub sd: f64,
    /// Reference sd.
    pub reference_sd: f64,
    /// z-score of the sd.
    pub z_sd: f64,
    /// Rank-normalised split R̂.
    pub rhat: f64,
    /// Bulk ESS.
    pub ess_bulk: f64,
}

/// Outcome of [`check`].
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    /// Where the reference comes from.
    pub source: String,
    /// One row per quantity.
    pub rows: Vec<CheckRow>,
    /// Bonferroni threshold on |z|.
    pub z_threshold: f64,
    /// Threshold on R̂.
    pub rhat_threshold: f64,
    /// Why the check cannot be made at all (quantity count mismatch), if so.
    pub problem: Option<String>,
}

impl CheckReport {
    /// `true` when every |z| and R̂ is within its threshold (NaN fails).
    pub fn passed(&self) -> bool {
        self.problem.is_none()
            && !self.rows.is_empty()
            && self.rows.iter().all(|r| self.row_passes(r))
    }

    fn row_passes(&self, r: &CheckRow) -> bool {
        r.z_mean.abs() < self.z_threshold
            && r.z_sd.abs() < self.z_threshold
            && r.rhat < self.rhat_threshold
    }

    /// The report as a Markdown table with a closing verdict line.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "reference: {}", self.source);
        if let Some(p) = &self.problem {
            let _ = writeln!(out, "FAIL: {p}");
            return out;
        }
        out.push_str(
            "| quantity | mean | ref mean | z mean | sd | ref sd | z sd | R-hat | ESS bulk | |\n",
        );
        out.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
        for r in &self.rows {
            let _ = writeln!(
                out,
                "| {} | {:.4} | {:.4} | {:+.2} | {:.4} | {:.4} | {:+.2} | {:.3} | {:.0} | {} |",
                r.name,
                r.mean,
                r.reference_mean,
                r.z_mean,
                r.sd,
                r.reference_sd,
                r.z_sd,
                r.rhat,
                r.ess_bulk,
                if self.row_passes(r) { "ok" } else { "FAIL" }
            );
        }
        let _ = writeln!(
            out,
            "{}: every |z| < {:.2} (Bonferroni over {} z-scores, family-wise level {}) and R-hat < {}",
            if self.passed() { "PASS" } else { "FAIL" },
            self.z_threshold,
            2 * self.rows.len(),
            FAMILY_WISE_LEVEL,
            self.rhat_threshold
        );
        out
    }
}

/// The Bonferroni |z| threshold for `tests` two-sided z-tests at family-wise
/// level [`FAMILY_WISE_LEVEL`].
///
/// ```
/// use qnmc_host::run::check::z_threshold;
/// assert!((z_threshold(1) - 3.2905).abs() < 1e-3);
/// assert!(z_threshold(100) > z_threshold(10));
/// ```
pub fn z_threshold(tests: usize) -> f64 {
    normal_quantile(1.0 - FAMILY_WISE_LEVEL / (2.0 * tests.max(1) as f64))
}

/// Compares `draws` with `known` (see the module docs).
pub fn check(draws: &RunDraws, known: &KnownPosterior) -> CheckReport {
    let q = draws.names.len();
    let mut report = CheckReport {
        source: known.source.clone(),
        rows: Vec::new(),
        z_threshold: z_threshold(2 * q),
        rhat_threshold: RHAT_THRESHOLD,
        problem: None,
    };
    if known.mean.len() != q || known.sd.len() != q {
        report.problem = Some(format!(
            "the draws have {q} quantities, the reference {}",
            known.mean.len()
        ));
        return report;
    }
    for j in 0..q {
        let columns = draws.chains_of(j);
        let chains: Vec<&[f64]> = columns.iter().map(|c| c.as_slice()).collect();
        let all = columns.concat();
        let m = mean(&all);
        let sd = variance(&all).sqrt();
        let ref_mean_mcse = known.mean_mcse.as_ref().map_or(0.0, |v| v[j]);
        let ref_sd_mcse = known.sd_mcse.as_ref().map_or(0.0, |v| v[j]);
        let z_mean =
            (m - known.mean[j]) / (mcse_mean(&chains).powi(2) + ref_mean_mcse.powi(2)).sqrt();
        let z_sd = (sd - known.sd[j]) / (mcse_sd(&chains).powi(2) + ref_sd_mcse.powi(2)).sqrt();
        report.rows.push(CheckRow {
            name: draws.names[j].clone(),
            mean: m,
            reference_mean: known.mean[j],
            z_mean: if z_mean.is_nan() {
                f64::INFINITY
            } else {
                z_mean
            },
            sd,
            reference_sd: known.sd[j],
            z_sd: if z_sd.is_nan() { f64::INFINITY } else { z_sd },
            rhat: nan_to_inf(rank_normalized_rhat(&chains)),
            ess_bulk: ess_bulk(&chains),
        });
    }
    report
}

fn nan_to_inf(x: f64) -> f64 {
    if x.is_nan() { f64::INFINITY } else { x }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draws::ChainDraws;

    /// Four chains of a deterministic, well-mixed N(0, 1) sequence (inverse
    /// CDF of a low-discrepancy sequence, shuffled by a multiplicative hash).
    fn normal_run(shift: f64) -> RunDraws {
        let chains = (0..4)
            .map(|c| {
                let values: Vec<f64> = (0..1000)
                    .map(|i| {
                        let k = (c * 1000 + i) as u64;
                        let u = ((k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 + 0.5)
                            / (1u64 << 53) as f64;
                        normal_quantile(u) + shift
                    })
                    .collect();
                ChainDraws {
                    lp: vec![0.0; values.len()],
                    values,
                    ..ChainDraws::default()
                }
            })
            .collect();
        RunDraws {
            names: vec!["x".into()],
            chains,
            ..RunDraws::default()
        }
    }

    fn standard_normal() -> KnownPosterior {
        KnownPosterior {
            source: "analytic".into(),
            mean: vec![0.0],
            sd: vec![1.0],
            mean_mcse: None,
            sd_mcse: None,
            gaussian_marginals: true,
        }
    }

    #[test]
    fn right_draws_pass_and_shifted_draws_fail() {
        let good = check(&normal_run(0.0), &standard_normal());
        assert!(good.passed(), "{}", good.table());
        // 4000 near-independent draws: MCSE of the mean ≈ 1/√4000 = 0.016, so a
        // shift of 0.2 is ≈ 12 MCSE, far past the threshold (≈ 3.5).
        let bad = check(&normal_run(0.2), &standard_normal());
        assert!(!bad.passed());
        assert!(bad.rows[0].z_mean > bad.z_threshold, "{}", bad.table());
        assert!(bad.table().contains("FAIL"));
    }

    #[test]
    fn mismatched_quantities_fail_with_a_reason() {
        let mut known = standard_normal();
        known.mean.push(0.0);
        known.sd.push(1.0);
        let report = check(&normal_run(0.0), &known);
        assert!(!report.passed());
        assert!(report.table().contains("1 quantities, the reference 2"));
    }
}
