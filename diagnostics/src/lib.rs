//! MCMC diagnostics that reproduce Stan's numbers: bulk and tail ESS,
//! basic ESS, split and rank-normalised R̂, Monte Carlo standard errors, plus
//! the autocorrelation, rank-normalisation and normal-quantile building
//! blocks, HAMCMC's step-size-weighted estimators, and [`parallel_map`] to
//! compute many quantities' diagnostics on all cores with the sequential
//! results.
//!
//! Chains are passed as `&[&[f64]]`, one slice per chain, all of the same
//! length. Following Stan, every diagnostic returns NaN (never panics) when
//! there are no chains, the chains have different lengths, there are too few
//! draws (fewer than 4 per chain; everything built on a split-chain ESS —
//! bulk, tail and split basic ESS and both MCSEs — needs 4 per half chain,
//! i.e. 8 per chain), a draw is infinite or NaN, or a (split) chain is
//! constant. Split chains are the first and second halves of each chain, the
//! middle draw being dropped for odd lengths.
//!
//! References: A. Vehtari, A. Gelman, D. Simpson, B. Carpenter, P.-C. Bürkner
//! (2021), *Rank-normalization, folding, and localization: an improved R̂ for
//! assessing convergence of MCMC*, Bayesian Analysis 16(2); Stan's
//! `src/stan/analyze/mcmc/`; C. J. Geyer (1992), *Practical Markov chain
//! Monte Carlo*, Statistical Science 7(4).
//!
//! ```
//! use qnmc_diagnostics::{ess_bulk, split_rhat, summarize};
//!
//! let a: Vec<f64> = (0..100).map(|i| (i as f64 * 1.3).sin()).collect();
//! let b: Vec<f64> = (0..100).map(|i| (i as f64 * 2.9).cos()).collect();
//! let chains = [&a[..], &b[..]];
//! assert!(ess_bulk(&chains) > 0.0);
//! assert!(split_rhat(&chains).is_finite());
//! let s = summarize(&chains);
//! assert!(s.q5 < s.q50 && s.q50 < s.q95);
//! assert!(ess_bulk(&[&a[..3]]).is_nan()); // too few draws
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

mod autocorrelation;
mod chains;
mod ess;
mod fft;
mod mcse;
mod normal;
mod parallel;
mod rank_normalize;
mod rhat;
mod stats;
mod summary;
mod weighted;

pub use autocorrelation::{autocorrelation, autocovariance};
pub use ess::{ess_basic, ess_basic_split, ess_bulk, ess_tail};
pub use mcse::{mcse_mean, mcse_sd};
pub use normal::{normal_cdf, normal_pdf, normal_quantile};
pub use parallel::{available_threads, parallel_map};
pub use rank_normalize::rank_normalize;
pub use rhat::{rank_normalized_rhat, split_rhat};
pub use stats::{mean, quantile, variance};
pub use summary::{Summary, summarize, summarize_with_chain_ess};
pub use weighted::{weighted_mean, weighted_variance};

/// The crate README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
