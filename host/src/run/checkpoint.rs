//! Checkpoints: a chain's whole state saved while it draws, so that a
//! stopped run can be continued and end with the same draws, bit for bit,
//! as the run that was never stopped (`qnmc run --resume`).
//!
//! A [`ChainCheckpoint`] holds what the chain loop needs to go on from an
//! iteration: the sampler's state ([`qnmc::saved_state`], through
//! [`ChainSampler`](super::samplers::ChainSampler)), the step-size
//! adaptation of the HMC family ([`qnmc::adaptation::Warmup`]), the
//! generator's four words, the loop's counters, and how many rows the
//! chain had written. The rows themselves are not in it: they are in the
//! chain's file, and a [`CheckpointStore`] gives them back
//! ([`CheckpointStore::replay`]). The bytes are framed with a magic
//! number, a format version, the run's fingerprint ([`run_fingerprint`]:
//! the sampler, the settings and the model's quantities, so that a
//! checkpoint is never restored into another run) and an FNV-1a hash.
//!
//! Everything before a chain's loop (the start point, NUTS's L-BFGS start
//! and the comparison of the chains' optima) is made again on resume: it is
//! deterministic, and cheap beside the draws; the restored state then
//! replaces it.

use std::time::Duration;

use qnmc::saved_state::StateError;

use super::sink_error::SinkError;
use super::{RunSettings, SamplerKind};
use crate::model::{Model, ModelRng};

/// The first bytes of a checkpoint.
const MAGIC: [u8; 8] = *b"QNMCCKPT";

/// The layout of [`ChainCheckpoint::to_bytes`]; a change increments it.
const FORMAT_VERSION: u32 = 1;

/// Interval between a chain's checkpoints when the store does not say
/// ([`CheckpointStore::interval`]).
pub const DEFAULT_CHECKPOINT_SECONDS: f64 = 60.0;

/// One kept (or saved warm-up) row of a chain's file, given back by
/// [`CheckpointStore::replay`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplayedRow<'a> {
    /// `lp__`.
    pub lp: f64,
    /// `accept_stat__`.
    pub accept_stat: f64,
    /// `stepsize__`.
    pub step_size: f64,
    /// `treedepth__`, when the file has the column.
    pub tree_depth: Option<u32>,
    /// `n_leapfrog__`.
    pub n_leapfrog: u32,
    /// `divergent__`.
    pub divergent: bool,
    /// `energy__`, when the file has the column.
    pub energy: Option<f64>,
    /// The model's quantities.
    pub values: &'a [f64],
}

/// Where a run's chains keep their checkpoints, and find them again.
pub trait CheckpointStore: Sync {
    /// The last checkpoint of chain `chain_id` (1-based) of an earlier,
    /// stopped run, if it saved one: these bytes are restored before the
    /// chain draws.
    fn load(&self, chain_id: usize) -> Result<Option<Vec<u8>>, SinkError>;

    /// Replaces the checkpoint of chain `chain_id`; called after the
    /// chain's [`ChainSink::flush`](super::ChainSink::flush), so that the
    /// rows the checkpoint counts are stored.
    fn save(&self, chain_id: usize, bytes: &[u8]) -> Result<(), SinkError>;

    /// Gives `row` the first `warmup_rows` saved warm-up rows (`true`) and
    /// then the first `rows` kept rows (`false`) that chain `chain_id` of
    /// the stopped run had written when it saved the checkpoint [`load`]
    /// returned. A store without them fails.
    ///
    /// [`load`]: CheckpointStore::load
    fn replay(
        &self,
        chain_id: usize,
        warmup_rows: usize,
        rows: usize,
        row: &mut dyn FnMut(bool, ReplayedRow<'_>) -> Result<(), SinkError>,
    ) -> Result<(), SinkError>;

    /// Time between two checkpoints of a chain (besides the one at the end
    /// of its warm-up and the one when it is stopped).
    fn interval(&self) -> Duration {
        Duration::from_secs_f64(DEFAULT_CHECKPOINT_SECONDS)
    }
}

/// Why a checkpoint was not restored.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckpointError {
    /// Not a checkpoint, cut short or altered (the hash disagrees).
    Damaged(&'static str),
    /// Written by another run: another sampler, settings or model.
    OtherRun,
    /// The sampler's own state was refused.
    Sampler(StateError),
}

impl std::fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckpointError::Damaged(what) => write!(f, "the checkpoint is damaged ({what})"),
            CheckpointError::OtherRun => f.write_str(
                "the checkpoint belongs to another run (another sampler, settings, \
                 model or qnmc version)",
            ),
            CheckpointError::Sampler(e) => write!(f, "the sampler's saved state: {e}"),
        }
    }
}

