//! The chain loop's side of checkpoints ([`super::checkpoint`]): when a
//! chain saves one, what goes into it, and how a chain is restored from
//! one before it draws on.

use std::time::{Duration, Instant};

use qnmc::adaptation::Warmup;

use super::RunError;
use super::checkpoint::{
    ChainCheckpoint, CheckpointError, CheckpointStore, ReplayedRow, rng_from_words, rng_words,
};
use super::samplers::{ChainSampler, state_bytes};
use super::sink_error::{SinkError, output_error};
use super::stop::StopFlag;
use crate::draws::{ChainDraws, WarmupDraws};
use crate::model::ModelRng;

/// Where the chain loop stands at the start of an iteration, besides the
/// sampler, its step-size adaptation, the generator and the chain's draws.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct LoopPoint {
    /// Iterations done.
    pub(super) iteration: usize,
    /// The iteration the warm-up ended at, once it has.
    pub(super) warmup_done: Option<usize>,
    /// Kept draws counted for `LpMode`.
    pub(super) kept: usize,
    /// Seconds of lp__ passes, of warm-up and of sampling so far.
    pub(super) lp_seconds: f64,
    pub(super) warmup_seconds: f64,
    pub(super) sampling_seconds: f64,
}

/// A chain's checkpoints: where they go, the run's fingerprint, how often,
/// and when the last was saved.
pub(super) struct Checkpointing<'a> {
    store: &'a dyn CheckpointStore,
    run: u64,
    interval: Duration,
    last: Instant,
}

impl<'a> Checkpointing<'a> {
    /// Checkpoints into `store` for the run whose
    /// [`run_fingerprint`](super::checkpoint::run_fingerprint) is `run`.
    pub(super) fn new(store: &'a dyn CheckpointStore, run: u64) -> Self {
        Checkpointing {
            store,
            run,
            interval: store.interval(),
            last: Instant::now(),
        }
    }

    /// Whether a checkpoint is due: `now` (the warm-up's end, a stop, the
    /// chain's end), or the interval has passed since the last.
    pub(super) fn due(&self, now: bool) -> bool {
        now || self.last.elapsed() >= self.interval
    }

    /// Saves the chain's state at `point` (its sink flushed by the
    /// caller).
    pub(super) fn save<const D: usize, S: ChainSampler<D> + ?Sized>(
        &mut self,
        stop: &StopFlag,
        sampler: &S,
        warmup: Option<&Warmup<f64>>,
        rng: &ModelRng,
        chain: &ChainDraws,
        point: &LoopPoint,
    ) -> Result<(), RunError> {
        let checkpoint = ChainCheckpoint {
            run: self.run,
            iteration: point.iteration as u64,
            warmup_done: point.warmup_done.map(|w| w as u64),
            lp_kept: point.kept as u64,
            gradient_evaluations: chain.gradient_evaluations,
            warmup_seconds: point.warmup_seconds,
            sampling_seconds: point.sampling_seconds,
            lp_seconds: point.lp_seconds,
            rows: chain.len() as u64,
            warmup_rows: chain.saved_warmup.len() as u64,
            rng: rng_words(rng),
            sampler: sampler.saved_state(),
            adaptation: warmup.map(state_bytes),
        };
        self.store
            .save(chain.chain_id, &checkpoint.to_bytes())
            .map_err(|e| output_error(stop, e.to_string()))?;
        self.last = Instant::now();
        Ok(())
    }

