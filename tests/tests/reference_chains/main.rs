//! Reference chains: the core's chains, draw by draw, against an independent
//! implementation fed the same random numbers, or against committed bits.
//!
//! | module | property | samplers |
//! |---|---|---|
//! | `hmc` | the same draws (1e-10), decisions, counts and L-BFGS pairs as the dense nalgebra reference for 500 draws; frozen QNHMC is HMC with metric C M⁻¹ C | HMC, QNHMC (4 modes), HAMCMC |
//! | `nuts` | the same trees, draws and statistics as the dense NUTS reference | NUTS (identity, diagonal, dense, L-BFGS metrics) |
//! | `amagold` | the same draws and decisions as the dense reference | AMAGOLD, L2MC (both momentum refreshes) |
//! | `ensemble` | the same draws, metric and decisions as the dense reference | HMC-BFGS, MH-BFGS (random walk, Newton) |
//! | `recipe` | the same draws as the dense recipe reference | SGLD, pSGLD, SGRLD, SGHMC, SGNHT, SGRHMC |
//! | `vector_extensions` | the AVX2 kernels give the portable kernels' bits (in a child process: the switch is global) | adaptive NUTS (L-BFGS and diagonal metrics) |
//! | `embedded` | the firmware job's chains hash to the committed bits (`firmware-example/src/expected.rs`, `tests/node/expected.json`) | QNHMC, HAMCMC, NUTS (diagonal, L-BFGS) |
//!
//! Every module has negative controls (a reference that differs, a changed
//! bit, a chain that must move) showing that its comparison can fail.

mod common;

mod amagold;
mod embedded;
mod ensemble;
mod hmc;
mod nuts;
mod recipe;
mod vector_extensions;
