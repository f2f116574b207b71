//! `qnmc-compare draws`: nuts-rs on one qnmc-host target, its kept draws
//! written as CmdStan CSV files (one per chain) that `qnmc check
//! --draws-files` judges, and its costs as `nutsrs.json`.
//!
//! The chains are the ones the benchmark runs ([`crate::nutsrs`]): chain k
//! starts where `qnmc run` starts it and nuts-rs's generator is seeded with
//! `chain_seed(seed, k)`; they run one after another on one thread.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, ValueEnum};
use qnmc_cli::{TargetArgs, build_target};
use qnmc_host::model::Model;
use qnmc_host::output::{csv_column_name, float_text};
use qnmc_stan::StanModel;
use serde_json::json;

use crate::NUTS_RS_VERSION;
use crate::nutsrs::{self, ChainRecord, NutsRsJob, NutsRsMetric};
use crate::runs::{ChainRun, SamplerRun};

/// nuts-rs's mass-matrix adaptation, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MetricArg {
    /// `LowRankNutsSettings`: diagonal plus low-rank corrections (nutpie's
    /// `low_rank_modified_mass_matrix=True`).
    Lowrank,
    /// `DiagNutsSettings`: diagonal, from draws and gradients (nutpie's
    /// default).
    Diag,
}

impl MetricArg {
    fn metric(self) -> NutsRsMetric {
        match self {
            MetricArg::Lowrank => NutsRsMetric::LowRank,
            MetricArg::Diag => NutsRsMetric::Diag,
        }
    }

    fn name(self) -> &'static str {
        match self {
            MetricArg::Lowrank => "lowrank",
            MetricArg::Diag => "diag",
        }
    }
}

/// `qnmc-compare draws`.
#[derive(Debug, Clone, Args)]
pub struct DrawsArgs {
    /// The target, with the same options as `qnmc run` (`--target funnel
    /// --dimension 10`, `--target eight-schools --shared-data DIR`, or a
    /// BridgeStan `--model LIB.so --data FILE.json`).
    #[command(flatten)]
    pub target: TargetArgs,
    /// Seed; chain k uses qnmc's chain_seed(seed, k) for its start and for
    /// nuts-rs's generator.
    #[arg(long)]
    pub seed: u64,
    /// nuts-rs's mass-matrix adaptation.
    #[arg(long, value_enum)]
    pub metric: MetricArg,
    /// Output folder (created if missing): chain_1.csv … and nutsrs.json,
    /// replacing files of those names.
    #[arg(long)]
    pub output: PathBuf,
    /// Chains, run one after another on one thread.
    #[arg(long, default_value_t = 4)]
    pub chains: usize,
    /// Tuning draws per chain (nutpie's default and qnmc's warm-up budget).
    #[arg(long, default_value_t = 500)]
    pub tune: u64,
    /// Kept draws per chain.
    #[arg(long, default_value_t = 1000)]
    pub draws: u64,
    /// Start of chain k: the model's initial point plus uniform(−r, r) per
    /// coordinate (qnmc's `--init-radius`, default 2).
    #[arg(long, default_value_t = 2.0)]
    pub init_radius: f64,
}

/// Runs the chains and writes the files.
pub fn main(args: &DrawsArgs) -> Result<(), String> {
    if args.chains == 0 || args.draws == 0 {
        return Err("--chains and --draws must be at least 1".into());
    }
    if !(args.init_radius.is_finite() && args.init_radius >= 0.0) {
        return Err("--init-radius must be finite and non-negative".into());
    }
    let model = build(&args.target)?;
    let job = NutsRsJob {
        model: &*model,
        metric: args.metric.metric(),
        chains: args.chains,
        tune: args.tune,
        draws: args.draws,
        seed: args.seed,
        init_radius: args.init_radius,
    };
    let clock = Instant::now();
    let (run, records) = nutsrs::run_recorded(&job)?;
    let seconds = clock.elapsed().as_secs_f64();

    std::fs::create_dir_all(&args.output)
        .map_err(|e| format!("cannot create {}: {e}", args.output.display()))?;
    let mut files = Vec::with_capacity(run.chains.len());
    for (k, (chain, record)) in run.chains.iter().zip(&records).enumerate() {
        let text = chain_csv(args, &*model, &run, k, chain, record);
        let path = args.output.join(format!("chain_{}.csv", k + 1));
        write(&path, &text)?;
        files.push(path);
    }
    let summary = summary_json(args, &*model, &run, &records, seconds);
    let path = args.output.join("nutsrs.json");
    write(
        &path,
        &(serde_json::to_string_pretty(&summary).expect("JSON") + "\n"),
    )?;
    eprintln!(
        "{} (D = {}), nuts-rs {}, seed {}: {} gradients ({} in tuning), {} divergences, {:.2} s; wrote {} and {} CSV files",
        model.name(),
        model.dimension(),
        args.metric.name(),
        args.seed,
        summary["gradients"],
        summary["gradients_warmup"],
        summary["divergences"],
        seconds,
        path.display(),
        files.len()
    );
    Ok(())
}

