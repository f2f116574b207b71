//! [`StopFlag`]: a request, from any thread, that every chain of a run end
//! at its next iteration, keeping the draws it made ([`RunDraws::interrupted`]
//! then says so).
//!
//! The runner reads the flag once per iteration of every chain (one relaxed
//! atomic load). Nothing here installs a signal handler: the `qnmc` command
//! line sets the flag from SIGINT and SIGTERM (`cli/interrupt.rs`); a
//! library user sets it however it likes ([`StopFlag::request`]).
//!
//! [`RunDraws::interrupted`]: crate::draws::RunDraws::interrupted

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Why a run was asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM (`kill`, a job scheduler's stop).
    Terminate,
    /// [`StopFlag::request`] from the program itself.
    Requested,
}

impl StopReason {
    /// The flag's stored value (never 0, which means "run on").
    fn code(self) -> usize {
        match self {
            StopReason::Interrupt => 1,
            StopReason::Terminate => 2,
            StopReason::Requested => 3,
        }
    }

    fn from_code(code: usize) -> Option<StopReason> {
        [
            StopReason::Interrupt,
            StopReason::Terminate,
            StopReason::Requested,
        ]
        .into_iter()
        .find(|r| r.code() == code)
    }
}

impl fmt::Display for StopReason {
    /// `SIGINT`, `SIGTERM` or `a stop request`, as in "interrupted by …".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StopReason::Interrupt => "SIGINT",
            StopReason::Terminate => "SIGTERM",
            StopReason::Requested => "a stop request",
        })
    }
}

/// A shared stop request: clones share one flag. The first request's reason
/// is kept; later ones change nothing.
///
/// ```
/// use qnmc_host::run::{StopFlag, StopReason};
///
/// let flag = StopFlag::new();
/// let seen_by_the_run = flag.clone();
/// assert!(!seen_by_the_run.is_requested());
/// assert!(flag.request(StopReason::Terminate));
/// assert!(!flag.request(StopReason::Interrupt), "the first reason stays");
/// assert_eq!(seen_by_the_run.reason(), Some(StopReason::Terminate));
/// ```
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<AtomicUsize>);

impl StopFlag {
    /// A flag with no request.
    pub fn new() -> Self {
        StopFlag::default()
    }

    /// Asks every chain that reads this flag to stop at its next iteration;
    /// returns whether this was the first request.
    pub fn request(&self, reason: StopReason) -> bool {
        self.0
            .compare_exchange(0, reason.code(), Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    /// Whether a stop was requested (a relaxed load: the chains poll it
    /// once per iteration; a request is seen within a few iterations at
    /// most, in practice at the next).
    pub fn is_requested(&self) -> bool {
        self.0.load(Ordering::Relaxed) != 0
    }

    /// The first request's reason, if any.
    pub fn reason(&self) -> Option<StopReason> {
        StopReason::from_code(self.0.load(Ordering::Relaxed))
    }
}
