//! `qnmc run`: sample a target, write the files, print the summary and the
//! run's diagnostics (warnings; unusable runs exit with code 3, `--strict`
//! turns warnings into exit code 4).
//!
//! Everything that can be refused is checked before anything is created:
//! options that do not apply, settings, the target, and whether the output
//! folder is available, so a refused run leaves nothing behind. The folder
//! is then created, marked INCOMPLETE, and each chain's CSV grows in it as
//! the chain draws (`output::ChainCsvFiles`); a run that fails before any
//! draw leaves nothing either ([`OutputDir::abandon`]), and the same command
//! can be run again after the fix.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::applicability::{model_option_error, sampler_option_error, target_option_error};
use super::args::{OutputArgs, RunArgs, SamplerArgs, TargetArgs};
use super::plot_command::shell_word;
use super::{CliError, build_target, run_settings};
use qnmc_host::draw_values::hold_in_memory;
use qnmc_host::draws::RunDraws;
use qnmc_host::fit::{Sampling, run_progress};
use qnmc_host::model::{KnownPosterior, Model};
use qnmc_host::output::{
    ChainCsvFiles, CheckpointFiles, OutputDir, PlotSelection, RunCommand, RunHealth, RunSummary,
    RunValues, ValueSpills, assess_run, summarize_run_from, summary_table_with,
    write_model_files_from, write_run_files_after_chains, write_run_files_summarized,
};
use qnmc_host::run::{DrawSink, PilotLengths, refused_defaults};
use qnmc_stan::StanModel;

/// The error of `run` or `check` given neither `--target` nor `--model`:
/// it names both ways to give a posterior.
pub(crate) const NO_POSTERIOR: &str = "no posterior given: name a built-in target with \
--target NAME (`qnmc list` lists them), or a compiled Stan model with --model LIB.so \
--data DATA.json";

/// Builds the target after checking that every given target option applies
/// to it.
pub(crate) fn target_for(args: &TargetArgs, given: &[String]) -> Result<Box<dyn Model>, CliError> {
    if args.model.is_none() && args.target.is_empty() {
        return Err(CliError::Usage(NO_POSTERIOR.into()));
    }
    if let Some(library) = &args.model {
        if let Some(e) = model_option_error(given) {
            return Err(CliError::Usage(e));
        }
        let mut model = StanModel::load(library, args.data.as_deref())
            .map_err(|e| CliError::Usage(e.to_string()))?;
        if let Some(init) = &args.init {
            let text = std::fs::read_to_string(init).map_err(|e| {
                CliError::Usage(format!("cannot read the init file {}: {e}", init.display()))
            })?;
            model = model
                .unconstrain_json(&text)
                .and_then(|point| model.start_at(point))
                .map_err(|e| CliError::Usage(format!("{}: {e}", init.display())))?;
        }
        return Ok(Box::new(model));
    }
    if let Some(e) = target_option_error(&args.target, given) {
        return Err(CliError::Usage(e));
    }
    build_target(args)
}

/// Checks the sampler options for `model` (applicability, ranges, the
/// dimension) without running anything.
pub(crate) fn validate_sampler(
    model: &dyn Model,
    sampler: &SamplerArgs,
    given: &[String],
) -> Result<(), CliError> {
    if let Some(e) = sampler_option_error(sampler, model.data_size(), given) {
        return Err(CliError::Usage(e));
    }
    if let Some(e) = refused_defaults(
        sampler.sampler,
        sampler.thin.is_some(),
        model.dimension(),
        model.data_size(),
    ) {
        return Err(CliError::Usage(e));
    }
    let settings = run_settings(sampler);
    settings
        .validate(sampler.sampler)
        .and_then(|()| settings.validate_dimension(sampler.sampler, model.dimension()))
        .map_err(CliError::Usage)
}

/// Runs the sampler on `model`, with a progress bar unless `quiet`: the
/// library's [`Sampling`] with the options' settings, so that the CLI and
/// the library cannot drift apart.
pub(crate) fn sample(
    model: &dyn Model,
    sampler: &SamplerArgs,
    quiet: bool,
) -> Result<RunDraws, CliError> {
    sample_into(model, sampler, quiet, None)
}

