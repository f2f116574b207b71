//! The complete recipe's synthetic targets (Ma, Chen & Fox 2015, §4.1, Fig. 2
//! and S.5, Supp. F.1):
//!
//! - [`RecipeQuadratic`]: U(θ) = θ²/2 (one peak);
//! - [`RecipeQuartic`]: U(θ) = θ⁴ − 2θ² (two peaks);
//! - [`RecipeCorrelated2d`]: U(θ) = θ₁⁴/10 + (4(θ₂ + 1.2) − θ₁²)²/2;
//! - [`RecipeMetric`]: the gSGRHMC metric G(θ)⁻¹ = D·√|U(θ) + C|·I with the
//!   paper's D = 1.5, C = 0.5, for SGRLD and SGRHMC.
//!
//! **Gradient noise.** The paper does not state the noise of its synthetic
//! stochastic gradients. We use ∇Ũ = ∇U + N(0, 4·I), the model of the SGHMC
//! paper's (Chen, Fox & Guestrin 2014, §5.1) experiment on the same
//! U = θ⁴ − 2θ², which the recipe paper's Fig. 2 follows; it is a setting
//! (`with_gradient_noise_sd`), not a fact from the paper.
//!
//! **Metric.** The paper writes G⁻¹ with the minibatch Ũ(θ); the core's
//! [`DiagonalRiemannianMetric`] sees only θ, so [`RecipeMetric`] uses the exact U (for
//! these toys Ũ = U anyway: only the gradient is noisy).

use qnmc::Potential;
use qnmc::samplers::recipe::DiagonalRiemannianMetric;

use super::analytic_toy::{
    AnalyticToy, InvalidNoise, check_noise, quadrature_log_normaliser, toy_target_impls,
};

/// Gradient-noise standard deviation of the recipe toys (variance 4).
pub const RECIPE_GRADIENT_NOISE_SD: f64 = 2.0;

/// U(θ) = θ²/2: π = N(0, 1).
///
/// ```
/// use qnmc_host::targets::{AnalyticToy, RecipeQuadratic};
/// let t = RecipeQuadratic::paper();
/// let n01 = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
/// assert!((t.density(&[0.0]) - n01).abs() < 1e-15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecipeQuadratic {
    gradient_noise_sd: f64,
}

impl RecipeQuadratic {
    /// With ∇Ũ = ∇U + N(0, 4) (see the module docs).
    pub fn paper() -> Self {
        RecipeQuadratic {
            gradient_noise_sd: RECIPE_GRADIENT_NOISE_SD,
        }
    }

    /// With ∇Ũ = ∇U + N(0, sd²).
    pub fn with_gradient_noise_sd(sd: f64) -> Result<Self, InvalidNoise> {
        Ok(RecipeQuadratic {
            gradient_noise_sd: check_noise(sd)?,
        })
    }
}

impl AnalyticToy<1> for RecipeQuadratic {
    fn target_name(&self) -> &'static str {
        "recipe-quadratic"
    }

    fn energy_and_gradient(&self, x: &[f64; 1], gradient: &mut [f64; 1]) -> f64 {
        gradient[0] = x[0];
        0.5 * x[0] * x[0]
    }

    fn gradient_noise_sd(&self) -> f64 {
        self.gradient_noise_sd
    }

    fn log_normaliser(&self) -> f64 {
        0.5 * (2.0 * core::f64::consts::PI).ln()
    }

    fn bounding_box(&self) -> ([f64; 1], [f64; 1]) {
        ([-7.0], [7.0])
    }
}

toy_target_impls!(RecipeQuadratic, 1, 4000);

/// U(θ) = θ⁴ − 2θ²: modes at θ = ±1, barrier U(0) − U(±1) = 1.
///
/// ```
/// use qnmc_host::targets::{AnalyticToy, RecipeQuartic};
/// let t = RecipeQuartic::paper();
/// let mut g = [0.0];
/// assert_eq!(t.energy_and_gradient(&[1.0], &mut g), -1.0);
/// assert_eq!(g, [0.0]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecipeQuartic {
    gradient_noise_sd: f64,
    log_normaliser: f64,
}

impl RecipeQuartic {
    const BOUND: f64 = 3.5;

    /// With ∇Ũ = ∇U + N(0, 4) (see the module docs).
    pub fn paper() -> Self {
        RecipeQuartic::with_gradient_noise_sd(RECIPE_GRADIENT_NOISE_SD)
            .expect("2 is a valid noise level")
    }

    /// With ∇Ũ = ∇U + N(0, sd²).
    pub fn with_gradient_noise_sd(sd: f64) -> Result<Self, InvalidNoise> {
        let gradient_noise_sd = check_noise(sd)?;
        let log_normaliser =
            quadrature_log_normaliser(|x| quartic(x[0]), [-Self::BOUND], [Self::BOUND], 20_000);
        Ok(RecipeQuartic {
            gradient_noise_sd,
            log_normaliser,
        })
    }
}

fn quartic(t: f64) -> f64 {
    t * t * t * t - 2.0 * t * t
}

impl AnalyticToy<1> for RecipeQuartic {
    fn target_name(&self) -> &'static str {
        "recipe-quartic"
    }

    fn energy_and_gradient(&self, x: &[f64; 1], gradient: &mut [f64; 1]) -> f64 {
        let t = x[0];
        gradient[0] = 4.0 * t * t * t - 4.0 * t;
        quartic(t)
    }

    fn gradient_noise_sd(&self) -> f64 {
        self.gradient_noise_sd
    }

    fn log_normaliser(&self) -> f64 {
        self.log_normaliser
    }

    fn bounding_box(&self) -> ([f64; 1], [f64; 1]) {
        ([-Self::BOUND], [Self::BOUND])
    }
}

