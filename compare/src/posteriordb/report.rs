//! The posteriordb benchmark's tables: one row per posterior and sampler
//! (medians over seeds), the geometric means of qnmc ÷ peer ratios with
//! intervals over (posterior, seed) pairs, and every failure.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::ReferenceCheck;
use crate::metrics::Metrics;

/// One run: a posterior, a sampler, a seed.
pub struct PdbRow {
    pub posterior: String,
    pub dimension: usize,
    pub sampler: String,
    pub seed: u64,
    /// The run's metrics and reference check, or why it did not run.
    pub result: Result<(Metrics, ReferenceCheck), String>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| !x.is_nan());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// The geometric mean of `ratios` and the interval exp(mean ± 2 SE) of
/// their logs (`None` for the interval with fewer than 2).
pub fn geometric_mean(ratios: &[f64]) -> (f64, Option<(f64, f64)>) {
    let logs: Vec<f64> = ratios
        .iter()
        .filter(|r| r.is_finite() && **r > 0.0)
        .map(|r| r.ln())
        .collect();
    let n = logs.len() as f64;
    if logs.is_empty() {
        return (f64::NAN, None);
    }
    let m = logs.iter().sum::<f64>() / n;
    if logs.len() < 2 {
        return (m.exp(), None);
    }
    let var = logs.iter().map(|l| (l - m).powi(2)).sum::<f64>() / (n - 1.0);
    let se = (var / n).sqrt();
    (m.exp(), Some(((m - 2.0 * se).exp(), (m + 2.0 * se).exp())))
}

/// Whether a run is healthy and matches the reference.
fn passes(m: &Metrics, c: &ReferenceCheck) -> bool {
    c.passed && m.flag().is_empty()
}

/// Why a run's reference check failed.
fn reference_failure(c: &ReferenceCheck) -> String {
    if c.worst_z > c.bound {
        format!(
            "z-test failed: |z| {:.1} > {:.2} on {}",
            c.worst_z, c.bound, c.worst
        )
    } else {
        format!(
            "z-test failed: R̂ ≥ 1.05 (worst |z| {:.1} ≤ {:.2}, on {})",
            c.worst_z, c.bound, c.worst
        )
    }
}

