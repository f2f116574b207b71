//! Dense reference implementations.
//!
//! [`dense`]: plain, allocating nalgebra versions of the core's L-BFGS engine and
//! samplers, fed the same random numbers, used by `tests/operators/oracles.rs` and
//! `tests/reference_chains/hmc.rs`; [`recipe`], [`amagold`], [`ensemble`]: the same for the
//! complete-recipe family, AMAGOLD/L2MC and HMC-BFGS/MH-BFGS; [`heap`]: the
//! counting global allocator that the `conformance` test binary installs (its
//! `no_heap` modules and the `conformance!` macro count with it).

pub mod amagold;
pub mod dense;
pub mod ensemble;
pub mod heap;
pub mod recipe;
