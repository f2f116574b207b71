//! qnmc in WebAssembly: a `#![no_std]` module (no allocator, no wasm-bindgen)
//! exporting plain `extern "C"` functions that run the firmware example's jobs
//! (`qnmc_firmware_example::job`) on the same built-in data set.
//!
//! Build: `cargo build -p qnmc-wasm-example --target wasm32-unknown-unknown --release`;
//! `tests/node/wasm.test.mjs` loads the .wasm with `node --test` and checks every
//! export against the host's numbers in `tests/node/expected.json` (written by
//! `tests/tests/reference_chains/embedded.rs`), bit for bit.
//!
//! With the feature `web` the module also exports the browser API of
//! [`web`] (NUTS on a JS or Rust model of run-time dimension; the page and
//! its headless-Chromium test are in `web/`, docs/EMBEDDED.md "In the
//! browser") and imports `env.log_density`.
//!
//! u64 arguments and results are `BigInt`s on the JavaScript side.
//! On the host the crate builds as an ordinary (std) library so that
//! `cargo test --workspace` and clippy work; the panic handler exists only on
//! wasm32 (where nothing here can panic: the jobs use no indexing on input).

#![cfg_attr(target_arch = "wasm32", no_std)]
#![deny(missing_docs)]

use qnmc_firmware_example::job;

// The browser API (`web/`, docs/EMBEDDED.md): in the wasm32 module only with
// the feature `web`, on the host always (so that clippy sees it).
#[cfg(any(feature = "web", not(target_arch = "wasm32")))]
pub mod web;

/// Mean of β₁ over `steps` QNHMC draws in f64 from `seed`
/// ([`job::chain_mean`]).
#[unsafe(no_mangle)]
pub extern "C" fn run_chain(seed: u64, steps: u32) -> f64 {
    job::chain_mean::<f64>(seed, steps)
}

/// The same chain in f32 (its running mean kept in f64).
#[unsafe(no_mangle)]
pub extern "C" fn run_chain_f32(seed: u64, steps: u32) -> f64 {
    job::chain_mean::<f32>(seed, steps)
}

/// FNV-1a hash of the f64 QNHMC bit-identity chain ([`job::bit_identity`]).
#[unsafe(no_mangle)]
pub extern "C" fn bit_identity_f64_qnhmc(seed: u64, steps: u32) -> u64 {
    job::bit_identity::<f64>(seed, steps)[0]
}

/// FNV-1a hash of the f64 HAMCMC bit-identity chain.
#[unsafe(no_mangle)]
pub extern "C" fn bit_identity_f64_hamcmc(seed: u64, steps: u32) -> u64 {
    job::bit_identity::<f64>(seed, steps)[1]
}

/// FNV-1a hash of the f32 QNHMC bit-identity chain.
#[unsafe(no_mangle)]
pub extern "C" fn bit_identity_f32_qnhmc(seed: u64, steps: u32) -> u64 {
    job::bit_identity::<f32>(seed, steps)[0]
}

/// FNV-1a hash of the f32 HAMCMC bit-identity chain.
#[unsafe(no_mangle)]
pub extern "C" fn bit_identity_f32_hamcmc(seed: u64, steps: u32) -> u64 {
    job::bit_identity::<f32>(seed, steps)[1]
}

/// FNV-1a hash of the f64 NUTS bit-identity chain with the diagonal metric
/// ([`job::nuts_bit_identity`], seed + 2 as in [`job::bit_identity`]).
#[unsafe(no_mangle)]
pub extern "C" fn bit_identity_f64_nuts_diag(seed: u64, steps: u32) -> u64 {
    job::nuts_bit_identity::<f64>(job::NutsMetric::Diagonal, seed.wrapping_add(2), steps)
}

/// FNV-1a hash of the f64 NUTS bit-identity chain with the L-BFGS metric
/// (seed + 3).
#[unsafe(no_mangle)]
pub extern "C" fn bit_identity_f64_nuts_lbfgs(seed: u64, steps: u32) -> u64 {
    job::nuts_bit_identity::<f64>(job::NutsMetric::Lbfgs, seed.wrapping_add(3), steps)
}

/// FNV-1a hash of the f32 NUTS bit-identity chain with the diagonal metric.
#[unsafe(no_mangle)]
pub extern "C" fn bit_identity_f32_nuts_diag(seed: u64, steps: u32) -> u64 {
    job::nuts_bit_identity::<f32>(job::NutsMetric::Diagonal, seed.wrapping_add(2), steps)
}

/// FNV-1a hash of the f32 NUTS bit-identity chain with the L-BFGS metric.
#[unsafe(no_mangle)]
pub extern "C" fn bit_identity_f32_nuts_lbfgs(seed: u64, steps: u32) -> u64 {
    job::nuts_bit_identity::<f32>(job::NutsMetric::Lbfgs, seed.wrapping_add(3), steps)
}

/// `size_of` the QNHMC and HAMCMC samplers of the jobs in f64, packed as
/// `qnhmc << 32 | hamcmc`.
#[unsafe(no_mangle)]
pub extern "C" fn sampler_sizes_f64() -> u64 {
    let [q, h] = job::sampler_sizes::<f64>();
    ((q as u64) << 32) | h as u64
}

/// `size_of` the NUTS samplers with their warm-up in f64
/// ([`job::nuts_sizes`]), packed as `diagonal << 32 | lbfgs`.
#[unsafe(no_mangle)]
pub extern "C" fn nuts_sizes_f64() -> u64 {
    let [_, diagonal, _, lbfgs] = job::nuts_sizes::<f64>();
    ((diagonal as u64) << 32) | lbfgs as u64
}

#[cfg(target_arch = "wasm32")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}
