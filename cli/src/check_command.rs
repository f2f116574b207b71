//! `qnmc check`: sample (or read CmdStan CSVs) and compare with the target's
//! known posterior, or with a long reference run when none is known
//! ([`qnmc_host::run::reference_run`]; a reference run that did not mix is
//! reported on stderr at once, and fails the check when R̂ > 1.01 or a bulk
//! ESS < 400).
//!
//! Everything that can be refused is checked before any reference run or
//! sampling: options that do not apply, settings, the output folder, and the
//! draws files' quantities against the target's (exit code 2).

use std::path::PathBuf;

use super::CliError;
use super::applicability::{NOT_WITH_DRAWS_FILES, flag};
use super::args::CheckArgs;
use super::run_command::{
    check_output, report_health, sample, target_for, validate_sampler, write_run,
};
use qnmc_host::draws::RunDraws;
use qnmc_host::model::Model;
use qnmc_host::output::{read_cmdstan_csv, run_draws_from_cmdstan, summarize_run};
use qnmc_host::run::check::{SG_BIAS_TOLERANCE, check_with_tolerance};
use qnmc_host::run::{Progress, ReferenceMixing, ReferenceSettings, reference_run, sampler_label};

/// Why `qnmc check --strict` is refused.
const STRICT_IS_FOR_RUN: &str = "--strict is an option of `qnmc run` (exit code 4 when the run has \
warnings); `qnmc check` has none: it prints the run's warnings and fails (exit code 1) when the \
draws disagree with the posterior";

/// Reads CmdStan CSV files into one run (one chain per file).
fn read_draws(files: &[PathBuf]) -> Result<RunDraws, CliError> {
    let mut parsed = Vec::with_capacity(files.len());
    for file in files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", file.display())))?;
        let draws = read_cmdstan_csv(&text).map_err(|e| {
            let place = match e.column {
                Some(c) => format!("{}:{c}", e.line),
                None => e.line.to_string(),
            };
            CliError::Usage(format!("{}:{place}: {}", file.display(), e.message))
        })?;
        parsed.push(draws);
    }
    run_draws_from_cmdstan(&parsed).map_err(CliError::Usage)
}

/// The draws files must report the target's quantities: same count (the
/// dimension), same names when the files name them as the target does.
fn check_quantities(
    draws: &RunDraws,
    model: &dyn Model,
    files: &[PathBuf],
) -> Result<(), CliError> {
    let expected = model.output_names();
    let first = files
        .first()
        .map_or_else(String::new, |f| f.display().to_string());
    if draws.names.len() != expected.len() {
        return Err(CliError::Usage(format!(
            "{first}: the draws have {} quantities ({}) but target `{}` has {} ({})",
            draws.names.len(),
            draws.names.join(", "),
            model.name(),
            expected.len(),
            expected.join(", ")
        )));
    }
    Ok(())
}

/// `qnmc check`.
pub fn check(args: &CheckArgs) -> Result<(), CliError> {
    if args.strict {
        return Err(CliError::Usage(STRICT_IS_FOR_RUN.into()));
    }
    let model: Box<dyn Model> = target_for(&args.target, &args.given)?;
    let from_files = !args.draws_files.is_empty();
    let mut output = None;
    let read = if from_files {
        if let Some(id) = args
            .given
            .iter()
            .find(|id| NOT_WITH_DRAWS_FILES.contains(&id.as_str()))
        {
            return Err(CliError::Usage(format!(
                "{} does not apply with --draws-files: the draws are read, not sampled",
                flag(id)
            )));
        }
        let draws = read_draws(&args.draws_files)?;
        check_quantities(&draws, model.as_ref(), &args.draws_files)?;
        Some(draws)
    } else {
        validate_sampler(model.as_ref(), &args.sampler, &args.given)?;
        output = check_output(&args.output)?;
        None
    };
    let mut reference_mixing: Option<ReferenceMixing> = None;
    let known = match model.known_posterior() {
        Some(k) => {
            if args.given.iter().any(|id| id == "reference_draws") {
                return Err(CliError::Usage(format!(
                    "--reference-draws does not apply to --target {}: its posterior is known ({}), \
                     no reference run is made",
                    args.target.target, k.source
                )));
            }
            k
        }
        None => {
            let reference = ReferenceSettings {
                draws: args.reference_draws,
                ..ReferenceSettings::default()
            };
            let progress = Progress::new(
                (reference.chains * (reference.warmup + reference.draws)) as u64,
                "reference run",
                args.output.quiet,
            );
            let made = reference_run(model.as_ref(), &reference, &progress);
            progress.finish();
            let made = made?;
            // Said now, before the run (which cannot pass against a
            // reference that is not usable).
            if !made.mixing.usable() {
                eprintln!(
                    "warning: the reference run ({}) did not mix; the check will fail. {}",
                    made.posterior.source,
                    made.mixing.summary()
                );
            } else if !made.mixing.mixed() {
                eprintln!(
                    "warning: the reference run ({}) has fewer than 1000 effective draws in some \
                     quantity; its MCSE enters every z-score. {}",
                    made.posterior.source,
                    made.mixing.summary()
                );
            }
            reference_mixing = Some(made.mixing);
            made.posterior
        }
    };
    // Draws this command sampled with a sampler that has no Metropolis test
    // are checked with the stated bias tolerance; CSVs read from elsewhere
    // exactly.
    let tolerance =
        (read.is_none() && !args.sampler.sampler.is_exact()).then_some(SG_BIAS_TOLERANCE);
    let draws = match read {
        Some(draws) => {
            // The same diagnostics as for a run of this command (unusable
            // chains, warnings), printed before the check's table.
            report_health(&draws, &summarize_run(&draws, Some(&known)));
            draws
        }
        None => {
            let draws = sample(model.as_ref(), &args.sampler, args.output.quiet)?;
            let summary = summarize_run(&draws, Some(&known));
            report_health(&draws, &summary);
            if let Some(path) = &output {
                write_run(path, args.output.force, &draws, Some(&known), &summary)?;
            }
            draws
        }
    };
    let mut report = check_with_tolerance(&draws, &known, tolerance);
    report.reference_mixing = reference_mixing;
    println!(
        "check: {} on {} ({} chains x {} draws)",
        sampler_label(&draws.sampler, draws.metric),
        model.name(),
        draws.chains.len(),
        draws.chains.first().map_or(0, |c| c.len())
    );
    print!("{}", report.table());
    if report.passed() {
        Ok(())
    } else {
        Err(CliError::CheckFailed)
    }
}
