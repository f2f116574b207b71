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
//!
//! Samplers without a Metropolis test are biased by their step size, so an
//! exact comparison fails them for any long enough run. Their check
//! ([`check_with_tolerance`], [`SG_BIAS_TOLERANCE`]) allows a stated bias and
//! tests only the excess with the same z threshold:
//!
//! ```text
//! z_mean = sign · max(0, |mean − ref_mean| − t_mean · ref_sd) / se_mean
//! z_sd   = sign · max(0, |sd − ref_sd|     − t_sd   · ref_sd) / se_sd
//! ```
//!
//! so a pass says "within t of the truth, up to Monte Carlo error", which R̂
//! and ESS cannot say for these samplers.
//!
//! A reference estimated by a run of its own ([`crate::run::reference_run`])
//! is only trusted as far as that run mixed: with its
//! [`ReferenceMixing`] attached
//! ([`CheckReport::reference_mixing`]) the report prints
//! `reference_mixed: true|false`, naming the quantities that did not, and
//! fails when the reference is not usable (R̂ > 1.01, or bulk ESS < 400:
//! its MCSE, and so every z-score, cannot be trusted). A failure rather
//! than a warning beside a PASS, because a pass against such a reference
//! would say nothing and a warning is easily missed in a script's log; a
//! reference that is usable but short of 1000 effective draws gets a
//! warning line only (its MCSE is in every z-score).

use std::fmt::Write as _;

use crate::diagnostics::{
    ess_bulk, mcse_mean, mcse_sd, mean, normal_quantile, rank_normalized_rhat, variance,
};
use crate::draws::RunDraws;
use crate::model::KnownPosterior;
use crate::run::ReferenceMixing;

/// Family-wise false-alarm probability of a check.
pub const FAMILY_WISE_LEVEL: f64 = 0.001;
/// Largest rank-normalised R̂ a passing check accepts.
pub const RHAT_THRESHOLD: f64 = 1.05;

/// A bias a check allows, in units of the reference sd.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BiasTolerance {
    /// Allowed |mean − ref_mean| / ref_sd.
    pub mean: f64,
    /// Allowed |sd − ref_sd| / ref_sd.
    pub sd: f64,
}

/// The tolerance `qnmc check` gives the samplers without a Metropolis test:
/// means within 0.1 posterior sd and sds within 10% (the pilot's step size
/// aims at sds about 5% too wide along the stiffest direction, see
/// [`crate::run::pilot`]).
pub const SG_BIAS_TOLERANCE: BiasTolerance = BiasTolerance { mean: 0.1, sd: 0.1 };

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
    /// The bias allowed before the z-scores start, `None` for an exact check.
    pub tolerance: Option<BiasTolerance>,
    /// R̂ and bulk ESS of the run the reference was estimated from, when it
    /// was (`None`: analytic moments or someone else's reference draws); a
    /// reference that did not mix fails the check.
    pub reference_mixing: Option<ReferenceMixing>,
}

impl CheckReport {
    /// `true` when every |z| and R̂ is within its threshold (NaN fails) and
    /// the reference run, if there was one, mixed.
    pub fn passed(&self) -> bool {
        self.problem.is_none()
            && self.reference_usable()
            && !self.rows.is_empty()
            && self.rows.iter().all(|r| self.row_passes(r))
    }

    /// `false` only when the reference came from a run that did not mix
    /// (R̂ > 1.01 or bulk ESS < 1000 in a quantity).
    pub fn reference_mixed(&self) -> bool {
        self.reference_mixing
            .as_ref()
            .is_none_or(ReferenceMixing::mixed)
    }

