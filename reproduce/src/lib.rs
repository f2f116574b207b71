//! `qnmc reproduce NAME`: the papers' experiments at their settings, our
//! numbers printed beside the paper's, and the benchmarks built on them
//! (`sg-conditioning`).
//!
//! Each experiment lives in its own module and returns a [`Reproduction`]: a
//! Markdown report (tables with the paper's figures beside ours, and what
//! differs and why) plus the charts to draw. Writing the files is the CLI's
//! job (the crate `qnmc-cli`, `qnmc reproduce`). The models, samplers'
//! runs and charts are the library `qnmc-host`'s; this crate holds what
//! each experiment does with them.
//!
//! ```
//! use qnmc_reproduce::{NAMES, ReproduceOptions, run};
//!
//! assert!(NAMES.contains(&"qnhmc-table1"));
//! assert!(run("no-such-experiment", &ReproduceOptions::default()).is_none());
//! ```

#![deny(missing_docs)]
// At most 100 lines of code per function outside tests (clippy.toml), or
// an allow with its reason beside the function: scripts/size-limits.py.
#![warn(clippy::too_many_lines)]
#![cfg_attr(
    test,
    allow(clippy::too_many_lines, reason = "tests are not held to the limit")
)]
#![forbid(unsafe_code)]
// Numeric kernels index several parallel arrays at once; index loops say that best.
#![allow(clippy::needless_range_loop)]

use qnmc_host::chart::Chart;

pub mod amagold_common;
pub mod amagold_fig1;
pub mod amagold_fig2;
pub mod amagold_fig4;
pub mod hamcmc_fig1;
pub mod hamcmc_fig2;
pub mod hamcmc_fig5;
pub mod movielens;
pub mod qnhmc_table1;
pub mod qnhmc_table2;
pub mod qnhmc_table3;
pub mod recipe_fig2;
pub mod recipe_fig3;
pub mod sg_conditioning;
pub mod zhang_sutton_fig2;
pub mod zhang_sutton_table2;

mod report;

/// Names accepted by [`run`] (and `qnmc reproduce NAME`), in display order.
pub const NAMES: &[&str] = &[
    "qnhmc-table1",
    "qnhmc-table2",
    "qnhmc-table3",
    "zhang-sutton-table2",
    "zhang-sutton-fig2",
    "hamcmc-fig1",
    "hamcmc-fig2",
    "hamcmc-fig5",
    "amagold-fig1",
    "amagold-fig2",
    "amagold-fig4",
    "recipe-fig2",
    "recipe-fig3",
    "sg-conditioning",
];

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
    /// Parts that did not run, each with why (data not found); empty when
    /// everything ran. `qnmc reproduce` prints them and exits with
    /// `qnmc_cli::EXIT_SKIPPED`.
    pub skipped: Vec<String>,
}

/// Runs the reproduction called `name` (one of [`NAMES`]); `None` for an
/// unknown name.
pub fn run(name: &str, options: &ReproduceOptions) -> Option<Reproduction> {
    match name {
        "qnhmc-table1" => Some(qnhmc_table1::run(options)),
        "qnhmc-table2" => Some(qnhmc_table2::run(options)),
        "qnhmc-table3" => Some(qnhmc_table3::run(options)),
        "zhang-sutton-table2" => Some(zhang_sutton_table2::run(options)),
        "zhang-sutton-fig2" => Some(zhang_sutton_fig2::run(options)),
        "hamcmc-fig1" => Some(hamcmc_fig1::run(options)),
        "hamcmc-fig2" => Some(hamcmc_fig2::run(options)),
        "hamcmc-fig5" => Some(hamcmc_fig5::run(options)),
        "amagold-fig1" => Some(amagold_fig1::run(options)),
        "amagold-fig2" => Some(amagold_fig2::run(options)),
        "amagold-fig4" => Some(amagold_fig4::run(options)),
        "recipe-fig2" => Some(recipe_fig2::run(options)),
        "recipe-fig3" => Some(recipe_fig3::run(options)),
        "sg-conditioning" => Some(sg_conditioning::run(options)),
        _ => None,
    }
}
