//! `hier-logistic-centered`: a hierarchical logistic regression with
//! group-varying intercepts, centred, on simulated Bernoulli outcomes in
//! J = 12 groups of 2–16 observations.
//!
//! Model, observations i = 1, …, N in groups j[i], two covariates xᵢ₁, xᵢ₂:
//!
//! ```text
//! yᵢ ~ Bernoulli(logit⁻¹ ηᵢ),  ηᵢ = α_{j[i]} + β₁ xᵢ₁ + β₂ xᵢ₂,
//! αⱼ ~ N(μ, τ²)  (centred),
//! μ ~ N(0, 2.5²),  β₁, β₂ ~ N(0, 2.5²),  τ ~ half-N(0, 1).
//! ```
//!
//! The priors are weakly informative for logistic regression on covariates
//! of unit scale (Gelman et al. 2008 use scale 2.5 for the coefficients): a
//! coefficient of 5 already moves a probability from 0.5 to 0.99. τ's
//! half-N(0, 1) keeps intercepts spread by more than ±2 on the logit scale
//! unlikely a priori, which 80 binary outcomes cannot rule out by
//! themselves.
//!
//! Unconstrained coordinates x = (α₁, …, α_J, μ, β₁, β₂, s), D = J + 4 = 16,
//! τ = eˢ (log-Jacobian s). With S = Σⱼ (αⱼ − μ)², q = e⁻²ˢ = 1/τ²,
//! eᵢ = logit⁻¹ηᵢ − yᵢ:
//!
//! ```text
//! U = (μ² + β₁² + β₂²)/12.5 + τ²/2 + (J − 1) s + q S/2
//!     + Σᵢ (log(1 + e^{ηᵢ}) − yᵢ ηᵢ),
//! ∂U/∂αⱼ = q (αⱼ − μ) + Σ_{i: j[i] = j} eᵢ,
//! ∂U/∂μ  = μ/6.25 − q Σⱼ (αⱼ − μ),
//! ∂U/∂βₖ = βₖ/6.25 + Σᵢ eᵢ xᵢₖ,
//! ∂U/∂s  = τ² + J − 1 − q S,
//! ```
//!
//! which is −log π − log|J| minus the constant 3 (log 2.5 + ½ log 2π)
//! (μ, β) + ½ log(π/2) (τ) + J/2 · log 2π (α). log(1 + eᶻ) is a softplus,
//! finite for every finite η; a product q·v with v exactly 0 stays 0 where q
//! overflows, so U is finite or +∞, never NaN.
//!
//! As τ → 0 the αⱼ are pinned to μ with sd τ, and with 2–16 binary outcomes
//! per group the data hold them only loosely: the funnel in (α, log τ).
//!
//! # The data
//!
//! Group sizes [`GROUP_SIZES`] (2, 3, 3, 4, 4, 5, 6, 7, 8, 10, 12, 16;
//! N = 80), simulated once with μ = −0.3, β = (0.8, −0.5), τ = 0.7
//! ([`TRUE_MU`], [`TRUE_BETA`], [`TRUE_TAU`]) by the generator of
//! `simulation_rng.rs` seeded with [`SEED`]: first αⱼ = μ + τ εⱼ for
//! j = 1, …, J, then observation by observation, group after group, xᵢ₁ and
//! xᵢ₂ standard normal and yᵢ = 1 if a uniform is ≤ 1/(1 + e^{−ηᵢ}) (else 0),
//! ηᵢ = αⱼ + β₁ xᵢ₁ + β₂ xᵢ₂ evaluated left to right. 34 of the 80 outcomes
//! are 1. Reported quantities on the constrained scale: `alpha[1]`…
//! `alpha[12]`, `mu`, `beta[1]`, `beta[2]`, `tau`. No exact posterior is
//! known; `qnmc check` draws its reference on the non-centred twin
//! [`HierLogisticNoncentered`].

use super::eight_schools_centered::{logistic, softplus};
use super::simulation_rng::SplitMix64;
use super::stochastic_volatility::scale;
use crate::model::Model;

mod noncentered;
pub use noncentered::HierLogisticNoncentered;

/// Number of groups J.
pub const GROUPS: usize = 12;
/// Observations per group, N = 80 in all.
pub const GROUP_SIZES: [usize; GROUPS] = [2, 3, 3, 4, 4, 5, 6, 7, 8, 10, 12, 16];
/// Seed of the generator that simulates the data.
pub const SEED: u64 = 0x5EED_0106_1001;
/// μ of the simulation.
pub const TRUE_MU: f64 = -0.3;
/// β of the simulation.
pub const TRUE_BETA: [f64; 2] = [0.8, -0.5];
/// τ of the simulation.
pub const TRUE_TAU: f64 = 0.7;

