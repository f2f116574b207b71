//! HMC-BFGS and MH-BFGS never touch the heap: a counting global allocator
//! (`qnmc_tests::heap`, per-thread counting, installed by `main.rs`) sees zero heap events while the
//! samplers are built and while they take 1000 updates, in f64 and f32, on the
//! 100-D paper Gaussian and a 4-D banana-like target where the curvature filter
//! removes points. A positive control shows the counter counts.

use std::hint::black_box;

use qnmc::samplers::ensemble::{HmcBfgs, HmcBfgsSettings, MhBfgs, MhBfgsProposal, MhBfgsSettings};
use qnmc::{Potential, Real};
use qnmc_host::targets::CorrelatedGaussian;
use qnmc_tests::heap::count_heap;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

const STEPS: usize = 1000;

#[test]
fn counter_sees_allocations() {
    let (n, ()) = count_heap(|| {
        let v: Vec<u8> = Vec::with_capacity(1);
        black_box(&v);
    });
    assert_eq!(n, 2);
    let (n, x) = count_heap(|| black_box(1u64 + 2));
    assert_eq!((n, x), (0, 3));
}

/// U = Σ_k [ (a_k² / 2) + (b_k − a_k²/2)² ] over coordinate pairs: banana-shaped,
/// not log-concave, so sᵀy ≤ 0 happens and the filter removes points.
struct Twisted;

impl<T: Real, const D: usize> Potential<T, D> for Twisted {
    fn potential_and_gradient(&self, x: &[T; D], g: &mut [T; D]) -> T {
        let mut u = T::ZERO;
        for k in 0..D / 2 {
            let (a, b) = (x[2 * k], x[2 * k + 1]);
            let r = b - T::HALF * a * a;
            u += T::HALF * a * a + r * r;
            g[2 * k] = a - T::TWO * r * a;
            g[2 * k + 1] = T::TWO * r;
        }
        u
    }
}

fn starts<T: Real, const D: usize, const K: usize>() -> [[T; D]; K] {
    let mut out = [[T::ZERO; D]; K];
    for (k, x) in out.iter_mut().enumerate() {
        for (j, v) in x.iter_mut().enumerate() {
            *v = T::from_f64(((k * 7 + j * 3) % 11) as f64 / 5.0 - 1.0);
        }
    }
    out
}

/// Builds and runs both samplers (all proposals) in the measured region;
/// returns (heap events, acceptances, removed points).
fn run<T: Real, const D: usize, const K: usize, const M: usize, P: Potential<T, D>>(
    target: &P,
    step: f64,
) -> (usize, (usize, u64)) {
    let mut rng = XorShiftRng::seed_from_u64(9);
    count_heap(|| {
        let mut accepted = 0usize;
        let mut removed = 0u64;
        let x0 = starts::<T, D, K>();
        let mut hmc =
            HmcBfgs::<T, D, K, M>::new(HmcBfgsSettings::new(T::from_f64(step), 4), x0, target)
                .unwrap();
        for _ in 0..STEPS {
            let s = hmc.step(target, &mut rng);
            accepted += s.accepted as usize;
            removed += s.pairs_skipped as u64;
        }
        black_box(hmc.positions());
        for proposal in [MhBfgsProposal::RandomWalk, MhBfgsProposal::Newton] {
            let settings = MhBfgsSettings::new(T::from_f64(step), proposal);
            let mut mh = MhBfgs::<T, D, K, M>::new(settings, x0, target).unwrap();
            for _ in 0..STEPS {
                let s = mh.step(target, &mut rng);
                accepted += s.accepted as usize;
                removed += s.pairs_skipped as u64;
            }
            black_box(mh.positions());
        }
        (accepted, removed)
    })
}

#[test]
fn no_heap_f64() {
    let (n, (accepted, _)) = run::<f64, 100, 12, 10, _>(&CorrelatedGaussian::<100>::paper(), 0.6);
    assert_eq!(n, 0, "heap events on the Gaussian");
    assert!(accepted > 300, "the samplers did not move: {accepted}");
    let (n, (accepted, removed)) = run::<f64, 4, 6, 4, _>(&Twisted, 0.5);
    assert_eq!(n, 0, "heap events on the twisted target");
    assert!(
        accepted > 300 && removed > 0,
        "{accepted} accepted, {removed} removed"
    );
}

#[test]
fn no_heap_f32() {
    let (n, (accepted, _)) = run::<f32, 100, 12, 10, _>(&CorrelatedGaussian::<100>::paper(), 0.6);
    assert_eq!(n, 0, "heap events on the Gaussian");
    assert!(accepted > 300, "the samplers did not move: {accepted}");
    let (n, (accepted, removed)) = run::<f32, 4, 6, 4, _>(&Twisted, 0.5);
    assert_eq!(n, 0, "heap events on the twisted target");
    assert!(
        accepted > 300 && removed > 0,
        "{accepted} accepted, {removed} removed"
    );
}
