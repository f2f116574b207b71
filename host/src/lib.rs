//! # qnmc-host
//!
//! The std side of qnmc: models and targets written by hand with their
//! analytic posteriors, the chain runner (every sampler, parallel chains,
//! checkpoints), CmdStan CSV output, summaries and charts, and the
//! diagnostics of [`qnmc_diagnostics`] re-exported. The `qnmc` command line
//! is the crate `qnmc-cli` over this one.

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

pub mod chart;
/// The diagnostics (ESS, R̂, MCSE), from their own crate [`qnmc_diagnostics`]:
/// `qnmc_host::diagnostics::ess_bulk` is `qnmc_diagnostics::ess_bulk`.
pub use qnmc_diagnostics as diagnostics;
pub mod draw_values;
pub mod draws;
pub mod fit;
pub mod input;
pub mod metric_kind;
pub mod model;
pub mod output;
pub mod run;
pub mod shared_data;
pub mod targets;

/// The README's Rust examples (the library as the CLI runs it, then the
/// `no_std` core on its own), compiled and run as doctests here: the first
/// needs this crate, the second only the crates this one depends on.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
