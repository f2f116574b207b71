//! The default NUTS (quasi-Newton metric, 20 pairs) runs on ordinary threads
//! in a debug build, at D = 100 and at the host's largest dimension, 1000
//! (where the sampler alone, 2.5 MB, is larger than a 2 MiB thread's stack):
//! built in place on the heap (`AdaptiveNuts::new_boxed`), its construction
//! and draws need only the stack of one draw.
//!
//! A thread that overflows its stack aborts this test binary with "thread
//! '<name>' has overflowed its stack", naming the check that failed. The
//! budgets are the measured peaks (`cargo run -p qnmc-tests-debug --example
//! stack_use`, docs/NUTS.md) with room to spare; they are upper bounds, not
//! measurements: exceeding one means a copy of something large crept back
//! onto the stack.

use qnmc_tests_debug::{boxed_default_nuts, run};

/// Runs `f` on a thread named `name` with a stack of `bytes`.
fn on_thread<F: FnOnce() + Send + 'static>(name: &str, bytes: usize, f: F) {
    std::thread::Builder::new()
        .name(name.into())
        .stack_size(bytes)
        .spawn(f)
        .expect("a thread")
        .join()
        .expect("the chain ran");
}

/// Warm-up of `warmup` draws (it may end early), then the rest kept; the
/// kept draws' mean of Σθᵢ (sd √(D² + 4D) ≈ D per draw, and the draws are
/// nearly independent on this target) must lie within 5 sd / √kept of 0 — a
/// loose check that the chain samples, not a statistical test.
fn default_chain<const D: usize>(warmup: u64, draws: usize) {
    let mut chain = boxed_default_nuts::<D>(warmup);
    let (mean, kept) = run(&mut chain, 7, draws);
    assert!(kept >= draws - warmup as usize, "{kept} kept");
    let sd = ((D * D + 4 * D) as f64).sqrt();
    assert!(
        mean.abs() < 5.0 * sd / (kept as f64).sqrt() + 0.5 * sd,
        "{mean}"
    );
}

#[test]
fn d100_on_a_default_2_mib_thread() {
    on_thread("D = 100, 2 MiB", 2 << 20, || default_chain::<100>(300, 400));
}

#[test]
fn d1000_on_a_default_2_mib_thread() {
    on_thread("D = 1000, 2 MiB", 2 << 20, || {
        default_chain::<1000>(150, 180)
    });
}

/// D = 100 fits in 128 KiB: construction and every draw, warm-up included.
#[test]
fn d100_in_128_kib() {
    on_thread("D = 100, 128 KiB", 128 << 10, || {
        default_chain::<100>(300, 400)
    });
}

/// D = 1000 fits in 1 MiB, less than the sampler itself.
#[test]
fn d1000_in_1_mib() {
    on_thread("D = 1000, 1 MiB", 1 << 20, || {
        default_chain::<1000>(150, 180)
    });
}
