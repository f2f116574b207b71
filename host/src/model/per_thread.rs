//! A potential that is not `Sync` shared by chains that run in parallel.

use std::sync::Mutex;

use qnmc::Potential;

/// Makes a potential that is `Send` but not `Sync` — a `ReverseGradient`,
/// whose tape is written through `&self` — usable by several chains at once:
/// each evaluation takes one potential from a pool (making a new one with
/// `make` when every one is in use) and puts it back after. The pool grows
/// to the number of evaluations in flight at once, at most one per chain
/// thread; the lock is held only to take and to return one, never during an
/// evaluation.
///
/// ```
/// use qnmc::Scalar;
/// use qnmc::autodiff::{AutodiffModel, ReverseGradient};
/// use qnmc_host::fit::Sampling;
/// use qnmc_host::model::{PerThread, PotentialModel};
///
/// /// Independent N(0, σᵢ²), σᵢ = 1 + i/10, in 20 dimensions.
/// #[derive(Clone, Copy)]
/// struct Scales;
/// impl AutodiffModel<20> for Scales {
///     fn potential<S: Scalar>(&self, x: &[S; 20]) -> S {
///         let mut u = S::from_f64(0.0);
///         for (i, &xi) in x.iter().enumerate() {
///             let s = 1.0 + i as f64 / 10.0;
///             u = u + S::from_f64(0.5 / (s * s)) * xi * xi;
///         }
///         u
///     }
/// }
///
/// // Reverse mode: one pass of U and one backward sweep per gradient,
/// // whatever the dimension. 128 tape nodes are enough for this U (too few
/// // would make every transition divergent); `ReverseGradient::tape` tells
/// // how many one evaluation records.
/// let potential = PerThread::new(|| ReverseGradient::<_, f64, 128>::new(Scales));
/// let model = PotentialModel::<_, 20>::new("scales", potential);
/// let fit = Sampling::new().seed(2).draws(300).run(&model).unwrap();
/// assert!(fit.usable(), "{:?}", fit.health.lines());
/// ```
pub struct PerThread<P, F> {
    make: F,
    pool: Mutex<Vec<Box<P>>>,
}

impl<P, F: Fn() -> P> PerThread<P, F> {
    /// A pool of the potentials `make` builds, empty until the first
    /// evaluation.
    pub fn new(make: F) -> Self {
        PerThread {
            make,
            pool: Mutex::new(Vec::new()),
        }
    }

    /// How many potentials the pool holds (all made so far, when no
    /// evaluation is running).
    pub fn made(&self) -> usize {
        self.pool.lock().map(|p| p.len()).unwrap_or(0)
    }
}

impl<P, F> core::fmt::Debug for PerThread<P, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PerThread").finish_non_exhaustive()
    }
}

impl<P, F, const D: usize> Potential<f64, D> for PerThread<P, F>
where
    P: Potential<f64, D>,
    F: Fn() -> P,
{
    fn potential_and_gradient(&self, position: &[f64; D], gradient: &mut [f64; D]) -> f64 {
        // A poisoned lock (a panic elsewhere while taking or returning one)
        // only loses the pool: a new potential is made.
        let taken = self.pool.lock().ok().and_then(|mut pool| pool.pop());
        let potential = taken.unwrap_or_else(|| Box::new((self.make)()));
        let u = potential.potential_and_gradient(position, gradient);
        if let Ok(mut pool) = self.pool.lock() {
            pool.push(potential);
        }
        u
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use qnmc::Scalar;
    use qnmc::autodiff::{AutodiffModel, ForwardGradient, ReverseGradient};

    use super::*;
    use crate::fit::Sampling;
    use crate::model::{Model, PotentialModel};

    /// A 3-D banana: x₀ ~ N(0, 4), x₁ | x₀ ~ N(x₀²/4, 1), x₂ ~ N(0, 1).
    #[derive(Clone, Copy)]
    struct Banana;
    impl AutodiffModel<3> for Banana {
        fn potential<S: Scalar>(&self, x: &[S; 3]) -> S {
            let r = x[1] - S::from_f64(0.25) * x[0] * x[0];
            S::from_f64(0.125) * x[0] * x[0] + S::from_f64(0.5) * (r * r + x[2] * x[2])
        }
    }

    #[test]
    fn the_pool_gives_reverse_mode_gradients_to_parallel_chains() {
        let made = AtomicUsize::new(0);
        let pooled = PerThread::new(|| {
            made.fetch_add(1, Ordering::Relaxed);
            ReverseGradient::<_, f64, 64>::new(Banana)
        });
        let model = PotentialModel::<_, 3>::new("banana", pooled);
        let forward = PotentialModel::<_, 3>::new("banana", ForwardGradient::<_, 3>::new(Banana));
        for x in [[0.3, -1.2, 2.0], [-2.5, 1.5, 0.0], [4.0, 3.9, -0.7]] {
            let (mut g, mut h) = ([0.0; 3], [0.0; 3]);
            let u = model.potential_and_gradient(&x, &mut g);
            let v = forward.potential_and_gradient(&x, &mut h);
            assert!((u - v).abs() <= 1e-12 * v.abs().max(1.0), "{u} {v}");
            for i in 0..3 {
                assert!(
                    (g[i] - h[i]).abs() <= 1e-12 * h[i].abs().max(1.0),
                    "{g:?} {h:?}"
                );
            }
        }
        // Sequential calls reuse the one potential.
        assert_eq!(made.load(Ordering::Relaxed), 1);
        let fit = Sampling::new().seed(4).draws(200).run(&model).unwrap();
        assert!(fit.usable(), "{:?}", fit.health.lines());
        // At most one potential per chain ran at a time.
        let n = made.load(Ordering::Relaxed);
        assert!((1..=4).contains(&n), "{n} potentials for 4 chains");
        assert_eq!(model.potential().made(), n);
    }
}
