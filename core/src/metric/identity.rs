//! [`IdentityMetric`]: M = I.

use super::Metric;
use crate::real::Real;

/// The unit metric M = I: p = z, v = p.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IdentityMetric;

crate::in_place::zero_valid!(impl[] IdentityMetric {});

impl<T: Real, const D: usize> Metric<T, D> for IdentityMetric {
    #[inline]
    fn momentum_from_normals(&self, z: &[T; D], p: &mut [T; D]) {
        *p = *z;
    }

    #[inline]
    fn velocity(&self, p: &[T; D], v: &mut [T; D]) {
        *v = *p;
    }

    #[inline]
    fn momentum_from_normals_leading(&self, z: &[T; D], p: &mut [T; D], n: usize) {
        let n = n.min(D);
        p[..n].copy_from_slice(&z[..n]);
    }

    #[inline]
    fn velocity_leading(&self, p: &[T; D], v: &mut [T; D], n: usize) {
        let n = n.min(D);
        v[..n].copy_from_slice(&p[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_is_identity() {
        let z = [1.0f64, -2.0, 3.0];
        let (mut p, mut v) = ([0.0; 3], [0.0; 3]);
        IdentityMetric.momentum_from_normals(&z, &mut p);
        IdentityMetric.velocity(&p, &mut v);
        assert_eq!(p, z);
        assert_eq!(v, z);
        assert_eq!(
            Metric::<f64, 3>::kinetic_energy(&IdentityMetric, &p, &v),
            7.0
        );
    }
}
