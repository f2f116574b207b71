//! `qnmc-compare --posteriordb`: every posterior × sampler × seed, chains one
//! after another on one thread, on the same compiled Stan model.

use std::path::Path;
use std::time::Instant;

use qnmc_host::model::Model;
use qnmc_host::run::{MetricKind, RunSettings, SamplerKind};

use super::report::{PdbRow, json, markdown};
use super::{Posterior, catalogue, check_view, load, reference_view, stan_draws};

/// The row of Stan's own NUTS (`--stan-draws`).
const STAN: &str = "stan-nuts";
use crate::metrics::Metrics;
use crate::nutsrs::{self, NutsRsJob, NutsRsMetric};
use crate::qnmcside;

/// Who runs a configuration and with how many warm-up draws.
#[derive(Clone, Copy)]
enum Engine {
    /// qnmc's NUTS with this `--metric` (`None`: the default) and the
    /// window's covariance metric on (the default) or off
    /// (`--no-window-covariance`).
    /// Metric (`None`: the default), window covariance, optimum secants.
    Qnmc(Option<MetricKind>, bool, bool),
    NutsRs(NutsRsMetric),
}

/// The benchmark's configurations: qnmc's default NUTS (quasi-Newton
/// metric), with `--no-window-covariance` (pairs between draws only, the
/// default until 2026-11-27), with `--no-optimum-secants` (the first metric
/// from the L-BFGS path, the default until 2026-11-28: docs/NUTS.md
/// "Secants at the optimum"), `--metric diag` and
/// `--metric dense`, all with the CLI's default warm-up (500);
/// nuts-rs low-rank and diagonal with tuning 500 (nutpie's documented
/// default) and 1000 (the nuts-rs crate's default).
const CONFIGS: [(&str, Engine, usize); 9] = [
    ("qnmc-nuts", Engine::Qnmc(None, true, true), 500),
    ("qnmc-nuts-pairs", Engine::Qnmc(None, false, false), 500),
    ("qnmc-nuts-path-metric", Engine::Qnmc(None, true, false), 500),
    (
        "qnmc-nuts-diag",
        Engine::Qnmc(Some(MetricKind::Diagonal), false, false),
        500,
    ),
    (
        "qnmc-nuts-dense",
        Engine::Qnmc(Some(MetricKind::Dense), false, false),
        500,
    ),
    (
        "nuts-rs-lowrank-500",
        Engine::NutsRs(NutsRsMetric::LowRank),
        500,
    ),
    ("nuts-rs-diag-500", Engine::NutsRs(NutsRsMetric::Diag), 500),
    (
        "nuts-rs-lowrank-1000",
        Engine::NutsRs(NutsRsMetric::LowRank),
        1000,
    ),
    (
        "nuts-rs-diag-1000",
        Engine::NutsRs(NutsRsMetric::Diag),
        1000,
    ),
];

/// The keys of the configurations, in table order.
pub fn config_keys() -> Vec<&'static str> {
    CONFIGS.iter().map(|(k, _, _)| *k).collect()
}

/// What to run.
pub struct BenchArgs<'a> {
    /// posteriordb names to run (`None`: all with a reference).
    pub only: Option<&'a [String]>,
    /// posteriordb names to leave out.
    pub skip: &'a [String],
    /// Sampler keys (`None`: all of [`CONFIGS`]).
    pub samplers: Option<&'a [String]>,
    /// The folder of compiled models (`build-posteriordb.sh`).
    pub models: &'a Path,
    pub seeds: &'a [u64],
    pub chains: usize,
    pub draws: usize,
    /// Where to write every number as JSON.
    pub json: Option<&'a Path>,
    /// Stan's own NUTS runs from `compare/stan_nuts.py` (row `stan-nuts`).
    pub stan_draws: Option<&'a Path>,
}

fn run_one(
    model: &dyn Model,
    posterior: &Posterior,
    engine: Engine,
    warmup: usize,
    args: &BenchArgs<'_>,
    seed: u64,
) -> Result<(Metrics, super::ReferenceCheck), String> {
    let run = match engine {
        Engine::NutsRs(metric) => nutsrs::run(&NutsRsJob {
            model,
            metric,
            chains: args.chains,
            tune: warmup as u64,
            draws: args.draws as u64,
            seed,
            init_radius: 2.0,
        })?,
        Engine::Qnmc(metric, window_covariance, optimum_secants) => {
            let settings = RunSettings {
                window_covariance,
                optimum_secants,
                chains: args.chains,
                warmup,
                draws: args.draws,
                seed,
                init_radius: 2.0,
                metric,
                ..RunSettings::default()
            };
            qnmcside::run(model, SamplerKind::Nuts, &settings)?
        }
    };
    let (view, missing) = reference_view(model, posterior, &run);
    if !missing.is_empty() {
        eprint!("(not reported, not checked: {}) ", missing.join(", "));
    }
    let names: Vec<String> = posterior
        .names
        .iter()
        .filter(|n| !missing.contains(n))
        .cloned()
        .collect();
    let metrics = Metrics::of(&view);
    let check = check_view(posterior, &names, &view)?;
    Ok((metrics, check))
}

