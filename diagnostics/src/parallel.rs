//! Spreading independent per-quantity diagnostics over the cores.
//!
//! Each quantity's diagnostics are computed by one thread from start to end,
//! with exactly the arithmetic of a sequential loop, and the results are put
//! back in quantity order. So the output is bit-identical to the sequential
//! computation and does not depend on the number of threads or on which
//! thread took which quantity.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads [`parallel_map`] is given by the callers in this crate: the
/// machine's available parallelism (1 if it cannot be determined).
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// `(0..count).map(f).collect()`, computed on up to `threads` threads (the
/// calling thread being one of them).
///
/// Quantities are handed out one at a time, so uneven costs balance out.
/// Every `f(j)` runs on a single thread, and the results come back in index
/// order, so the output is identical, bit for bit, to the sequential map for
/// any `threads` (0 is taken as 1). A panic in `f` is propagated.
///
/// ```
/// use qnmc_diagnostics::parallel_map;
///
/// let squares = parallel_map(5, 3, |j| j * j);
/// assert_eq!(squares, [0, 1, 4, 9, 16]);
/// ```
pub fn parallel_map<T, F>(count: usize, threads: usize, f: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    let threads = threads.clamp(1, count.max(1));
    if threads == 1 {
        return (0..count).map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let j = next.fetch_add(1, Ordering::Relaxed);
            if j >= count {
                break done;
            }
            done.push((j, f(j)));
        }
    };
    let mut slots: Vec<Option<T>> = std::iter::repeat_with(|| None).take(count).collect();
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut parts = vec![work()];
        for helper in helpers {
            match helper.join() {
                Ok(part) => parts.push(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        for (j, value) in parts.into_iter().flatten() {
            slots[j] = Some(value);
        }
    });
    slots
        .into_iter()
        .map(|v| v.expect("every index is computed exactly once"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Summary, summarize};

    /// Deterministic pseudo-random chains (AR(1) with φ depending on `j`).
    fn chains(j: usize) -> Vec<Vec<f64>> {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64.wrapping_mul(j as u64 + 1);
        let phi = 0.1 + 0.8 * (j % 7) as f64 / 7.0;
        (0..4)
            .map(|_| {
                let mut x = 0.0;
                (0..200)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(1_442_695_040_888_963_407);
                        let u = (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                        x = phi * x + u;
                        x
                    })
                    .collect()
            })
            .collect()
    }

    fn summary(j: usize) -> Summary {
        let c = chains(j);
        let slices: Vec<&[f64]> = c.iter().map(Vec::as_slice).collect();
        summarize(&slices)
    }

    fn bits(s: &Summary) -> [u64; 10] {
        [
            s.mean,
            s.sd,
            s.ess_bulk,
            s.ess_tail,
            s.rhat,
            s.mcse_mean,
            s.mcse_sd,
            s.q5,
            s.q50,
            s.q95,
        ]
        .map(f64::to_bits)
    }

    #[test]
    fn results_are_bit_identical_for_any_thread_count() {
        let sequential: Vec<[u64; 10]> = (0..23).map(|j| bits(&summary(j))).collect();
        for threads in [0, 1, 2, 3, 8, 64] {
            let parallel: Vec<[u64; 10]> = parallel_map(23, threads, summary)
                .iter()
                .map(bits)
                .collect();
            assert_eq!(parallel, sequential, "{threads} threads");
        }
    }

    #[test]
    fn order_is_kept_and_every_index_runs_once() {
        let calls = AtomicUsize::new(0);
        let out = parallel_map(1000, 4, |j| {
            calls.fetch_add(1, Ordering::Relaxed);
            // Uneven work, so that threads finish out of order.
            (0..(j % 13) * 100).fold(j as u64, |a, b| a.wrapping_mul(31).wrapping_add(b as u64))
        });
        assert_eq!(calls.into_inner(), 1000);
        let expected: Vec<u64> = (0..1000)
            .map(|j: usize| {
                (0..(j % 13) * 100).fold(j as u64, |a, b| a.wrapping_mul(31).wrapping_add(b as u64))
            })
            .collect();
        assert_eq!(out, expected);
        assert!(parallel_map(0, 4, |j| j).is_empty());
        assert!(available_threads() >= 1);
    }

    #[test]
    #[should_panic(expected = "quantity 7")]
    fn a_panic_in_a_worker_is_propagated() {
        parallel_map(20, 3, |j| {
            if j == 7 {
                panic!("quantity 7");
            }
            j
        });
    }
}
