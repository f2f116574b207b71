//! `radon-centered`: a varying-intercept linear regression in the style of
//! the radon example (Gelman & Hill 2007, ch. 12; posteriordb's
//! `radon_hierarchical_intercept_centered`), centred, on simulated data with
//! J = 20 groups of very unequal sizes.
//!
//! Model, observations i = 1, …, N in groups j[i] ∈ {1, …, J}, a binary
//! covariate xᵢ (in radon: measured on the first floor):
//!
//! ```text
//! yᵢ ~ N(α_{j[i]} + β xᵢ, σ_y²),   αⱼ ~ N(μ_α, σ_α²)  (centred),
//! μ_α ~ N(0, 10²),  β ~ N(0, 10²),  σ_α ~ half-N(0, 1),  σ_y ~ half-N(0, 1).
//! ```
//!
//! The priors are weakly informative on the scale of log radon (posteriordb's
//! radon models use the same N(0, 10²) and half-N(0, 1)): the data are on
//! the order of 1, so they let the likelihood decide everything but σ_α
//! near 0, where the few groups with 1–3 observations say little.
//!
//! Unconstrained coordinates x = (α₁, …, α_J, μ_α, β, a, b), D = J + 4 = 24,
//! with σ_α = eᵃ and σ_y = eᵇ (log-Jacobians a and b). With residuals
//! rᵢ = yᵢ − α_{j[i]} − β xᵢ, R = Σᵢ rᵢ², spread S = Σⱼ (αⱼ − μ_α)²,
//! q_α = e⁻²ᵃ = 1/σ_α² and q_y = e⁻²ᵇ:
//!
//! ```text
//! U = μ_α²/200 + β²/200 + σ_α²/2 + (J − 1) a + σ_y²/2 + (N − 1) b
//!     + q_α S/2 + q_y R/2,
//! ∂U/∂αⱼ = q_α (αⱼ − μ_α) − q_y Σ_{i: j[i] = j} rᵢ,
//! ∂U/∂μ_α = μ_α/100 − q_α Σⱼ (αⱼ − μ_α),
//! ∂U/∂β  = β/100 − q_y Σᵢ rᵢ xᵢ,
//! ∂U/∂a  = σ_α² + J − 1 − q_α S,
//! ∂U/∂b  = σ_y² + N − 1 − q_y R,
//! ```
//!
//! which is −log π − log|J| minus the constant
//! 2 (log 10 + ½ log 2π) (μ_α, β) + log(π/2) (the two half-normals)
//! + (J + N)/2 · log 2π (α and y).
//!
//! As σ_α → 0 the αⱼ of the small groups are pinned to μ_α with sd σ_α
//! while a keeps its scale: the funnel in (α, log σ_α) that makes the
//! centred form hard; the large groups' αⱼ are pinned by their data instead.
//! A product q·v whose v is exactly 0 stays 0 where q overflows (no 0·∞),
//! so U is finite or +∞, never NaN.
//!
//! # The data
//!
//! Group sizes [`GROUP_SIZES`] (1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6, 7, 8, 10,
//! 12, 15, 20, 25, 30, 40; N = 197), simulated once with μ_α = 1.5, β = −0.7,
//! σ_α = 0.3, σ_y = 0.8 ([`TRUE_MU_ALPHA`], [`TRUE_BETA`],
//! [`TRUE_SIGMA_ALPHA`], [`TRUE_SIGMA_Y`]; σ_α is modest next to σ_y, as in
//! radon) by the generator of `simulation_rng.rs` seeded with [`SEED`]: first
//! αⱼ = μ_α + σ_α εⱼ for j = 1, …, J, then observation by observation, group
//! after group, xᵢ = 1 if a uniform is ≤ [`FLOOR_PROBABILITY`] = 0.25 (else
//! 0) and yᵢ = α_{j[i]} + β xᵢ + σ_y ηᵢ. Reported quantities on the
//! constrained scale: `alpha[1]`…`alpha[20]`, `mu_alpha`, `beta`,
//! `sigma_alpha`, `sigma_y`. No exact posterior is known; `qnmc check`
//! draws its reference on the non-centred twin [`RadonNoncentered`].

use super::simulation_rng::SplitMix64;
use super::stochastic_volatility::scale;
use crate::model::Model;

mod noncentered;
pub use noncentered::RadonNoncentered;

/// Number of groups J.
pub const GROUPS: usize = 20;
/// Observations per group, N = 197 in all.
pub const GROUP_SIZES: [usize; GROUPS] = [
    1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 25, 30, 40,
];
/// Seed of the generator that simulates the data.
pub const SEED: u64 = 0x5EED_00AD_0001;
/// μ_α of the simulation.
pub const TRUE_MU_ALPHA: f64 = 1.5;
/// β of the simulation.
pub const TRUE_BETA: f64 = -0.7;
/// σ_α of the simulation.
pub const TRUE_SIGMA_ALPHA: f64 = 0.3;
/// σ_y of the simulation.
pub const TRUE_SIGMA_Y: f64 = 0.8;
/// Probability that the simulated covariate xᵢ is 1.
pub const FLOOR_PROBABILITY: f64 = 0.25;

