//! `qnmc run`: sample a target, write the files, print the summary.

use std::path::Path;

use super::args::{OutputArgs, RunArgs, SamplerArgs};
use super::{CliError, build_target, run_settings};
use crate::draws::RunDraws;
use crate::model::{KnownPosterior, Model};
use crate::output::{
    OutputDir, cmdstan_csv, render_chart, run_charts, summary_json, summary_table,
};
use crate::run::{Progress, run as run_chains};

/// Runs the sampler on `model`, with a progress bar unless `quiet`.
pub(crate) fn sample(
    model: &dyn Model,
    sampler: &SamplerArgs,
    quiet: bool,
) -> Result<RunDraws, CliError> {
    let settings = run_settings(sampler);
    settings
        .validate(sampler.sampler)
        .map_err(CliError::Usage)?;
    let total = (settings.chains * (settings.warmup + settings.draws * settings.thin)) as u64;
    let progress = Progress::new(
        total,
        &format!("{} on {}", sampler.sampler, model.name()),
        quiet,
    );
    let draws = run_chains(model, sampler.sampler, &settings, &progress);
    progress.finish();
    Ok(draws?)
}

/// Opens the output folder (before sampling, so a clash fails fast).
pub(crate) fn open_output(output: &OutputArgs) -> Result<Option<OutputDir>, CliError> {
    output
        .output
        .as_deref()
        .map(|p: &Path| OutputDir::create(p, output.force))
        .transpose()
        .map_err(CliError::from)
}

/// Quantities plotted by `qnmc run` (trace, autocorrelation and density of
/// the first ones; lp__ is always among the charts' inputs).
pub const PLOTTED_QUANTITIES: usize = 4;

/// Writes `chain_<k>.csv` per chain, `summary.json`, `summary.txt` and the
/// charts of the first [`PLOTTED_QUANTITIES`] quantities into `dir`, and
/// finishes it.
pub(crate) fn write_run(
    dir: OutputDir,
    draws: &RunDraws,
    known: Option<&KnownPosterior>,
) -> Result<(), CliError> {
    for k in 0..draws.chains.len() {
        dir.write(
            &format!("chain_{}.csv", k + 1),
            cmdstan_csv(draws, k).as_bytes(),
        )?;
    }
    dir.write("summary.json", summary_json(draws, known).as_bytes())?;
    dir.write("summary.txt", summary_table(draws, known).as_bytes())?;
    for chart in run_charts(draws, known, PLOTTED_QUANTITIES) {
        render_chart(&chart, &dir)?;
    }
    let path = dir.path().to_path_buf();
    dir.finish()?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// `qnmc run`.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let model = build_target(&args.target)?;
    let dir = open_output(&args.output)?;
    let draws = sample(model.as_ref(), &args.sampler, args.output.quiet)?;
    let known = model.known_posterior();
    print!("{}", summary_table(&draws, known.as_ref()));
    if let Some(dir) = dir {
        write_run(dir, &draws, known.as_ref())?;
    }
    Ok(())
}
