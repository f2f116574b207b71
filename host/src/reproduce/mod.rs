//! `qnmc reproduce NAME`: the papers' experiments at their settings, our
//! numbers printed beside the paper's.
//!
//! Each experiment lives in its own module and returns a [`Reproduction`]: a
//! Markdown report (tables with the paper's figures beside ours, and what
//! differs and why) plus the charts to draw. Writing the files is the CLI's
//! job.

use crate::chart::Chart;

pub mod amagold_fig1;
pub mod recipe_fig2;

/// Options shared by every reproduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReproduceOptions {
    /// Seed of the first chain/run; others derive from it.
    pub seed: u64,
    /// Smaller run lengths for smoke tests and CI (the report says so);
    /// `false` runs at the paper's settings.
    pub quick: bool,
}

impl Default for ReproduceOptions {
    fn default() -> Self {
        ReproduceOptions {
            seed: 2016,
            quick: false,
        }
    }
}

/// What one reproduction produced.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reproduction {
    /// Identifier accepted by `qnmc reproduce` (e.g. `qnhmc-table1`).
    pub name: String,
    /// Human title (paper, table or figure).
    pub title: String,
    /// The Markdown report, tables included.
    pub markdown: String,
    /// Charts to render beside the report.
    pub charts: Vec<Chart>,
}
