//! The Markdown table on stdout and the JSON file.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::metrics::{ESS_PER_CHAIN_LIMIT, Metrics, RHAT_LIMIT};
use crate::nutsrs::NutsRsMetric;
use crate::regression::YearsRegression;
use crate::{Config, Engine, NUTS_RS_VERSION};

/// One run: a target, a seed, a configuration and what came out.
pub struct Row {
    pub target: String,
    pub dimension: usize,
    pub seed: u64,
    pub config: Config,
    pub result: Result<Metrics, String>,
}

/// The protocol, for the headers.
pub struct Settings {
    pub chains: usize,
    pub warmup: usize,
    pub draws: usize,
    pub seeds: Vec<u64>,
    pub quick: bool,
    pub per_chain: bool,
    pub seconds: f64,
}

fn is_ref(row: &Row, metric: NutsRsMetric) -> bool {
    matches!(row.config.engine, Engine::NutsRs(m) if m == metric)
}

/// The metrics of the nuts-rs `metric` run of the same target and seed.
fn reference<'a>(rows: &'a [Row], row: &Row, metric: NutsRsMetric) -> Option<&'a Metrics> {
    rows.iter()
        .find(|r| r.target == row.target && r.seed == row.seed && is_ref(r, metric))
        .and_then(|r| r.result.as_ref().ok())
}

/// qnmc ÷ reference for the three efficiencies, and whether either run is flagged.
fn ratios(m: &Metrics, reference: &Metrics) -> ([f64; 3], bool) {
    let (a, b) = (m.efficiencies(), reference.efficiencies());
    let flagged = !m.flag().is_empty() || !reference.flag().is_empty();
    ([a[0] / b[0], a[1] / b[1], a[2] / b[2]], flagged)
}

fn ratio_cell(r: Option<([f64; 3], bool)>) -> String {
    match r {
        None => "—".into(),
        Some((r, flagged)) => format!(
            "{:.2} / {:.2} / {:.2}{}",
            r[0],
            r[1],
            r[2],
            if flagged { " !!" } else { "" }
        ),
    }
}