impl std::error::Error for CheckpointError {}

/// A fingerprint of a run: what must be equal for a checkpoint to be
/// restored into it (the sampler, every setting, the model's name,
/// dimension and quantity names, this crate's version).
pub(crate) fn run_fingerprint(model: &dyn Model, kind: SamplerKind, settings: &RunSettings) -> u64 {
    let text = format!(
        "{kind:?}\n{settings:?}\n{}\n{}\n{:?}\n{}",
        model.name(),
        model.dimension(),
        model.output_names(),
        env!("CARGO_PKG_VERSION")
    );
    fnv1a(text.as_bytes())
}

/// The state of a chain's loop at the start of an iteration.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChainCheckpoint {
    /// [`run_fingerprint`] of the run.
    pub(crate) run: u64,
    /// Iterations done (warm-up and sampling).
    pub(crate) iteration: u64,
    /// The iteration the warm-up ended at, once it has.
    pub(crate) warmup_done: Option<u64>,
    /// Kept draws whose lp__ was asked for (`LpMode`'s counter).
    pub(crate) lp_kept: u64,
    /// Gradient evaluations so far, the start's included.
    pub(crate) gradient_evaluations: u64,
    /// Seconds of warm-up, of sampling and of lp__ passes so far.
    pub(crate) warmup_seconds: f64,
    pub(crate) sampling_seconds: f64,
    pub(crate) lp_seconds: f64,
    /// Kept rows and saved warm-up rows written.
    pub(crate) rows: u64,
    pub(crate) warmup_rows: u64,
    /// The generator's state.
    pub(crate) rng: [u32; 4],
    /// The sampler's [`qnmc::saved_state`] bytes.
    pub(crate) sampler: Vec<u8>,
    /// The step-size adaptation's, if the chain loop runs one.
    pub(crate) adaptation: Option<Vec<u8>>,
}

impl ChainCheckpoint {
    /// The checkpoint as bytes (see the [module](self)).
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            128 + self.sampler.len() + self.adaptation.as_ref().map_or(0, Vec::len),
        );
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        let words = [
            self.run,
            self.iteration,
            self.warmup_done.map_or(u64::MAX, |w| w),
            self.lp_kept,
            self.gradient_evaluations,
            self.warmup_seconds.to_bits(),
            self.sampling_seconds.to_bits(),
            self.lp_seconds.to_bits(),
            self.rows,
            self.warmup_rows,
        ];
        for w in words {
            out.extend_from_slice(&w.to_le_bytes());
        }
        for w in self.rng {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.extend_from_slice(&(self.sampler.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.sampler);
        match &self.adaptation {
            None => out.extend_from_slice(&u64::MAX.to_le_bytes()),
            Some(a) => {
                out.extend_from_slice(&(a.len() as u64).to_le_bytes());
                out.extend_from_slice(a);
            }
        }
        let hash = fnv1a(&out);
        out.extend_from_slice(&hash.to_le_bytes());
        out
    }

    /// Reads [`to_bytes`](Self::to_bytes)' bytes, checking the framing and
    /// the hash, and that the checkpoint is of the run `run`.
    pub(crate) fn from_bytes(bytes: &[u8], run: u64) -> Result<Self, CheckpointError> {
        let damaged = CheckpointError::Damaged;
        if bytes.len() < 12 + 8 || bytes[..8] != MAGIC {
            return Err(damaged("not a qnmc checkpoint"));
        }
        let (body, hash) = bytes.split_at(bytes.len() - 8);
        if fnv1a(body).to_le_bytes() != hash {
            return Err(damaged("its hash disagrees"));
        }
        let mut reader = Reader { bytes: &body[8..] };
        if reader.u32()? != FORMAT_VERSION {
            return Err(damaged("written by another version of the format"));
        }
        let found = reader.u64()?;
        if found != run {
            return Err(CheckpointError::OtherRun);
        }
        let iteration = reader.u64()?;
        let warmup_done = Some(reader.u64()?).filter(|&w| w != u64::MAX);
        let lp_kept = reader.u64()?;
        let gradient_evaluations = reader.u64()?;
        let warmup_seconds = f64::from_bits(reader.u64()?);
        let sampling_seconds = f64::from_bits(reader.u64()?);
        let lp_seconds = f64::from_bits(reader.u64()?);
        let rows = reader.u64()?;
        let warmup_rows = reader.u64()?;
        let rng = [reader.u32()?, reader.u32()?, reader.u32()?, reader.u32()?];
        let length = reader.u64()?;
        let sampler = reader.take(length)?.to_vec();
        let length = reader.u64()?;
        let adaptation = if length == u64::MAX {
            None
        } else {
            Some(reader.take(length)?.to_vec())
        };
        if !reader.bytes.is_empty() {
            return Err(damaged("it has bytes after its fields"));
        }
        Ok(ChainCheckpoint {
            run,
            iteration,
            warmup_done,
            lp_kept,
            gradient_evaluations,
            warmup_seconds,
            sampling_seconds,
            lp_seconds,
            rows,
            warmup_rows,
            rng,
            sampler,
            adaptation,
        })
    }
}