toy_target_impls!(RecipeQuartic, 1, 4000);

/// U(θ) = θ₁⁴/10 + (4(θ₂ + 1.2) − θ₁²)²/2: a curved ridge θ₂ ≈ θ₁²/4 − 1.2
/// of width ¼ (Fig. 2 right of the recipe paper).
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::{AnalyticToy, RecipeCorrelated2d};
/// let t = RecipeCorrelated2d::paper();
/// assert_eq!((t.name().as_str(), t.dimension()), ("recipe-2d", 2));
/// let mut g = [0.0; 2];
/// // The minimum: θ = (0, −1.2).
/// assert_eq!(t.energy_and_gradient(&[0.0, -1.2], &mut g), 0.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecipeCorrelated2d {
    gradient_noise_sd: f64,
    log_normaliser: f64,
}

impl RecipeCorrelated2d {
    const LOWER: [f64; 2] = [-5.0, -3.0];
    const UPPER: [f64; 2] = [5.0, 6.0];

    /// With ∇Ũ = ∇U + N(0, 4·I) (see the module docs).
    pub fn paper() -> Self {
        RecipeCorrelated2d::with_gradient_noise_sd(RECIPE_GRADIENT_NOISE_SD)
            .expect("2 is a valid noise level")
    }

    /// With ∇Ũ = ∇U + N(0, sd²·I).
    pub fn with_gradient_noise_sd(sd: f64) -> Result<Self, InvalidNoise> {
        let gradient_noise_sd = check_noise(sd)?;
        let log_normaliser =
            quadrature_log_normaliser(|x| correlated(x).0, Self::LOWER, Self::UPPER, 1000);
        Ok(RecipeCorrelated2d {
            gradient_noise_sd,
            log_normaliser,
        })
    }
}

/// (U, s) with s = 4(θ₂ + 1.2) − θ₁².
fn correlated(x: &[f64; 2]) -> (f64, f64) {
    let s = 4.0 * (x[1] + 1.2) - x[0] * x[0];
    (0.1 * x[0].powi(4) + 0.5 * s * s, s)
}

impl AnalyticToy<2> for RecipeCorrelated2d {
    fn target_name(&self) -> &'static str {
        "recipe-2d"
    }

    fn energy_and_gradient(&self, x: &[f64; 2], gradient: &mut [f64; 2]) -> f64 {
        let (u, s) = correlated(x);
        gradient[0] = 0.4 * x[0].powi(3) - 2.0 * x[0] * s;
        gradient[1] = 4.0 * s;
        u
    }

    fn gradient_noise_sd(&self) -> f64 {
        self.gradient_noise_sd
    }

    fn log_normaliser(&self) -> f64 {
        self.log_normaliser
    }

    fn bounding_box(&self) -> ([f64; 2], [f64; 2]) {
        (Self::LOWER, Self::UPPER)
    }

    /// The mode (0, −1.2).
    fn starting_point(&self) -> [f64; 2] {
        [0.0, -1.2]
    }
}

toy_target_impls!(RecipeCorrelated2d, 2, 600);

/// The recipe's gSGRHMC metric (Supp. F.1): G(θ)⁻¹ = D·√|U(θ) + C|·I, so
/// (G⁻¹)ᵢᵢ = D√|U + C| and ∂ᵢ(G⁻¹)ᵢᵢ = D·sign(U + C)·∂ᵢU/(2√|U + C|).
///
/// With the paper's C = 0.5 and U = θ⁴ − 2θ² (minimum −1), U + C changes sign
/// at θ² = 1 ± 1/√2: there G⁻¹ → 0 and its derivative diverges; the samplers
/// report a step that lands exactly on such a point as an error. A larger C
/// (e.g. 1.05, as the core's tests use) keeps U + C > 0.
///
/// ```
/// use qnmc::samplers::recipe::DiagonalRiemannianMetric;
/// use qnmc_host::targets::{RecipeMetric, RecipeQuadratic};
/// let metric = RecipeMetric::paper(RecipeQuadratic::paper());
/// let (mut inv, mut der) = ([0.0], [0.0]);
/// metric.inverse_metric(&[1.0], &mut inv, &mut der);
/// assert_eq!(inv[0], 1.5); // 1.5·√(½ + ½)
/// assert_eq!(der[0], 0.75); // 1.5·1/(2·1)
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecipeMetric<P> {
    /// The target whose U defines the metric.
    pub target: P,
    /// D > 0.
    pub scale: f64,
    /// C.
    pub offset: f64,
}

impl<P> RecipeMetric<P> {
    /// The paper's D = 1.5, C = 0.5.
    pub fn paper(target: P) -> Self {
        RecipeMetric {
            target,
            scale: 1.5,
            offset: 0.5,
        }
    }

    /// D = 1.5 with offset C.
    pub fn with_offset(target: P, offset: f64) -> Self {
        RecipeMetric {
            target,
            scale: 1.5,
            offset,
        }
    }
}

impl<P: Potential<f64, D>, const D: usize> DiagonalRiemannianMetric<f64, D> for RecipeMetric<P> {
    fn inverse_metric(
        &self,
        position: &[f64; D],
        inverse: &mut [f64; D],
        derivative: &mut [f64; D],
    ) {
        let mut grad = [0.0; D];
        let shifted = self.target.potential_and_gradient(position, &mut grad) + self.offset;
        let root = shifted.abs().sqrt();
        let sign = if shifted < 0.0 { -1.0 } else { 1.0 };
        for i in 0..D {
            inverse[i] = self.scale * root;
            derivative[i] = self.scale * sign * grad[i] / (2.0 * root);
        }
    }
}
