//! [`DrawSink`]: where each chain's draws go while the chain makes them, so
//! that a run's draws are on disk as they come (`qnmc run --output` writes
//! each chain's CmdStan CSV this way) rather than only at its end.

use super::RunSettings;
use crate::draws::{ChainDraws, RunDraws};

/// An error of a [`DrawSink`] or [`ChainSink`] (a file that could not be
/// written); it ends the run with
/// [`RunError::Output`](super::RunError::Output).
pub type SinkError = Box<dyn std::error::Error + Send + Sync>;

/// Opens one [`ChainSink`] per chain of a run.
pub trait DrawSink: Sync {
    /// The sink of the chain `chain` (its id and seed set, no draws yet) of
    /// a run with `settings` described by `run`: its target, sampler,
    /// settings and quantity names, with no chains (they are being drawn).
    fn open_chain(
        &self,
        run: &RunDraws,
        settings: &RunSettings,
        chain: &ChainDraws,
    ) -> Result<Box<dyn ChainSink>, SinkError>;
}

/// Receives one chain's draws as they are made.
pub trait ChainSink: Send {
    /// `chain` has just recorded a kept draw, its last; its warm-up (the
    /// saved warm-up draws, the adapted metric) is complete.
    fn kept(&mut self, chain: &ChainDraws) -> Result<(), SinkError>;
    /// `chain` ended: ran its draws, or stopped early
    /// ([`ChainDraws::interrupted`]); its times are set.
    fn finished(self: Box<Self>, chain: &ChainDraws) -> Result<(), SinkError>;
}
