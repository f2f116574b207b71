//! The distributed samplers of the HAMCMC paper's §4.3: [`Dsgld`],
//! [`Psgld`] and [`Hamcmc`], each a step over a [`Cluster`]'s shards.
//!
//! Each is the core sampler of the same name (`qnmc::Sgld`, `qnmc::Psgld`,
//! `qnmc::Hamcmc`) with the vector cut in shards: the same update per
//! coordinate, the noise drawn per shard ([`Cluster::fill_noise`]), and
//! every sum over the vector a sum over shards
//! ([`Cluster::sum_over_shards`]). Every step also sums a count of
//! non-finite values, so that every rank stops at the same draw, leaving
//! the chain at the previous one.

mod dsgld;
mod hamcmc;
pub mod lbfgs_coefficients;
mod psgld;

pub use dsgld::Dsgld;
pub use hamcmc::Hamcmc;
pub use psgld::Psgld;

use crate::DistributedError;
use crate::cluster::Cluster;
use crate::transport::Transport;

/// A sampler whose state lives in shards. Slot 0 of every shard starts as
/// the chain's initial point.
pub trait ShardSampler {
    /// Slots per shard: (persistent, moved with a block; scratch).
    fn slots(&self) -> (usize, usize);

    /// The slot that holds the latest draw.
    fn draw_slot(&self) -> usize;

    /// One step (draw `draw`, 1-based) with the cluster's current part;
    /// returns the part gradients it evaluated. On an error every rank's
    /// chain is unchanged.
    fn step<T: Transport>(
        &mut self,
        cluster: &mut Cluster<'_, T>,
        draw: u64,
    ) -> Result<u32, DistributedError>;
}

/// Non-finite entries of slot `slot`, as a partial for
/// [`Cluster::sum_over_shards`].
pub(crate) fn non_finite(values: &[f64]) -> f64 {
    values.iter().filter(|v| !v.is_finite()).count() as f64
}

/// The step of a sampler without history (DSGLD, PSGLD): the part gradient
/// at slot `theta` into slot `gradient`, noise into slot `noise`, then
/// `update(data, n)` on every shard (all its slots as one flat vector of n
/// coordinates per slot) writes the proposal into slot `proposal` and
/// whatever else it keeps. The non-finite proposal entries are summed over
/// shards; only when there are none are the `commits` (from, to) slot pairs
/// copied, so a failed step leaves every rank's chain as it was.
pub(crate) fn local_update_step<T: Transport>(
    cluster: &mut Cluster<'_, T>,
    draw: u64,
    [theta, gradient, noise, proposal]: [usize; 4],
    commits: &[(usize, usize)],
    mut update: impl FnMut(&mut [f64], usize),
) -> Result<(), DistributedError> {
    cluster.part_gradient(theta, gradient);
    cluster.fill_noise(draw, noise);
    let bad = cluster.sum_over_shards(1, |shard, out| {
        let n = shard.len();
        update(shard.data_mut(), n);
        out[0] = non_finite(shard.slot(proposal));
    })?;
    if bad[0] > 0.0 {
        return Err(DistributedError::NonFinite {
            draw,
            what: "proposal",
        });
    }
    for shard in cluster.held_mut() {
        for &(from, to) in commits {
            shard.copy_slot(from, to);
        }
    }
    Ok(())
}
