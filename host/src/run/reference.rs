//! A reference posterior from a long run, for targets without analytic
//! moments or reference draws (the logistic regressions, centred eight
//! schools, stochastic volatility, Stan models), and whether that run mixed.
//!
//! Which run ([`reference_run`], `qnmc check`'s reference): NUTS with the
//! diagonal metric, on the model's [`Model::reference_model`] when it has
//! one (a non-centred twin of the same posterior: `stochastic-volatility`,
//! `eight-schools-centered`, `radon-centered`, `hier-logistic-centered`,
//! `latent-gp-centered`), else on the model itself.
//! [`reference_posterior`] keeps the earlier long HMC run (identity mass,
//! L = 10, dual averaging) for `qnmc reproduce amagold-fig4`, whose
//! published settings it is.
//!
//! Why: HMC on the centred stochastic-volatility coordinates (4 × 5000
//! draws) put φ's posterior at mean 0.211, sd 0.386, where a 4 × 5000-draw
//! nutpie run of the non-centred posterior (R̂ 1.001) puts it at 0.050,
//! 0.488, and nothing said the reference run had not mixed
//! (docs/HIERARCHICAL.md). Measured on it (`qnmc run --warmup 1000 --draws
//! 5000 --seed 1592798796`, 4 chains, z against the nutpie run with both
//! MCSEs): on the centred model HMC had max R̂ 1.138 and min bulk ESS 22
//! (φ z +4.3, −6.3) and NUTS with the diagonal metric R̂ 1.042, ESS 95 (σ
//! mean z +3.5); on the twin HMC had R̂ 1.001, ESS 5826 (every |z| ≤ 2.6,
//! 240 k gradients) and NUTS with the diagonal metric R̂ 1.001, ESS 7880
//! (every |z| ≤ 2.6; φ mean 0.054, sd 0.493; 394 k gradients, 0.6 s). On
//! the logistic regressions (4 × (1000 + 2000) draws, the CI's
//! `--reference-draws 2000`), HMC against NUTS with the diagonal metric:
//! min bulk ESS 963 / 9177 (heart), 329 / 7138 (australian, R̂ 1.013 with
//! HMC), 833 / 7371 (pima), 129 / 1079 (ripley, R̂ 1.027 with HMC), 502 /
//! 4611 (german), with fewer gradients (82 k–119 k against 120 k) except on
//! ripley (636 k: its correlated cubic design needs deep trees). On centred
//! eight schools the HMC reference had min bulk ESS 349 (R̂ 1.012).
//!
//! Mixing ([`ReferenceMixing`]): a reference is only as good as its run, so
//! the run's rank-normalised R̂ and bulk ESS are computed for every reported
//! quantity; it mixed when every R̂ ≤ [`REFERENCE_MAX_RHAT`] = 1.01 (Vehtari
//! et al. 2021's threshold for final inferences: a reference is one) and
//! every bulk ESS ≥ [`REFERENCE_MIN_ESS_BULK`] = 1000 (so its MCSE is at
//! most ~3 % of a posterior sd, and well below that of a checked run of
//! 4 × 1000 draws). `qnmc check` prints `reference_mixed: true|false`, and
//! when false names the quantities, on stderr at once and in its output
//! ([`crate::run::check::CheckReport::reference_mixing`]). What follows
//! depends on how it failed:
//!
//! - an R̂ above 1.01 (or undefined), or a bulk ESS below
//!   [`REFERENCE_USABLE_MIN_ESS_BULK`] = 400 (100 per chain, below which
//!   Vehtari et al. find R̂ and the MCSE estimates themselves unreliable):
//!   the reference's MCSE cannot be trusted, so no z-score against it can;
//!   the check **fails** ([`ReferenceMixing::usable`]);
//! - otherwise (R̂ fine, bulk ESS 400–1000): a warning only. The reference's
//!   MCSE is in every z-score, so a shorter reference makes the check less
//!   sharp, not wrong.
//!
//! The rule alone would have refused the old HMC references of
//! stochastic volatility (R̂ 1.138), centred eight schools (ESS 349) and,
//! at the CI's 2000 draws, logreg-australian, ripley and german.