/// [`sample`], giving each chain's draws to `sink` as they are made.
fn sample_into(
    model: &dyn Model,
    sampler: &SamplerArgs,
    quiet: bool,
    sink: Option<&dyn DrawSink>,
) -> Result<RunDraws, CliError> {
    if !sampler.lp.is_empty() {
        qnmc_host::run::LpMode::from_words(&sampler.lp).map_err(CliError::Usage)?;
    }
    let settings = run_settings(sampler);
    settings
        .validate(sampler.sampler)
        .map_err(CliError::Usage)?;
    let lengths = PilotLengths {
        warmup: sampler.warmup.is_none(),
        thin: sampler.thin.is_none(),
    };
    let sampling = Sampling::from_settings(sampler.sampler, settings, lengths);
    let drawn = sampling.draw(
        model,
        |settings, pilot, total| {
            if let Some(chosen) = pilot {
                if !quiet {
                    eprintln!("{}: {chosen}", sampler.sampler);
                }
                if let Some(w) = chosen.too_slow_warning() {
                    eprintln!("warning: {}: {w}", sampler.sampler);
                }
            }
            run_progress(sampler.sampler, settings, model, total, quiet)
                .with_stop(super::interrupt::stop_flag())
        },
        sink,
    )?;
    // A model's failed evaluations (`RunDraws::evaluation_failures`) are
    // reported with the health checks, after the summary table.
    Ok(drawn.draws)
}

/// Checks that the output folder can be used, creating nothing (so that a
/// clash fails before sampling and a refused run leaves no folder).
pub(crate) fn check_output(output: &OutputArgs) -> Result<Option<PathBuf>, CliError> {
    match output.output.as_deref() {
        None => Ok(None),
        Some(p) => {
            OutputDir::check_available(p, output.force)?;
            Ok(Some(p.to_path_buf()))
        }
    }
}

/// Creates the output folder and writes the run's files
/// ([`write_run_files_summarized`]: `chain_<k>.csv` per chain,
/// `summary.json`, `summary.txt`, the charts of the slowest-mixing quantities
/// and lp__, [`PlotSelection::default`]), then finishes it: what `check
/// --output` and `demo` write. `summary` is [`summarize_run`]`(draws,
/// known)`, computed once by the caller.
pub(crate) fn write_run(
    path: &Path,
    force: bool,
    draws: &RunDraws,
    known: Option<&KnownPosterior>,
    summary: &RunSummary,
) -> Result<(), CliError> {
    let plots = PlotSelection::default();
    write_run_plotting(path, force, draws, known, summary, &plots, None, true)
}

/// [`write_run`] with the charts `plots` selects (`qnmc run --plot`) and,
/// given the `model`, its `model.json` and `coefficients.csv`
/// ([`write_model_files`]). A run that is not `usable` finishes the folder
/// with [`OutputDir::finish_unusable`], so that the same command, fixed,
/// may replace it without `--force`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_run_plotting(
    path: &Path,
    force: bool,
    draws: &RunDraws,
    known: Option<&KnownPosterior>,
    summary: &RunSummary,
    plots: &PlotSelection,
    model: Option<&dyn Model>,
    usable: bool,
) -> Result<(), CliError> {
    let dir = OutputDir::create(path, force)?;
    write_run_files_summarized(draws, known, &dir, plots, summary)?;
    finish_run_folder(dir, draws, &RunValues::InMemory, model, usable)
}

/// Writes the model's files into `dir` (given the `model`; the values read
/// from `values`), marks the folder finished (unusable unless `usable`)
/// and says so.
fn finish_run_folder(
    dir: OutputDir,
    draws: &RunDraws,
    values: &RunValues<'_>,
    model: Option<&dyn Model>,
    usable: bool,
) -> Result<(), CliError> {
    if let Some(model) = model {
        write_model_files_from(model, draws, values, &dir)?;
    }
    let path = dir.path().to_path_buf();
    if usable {
        dir.finish()?;
    } else {
        dir.finish_unusable()?;
    }
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// Prints the run's diagnostics (one line each, on stderr) and returns them;
/// `summary` is [`summarize_run`] of `draws`.
pub(crate) fn report_health(draws: &RunDraws, summary: &RunSummary) -> RunHealth {
    let health = assess_run(draws, summary);
    for line in health.lines() {
        eprintln!("{line}");
    }
    health
}

/// `qnmc run`.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    match &args.resume {
        Some(folder) => super::resume_command::resume(folder, args),
        None => run_from(args, None),
    }
}

