//! `qnmc run`: sample a target, write the files, print the summary.

use std::path::Path;

use super::args::{OutputArgs, RunArgs, SamplerArgs};
use super::{CliError, build_target, run_settings};
use crate::draws::RunDraws;
use crate::model::{KnownPosterior, Model};
use crate::output::{
    OutputDir, PlotSelection, summary_table, write_model_files, write_run_files_plotting,
};
use crate::run::{Progress, run as run_chains};

/// Runs the sampler on `model`, with a progress bar unless `quiet`.
pub(crate) fn sample(
    model: &dyn Model,
    sampler: &SamplerArgs,
    quiet: bool,
) -> Result<RunDraws, CliError> {
    if !sampler.lp.is_empty() {
        crate::run::LpMode::from_words(&sampler.lp).map_err(CliError::Usage)?;
    }
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

/// Writes the run's files ([`write_run_files_plotting`]: `chain_<k>.csv` per
/// chain, `summary.json`, `summary.txt`, the charts of the slowest-mixing
/// quantities and lp__, [`PlotSelection::default`]) into `dir`, and finishes it.
pub(crate) fn write_run(
    dir: OutputDir,
    draws: &RunDraws,
    known: Option<&KnownPosterior>,
) -> Result<(), CliError> {
    write_run_plotting(dir, draws, known, &PlotSelection::default(), None)
}

/// [`write_run`] with the charts `plots` selects (`qnmc run --plot`) and,
/// given the `model`, its `model.json` and `coefficients.csv`
/// ([`write_model_files`]).
pub(crate) fn write_run_plotting(
    dir: OutputDir,
    draws: &RunDraws,
    known: Option<&KnownPosterior>,
    plots: &PlotSelection,
    model: Option<&dyn Model>,
) -> Result<(), CliError> {
    write_run_files_plotting(draws, known, &dir, plots)?;
    if let Some(model) = model {
        write_model_files(model, draws, &dir)?;
    }
    let path = dir.path().to_path_buf();
    dir.finish()?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// `qnmc run`.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let model = build_target(&args.target)?;
    let plots = PlotSelection::from_words(&args.plot);
    plots
        .validate(&model.output_names())
        .map_err(CliError::Usage)?;
    let dir = open_output(&args.output)?;
    let draws = sample(model.as_ref(), &args.sampler, args.output.quiet)?;
    let known = model.known_posterior();
    print!("{}", summary_table(&draws, known.as_ref()));
    if let Some(dir) = dir {
        write_run_plotting(dir, &draws, known.as_ref(), &plots, Some(model.as_ref()))?;
    }
    Ok(())
}
