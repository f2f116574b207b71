//! The run's summary as pretty JSON, for scripts and for comparing runs.

use serde_json::{Map, Value, json};

use super::run_summary::{ChainSummary, QuantitySummary, RunSummary, summarize_run};
use crate::diagnostics::Summary;
use crate::draws::RunDraws;
use crate::model::KnownPosterior;

/// The summary of `run` as pretty-printed JSON:
///
/// * `target`, `sampler`, `settings` (an object of the run's `key = value`
///   pairs), `chains`, `draws_per_chain`;
/// * `quantities`: per reported quantity `name`, `mean`, `sd`, `q5`, `q50`,
///   `q95`, `ess_bulk`, `ess_tail`, `rhat`, `mcse_mean`, `mcse_sd`, and when
///   `known` gives its moments `true_mean`, `true_sd`, `z_mean`, `z_sd`
///   (estimate minus truth over the combined Monte Carlo standard error);
/// * `lp__`: the same statistics for the log density;
/// * `known_posterior`: where the truth comes from (or `null`);
/// * `sampler_stats`: per chain (`per_chain`) and for the run (`run`) the
///   acceptance mean, divergences, step size, gradient evaluations, warm-up
///   and sampling seconds, and the bulk ESS of the slowest quantity per
///   second (warm-up + sampling) and per gradient evaluation;
/// * `diagnostics`: whether the run is `usable` (else `unusable_reasons`),
///   its `warnings` and `notes`, E-BFMI per chain and maximum-tree-depth
///   hits (NUTS), and the thresholds used (see [`super::RunHealth`]).
///
/// A run's output folder holds this with one more key, `charts`: the chart
/// files in the folder ([`write_run_files`](super::write_run_files), `qnmc
/// plot`).
///
/// Non-finite numbers (a NaN ESS of a constant chain, say) are written as
/// `null`, so the output is always valid JSON.
///
/// ```
/// use qnmc_host::draws::{ChainDraws, RunDraws};
/// use qnmc_host::output::summary_json;
///
/// let chain = |seed: u64| ChainDraws {
///     chain_id: seed as usize,
///     lp: vec![0.0; 4],
///     values: vec![1.0, 2.0, 3.0, 4.0],
///     ..ChainDraws::default()
/// };
/// let run = RunDraws {
///     target: "demo".into(),
///     names: vec!["x".into()],
///     chains: vec![chain(1), chain(2)],
///     ..RunDraws::default()
/// };
/// let json: serde_json::Value = serde_json::from_str(&summary_json(&run, None)).unwrap();
/// assert_eq!(json["quantities"][0]["mean"], 2.5);
/// // Four draws per chain are too few for an ESS: null, not NaN.
/// assert!(json["quantities"][0]["ess_bulk"].is_null());
/// ```
pub fn summary_json(run: &RunDraws, known: Option<&KnownPosterior>) -> String {
    summary_json_with(run, known, &summarize_run(run, known))
}

/// [`summary_json`] from the run's already computed `summary`, which must be
/// [`summarize_run`]`(run, known)`: the same text without computing the
/// diagnostics again.
pub fn summary_json_with(
    run: &RunDraws,
    known: Option<&KnownPosterior>,
    summary: &RunSummary,
) -> String {
    pretty(&document(run, known, summary))
}

/// [`summary_json_with`] as a run's output folder holds it: with `charts`,
/// the chart files the folder holds (empty when none were drawn; `qnmc
/// plot` adds those it draws, [`with_charts`]).
pub(crate) fn summary_json_in_folder(
    run: &RunDraws,
    known: Option<&KnownPosterior>,
    summary: &RunSummary,
    charts: &[String],
) -> String {
    let mut document = document(run, known, summary);
    if let Value::Object(map) = &mut document {
        map.insert("charts".into(), Value::from(charts.to_vec()));
    }
    pretty(&document)
}

/// The text of a folder's `summary.json` with `added` chart files appended
/// to its `charts` (each once); everything else is kept as it was.
pub(crate) fn with_charts(text: &str, added: &[String]) -> Result<String, String> {
    let mut document: Value =
        serde_json::from_str(text).map_err(|e| format!("its summary.json is not JSON: {e}"))?;
    let Value::Object(map) = &mut document else {
        return Err("its summary.json is not a JSON object".into());
    };
    let mut charts: Vec<String> = map
        .get("charts")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    for name in added {
        if !charts.contains(name) {
            charts.push(name.clone());
        }
    }
    map.insert("charts".into(), Value::from(charts));
    Ok(pretty(&document))
}

fn pretty(document: &Value) -> String {
    // Serialising a `Value` built from strings and numbers cannot fail.
    serde_json::to_string_pretty(document).unwrap_or_default() + "\n"
}

fn document(run: &RunDraws, known: Option<&KnownPosterior>, summary: &RunSummary) -> Value {
    let health = super::run_health::assess(run, summary);
    let settings: Map<String, Value> = run
        .settings
        .iter()
        .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
        .collect();
    json!({
        "target": run.target,
        "sampler": run.sampler,
        "settings": settings,
        "chains": run.chains.len(),
        "draws_per_chain": run.chains.iter().map(|c| c.len()).collect::<Vec<_>>(),
        "known_posterior": known.map(|k| json!({
            "source": k.source,
            "gaussian_marginals": k.gaussian_marginals,
        })),
        "lp__": statistics(&summary.lp),
        "quantities": summary.quantities.iter().map(quantity).collect::<Vec<_>>(),
        "sampler_stats": {
            "per_chain": summary.chains.iter().map(chain).collect::<Vec<_>>(),
            "run": {
                "acceptance_mean": number(crate::diagnostics::mean(
                    &run.chains.iter().flat_map(|c| c.accept_stat.iter().copied()).collect::<Vec<_>>(),
                )),
                "divergences": summary.chains.iter().map(|c| c.divergences).sum::<usize>(),
                "gradient_evaluations": summary.gradient_evaluations,
                "seconds": number(summary.seconds),
                "slowest_quantity": summary.slowest.map(|j| run.names[j].clone()),
                "min_ess_bulk": number(summary.min_ess_bulk),
                "ess_per_second": number(summary.ess_per_second),
                "ess_per_gradient": number(summary.ess_per_gradient),
            },
        },
        "diagnostics": health.json(),
    })
}

