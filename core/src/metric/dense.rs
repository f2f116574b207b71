//! [`DenseMetric`]: M⁻¹ = Σ, a full covariance held as its Cholesky factor.

use super::Metric;
use crate::error::Error;
use crate::real::Real;

/// A dense metric with inverse mass M⁻¹ = Σ (ideally the posterior
/// covariance), stored as the lower Cholesky factor L of Σ = L Lᵀ:
///
/// - momentum p = L⁻ᵀ z (back substitution), so Cov(p) = (L Lᵀ)⁻¹ = Σ⁻¹ = M;
/// - velocity v = L (Lᵀ p) = Σ p.
///
/// Both cost O(D²) per call and the metric stores D² scalars: it is meant for
/// small D (a few tens). For large D use [`LbfgsMetric`](super::LbfgsMetric),
/// whose cost is O(rD). [`new`](Self::new) and
/// [`set_covariance`](Self::set_covariance) factor Σ in O(D³) and hold a D×D
/// scratch factor on the stack.
///
/// ```
/// use qnmc::metric::{DenseMetric, Metric};
/// let metric = DenseMetric::new(&[[4.0f64, 2.0], [2.0, 2.0]]).unwrap();
/// assert_eq!(metric.covariance_factor(), &[[2.0, 0.0], [1.0, 1.0]]);
/// let mut v = [0.0; 2];
/// metric.velocity(&[1.0, -1.0], &mut v); // Σ p
/// assert_eq!(v, [2.0, 0.0]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct DenseMetric<T, const D: usize> {
    /// L, row-major; entries above the diagonal are zero.
    lower: [[T; D]; D],
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize] DenseMetric<T, D> { lower });

impl<T: Real, const D: usize> DenseMetric<T, D> {
    /// In place, the value of [`identity`](Self::identity) (no D × D copy on
    /// the stack).
    pub fn set_identity(&mut self) {
        for (i, row) in self.lower.iter_mut().enumerate() {
            for (j, x) in row.iter_mut().enumerate() {
                *x = if i == j { T::ONE } else { T::ZERO };
            }
        }
    }

    /// M = Σ = I.
    pub fn identity() -> Self {
        let mut lower = [[T::ZERO; D]; D];
        for (i, row) in lower.iter_mut().enumerate() {
            row[i] = T::ONE;
        }
        DenseMetric { lower }
    }

    /// M⁻¹ = `covariance`. The lower triangle is factored; the matrix must be
    /// finite, symmetric to within 10⁻⁶·max|Σᵢⱼ| and positive definite
    /// (every Cholesky pivot above D·ε·Σⱼⱼ, ε the machine epsilon: a pivot
    /// below that is lost in the round-off of the factorisation). Otherwise
    /// [`Error::InvalidSetting`] with setting `"covariance"`.
    pub fn new(covariance: &[[T; D]; D]) -> Result<Self, Error> {
        let mut metric = DenseMetric {
            lower: [[T::ZERO; D]; D],
        };
        cholesky(covariance, &mut metric.lower)?;
        Ok(metric)
    }

    /// Replaces M⁻¹ by `covariance` (same requirements as [`new`](Self::new));
    /// on error the metric is unchanged.
    pub fn set_covariance(&mut self, covariance: &[[T; D]; D]) -> Result<(), Error> {
        let mut lower = [[T::ZERO; D]; D];
        cholesky(covariance, &mut lower)?;
        self.lower = lower;
        Ok(())
    }

    /// The lower Cholesky factor L of Σ = L Lᵀ (zero above the diagonal).
    pub fn covariance_factor(&self) -> &[[T; D]; D] {
        &self.lower
    }
}

