//! `qnmc run --resume FOLDER`: continue a run that was stopped while it
//! wrote into FOLDER (Ctrl-C, SIGTERM, a kill, a closed terminal), from its
//! chains' checkpoints (`output::CheckpointFiles`), with the command it was
//! started with. The continued run ends with the files of the run that was
//! never stopped, bit for bit, timings aside.

use std::ffi::OsString;
use std::path::Path;

use super::CliError;
use super::args::{Command, RunArgs};
use super::run_command::run_from;
use qnmc_host::output::CheckpointFiles;

/// The options `--resume` takes beside itself.
const RESUME_OPTIONS: [&str; 3] = ["resume", "quiet", "checkpoint_seconds"];

/// Reads the stopped run's command in `folder` and runs it on from its
/// checkpoints (`args` is the `--resume` command's own).
pub(crate) fn resume(folder: &Path, args: &RunArgs) -> Result<(), CliError> {
    if let Some(other) = args
        .given
        .iter()
        // clap also reports the groups of the options given (`OutputArgs`).
        .filter(|g| g.starts_with(|c: char| c.is_ascii_lowercase()))
        .find(|g| !RESUME_OPTIONS.contains(&g.as_str()))
    {
        return Err(CliError::Usage(format!(
            "--resume continues a run with the options it was started with: --{} cannot \
             be given with it (only --quiet and --checkpoint-seconds can)",
            other.replace('_', "-")
        )));
    }
    let folder = folder
        .canonicalize()
        .map_err(|e| CliError::Usage(format!("cannot open {}: {e}", folder.display())))?;
    let command = CheckpointFiles::command_of(&folder).map_err(CliError::Usage)?;
    // Relative paths in the command (the model, its data, an init file)
    // are the run's working folder's.
    std::env::set_current_dir(&command.folder).map_err(|e| {
        CliError::Usage(format!(
            "the stopped run was started in {}, which cannot be entered: {e}",
            command.folder.display()
        ))
    })?;
    let mut line = vec![OsString::from("qnmc")];
    line.extend(command.arguments.iter().map(OsString::from));
    let parsed = super::parse(&line).map_err(|e| {
        CliError::Usage(format!(
            "the stopped run's command (qnmc {}) does not parse: {e}",
            command.arguments.join(" ")
        ))
    })?;
    let Command::Run(mut stopped) = parsed.command else {
        return Err(CliError::Usage(format!(
            "the command recorded in {} is not a `qnmc run`",
            folder.display()
        )));
    };
    stopped.resume = None;
    stopped.output.quiet |= args.output.quiet;
    if args.given.iter().any(|g| g == "checkpoint_seconds") {
        stopped.checkpoint_seconds = args.checkpoint_seconds;
    }
    if !stopped.output.quiet {
        eprintln!(
            "continuing the run in {}: qnmc {}",
            folder.display(),
            command.arguments.join(" ")
        );
    }
    run_from(&stopped, Some(&folder))
}