/// Prior variance of μ_α and of β.
const LOCATION_PRIOR_VARIANCE: f64 = 100.0;

/// The data of the varying-intercept regression.
#[derive(Debug, Clone, PartialEq)]
struct Observations {
    /// Group j[i] of each observation (0-based).
    group: Vec<usize>,
    /// The covariate xᵢ ∈ {0, 1}.
    covariate: Vec<f64>,
    /// The outcome yᵢ.
    outcome: Vec<f64>,
    /// The group intercepts αⱼ the data were simulated with.
    true_intercepts: Vec<f64>,
}

/// Simulates the data as described in the module documentation.
fn simulate() -> Observations {
    let mut rng = SplitMix64::new(SEED);
    let true_intercepts: Vec<f64> = (0..GROUPS)
        .map(|_| TRUE_MU_ALPHA + TRUE_SIGMA_ALPHA * rng.normal())
        .collect();
    let n: usize = GROUP_SIZES.iter().sum();
    let mut data = Observations {
        group: Vec::with_capacity(n),
        covariate: Vec::with_capacity(n),
        outcome: Vec::with_capacity(n),
        true_intercepts,
    };
    for (j, &size) in GROUP_SIZES.iter().enumerate() {
        for _ in 0..size {
            let x = if rng.open_uniform() <= FLOOR_PROBABILITY {
                1.0
            } else {
                0.0
            };
            let y = data.true_intercepts[j] + TRUE_BETA * x + TRUE_SIGMA_Y * rng.normal();
            data.group.push(j);
            data.covariate.push(x);
            data.outcome.push(y);
        }
    }
    data
}

/// The centred varying-intercept regression; see the module documentation.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::RadonCentered;
/// let model = RadonCentered::new();
/// assert_eq!(model.name(), "radon-centered");
/// assert_eq!(model.dimension(), 24);
/// assert_eq!(model.output_names()[20..], ["mu_alpha", "beta", "sigma_alpha", "sigma_y"]);
/// let mut out = [0.0; 24];
/// model.constrain(&[0.0; 24], &mut out);
/// assert_eq!(out[22..], [1.0, 1.0]); // σ = e⁰
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RadonCentered {
    data: Observations,
}

impl RadonCentered {
    /// The model on the built-in simulated data.
    pub fn new() -> Self {
        RadonCentered { data: simulate() }
    }

    /// Number of observations N.
    pub fn observations(&self) -> usize {
        self.data.outcome.len()
    }

    /// The outcomes y₁, …, y_N, group after group.
    pub fn outcomes(&self) -> &[f64] {
        &self.data.outcome
    }

    /// The covariates x₁, …, x_N (0 or 1).
    pub fn covariates(&self) -> &[f64] {
        &self.data.covariate
    }

    /// The group (0-based) of each observation.
    pub fn groups(&self) -> &[usize] {
        &self.data.group
    }

    /// The intercepts αⱼ the data were simulated with.
    pub fn true_intercepts(&self) -> &[f64] {
        &self.data.true_intercepts
    }
}

impl Default for RadonCentered {
    fn default() -> Self {
        Self::new()
    }
}

/// The names both parametrisations report.
fn radon_output_names() -> Vec<String> {
    (1..=GROUPS)
        .map(|j| format!("alpha[{j}]"))
        .chain(["mu_alpha", "beta", "sigma_alpha", "sigma_y"].map(String::from))
        .collect()
}

impl Model for RadonCentered {
    fn name(&self) -> String {
        "radon-centered".into()
    }