/// L with L Lᵀ = `cov` into `lower` (row by row, sums in increasing index
/// order, no FMA); `lower` is garbage on error.
fn cholesky<T: Real, const D: usize>(
    cov: &[[T; D]; D],
    lower: &mut [[T; D]; D],
) -> Result<(), Error> {
    let mut largest = T::ZERO;
    for row in cov {
        for &c in row {
            if !c.is_finite() {
                return Err(Error::invalid("covariance", "finite"));
            }
            if c.abs() > largest {
                largest = c.abs();
            }
        }
    }
    let asymmetry = T::from_f64(1e-6) * largest;
    for i in 0..D {
        for j in 0..i {
            // Finite entries: the difference is finite or ±∞ (which fails), never NaN.
            if (cov[i][j] - cov[j][i]).abs() > asymmetry {
                return Err(Error::invalid(
                    "covariance",
                    "symmetric (to 1e-6 of its largest entry)",
                ));
            }
        }
    }
    let pivot_floor = T::from_u64(D as u64) * T::EPSILON;
    for i in 0..D {
        for j in 0..=i {
            let mut sum = cov[i][j];
            for k in 0..j {
                sum -= lower[i][k] * lower[j][k];
            }
            let value = if i == j {
                // Not `<= floor`: a NaN pivot must fail too.
                if !(sum > T::ZERO && sum > pivot_floor * cov[i][i]) {
                    return Err(Error::invalid("covariance", "positive definite"));
                }
                let root = sum.sqrt();
                if !(T::ONE / root).is_finite() {
                    return Err(Error::invalid("covariance", "positive definite"));
                }
                root
            } else {
                sum / lower[j][j]
            };
            if !value.is_finite() {
                return Err(Error::invalid(
                    "covariance",
                    "with a finite Cholesky factor",
                ));
            }
            lower[i][j] = value;
        }
        for value in lower[i].iter_mut().skip(i + 1) {
            *value = T::ZERO;
        }
    }
    Ok(())
}

impl<T: Real, const D: usize> Metric<T, D> for DenseMetric<T, D> {
    /// p = L⁻ᵀ z: solves Lᵀ p = z from the last coordinate up.
    #[inline]
    fn momentum_from_normals(&self, z: &[T; D], p: &mut [T; D]) {
        *p = *z;
        for i in (0..D).rev() {
            let pi = p[i] / self.lower[i][i];
            p[i] = pi;
            for j in 0..i {
                p[j] -= self.lower[i][j] * pi;
            }
        }
    }

