//! `qnmc-compare`: nuts-rs and qnmc side by side, same targets, same protocol,
//! one process, chains one after another on one thread; `qnmc-compare draws`
//! writes one nuts-rs run's draws as CmdStan CSV files. See README.md.

mod draws_command;
mod metrics;
mod nutsrs;
mod posteriordb;
mod qnmcside;
/// The years-regression target lives in the host (`qnmc_host::targets`, with
/// its exact posterior); this path is the one `report.rs` imports.
mod regression {
    pub use qnmc_host::targets::YearsRegression;
}
mod report;
mod runs;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use qnmc_cli::{TargetArgs, build_target};
use qnmc_host::model::Model;
use qnmc_host::run::{MetricKind, RunSettings, SamplerKind};

use metrics::Metrics;
use nutsrs::{NutsRsJob, NutsRsMetric};
use regression::YearsRegression;
use report::Row;

/// The nuts-rs version this tool is pinned to (Cargo.toml).
pub const NUTS_RS_VERSION: &str = "0.19.1";

/// Who runs a configuration.
#[derive(Clone, Copy)]
pub enum Engine {
    NutsRs(NutsRsMetric),
    /// The host runner with `kind`; `adjust` changes the comparison's common
    /// `RunSettings` (chains, lengths, seed already set) for this row.
    Qnmc {
        kind: SamplerKind,
        adjust: fn(&mut RunSettings),
    },
}

/// One row of the table: a sampler configuration.
#[derive(Clone, Copy)]
pub struct Config {
    /// Name for `--samplers`.
    pub key: &'static str,
    /// Name in the table.
    pub label: &'static str,
    pub engine: Engine,
}

/// The configurations compared, in table order. The two nuts-rs rows are the
/// references of the ratio columns. A qnmc row is one line: a key, a label, a
/// `SamplerKind` and what to change in `RunSettings`.
fn configs() -> Vec<Config> {
    let qnmc = |key, label, kind, adjust| Config {
        key,
        label,
        engine: Engine::Qnmc { kind, adjust },
    };
    vec![
        Config {
            key: "nuts-rs-lowrank",
            label: "nuts-rs low-rank",
            engine: Engine::NutsRs(NutsRsMetric::LowRank),
        },
        Config {
            key: "nuts-rs-diag",
            label: "nuts-rs diag",
            engine: Engine::NutsRs(NutsRsMetric::Diag),
        },
        qnmc("hmc", "qnmc hmc", SamplerKind::Hmc, |_| {}),
        qnmc("qnhmc", "qnmc qnhmc", SamplerKind::Qnhmc, |_| {}),
        qnmc("nuts", "qnmc nuts (defaults)", SamplerKind::Nuts, |s| {
            // The CLI's defaults: --metric lbfgs, warm-up 500.
            s.warmup = qnmc_cli::default_warmup(SamplerKind::Nuts);
        }),
        qnmc(
            "nuts-w1000",
            "qnmc nuts, warm-up 1000",
            SamplerKind::Nuts,
            |_| {},
        ),
        qnmc(
            "nuts-w300",
            "qnmc nuts, warm-up 300",
            SamplerKind::Nuts,
            |s| {
                s.warmup = 300;
            },
        ),
        qnmc(
            "nuts-w200",
            "qnmc nuts, warm-up 200",
            SamplerKind::Nuts,
            |s| {
                s.warmup = 200;
            },
        ),
        qnmc(
            "nuts-diag",
            "qnmc nuts --metric diag",
            SamplerKind::Nuts,
            |s| {
                s.metric = Some(MetricKind::Diagonal);
                s.warmup = qnmc_cli::default_warmup(SamplerKind::Nuts);
            },
        ),
    ]
}

/// The targets, in table order.
const TARGETS: [&str; 6] = [
    "gaussian",
    "logreg-german",
    "eight-schools",
    "sblrc-blr",
    "ark",
    "years-regression",
];

/// Targets that read the shared data folder.
const NEED_SHARED: [&str; 3] = ["eight-schools", "sblrc-blr", "ark"];