use super::{MetricKind, Progress, RunError, RunSettings, SamplerKind, run};
use crate::diagnostics::{ess_bulk, rank_normalized_rhat};
use crate::draws::RunDraws;
use crate::model::{KnownPosterior, Model};

/// Largest R̂ of a reference run that mixed.
pub const REFERENCE_MAX_RHAT: f64 = 1.01;
/// Smallest bulk ESS of a reference run that mixed.
pub const REFERENCE_MIN_ESS_BULK: f64 = 1000.0;
/// Smallest bulk ESS of a reference a check can use at all (with R̂ ≤
/// [`REFERENCE_MAX_RHAT`]).
pub const REFERENCE_USABLE_MIN_ESS_BULK: f64 = 400.0;

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
    /// 4 chains × (1000 warm-up + 5000 kept) draws: thousands of effective
    /// draws of NUTS with the diagonal metric on the logistic regressions
    /// and the twins (module docs), so the reference MCSE is well below the
    /// checked run's.
    fn default() -> Self {
        ReferenceSettings {
            chains: 4,
            warmup: 1000,
            draws: 5000,
            seed: 0x5EF0_2E4C,
        }
    }
}

/// R̂ and bulk ESS of every reported quantity of a reference run.
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceMixing {
    /// Quantity names.
    pub names: Vec<String>,
    /// Rank-normalised split R̂ of each (NaN: undefined, e.g. a constant
    /// chain).
    pub rhat: Vec<f64>,
    /// Bulk ESS of each.
    pub ess_bulk: Vec<f64>,
}

impl ReferenceMixing {
    /// The diagnostics of `draws`.
    pub fn of(draws: &RunDraws) -> Self {
        let mut mixing = ReferenceMixing {
            names: draws.names.clone(),
            rhat: Vec::with_capacity(draws.names.len()),
            ess_bulk: Vec::with_capacity(draws.names.len()),
        };
        for j in 0..draws.names.len() {
            let columns = draws.chains_of(j);
            let chains: Vec<&[f64]> = columns.iter().map(|c| c.as_slice()).collect();
            mixing.rhat.push(rank_normalized_rhat(&chains));
            mixing.ess_bulk.push(ess_bulk(&chains));
        }
        mixing
    }

    /// The largest R̂ and its quantity (an undefined R̂ counts as +∞).
    pub fn max_rhat(&self) -> Option<(&str, f64)> {
        self.worst(&self.rhat, |r| if r.is_nan() { f64::INFINITY } else { r })
    }

    /// The smallest bulk ESS and its quantity (an undefined ESS counts as 0).
    pub fn min_ess_bulk(&self) -> Option<(&str, f64)> {
        self.worst(&self.ess_bulk, |e| if e.is_nan() { 0.0 } else { -e })
            .map(|(name, e)| (name, -e))
    }

    /// The quantity whose `key` is largest, with that key.
    fn worst(&self, values: &[f64], key: impl Fn(f64) -> f64) -> Option<(&str, f64)> {
        self.names
            .iter()
            .zip(values)
            .map(|(n, &v)| (n.as_str(), key(v)))
            .fold(None, |best, (n, k)| match best {
                Some((_, b)) if b >= k => best,
                _ => Some((n, k)),
            })
    }

    /// Every quantity with R̂ > [`REFERENCE_MAX_RHAT`] or bulk ESS <
    /// [`REFERENCE_MIN_ESS_BULK`] (undefined values included), one line
    /// each: `phi: R-hat 1.034 > 1.01, bulk ESS 412 < 1000`.
    pub fn problems(&self) -> Vec<String> {
        self.problems_below(REFERENCE_MIN_ESS_BULK)
    }

