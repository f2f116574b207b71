//! The AMAGOLD paper's double well (Zhang, Cooper & De Sa 2020, §5, Fig. 1;
//! after Ding et al. 2014 and Li et al. 2016):
//! U(θ) = (θ + 4)(θ + 1)(θ − 1)(θ − 3)/14 + 0.5, with stochastic gradients
//! ∇Ũ = ∇U + N(0, 1).

use super::analytic_toy::{
    AnalyticToy, InvalidNoise, check_noise, quadrature_log_normaliser, toy_target_impls,
};

/// The double well π(θ) ∝ exp(−U(θ)): modes near θ ≈ −2.8 (deeper) and
/// θ ≈ 2.2, a barrier near θ ≈ 0.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::{AnalyticToy, DoubleWell};
/// let target = DoubleWell::paper();
/// assert_eq!(target.name(), "double-well");
/// let mut g = [0.0];
/// // U(1) = 0.5: a root of the quartic.
/// assert!((target.energy_and_gradient(&[1.0], &mut g) - 0.5).abs() < 1e-15);
/// assert!(target.density(&[-2.8]) > target.density(&[0.0]));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DoubleWell {
    gradient_noise_sd: f64,
    log_normaliser: f64,
}

impl DoubleWell {
    const LOWER: f64 = -7.0;
    const UPPER: f64 = 6.0;

    /// The paper's setting: gradient noise N(0, 1).
    pub fn paper() -> Self {
        DoubleWell::with_gradient_noise_sd(1.0).expect("1 is a valid noise level")
    }

    /// The double well with gradient noise N(0, sd²).
    pub fn with_gradient_noise_sd(sd: f64) -> Result<Self, InvalidNoise> {
        let sd = check_noise(sd)?;
        let log_normaliser =
            quadrature_log_normaliser(|x| energy(x[0]), [Self::LOWER], [Self::UPPER], 20_000);
        Ok(DoubleWell {
            gradient_noise_sd: sd,
            log_normaliser,
        })
    }
}

/// U(θ) = (θ⁴ + θ³ − 13θ² − θ + 12)/14 + 0.5.
fn energy(x: f64) -> f64 {
    (x + 4.0) * (x + 1.0) * (x - 1.0) * (x - 3.0) / 14.0 + 0.5
}

impl AnalyticToy<1> for DoubleWell {
    fn target_name(&self) -> &'static str {
        "double-well"
    }

    fn energy_and_gradient(&self, x: &[f64; 1], gradient: &mut [f64; 1]) -> f64 {
        let t = x[0];
        gradient[0] = (4.0 * t * t * t + 3.0 * t * t - 26.0 * t - 1.0) / 14.0;
        energy(t)
    }

    fn gradient_noise_sd(&self) -> f64 {
        self.gradient_noise_sd
    }

    fn log_normaliser(&self) -> f64 {
        self.log_normaliser
    }

    fn bounding_box(&self) -> ([f64; 1], [f64; 1]) {
        ([Self::LOWER], [Self::UPPER])
    }
}

toy_target_impls!(DoubleWell, 1, 4000);