fn geometric_mean(values: &[f64]) -> f64 {
    (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp()
}

/// The first row of each (target, configuration), in table order: one line
/// per pair in the summary tables.
fn first_of_each_configuration(rows: &[Row]) -> Vec<&Row> {
    let mut firsts: Vec<&Row> = Vec::new();
    for row in rows {
        if !firsts
            .iter()
            .any(|r| r.target == row.target && r.config.key == row.config.key)
        {
            firsts.push(row);
        }
    }
    firsts
}

/// Geometric mean of `log_ratios` exponentiated, with the interval
/// exp(mean ± 2 standard errors) of the mean log ratio (seeds are independent
/// runs, so the standard error is the sd of the log ratios over √n).
fn mean_with_interval(log_ratios: &[f64]) -> (f64, f64, f64) {
    let n = log_ratios.len() as f64;
    let mean = log_ratios.iter().sum::<f64>() / n;
    let var = log_ratios.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let half = 2.0 * (var / n).sqrt();
    (mean.exp(), (mean - half).exp(), (mean + half).exp())
}

/// Tail ESS_min of every qnmc configuration against the same seed's nuts-rs
/// runs: the absolute tail ESS (same number of kept draws on both sides) and
/// the tail ESS per 1000 gradients including tuning, as geometric means over
/// seeds of the paired ratios with ±2 standard errors. A ratio whose interval
/// lies wholly below 1 is marked `LOWER`.
fn tail_summary(rows: &[Row]) -> String {
    let mut o = String::from(
        "\nTail ESS_min, qnmc ÷ nuts-rs paired by seed: geometric mean over seeds [exp(mean ± 2 SE) of the log ratios], \
         absolute / per 1000 gradients including tuning. `LOWER`: the whole interval is below 1.\n\n\
         | target | sampler | seeds | ÷ nuts-rs low-rank | ÷ nuts-rs diag |\n|---|---|---:|---|---|\n",
    );
    let tail_all =
        |m: &Metrics| 1000.0 * m.ess_tail_min / (m.gradients_tuning + m.gradients_sampling) as f64;
    for row in first_of_each_configuration(rows) {
        if matches!(row.config.engine, Engine::NutsRs(_)) {
            continue;
        }
        let cell = |metric| {
            let mut absolute = Vec::new();
            let mut per_gradient = Vec::new();
            for r in rows
                .iter()
                .filter(|r| r.target == row.target && r.config.key == row.config.key)
            {
                let (Ok(m), Some(reference)) = (&r.result, reference(rows, r, metric)) else {
                    continue;
                };
                absolute.push((m.ess_tail_min / reference.ess_tail_min).ln());
                per_gradient.push((tail_all(m) / tail_all(reference)).ln());
            }
            if absolute.len() < 3 || absolute.iter().chain(&per_gradient).any(|l| !l.is_finite()) {
                return ("—".to_string(), absolute.len());
            }
            let show = |l: &[f64]| {
                let (mean, lo, hi) = mean_with_interval(l);
                format!(
                    "{mean:.2} [{lo:.2}, {hi:.2}]{}",
                    if hi < 1.0 { " LOWER" } else { "" }
                )
            };
            (
                format!("{} / {}", show(&absolute), show(&per_gradient)),
                absolute.len(),
            )
        };
        let (low_rank, n) = cell(NutsRsMetric::LowRank);
        let (diag, _) = cell(NutsRsMetric::Diag);
        let _ = writeln!(
            o,
            "| {} | {} | {n} | {low_rank} | {diag} |",
            row.target, row.config.label
        );
    }
    o
}

/// Below this per-chain tail ESS (of 1000 draws: a fifth) a chain counts as
/// poor in [`per_chain_summary`].
const POOR_CHAIN_TAIL_ESS: f64 = 200.0;

/// Every chain alone, pooled over seeds per target and configuration: the
/// geometric means of its tail and bulk ESS on its run's slowest-tail
/// coordinate, how many chains fall below [`POOR_CHAIN_TAIL_ESS`], and the
/// mean and spread of the chains' step sizes.
fn per_chain_summary(rows: &[Row]) -> String {
    let mut o = String::from(
        "\nEach chain alone, on its run's slowest-tail coordinate, pooled over seeds: geometric mean \
         of the tail / bulk ESS, chains with a tail ESS below 200, and the chains' step sizes (mean ± sd).\n\n\
         | target | sampler | chains | tail ESS | bulk ESS | tail ESS < 200 | ε |\n|---|---|---:|---:|---:|---:|---|\n",
    );
    for row in first_of_each_configuration(rows) {
        let chains: Vec<_> = rows
            .iter()
            .filter(|r| r.target == row.target && r.config.key == row.config.key)
            .filter_map(|r| r.result.as_ref().ok())
            .flat_map(|m| m.per_chain.iter().copied())
            .collect();
        if chains.len() < 2 {
            continue;
        }
        let n = chains.len() as f64;
        let tail = geometric_mean(&chains.iter().map(|c| c.ess_tail).collect::<Vec<_>>());
        let bulk = geometric_mean(&chains.iter().map(|c| c.ess_bulk).collect::<Vec<_>>());
        let poor = chains
            .iter()
            .filter(|c| c.ess_tail.is_nan() || c.ess_tail < POOR_CHAIN_TAIL_ESS)
            .count();
        let mean = chains.iter().map(|c| c.step_size_mean).sum::<f64>() / n;
        let sd = (chains
            .iter()
            .map(|c| (c.step_size_mean - mean).powi(2))
            .sum::<f64>()
            / (n - 1.0))
            .sqrt();
        let _ = writeln!(
            o,
            "| {} | {} | {} | {tail:.0} | {bulk:.0} | {poor} | {mean:.3} ± {sd:.3} |",
            row.target,
            row.config.label,
            chains.len()
        );
    }
    o
}

/// The Markdown report.
pub fn markdown(rows: &[Row], s: &Settings) -> String {
    let mut o = String::new();
    let seeds: Vec<String> = s.seeds.iter().map(u64::to_string).collect();
    let _ = writeln!(
        o,
        "\n## qnmc vs nuts-rs {NUTS_RS_VERSION}: {} chains × ({} tuning + {} kept draws), seed{} {}{}\n",
        s.chains,
        s.warmup,
        s.draws,
        if seeds.len() > 1 { "s" } else { "" },
        seeds.join(", "),
        if s.quick { " (--quick smoke run)" } else { "" }
    );
    let _ = writeln!(
        o,
        "Every parameter, on the unconstrained scale. ESS = minimum over parameters of Stan's bulk / tail ESS; \
         R̂ = maximum rank-normalised split R̂; div = divergent transitions after tuning. \
         Efficiency uses the bulk ESS_min: per 1000 gradients of the kept draws (kept), per 1000 gradients \
         including tuning (all), per second of wall time including tuning (chains run one after another on \
         one thread; each chain's own clock). Ratios are qnmc ÷ nuts-rs (> 1: better than nuts-rs) as \
         kept / all / per second. `!!` marks a run (or a ratio involving a run) with R̂ > {RHAT_LIMIT} (R), \
         bulk or tail ESS < {ESS_PER_CHAIN_LIMIT} per chain (E, T) or divergences (D): its numbers are not to be trusted.\n"
    );
    o.push_str(
        "| target | sampler | seed | ! | ESS bulk | ESS tail | R̂ max | div | ε kept | grad/chain tune | grad/chain kept | ESS/1k grad kept | ESS/1k grad all | ESS/s | ÷ nuts-rs low-rank | ÷ nuts-rs diag |\n",
    );
    o.push_str("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
    for row in rows {
        let target = format!("{} (D={})", row.target, row.dimension);
        match &row.result {
            Err(e) => {
                let _ = writeln!(
                    o,
                    "| {target} | {} | {} | !!FAILED | {} | | | | | | | | | | — | — |",
                    row.config.label,
                    row.seed,
                    e.replace('|', "/")
                );
            }
            Ok(m) => {
                let per_chain = |g: u64| g as f64 / m.chains as f64;
                let [kept, all, per_s] = m.efficiencies();
                let lr = reference(rows, row, NutsRsMetric::LowRank).map(|r| ratios(m, r));
                let diag = reference(rows, row, NutsRsMetric::Diag).map(|r| ratios(m, r));
                let _ = writeln!(
                    o,
                    "| {target} | {} | {} | {} | {:.0} | {:.0} | {:.4} | {} | {:.3} | {:.0} | {:.0} | {:.1} | {:.1} | {:.0} | {} | {} |",
                    row.config.label,
                    row.seed,
                    m.flag(),
                    m.ess_bulk_min,
                    m.ess_tail_min,
                    m.rhat_max,
                    m.divergences_sampling,
                    m.step_size_mean,
                    per_chain(m.gradients_tuning),
                    per_chain(m.gradients_sampling),
                    kept,
                    all,
                    per_s,
                    ratio_cell(lr),
                    ratio_cell(diag),
                );
            }
        }
    }

    if s.seeds.len() > 1 {
        o.push_str(
            "\nGeometric mean over seeds of the ratios (kept / all / per second); `!!`: some run involved was flagged.\n\n\
             | target | sampler | ÷ nuts-rs low-rank | ÷ nuts-rs diag |\n|---|---|---|---|\n",
        );
        for row in first_of_each_configuration(rows) {
            let same: Vec<&Row> = rows
                .iter()
                .filter(|r| r.target == row.target && r.config.key == row.config.key)
                .collect();
            let summary = |metric| {
                let mut all = Vec::new();
                for r in &same {
                    let m = r.result.as_ref().ok()?;
                    all.push(ratios(m, reference(rows, r, metric)?));
                }
                let flagged = all.iter().any(|(_, f)| *f);
                let mean =
                    |i: usize| geometric_mean(&all.iter().map(|(r, _)| r[i]).collect::<Vec<_>>());
                Some(([mean(0), mean(1), mean(2)], flagged))
            };
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} |",
                row.target,
                row.config.label,
                ratio_cell(summary(NutsRsMetric::LowRank)),
                ratio_cell(summary(NutsRsMetric::Diag))
            );
        }
    }

    if s.seeds.len() > 2 {
        o.push_str(&tail_summary(rows));
    }
    if s.per_chain {
        o.push_str(&per_chain_summary(rows));
    }

    let flagged: Vec<&Row> = rows
        .iter()
        .filter(|r| r.result.as_ref().map_or(true, |m| !m.flag().is_empty()))
        .collect();
    if !flagged.is_empty() {
        let _ = writeln!(
            o,
            "\n**WARNING: {} of {} runs are flagged `!!`; their ESS, efficiencies and ratios are NOT valid:**\n",
            flagged.len(),
            rows.len()
        );
        for r in flagged {
            let why = match &r.result {
                Err(e) => format!("failed: {e}"),
                Ok(m) => m.problems().join("; "),
            };
            let _ = writeln!(
                o,
                "- !! {} on {}, seed {}: {why}",
                r.config.label, r.target, r.seed
            );
        }
    }

    let mut notes = Vec::new();
    for r in rows {
        let Ok(m) = &r.result else { continue };
        if r.target == "years-regression" {
            if let Some(c) = m.corr01 {
                notes.push(format!(
                    "years-regression, {} seed {}: posterior corr(a, b) measured {c:.6}{}",
                    r.config.label,
                    r.seed,
                    if m.flag().is_empty() {
                        ""
                    } else {
                        " (flagged run)"
                    }
                ));
            }
        }
        let library = m.gradients_tuning + m.gradients_sampling;
        let diff = m.counted_calls.abs_diff(library);
        if diff as f64 > 0.01 * library as f64 + 2.0 * m.chains as f64 {
            notes.push(format!(
                "{} on {}, seed {}: the library counts {library} gradients, the model was called {} times",
                r.config.label, r.target, r.seed, m.counted_calls
            ));
        }
    }
    if rows.iter().any(|r| r.target == "years-regression") {
        notes.push(format!(
            "years-regression: exact corr(a, b) given sigma = 0.12: {:.6}",
            YearsRegression::new().ab_correlation()
        ));
    }
    if !notes.is_empty() {
        o.push('\n');
        for n in notes {
            let _ = writeln!(o, "- {n}");
        }
    }
    let _ = writeln!(
        o,
        "\nTotal time: {:.1} s. qnmc's kernels: {} (same bits either way; only ESS/s depends on it).",
        s.seconds,
        qnmc::kernels::kernels_in_use()
    );
    o
}