    /// [`problems`](Self::problems) with `min_ess` for the bulk ESS.
    fn problems_below(&self, min_ess: f64) -> Vec<String> {
        let mut out = Vec::new();
        for ((name, &r), &e) in self.names.iter().zip(&self.rhat).zip(&self.ess_bulk) {
            let mut why = Vec::new();
            if r.is_nan() || r > REFERENCE_MAX_RHAT {
                why.push(format!("R-hat {r:.3} > {REFERENCE_MAX_RHAT}"));
            }
            if e.is_nan() || e < min_ess {
                why.push(format!("bulk ESS {e:.0} < {min_ess}"));
            }
            if !why.is_empty() {
                out.push(format!("{name}: {}", why.join(", ")));
            }
        }
        out
    }

    /// `true` when the run has quantities and every one mixed.
    pub fn mixed(&self) -> bool {
        !self.names.is_empty() && self.problems().is_empty()
    }

    /// `true` when a check can use the reference: every R̂ ≤
    /// [`REFERENCE_MAX_RHAT`] and bulk ESS ≥ [`REFERENCE_USABLE_MIN_ESS_BULK`]
    /// (see the module docs).
    pub fn usable(&self) -> bool {
        !self.names.is_empty()
            && self
                .problems_below(REFERENCE_USABLE_MIN_ESS_BULK)
                .is_empty()
    }

    /// One line for the check's output: `reference_mixed: true (max R-hat
    /// 1.002 on phi, min bulk ESS 7931 on sigma)`, and when it did not mix,
    /// the quantities that did not (at most five named).
    pub fn summary(&self) -> String {
        let extremes = match (self.max_rhat(), self.min_ess_bulk()) {
            (Some((rn, r)), Some((en, e))) => {
                format!("max R-hat {r:.3} on {rn}, min bulk ESS {e:.0} on {en}")
            }
            _ => "no quantities".into(),
        };
        if self.mixed() {
            return format!("reference_mixed: true ({extremes})");
        }
        let problems = self.problems();
        let shown = problems.len().min(5);
        let mut line = format!(
            "reference_mixed: false ({extremes}; needed R-hat <= {REFERENCE_MAX_RHAT} and bulk \
             ESS >= {REFERENCE_MIN_ESS_BULK} in every quantity): {}",
            problems[..shown].join("; ")
        );
        if problems.len() > shown {
            line.push_str(&format!("; and {} more quantities", problems.len() - shown));
        }
        line
    }
}

/// A reference posterior and how well its run mixed.
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceRun {
    /// Means and sds with their MCSEs.
    pub posterior: KnownPosterior,
    /// R̂ and bulk ESS of the run.
    pub mixing: ReferenceMixing,
}

/// Means and sds of `model`'s reported quantities, with their MCSEs, from a
/// long NUTS run with the diagonal metric on its
/// [`reference_model`](Model::reference_model) or itself (module docs), and
/// the run's R̂ and bulk ESS. Nothing is cached.
pub fn reference_run(
    model: &dyn Model,
    reference: &ReferenceSettings,
    progress: &Progress,
) -> Result<ReferenceRun, RunError> {
    let twin = model.reference_model();
    let sampled: &dyn Model = match &twin {
        Some(twin) => {
            if twin.output_names() != model.output_names() {
                return Err(RunError::Settings(format!(
                    "the reference model {} does not report {}'s quantities",
                    twin.name(),
                    model.name()
                )));
            }
            twin.as_ref()
        }
        None => model,
    };
    let mut settings = run_settings(reference);
    settings.metric = Some(MetricKind::Diagonal);
    let draws = run(sampled, SamplerKind::Nuts, &settings, progress)?;
    let of = match &twin {
        Some(twin) => format!(" of {}, the same posterior", twin.name()),
        None => String::new(),
    };
    let source = format!(
        "long NUTS run (diagonal metric){of} ({})",
        lengths(reference)
    );
    Ok(ReferenceRun {
        posterior: estimate(&draws, source),
        mixing: ReferenceMixing::of(&draws),
    })
}

