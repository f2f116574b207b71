//! Errors of the command line and their exit codes.

use std::fmt;
use std::process::ExitCode;

use crate::input::InputError;
use crate::output::OutputError;
use crate::run::RunError;

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
}

impl CliError {
    /// 1 for a failed check, 2 for everything else.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            CliError::CheckFailed => ExitCode::from(1),
            _ => ExitCode::from(2),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) => f.write_str(m),
            CliError::Input(e) => write!(f, "{e}"),
            CliError::CheckFailed => f.write_str("the check failed"),
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
