//! [`Transport`]: how the ranks of a distributed chain talk — point-to-point
//! messages of `f64`s and an all-gather — and its backends.
//!
//! | backend | ranks are | built |
//! |---|---|---|
//! | [`SingleProcess`] | this process alone (rank 0 of 1) | always |
//! | [`ThreadTransport`] | threads of this process, over channels | always |
//! | `MpiTransport` | MPI processes (`mpirun -np R`) | feature `mpi` |
//!
//! The samplers never add numbers that arrive from other ranks in the order
//! they arrive: every sum over ranks is an all-gather followed by the same
//! fixed-order sum on every rank ([`Cluster::sum_over_shards`](crate::Cluster::sum_over_shards)), so a chain is the
//! same bit for bit on any backend and any number of ranks.

#[cfg(feature = "mpi")]
mod mpi;
mod single;
mod threads;

pub use single::SingleProcess;
pub use threads::{ThreadTransport, on_threads};

#[cfg(feature = "mpi")]
pub use self::mpi::MpiTransport;

use crate::DistributedError;

/// Messages between the ranks of one run. Every rank calls the same
/// sequence of collective operations ([`all_gather`](Self::all_gather)) and
/// matching [`send`](Self::send) / [`receive`](Self::receive) pairs; the
/// samplers of this crate do, by construction.
pub trait Transport {
    /// This process's rank, 0 ≤ rank < [`ranks`](Self::ranks).
    fn rank(&self) -> usize;

    /// The number of ranks.
    fn ranks(&self) -> usize;

    /// Sends `data` to rank `to` (≠ this rank). May return before `to`
    /// receives it.
    fn send(&mut self, to: usize, data: &[f64]) -> Result<(), DistributedError>;

    /// Receives the next message from rank `from` (≠ this rank) into
    /// `data`, whose length must be the message's.
    fn receive(&mut self, from: usize, data: &mut [f64]) -> Result<(), DistributedError>;

    /// Every rank's `local` (all of one length) concatenated in rank order
    /// into `all` (length ranks × local.len()), on every rank.
    ///
    /// The default sends `local` to every other rank and then receives
    /// theirs in rank order: correct for a transport whose sends do not
    /// wait for the receiver (channels; MPI's small messages). A backend
    /// with a collective of its own overrides it.
    fn all_gather(&mut self, local: &[f64], all: &mut [f64]) -> Result<(), DistributedError> {
        let n = local.len();
        if all.len() != n * self.ranks() {
            return Err(DistributedError::Transport(format!(
                "all_gather: {} slots for {} ranks of {n}",
                all.len(),
                self.ranks()
            )));
        }
        let me = self.rank();
        for to in (0..self.ranks()).filter(|&r| r != me) {
            self.send(to, local)?;
        }
        for from in 0..self.ranks() {
            let slot = &mut all[from * n..(from + 1) * n];
            if from == me {
                slot.copy_from_slice(local);
            } else {
                self.receive(from, slot)?;
            }
        }
        Ok(())
    }

    /// Bytes this rank has sent so far (payload only, 8 per `f64`).
    fn bytes_sent(&self) -> u64;
}

/// A `&mut` transport is a transport: a caller keeps its transport (e.g.
/// MPI's world) across several chains.
impl<X: Transport + ?Sized> Transport for &mut X {
    fn rank(&self) -> usize {
        (**self).rank()
    }

    fn ranks(&self) -> usize {
        (**self).ranks()
    }

    fn send(&mut self, to: usize, data: &[f64]) -> Result<(), DistributedError> {
        (**self).send(to, data)
    }

    fn receive(&mut self, from: usize, data: &mut [f64]) -> Result<(), DistributedError> {
        (**self).receive(from, data)
    }

    fn all_gather(&mut self, local: &[f64], all: &mut [f64]) -> Result<(), DistributedError> {
        (**self).all_gather(local, all)
    }

    fn bytes_sent(&self) -> u64 {
        (**self).bytes_sent()
    }
}