/// Means and sds of `model`'s reported quantities, with their MCSEs, from a
/// long HMC run of `model` itself (identity mass, L = 10, dual averaging):
/// the reference of `qnmc reproduce amagold-fig4`. `qnmc check` uses
/// [`reference_run`]. Nothing is cached.
pub fn reference_posterior(
    model: &dyn Model,
    reference: &ReferenceSettings,
    progress: &Progress,
) -> Result<KnownPosterior, RunError> {
    let draws = run(model, SamplerKind::Hmc, &run_settings(reference), progress)?;
    Ok(estimate(
        &draws,
        format!("long HMC run ({})", lengths(reference)),
    ))
}

fn run_settings(reference: &ReferenceSettings) -> RunSettings {
    RunSettings {
        chains: reference.chains,
        warmup: reference.warmup,
        draws: reference.draws,
        seed: reference.seed,
        ..RunSettings::default()
    }
}

fn lengths(reference: &ReferenceSettings) -> String {
    format!(
        "{} chains x {} draws after {} warm-up, seed {}",
        reference.chains, reference.draws, reference.warmup, reference.seed
    )
}

/// Means and sds with their MCSEs of every quantity of `draws`.
fn estimate(draws: &RunDraws, source: String) -> KnownPosterior {
    let q = draws.names.len();
    let mut posterior = KnownPosterior {
        source,
        mean: Vec::with_capacity(q),
        sd: Vec::with_capacity(q),
        mean_mcse: Some(Vec::with_capacity(q)),
        sd_mcse: Some(Vec::with_capacity(q)),
        gaussian_marginals: false,
    };
    for j in 0..q {
        let columns = draws.chains_of(j);
        let chains: Vec<&[f64]> = columns.iter().map(|c| c.as_slice()).collect();
        posterior.push_estimated(&chains);
    }
    posterior
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::normal_quantile;
    use crate::draws::ChainDraws;
    use crate::run::check::{check, z_threshold};

    /// `chains` chains of `length` draws of two quantities, `a` and `b`: each a
    /// deterministic, well-mixed N(0, 1) sequence (inverse CDF of a hashed
    /// low-discrepancy sequence), `b` shifted by `b_shift` in the last chain.
    fn run_of(chains: usize, length: usize, b_shift: f64) -> RunDraws {
        let normal = |k: usize| {
            let u = (((k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 + 0.5)
                / (1u64 << 53) as f64;
            normal_quantile(u)
        };
        let chains = (0..chains)
            .map(|c| {
                let shift = if c + 1 == chains { b_shift } else { 0.0 };
                let mut values = Vec::with_capacity(2 * length);
                for i in 0..length {
                    let k = 2 * (c * length + i);
                    values.push(normal(k));
                    values.push(normal(k + 1) + shift);
                }
                ChainDraws {
                    lp: vec![0.0; length],
                    values,
                    ..ChainDraws::default()
                }
            })
            .collect();
        RunDraws {
            names: vec!["a".into(), "b".into()],
            chains,
            ..RunDraws::default()
        }
    }

    /// Constructed runs: well mixed and long enough passes; a chain apart in
    /// `b` (R̂ ≈ 1.5), a frozen chain and runs too short for 1000 effective
    /// draws fail, naming exactly the quantities that failed and why; only
    /// the R̂ failures and those short of 400 effective draws are unusable.
    #[test]
    fn mixing_names_the_quantities_that_did_not_mix() {
        let good = ReferenceMixing::of(&run_of(4, 1000, 0.0));
        assert!(good.mixed() && good.usable(), "{}", good.summary());
        assert!(
            good.summary()
                .starts_with("reference_mixed: true (max R-hat")
        );

        let apart = ReferenceMixing::of(&run_of(4, 1000, 3.0));
        assert!(!apart.mixed() && !apart.usable());
        let (name, rhat) = apart.max_rhat().unwrap();
        assert!(name == "b" && rhat > 1.2, "{}", apart.summary());
        let problems = apart.problems();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("b: R-hat"), "{problems:?}");
        assert!(
            apart.summary().starts_with("reference_mixed: false")
                && apart.summary().contains("b: R-hat"),
            "{}",
            apart.summary()
        );

        // The sequences are slightly antithetic (bulk ESS ≈ 1.25 N: 1003 for
        // 4 × 200 draws, 4951 for 4 × 1000). 4 × 150: ≈ 750, short of 1000 in
        // both quantities but usable; 4 × 60: ≈ 300, not usable.
        let short = ReferenceMixing::of(&run_of(4, 150, 0.0));
        let problems = short.problems();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems.iter().all(|p| p.contains("bulk ESS")),
            "{problems:?}"
        );
        assert!(!short.mixed() && short.usable(), "{}", short.summary());
        let shorter = ReferenceMixing::of(&run_of(4, 60, 0.0));
        assert!(
            !shorter.mixed() && !shorter.usable(),
            "{}",
            shorter.summary()
        );

        // A frozen chain: R̂ undefined, which is not mixing.
        let mut frozen = run_of(4, 1000, 0.0);
        frozen.chains[0].values.iter_mut().for_each(|v| *v = 0.5);
        let frozen = ReferenceMixing::of(&frozen);
        assert!(!frozen.usable(), "{}", frozen.summary());
        assert!(
            ReferenceMixing::of(&RunDraws::default())
                .max_rhat()
                .is_none()
        );
    }

    /// A check against a reference whose run did not mix (R̂ ≈ 1.5) fails,
    /// says `reference_mixed: false` and names the quantity, even when every
    /// z-score passes; the same check with a reference that mixed passes,
    /// and with one that is only short of 1000 effective draws it passes
    /// with a warning line.
    #[test]
    fn a_reference_that_did_not_mix_fails_the_check() {
        let draws = run_of(4, 1000, 0.0);
        let known = KnownPosterior {
            source: "constructed".into(),
            mean: vec![0.0, 0.0],
            sd: vec![1.0, 1.0],
            mean_mcse: Some(vec![0.01, 0.01]),
            sd_mcse: Some(vec![0.01, 0.01]),
            gaussian_marginals: false,
        };
        let mut report = check(&draws, &known);
        assert!(report.passed(), "{}", report.table());
        report.reference_mixing = Some(ReferenceMixing::of(&run_of(4, 1000, 0.0)));
        assert!(report.passed(), "{}", report.table());
        assert!(report.table().contains("reference_mixed: true"));

        report.reference_mixing = Some(ReferenceMixing::of(&run_of(4, 1000, 3.0)));
        assert!(!report.passed());
        assert!(!report.reference_mixed());
        let table = report.table();
        assert!(
            table.contains("reference_mixed: false") && table.contains("b: R-hat"),
            "{table}"
        );
        assert!(
            table.contains("FAIL: the reference run did not mix"),
            "{table}"
        );
        assert!(!table.contains("PASS"), "{table}");

        report.reference_mixing = Some(ReferenceMixing::of(&run_of(4, 150, 0.0)));
        assert!(report.passed(), "{}", report.table());
        let table = report.table();
        assert!(
            table.contains("reference_mixed: false")
                && table.contains("warning: the reference run has fewer than 1000")
                && table.contains("PASS"),
            "{table}"
        );
    }

    /// The real reference run, too short to mix (4 × 20 NUTS draws of a
    /// standard normal: bulk ESS well below 400 even for NUTS's antithetic draws), says so; and the run it makes is
    /// NUTS with the diagonal metric on the model itself.
    #[test]
    fn a_short_reference_run_is_reported_as_not_mixed() {
        struct StandardNormal;
        impl Model for StandardNormal {
            fn name(&self) -> String {
                "normal".into()
            }
            fn dimension(&self) -> usize {
                2
            }
            fn potential_and_gradient(&self, x: &[f64], g: &mut [f64]) -> f64 {
                g.copy_from_slice(x);
                0.5 * x.iter().map(|v| v * v).sum::<f64>()
            }
        }
        let settings = ReferenceSettings {
            warmup: 100,
            draws: 20,
            ..ReferenceSettings::default()
        };
        let made = reference_run(&StandardNormal, &settings, &Progress::hidden()).unwrap();
        assert!(
            made.posterior
                .source
                .starts_with("long NUTS run (diagonal metric) (4 chains x 20 draws"),
            "{}",
            made.posterior.source
        );
        assert!(!made.mixing.usable(), "{}", made.mixing.summary());
        assert_eq!(made.mixing.problems().len(), 2, "{}", made.mixing.summary());
        assert_eq!(made.mixing.names, ["x[1]", "x[2]"]);
    }

    /// `stochastic-volatility`'s reference (NUTS, diagonal metric, on the
    /// non-centred twin) against a 4 × (1000 + 5000)-draw nutpie low-rank
    /// run of the non-centred posterior (compare/nutpie/reference_check.py,
    /// seed 20261129; max R̂ 1.001, min bulk ESS 7931). Its means and sds of
    /// μ, φ, σ, with MCSEs from the same draws (ArviZ 0.23.4: `mcse` of the
    /// mean; for the sd, the delta method, mcse of the mean of (x − x̄)²
    /// over 2 sd). z = (reference − nutpie)/√(MCSE² + MCSE²), as in `qnmc
    /// check`, against the check's own threshold for these 6 z-scores
    /// (Bonferroni at family-wise level 0.001: 3.94). The identity-HMC
    /// reference on the centred model missed φ by z −4.3 (mean 0.211) and
    /// +4.7 (sd 0.386). The run must also have mixed. (About 1 s in the
    /// test profile.)
    #[test]
    fn stochastic_volatility_reference_agrees_with_a_long_nutpie_run() {
        use crate::targets::StochasticVolatility;
        // (quantity, mean, its MCSE, sd, its MCSE) of the nutpie run.
        let nutpie = [
            ("mu", -0.9515, 0.0011, 0.1541, 0.0016),
            ("phi", 0.0499, 0.0041, 0.4884, 0.0024),
            ("sigma", 0.1825, 0.0015, 0.1457, 0.0012),
        ];
        let model = StochasticVolatility::new();
        let made =
            reference_run(&model, &ReferenceSettings::default(), &Progress::hidden()).unwrap();
        assert!(made.mixing.mixed(), "{}", made.mixing.summary());
        assert!(
            made.posterior.source.starts_with(
                "long NUTS run (diagonal metric) of stochastic-volatility-noncentered"
            ),
            "{}",
            made.posterior.source
        );
        let threshold = z_threshold(2 * nutpie.len());
        let p = &made.posterior;
        let (mean_mcse, sd_mcse) = (p.mean_mcse.as_ref().unwrap(), p.sd_mcse.as_ref().unwrap());
        for (j, (name, mean, mean_se, sd, sd_se)) in nutpie.into_iter().enumerate() {
            assert_eq!(made.mixing.names[j], name);
            let z_mean = (p.mean[j] - mean) / mean_mcse[j].hypot(mean_se);
            let z_sd = (p.sd[j] - sd) / sd_mcse[j].hypot(sd_se);
            eprintln!(
                "{name}: reference mean {:.4} ({:.4}), sd {:.4} ({:.4}); nutpie {mean}, {sd}; \
                 z {z_mean:+.2}, {z_sd:+.2}",
                p.mean[j], mean_mcse[j], p.sd[j], sd_mcse[j]
            );
            assert!(
                z_mean.abs() < threshold && z_sd.abs() < threshold,
                "{name}: z {z_mean:+.2} (mean), {z_sd:+.2} (sd), threshold {threshold:.2}"
            );
        }
        eprintln!("{}", made.mixing.summary());
    }
}
