//! A run-time dimension n in storage of D ([`AdaptiveNuts::set_dimension`]):
//! the chain must be bit for bit the chain of a sampler of size n, with every
//! metric estimator, warm-up included, and the coordinates from n on must
//! stay exactly zero. This is what lets the host run a model of any
//! dimension in a larger compile-time size at the cost of its own.

use super::{
    AdaptiveNuts, DenseEstimator, DiagonalEstimator, IdentityEstimator, LbfgsEstimator,
    LbfgsStartDiagonalEstimator, MetricEstimator, WarmupSchedule,
};
use crate::metric::{DenseMetric, DiagonalMetric, IdentityMetric, LbfgsMetric};
use crate::real::Real;
use crate::{NutsSettings, Potential};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

/// The model's dimension.
const N: usize = 5;

/// A correlated Gaussian on the first [`N`] coordinates with scales from 0.1
/// to 10 (precision P = S⁻¹ C S⁻¹, C tridiagonal with 0.6 off the
/// diagonal), centred away from 0. It reads and writes only those N
/// coordinates, as a host model does.
struct Correlated;

const SCALES: [f64; N] = [0.1, 1.0, 10.0, 0.5, 3.0];
const CENTRE: [f64; N] = [1.0, -2.0, 30.0, 0.5, -4.0];

impl<T: Real, const D: usize> Potential<T, D> for Correlated {
    fn potential_and_gradient(&self, x: &[T; D], g: &mut [T; D]) -> T {
        let z: [T; N] =
            core::array::from_fn(|i| (x[i] - T::from_f64(CENTRE[i])) / T::from_f64(SCALES[i]));
        let rho = T::from_f64(0.6);
        let mut u = T::ZERO;
        for i in 0..N {
            let mut pz = z[i];
            if i > 0 {
                pz += rho * z[i - 1];
            }
            if i + 1 < N {
                pz += rho * z[i + 1];
            }
            u += T::HALF * z[i] * pz;
            g[i] = pz / T::from_f64(SCALES[i]);
        }
        u
    }
}

/// Runs 700 draws (a warm-up of 400) of a chain of size `D` sampling the
/// first [`N`] coordinates, from a far start; returns every draw's first N
/// coordinates and gradient evaluations, and checks the rest stay zero.
fn chain<T: Real, const D: usize, E: MetricEstimator<T, D>>(
    metric: E::Metric,
    estimator: E,
    seed: u64,
) -> Vec<([u64; N], u32)> {
    let mut start = [T::ZERO; D];
    for (i, s) in start.iter_mut().take(N).enumerate() {
        *s = T::from_f64(if i % 2 == 0 { 1.5 } else { -1.0 });
    }
    let mut nuts = AdaptiveNuts::<T, D, E>::new(
        NutsSettings::new(T::ONE),
        WarmupSchedule::stan(400).unwrap(),
        metric,
        estimator,
        start,
        &Correlated,
    )
    .unwrap();
    if D != N {
        nuts.set_dimension(N).unwrap();
    }
    nuts.set_early_end(2);
    let mut rng = XorShiftRng::seed_from_u64(seed);
    (0..700)
        .map(|_| {
            let stats = nuts.step(&Correlated, &mut rng);
            let x = nuts.position();
            assert!(
                x[N..].iter().all(|&v| v == T::ZERO),
                "a padding coordinate moved"
            );
            let bits = core::array::from_fn(|i| x[i].to_f64().to_bits());
            (bits, stats.gradient_evaluations)
        })
        .collect()
}

macro_rules! same_chain {
    ($name:ident, $t:ty, |$d:ident| $metric:expr, $estimator:expr) => {
        #[test]
        fn $name() {
            for seed in [1, 2, 3] {
                let exact = {
                    const $d: usize = N;
                    chain::<$t, $d, _>($metric, $estimator, seed)
                };
                let in_8 = {
                    const $d: usize = 8;
                    chain::<$t, $d, _>($metric, $estimator, seed)
                };
                let in_13 = {
                    const $d: usize = 13;
                    chain::<$t, $d, _>($metric, $estimator, seed)
                };
                assert!(
                    exact.iter().any(|d| d.0 != exact[0].0),
                    "the chain never moved"
                );
                for (k, ((a, b), c)) in exact.iter().zip(&in_8).zip(&in_13).enumerate() {
                    assert_eq!(a, b, "seed {seed}, draw {k}: D = 8 left the D = 5 chain");
                    assert_eq!(a, c, "seed {seed}, draw {k}: D = 13 left the D = 5 chain");
                }
            }
        }
    };
}

same_chain!(identity_metric, f64, |D| IdentityMetric, IdentityEstimator);
same_chain!(
    diagonal_metric,
    f64,
    |D| DiagonalMetric::<f64, D>::identity(),
    DiagonalEstimator::<f64, D>::new()
);
same_chain!(
    diagonal_metric_from_the_lbfgs_start,
    f64,
    |D| DiagonalMetric::<f64, D>::identity(),
    LbfgsStartDiagonalEstimator::<f64, D, 4>::new().unwrap()
);
same_chain!(
    quasi_newton_metric,
    f64,
    |D| LbfgsMetric::<f64, D, 4>::identity(),
    LbfgsEstimator::<f64, D, 4>::new(super::DEFAULT_RANK_TOLERANCE).unwrap()
);
same_chain!(
    quasi_newton_metric_f32,
    f32,
    |D| LbfgsMetric::<f32, D, 4>::identity(),
    LbfgsEstimator::<f32, D, 4>::new(super::DEFAULT_RANK_TOLERANCE as f32).unwrap()
);
same_chain!(
    dense_metric,
    f64,
    |D| DenseMetric::<f64, D>::identity(),
    DenseEstimator::<f64, D>::new()
);

/// A dimension that is 0, above D, or below the last nonzero coordinate of
/// the start is refused, and the chain is left as it was.
#[test]
fn bad_dimensions_are_refused() {
    let mut start = [0.0f64; 8];
    start[..N].copy_from_slice(&[0.1, 0.2, 0.3, 0.4, 0.5]);
    let mut nuts = AdaptiveNuts::<f64, 8, _>::new(
        NutsSettings::new(1.0),
        WarmupSchedule::stan(100).unwrap(),
        IdentityMetric,
        IdentityEstimator,
        start,
        &Correlated,
    )
    .unwrap();
    for bad in [0, 4, 9] {
        assert!(nuts.set_dimension(bad).is_err(), "{bad}");
        assert_eq!(nuts.sampler().dimension(), 8);
    }
    nuts.set_dimension(N).unwrap();
    assert_eq!(nuts.sampler().dimension(), N);
    // A new start must be zero from the dimension on.
    let mut bad_start = start;
    bad_start[6] = 1.0;
    assert!(
        nuts.reset(
            NutsSettings::new(1.0),
            WarmupSchedule::stan(100).unwrap(),
            (),
            &bad_start,
            &Correlated
        )
        .is_err()
    );
    assert_eq!(nuts.position(), &start);
    assert_eq!(nuts.sampler().dimension(), N);
}