/// `qnmc run` with `args`, or, given the folder of a stopped run in
/// `resume` (and that run's own `args`), its continuation.
pub(crate) fn run_from(args: &RunArgs, resume: Option<&Path>) -> Result<(), CliError> {
    let model = target_for(&args.target, &args.given)?;
    let plots = check_run_options(model.as_ref(), args)?;
    let output = output_folder(args, resume)?;
    // From here Ctrl-C and SIGTERM end the chains and keep their draws.
    super::interrupt::install();
    let (dir, checkpoints) = open_output(args, output.as_deref(), resume)?;
    // Each chain's values go to a scratch file as they are drawn (in the
    // output folder, else in the system's temporary folder) and leave
    // memory: the summaries read them back a block of columns at a time.
    // Without a scratch folder the run keeps them in memory.
    let spills = match &dir {
        Some(dir) => Some(ValueSpills::beside(dir)?),
        None => ValueSpills::temporary().ok(),
    };
    let values = spills
        .as_ref()
        .map_or(RunValues::InMemory, RunValues::Spilled);
    let sampled = sample_to_files(
        model.as_ref(),
        args,
        dir.as_ref(),
        checkpoints.as_ref(),
        spills.as_ref(),
    );
    let mut draws = match sampled {
        Ok(draws) => draws,
        Err(e) => {
            drop(spills);
            release_output(dir, checkpoints, resume.is_some(), &e);
            return Err(e);
        }
    };
    let known = model.known_posterior();
    if let Some(interruption) = draws.interrupted.clone() {
        return Err(super::interrupted_run::conclude(
            draws,
            &interruption,
            known.as_ref(),
            dir,
            &values,
            checkpoints.is_some(),
        ));
    }
    // The diagnostics of every quantity, computed once for the printed
    // summary, the health checks and the files.
    let summary = summarize_run_from(&draws, &values, known.as_ref())?;
    print!("{}", summary_table_with(&draws, known.as_ref(), &summary));
    let health = report_health(&draws, &summary);
    if let (Some(path), Some(dir)) = (output, dir) {
        if plots != PlotSelection::None {
            // The charts take their quantities' draws from memory.
            hold_in_memory(&mut draws, &values)?;
        }
        write_run_files_after_chains(&draws, known.as_ref(), &dir, &plots, &summary)?;
        finish_run_folder(dir, &draws, &values, Some(model.as_ref()), health.usable())?;
        if let Some(checkpoints) = checkpoints {
            checkpoints.remove()?;
        }
        if args.plot.is_empty() {
            eprintln!(
                "draw the charts with: qnmc plot {}",
                shell_word(&path.to_string_lossy())
            );
        }
    }
    run_outcome(&health, args.strict)
}

/// The checks of `run`'s options that need the target, before anything is
/// created: the sampler options ([`validate_sampler`]), the charts
/// (`--plot`) and `--checkpoint-seconds`. Returns the charts to draw.
fn check_run_options(model: &dyn Model, args: &RunArgs) -> Result<PlotSelection, CliError> {
    validate_sampler(model, &args.sampler, &args.given)?;
    // No charts unless asked: drawing them took longer than sampling a
    // small model; `qnmc plot FOLDER` draws them from the files.
    let plots = if args.plot.is_empty() {
        PlotSelection::None
    } else {
        PlotSelection::from_words(&args.plot)
    };
    plots
        .validate(&model.output_names())
        .map_err(CliError::Usage)?;
    if !(args.checkpoint_seconds.is_finite() && args.checkpoint_seconds >= 0.0) {
        return Err(CliError::Usage(format!(
            "--checkpoint-seconds must be a number of seconds, 0 or more (got {})",
            args.checkpoint_seconds
        )));
    }
    Ok(plots)
}

