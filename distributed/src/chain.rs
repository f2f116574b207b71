//! [`run_chain`]: one distributed chain, start to end, on one rank.

use std::time::{Duration, Instant};

use qnmc_host::targets::GaussianPmf;

use crate::DistributedError;
use crate::cluster::{Cluster, Traffic};
use crate::samplers::ShardSampler;
use crate::transport::Transport;

/// How long a chain runs and what it hands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSettings {
    /// Draws to make.
    pub iterations: u64,
    /// The seed of the part schedule and of every shard's noise.
    pub seed: u64,
    /// Gather every `gather_every`-th draw on rank 0 for the caller (0:
    /// never).
    pub gather_every: u64,
}

/// What one rank did.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    /// Draws made.
    pub draws: u64,
    /// Part gradients evaluated per node (each node evaluates its block's
    /// share of every one).
    pub gradients: u64,
    /// Bytes this rank sent, by purpose.
    pub traffic: Traffic,
    /// Time in the sampler's steps and block moves on this rank, gathers
    /// not counted.
    pub sampler_time: Duration,
    /// Why the chain stopped before `iterations`, if it did (every rank
    /// stops at the same draw).
    pub failure: Option<DistributedError>,
}

/// Runs `sampler` on `model` with this rank's `transport` from the model's
/// initial point. On rank 0, `on_draw(t, θ_t)` sees every gathered draw
/// (the whole vector, in the model's layout). Every rank of the run must
/// call it with the same model, sampler and settings.
///
/// A non-finite step ends the chain early (in [`RunRecord::failure`]);
/// a transport failure or a bad setting is an `Err`.
pub fn run_chain<T: Transport, S: ShardSampler>(
    model: &GaussianPmf,
    sampler: &mut S,
    transport: T,
    settings: RunSettings,
    mut on_draw: impl FnMut(u64, &[f64]),
) -> Result<RunRecord, DistributedError> {
    let (persistent, scratch) = sampler.slots();
    let mut cluster = Cluster::new(model, transport, settings.seed, persistent, scratch)?;
    let mut record = RunRecord {
        draws: 0,
        gradients: 0,
        traffic: Traffic::default(),
        sampler_time: Duration::ZERO,
        failure: None,
    };
    for t in 1..=settings.iterations {
        let clock = Instant::now();
        match sampler.step(&mut cluster, t) {
            Ok(gradients) => record.gradients += u64::from(gradients),
            Err(e @ DistributedError::NonFinite { .. }) => {
                record.failure = Some(e);
                break;
            }
            Err(e) => return Err(e),
        }
        record.sampler_time += clock.elapsed();
        record.draws = t;
        if settings.gather_every > 0 && t % settings.gather_every == 0 {
            if let Some(theta) = cluster.gather(sampler.draw_slot())? {
                on_draw(t, &theta);
            }
        }
        let clock = Instant::now();
        cluster.next_part()?;
        record.sampler_time += clock.elapsed();
    }
    record.traffic = cluster.traffic();
    Ok(record)
}
