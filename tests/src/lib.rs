//! Dense reference implementations.
//!
//! [`dense`]: plain, allocating nalgebra versions of the core's L-BFGS engine and
//! samplers, fed the same random numbers, used by `tests/oracles.rs` and
//! `tests/reference_chains.rs`.

pub mod dense;
