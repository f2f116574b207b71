//! The QNHMC paper's Gaussian N(0, Σ) with Σ = c·11ᵀ + a·I (§5.1: c = 1, a = 4).

use qnmc::{Potential, Real};

/// N(0, Σ), Σ = `shared_variance`·11ᵀ + `independent_variance`·I, in dimension D.
///
/// U(θ) = ½ θᵀΣ⁻¹θ with Σ⁻¹ = (1/a)(I − c 11ᵀ/(a + cD)) (Sherman–Morrison), so U
/// and ∇U cost O(D). The largest eigenvalue a + cD belongs to the all-ones
/// direction, the other D − 1 eigenvalues are a.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CorrelatedGaussian<const D: usize> {
    /// a, the variance added to every coordinate.
    pub independent_variance: f64,
    /// c, the weight of the all-ones direction.
    pub shared_variance: f64,
}

impl<const D: usize> CorrelatedGaussian<D> {
    /// The paper's Σ = 11ᵀ + 4I.
    pub fn paper() -> Self {
        CorrelatedGaussian {
            independent_variance: 4.0,
            shared_variance: 1.0,
        }
    }

    /// Σᵢⱼ.
    pub fn covariance(&self, i: usize, j: usize) -> f64 {
        self.shared_variance
            + if i == j {
                self.independent_variance
            } else {
                0.0
            }
    }

    /// Var(1ᵀθ/√D) = a + cD: the variance along the all-ones direction.
    pub fn variance_along_ones(&self) -> f64 {
        self.independent_variance + self.shared_variance * D as f64
    }
}

impl<T: Real, const D: usize> Potential<T, D> for CorrelatedGaussian<D> {
    fn potential_and_gradient(&self, x: &[T; D], g: &mut [T; D]) -> T {
        let a = T::from_f64(self.independent_variance);
        let c = T::from_f64(self.shared_variance);
        let mut sum = T::ZERO;
        for v in x {
            sum += *v;
        }
        let shift = c * sum / (a + c * T::from_u64(D as u64));
        let mut u = T::ZERO;
        for i in 0..D {
            g[i] = (x[i] - shift) / a;
            u += x[i] * g[i];
        }
        T::HALF * u
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ∇U against central finite differences and U against the dense Σ⁻¹.
    #[test]
    fn gradient_matches_finite_differences() {
        let t = CorrelatedGaussian::<6>::paper();
        let x = [0.3, -1.2, 2.0, 0.1, -0.7, 1.1];
        let mut g = [0.0; 6];
        let u: f64 = t.potential_and_gradient(&x, &mut g);
        let h = 1e-6;
        for i in 0..6 {
            let mut xp = x;
            let mut xm = x;
            xp[i] += h;
            xm[i] -= h;
            let mut tmp = [0.0; 6];
            let fd = (t.potential_and_gradient(&xp, &mut tmp)
                - t.potential_and_gradient(&xm, &mut tmp))
                / (2.0 * h);
            assert!((fd - g[i]).abs() < 1e-7, "coordinate {i}: {fd} vs {}", g[i]);
        }
        // Σ g = x (g = Σ⁻¹x).
        for i in 0..6 {
            let sx: f64 = (0..6).map(|j| t.covariance(i, j) * g[j]).sum();
            assert!((sx - x[i]).abs() < 1e-12);
        }
        let quad: f64 = (0..6).map(|i| x[i] * g[i]).sum();
        assert!((u - 0.5 * quad).abs() < 1e-12);
    }
}
