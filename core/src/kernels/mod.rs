//! Every piece of vector and small-matrix code of the core, in one place:
//! the kernels the samplers, metrics and warm-up call, and the choice of
//! instructions they run with.
//!
//! | file | what |
//! |---|---|
//! | `vectors.rs` | dot products (plain and four-lane [`dot_wide`]), axpy, scale, norms, the fused half kick |
//! | `lanes.rs` | the NUTS trajectory's fused passes (leapfrog half-step, U-turn checks) |
//! | `groups.rs` | the L-BFGS metric's passes over a few directions at a time |
//! | `small_dense.rs` | 2M × 2M matrices in fixed storage and the cyclic Jacobi eigensolver |
//! | `dispatch.rs` | run-time AVX2: each kernel compiled twice, the same bits ([`set_avx2_allowed`]) |
//!
//! Every kernel is a plain loop in a fixed order, with no fused multiply-add
//! and no reordering, so results are bit for bit the same on every target
//! and with or without AVX2.
//!
//! **Outside semver.** This module is public so that the benches and tests
//! can time and compare the kernels; its items may change in any release.
//! Samplers, metrics and warm-up are the supported interface.
//!
//! ```
//! // Both settings give the same bits; only the speed differs.
//! let a: [f64; 37] = core::array::from_fn(|i| 1.0 / (i as f64 + 0.3));
//! qnmc::kernels::set_avx2_allowed(false);
//! let portable = qnmc::kernels::dot_wide(&a, &a);
//! qnmc::kernels::set_avx2_allowed(true);
//! assert_eq!(qnmc::kernels::dot_wide(&a, &a).to_bits(), portable.to_bits());
//! ```

mod dispatch;
pub(crate) mod groups;
pub(crate) mod lanes;
pub(crate) mod small_dense;
mod vectors;

#[cfg(runtime_avx2)]
pub(crate) use dispatch::use_avx2;
pub use dispatch::{MIN_WIDE_LENGTH, RUNTIME_DISPATCH, kernels_in_use, set_avx2_allowed};
pub(crate) use dispatch::{at_length, dimension_in_use, vector_kernel};
// Named one by one, so that a new kernel is public only when added here.
pub use vectors::{
    all_finite, axpy, difference, dot, dot_wide, dot_wide_slice, half_kick_and_kinetic_energy,
    norm, scale,
};
pub(crate) use vectors::{
    axpy_leading, axpy_many, axpy_many_then_scale, difference_leading, dot_leading, dot_wide_many,
    half_kick_and_kinetic_energy_leading, store_and_dot_wide_many, zero_from,
};
