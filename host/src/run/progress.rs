//! The progress bar of a run: iterations done over all chains, whether the
//! chains are in warm-up or sampling, and the divergent transitions among
//! the kept draws so far. It also carries the run's [`StopFlag`], since it
//! is the one thing every chain of a run shares with its caller.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::stop::StopFlag;

/// An aggregated progress bar (iterations, warm-up included, of all chains),
/// drawn on stderr; hidden with `--quiet` or when stderr is not a terminal.
/// Its message is the label, then the phase and the divergences
/// ([`progress_message`]). The counts are atomics, updated by each chain
/// when its warm-up ends and with each batch of iterations it reports, so a
/// hidden bar still counts them.
pub struct Progress {
    bar: ProgressBar,
    /// Whether the bar draws (false: the message is never formatted).
    visible: bool,
    label: String,
    /// Chains of the run ([`Progress::start_chains`]).
    chains: AtomicUsize,
    /// Chains whose warm-up has not ended.
    warming_up: AtomicUsize,
    /// Divergent transitions among the kept draws reported so far.
    divergent: AtomicU64,
    /// Read by every chain once per iteration: when set, the chains end at
    /// their next iteration ([`Progress::with_stop`]).
    stop: StopFlag,
}

/// The bar's message: `label`, then `warm-up` while every chain is in it,
/// `sampling` once none is, or how many chains are in each, and from the
/// first sampling chain on the divergent transitions of the kept draws so
/// far. `chains` 0 (no run started): the label alone.
///
/// For 4 chains labelled `nuts on funnel`: `nuts on funnel: warm-up`, then
/// `nuts on funnel: 1 chain in warm-up, 3 sampling, 2 divergent`, then
/// `nuts on funnel: sampling, 2 divergent`.
pub fn progress_message(label: &str, chains: usize, warming_up: usize, divergent: u64) -> String {
    let warming_up = warming_up.min(chains);
    if chains == 0 {
        label.to_string()
    } else if warming_up == chains {
        format!("{label}: warm-up")
    } else if warming_up == 0 {
        format!("{label}: sampling, {divergent} divergent")
    } else {
        format!(
            "{label}: {warming_up} chain{} in warm-up, {} sampling, {divergent} divergent",
            if warming_up == 1 { "" } else { "s" },
            chains - warming_up
        )
    }
}

impl Progress {
    /// A bar of `total` iterations labelled `label`; `quiet` hides it.
    pub fn new(total: u64, label: &str, quiet: bool) -> Self {
        if quiet || !std::io::stderr().is_terminal() {
            return Progress::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        if let Ok(style) =
            ProgressStyle::with_template("{msg} [{elapsed_precise}] {wide_bar} {pos}/{len} ({eta})")
        {
            bar.set_style(style);
        }
        bar.set_message(label.to_string());
        Progress::with_bar(bar, true, label)
    }

    /// A bar that draws nothing (it still counts).
    pub fn hidden() -> Self {
        Progress::with_bar(ProgressBar::hidden(), false, "")
    }

    fn with_bar(bar: ProgressBar, visible: bool, label: &str) -> Self {
        Progress {
            bar,
            visible,
            label: label.to_string(),
            chains: AtomicUsize::new(0),
            warming_up: AtomicUsize::new(0),
            divergent: AtomicU64::new(0),
            stop: StopFlag::new(),
        }
    }

    /// The same bar, its chains stopped by `stop` (by default a flag of its
    /// own that nothing sets): a request on `stop` ends every chain of the
    /// run at its next iteration.
    pub fn with_stop(mut self, stop: StopFlag) -> Self {
        self.stop = stop;
        self
    }

    /// The flag that stops the run's chains (a clone shares it).
    pub fn stop_flag(&self) -> &StopFlag {
        &self.stop
    }

    /// Whether the chains were asked to stop.
    pub fn stop_requested(&self) -> bool {
        self.stop.is_requested()
    }

    /// A run of `chains` chains starts, all in warm-up, no divergence yet.
    pub fn start_chains(&self, chains: usize) {
        self.chains.store(chains, Ordering::Relaxed);
        self.warming_up.store(chains, Ordering::Relaxed);
        self.divergent.store(0, Ordering::Relaxed);
        self.redraw();
    }

    /// One chain's warm-up has ended.
    pub fn warmup_ended(&self) {
        let _ = self
            .warming_up
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        self.redraw();
    }

    /// Counts `iterations` more done.
    pub fn advance(&self, iterations: u64) {
        self.bar.inc(iterations);
    }

    /// Counts `iterations` more done, whose kept draws had `divergent`
    /// divergent transitions (the message is redrawn only when there are).
    pub fn advance_with_divergences(&self, iterations: u64, divergent: u64) {
        if divergent > 0 {
            self.divergent.fetch_add(divergent, Ordering::Relaxed);
            self.redraw();
        }
        self.bar.inc(iterations);
    }

    /// Chains still in warm-up.
    pub fn chains_warming_up(&self) -> usize {
        self.warming_up.load(Ordering::Relaxed)
    }

    /// Divergent transitions among the kept draws reported so far.
    pub fn divergent(&self) -> u64 {
        self.divergent.load(Ordering::Relaxed)
    }

    /// The bar's current message ([`progress_message`]).
    pub fn message(&self) -> String {
        progress_message(
            &self.label,
            self.chains.load(Ordering::Relaxed),
            self.warming_up.load(Ordering::Relaxed),
            self.divergent.load(Ordering::Relaxed),
        )
    }

    fn redraw(&self) {
        if self.visible {
            self.bar.set_message(self.message());
        }
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_says_the_phase_and_the_divergences() {
        let m = |w, d| progress_message("hmc on gaussian", 4, w, d);
        assert_eq!(m(4, 0), "hmc on gaussian: warm-up");
        assert_eq!(
            m(3, 0),
            "hmc on gaussian: 3 chains in warm-up, 1 sampling, 0 divergent"
        );
        assert_eq!(
            m(1, 7),
            "hmc on gaussian: 1 chain in warm-up, 3 sampling, 7 divergent"
        );
        assert_eq!(m(0, 12), "hmc on gaussian: sampling, 12 divergent");
        assert_eq!(progress_message("x", 0, 0, 0), "x");
        assert_eq!(progress_message("x", 1, 1, 0), "x: warm-up");
        assert_eq!(progress_message("x", 1, 0, 1), "x: sampling, 1 divergent");
    }

    #[test]
    fn a_hidden_bar_counts_phases_and_divergences() {
        let p = Progress::hidden();
        p.start_chains(2);
        assert_eq!((p.chains_warming_up(), p.divergent()), (2, 0));
        p.warmup_ended();
        p.advance_with_divergences(64, 3);
        assert_eq!((p.chains_warming_up(), p.divergent()), (1, 3));
        assert_eq!(p.message(), ": 1 chain in warm-up, 1 sampling, 3 divergent");
        p.warmup_ended();
        p.warmup_ended();
        assert_eq!(p.chains_warming_up(), 0, "never below zero");
        p.start_chains(3);
        assert_eq!((p.chains_warming_up(), p.divergent()), (3, 0));
    }
}
