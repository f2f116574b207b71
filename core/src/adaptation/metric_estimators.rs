//! Metric estimators: what a warm-up learns from its slow windows, one
//! estimator per metric.
//!
//! | estimator | metric | learns |
//! |---|---|---|
//! | [`IdentityEstimator`] | [`IdentityMetric`] | nothing |
//! | [`DiagonalEstimator`] | [`DiagonalMetric`] | σᵢ² = √(Var θᵢ / Var ∂ᵢU), from draws and gradients |
//! | [`LbfgsStartDiagonalEstimator`](super::LbfgsStartDiagonalEstimator) | [`DiagonalMetric`] | the same, after an L-BFGS start from the initial point |
//! | [`DenseEstimator`] | [`DenseMetric`] | the draws' covariance, regularised as Stan does |
//! | [`LbfgsEstimator`](super::LbfgsEstimator) | [`LbfgsMetric`](crate::metric::LbfgsMetric) | the diagonal above plus curvature pairs between draws |
//!
//! The diagonal σᵢ² = √(Var θᵢ / Var ∂ᵢU) uses gradients as well as draws
//! (as nuts-rs does): for a Gaussian with diagonal covariance both variances
//! are exact functions of σᵢ (Var θᵢ = σᵢ², Var ∂ᵢU = 1/σᵢ²), and the
//! geometric mean of the two estimates converges much faster than the draws'
//! variance alone.

use super::welford::{Welford, WelfordCovariance};
use crate::error::Error;
use crate::metric::{DenseMetric, DiagonalMetric, IdentityMetric, Metric};
use crate::real::Real;
use crate::target::Potential;

/// Smallest and largest variance an estimator sets (keeps f32 and f64
/// metrics finite and invertible).
pub(crate) const VARIANCE_BOUNDS: (f64, f64) = (1e-20, 1e20);

pub(crate) fn clamp_variance<T: Real>(v: T) -> T {
    let (lo, hi) = (
        T::from_f64(VARIANCE_BOUNDS.0),
        T::from_f64(VARIANCE_BOUNDS.1),
    );
    if v < lo {
        lo
    } else if v > hi {
        hi
    } else {
        v
    }
}

/// What the end of a slow window did to the metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricChange {
    /// The metric was replaced by the window's estimate: the step size must
    /// be found again for it.
    Replaced,
    /// The metric in force was kept (it scored better than the window's
    /// estimates, or there was nothing to estimate from): the step size
    /// adapted so far still applies.
    Kept,
}

/// What a warm-up needs from a metric estimator.
pub trait MetricEstimator<T: Real, const D: usize> {
    /// The metric it tunes.
    type Metric: Metric<T, D>;

    /// What [`reset`](Self::reset) needs to rebuild the estimator in place:
    /// the settings it was built with (`()` when it has none).
    type Settings: Copy + core::fmt::Debug;

    /// Puts the estimator, in place, in the state of a newly built one with
    /// `settings`, and `metric` in the state such an estimator starts from:
    /// the identity. No copy of either is made on the stack (they can be
    /// large: [`AdaptiveNuts::reset`](super::AdaptiveNuts::reset) and
    /// [`crate::in_place`]). On error (an invalid setting) nothing changes.
    fn reset(&mut self, settings: Self::Settings, metric: &mut Self::Metric) -> Result<(), Error>;

    /// The sampler moves only the first `n` ≤ D coordinates (the rest stay
    /// zero, `Nuts::set_dimension`, feature `runtime-dimension`): a
    /// statistic taken over the coordinates (e.g. a mean of log scales) must
    /// use those n only. The default does nothing, which is right for an
    /// estimator whose coordinates do not see each other. The dimension
    /// lasts until the next call; [`reset`](Self::reset) may forget it.
    fn set_dimension(&mut self, n: usize) {
        let _ = n;
    }

    /// Called once before the first warm-up draw with the initial state; may
    /// set a first metric (e.g. from the gradient's scale).
    fn initialize(
        &mut self,
        position: &[T; D],
        gradient: &[T; D],
        metric: &mut Self::Metric,
    ) -> Result<(), Error>;

    /// Before the first warm-up draw, optionally move the chain to a better
    /// starting point by optimisation and set a first metric from it; returns
    /// the starting point and the gradients spent, or `None` (the default:
    /// no optimisation, the chain starts where it is). `normals` are D
    /// standard normals for a draw around the optimum.
    fn initialize_by_optimization<P: Potential<T, D>>(
        &mut self,
        _target: &P,
        _position: &[T; D],
        _normals: &[T; D],
        _metric: &mut Self::Metric,
    ) -> Option<([T; D], u32)> {
        None
    }

