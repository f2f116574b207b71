//! The QNHMC paper's Gaussian N(0, Σ) with Σ = c·11ᵀ + a·I (§5.1: c = 1, a = 4).
//!
//! Two faces of one computation ([`correlated_gaussian_potential`]): the
//! const-generic core target [`CorrelatedGaussian<D>`] and the run-time
//! [`GaussianModel`] that the CLI's `--target gaussian` runs.

use qnmc::{Potential, Real};

use crate::model::{KnownPosterior, Model};

/// U(θ) = ½ θᵀΣ⁻¹θ and ∇U = Σ⁻¹θ for Σ = c·11ᵀ + a·I, in O(n) by
/// Sherman–Morrison: Σ⁻¹ = (1/a)(I − c 11ᵀ/(a + cn)), n = `x.len()`.
///
/// ```
/// use qnmc_host::targets::correlated_gaussian_potential;
/// let mut g = [0.0f64; 2];
/// // Σ = 11ᵀ + 4I in 2-D: Σ⁻¹(1, 1) = (1, 1)/6.
/// let u = correlated_gaussian_potential(4.0, 1.0, &[1.0, 1.0], &mut g);
/// assert!((g[0] - 1.0 / 6.0).abs() < 1e-15 && (u - 1.0 / 6.0).abs() < 1e-15);
/// ```
pub fn correlated_gaussian_potential<T: Real>(
    independent_variance: f64,
    shared_variance: f64,
    x: &[T],
    gradient: &mut [T],
) -> T {
    let a = T::from_f64(independent_variance);
    let c = T::from_f64(shared_variance);
    let mut sum = T::ZERO;
    for v in x {
        sum += *v;
    }
    let shift = c * sum / (a + c * T::from_u64(x.len() as u64));
    let mut u = T::ZERO;
    for (g, v) in gradient.iter_mut().zip(x) {
        *g = (*v - shift) / a;
        u += *v * *g;
    }
    T::HALF * u
}

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
        correlated_gaussian_potential(self.independent_variance, self.shared_variance, x, g)
    }
}

/// The run-time face of N(0, c·11ᵀ + a·I): dimension chosen at run time,
/// name `gaussian`, with its exact marginals as the known posterior.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::GaussianModel;
/// let model = GaussianModel::paper(100).unwrap();
/// assert_eq!(model.name(), "gaussian");
/// let known = model.known_posterior().unwrap();
/// assert_eq!(known.sd[0], 5f64.sqrt()); // √(c + a) = √(1 + 4)
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GaussianModel {
    dimension: usize,
    independent_variance: f64,
    shared_variance: f64,
}

/// Why a [`GaussianModel`] could not be built.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GaussianModelError {
    /// The dimension was 0.
    ZeroDimension,
    /// a must be finite and > 0 and c finite and ≥ 0 (then Σ is positive definite).
    BadVariance {
        /// a, as given.
        independent_variance: f64,
        /// c, as given.
        shared_variance: f64,
    },
}

impl core::fmt::Display for GaussianModelError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            GaussianModelError::ZeroDimension => {
                write!(f, "the Gaussian target needs a dimension of at least 1")
            }
            GaussianModelError::BadVariance {
                independent_variance,
                shared_variance,
            } => write!(
                f,
                "Σ = c·11ᵀ + a·I needs a finite a > 0 and a finite c ≥ 0 (got a = {independent_variance}, c = {shared_variance})"
            ),
        }
    }
}

impl std::error::Error for GaussianModelError {}

impl GaussianModel {
    /// The QNHMC paper's default dimension.
    pub const PAPER_DIMENSION: usize = 100;

    /// N(0, c·11ᵀ + a·I) in `dimension` coordinates.
    pub fn new(
        dimension: usize,
        independent_variance: f64,
        shared_variance: f64,
    ) -> Result<Self, GaussianModelError> {
        if dimension == 0 {
            return Err(GaussianModelError::ZeroDimension);
        }
        let a_ok = independent_variance.is_finite() && independent_variance > 0.0;
        let c_ok = shared_variance.is_finite() && shared_variance >= 0.0;
        if !(a_ok && c_ok) {
            return Err(GaussianModelError::BadVariance {
                independent_variance,
                shared_variance,
            });
        }
        Ok(GaussianModel {
            dimension,
            independent_variance,
            shared_variance,
        })
    }

    /// The paper's Σ = 11ᵀ + 4I in `dimension` coordinates.
    pub fn paper(dimension: usize) -> Result<Self, GaussianModelError> {
        GaussianModel::new(dimension, 4.0, 1.0)
    }

    /// a, the variance added to every coordinate.
    pub fn independent_variance(&self) -> f64 {
        self.independent_variance
    }

    /// c, the weight of the all-ones direction.
    pub fn shared_variance(&self) -> f64 {
        self.shared_variance
    }
}

impl<const D: usize> From<CorrelatedGaussian<D>> for GaussianModel {
    fn from(t: CorrelatedGaussian<D>) -> Self {
        GaussianModel {
            dimension: D,
            independent_variance: t.independent_variance,
            shared_variance: t.shared_variance,
        }
    }
}

impl Model for GaussianModel {
    fn name(&self) -> String {
        "gaussian".into()
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        correlated_gaussian_potential(self.independent_variance, self.shared_variance, x, gradient)
    }

    fn known_posterior(&self) -> Option<KnownPosterior> {
        let sd = (self.independent_variance + self.shared_variance).sqrt();
        Some(KnownPosterior {
            source: "analytic".into(),
            mean: vec![0.0; self.dimension],
            sd: vec![sd; self.dimension],
            mean_mcse: None,
            sd_mcse: None,
            gaussian_marginals: true,
        })
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

    /// The run-time model computes exactly what the const-generic target does
    /// (same function), and rejects bad settings with an error value.
    #[test]
    fn runtime_model_matches_const_generic_target() {
        let t = CorrelatedGaussian::<5>::paper();
        let m = GaussianModel::from(t);
        let x = [0.4, -2.0, 1.5, 0.0, 3.0];
        let (mut g1, mut g2) = ([0.0; 5], [0.0; 5]);
        let u1: f64 = t.potential_and_gradient(&x, &mut g1);
        let u2 = m.potential_and_gradient(&x, &mut g2);
        assert_eq!(u1, u2);
        assert_eq!(g1, g2);
        assert_eq!(m.dimension(), 5);
        let known = m.known_posterior().unwrap();
        assert_eq!(known.mean, vec![0.0; 5]);
        assert!(
            known
                .sd
                .iter()
                .all(|s| (s * s - t.covariance(0, 0)).abs() < 1e-12)
        );
        assert_eq!(
            GaussianModel::paper(0),
            Err(GaussianModelError::ZeroDimension)
        );
        assert!(GaussianModel::new(3, -1.0, 1.0).is_err());
        assert!(GaussianModel::new(3, 4.0, f64::NAN).is_err());
    }
}