/// The whole report in Markdown. `samplers` in table order; `qnmc` the
/// numerator keys and `peers` the denominator keys of the ratio table.
pub fn markdown(rows: &[PdbRow], samplers: &[String], qnmc: &[&str], peers: &[&str]) -> String {
    let mut out = String::new();
    let mut posteriors: Vec<(String, usize)> = Vec::new();
    for r in rows {
        if !posteriors.iter().any(|(p, _)| *p == r.posterior) {
            posteriors.push((r.posterior.clone(), r.dimension));
        }
    }
    let _ = writeln!(
        out,
        "| posterior | D | sampler | z-tests passed | healthy | R̂ max | bulk ESS min | tail ESS min | ESS/1k grad kept | ESS/1k grad all | ESS/s | divergent | warm-up grads |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (posterior, dimension) in &posteriors {
        for sampler in samplers {
            let runs: Vec<&PdbRow> = rows
                .iter()
                .filter(|r| r.posterior == *posterior && r.sampler == *sampler)
                .collect();
            if runs.is_empty() {
                continue;
            }
            let ok: Vec<&(Metrics, ReferenceCheck)> =
                runs.iter().filter_map(|r| r.result.as_ref().ok()).collect();
            if ok.is_empty() {
                let why = runs[0].result.as_ref().err().cloned().unwrap_or_default();
                let _ = writeln!(
                    out,
                    "| {posterior} | {dimension} | {sampler} | did not run: {why} | | | | | | | | | |"
                );
                continue;
            }
            let passed = ok.iter().filter(|(_, c)| c.passed).count();
            let healthy = ok.iter().filter(|(m, _)| m.flag().is_empty()).count();
            let med = |f: &dyn Fn(&Metrics) -> f64| median(ok.iter().map(|(m, _)| f(m)).collect());
            let n = runs.len();
            let rhat = ok.iter().map(|(m, _)| m.rhat_max).fold(f64::NAN, f64::max);
            let divergent: u64 = ok.iter().map(|(m, _)| m.divergences_sampling).sum();
            let _ = writeln!(
                out,
                "| {posterior} | {dimension} | {sampler} | {passed}/{n} | {healthy}/{n} | {rhat:.3} | {:.0} | {:.0} | {:.1} | {:.1} | {:.0} | {divergent} | {:.0} |",
                med(&|m| m.ess_bulk_min),
                med(&|m| m.ess_tail_min),
                med(&|m| m.per_1k_kept()),
                med(&|m| m.per_1k_all()),
                med(&|m| m.per_second()),
                med(&|m| m.gradients_tuning as f64 / m.chains as f64),
            );
        }
    }
    let _ = writeln!(
        out,
        "\nz-tests passed: seeds whose draws (constrained scale) pass the z-tests against the reference \
         (mean and sd of every reference quantity, both MCSEs, Bonferroni at family-wise level \
         0.001, R̂ < 1.05), as `qnmc check` decides. healthy: seeds without a flag (R̂ ≤ 1.01, bulk \
         and tail ESS ≥ 100 per chain, no divergence after tuning). Other columns: medians over seeds \
         (R̂: the worst; divergent: the sum); ESS is the minimum over the reference quantities (constrained scale); \
         warm-up gradients per chain.\n"
    );

    let _ = writeln!(
        out,
        "| ratio (geometric mean over posterior × seed, interval exp(mean ± 2 SE)) | pairs | bulk ESS/grad kept | bulk ESS/grad incl. warm-up | bulk ESS/s |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for q in qnmc {
        for p in peers {
            let mut ratios: [Vec<f64>; 3] = [Vec::new(), Vec::new(), Vec::new()];
            for a in rows.iter().filter(|r| r.sampler == *q) {
                let Some(b) = rows
                    .iter()
                    .find(|b| b.sampler == *p && b.posterior == a.posterior && b.seed == a.seed)
                else {
                    continue;
                };
                if let (Ok((ma, _)), Ok((mb, _))) = (&a.result, &b.result) {
                    let (ea, eb) = (ma.efficiencies(), mb.efficiencies());
                    for k in 0..3 {
                        ratios[k].push(ea[k] / eb[k]);
                    }
                }
            }
            let cell = |v: &[f64]| {
                let (g, iv) = geometric_mean(v);
                if g.is_nan() {
                    return "—".to_string();
                }
                match iv {
                    Some((lo, hi)) => format!("{g:.2} [{lo:.2}, {hi:.2}]"),
                    None => format!("{g:.2}"),
                }
            };
            let _ = writeln!(
                out,
                "| {q} ÷ {p} | {} | {} | {} | {} |",
                ratios[0].len(),
                cell(&ratios[0]),
                cell(&ratios[1]),
                cell(&ratios[2])
            );
        }
    }

    let _ = writeln!(
        out,
        "\nFailures (every run that failed the z-tests, was flagged, or did not run, with why):\n"
    );
    let mut any = false;
    for r in rows {
        let why = match &r.result {
            Err(e) => Some(format!("did not run: {e}")),
            Ok((m, c)) if !passes(m, c) => {
                let mut parts = m.problems();
                if !c.passed {
                    parts.insert(0, reference_failure(c));
                }
                Some(parts.join("; "))
            }
            Ok(_) => None,
        };
        if let Some(why) = why {
            any = true;
            let _ = writeln!(
                out,
                "- {} / {} / seed {}: {why}",
                r.posterior, r.sampler, r.seed
            );
        }
    }
    if !any {
        let _ = writeln!(out, "- none");
    }
    out
}

/// Every number as JSON.
pub fn json(rows: &[PdbRow]) -> Value {
    Value::Array(
        rows.iter()
            .map(|r| {
                let mut v = json!({
                    "posterior": r.posterior,
                    "dimension": r.dimension,
                    "sampler": r.sampler,
                    "seed": r.seed,
                });
                match &r.result {
                    Err(e) => v["error"] = e.clone().into(),
                    Ok((m, c)) => {
                        v["passed"] = passes(m, c).into();
                        v["reference_passed"] = c.passed.into();
                        v["worst_z"] = c.worst_z.into();
                        v["worst"] = c.worst.clone().into();
                        v["flags"] = m.flag().into();
                        v["rhat_max"] = m.rhat_max.into();
                        v["ess_bulk_min"] = m.ess_bulk_min.into();
                        v["ess_tail_min"] = m.ess_tail_min.into();
                        v["gradients_tuning"] = m.gradients_tuning.into();
                        v["gradients_sampling"] = m.gradients_sampling.into();
                        v["divergences_sampling"] = m.divergences_sampling.into();
                        v["seconds_tuning"] = m.seconds_tuning.into();
                        v["seconds_sampling"] = m.seconds_sampling.into();
                    }
                }
                v
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometric_mean_and_interval() {
        let (g, iv) = geometric_mean(&[2.0, 8.0]);
        assert!((g - 4.0).abs() < 1e-12);
        let (lo, hi) = iv.unwrap();
        // logs ln 2, ln 8: mean ln 4, sd ln 4 · √2 / … ; SE = |ln 8 − ln 2| / 2.
        let se = (8f64.ln() - 2f64.ln()) / 2.0;
        assert!((lo - (4f64.ln() - 2.0 * se).exp()).abs() < 1e-12);
        assert!((hi - (4f64.ln() + 2.0 * se).exp()).abs() < 1e-12);
        assert!(geometric_mean(&[]).0.is_nan());
        assert_eq!(geometric_mean(&[3.0]).1, None);
    }

    #[test]
    fn median_of_odd_even_and_nan() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(vec![f64::NAN]).is_nan());
    }
}
