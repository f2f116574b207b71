//! [`SinkError`]: the error of where a run's draws and checkpoints go, and
//! the run's error it becomes.

use super::RunError;
use super::stop::{StopFlag, StopReason};

/// An error of a [`DrawSink`](super::DrawSink), a
/// [`ChainSink`](super::ChainSink) or a
/// [`CheckpointStore`](super::CheckpointStore) (a file that could not be
/// written or read); it ends the run with
/// [`RunError::Output`](super::RunError::Output).
pub type SinkError = Box<dyn std::error::Error + Send + Sync>;

/// An error that ends the run's output: the other chains are asked to stop
/// (their draws would not be written), and the run ends with
/// [`RunError::Output`] saying `message`.
pub(super) fn output_error(stop: &StopFlag, message: String) -> RunError {
    stop.request(StopReason::Requested);
    RunError::Output(message)
}