/// Prior variance of μ and of each βₖ (2.5²).
const LOCATION_PRIOR_VARIANCE: f64 = 6.25;

/// The data of the hierarchical logistic regression.
#[derive(Debug, Clone, PartialEq)]
struct Observations {
    /// Group j[i] of each observation (0-based).
    group: Vec<usize>,
    /// The covariates (xᵢ₁, xᵢ₂).
    covariates: Vec<[f64; 2]>,
    /// The outcome yᵢ ∈ {0, 1}.
    outcome: Vec<f64>,
    /// The group intercepts αⱼ the data were simulated with.
    true_intercepts: Vec<f64>,
}

/// Simulates the data as described in the module documentation.
fn simulate() -> Observations {
    let mut rng = SplitMix64::new(SEED);
    let true_intercepts: Vec<f64> = (0..GROUPS)
        .map(|_| TRUE_MU + TRUE_TAU * rng.normal())
        .collect();
    let n: usize = GROUP_SIZES.iter().sum();
    let mut data = Observations {
        group: Vec::with_capacity(n),
        covariates: Vec::with_capacity(n),
        outcome: Vec::with_capacity(n),
        true_intercepts,
    };
    for (j, &size) in GROUP_SIZES.iter().enumerate() {
        for _ in 0..size {
            let x = [rng.normal(), rng.normal()];
            let eta = data.true_intercepts[j] + TRUE_BETA[0] * x[0] + TRUE_BETA[1] * x[1];
            let p = 1.0 / (1.0 + (-eta).exp());
            let y = if rng.open_uniform() <= p { 1.0 } else { 0.0 };
            data.group.push(j);
            data.covariates.push(x);
            data.outcome.push(y);
        }
    }
    data
}

/// The centred hierarchical logistic regression; see the module
/// documentation.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::HierLogisticCentered;
/// let model = HierLogisticCentered::new();
/// assert_eq!(model.name(), "hier-logistic-centered");
/// assert_eq!(model.dimension(), 16);
/// assert_eq!(model.output_names()[12..], ["mu", "beta[1]", "beta[2]", "tau"]);
/// let mut out = [0.0; 16];
/// model.constrain(&[0.0; 16], &mut out);
/// assert_eq!(out[15], 1.0); // τ = e⁰
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct HierLogisticCentered {
    data: Observations,
}

impl HierLogisticCentered {
    /// The model on the built-in simulated data.
    pub fn new() -> Self {
        HierLogisticCentered { data: simulate() }
    }

    /// Number of observations N.
    pub fn observations(&self) -> usize {
        self.data.outcome.len()
    }

    /// The outcomes y₁, …, y_N (0 or 1), group after group.
    pub fn outcomes(&self) -> &[f64] {
        &self.data.outcome
    }

    /// The covariates (xᵢ₁, xᵢ₂).
    pub fn covariates(&self) -> &[[f64; 2]] {
        &self.data.covariates
    }

    /// The group (0-based) of each observation.
    pub fn groups(&self) -> &[usize] {
        &self.data.group
    }

    /// The intercepts αⱼ the data were simulated with.
    pub fn true_intercepts(&self) -> &[f64] {
        &self.data.true_intercepts
    }

    /// The likelihood's part of U at intercepts `alpha` and coefficients
    /// `beta`: returns Σᵢ (log(1 + e^{ηᵢ}) − yᵢ ηᵢ), writes Σ_{i∈j} eᵢ into
    /// `per_group` and Σᵢ eᵢ xᵢ into `per_coefficient`.
    fn likelihood(
        &self,
        alpha: &[f64],
        beta: [f64; 2],
        per_group: &mut [f64],
        per_coefficient: &mut [f64; 2],
    ) -> f64 {
        per_group.fill(0.0);
        *per_coefficient = [0.0; 2];
        let mut u = 0.0;
        for ((&j, x), &y) in self
            .data
            .group
            .iter()
            .zip(&self.data.covariates)
            .zip(&self.data.outcome)
        {
            let eta = alpha[j] + beta[0] * x[0] + beta[1] * x[1];
            u += softplus(eta) - y * eta;
            let e = logistic(eta) - y;
            per_group[j] += e;
            per_coefficient[0] += e * x[0];
            per_coefficient[1] += e * x[1];
        }
        u
    }
}

impl Default for HierLogisticCentered {
    fn default() -> Self {
        Self::new()
    }
}

/// The names both parametrisations report.
fn hier_logistic_output_names() -> Vec<String> {
    (1..=GROUPS)
        .map(|j| format!("alpha[{j}]"))
        .chain(["mu", "beta[1]", "beta[2]", "tau"].map(String::from))
        .collect()
}