    /// `false` only when the reference came from a run a check cannot use
    /// (R̂ > 1.01 or bulk ESS < 400 in a quantity).
    pub fn reference_usable(&self) -> bool {
        self.reference_mixing
            .as_ref()
            .is_none_or(ReferenceMixing::usable)
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
        if let Some(m) = &self.reference_mixing {
            let _ = writeln!(out, "{}", m.summary());
        }
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
        if !self.reference_usable() {
            let _ = writeln!(
                out,
                "FAIL: the reference run did not mix (reference_mixed: false above; R-hat > 1.01 \
                 or bulk ESS < 400), so its moments cannot judge these draws, whatever the \
                 z-scores say; a longer reference (--reference-draws) may mix"
            );
        } else if !self.reference_mixed() {
            let _ = writeln!(
                out,
                "warning: the reference run has fewer than 1000 effective draws in some quantity \
                 (reference_mixed: false above): its MCSE, in every z-score, makes this check \
                 less sharp; a longer reference (--reference-draws) is sharper"
            );
        }
        if let Some(t) = self.tolerance {
            let _ = writeln!(
                out,
                "bias tolerance: z counts only the part of |mean - ref mean| beyond {} ref sd and of |sd - ref sd| beyond {}% of ref sd (a sampler without a Metropolis test is biased by its step size; R-hat and ESS cannot see that bias, this check can)",
                t.mean,
                100.0 * t.sd
            );
        }
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
    check_with_tolerance(draws, known, None)
}

/// [`check`] allowing a bias of `tolerance` (see the module docs); `None` is
/// the exact check.
pub fn check_with_tolerance(
    draws: &RunDraws,
    known: &KnownPosterior,
    tolerance: Option<BiasTolerance>,
) -> CheckReport {
    let q = draws.names.len();
    let mut report = CheckReport {
        source: known.source.clone(),
        rows: Vec::new(),
        z_threshold: z_threshold(2 * q),
        rhat_threshold: RHAT_THRESHOLD,
        problem: None,
        tolerance,
        reference_mixing: None,
    };
    let (allowed_mean, allowed_sd) = tolerance.map_or((0.0, 0.0), |t| (t.mean, t.sd));
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
        let z_mean = excess(m - known.mean[j], allowed_mean * known.sd[j])
            / (mcse_mean(&chains).powi(2) + ref_mean_mcse.powi(2)).sqrt();
        let z_sd = excess(sd - known.sd[j], allowed_sd * known.sd[j])
            / (mcse_sd(&chains).powi(2) + ref_sd_mcse.powi(2)).sqrt();
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

/// The part of `difference` beyond ±`allowed`, with its sign.
fn excess(difference: f64, allowed: f64) -> f64 {
    if difference.is_nan() {
        return f64::NAN;
    }
    difference.signum() * (difference.abs() - allowed).max(0.0)
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

    /// MCSE of the mean ≈ 1/√4000 = 0.016 and the threshold ≈ 3.5 MCSE =
    /// 0.055: with the 0.1 sd tolerance a shift of 0.12 (excess 0.02) passes
    /// and one of 0.2 (excess 0.1 ≈ 6 MCSE) fails; the exact check fails both.
    #[test]
    fn the_bias_tolerance_allows_its_bias_and_no_more() {
        let known = standard_normal();
        for (shift, tolerant) in [(0.0, true), (0.12, true), (-0.12, true), (0.2, false)] {
            let draws = normal_run(shift);
            let report = check_with_tolerance(&draws, &known, Some(SG_BIAS_TOLERANCE));
            assert_eq!(
                report.passed(),
                tolerant,
                "shift {shift}: {}",
                report.table()
            );
            assert!(report.table().contains("bias tolerance"));
            assert_eq!(
                check(&draws, &known).passed(),
                shift == 0.0,
                "exact, {shift}"
            );
        }
        // An sd 8% too wide passes the tolerant check, 25% does not.
        let mut wide = normal_run(0.0);
        for c in &mut wide.chains {
            c.values.iter_mut().for_each(|v| *v *= 1.08);
        }
        assert!(check_with_tolerance(&wide, &known, Some(SG_BIAS_TOLERANCE)).passed());
        for c in &mut wide.chains {
            c.values.iter_mut().for_each(|v| *v *= 1.25 / 1.08);
        }
        assert!(!check_with_tolerance(&wide, &known, Some(SG_BIAS_TOLERANCE)).passed());
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