    /// v = L (Lᵀ p), in place in `v`.
    #[inline]
    fn velocity(&self, p: &[T; D], v: &mut [T; D]) {
        // w = Lᵀ p, accumulated row by row of L.
        *v = [T::ZERO; D];
        for i in 0..D {
            let pi = p[i];
            for j in 0..=i {
                v[j] += self.lower[i][j] * pi;
            }
        }
        // v = L w from the last row up: row i reads w₀…wᵢ, which the rows
        // below it have not overwritten yet.
        for i in (0..D).rev() {
            let mut sum = T::ZERO;
            for j in 0..=i {
                sum += self.lower[i][j] * v[j];
            }
            v[i] = sum;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Σ = [[4, 2, 0], [2, 5, 3], [0, 3, 10]] = L Lᵀ with
    /// L = [[2, 0, 0], [1, 2, 0], [0, 1.5, √7.75]].
    fn sigma() -> [[f64; 3]; 3] {
        [[4.0, 2.0, 0.0], [2.0, 5.0, 3.0], [0.0, 3.0, 10.0]]
    }

    #[test]
    fn factor_velocity_and_momentum_by_hand() {
        let metric = DenseMetric::new(&sigma()).unwrap();
        let l = metric.covariance_factor();
        assert_eq!(l[0], [2.0, 0.0, 0.0]);
        assert_eq!(l[1], [1.0, 2.0, 0.0]);
        assert_eq!(l[2][..2], [0.0, 1.5]);
        assert!((l[2][2] - 7.75f64.sqrt()).abs() < 1e-15);
        // v = Σ p.
        let p = [1.0, -2.0, 0.5];
        let mut v = [0.0; 3];
        metric.velocity(&p, &mut v);
        for i in 0..3 {
            let expected: f64 = (0..3).map(|j| sigma()[i][j] * p[j]).sum();
            assert!((v[i] - expected).abs() < 1e-14, "{v:?}");
        }
        // Lᵀ (L⁻ᵀ z) = z.
        let z = [0.3, -1.1, 2.0];
        let mut q = [0.0; 3];
        metric.momentum_from_normals(&z, &mut q);
        for i in 0..3 {
            let back: f64 = (i..3).map(|j| l[j][i] * q[j]).sum();
            assert!((back - z[i]).abs() < 1e-14);
        }
        assert!(
            (metric.kinetic_energy(&p, &v) - 0.5 * (p[0] * v[0] + p[1] * v[1] + p[2] * v[2])).abs()
                < 1e-15
        );
    }

    #[test]
    fn identity_and_f32() {
        let id = DenseMetric::<f32, 2>::identity();
        let (mut p, mut v) = ([0.0; 2], [0.0; 2]);
        id.momentum_from_normals(&[1.5, -2.0], &mut p);
        id.velocity(&p, &mut v);
        assert_eq!((p, v), ([1.5, -2.0], [1.5, -2.0]));
        let metric = DenseMetric::<f32, 2>::new(&[[4.0, 2.0], [2.0, 2.0]]).unwrap();
        metric.velocity(&[1.0, 1.0], &mut v);
        assert_eq!(v, [6.0, 4.0]);
        metric.momentum_from_normals(&[2.0, 1.0], &mut p);
        // Lᵀ = [[2, 1], [0, 1]]: p₂ = 1, p₁ = (2 − 1)/2.
        assert_eq!(p, [0.5, 1.0]);
        assert_eq!(
            DenseMetric::<f64, 1>::new(&[[9.0]])
                .unwrap()
                .covariance_factor(),
            &[[3.0]]
        );
        let empty = DenseMetric::<f64, 0>::new(&[]).unwrap();
        empty.velocity(&[], &mut []);
    }

    #[test]
    fn bad_covariances_are_refused_and_leave_the_metric() {
        let mut metric = DenseMetric::new(&sigma()).unwrap();
        let before = metric.clone();
        let mut bad = Vec::new();
        for (i, j, value) in [
            (0, 0, f64::NAN),
            (2, 1, f64::INFINITY),
            (0, 2, f64::NAN), // upper triangle: not read by the factor, still refused
            (1, 0, 2.0 + 1e-4), // asymmetric beyond 1e-6·10
            (0, 0, -4.0),
            (0, 0, 0.0),
            (2, 2, 1.8), // 10 → 1.8: Σ has a negative eigenvalue
        ] {
            let mut s = sigma();
            s[i][j] = value;
            bad.push(s);
        }
        bad.push([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]); // singular
        bad.push([[f64::MAX, 0.0, 0.0], [0.0, 1.0, 0.0], [-f64::MAX, 0.0, 1.0]]);
        for s in &bad {
            assert!(
                matches!(
                    metric.set_covariance(s),
                    Err(Error::InvalidSetting {
                        setting: "covariance",
                        ..
                    })
                ),
                "{s:?}"
            );
            assert_eq!(metric, before);
            assert!(DenseMetric::new(s).is_err());
        }
        // Asymmetry within 1e-6·max|Σ| is accepted (the lower triangle is used).
        let mut s = sigma();
        s[0][1] += 5e-6;
        metric.set_covariance(&s).unwrap();
        assert_eq!(metric, before);
        // f32: a pivot lost in round-off is refused.
        let nearly = [[1.0f32, 0.999_999_94], [0.999_999_94, 1.0]];
        assert!(DenseMetric::new(&nearly).is_err());
        assert!(DenseMetric::new(&[[1.0f32, 0.99], [0.99, 1.0]]).is_ok());
    }
}