impl Model for HierLogisticCentered {
    fn name(&self) -> String {
        "hier-logistic-centered".into()
    }

    fn dimension(&self) -> usize {
        GROUPS + 4
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        let (alpha, head) = x.split_at(GROUPS);
        let (mu, beta, s) = (head[0], [head[1], head[2]], head[3]);
        let q = (-2.0 * s).exp();
        let (grad_alpha, grad_head) = gradient.split_at_mut(GROUPS);
        let mut per_coefficient = [0.0; 2];
        let fit = self.likelihood(alpha, beta, grad_alpha, &mut per_coefficient);

        let (mut spread, mut pull) = (0.0, 0.0);
        for (g, &aj) in grad_alpha.iter_mut().zip(alpha) {
            let d = aj - mu;
            spread += d * d;
            let shrink = scale(q, d);
            pull += shrink;
            *g += shrink;
        }
        let groups = GROUPS as f64;
        let variance = (2.0 * s).exp();
        let hierarchy = scale(q, spread);
        let u = 0.5 * (mu * mu + beta[0] * beta[0] + beta[1] * beta[1]) / LOCATION_PRIOR_VARIANCE
            + 0.5 * variance
            + (groups - 1.0) * s
            + 0.5 * hierarchy
            + fit;
        grad_head[0] = mu / LOCATION_PRIOR_VARIANCE - pull;
        grad_head[1] = beta[0] / LOCATION_PRIOR_VARIANCE + per_coefficient[0];
        grad_head[2] = beta[1] / LOCATION_PRIOR_VARIANCE + per_coefficient[1];
        grad_head[3] = variance + groups - 1.0 - hierarchy;
        u
    }

