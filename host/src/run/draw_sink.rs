//! [`DrawSink`]: where each chain's draws go while the chain makes them, so
//! that a run's draws are on disk as they come (`qnmc run --output` writes
//! each chain's CmdStan CSV this way) rather than only at its end.

use super::RunSettings;
use super::checkpoint::CheckpointStore;
pub use super::sink_error::SinkError;
use crate::draws::{ChainDraws, RunDraws};

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

    /// Whether the sink keeps the values of the draws it is given, so that
    /// a chain may drop them from memory once given
    /// ([`ChainDraws::values_from_row`]); `false` unless it says so.
    fn keeps_values(&self) -> bool {
        false
    }

    /// Where the chains save their checkpoints, and find those of the run
    /// they continue (`qnmc run --output` keeps them beside the chain
    /// files, whose rows they count); `None` unless the sink says so.
    fn checkpoints(&self) -> Option<&dyn CheckpointStore> {
        None
    }
}

/// A borrowed sink is a sink.
impl<T: DrawSink + ?Sized> DrawSink for &T {
    fn open_chain(
        &self,
        run: &RunDraws,
        settings: &RunSettings,
        chain: &ChainDraws,
    ) -> Result<Box<dyn ChainSink>, SinkError> {
        (**self).open_chain(run, settings, chain)
    }

    fn keeps_values(&self) -> bool {
        (**self).keeps_values()
    }

    fn checkpoints(&self) -> Option<&dyn CheckpointStore> {
        (**self).checkpoints()
    }
}

/// Both sinks take every chain's draws (`qnmc run --output`: the chain
/// files and the values' spill); the values are kept if either keeps them.
impl<A: DrawSink, B: DrawSink> DrawSink for (A, B) {
    fn open_chain(
        &self,
        run: &RunDraws,
        settings: &RunSettings,
        chain: &ChainDraws,
    ) -> Result<Box<dyn ChainSink>, SinkError> {
        Ok(Box::new(BothChainSinks(
            self.0.open_chain(run, settings, chain)?,
            self.1.open_chain(run, settings, chain)?,
        )))
    }

    fn keeps_values(&self) -> bool {
        self.0.keeps_values() || self.1.keeps_values()
    }

    fn checkpoints(&self) -> Option<&dyn CheckpointStore> {
        self.0.checkpoints().or_else(|| self.1.checkpoints())
    }
}

/// One chain's sinks of a pair of [`DrawSink`]s, in order.
struct BothChainSinks(Box<dyn ChainSink>, Box<dyn ChainSink>);

impl ChainSink for BothChainSinks {
    fn kept(&mut self, chain: &ChainDraws) -> Result<(), SinkError> {
        self.0.kept(chain)?;
        self.1.kept(chain)
    }

    fn flush(&mut self) -> Result<(), SinkError> {
        self.0.flush()?;
        self.1.flush()
    }

    fn finished(self: Box<Self>, chain: &ChainDraws) -> Result<(), SinkError> {
        let first = self.0.finished(chain);
        let second = self.1.finished(chain);
        first.and(second)
    }
}

/// Receives one chain's draws as they are made.
pub trait ChainSink: Send {
    /// `chain` has just recorded a kept draw, its last; its warm-up (the
    /// saved warm-up draws, the adapted metric) is complete.
    fn kept(&mut self, chain: &ChainDraws) -> Result<(), SinkError>;
    /// Puts every draw given so far where a reader (or a run that
    /// continues this one) finds it: called before each checkpoint.
    fn flush(&mut self) -> Result<(), SinkError> {
        Ok(())
    }
    /// `chain` ended: ran its draws, or stopped early
    /// ([`ChainDraws::interrupted`]); its times are set.
    fn finished(self: Box<Self>, chain: &ChainDraws) -> Result<(), SinkError>;
}