    fn dimension(&self) -> usize {
        GROUPS + 4
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        let (alpha, head) = x.split_at(GROUPS);
        let (mu, beta, a, b) = (head[0], head[1], head[2], head[3]);
        let (q_alpha, q_y) = ((-2.0 * a).exp(), (-2.0 * b).exp());
        let (grad_alpha, grad_head) = gradient.split_at_mut(GROUPS);

        // Observations: R, −Σ rᵢ per group (into grad_alpha), −Σ rᵢ xᵢ.
        grad_alpha.fill(0.0);
        let (mut squares, mut minus_rx) = (0.0, 0.0);
        for ((&j, &xi), &yi) in self
            .data
            .group
            .iter()
            .zip(&self.data.covariate)
            .zip(&self.data.outcome)
        {
            let r = yi - alpha[j] - beta * xi;
            squares += r * r;
            grad_alpha[j] -= r;
            minus_rx -= r * xi;
        }

        // The hierarchy: S and Σ (αⱼ − μ_α).
        let (mut spread, mut pull) = (0.0, 0.0);
        for (g, &aj) in grad_alpha.iter_mut().zip(alpha) {
            let d = aj - mu;
            spread += d * d;
            let shrink = scale(q_alpha, d);
            pull += shrink;
            *g = shrink + scale(q_y, *g);
        }

        let (groups, n) = (GROUPS as f64, self.observations() as f64);
        let (var_alpha, var_y) = ((2.0 * a).exp(), (2.0 * b).exp());
        let (hierarchy, fit) = (scale(q_alpha, spread), scale(q_y, squares));
        let u = 0.5 * (mu * mu + beta * beta) / LOCATION_PRIOR_VARIANCE
            + 0.5 * var_alpha
            + (groups - 1.0) * a
            + 0.5 * var_y
            + (n - 1.0) * b
            + 0.5 * hierarchy
            + 0.5 * fit;
        grad_head[0] = mu / LOCATION_PRIOR_VARIANCE - pull;
        grad_head[1] = beta / LOCATION_PRIOR_VARIANCE + scale(q_y, minus_rx);
        grad_head[2] = var_alpha + groups - 1.0 - hierarchy;
        grad_head[3] = var_y + n - 1.0 - fit;
        u
    }

