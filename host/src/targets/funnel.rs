//! `funnel`: Neal's funnel (Neal 2003, "Slice sampling", §8), the textbook
//! case of a scale that changes by orders of magnitude across the posterior.
//!
//! Model, in n ≥ 2 coordinates (v, x₁, …, x_{n−1}), n = 10 by default:
//!
//! ```text
//! v ~ N(0, 3²),    xᵢ | v ~ N(0, eᵛ)  (variance eᵛ),  i = 1, …, n − 1.
//! ```
//!
//! Every coordinate is already unconstrained, so there is no Jacobian:
//!
//! ```text
//! U(v, x) = v²/18 + Σᵢ (xᵢ² e⁻ᵛ/2 + v/2),
//! ∂U/∂v  = v/9 + (n − 1)/2 − Σᵢ xᵢ² e⁻ᵛ/2,
//! ∂U/∂xᵢ = xᵢ e⁻ᵛ,
//! ```
//!
//! which is −log π minus the constant log 3 + (n/2) log 2π. The neck (v ≈ −6,
//! xᵢ of sd e⁻³ ≈ 0.05) and the mouth (v ≈ 6, sd e³ ≈ 20) need step sizes
//! about 400 times apart; no single metric fits both.
//!
//! Known posterior (exact): all means 0, Var v = 9, Var xᵢ = E[eᵛ] = e^{9/2}
//! (the log-normal mean), so sd v = 3 and sd xᵢ = e^{9/4} ≈ 9.49. Reported
//! quantities are the coordinates themselves: `v`, `x[1]`, …, `x[n−1]`.

use crate::model::{KnownPosterior, Model};

/// Standard deviation of v.
const V_SD: f64 = 3.0;

/// Neal's funnel; see the module documentation.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::Funnel;
/// let funnel = Funnel::neal();
/// assert_eq!((funnel.name().as_str(), funnel.dimension()), ("funnel", 10));
/// assert_eq!(funnel.output_names()[..2], ["v", "x[1]"]);
/// let known = funnel.known_posterior().unwrap();
/// assert_eq!(known.sd[0], 3.0);
/// assert!(Funnel::new(1).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Funnel {
    dimension: usize,
}

/// Why a [`Funnel`] could not be built: it needs v and at least one x.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunnelDimensionError {
    /// The dimension asked for.
    pub dimension: usize,
}

impl core::fmt::Display for FunnelDimensionError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "the funnel needs a dimension of at least 2 (v and one x), got {}",
            self.dimension
        )
    }
}

impl std::error::Error for FunnelDimensionError {}

impl Funnel {
    /// Neal's dimension (v and nine x).
    pub const NEAL_DIMENSION: usize = 10;

    /// The funnel in `dimension` ≥ 2 coordinates (v and `dimension` − 1 x).
    pub fn new(dimension: usize) -> Result<Self, FunnelDimensionError> {
        if dimension < 2 {
            return Err(FunnelDimensionError { dimension });
        }
        Ok(Funnel { dimension })
    }

    /// The 10-dimensional funnel.
    pub fn neal() -> Self {
        Funnel {
            dimension: Self::NEAL_DIMENSION,
        }
    }
}

impl Default for Funnel {
    fn default() -> Self {
        Self::neal()
    }
}

impl Model for Funnel {
    fn name(&self) -> String {
        "funnel".into()
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        let v = x[0];
        let precision = (-v).exp();
        let mut sum_sq = 0.0;
        for (g, &xi) in gradient[1..].iter_mut().zip(&x[1..]) {
            // xᵢ = 0 contributes 0 even where e⁻ᵛ overflows (no 0·∞).
            if xi == 0.0 {
                *g = 0.0;
            } else {
                *g = xi * precision;
                sum_sq += xi * xi;
            }
        }
        let half_count = 0.5 * (self.dimension - 1) as f64;
        let scaled = if sum_sq == 0.0 {
            0.0
        } else {
            0.5 * sum_sq * precision
        };
        gradient[0] = v / (V_SD * V_SD) + half_count - scaled;
        0.5 * (v / V_SD).powi(2) + half_count * v + scaled
    }

    fn output_names(&self) -> Vec<String> {
        std::iter::once("v".to_string())
            .chain((1..self.dimension).map(|i| format!("x[{i}]")))
            .collect()
    }