    /// Restores the chain from its checkpoint in the store, if it has one:
    /// the sampler, the adaptation, the generator, the chain's gradient
    /// count and warm-up seconds. Returns where the loop stood and the rows
    /// the chain had written (for [`replay`](Self::replay), once the chain
    /// knows its warm-up); `None` without a checkpoint (the chain starts
    /// from its seed).
    pub(super) fn restore<const D: usize, S: ChainSampler<D> + ?Sized>(
        &self,
        stop: &StopFlag,
        sampler: &mut S,
        warmup: Option<&mut Warmup<f64>>,
        rng: &mut ModelRng,
        chain: &mut ChainDraws,
    ) -> Result<Option<Restored>, RunError> {
        let Some(bytes) = self
            .store
            .load(chain.chain_id)
            .map_err(|e| output_error(stop, e.to_string()))?
        else {
            return Ok(None);
        };
        let id = chain.chain_id;
        let refused = |e: &dyn std::fmt::Display| {
            output_error(
                stop,
                format!("chain {id} cannot continue from its checkpoint: {e}"),
            )
        };
        let c = ChainCheckpoint::from_bytes(&bytes, self.run).map_err(|e| refused(&e))?;
        sampler.restore_state(&c.sampler).map_err(|e| refused(&e))?;
        match (warmup, &c.adaptation) {
            (Some(w), Some(bytes)) => {
                qnmc::saved_state::restore(w, bytes).map_err(|e| refused(&e))?;
            }
            (None, None) => {}
            _ => return Err(refused(&CheckpointError::OtherRun)),
        }
        *rng = rng_from_words(c.rng).map_err(|e| refused(&e))?;
        chain.gradient_evaluations = c.gradient_evaluations;
        chain.warmup_seconds = c.warmup_seconds;
        Ok(Some(Restored {
            point: LoopPoint {
                iteration: c.iteration as usize,
                warmup_done: c.warmup_done.map(|w| w as usize),
                kept: c.lp_kept as usize,
                lp_seconds: c.lp_seconds,
                warmup_seconds: c.warmup_seconds,
                sampling_seconds: c.sampling_seconds,
            },
            warmup_rows: c.warmup_rows as usize,
            rows: c.rows as usize,
        }))
    }

    /// Gives the chain back the rows it had written at its checkpoint
    /// (`restored`), each kept row given to `kept` as the chain loop gives
    /// a new one, so that the chain's files are written anew, byte for byte
    /// as before.
    pub(super) fn replay(
        &self,
        stop: &StopFlag,
        restored: &Restored,
        chain: &mut ChainDraws,
        kept: &mut dyn FnMut(&mut ChainDraws) -> Result<(), SinkError>,
    ) -> Result<(), RunError> {
        self.store
            .replay(
                chain.chain_id,
                restored.warmup_rows,
                restored.rows,
                &mut |warm, row| {
                    if warm {
                        push_warmup_row(&mut chain.saved_warmup, &row);
                        Ok(())
                    } else {
                        push_kept_row(chain, &row);
                        kept(chain)
                    }
                },
            )
            .map_err(|e| output_error(stop, e.to_string()))
    }
}

/// A chain restored from its checkpoint: where its loop stood, and the
/// saved warm-up and kept rows it had written.
pub(super) struct Restored {
    pub(super) point: LoopPoint,
    warmup_rows: usize,
    rows: usize,
}

/// Adds a replayed row to draws with `ChainDraws`' columns: the chain's
/// kept draws, or its saved warm-up draws ([`WarmupDraws`]).
macro_rules! push_row {
    ($draws:expr, $row:expr) => {{
        let (draws, row) = ($draws, $row);
        draws.lp.push(row.lp);
        draws.accept_stat.push(row.accept_stat);
        draws.step_size.push(row.step_size);
        draws.n_leapfrog.push(row.n_leapfrog);
        draws.divergent.push(row.divergent);
        draws.tree_depth.extend(row.tree_depth);
        draws.energy.extend(row.energy);
        draws.values.extend_from_slice(row.values);
    }};
}

fn push_warmup_row(saved: &mut WarmupDraws, row: &ReplayedRow<'_>) {
    push_row!(saved, row);
}

fn push_kept_row(chain: &mut ChainDraws, row: &ReplayedRow<'_>) {
    push_row!(chain, row);
}