#[derive(Parser, Debug)]
#[command(
    name = "qnmc-compare",
    about = "nuts-rs and qnmc on the same targets with the same protocol: ESS per gradient and per second, ratios qnmc / nuts-rs",
    args_conflicts_with_subcommands = true
)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// Comma-separated targets (gaussian, logreg-german or german, eight-schools,
    /// sblrc-blr, ark, years-regression). Default: all.
    #[arg(long, value_delimiter = ',')]
    targets: Option<Vec<String>>,
    /// Comma-separated sampler keys (nuts-rs-lowrank, nuts-rs-diag, hmc, qnhmc). Default: all.
    #[arg(long, value_delimiter = ',')]
    samplers: Option<Vec<String>>,
    /// Comma-separated seeds; each is a full run of every configuration
    /// (chain k uses qnmc's chain_seed(seed, k) on both sides).
    #[arg(long, value_delimiter = ',', default_value = "1")]
    seeds: Vec<u64>,
    /// Chains per run.
    #[arg(long, default_value_t = 4)]
    chains: usize,
    /// Tuning / warm-up iterations per chain (default 1000; 200 with --quick).
    #[arg(long)]
    warmup: Option<usize>,
    /// Kept draws per chain (default 1000; 200 with --quick).
    #[arg(long)]
    draws: Option<usize>,
    /// Smoke run: 200 warm-up and 200 kept draws per chain unless given.
    #[arg(long)]
    quick: bool,
    /// Write every number as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Also report each chain alone (ESS of the run's slowest-tail
    /// coordinate, step size) after every run, and a per-chain summary table.
    #[arg(long)]
    per_chain: bool,
    /// The posteriordb benchmark instead of the built-in targets: `all`, or
    /// posteriordb names separated by commas (e.g. `sblrc-blr,arK-arK`). Each
    /// Stan model must be compiled first (build-posteriordb.sh). Samplers:
    /// qnmc-nuts, qnmc-nuts-diag, nuts-rs-{lowrank,diag}-{500,1000}.
    #[arg(long, value_delimiter = ',', value_name = "all|NAMES")]
    posteriordb: Option<Vec<String>>,
    /// With --posteriordb: leave these posteriors out (names separated by
    /// commas), e.g. `all --skip hudson_lynx_hare-lotka_volterra,
    /// one_comp_mm_elim_abs-one_comp_mm_elim_abs`: the 43 posteriors of
    /// docs/POSTERIORDB.md's tables (the two ODE models take minutes per run).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "NAMES",
        requires = "posteriordb"
    )]
    skip: Vec<String>,
    /// Folder of the compiled posteriordb models (default:
    /// compare/target/posteriordb-models).
    #[arg(long, value_name = "DIR")]
    models: Option<PathBuf>,
    /// With --posteriordb: also report Stan's own NUTS from the runs
    /// compare/stan_nuts.py wrote to DIR (row `stan-nuts`).
    #[arg(long, value_name = "DIR")]
    stan_draws: Option<PathBuf>,
    /// Summarise posteriordb's reference draws (DIR: a posteriordb checkout's
    /// reference_posteriors/draws/draws) into compare/posteriordb/reference/,
    /// then exit.
    #[arg(long, value_name = "DIR")]
    write_references: Option<PathBuf>,
    /// The shared data folder (posteriordb/ for eight-schools, sblrc-blr, ark).
    /// Default: $QNMC_SHARED_DATA, else ../shared/data from the current
    /// directory, else ../shared/data next to the repository.
    #[arg(long, value_name = "DIR")]
    shared_data: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// nuts-rs on one target (the `qnmc run` target options): each chain's
    /// kept draws as a CmdStan CSV file for `qnmc check --draws-files`,
    /// and the costs as nutsrs.json.
    Draws(draws_command::DrawsArgs),
}

