//! [`DiagonalMetric`]: M⁻¹ = diag(σ²).

use super::Metric;
use crate::error::{Error, require_positive};
use crate::kernels::at_length;
use crate::real::Real;

/// A diagonal metric with inverse mass M⁻¹ = diag(σ²) (σ² ideally the
/// posterior variances): p = z / σ, v = σ² ∘ p.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(target_arch = "x86_64", repr(C, align(64)))]
pub struct DiagonalMetric<T, const D: usize> {
    variances: [T; D],
    inverse_scales: [T; D],
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize] DiagonalMetric<T, D> { variances, inverse_scales });

impl<T: Real, const D: usize> DiagonalMetric<T, D> {
    /// M = I.
    pub fn identity() -> Self {
        DiagonalMetric {
            variances: [T::ONE; D],
            inverse_scales: [T::ONE; D],
        }
    }

    /// In place, the value of [`identity`](Self::identity).
    pub fn set_identity(&mut self) {
        self.variances = [T::ONE; D];
        self.inverse_scales = [T::ONE; D];
    }

    /// M⁻¹ = diag(`variances`); every value finite and > 0.
    pub fn new(variances: &[T; D]) -> Result<Self, Error> {
        let mut metric = Self::identity();
        metric.set_variances(variances)?;
        Ok(metric)
    }

    /// Replaces M⁻¹ by diag(`variances`); on error nothing changes.
    pub fn set_variances(&mut self, variances: &[T; D]) -> Result<(), Error> {
        // A finite positive v has a finite 1/√v in f32 and f64 (even subnormal).
        for v in variances {
            require_positive(*v, "variances")?;
        }
        self.variances = *variances;
        for i in 0..D {
            self.inverse_scales[i] = T::ONE / variances[i].sqrt();
        }
        Ok(())
    }

    /// The diagonal of M⁻¹.
    pub fn variances(&self) -> &[T; D] {
        &self.variances
    }
}

impl<T: Real, const D: usize> Metric<T, D> for DiagonalMetric<T, D> {
    #[inline]
    fn momentum_from_normals(&self, z: &[T; D], p: &mut [T; D]) {
        self.momentum_from_normals_leading(z, p, D);
    }

    #[inline]
    fn velocity(&self, p: &[T; D], v: &mut [T; D]) {
        self.velocity_leading(p, v, D);
    }

    #[inline]
    fn momentum_from_normals_leading(&self, z: &[T; D], p: &mut [T; D], n: usize) {
        at_length!(n, D, |n| {
            for i in 0..n {
                p[i] = z[i] * self.inverse_scales[i];
            }
        })
    }

    #[inline]
    fn velocity_leading(&self, p: &[T; D], v: &mut [T; D], n: usize) {
        at_length!(n, D, |n| {
            for i in 0..n {
                v[i] = self.variances[i] * p[i];
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagonal_kinetic_and_velocity() {
        let metric = DiagonalMetric::new(&[4.0f64, 0.25]).unwrap();
        let mut p = [0.0; 2];
        metric.momentum_from_normals(&[2.0, 2.0], &mut p);
        assert_eq!(p, [1.0, 4.0]);
        let mut v = [0.0; 2];
        metric.velocity(&p, &mut v);
        assert_eq!(v, [4.0, 1.0]);
        assert_eq!(metric.kinetic_energy(&p, &v), 0.5 * (4.0 + 4.0));
    }

    #[test]
    fn bad_variances_are_refused_and_leave_the_metric() {
        let mut metric = DiagonalMetric::new(&[2.0f32, 3.0]).unwrap();
        for bad in [0.0, -1.0, -0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            assert!(metric.set_variances(&[1.0, bad]).is_err(), "{bad}");
            assert_eq!(metric.variances(), &[2.0, 3.0]);
        }
    }
}
