//! [`MpiTransport`]: ranks as MPI processes (rsmpi over the system's MPI;
//! feature `mpi`).

use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Equivalence, Source};

use super::Transport;
use crate::DistributedError;

/// One MPI process's end: point-to-point messages are MPI's standard-mode
/// send and receive, the all-gather is `MPI_Allgather`. Build it from the
/// world communicator of an initialised universe, which must outlive it:
///
/// ```no_run
/// let universe = mpi::initialize().expect("MPI initialises once");
/// let transport = qnmc_distributed::MpiTransport::new(universe.world());
/// ```
pub struct MpiTransport {
    world: SimpleCommunicator,
    bytes_sent: u64,
}

impl MpiTransport {
    /// The transport over `world`.
    pub fn new(world: SimpleCommunicator) -> Self {
        MpiTransport {
            world,
            bytes_sent: 0,
        }
    }

    fn peer(&self, rank: usize) -> Result<i32, DistributedError> {
        i32::try_from(rank)
            .ok()
            .filter(|&r| r < self.world.size() && r != self.world.rank())
            .ok_or_else(|| {
                DistributedError::Transport(format!(
                    "rank {} has no peer {rank} among {}",
                    self.world.rank(),
                    self.world.size()
                ))
            })
    }
}

impl Transport for MpiTransport {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn ranks(&self) -> usize {
        self.world.size() as usize
    }

    fn send(&mut self, to: usize, data: &[f64]) -> Result<(), DistributedError> {
        let to = self.peer(to)?;
        self.world.process_at_rank(to).send(data);
        self.bytes_sent += 8 * data.len() as u64;
        Ok(())
    }

    fn receive(&mut self, from: usize, data: &mut [f64]) -> Result<(), DistributedError> {
        let from = self.peer(from)?;
        let status = self.world.process_at_rank(from).receive_into(data);
        let count = status.count(f64::equivalent_datatype());
        if count as usize != data.len() {
            return Err(DistributedError::Transport(format!(
                "rank {} expected {} values from rank {from}, got {count}",
                self.rank(),
                data.len()
            )));
        }
        Ok(())
    }

    fn all_gather(&mut self, local: &[f64], all: &mut [f64]) -> Result<(), DistributedError> {
        if all.len() != local.len() * self.ranks() {
            return Err(DistributedError::Transport(format!(
                "all_gather: {} slots for {} ranks of {}",
                all.len(),
                self.ranks(),
                local.len()
            )));
        }
        self.world.all_gather_into(local, all);
        self.bytes_sent += 8 * (local.len() * (self.ranks() - 1)) as u64;
        Ok(())
    }

    fn bytes_sent(&self) -> u64 {
        self.bytes_sent
    }
}