fn shared_data_dir(arg: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = arg {
        return Some(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("QNMC_SHARED_DATA") {
        return Some(PathBuf::from(p));
    }
    [
        PathBuf::from("../shared/data"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"),
    ]
    .into_iter()
    .find(|p| p.is_dir())
}

/// The model called `name`; `Ok(None)` when it needs shared data that is missing.
fn build(name: &str, shared: Option<&Path>) -> Result<Option<Box<dyn Model>>, String> {
    if name == "years-regression" {
        return Ok(Some(Box::new(YearsRegression::new())));
    }
    if NEED_SHARED.contains(&name) && !shared.is_some_and(|p| p.join("posteriordb").is_dir()) {
        return Ok(None);
    }
    let args = TargetArgs {
        target: name.to_string(),
        shared_data: shared.map(Path::to_path_buf),
        ..TargetArgs::default()
    };
    build_target(&args)
        .map(Some)
        .map_err(|e| format!("{name}: {e}"))
}

fn main() -> ExitCode {
    match real_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<(), String> {
    let args = Args::parse();
    if let Some(Command::Draws(draws)) = &args.command {
        return draws_command::main(draws);
    }
    if let Some(dir) = &args.write_references {
        let written = posteriordb::write_references(dir)?;
        eprintln!(
            "wrote {} reference summaries to {}",
            written.len(),
            posteriordb::reference_dir().display()
        );
        return Ok(());
    }
    if let Some(names) = &args.posteriordb {
        if args.chains < 2 {
            return Err("--chains must be at least 2 (R-hat needs several chains)".into());
        }
        let all = names.iter().any(|n| n == "all");
        let default_models =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("target/posteriordb-models");
        return posteriordb::bench::main(&posteriordb::bench::BenchArgs {
            only: if all { None } else { Some(names) },
            skip: &args.skip,
            samplers: args.samplers.as_deref(),
            models: args.models.as_deref().unwrap_or(&default_models),
            seeds: &args.seeds,
            chains: args.chains,
            draws: args.draws.unwrap_or(1000),
            json: args.json.as_deref(),
            stan_draws: args.stan_draws.as_deref(),
        });
    }
    let warmup = args.warmup.unwrap_or(if args.quick { 200 } else { 1000 });
    let draws = args.draws.unwrap_or(if args.quick { 200 } else { 1000 });
    if args.chains < 2 {
        return Err("--chains must be at least 2 (R-hat needs several chains)".into());
    }
    if args.seeds.is_empty() {
        return Err("--seeds needs at least one seed".into());
    }

    let targets: Vec<String> = match &args.targets {
        None => TARGETS.iter().map(|s| s.to_string()).collect(),
        Some(list) => list
            .iter()
            .map(|t| match t.as_str() {
                "german" => Ok("logreg-german".to_string()),
                t if TARGETS.contains(&t) => Ok(t.to_string()),
                t => Err(format!(
                    "unknown target `{t}`; valid: {} (or german)",
                    TARGETS.join(", ")
                )),
            })
            .collect::<Result<_, _>>()?,
    };
    let all = configs();
    let configs: Vec<Config> = match &args.samplers {
        None => all,
        Some(keys) => {
            for k in keys {
                if !all.iter().any(|c| c.key == k) {
                    let valid: Vec<&str> = all.iter().map(|c| c.key).collect();
                    return Err(format!(
                        "unknown sampler `{k}`; valid: {}",
                        valid.join(", ")
                    ));
                }
            }
            all.into_iter()
                .filter(|c| keys.iter().any(|k| k == c.key))
                .collect()
        }
    };
    let shared = shared_data_dir(args.shared_data.as_deref());

    let started = Instant::now();
    let mut rows: Vec<Row> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    for name in &targets {
        let model = match build(name, shared.as_deref())? {
            Some(m) => m,
            None => {
                let line = format!(
                    "skipped {name}: it needs the shared data folder (posteriordb/), not found (--shared-data DIR or QNMC_SHARED_DATA)"
                );
                println!("{line}");
                skipped.push(line);
                continue;
            }
        };
        for &seed in &args.seeds {
            for config in &configs {
                eprint!(
                    "{name} (D = {}), seed {seed}: {} ... ",
                    model.dimension(),
                    config.label
                );
                let clock = Instant::now();
                let run = match config.engine {
                    Engine::NutsRs(metric) => nutsrs::run(&NutsRsJob {
                        model: &*model,
                        metric,
                        chains: args.chains,
                        tune: warmup as u64,
                        draws: draws as u64,
                        seed,
                        init_radius: 2.0,
                    }),
                    Engine::Qnmc { kind, adjust } => {
                        let mut settings = RunSettings {
                            chains: args.chains,
                            warmup,
                            draws,
                            seed,
                            init_radius: 2.0,
                            ..RunSettings::default()
                        };
                        adjust(&mut settings);
                        qnmcside::run(&*model, kind, &settings)
                    }
                };
                match run {
                    Ok(run) => {
                        let m = Metrics::of(&run);
                        eprintln!(
                            "{:.1} s, bulk ESS min {:.0}{}",
                            clock.elapsed().as_secs_f64(),
                            m.ess_bulk_min,
                            if m.flag().is_empty() {
                                ""
                            } else {
                                "  !! flagged"
                            }
                        );
                        if args.per_chain {
                            let chains: Vec<String> = m
                                .per_chain
                                .iter()
                                .map(|c| {
                                    format!(
                                        "{:.0}/{:.0} (ε {:.3})",
                                        c.ess_tail, c.ess_bulk, c.step_size_mean
                                    )
                                })
                                .collect();
                            eprintln!(
                                "    per chain, x[{}] tail/bulk ESS: {}",
                                m.ess_tail_argmin + 1,
                                chains.join(", ")
                            );
                        }
                        rows.push(Row {
                            target: name.clone(),
                            dimension: model.dimension(),
                            seed,
                            config: *config,
                            result: Ok(m),
                        });
                    }
                    Err(e) => {
                        eprintln!("FAILED: {e}");
                        rows.push(Row {
                            target: name.clone(),
                            dimension: model.dimension(),
                            seed,
                            config: *config,
                            result: Err(e),
                        });
                    }
                }
            }
        }
    }

    let settings = report::Settings {
        chains: args.chains,
        warmup,
        draws,
        seeds: args.seeds.clone(),
        quick: args.quick,
        per_chain: args.per_chain,
        seconds: started.elapsed().as_secs_f64(),
    };
    print!("{}", report::markdown(&rows, &settings));
    if let Some(path) = &args.json {
        let json = report::json(&rows, &skipped, &settings);
        std::fs::write(path, serde_json::to_string_pretty(&json).expect("JSON"))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