/// The model the target options name, as `qnmc run` builds it.
fn build(target: &TargetArgs) -> Result<Box<dyn Model>, String> {
    if let Some(library) = &target.model {
        let model = StanModel::load(library, target.data.as_deref()).map_err(|e| e.to_string())?;
        return Ok(Box::new(model));
    }
    build_target(target).map_err(|e| format!("{}: {e}", target.target))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The sampler columns, in CmdStan's order.
const SAMPLER_COLUMNS: [&str; 7] = [
    "lp__",
    "accept_stat__",
    "stepsize__",
    "treedepth__",
    "n_leapfrog__",
    "divergent__",
    "energy__",
];

/// Chain `k` as a CmdStan CSV: the comment keys `qnmc check --draws-files`
/// reads (`model`, `num_warmup`, `algorithm`, `id`, `seed`), a `nuts-rs`
/// section, the header (sampler columns, then the model's quantities under
/// Stan's CSV names of its `output_names`), one line per kept draw with the
/// quantities from `Model::constrain` (what `qnmc run` writes), and the
/// Elapsed Time trailer.
fn chain_csv(
    args: &DrawsArgs,
    model: &dyn Model,
    run: &SamplerRun,
    k: usize,
    chain: &ChainRun,
    record: &ChainRecord,
) -> String {
    let names = model.output_names();
    let mut out = String::new();
    let mut line = |text: &str| {
        out.push_str(text);
        out.push('\n');
    };
    line(&format!("# model = {}", model.name()));
    line("# method = sample (Default)");
    line("#   sample");
    line(&format!("#     num_samples = {}", args.draws));
    line(&format!("#     num_warmup = {}", args.tune));
    line("#     save_warmup = false");
    line("#     thin = 1");
    line("#     algorithm = nuts");
    line(&format!("#     num_chains = {}", run.chains.len()));
    line(&format!("# id = {}", k + 1));
    line("# random");
    line(&format!("#   seed = {}", args.seed));
    line("# nuts-rs");
    line(&format!("#   version = {NUTS_RS_VERSION}"));
    line(&format!("#   metric = {}", args.metric.name()));
    line(&format!(
        "#   chain_seed = {}",
        qnmc_host::run::chain_seed(args.seed, k)
    ));
    line("#   lp__ = log density -U of the qnmc model (log-Jacobians included), as qnmc's lp__");
    line(&format!(
        "#   leapfrog_steps_warmup = {}",
        record.steps_tuning
    ));
    line(&format!(
        "#   model_calls = {} (start {}, warm-up {}, kept draws {})",
        record.calls_start + record.calls_tuning + record.calls_sampling,
        record.calls_start,
        record.calls_tuning,
        record.calls_sampling
    ));
    let mut header: Vec<String> = SAMPLER_COLUMNS.iter().map(|c| c.to_string()).collect();
    header.extend(names.iter().map(|n| csv_column_name(n)));
    line(&header.join(","));

    let n = run.dimension;
    let mut quantities = vec![0.0; names.len()];
    let mut row = String::new();
    for (position, s) in chain.draws.chunks(n).zip(&record.stats) {
        model.constrain(position, &mut quantities);
        row.clear();
        let _ = write!(
            row,
            "{},{},{},{},{},{},{}",
            float_text(s.lp),
            float_text(s.accept_stat),
            float_text(s.step_size),
            s.tree_depth,
            s.n_steps,
            u8::from(s.divergent),
            float_text(s.energy),
        );
        for &q in &quantities {
            row.push(',');
            row.push_str(&float_text(q));
        }
        line(&row);
    }
    line("# ");
    line(&format!(
        "#  Elapsed Time: {:.3} seconds (Warm-up)",
        chain.seconds_tuning
    ));
    line(&format!(
        "#                {:.3} seconds (Sampling)",
        chain.seconds_sampling
    ));
    line(&format!(
        "#                {:.3} seconds (Total)",
        chain.seconds_tuning + chain.seconds_sampling
    ));
    line("# ");
    out
}

/// `nutsrs.json`: the run's costs, whole and per chain.
///
/// - `gradients_warmup`, `gradients_draws`: leapfrog steps (one gradient
///   each) of the tuning and of the kept draws, summed over chains: nuts-rs's
///   `Progress::num_steps` of every draw, which is nutpie's `n_steps`;
///   `gradients` is their sum.
/// - `model_calls`: every call of the model's log density and gradient, all
///   chains, counted in the model: the leapfrog steps plus each chain's start
///   (its start point, failed starts included, and nuts-rs's initial
///   step-size search) and any evaluation nuts-rs makes outside a trajectory
///   during tuning; `model_calls_start` is the starts' part.
/// - `divergences`: kept draws; `divergences_warmup`: tuning draws.
/// - `seconds`: wall time of all chains (one after another on one thread),
///   without building the model or writing files.
fn summary_json(
    args: &DrawsArgs,
    model: &dyn Model,
    run: &SamplerRun,
    records: &[ChainRecord],
    seconds: f64,
) -> serde_json::Value {
    let per_chain: Vec<serde_json::Value> = run
        .chains
        .iter()
        .zip(records)
        .enumerate()
        .map(|(k, (c, r))| {
            let kept_steps: u64 = r.stats.iter().map(|s| s.n_steps).sum();
            let kept = r.stats.len().max(1) as f64;
            json!({
                "chain": k + 1,
                "gradients_warmup": r.steps_tuning,
                "gradients_draws": kept_steps,
                "num_gradients_warmup": c.gradients_tuning,
                "num_gradients_draws": c.gradients_sampling,
                "model_calls_start": r.calls_start,
                "model_calls_warmup": r.calls_tuning,
                "model_calls_draws": r.calls_sampling,
                "divergences": c.divergences_sampling,
                "divergences_warmup": c.divergences_tuning.unwrap_or(0),
                "step_size_mean": number(r.stats.iter().map(|s| s.step_size).sum::<f64>() / kept),
                "tree_depth_mean": number(
                    r.stats.iter().map(|s| s.tree_depth as f64).sum::<f64>() / kept
                ),
                "seconds_warmup": c.seconds_tuning,
                "seconds_draws": c.seconds_sampling,
            })
        })
        .collect();
    let warmup: u64 = records.iter().map(|r| r.steps_tuning).sum();
    let kept: u64 = records
        .iter()
        .flat_map(|r| &r.stats)
        .map(|s| s.n_steps)
        .sum();
    json!({
        "sampler": format!("nuts-rs {NUTS_RS_VERSION}"),
        "metric": args.metric.name(),
        "target": model.name(),
        "dimension": model.dimension(),
        "seed": args.seed,
        "chains": run.chains.len(),
        "tune": args.tune,
        "draws": args.draws,
        "gradients": warmup + kept,
        "gradients_warmup": warmup,
        "gradients_draws": kept,
        "model_calls": run.counted_calls,
        "model_calls_start": records.iter().map(|r| r.calls_start).sum::<u64>(),
        "divergences": run.chains.iter().map(|c| c.divergences_sampling).sum::<u64>(),
        "divergences_warmup": run.chains.iter().map(|c| c.divergences_tuning.unwrap_or(0)).sum::<u64>(),
        "seconds": seconds,
        "per_chain": per_chain,
    })
}

/// A JSON number, or null when not finite.
fn number(x: f64) -> serde_json::Value {
    if x.is_finite() {
        json!(x)
    } else {
        serde_json::Value::Null
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use qnmc_host::output::{read_cmdstan_csv, run_draws_from_cmdstan};

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        draws: DrawsArgs,
    }

    #[test]
    fn files_read_back_as_the_run() {
        let dir = std::env::temp_dir().join(format!("qnmc-compare-draws-{}", std::process::id()));
        let args = Cli::parse_from([
            "draws",
            "--target",
            "stochastic-volatility",
            "--seed",
            "5",
            "--metric",
            "lowrank",
            "--chains",
            "2",
            "--tune",
            "40",
            "--draws",
            "25",
            "--output",
            dir.to_str().unwrap(),
        ])
        .draws;
        main(&args).unwrap();
        let model = build(&args.target).unwrap();
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("nutsrs.json")).unwrap())
                .unwrap();
        let files: Vec<_> = (1..=2)
            .map(|k| {
                read_cmdstan_csv(
                    &std::fs::read_to_string(dir.join(format!("chain_{k}.csv"))).unwrap(),
                )
                .unwrap()
            })
            .collect();
        let run = run_draws_from_cmdstan(&files).unwrap();
        assert_eq!(run.names, model.output_names());
        assert_eq!(run.target, "stochastic-volatility");
        assert_eq!(files[0].column_names[..7], SAMPLER_COLUMNS);
        let kept: u64 = run.chains.iter().map(|c| c.gradient_evaluations).sum();
        assert_eq!(summary["gradients_draws"], kept);
        assert_eq!(
            summary["gradients"],
            kept + summary["gradients_warmup"].as_u64().unwrap()
        );
        let divergent: usize = run
            .chains
            .iter()
            .map(|c| c.divergent.iter().filter(|&&d| d).count())
            .sum();
        assert_eq!(summary["divergences"], divergent as u64);
        // φ = tanh of its coordinate: the quantities are constrained.
        let phi = run.names.iter().position(|n| n == "phi").unwrap();
        for c in &run.chains {
            assert_eq!(c.len(), 25);
            assert_eq!(c.tree_depth.len(), 25);
            assert!(c.column(phi, run.names.len()).iter().all(|p| p.abs() < 1.0));
            assert!(c.lp.iter().all(|lp| lp.is_finite()));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
