//! Conformance: what every sampler promises whatever the input, one test
//! binary for the whole property × sampler-family grid.
//!
//! | module | property | samplers |
//! |---|---|---|
//! | `sampler_conformance` | through the `Sampler`/`Step` traits alone: bad step sizes refused without a trace, a non-finite target leaves a usable state, the reported U is the target's, no heap | all 14, one `conformance!` line each |
//! | `no_heap::hmc` | no heap event while stepping (1000 steps, f64 and f32, every mode and metric, divergent and saturated trees) and in every L-BFGS operator | HMC, QNHMC, HAMCMC, NUTS (4 metrics), `LbfgsMemory` |
//! | `no_heap::amagold` | no heap event over 1000 steps | AMAGOLD, L2MC, dual averaging, warm-up |
//! | `no_heap::ensemble` | no heap event while built and over 1000 updates | HMC-BFGS, MH-BFGS |
//! | `no_heap::recipe` | no heap event over 1000 steps, every mode | SGLD, pSGLD, SGRLD, SGHMC, SGNHT, SGRHMC |
//! | `bad_input::hmc` | invalid settings name the field; non-finite starts refused; NaN/∞ U or ∇U are counted divergences or errors that leave the state bit for bit | HMC, QNHMC, HAMCMC, NUTS, `LbfgsMemory` |
//! | `bad_input::amagold` | the same | AMAGOLD, L2MC |
//! | `bad_input::ensemble` | the same | HMC-BFGS, MH-BFGS |
//! | `bad_input::recipe` | the same, plus faulty metrics and Hessians | SGLD, pSGLD, SGRLD, SGHMC, SGNHT, SGRHMC |
//! | `no_panic_properties` | property tests: random settings, scripts of non-finite evaluations, never a panic and every documented contract | all |
//!
//! Counting heap events: this binary installs the counting allocator of
//! `qnmc_tests::heap` once, here. It counts per thread (a thread-local flag and
//! counter, switched on only inside `count_heap`), so the tests of every module
//! can run on parallel threads without seeing each other's allocations; each
//! `no_heap` module keeps its positive control showing that the counter counts.

mod common;

mod bad_input {
    //! Bad input never panics, per sampler family.
    mod amagold;
    mod ensemble;
    mod hmc;
    mod recipe;
}
mod no_heap {
    //! The samplers never touch the heap, per sampler family.
    mod amagold;
    mod ensemble;
    mod hmc;
    mod recipe;
}
mod no_panic_properties;
mod sampler_conformance;

use qnmc_tests::heap::CountingAllocator;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;