/// A JSON number, or `null` for NaN and ±∞ (which JSON cannot express).
fn number(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

fn statistics(s: &Summary) -> Map<String, Value> {
    let mut m = Map::new();
    for (key, value) in [
        ("mean", s.mean),
        ("sd", s.sd),
        ("q5", s.q5),
        ("q50", s.q50),
        ("q95", s.q95),
        ("ess_bulk", s.ess_bulk),
        ("ess_tail", s.ess_tail),
        ("rhat", s.rhat),
        ("mcse_mean", s.mcse_mean),
        ("mcse_sd", s.mcse_sd),
    ] {
        m.insert(key.into(), number(value));
    }
    m
}

fn quantity(q: &QuantitySummary) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::from(q.name.as_str()));
    m.extend(statistics(&q.stats));
    if let Some(t) = &q.truth {
        m.insert("true_mean".into(), number(t.mean));
        m.insert("true_sd".into(), number(t.sd));
        m.insert("z_mean".into(), number(t.z_mean));
        m.insert("z_sd".into(), number(t.z_sd));
    }
    Value::Object(m)
}

fn chain(c: &ChainSummary) -> Value {
    json!({
        "chain_id": c.chain_id,
        "seed": c.seed,
        "draws": c.draws,
        "acceptance_mean": number(c.acceptance_mean),
        "divergences": c.divergences,
        "step_size_mean": number(c.step_size_mean),
        "gradient_evaluations": c.gradient_evaluations,
        "warmup_draws": c.warmup_draws,
        "warmup_seconds": number(c.warmup_seconds),
        "sampling_seconds": number(c.sampling_seconds),
        "lp_seconds": number(c.lp_seconds),
        "min_ess_bulk": number(c.min_ess_bulk),
        "ess_per_second": number(c.ess_per_second),
        "ess_per_gradient": number(c.ess_per_gradient),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::test_runs::{gaussian_run, known_standard_normal};

    #[test]
    fn nan_and_infinity_become_null_and_the_json_parses() {
        let mut run = gaussian_run(2, 200, 2, 1);
        // A constant quantity has NaN ESS and R̂; an infinite draw makes its
        // mean infinite.
        for c in &mut run.chains {
            for i in 0..c.len() {
                c.values[2 * i + 1] = 7.0;
            }
        }
        run.chains[1].values[0] = f64::INFINITY;
        run.chains[0].warmup_seconds = f64::NAN;
        let text = summary_json(&run, None);
        assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
        let json: Value = serde_json::from_str(&text).unwrap();
        let q = &json["quantities"];
        assert!(q[0]["mean"].is_null());
        assert!(q[1]["ess_bulk"].is_null() && q[1]["rhat"].is_null());
        assert_eq!(q[1]["mean"], 7.0);
        assert!(json["sampler_stats"]["per_chain"][0]["warmup_seconds"].is_null());
    }

    #[test]
    fn fields_agree_with_the_diagnostics_and_the_truth() {
        let run = gaussian_run(4, 500, 3, 9);
        let known = known_standard_normal(3);
        let json: Value = serde_json::from_str(&summary_json(&run, Some(&known))).unwrap();
        assert_eq!(json["target"], "test-gaussian");
        assert_eq!(json["settings"]["warmup"], "0");
        assert_eq!(json["chains"], 4);
        assert_eq!(json["known_posterior"]["source"], "analytic");
        for j in 0..3 {
            let chains = run.chains_of(j);
            let slices: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
            let s = crate::diagnostics::summarize(&slices);
            let q = &json["quantities"][j];
            assert_eq!(q["name"], run.names[j]);
            assert_eq!(q["ess_bulk"].as_f64().unwrap(), s.ess_bulk);
            assert_eq!(q["mcse_mean"].as_f64().unwrap(), s.mcse_mean);
            assert_eq!(q["true_sd"], 1.0);
            let z = q["z_mean"].as_f64().unwrap();
            assert_eq!(z, s.mean / s.mcse_mean);
            // Independent N(0, 1) draws: |z| > 4.5 has probability < 1e-5.
            assert!(z.abs() < 4.5, "{z}");
        }
        let per_chain = &json["sampler_stats"]["per_chain"];
        assert_eq!(per_chain[2]["chain_id"], 3);
        assert_eq!(per_chain[0]["divergences"], 1);
        assert_eq!(per_chain[0]["gradient_evaluations"], 5000);
        let total = &json["sampler_stats"]["run"];
        assert_eq!(total["gradient_evaluations"], 20000);
        let min_ess = total["min_ess_bulk"].as_f64().unwrap();
        assert!((total["ess_per_gradient"].as_f64().unwrap() - min_ess / 20000.0).abs() < 1e-15);
        assert!(total["slowest_quantity"].is_string());
    }
}