fn ratio_json(r: Option<([f64; 3], bool)>) -> Value {
    match r {
        None => Value::Null,
        Some((r, flagged)) => json!({
            "per_1k_gradients_kept": r[0],
            "per_1k_gradients_all": r[1],
            "per_second": r[2],
            "involves_flagged_run": flagged,
        }),
    }
}

/// Every number, as JSON.
pub fn json(rows: &[Row], skipped: &[String], s: &Settings) -> Value {
    let runs: Vec<Value> = rows
        .iter()
        .map(|row| {
            let mut v = json!({
                "target": row.target,
                "dimension": row.dimension,
                "seed": row.seed,
                "sampler": row.config.key,
                "label": row.config.label,
            });
            match &row.result {
                Err(e) => {
                    v["error"] = json!(e);
                    v["flagged"] = json!(true);
                }
                Ok(m) => {
                    v["flagged"] = json!(!m.flag().is_empty());
                    v["problems"] = json!(m.problems());
                    v["chains"] = json!(m.chains);
                    v["draws_per_chain"] = json!(m.draws_per_chain);
                    v["ess_bulk_min"] = json!(m.ess_bulk_min);
                    v["ess_bulk_min_parameter"] = json!(format!("x[{}]", m.ess_bulk_argmin + 1));
                    v["ess_tail_min"] = json!(m.ess_tail_min);
                    v["ess_tail_min_parameter"] = json!(format!("x[{}]", m.ess_tail_argmin + 1));
                    v["rhat_max"] = json!(m.rhat_max);
                    v["divergences_sampling"] = json!(m.divergences_sampling);
                    v["divergences_tuning"] = json!(m.divergences_tuning);
                    v["gradients_tuning"] = json!(m.gradients_tuning);
                    v["gradients_sampling"] = json!(m.gradients_sampling);
                    v["model_calls_counted"] = json!(m.counted_calls);
                    v["seconds_tuning"] = json!(m.seconds_tuning);
                    v["seconds_sampling"] = json!(m.seconds_sampling);
                    v["seconds_wall"] = json!(m.seconds_wall);
                    v["ess_bulk_per_1k_gradients_kept"] = json!(m.per_1k_kept());
                    v["ess_bulk_per_1k_gradients_all"] = json!(m.per_1k_all());
                    v["ess_bulk_per_second"] = json!(m.per_second());
                    v["ess_bulk_per_second_sampling_only"] =
                        json!(m.ess_bulk_min / m.seconds_sampling);
                    v["ess_tail_per_1k_gradients_kept"] =
                        json!(1000.0 * m.ess_tail_min / m.gradients_sampling as f64);
                    v["ess_tail_per_1k_gradients_all"] = json!(
                        1000.0 * m.ess_tail_min
                            / (m.gradients_tuning + m.gradients_sampling) as f64
                    );
                    if row.target == "years-regression" {
                        v["posterior_corr_a_b"] = json!(m.corr01);
                    }
                    v["ratio_vs_nuts_rs_lowrank"] = ratio_json(
                        reference(rows, row, NutsRsMetric::LowRank).map(|r| ratios(m, r)),
                    );
                    v["ratio_vs_nuts_rs_diag"] =
                        ratio_json(reference(rows, row, NutsRsMetric::Diag).map(|r| ratios(m, r)));
                }
            }
            v
        })
        .collect();
    json!({
        "nuts_rs_version": NUTS_RS_VERSION,
        "scale": "unconstrained (every coordinate the samplers move)",
        "ess_for_efficiency": "bulk ESS_min (minimum over parameters)",
        "chains": s.chains,
        "warmup": s.warmup,
        "draws": s.draws,
        "seeds": s.seeds,
        "quick": s.quick,
        "seconds_total": s.seconds,
        "rhat_limit": RHAT_LIMIT,
        "ess_per_chain_limit": ESS_PER_CHAIN_LIMIT,
        "skipped": skipped,
        "runs": runs,
    })
}