    fn output_names(&self) -> Vec<String> {
        radon_output_names()
    }

    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        out[..GROUPS + 2].copy_from_slice(&x[..GROUPS + 2]);
        out[GROUPS + 2] = x[GROUPS + 2].exp();
        out[GROUPS + 3] = x[GROUPS + 3].exp();
    }

    /// The non-centred twin ([`RadonNoncentered`]): the same posterior
    /// without the funnel between σ_α and the intercepts.
    fn reference_model(&self) -> Option<Box<dyn Model>> {
        Some(Box::new(RadonNoncentered::of(self.clone())))
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

    /// half-N(0, 1) on σ > 0: √(2/π) e^{−σ²/2}.
    fn half_normal_lpdf(sigma: f64) -> f64 {
        0.5 * (2.0 / PI).ln() - 0.5 * sigma * sigma
    }

    /// A point with α around μ_α at sd σ_α (so that the hierarchy term is of
    /// its typical size, also in the neck), the other coordinates given.
    fn point(mu: f64, beta: f64, a: f64, b: f64, seed: u64) -> Vec<f64> {
        let mut x = random_point(GROUPS + 4, 1.5, seed);
        for alpha in &mut x[..GROUPS] {
            *alpha = mu + a.exp() * *alpha;
        }
        x[GROUPS..].copy_from_slice(&[mu, beta, a, b]);
        x
    }

    /// ∇U against central differences (step 1e-6), relative error below 1e-6
    /// of max(1, ‖∇U‖∞) (central differences err by O(h²) ≈ 1e-12 times the
    /// third derivative plus rounding ε|U|/h ≈ 1e-7 at |U| ≈ 500): in the
    /// bulk, in the neck (log σ_α = −3, −6), with σ_α large, and at random
    /// points.
    #[test]
    fn gradient_matches_finite_differences() {
        let model = RadonCentered::new();
        let mut points = vec![
            point(1.4, -0.6, -1.2, -0.2, 1),
            point(1.5, -0.7, -3.0, -0.25, 2),
            point(1.2, -0.9, -6.0, -0.1, 3),
            point(0.5, 0.4, 1.5, 0.8, 4),
            point(-2.0, 3.0, 0.0, -1.0, 5),
        ];
        for seed in 0..3 {
            points.push(random_point(model.dimension(), 2.0, 40 + seed));
        }
        for x in &points {
            let err = gradient_error(&model, x, 1e-6);
            assert!(err < 1e-6, "a {}, b {}: {err:e}", x[22], x[23]);
        }
    }

    /// U plus the documented constant equals −(log prior + log likelihood +
    /// log-Jacobians), each factor evaluated on the constrained scale: to
    /// 1e-12 relative (rounding of sums of ~200 terms of size ≤ 100 is
    /// ~1e-14 relative).
    #[test]
    fn potential_matches_constrained_log_density() {
        let model = RadonCentered::new();
        for x in [
            point(1.3, -0.5, -1.0, -0.3, 11),
            point(0.2, 1.0, 0.7, 0.4, 12),
        ] {
            let mut g = [0.0; GROUPS + 4];
            let u = model.potential_and_gradient(&x, &mut g);
            let (mu, beta) = (x[GROUPS], x[GROUPS + 1]);
            let (sigma_alpha, sigma_y) = (x[GROUPS + 2].exp(), x[GROUPS + 3].exp());
            let mut lp = normal_lpdf(mu, 0.0, 10.0)
                + normal_lpdf(beta, 0.0, 10.0)
                + half_normal_lpdf(sigma_alpha)
                + half_normal_lpdf(sigma_y)
                + x[GROUPS + 2]
                + x[GROUPS + 3];
            for &alpha in &x[..GROUPS] {
                lp += normal_lpdf(alpha, mu, sigma_alpha);
            }
            for i in 0..model.observations() {
                let mean = x[model.groups()[i]] + beta * model.covariates()[i];
                lp += normal_lpdf(model.outcomes()[i], mean, sigma_y);
            }
            let n = model.observations() as f64;
            let constant = 2.0 * (10f64.ln() + 0.5 * (2.0 * PI).ln())
                + (0.5 * PI).ln()
                + 0.5 * (GROUPS as f64 + n) * (2.0 * PI).ln();
            assert!(
                (u + constant + lp).abs() < 1e-12 * lp.abs(),
                "U + C = {}, −log π = {}",
                u + constant,
                -lp
            );
        }
    }

    /// The data: the documented sizes, covariates 0/1 with about the
    /// simulated share, and the values `compare/nutpie/models.py`'s
    /// `simulate_radon()` computes in Python (printed there with `repr`,
    /// i.e. exactly: the two generators agree bit for bit).
    #[test]
    fn simulated_data_are_the_python_harness_data() {
        let model = RadonCentered::new();
        assert_eq!(model, RadonCentered::new());
        assert_eq!(model.observations(), 197);
        for j in 0..GROUPS {
            let size = model.groups().iter().filter(|g| **g == j).count();
            assert_eq!(size, GROUP_SIZES[j]);
        }
        let floors: f64 = model.covariates().iter().sum();
        assert!(model.covariates().iter().all(|x| *x == 0.0 || *x == 1.0));
        // Binomial(197, 0.25): mean 49.25, sd 6.1.
        assert!((floors - 49.25).abs() < 4.0 * 6.1, "{floors}");
        assert_eq!(floors, PYTHON_FLOORS);
        let y = model.outcomes();
        assert_eq!(y[0], PYTHON_FIRST_Y);
        assert_eq!(y[196], PYTHON_LAST_Y);
        assert_eq!(y.iter().sum::<f64>(), PYTHON_SUM_Y);
        assert_eq!(model.true_intercepts()[19], PYTHON_LAST_ALPHA);
    }

    // Printed by `cd compare/nutpie && python3 -c 'from models import *;
    // d = simulate_radon(); y = [float(v) for v in d["y"]]; s = 0.0
    // for v in y: s += v
    // print(d["x"].sum(), repr(y[0]), repr(y[-1]), repr(s), repr(float(d["alpha"][-1])))'`
    // (the sum in the order of the data, as Rust's `sum`).
    const PYTHON_FLOORS: f64 = 51.0;
    const PYTHON_FIRST_Y: f64 = 1.3524867293028207;
    const PYTHON_LAST_Y: f64 = 0.4199184648620426;
    const PYTHON_SUM_Y: f64 = 225.41040010661663;
    const PYTHON_LAST_ALPHA: f64 = 0.9826197097778567;

    #[test]
    fn names_constrain_and_start() {
        let model = RadonCentered::new();
        let names = model.output_names();
        assert_eq!(names.len(), 24);
        assert_eq!(names[0], "alpha[1]");
        assert_eq!(names[19], "alpha[20]");
        let x = random_point(24, 2.0, 3);
        let mut out = [0.0; 24];
        model.constrain(&x, &mut out);
        assert_eq!(out[..22], x[..22]);
        assert_eq!(out[22..], [x[22].exp(), x[23].exp()]);
        assert_eq!(model.initial_point(), vec![0.0; 24]);
        assert!(model.known_posterior().is_none());
    }

    /// U is finite or +∞ (never NaN) and ∇U has no NaN with σ_α, σ_y far
    /// beyond f64's range either way, with α on μ_α (S = 0) and off it.
    #[test]
    fn extreme_scales_are_never_nan() {
        let model = RadonCentered::new();
        let mut g = [0.0; GROUPS + 4];
        for (a, b, off) in [
            (-800.0, 0.0, 0.0),
            (-800.0, 0.0, 1.0),
            (800.0, 0.0, 1.0),
            (0.0, -800.0, 1.0),
            (0.0, 800.0, 1.0),
        ] {
            let mut x = [1.0; GROUPS + 4];
            x[0] += off;
            (x[GROUPS + 2], x[GROUPS + 3]) = (a, b);
            let u = model.potential_and_gradient(&x, &mut g);
            assert!(!u.is_nan() && u > f64::NEG_INFINITY, "{a} {b} {off}: {u}");
            assert!(!g.iter().any(|v| v.is_nan()), "{a} {b} {off}: {g:?}");
        }
    }
}