    /// Just before [`end_window`](Self::end_window): optionally spend a few
    /// gradient evaluations of `target` around the chain's state (`position`,
    /// `gradient`) to measure the curvature along directions the window's
    /// draws point to; returns the evaluations spent (default: none).
    fn probe<P: Potential<T, D>>(
        &mut self,
        _target: &P,
        _position: &[T; D],
        _gradient: &[T; D],
        _metric: &Self::Metric,
    ) -> u32 {
        0
    }

    /// A draw of a slow window (position and gradient of the chain's state).
    fn observe(&mut self, position: &[T; D], gradient: &[T; D], metric: &Self::Metric);

    /// A draw of the initial buffer, in a chain that refreshes its metric
    /// early ([`AdaptiveNuts::set_early_refresh`](super::AdaptiveNuts::set_early_refresh)).
    /// The default ignores it.
    fn observe_early(&mut self, position: &[T; D], gradient: &[T; D]) {
        let _ = (position, gradient);
    }

    /// Sets `metric` from the latest early draws (a diagonal, without a
    /// window end's probes and contest), and says whether it changed. The
    /// default keeps the metric.
    fn refresh_early(&mut self, metric: &mut Self::Metric) -> Result<MetricChange, Error> {
        let _ = metric;
        Ok(MetricChange::Kept)
    }

    /// End of a slow window: update `metric` from what was observed and start
    /// the next window's estimate, and say whether the metric changed. On
    /// error the metric is unchanged.
    fn end_window(&mut self, metric: &mut Self::Metric) -> Result<MetricChange, Error>;
}

/// No adaptation: M = I throughout.
#[derive(Debug, Clone, Copy, Default)]
pub struct IdentityEstimator;

crate::in_place::zero_valid!(impl[] IdentityEstimator {});

impl<T: Real, const D: usize> MetricEstimator<T, D> for IdentityEstimator {
    type Metric = IdentityMetric;
    type Settings = ();

    fn reset(&mut self, _: (), _: &mut IdentityMetric) -> Result<(), Error> {
        Ok(())
    }

    fn initialize(&mut self, _: &[T; D], _: &[T; D], _: &mut IdentityMetric) -> Result<(), Error> {
        Ok(())
    }

    fn observe(&mut self, _: &[T; D], _: &[T; D], _: &IdentityMetric) {}

    fn end_window(&mut self, _: &mut IdentityMetric) -> Result<MetricChange, Error> {
        Ok(MetricChange::Kept)
    }
}

/// σᵢ² = 1/|∂ᵢU| at the initial point (nuts-rs's first guess), 1 where the
/// gradient is zero or not finite.
pub(crate) fn variances_from_gradient<T: Real, const D: usize>(gradient: &[T; D]) -> [T; D] {
    let mut v = [T::ONE; D];
    for i in 0..D {
        let a = gradient[i].abs();
        if a.is_finite() && a > T::ZERO {
            v[i] = clamp_variance(T::ONE / a);
        }
    }
    v
}

/// Learns a diagonal metric σᵢ² = √(Var θᵢ / Var ∂ᵢU) from each slow window.
#[derive(Debug, Clone)]
pub struct DiagonalEstimator<T, const D: usize> {
    draws: Welford<T, D>,
    gradients: Welford<T, D>,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize] DiagonalEstimator<T, D> { draws, gradients });

impl<T: Real, const D: usize> Default for DiagonalEstimator<T, D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Real, const D: usize> DiagonalEstimator<T, D> {
    /// An empty estimate.
    pub fn new() -> Self {
        DiagonalEstimator {
            draws: Welford::new(),
            gradients: Welford::new(),
        }
    }

    /// Draws in the current window.
    pub fn count(&self) -> u64 {
        self.draws.count()
    }

    /// Mean of the current window's draws.
    pub fn mean(&self) -> &[T; D] {
        self.draws.mean()
    }

    pub(crate) fn add(&mut self, position: &[T; D], gradient: &[T; D]) {
        self.draws.add(position);
        self.gradients.add(gradient);
    }

