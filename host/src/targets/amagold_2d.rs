//! The AMAGOLD paper's two synthetic 2-D distributions (Zhang, Cooper & De Sa
//! 2020, §6.1, Fig. 2, Appendix G.2.1; adapted from Yin & Zhou 2018), with the
//! paper's stochastic gradients ∇Ũ = ∇U + N(0, I):
//!
//! - Dist1: N(z₁; z₂²/4, 1)·N(z₂; 0, 4), a banana;
//! - Dist2: ½N(z; 0, [[2, 1.8], [1.8, 2]]) + ½N(z; 0, [[2, −1.8], [−1.8, 2]]),
//!   an X-shaped mixture.
//!
//! Both have closed-form normalised densities.

use core::f64::consts::PI;

use super::analytic_toy::{AnalyticToy, InvalidNoise, check_noise, toy_target_impls};

/// Dist1: π(z) = N(z₁; z₂²/4, 1)·N(z₂; 0, 4), so
/// U(z) = (z₁ − z₂²/4)²/2 + z₂²/8 and Z = 4π.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::{AmagoldDist1, AnalyticToy};
/// let d = AmagoldDist1::paper();
/// assert_eq!(d.name(), "amagold-dist1");
/// // On the ridge z₁ = z₂²/4 at z₂ = 0 the density is 1/(√(2π)·√(8π)) = 1/(4π).
/// assert!((d.density(&[0.0, 0.0]) - 0.25 / std::f64::consts::PI).abs() < 1e-15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AmagoldDist1 {
    gradient_noise_sd: f64,
}

impl AmagoldDist1 {
    /// The paper's gradient noise N(0, I).
    pub fn paper() -> Self {
        AmagoldDist1 {
            gradient_noise_sd: 1.0,
        }
    }

    /// Dist1 with gradient noise N(0, sd²·I).
    pub fn with_gradient_noise_sd(sd: f64) -> Result<Self, InvalidNoise> {
        Ok(AmagoldDist1 {
            gradient_noise_sd: check_noise(sd)?,
        })
    }
}

impl AnalyticToy<2> for AmagoldDist1 {
    fn target_name(&self) -> &'static str {
        "amagold-dist1"
    }

    fn energy_and_gradient(&self, z: &[f64; 2], gradient: &mut [f64; 2]) -> f64 {
        let r = z[0] - 0.25 * z[1] * z[1];
        gradient[0] = r;
        gradient[1] = -0.5 * r * z[1] + 0.25 * z[1];
        0.5 * r * r + 0.125 * z[1] * z[1]
    }

    fn gradient_noise_sd(&self) -> f64 {
        self.gradient_noise_sd
    }

    fn log_normaliser(&self) -> f64 {
        (4.0 * PI).ln()
    }

    fn bounding_box(&self) -> ([f64; 2], [f64; 2]) {
        // z₂ within 6.5 sd; z₁ within 7 of the ridge z₂²/4 ≤ 42.25.
        ([-7.0, -13.0], [50.0, 13.0])
    }
}

toy_target_impls!(AmagoldDist1, 2, 600);

/// Dist2: π(z) = ½N(z; 0, Σ₊) + ½N(z; 0, Σ₋), Σ± = [[2, ±1.8], [±1.8, 2]];
/// U = −log π exactly (Z = 1), ∇U = w₊Σ₊⁻¹z + w₋Σ₋⁻¹z with w± the components'
/// responsibilities.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::{AmagoldDist2, AnalyticToy};
/// let d = AmagoldDist2::paper();
/// assert_eq!(d.name(), "amagold-dist2");
/// // The X shape: the diagonals are likelier than the axes at equal radius.
/// assert!(d.density(&[1.0, 1.0]) > d.density(&[2f64.sqrt(), 0.0]));
/// assert!((d.density(&[1.0, 1.0]) - d.density(&[1.0, -1.0])).abs() < 1e-15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AmagoldDist2 {
    gradient_noise_sd: f64,
}

impl AmagoldDist2 {
    /// Variance of each coordinate in both components.
    const VARIANCE: f64 = 2.0;
    /// |covariance| of the two coordinates in each component.
    const COVARIANCE: f64 = 1.8;

    /// The paper's gradient noise N(0, I).
    pub fn paper() -> Self {
        AmagoldDist2 {
            gradient_noise_sd: 1.0,
        }
    }

    /// Dist2 with gradient noise N(0, sd²·I).
    pub fn with_gradient_noise_sd(sd: f64) -> Result<Self, InvalidNoise> {
        Ok(AmagoldDist2 {
            gradient_noise_sd: check_noise(sd)?,
        })
    }
}

impl AnalyticToy<2> for AmagoldDist2 {
    fn target_name(&self) -> &'static str {
        "amagold-dist2"
    }

    fn energy_and_gradient(&self, z: &[f64; 2], gradient: &mut [f64; 2]) -> f64 {
        let (v, c) = (Self::VARIANCE, Self::COVARIANCE);
        let det = v * v - c * c;
        // Σ±⁻¹z = (v z₁ ∓ c z₂, v z₂ ∓ c z₁)/det.
        let plus = [(v * z[0] - c * z[1]) / det, (v * z[1] - c * z[0]) / det];
        let minus = [(v * z[0] + c * z[1]) / det, (v * z[1] + c * z[0]) / det];
        let a = -0.5 * (z[0] * plus[0] + z[1] * plus[1]);
        let b = -0.5 * (z[0] * minus[0] + z[1] * minus[1]);
        let top = a.max(b);
        let (ea, eb) = ((a - top).exp(), (b - top).exp());
        let (wa, wb) = (ea / (ea + eb), eb / (ea + eb));
        gradient[0] = wa * plus[0] + wb * minus[0];
        gradient[1] = wa * plus[1] + wb * minus[1];
        let log_sum = top + (ea + eb).ln();
        // −log(½N₊ + ½N₋) with log N± = −log(2π) − ½log det − q±/2.
        -(log_sum + 0.5f64.ln() - (2.0 * PI).ln() - 0.5 * det.ln())
    }

    fn gradient_noise_sd(&self) -> f64 {
        self.gradient_noise_sd
    }

    fn log_normaliser(&self) -> f64 {
        0.0
    }

    fn bounding_box(&self) -> ([f64; 2], [f64; 2]) {
        // 6.4 marginal standard deviations.
        ([-9.0, -9.0], [9.0, 9.0])
    }
}

toy_target_impls!(AmagoldDist2, 2, 600);
