//! [`SingleProcess`]: one rank, no messages.

use super::Transport;
use crate::DistributedError;

/// The transport of a run on one rank: every node of the grid is here, so
/// nothing is ever sent. A chain on it is the reference the other backends
/// are compared with, bit for bit.
#[derive(Debug, Clone, Copy, Default)]
pub struct SingleProcess;

impl Transport for SingleProcess {
    fn rank(&self) -> usize {
        0
    }

    fn ranks(&self) -> usize {
        1
    }

    fn send(&mut self, to: usize, _data: &[f64]) -> Result<(), DistributedError> {
        Err(DistributedError::Transport(format!(
            "a single process has no rank {to} to send to"
        )))
    }

    fn receive(&mut self, from: usize, _data: &mut [f64]) -> Result<(), DistributedError> {
        Err(DistributedError::Transport(format!(
            "a single process has no rank {from} to receive from"
        )))
    }

    fn all_gather(&mut self, local: &[f64], all: &mut [f64]) -> Result<(), DistributedError> {
        if all.len() != local.len() {
            return Err(DistributedError::Transport(format!(
                "all_gather: {} slots for 1 rank of {}",
                all.len(),
                local.len()
            )));
        }
        all.copy_from_slice(local);
        Ok(())
    }

    fn bytes_sent(&self) -> u64 {
        0
    }
}