    /// The estimate σᵢ² = √(Var θᵢ / Var ∂ᵢU) of the current window, or
    /// `None` with fewer than 3 draws. A coordinate whose gradient variance is
    /// zero falls back to the draws' variance, and one whose draws did not move
    /// keeps `fallback[i]`.
    pub fn estimate(&self, fallback: &[T; D]) -> Option<[T; D]> {
        if self.draws.count() < 3 {
            return None;
        }
        let mut out = *fallback;
        for i in 0..D {
            let vx = self.draws.variance(i);
            let vg = self.gradients.variance(i);
            let v = if vx > T::ZERO && vg > T::ZERO {
                (vx / vg).sqrt()
            } else {
                vx
            };
            if v.is_finite() && v > T::ZERO {
                out[i] = clamp_variance(v);
            }
        }
        Some(out)
    }

    pub(crate) fn clear(&mut self) {
        self.draws.reset();
        self.gradients.reset();
    }
}

impl<T: Real, const D: usize> MetricEstimator<T, D> for DiagonalEstimator<T, D> {
    type Metric = DiagonalMetric<T, D>;
    type Settings = ();

    fn reset(&mut self, _: (), metric: &mut DiagonalMetric<T, D>) -> Result<(), Error> {
        self.clear();
        metric.set_identity();
        Ok(())
    }

    fn initialize(
        &mut self,
        _position: &[T; D],
        gradient: &[T; D],
        metric: &mut DiagonalMetric<T, D>,
    ) -> Result<(), Error> {
        self.clear();
        metric.set_variances(&variances_from_gradient(gradient))
    }

    fn observe(&mut self, position: &[T; D], gradient: &[T; D], _: &DiagonalMetric<T, D>) {
        self.add(position, gradient);
    }

    fn end_window(&mut self, metric: &mut DiagonalMetric<T, D>) -> Result<MetricChange, Error> {
        let estimate = self.estimate(metric.variances());
        self.clear();
        match estimate {
            Some(v) => metric.set_variances(&v).map(|()| MetricChange::Replaced),
            None => Ok(MetricChange::Kept),
        }
    }
}

/// Learns a dense metric from the draws' covariance of each slow window,
/// regularised as Stan does: Σ = n/(n + 5)·S + 10⁻³·5/(n + 5)·I. Storage D².
#[derive(Debug, Clone)]
pub struct DenseEstimator<T, const D: usize> {
    draws: WelfordCovariance<T, D>,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize] DenseEstimator<T, D> { draws });

impl<T: Real, const D: usize> Default for DenseEstimator<T, D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Real, const D: usize> DenseEstimator<T, D> {
    /// An empty estimate.
    pub fn new() -> Self {
        DenseEstimator {
            draws: WelfordCovariance::new(),
        }
    }
}

impl<T: Real, const D: usize> MetricEstimator<T, D> for DenseEstimator<T, D> {
    type Metric = DenseMetric<T, D>;
    type Settings = ();

    fn reset(&mut self, _: (), metric: &mut DenseMetric<T, D>) -> Result<(), Error> {
        self.draws.reset();
        metric.set_identity();
        Ok(())
    }

    fn initialize(
        &mut self,
        _position: &[T; D],
        gradient: &[T; D],
        metric: &mut DenseMetric<T, D>,
    ) -> Result<(), Error> {
        self.draws.reset();
        let v = variances_from_gradient(gradient);
        let mut cov = [[T::ZERO; D]; D];
        for i in 0..D {
            cov[i][i] = v[i];
        }
        metric.set_covariance(&cov)
    }

    fn observe(&mut self, position: &[T; D], _gradient: &[T; D], _: &DenseMetric<T, D>) {
        self.draws.add(position);
    }

    fn end_window(&mut self, metric: &mut DenseMetric<T, D>) -> Result<MetricChange, Error> {
        let n = self.draws.count();
        let result = if n >= 3 {
            let nf = T::from_u64(n);
            let five = T::from_f64(5.0);
            let w = nf / (nf + five);
            let ridge = T::from_f64(1e-3) * five / (nf + five);
            let mut cov = [[T::ZERO; D]; D];
            self.draws.covariance(&mut cov);
            for i in 0..D {
                for j in 0..D {
                    cov[i][j] *= w;
                }
                cov[i][i] += ridge;
            }
            metric.set_covariance(&cov).map(|()| MetricChange::Replaced)
        } else {
            Ok(MetricChange::Kept)
        };
        self.draws.reset();
        result
    }
}
