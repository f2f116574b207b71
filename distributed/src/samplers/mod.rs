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
