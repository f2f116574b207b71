//! [`DistributedError`]: what can stop a distributed run.

use std::fmt;

/// Why a distributed run could not start or stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum DistributedError {
    /// A setting is out of range (the message names it).
    Setting(String),
    /// A message could not be sent or received, or a peer stopped.
    Transport(String),
    /// The core refused a setting (e.g. a step-size schedule).
    Core(qnmc::Error),
    /// Draw `draw` met a non-finite value (`what`) on some rank; the chain
    /// is left at draw `draw − 1` on every rank.
    NonFinite {
        /// The draw that failed (1-based).
        draw: u64,
        /// Gradient or proposal.
        what: &'static str,
    },
}

impl fmt::Display for DistributedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DistributedError::Setting(m) => write!(f, "invalid setting: {m}"),
            DistributedError::Transport(m) => write!(f, "transport: {m}"),
            DistributedError::Core(e) => write!(f, "{e}"),
            DistributedError::NonFinite { draw, what } => {
                write!(f, "step {draw}: non-finite {what}")
            }
        }
    }
}

impl std::error::Error for DistributedError {}

impl From<qnmc::Error> for DistributedError {
    fn from(e: qnmc::Error) -> Self {
        DistributedError::Core(e)
    }
}
