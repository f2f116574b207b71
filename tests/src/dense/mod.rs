//! Dense, allocating reference implementations of the core's algorithms.
//!
//! Written from docs/ALGORITHMS.md and the core's documented order of random draws,
//! with `nalgebra` matrices and plain `Vec`s, not from the core's loops:
//!
//! - [`dense_bfgs`]: the BFGS matrices H (inverse update), B (direct update) and
//!   the product-form factor S from a list of pairs, plus a `Vec` pair memory with
//!   the curvature rule and the γ rule;
//! - [`hmc`]: HMC with any dense inverse metric K;
//! - [`qnhmc`]: QNHMC, both masses, adaptive and frozen memory;
//! - [`hamcmc`]: HAMCMC, start-up SGLD, both step-size schedules;
//! - [`targets`]: test targets evaluated by one shared function, so the core and
//!   the reference see bit-identical U and ∇U;
//! - [`util`]: the random draws (through the core's public generators), the
//!   Metropolis test and error measures.
//!
//! The references draw their random numbers with the core's public functions
//! (`qnmc::random::fill_standard_normal`, `Real::uniform_open_closed`) in the
//! order the core documents, from their own generator seeded like the core's.

pub mod dense_bfgs;
pub mod hamcmc;
pub mod hmc;
pub mod nuts;
pub mod qnhmc;
pub mod targets;
pub mod util;

pub use dense_bfgs::{DenseBfgs, DenseCurvature, DensePairs, DenseScaling};
pub use hamcmc::{DenseHamcmc, DenseHamcmcError, DenseSchedule};
pub use hmc::DenseHmc;
pub use qnhmc::DenseQnhmc;
pub use targets::{
    Banana, CorrelatedGaussian, DenseMinibatchTarget, DenseTarget, LinearGaussianMinibatch,
    LogisticRegression,
};
pub use util::{DenseStep, coordinate_error, max_coordinate_error, rel_frobenius};
