//! The progress bar of a run: iterations done over all chains.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// An aggregated progress bar (iterations, warm-up included, of all chains),
/// drawn on stderr; hidden with `--quiet` or when stderr is not a terminal.
pub struct Progress {
    bar: ProgressBar,
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
        Progress { bar }
    }

    /// A bar that draws nothing.
    pub fn hidden() -> Self {
        Progress {
            bar: ProgressBar::hidden(),
        }
    }

    /// Counts `iterations` more done.
    pub fn advance(&self, iterations: u64) {
        self.bar.inc(iterations);
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
