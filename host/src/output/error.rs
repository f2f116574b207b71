//! [`OutputError`]: why an output file or folder could not be written.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Why writing a run's output failed. Every variant names the path involved,
/// so the message alone tells the user what to look at.
#[derive(Debug)]
pub enum OutputError {
    /// An operating-system call failed on `path`.
    Io {
        /// The file or folder the call was about.
        path: PathBuf,
        /// What qnmc was doing (e.g. "create the output folder").
        action: &'static str,
        /// The operating system's error.
        source: io::Error,
    },
    /// Without `--force`, the output folder already holds files.
    FolderNotEmpty {
        /// The output folder.
        folder: PathBuf,
        /// A few of the entries found there.
        examples: Vec<String>,
    },
    /// Without `--force`, the output folder holds the chain files of a run
    /// that stopped before it finished (interrupted with Ctrl-C, or failed
    /// after writing them): draws that are not deleted without `--force`.
    HoldsChains {
        /// The output folder.
        folder: PathBuf,
        /// The chain files found there (`chain_1.csv`, …).
        chains: Vec<String>,
    },
    /// Without `--force`, a file of that name already exists.
    FileExists {
        /// The existing file.
        path: PathBuf,
    },
    /// The file name given to [`OutputDir::write`](super::OutputDir::write)
    /// is not a plain file name (empty, a path, `.` or `..`).
    BadFileName {
        /// The output folder.
        folder: PathBuf,
        /// The rejected name.
        name: String,
    },
    /// The folder is not the output folder of a finished run (`qnmc plot`).
    NotRunOutput {
        /// The folder.
        folder: PathBuf,
        /// What is missing or wrong.
        reason: String,
    },
    /// `qnmc run --resume`: the folder does not hold a stopped run.
    NotStopped {
        /// The folder.
        folder: PathBuf,
        /// Why not.
        reason: String,
    },
    /// A chart could not be drawn.
    Render {
        /// The file that was being drawn.
        path: PathBuf,
        /// What the plotting library reported.
        message: String,
    },
}

impl OutputError {
    /// An [`OutputError::Io`] for `path`.
    pub fn io(path: &Path, action: &'static str, source: io::Error) -> Self {
        OutputError::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    }
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputError::Io {
                path,
                action,
                source,
            } => write!(f, "cannot {action} {}: {source}", path.display()),
            OutputError::FolderNotEmpty { folder, examples } => write!(
                f,
                "output folder {} is not empty (it holds {}); choose another folder \
                 or pass --force to write into it (the files an earlier qnmc run wrote \
                 there are deleted, other files are kept, files of the same name are \
                 overwritten)",
                folder.display(),
                examples.join(", ")
            ),
            OutputError::HoldsChains { folder, chains } => write!(
                f,
                "output folder {} holds the chain files of an earlier run that did not \
                 finish ({}; its INCOMPLETE file says why); they are kept: choose another \
                 folder, continue that run with `qnmc run --resume {}`, or pass --force to \
                 replace that run's files (other files are kept)",
                folder.display(),
                chains.join(", "),
                folder.display()
            ),
            OutputError::FileExists { path } => write!(
                f,
                "{} already exists; pass --force to overwrite it",
                path.display()
            ),
            OutputError::BadFileName { folder, name } => write!(
                f,
                "cannot write {name:?} into {}: not a plain file name",
                folder.display()
            ),
            OutputError::NotRunOutput { folder, reason } => write!(
                f,
                "{} is not the output folder of a finished qnmc run: {reason}",
                folder.display()
            ),
            OutputError::NotStopped { folder, reason } => write!(
                f,
                "{} does not hold a stopped run to continue: {reason}",
                folder.display()
            ),
            OutputError::Render { path, message } => {
                write!(f, "cannot draw {}: {message}", path.display())
            }
        }
    }
}

impl std::error::Error for OutputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OutputError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What cannot fail ([`InMemory`](crate::draw_values::InMemory)'s reads)
/// fails as an output error, so that one function serves values in memory
/// and values read from files.
impl From<std::convert::Infallible> for OutputError {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}