/// The output folder: the stopped run's given `resume`, else `--output`
/// if it can be used ([`check_output`], creating nothing); refuses
/// `--checkpoint-seconds` without one.
fn output_folder(args: &RunArgs, resume: Option<&Path>) -> Result<Option<PathBuf>, CliError> {
    let output = match resume {
        Some(folder) => Some(folder.to_path_buf()),
        None => check_output(&args.output)?,
    };
    if output.is_none() && args.given.iter().any(|g| g == "checkpoint_seconds") {
        return Err(CliError::Usage(
            "--checkpoint-seconds applies with --output DIR (the checkpoints are saved there)"
                .into(),
        ));
    }
    Ok(output)
}

/// Opens the folder `output` for the chain files, which are written as the
/// chains draw: it exists from the start, marked INCOMPLETE until the run
/// ends. Beside them the chains save checkpoints, from which `--resume`
/// continues: a new run starts them (when it knows its command line), a
/// continued one (`resume`) takes over the stopped run's.
fn open_output(
    args: &RunArgs,
    output: Option<&Path>,
    resume: Option<&Path>,
) -> Result<(Option<OutputDir>, Option<CheckpointFiles>), CliError> {
    let interval = Duration::from_secs_f64(args.checkpoint_seconds);
    Ok(match (output, resume) {
        (Some(path), Some(_)) => {
            let dir = OutputDir::continue_stopped(path)?;
            (Some(dir), Some(CheckpointFiles::resume(path, interval)?))
        }
        (Some(path), None) => {
            let dir = OutputDir::create(path, args.output.force)?;
            let command = RunCommand {
                folder: std::env::current_dir().unwrap_or_default(),
                arguments: args.command_line.clone(),
            };
            let checkpoints = if command.arguments.is_empty() {
                None
            } else {
                Some(CheckpointFiles::start(&dir, &command, interval)?)
            };
            (Some(dir), checkpoints)
        }
        (None, _) => (None, None),
    })
}

/// Samples `model` with `args`' sampler options, each chain's draws going
/// as they are made to its CSV file in `dir` (with the `checkpoints`) and
/// its values to the scratch files `spills`, whichever are given.
fn sample_to_files(
    model: &dyn Model,
    args: &RunArgs,
    dir: Option<&OutputDir>,
    checkpoints: Option<&CheckpointFiles>,
    spills: Option<&ValueSpills>,
) -> Result<RunDraws, CliError> {
    let files = dir.map(|dir| match checkpoints {
        Some(checkpoints) => ChainCsvFiles::new(dir).with_checkpoints(checkpoints),
        None => ChainCsvFiles::new(dir),
    });
    let sink: Option<Box<dyn DrawSink + '_>> = match (files, spills) {
        (Some(files), Some(spills)) => Some(Box::new((files, spills))),
        (Some(files), None) => Some(Box::new(files)),
        (None, Some(spills)) => Some(Box::new(spills)),
        (None, None) => None,
    };
    sample_into(model, &args.sampler, args.output.quiet, sink.as_deref())
}

/// After sampling failed with `e`: a continued run's folder (`resumed`)
/// stays as it was, to be tried again; a new run's folder goes as it came
/// ([`OutputDir::abandon`]), with its checkpoints if nothing drawn was
/// written.
fn release_output(
    dir: Option<OutputDir>,
    checkpoints: Option<CheckpointFiles>,
    resumed: bool,
    e: &CliError,
) {
    if let Some(dir) = dir {
        if resumed {
            // The stopped run stays as it was, to be tried again.
            if let Some(checkpoints) = &checkpoints {
                let _ = checkpoints.give_back();
            }
            let _ = dir.finish_interrupted(&format!("continuing it failed: {e}"));
        } else {
            // Nothing drawn was written: the folder goes as it
            // came.
            if dir.listed_files().is_empty() {
                if let Some(checkpoints) = checkpoints {
                    let _ = checkpoints.remove();
                }
            }
            let _ = dir.abandon();
        }
    }
}

/// How a finished run ends: an error for an unusable run
/// ([`CliError::Unusable`]), and with `strict` for warnings.
fn run_outcome(health: &RunHealth, strict: bool) -> Result<(), CliError> {
    if !health.usable() {
        Err(CliError::Unusable)
    } else if strict && !health.warnings.is_empty() {
        Err(CliError::Warnings(health.warnings.len()))
    } else {
        Ok(())
    }
}