    fn known_posterior(&self) -> Option<KnownPosterior> {
        // Var xᵢ = E[Var(xᵢ | v)] = E[eᵛ] = e^{Var v / 2}.
        let x_sd = (0.25 * V_SD * V_SD).exp();
        let mut sd = vec![x_sd; self.dimension];
        sd[0] = V_SD;
        Some(KnownPosterior {
            source: "analytic: v ~ N(0, 9), x_i ~ N(0, e^v), so Var x_i = E[e^v] = e^4.5".into(),
            mean: vec![0.0; self.dimension],
            sd,
            mean_mcse: None,
            sd_mcse: None,
            gaussian_marginals: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::testing::{gradient_error, random_point};
    use std::f64::consts::PI;

    fn normal_lpdf(x: f64, mean: f64, sd: f64) -> f64 {
        let z = (x - mean) / sd;
        -0.5 * z * z - sd.ln() - 0.5 * (2.0 * PI).ln()
    }

    /// ∇U against central differences (step 1e-6), relative error below 1e-6
    /// of max(1, ‖∇U‖∞), at random points in the body, in the neck (v = −4
    /// and −6 with x at the conditional scale e^{v/2}) and in the mouth.
    #[test]
    fn gradient_matches_finite_differences() {
        let tolerance = 1e-6;
        for (dimension, v, x_scale, seed) in [
            (10, 0.3, 2.0, 1),
            (10, -4.0, (-2.0f64).exp(), 2),
            (10, -6.0, (-3.0f64).exp(), 3),
            (10, 5.0, 20.0, 4),
            (2, -4.0, 0.5, 5),
            (25, 1.5, 3.0, 6),
        ] {
            let model = Funnel::new(dimension).unwrap();
            let mut x = random_point(dimension, x_scale, seed);
            x[0] = v;
            let err = gradient_error(&model, &x, 1e-6);
            assert!(err < tolerance, "n = {dimension}, v = {v}: {err:e}");
        }
    }

    /// U plus the constant log 3 + (n/2) log 2π equals −Σ log N(·) of the
    /// model's factors, evaluated separately.
    #[test]
    fn potential_matches_sum_of_normal_log_densities() {
        let model = Funnel::neal();
        let x = [-1.5, 0.2, -0.4, 0.1, 0.05, -0.3, 0.6, -0.01, 0.25, 0.0];
        let mut g = [0.0; 10];
        let u = model.potential_and_gradient(&x, &mut g);
        let sd_x = (x[0] / 2.0).exp();
        let log_density = normal_lpdf(x[0], 0.0, 3.0)
            + x[1..]
                .iter()
                .map(|&xi| normal_lpdf(xi, 0.0, sd_x))
                .sum::<f64>();
        let constant = 3f64.ln() + 5.0 * (2.0 * PI).ln();
        assert!(
            (u + constant + log_density).abs() < 1e-12 * log_density.abs(),
            "{u} + {constant} vs {}",
            -log_density
        );
        // By hand at v = 0, x = (1, …, 1) in 3-D: U = 0 + 2·(1/2) = 1.
        let small = Funnel::new(3).unwrap();
        let mut g3 = [0.0; 3];
        assert_eq!(small.potential_and_gradient(&[0.0, 1.0, 1.0], &mut g3), 1.0);
        assert_eq!(g3, [0.0, 1.0, 1.0]);
    }

    #[test]
    fn names_constrain_start_and_known_posterior() {
        let model = Funnel::new(4).unwrap();
        assert_eq!(model.output_names(), ["v", "x[1]", "x[2]", "x[3]"]);
        let x = [-2.0, 0.5, 1.5, -3.0];
        let mut out = [0.0; 4];
        model.constrain(&x, &mut out);
        assert_eq!(out, x);
        assert_eq!(model.initial_point(), vec![0.0; 4]);
        let known = model.known_posterior().unwrap();
        assert_eq!(known.mean, vec![0.0; 4]);
        assert_eq!(known.sd[0] * known.sd[0], 9.0);
        for sd in &known.sd[1..] {
            assert!((sd * sd - 4.5f64.exp()).abs() < 1e-12 * 4.5f64.exp());
        }
        assert_eq!(Funnel::default(), Funnel::neal());
        assert_eq!(Funnel::new(1), Err(FunnelDimensionError { dimension: 1 }));
        assert!(
            Funnel::new(0)
                .unwrap_err()
                .to_string()
                .contains("at least 2")
        );
    }

    /// Far in the neck e⁻ᵛ overflows: U is +∞ (not NaN) when some x ≠ 0, and
    /// finite when every x is 0.
    #[test]
    fn extreme_neck_is_not_nan() {
        let model = Funnel::new(3).unwrap();
        let mut g = [0.0; 3];
        let u = model.potential_and_gradient(&[-800.0, 0.0, 0.0], &mut g);
        assert!(
            u.is_finite() && g.iter().all(|v| v.is_finite()),
            "{u} {g:?}"
        );
        let u = model.potential_and_gradient(&[-800.0, 1e-3, 0.0], &mut g);
        assert!(
            u == f64::INFINITY && !g.iter().any(|v| v.is_nan()),
            "{u} {g:?}"
        );
    }
}