/// The four words of the generator's state.
pub(crate) fn rng_words(rng: &ModelRng) -> [u32; 4] {
    // The generator gives its state out only through serde (its `serde`
    // feature): the fields x, y, z, w.
    let value = serde_json::to_value(rng).unwrap_or_default();
    let word = |name: &str| {
        value
            .get(name)
            .and_then(serde_json::Value::as_u64)
            .and_then(|w| u32::try_from(w).ok())
            .unwrap_or(0)
    };
    [word("x"), word("y"), word("z"), word("w")]
}

/// The generator whose state is `words` ([`rng_words`]).
pub(crate) fn rng_from_words(words: [u32; 4]) -> Result<ModelRng, CheckpointError> {
    let value = serde_json::json!({"x": words[0], "y": words[1], "z": words[2], "w": words[3]});
    serde_json::from_value(value).map_err(|_| CheckpointError::Damaged("its generator state"))
}

/// Reads the fields of a checkpoint in order.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn take(&mut self, n: u64) -> Result<&[u8], CheckpointError> {
        let n = usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.bytes.len())
            .ok_or(CheckpointError::Damaged("it is cut short"))?;
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u64(&mut self) -> Result<u64, CheckpointError> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }

    fn u32(&mut self) -> Result<u32, CheckpointError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes(b.try_into().unwrap_or([0; 4])))
    }
}

/// 64-bit FNV-1a.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::{Rng, SeedableRng};

    fn example() -> ChainCheckpoint {
        ChainCheckpoint {
            run: 42,
            iteration: 1234,
            warmup_done: Some(500),
            lp_kept: 700,
            gradient_evaluations: 98_765,
            warmup_seconds: 1.25,
            sampling_seconds: 0.5,
            lp_seconds: 0.0,
            rows: 734,
            warmup_rows: 0,
            rng: [1, 2, 3, 4],
            sampler: vec![9; 77],
            adaptation: Some(vec![7; 5]),
        }
    }

    #[test]
    fn a_checkpoint_reads_back_as_written() {
        let mut c = example();
        assert_eq!(
            ChainCheckpoint::from_bytes(&c.to_bytes(), 42),
            Ok(c.clone())
        );
        c.warmup_done = None;
        c.adaptation = None;
        assert_eq!(ChainCheckpoint::from_bytes(&c.to_bytes(), 42), Ok(c));
    }

    /// Every byte matters: a changed byte anywhere, a cut or another run's
    /// fingerprint is refused.
    #[test]
    fn damaged_or_foreign_checkpoints_are_refused() {
        let bytes = example().to_bytes();
        assert_eq!(
            ChainCheckpoint::from_bytes(&bytes, 43),
            Err(CheckpointError::OtherRun)
        );
        for i in 0..bytes.len() {
            let mut altered = bytes.clone();
            altered[i] ^= 0x10;
            assert!(
                ChainCheckpoint::from_bytes(&altered, 42).is_err(),
                "byte {i}"
            );
        }
        for n in 0..bytes.len() {
            assert!(ChainCheckpoint::from_bytes(&bytes[..n], 42).is_err(), "{n}");
        }
    }

    /// The generator restored from its words goes on with the same numbers.
    #[test]
    fn the_generator_restores_from_its_words() {
        let mut a = ModelRng::seed_from_u64(17);
        for _ in 0..13 {
            a.next_u64();
        }
        let words = rng_words(&a);
        assert_ne!(words, [0; 4]);
        let mut b = rng_from_words(words).unwrap();
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }
}