    fn output_names(&self) -> Vec<String> {
        hier_logistic_output_names()
    }

    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        out[..GROUPS + 3].copy_from_slice(&x[..GROUPS + 3]);
        out[GROUPS + 3] = x[GROUPS + 3].exp();
    }

    /// The non-centred twin ([`HierLogisticNoncentered`]): the same
    /// posterior without the funnel between τ and the intercepts.
    fn reference_model(&self) -> Option<Box<dyn Model>> {
        Some(Box::new(HierLogisticNoncentered::of(self.clone())))
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

    /// A point with α around μ at sd τ (the hierarchy term at its typical
    /// size, also in the neck), the other coordinates given.
    fn point(mu: f64, beta: [f64; 2], s: f64, seed: u64) -> Vec<f64> {
        let mut x = random_point(GROUPS + 4, 1.5, seed);
        for alpha in &mut x[..GROUPS] {
            *alpha = mu + s.exp() * *alpha;
        }
        x[GROUPS..].copy_from_slice(&[mu, beta[0], beta[1], s]);
        x
    }

    /// ∇U against central differences (step 1e-6), relative error below 1e-6
    /// of max(1, ‖∇U‖∞) (truncation ≈ 1e-12 × U‴, rounding ≈ ε|U|/h ≈ 1e-8
    /// at |U| ≈ 100): in the bulk, in the neck (log τ = −3, −6), with τ
    /// large, and at random points.
    #[test]
    fn gradient_matches_finite_differences() {
        let model = HierLogisticCentered::new();
        let mut points = vec![
            point(-0.3, [0.8, -0.5], -0.5, 1),
            point(-0.4, [0.7, -0.4], -3.0, 2),
            point(0.0, [1.0, 0.0], -6.0, 3),
            point(1.0, [-2.0, 3.0], 1.5, 4),
        ];
        for seed in 0..3 {
            points.push(random_point(model.dimension(), 2.0, 40 + seed));
        }
        for x in &points {
            let err = gradient_error(&model, x, 1e-6);
            assert!(err < 1e-6, "s {}: {err:e}", x[GROUPS + 3]);
        }
    }

    /// U plus the documented constant equals −(log prior + log likelihood +
    /// log-Jacobian), each factor evaluated on the constrained scale, to
    /// 1e-12 relative.
    #[test]
    fn potential_matches_constrained_log_density() {
        let model = HierLogisticCentered::new();
        for x in [
            point(-0.2, [0.6, -0.3], -0.8, 11),
            point(0.5, [-1.0, 1.2], 0.6, 12),
        ] {
            let mut g = [0.0; GROUPS + 4];
            let u = model.potential_and_gradient(&x, &mut g);
            let (mu, tau) = (x[GROUPS], x[GROUPS + 3].exp());
            let mut lp = normal_lpdf(mu, 0.0, 2.5)
                + normal_lpdf(x[GROUPS + 1], 0.0, 2.5)
                + normal_lpdf(x[GROUPS + 2], 0.0, 2.5)
                + 0.5 * (2.0 / PI).ln()
                - 0.5 * tau * tau
                + x[GROUPS + 3];
            for &alpha in &x[..GROUPS] {
                lp += normal_lpdf(alpha, mu, tau);
            }
            for i in 0..model.observations() {
                let c = model.covariates()[i];
                let eta = x[model.groups()[i]] + x[GROUPS + 1] * c[0] + x[GROUPS + 2] * c[1];
                let p = 1.0 / (1.0 + (-eta).exp());
                lp += if model.outcomes()[i] == 1.0 {
                    p.ln()
                } else {
                    (1.0 - p).ln()
                };
            }
            let constant = 3.0 * (2.5f64.ln() + 0.5 * (2.0 * PI).ln())
                + 0.5 * (0.5 * PI).ln()
                + 0.5 * GROUPS as f64 * (2.0 * PI).ln();
            assert!(
                (u + constant + lp).abs() < 1e-12 * lp.abs(),
                "U + C = {}, −log π = {}",
                u + constant,
                -lp
            );
        }
    }

    /// The data: the documented sizes and the values
    /// `compare/nutpie/models.py`'s `simulate_hier_logistic()` computes in
    /// Python (printed with `repr`, i.e. exactly: the two generators agree
    /// bit for bit).
    #[test]
    fn simulated_data_are_the_python_harness_data() {
        let model = HierLogisticCentered::new();
        assert_eq!(model, HierLogisticCentered::new());
        assert_eq!(model.observations(), 80);
        for j in 0..GROUPS {
            let size = model.groups().iter().filter(|g| **g == j).count();
            assert_eq!(size, GROUP_SIZES[j]);
        }
        assert!(model.outcomes().iter().all(|y| *y == 0.0 || *y == 1.0));
        assert_eq!(model.outcomes().iter().sum::<f64>(), PYTHON_ONES);
        let x = model.covariates();
        assert_eq!(x[0][0], PYTHON_FIRST_X1);
        assert_eq!(x[79][1], PYTHON_LAST_X2);
        assert_eq!(x.iter().map(|c| c[0]).sum::<f64>(), PYTHON_SUM_X1);
        assert_eq!(model.true_intercepts()[11], PYTHON_LAST_ALPHA);
    }

    // Printed by `cd compare/nutpie && python3 -c 'from models import *;
    // d = simulate_hier_logistic(); x = d["x"].tolist(); s = 0.0
    // for v in x: s += v[0]
    // print(d["y"].sum(), repr(x[0][0]), repr(x[-1][1]), repr(s), repr(float(d["alpha"][-1])))'`.
    const PYTHON_ONES: f64 = 34.0;
    const PYTHON_FIRST_X1: f64 = -0.7981297860498505;
    const PYTHON_LAST_X2: f64 = 0.22679950769702945;
    const PYTHON_SUM_X1: f64 = -7.377507566590606;
    const PYTHON_LAST_ALPHA: f64 = -0.02709773988108022;

    #[test]
    fn names_constrain_and_start() {
        let model = HierLogisticCentered::new();
        let names = model.output_names();
        assert_eq!(names.len(), 16);
        assert_eq!(names[0], "alpha[1]");
        assert_eq!(names[11], "alpha[12]");
        let x = random_point(16, 2.0, 3);
        let mut out = [0.0; 16];
        model.constrain(&x, &mut out);
        assert_eq!(out[..15], x[..15]);
        assert_eq!(out[15], x[15].exp());
        assert_eq!(model.initial_point(), vec![0.0; 16]);
        assert!(model.known_posterior().is_none());
    }

    /// U is finite or +∞ (never NaN) and ∇U has no NaN with τ far beyond
    /// f64's range either way, α on μ (S = 0) and off it, and huge η.
    #[test]
    fn extreme_inputs_are_never_nan() {
        let model = HierLogisticCentered::new();
        let mut g = [0.0; GROUPS + 4];
        for (s, off, beta) in [
            (-800.0, 0.0, 0.0),
            (-800.0, 1.0, 0.0),
            (800.0, 1.0, 0.0),
            (0.0, 0.0, 1e300),
            (0.0, 0.0, -1e300),
        ] {
            let mut x = [1.0; GROUPS + 4];
            x[0] += off;
            (x[GROUPS + 1], x[GROUPS + 3]) = (beta, s);
            let u = model.potential_and_gradient(&x, &mut g);
            assert!(
                !u.is_nan() && u > f64::NEG_INFINITY,
                "{s} {off} {beta}: {u}"
            );
            assert!(!g.iter().any(|v| v.is_nan()), "{s} {off} {beta}: {g:?}");
        }
    }
}
