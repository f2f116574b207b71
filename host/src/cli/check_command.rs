//! `qnmc check`: sample (or read CmdStan CSVs) and compare with the target's
//! known posterior, or with a long HMC reference run when none is known.

use std::path::PathBuf;

use super::args::CheckArgs;
use super::run_command::{open_output, sample, write_run};
use super::{CliError, build_target};
use crate::draws::RunDraws;
use crate::model::Model;
use crate::output::{read_cmdstan_csv, run_draws_from_cmdstan};
use crate::run::{Progress, ReferenceSettings, check as check_draws, reference_posterior};

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

/// `qnmc check`.
pub fn check(args: &CheckArgs) -> Result<(), CliError> {
    let model: Box<dyn Model> = build_target(&args.target)?;
    let known = match model.known_posterior() {
        Some(k) => k,
        None => {
            let reference = ReferenceSettings {
                draws: args.reference_draws,
                ..ReferenceSettings::default()
            };
            let progress = Progress::new(
                (reference.chains * (reference.warmup + reference.draws)) as u64,
                "reference HMC run",
                args.output.quiet,
            );
            let known = reference_posterior(model.as_ref(), &reference, &progress);
            progress.finish();
            known?
        }
    };
    let draws = if args.draws_files.is_empty() {
        let dir = open_output(&args.output)?;
        let draws = sample(model.as_ref(), &args.sampler, args.output.quiet)?;
        if let Some(dir) = dir {
            write_run(dir, &draws, Some(&known))?;
        }
        draws
    } else {
        read_draws(&args.draws_files)?
    };
    let report = check_draws(&draws, &known);
    println!(
        "check: {} on {} ({} chains x {} draws)",
        draws.sampler,
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
