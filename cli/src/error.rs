//! Errors of the command line and their exit codes.

use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;

use qnmc_host::draws::Interruption;
use qnmc_host::input::InputError;
use qnmc_host::output::OutputError;
use qnmc_host::run::{RunError, StopReason};

/// Why a command did not succeed.
#[derive(Debug)]
pub enum CliError {
    /// Bad usage or input: exit code 2.
    Usage(String),
    /// A data file is wrong: `FILE:LINE:COLUMN: message`, exit code 2.
    Input(InputError),
    /// `qnmc check` ran and the draws failed it: exit code 1 (the report was
    /// already printed).
    CheckFailed,
    /// `qnmc run` finished but its draws are unusable (every transition
    /// divergent, a chain that never moved, non-finite `lp__`, chains that never
    /// met): exit code 3.
    /// The reasons were already printed.
    Unusable,
    /// `qnmc run --strict` finished with this many warnings: exit code 4.
    /// The warnings were already printed.
    Warnings(usize),
    /// `qnmc reproduce` wrote its reports but skipped these parts (data not
    /// found): exit code 5.
    Skipped(Vec<String>),
    /// `qnmc run` was stopped by SIGINT (exit code 130) or SIGTERM (143)
    /// and kept the draws made until then: printed, and written into
    /// `folder` with `--output`.
    Interrupted {
        /// How far the run got.
        interruption: Interruption,
        /// The output folder the draws were written into, if any.
        folder: Option<PathBuf>,
    },
}

/// Exit code of a failed `qnmc check`.
pub const EXIT_CHECK_FAILED: u8 = 1;
/// Exit code of a usage or input error (also clap's).
pub const EXIT_USAGE: u8 = 2;
/// Exit code of a run whose draws are unusable.
pub const EXIT_UNUSABLE: u8 = 3;
/// Exit code of `--strict` with at least one warning.
pub const EXIT_WARNINGS: u8 = 4;
/// Exit code of `qnmc reproduce` when parts were skipped (data not found).
pub const EXIT_SKIPPED: u8 = 5;
/// Exit code of a run stopped by SIGINT (Ctrl-C): 128 + 2, the shells'
/// convention for a process ended by that signal.
pub const EXIT_INTERRUPTED: u8 = 130;
/// Exit code of a run stopped by SIGTERM: 128 + 15.
pub const EXIT_TERMINATED: u8 = 143;

impl CliError {
    /// The process exit code: [`EXIT_CHECK_FAILED`], [`EXIT_UNUSABLE`],
    /// [`EXIT_WARNINGS`], [`EXIT_SKIPPED`], [`EXIT_INTERRUPTED`],
    /// [`EXIT_TERMINATED`], else [`EXIT_USAGE`].
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(match self {
            CliError::CheckFailed => EXIT_CHECK_FAILED,
            CliError::Unusable => EXIT_UNUSABLE,
            CliError::Warnings(_) => EXIT_WARNINGS,
            CliError::Skipped(_) => EXIT_SKIPPED,
            CliError::Interrupted { interruption, .. } => match interruption.reason {
                StopReason::Terminate => EXIT_TERMINATED,
                StopReason::Interrupt | StopReason::Requested => EXIT_INTERRUPTED,
            },
            CliError::Usage(_) | CliError::Input(_) => EXIT_USAGE,
        })
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) => f.write_str(m),
            CliError::Input(e) => write!(f, "{e}"),
            CliError::CheckFailed => f.write_str("the check failed"),
            CliError::Unusable => f.write_str("the run is unusable (see the reasons above)"),
            CliError::Warnings(n) => write!(
                f,
                "--strict: the run has {n} warning{} (see above)",
                if *n == 1 { "" } else { "s" }
            ),
            CliError::Skipped(parts) => write!(
                f,
                "{} part{} skipped (the reports say so): {}",
                parts.len(),
                if parts.len() == 1 { " was" } else { "s were" },
                parts.join("; ")
            ),
            CliError::Interrupted {
                interruption,
                folder,
            } => {
                write!(
                    f,
                    "interrupted by {}: {} of {} iterations ran; ",
                    interruption.reason, interruption.iterations, interruption.planned
                )?;
                match folder {
                    Some(folder) => write!(f, "the draws so far are in {}", folder.display()),
                    None => f.write_str("the draws so far were not written (no --output)"),
                }
            }
        }
    }
}

impl std::error::Error for CliError {}

impl From<InputError> for CliError {
    fn from(e: InputError) -> Self {
        CliError::Input(e)
    }
}

impl From<OutputError> for CliError {
    fn from(e: OutputError) -> Self {
        CliError::Usage(e.to_string())
    }
}

impl From<RunError> for CliError {
    fn from(e: RunError) -> Self {
        CliError::Usage(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupted_run_exits_with_the_signals_code_and_says_where_its_draws_are() {
        let interrupted = |reason, folder: Option<&str>| CliError::Interrupted {
            interruption: Interruption {
                reason,
                iterations: 1234,
                planned: 4000,
                kept: vec![100, 0],
            },
            folder: folder.map(PathBuf::from),
        };
        let e = interrupted(StopReason::Interrupt, Some("out"));
        assert_eq!(e.exit_code(), ExitCode::from(EXIT_INTERRUPTED));
        assert_eq!(
            e.to_string(),
            "interrupted by SIGINT: 1234 of 4000 iterations ran; the draws so far are in out"
        );
        let e = interrupted(StopReason::Terminate, None);
        assert_eq!(e.exit_code(), ExitCode::from(EXIT_TERMINATED));
        assert_eq!(
            e.to_string(),
            "interrupted by SIGTERM: 1234 of 4000 iterations ran; the draws so far were not \
             written (no --output)"
        );
        assert_eq!((EXIT_INTERRUPTED, EXIT_TERMINATED), (128 + 2, 128 + 15));
    }
}