/// Runs the benchmark and prints the report.
pub fn main(args: &BenchArgs<'_>) -> Result<(), String> {
    let mut posteriors = catalogue()?;
    if let Some(only) = args.only {
        for name in only {
            if !posteriors.iter().any(|p| p.name == *name) {
                return Err(format!("no posterior `{name}` with a reference summary"));
            }
        }
        posteriors.retain(|p| only.contains(&p.name));
    }
    for name in args.skip {
        if !posteriors.iter().any(|p| p.name == *name) {
            return Err(format!(
                "--skip {name}: no such posterior among those selected"
            ));
        }
    }
    posteriors.retain(|p| !args.skip.contains(&p.name));
    let configs: Vec<(&str, Engine, usize)> = match args.samplers {
        None => CONFIGS.to_vec(),
        Some(keys) => {
            for k in keys {
                if !CONFIGS.iter().any(|(c, _, _)| c == k) {
                    return Err(format!(
                        "unknown sampler `{k}` for --posteriordb; valid: {}",
                        config_keys().join(", ")
                    ));
                }
            }
            CONFIGS
                .iter()
                .copied()
                .filter(|(c, _, _)| keys.iter().any(|k| k == c))
                .collect()
        }
    };
    let started = Instant::now();
    let mut rows = Vec::new();
    for posterior in &posteriors {
        let model = match load(posterior, args.models) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{}: {e}", posterior.name);
                for (key, _, _) in &configs {
                    rows.push(PdbRow {
                        posterior: posterior.name.clone(),
                        dimension: 0,
                        sampler: key.to_string(),
                        seed: 0,
                        result: Err(e.clone()),
                    });
                }
                continue;
            }
        };
        for &seed in args.seeds {
            for &(key, engine, warmup) in &configs {
                eprint!(
                    "{} (D = {}), seed {seed}: {key} ... ",
                    posterior.name,
                    model.dimension()
                );
                let clock = Instant::now();
                let result = run_one(&model, posterior, engine, warmup, args, seed);
                match &result {
                    Ok((m, c)) => eprintln!(
                        "{:.1} s, bulk ESS min {:.0}, worst |z| {:.1}{}{}",
                        clock.elapsed().as_secs_f64(),
                        m.ess_bulk_min,
                        c.worst_z,
                        if c.passed { "" } else { "  !! reference" },
                        if m.flag().is_empty() {
                            String::new()
                        } else {
                            format!("  {}", m.flag())
                        }
                    ),
                    Err(e) => eprintln!("FAILED: {e}"),
                }
                rows.push(PdbRow {
                    posterior: posterior.name.clone(),
                    dimension: model.dimension(),
                    sampler: key.to_string(),
                    seed,
                    result,
                });
            }
            if let Some(dir) = args.stan_draws {
                let result = match stan_draws::read(dir, posterior, seed) {
                    None => Err(format!(
                        "no Stan run in {} (compare/stan_nuts.py)",
                        dir.display()
                    )),
                    Some(Err(e)) => Err(e),
                    Some(Ok((view, names))) => {
                        check_view(posterior, &names, &view).map(|c| (Metrics::of(&view), c))
                    }
                };
                rows.push(PdbRow {
                    posterior: posterior.name.clone(),
                    dimension: model.dimension(),
                    sampler: STAN.to_string(),
                    seed,
                    result,
                });
            }
        }
    }
    let mut samplers: Vec<String> = configs.iter().map(|(k, _, _)| k.to_string()).collect();
    let qnmc: Vec<&str> = configs
        .iter()
        .filter(|(_, e, _)| matches!(e, Engine::Qnmc(..)))
        .map(|(k, _, _)| *k)
        .collect();
    let mut peers: Vec<&str> = configs
        .iter()
        .filter(|(_, e, _)| matches!(e, Engine::NutsRs(_)))
        .map(|(k, _, _)| *k)
        .collect();
    if args.stan_draws.is_some() {
        samplers.push(STAN.to_string());
        peers.push(STAN);
    }
    println!(
        "posteriordb: {} posteriors, seeds {:?}, {} chains × {} kept draws, one thread, {:.0} s\n",
        posteriors.len(),
        args.seeds,
        args.chains,
        args.draws,
        started.elapsed().as_secs_f64()
    );
    print!("{}", markdown(&rows, &samplers, &qnmc, &peers));
    if let Some(path) = args.json {
        std::fs::write(
            path,
            serde_json::to_string_pretty(&json(&rows)).expect("JSON"),
        )
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
