//! `qnmc demo`: the sampler comparison table of [`crate::demo`], then the
//! harness on built-in data: QNHMC (M = C, frozen) on the German credit logistic
//! regression with the summary and, with `--output`, the CmdStan CSVs.

use super::CliError;
use super::args::DemoArgs;
use super::run_command::{report_health, write_run};
use crate::demo::{self, DemoSettings};
use qnmc_host::model::Model;
use qnmc_host::output::{OutputDir, summarize_run, summary_table_with};
use qnmc_host::run::{Progress, RunSettings, SamplerKind, run};
use qnmc_host::targets::{LogisticRegressionModel, LogregDataset};

/// `qnmc demo`.
pub fn demo(args: &DemoArgs) -> Result<(), CliError> {
    if args.chains == 0 || args.draws < 4 {
        return Err(CliError::Usage(
            "--chains must be >= 1 and --draws >= 4".into(),
        ));
    }
    if let Some(p) = args.output.as_deref() {
        OutputDir::check_available(p, args.force)?;
    }
    let settings = DemoSettings {
        seed: args.seed,
        chains: args.chains,
        warmup: args.warmup,
        draws: args.draws,
    };
    println!(
        "qnmc demo: N(0, 11'+4I) in D = {}, {} chains x ({} warm-up + {} kept draws), seed {}",
        demo::DIMENSION,
        settings.chains,
        settings.warmup,
        settings.draws,
        settings.seed
    );
    println!("truth: mean 0, marginal variance 5, variance along 1/sqrt(D) = 104\n");
    let rows = demo::run(&settings);
    print!("{}", demo::table(&rows));
    println!(
        "\nESS: rank-normalised bulk ESS over all chains; grads/ESS uses the smaller of the two ESS columns.\n\
         Errors use every kept draw. HAMCMC runs 10x the draws for the same gradient budget and\n\
         keeps every 10th; its constant step size makes it biased by O(eps) (no MH test)."
    );

    let model = LogisticRegressionModel::builtin(LogregDataset::German)
        .ok_or_else(|| CliError::Usage("the German credit data is not built in".into()))?;
    let run_settings = RunSettings {
        chains: args.chains,
        seed: args.seed,
        warmup: 500,
        draws: 1000,
        ..RunSettings::default()
    };
    println!(
        "\nThe harness: `qnmc run --target logreg-german` (the defaults: NUTS with the quasi-Newton\n\
         metric, --metric lbfgs: an L-BFGS start, then Stan's windows choosing between a diagonal and\n\
         diagonal-plus-pairs metric by the Fisher criterion; 500 warm-up + 1000 kept draws)\n"
    );
    let total = (run_settings.chains * (run_settings.warmup + run_settings.draws)) as u64;
    let progress = Progress::new(total, "nuts on logreg-german", args.quiet);
    let draws = run(&model, SamplerKind::Nuts, &run_settings, &progress);
    progress.finish();
    let draws = draws?;
    let known = model.known_posterior();
    let summary = summarize_run(&draws, known.as_ref());
    print!("{}", summary_table_with(&draws, known.as_ref(), &summary));
    report_health(&draws, &summary);
    match args.output.as_deref() {
        Some(path) => write_run(path, args.force, &draws, known.as_ref(), &summary)?,
        None => println!("\n(add --output DIR to write the CmdStan CSVs and summary.json)"),
    }
    Ok(())
}
