//! [`CovarianceProduct`]: the product Ĉov(x)·q of a window's sample
//! covariance with one fixed direction q, accumulated draw by draw in O(D)
//! time and storage, without the D × D covariance.
//!
//! Repeated over windows with q ← H⁻¹Ĉov(θ)q it is a power iteration for the
//! direction in which the draws spread most beyond a metric H
//! ([`LbfgsEstimator`](super::LbfgsEstimator) probes the curvature there).
//! The sums are centred on the window's first draw, so the result is the
//! centred covariance product exactly (in exact arithmetic) and stays
//! accurate when the draws sit far from the origin.

use crate::kernels::dot;
use crate::real::Real;

/// Σₜ (xₜ − c)(xₜ − c)ᵀ q and the sums that centre it: Ĉov(x)·q for a fixed
/// direction q in O(D) per draw (c: the window's first draw).
#[derive(Debug, Clone)]
pub(crate) struct CovarianceProduct<T, const D: usize> {
    pub(crate) direction: [T; D],
    pub(crate) has_direction: bool,
    centre: [T; D],
    outer: [T; D],
    sum: [T; D],
    projection: T,
    count: u64,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize] CovarianceProduct<T, D> { direction, has_direction, centre, outer, sum, projection, count });

impl<T: Real, const D: usize> CovarianceProduct<T, D> {
    pub(crate) fn new() -> Self {
        CovarianceProduct {
            direction: [T::ZERO; D],
            has_direction: false,
            centre: [T::ZERO; D],
            outer: [T::ZERO; D],
            sum: [T::ZERO; D],
            projection: T::ZERO,
            count: 0,
        }
    }

    /// Starts a new window along `direction` (kept if it has no length).
    pub(crate) fn restart(&mut self, direction: Option<&[T; D]>) {
        if let Some(d) = direction {
            let norm = dot(d, d).sqrt();
            if norm.is_finite() && norm > T::ZERO {
                for i in 0..D {
                    self.direction[i] = d[i] / norm;
                }
                self.has_direction = true;
            }
        }
        self.outer = [T::ZERO; D];
        self.sum = [T::ZERO; D];
        self.projection = T::ZERO;
        self.count = 0;
    }

    pub(crate) fn add(&mut self, x: &[T; D]) {
        if !self.has_direction {
            return;
        }
        if self.count == 0 {
            self.centre = *x;
        }
        let mut d = [T::ZERO; D];
        for i in 0..D {
            d[i] = x[i] - self.centre[i];
        }
        let t = dot(&d, &self.direction);
        for i in 0..D {
            self.outer[i] += d[i] * t;
            self.sum[i] += d[i];
        }
        self.projection += t;
        self.count += 1;
    }

    /// Ĉov(x)·q, or `None` with fewer than 3 draws or no direction yet.
    pub(crate) fn product(&self) -> Option<[T; D]> {
        if !self.has_direction || self.count < 3 {
            return None;
        }
        let n = T::from_u64(self.count);
        let mean_projection = self.projection / n;
        let mut out = [T::ZERO; D];
        for i in 0..D {
            out[i] = self.outer[i] / n - self.sum[i] / n * mean_projection;
        }
        crate::kernels::all_finite(&out).then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: the dense sample covariance (divisor n) times q.
    fn dense_product(xs: &[[f64; 3]], q: &[f64; 3]) -> [f64; 3] {
        let n = xs.len() as f64;
        let mut mean = [0.0; 3];
        for x in xs {
            for i in 0..3 {
                mean[i] += x[i] / n;
            }
        }
        let mut out = [0.0; 3];
        for x in xs {
            let t: f64 = (0..3).map(|j| (x[j] - mean[j]) * q[j]).sum();
            for i in 0..3 {
                out[i] += (x[i] - mean[i]) * t / n;
            }
        }
        out
    }

    #[test]
    fn matches_the_dense_covariance_times_the_unit_direction() {
        // Draws far from the origin (centring matters) with correlated columns.
        let xs: [[f64; 3]; 6] = [
            [1000.5, -3.0, 7.25],
            [1001.0, -2.5, 7.0],
            [999.25, -3.5, 7.75],
            [1000.0, -1.0, 6.5],
            [1002.0, -4.0, 8.0],
            [998.5, -2.0, 7.125],
        ];
        let q = [2.0, -1.0, 0.5];
        let norm = (4.0f64 + 1.0 + 0.25).sqrt();
        let unit = [q[0] / norm, q[1] / norm, q[2] / norm];
        let mut product = CovarianceProduct::<f64, 3>::new();
        product.restart(Some(&q));
        for x in &xs {
            product.add(x);
        }
        let got = product.product().unwrap();
        let want = dense_product(&xs, &unit);
        for i in 0..3 {
            assert!(
                (got[i] - want[i]).abs() <= 1e-12 * want[i].abs().max(1.0),
                "{got:?} {want:?}"
            );
        }
    }

    #[test]
    fn needs_a_direction_and_three_draws() {
        let mut product = CovarianceProduct::<f64, 2>::new();
        product.add(&[1.0, 2.0]);
        assert!(product.product().is_none(), "no direction yet");
        product.restart(Some(&[0.0, 0.0]));
        assert!(!product.has_direction, "a zero direction is not taken");
        product.restart(Some(&[1.0, 0.0]));
        product.add(&[1.0, 2.0]);
        product.add(&[2.0, 2.0]);
        assert!(product.product().is_none(), "two draws");
        product.add(&[3.0, 5.0]);
        let p = product.product().unwrap();
        // Var of the first column 2/3, covariance with the second 1.
        assert!(
            (p[0] - 2.0 / 3.0).abs() < 1e-14 && (p[1] - 1.0).abs() < 1e-14,
            "{p:?}"
        );
        product.restart(None);
        assert!(
            product.has_direction && product.product().is_none(),
            "restart keeps q, clears sums"
        );
    }

    #[test]
    fn non_finite_draws_give_no_product() {
        let mut product = CovarianceProduct::<f64, 2>::new();
        product.restart(Some(&[1.0, 1.0]));
        for x in [[0.0, 1.0], [f64::NAN, 0.0], [1.0, 2.0]] {
            product.add(&x);
        }
        assert!(product.product().is_none());
    }
}
