//! [`ThreadTransport`]: ranks as threads of one process, a channel per
//! ordered pair of ranks; [`on_threads`] runs a closure on each.

use std::sync::mpsc::{Receiver, Sender, channel};

use super::Transport;
use crate::DistributedError;

/// One rank's end of a run on threads: a sender to and a receiver from every
/// other rank. Sends never wait (the channels are unbounded), so the
/// default [`Transport::all_gather`] cannot deadlock.
#[derive(Debug)]
pub struct ThreadTransport {
    rank: usize,
    to: Vec<Option<Sender<Vec<f64>>>>,
    from: Vec<Option<Receiver<Vec<f64>>>>,
    bytes_sent: u64,
}

impl ThreadTransport {
    /// The `ranks` connected ends, rank 0 first. `ranks` ≥ 1.
    pub fn connected(ranks: usize) -> Vec<ThreadTransport> {
        let mut ends: Vec<ThreadTransport> = (0..ranks)
            .map(|rank| ThreadTransport {
                rank,
                to: (0..ranks).map(|_| None).collect(),
                from: (0..ranks).map(|_| None).collect(),
                bytes_sent: 0,
            })
            .collect();
        for a in 0..ranks {
            for b in (0..ranks).filter(|&b| b != a) {
                let (tx, rx) = channel();
                ends[a].to[b] = Some(tx);
                ends[b].from[a] = Some(rx);
            }
        }
        ends
    }
}

impl Transport for ThreadTransport {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.to.len()
    }

    fn send(&mut self, to: usize, data: &[f64]) -> Result<(), DistributedError> {
        let sender = self.to.get(to).and_then(Option::as_ref).ok_or_else(|| {
            DistributedError::Transport(format!("rank {} has no channel to {to}", self.rank))
        })?;
        sender
            .send(data.to_vec())
            .map_err(|_| DistributedError::Transport(format!("rank {to} has stopped")))?;
        self.bytes_sent += 8 * data.len() as u64;
        Ok(())
    }

    fn receive(&mut self, from: usize, data: &mut [f64]) -> Result<(), DistributedError> {
        let receiver = self
            .from
            .get(from)
            .and_then(Option::as_ref)
            .ok_or_else(|| {
                DistributedError::Transport(format!(
                    "rank {} has no channel from {from}",
                    self.rank
                ))
            })?;
        let message = receiver
            .recv()
            .map_err(|_| DistributedError::Transport(format!("rank {from} has stopped")))?;
        if message.len() != data.len() {
            return Err(DistributedError::Transport(format!(
                "rank {} expected {} values from rank {from}, got {}",
                self.rank,
                data.len(),
                message.len()
            )));
        }
        data.copy_from_slice(&message);
        Ok(())
    }

    fn bytes_sent(&self) -> u64 {
        self.bytes_sent
    }
}

/// Runs `work` on `ranks` threads, each with its [`ThreadTransport`], and
/// returns their results in rank order. A rank that panics is reported as
/// an error (its peers see a closed channel and stop with an error too).
pub fn on_threads<R, F>(ranks: usize, work: F) -> Result<Vec<R>, DistributedError>
where
    R: Send,
    F: Fn(&mut ThreadTransport) -> R + Sync,
{
    if ranks == 0 {
        return Err(DistributedError::Setting("ranks must be at least 1".into()));
    }
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = ThreadTransport::connected(ranks)
            .into_iter()
            .map(|mut end| scope.spawn(move || work(&mut end)))
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(rank, h)| {
                h.join()
                    .map_err(|_| DistributedError::Transport(format!("rank {rank} panicked")))
            })
            .collect()
    })
}
