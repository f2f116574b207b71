//! `hier-logistic-noncentered`: the posterior of [`HierLogisticCentered`]
//! written non-centred, the coordinates `qnmc check` draws that target's
//! reference in ([`crate::run::reference_run`]).
//!
//! The same model, priors and data, with αⱼ = μ + τ zⱼ, zⱼ ~ N(0, 1).
//! Unconstrained coordinates x = (z₁, …, z_J, μ, β₁, β₂, s), τ = eˢ. With
//! eᵢ = logit⁻¹ηᵢ − yᵢ and the per-group sums Eⱼ = Σ_{i: j[i] = j} eᵢ
//! (= ∂U/∂αⱼ of the likelihood):
//!
//! ```text
//! U = (μ² + β₁² + β₂²)/12.5 + τ²/2 − s + Σⱼ zⱼ²/2 + Σᵢ (log(1 + e^{ηᵢ}) − yᵢ ηᵢ),
//! ∂U/∂zⱼ = zⱼ + τ Eⱼ,
//! ∂U/∂μ  = μ/6.25 + Σⱼ Eⱼ,
//! ∂U/∂βₖ = βₖ/6.25 + Σᵢ eᵢ xᵢₖ,
//! ∂U/∂s  = τ² − 1 + τ Σⱼ zⱼ Eⱼ.
//! ```
//!
//! The map z ↦ α (μ, s fixed) has log|∂α/∂z| = J s, and at α = α(z)
//!
//! ```text
//! U_centred(α, μ, β, s) = U_noncentred(z, μ, β, s) + J s
//! ```
//!
//! exactly (tested): one posterior, two parametrisations. The prior of z
//! does not depend on τ, so there is no funnel. Reported quantities are the
//! centred model's: `alpha[j]` computed from z, `mu`, `beta[1]`, `beta[2]`,
//! `tau`.

use super::{
    GROUPS, HierLogisticCentered, LOCATION_PRIOR_VARIANCE, hier_logistic_output_names, scale,
};
use crate::model::Model;

/// The non-centred hierarchical logistic regression; see the module
/// documentation.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::{HierLogisticCentered, HierLogisticNoncentered};
/// let twin = HierLogisticNoncentered::new();
/// assert_eq!(twin.name(), "hier-logistic-noncentered");
/// assert_eq!(twin.output_names(), HierLogisticCentered::new().output_names());
/// // z = 1, μ = 0.5, τ = e⁰: every αⱼ = 1.5.
/// let mut x = [1.0; 16];
/// x[12] = 0.5;
/// x[15] = 0.0;
/// let mut out = [0.0; 16];
/// twin.constrain(&x, &mut out);
/// assert!(out[..12].iter().all(|a| *a == 1.5));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct HierLogisticNoncentered {
    centred: HierLogisticCentered,
}

impl HierLogisticNoncentered {
    /// The twin of [`HierLogisticCentered::new`] (the built-in data).
    pub fn new() -> Self {
        Self::of(HierLogisticCentered::new())
    }

    /// The twin of `centred`: its data, its reported quantities.
    pub fn of(centred: HierLogisticCentered) -> Self {
        HierLogisticNoncentered { centred }
    }

    /// The centred model of the same posterior.
    pub fn centred(&self) -> &HierLogisticCentered {
        &self.centred
    }

    /// The intercepts αⱼ = μ + τ zⱼ at unconstrained `x`, into `alpha`.
    pub fn intercepts(&self, x: &[f64], alpha: &mut [f64]) {
        let (mu, tau) = (x[GROUPS], x[GROUPS + 3].exp());
        for (aj, &zj) in alpha.iter_mut().zip(&x[..GROUPS]) {
            *aj = mu + scale(tau, zj);
        }
    }
}

impl Default for HierLogisticNoncentered {
    fn default() -> Self {
        Self::new()
    }
}

impl Model for HierLogisticNoncentered {
    fn name(&self) -> String {
        "hier-logistic-noncentered".into()
    }

    fn dimension(&self) -> usize {
        GROUPS + 4
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        let (z, head) = x.split_at(GROUPS);
        let (mu, beta, s) = (head[0], [head[1], head[2]], head[3]);
        let tau = s.exp();
        let mut alpha = [0.0; GROUPS];
        self.intercepts(x, &mut alpha);
        let (grad_z, grad_head) = gradient.split_at_mut(GROUPS);
        let mut per_coefficient = [0.0; 2];
        let fit = self
            .centred
            .likelihood(&alpha, beta, grad_z, &mut per_coefficient);

        let (mut sum_e, mut sum_ze, mut prior_z) = (0.0, 0.0, 0.0);
        for (g, &zj) in grad_z.iter_mut().zip(z) {
            let group_gradient = *g; // Eⱼ
            sum_e += group_gradient;
            sum_ze += zj * group_gradient;
            prior_z += 0.5 * zj * zj;
            *g = zj + scale(tau, group_gradient);
        }
        let variance = tau * tau;
        let u = 0.5 * (mu * mu + beta[0] * beta[0] + beta[1] * beta[1]) / LOCATION_PRIOR_VARIANCE
            + 0.5 * variance
            - s
            + prior_z
            + fit;
        grad_head[0] = mu / LOCATION_PRIOR_VARIANCE + sum_e;
        grad_head[1] = beta[0] / LOCATION_PRIOR_VARIANCE + per_coefficient[0];
        grad_head[2] = beta[1] / LOCATION_PRIOR_VARIANCE + per_coefficient[1];
        grad_head[3] = variance - 1.0 + scale(tau, sum_ze);
        if !u.is_finite() {
            // τ or α = μ + τ z beyond f64: the true U exceeds f64 too; no NaN
            // reaches the sampler.
            for v in gradient.iter_mut().filter(|v| v.is_nan()) {
                *v = 0.0;
            }
            return f64::INFINITY;
        }
        u
    }

    fn output_names(&self) -> Vec<String> {
        hier_logistic_output_names()
    }

    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        self.intercepts(x, &mut out[..GROUPS]);
        out[GROUPS..GROUPS + 3].copy_from_slice(&x[GROUPS..GROUPS + 3]);
        out[GROUPS + 3] = x[GROUPS + 3].exp();
    }

    /// Its own reference model: a reference run of this target and one of
    /// [`HierLogisticCentered`] are the same run.
    fn reference_model(&self) -> Option<Box<dyn Model>> {
        Some(Box::new(self.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::testing::{gradient_error, random_point};

    /// (z, μ, β, s) with z uniform in ±`z_scale`.
    fn point(mu: f64, beta: [f64; 2], s: f64, z_scale: f64, seed: u64) -> Vec<f64> {
        let mut x = random_point(GROUPS, z_scale, seed);
        x.extend([mu, beta[0], beta[1], s]);
        x
    }

    /// ∇U against central differences (step 1e-6), relative error below 1e-6
    /// of max(1, ‖∇U‖∞), as for the centred model: in the bulk, with τ tiny
    /// and large, and at random points.
    #[test]
    fn gradient_matches_finite_differences() {
        let model = HierLogisticNoncentered::new();
        let mut points = vec![
            point(-0.3, [0.8, -0.5], -0.5, 1.5, 1),
            point(-0.4, [0.7, -0.4], -6.0, 1.0, 2),
            point(1.0, [-2.0, 3.0], 1.5, 2.0, 3),
        ];
        for seed in 0..3 {
            points.push(random_point(model.dimension(), 2.0, 40 + seed));
        }
        for x in &points {
            let err = gradient_error(&model, x, 1e-6);
            assert!(err < 1e-6, "s {}: {err:e}", x[GROUPS + 3]);
        }
    }

    /// At α = α(z): U_centred − U_noncentred = J s (log|∂α/∂z|) to 1e-12
    /// relative, in the bulk, in the neck (s = −5) and with τ large; a
    /// missing or wrong Jacobian misses by |J s| ≥ 3.6 at these points. The
    /// reported quantities agree.
    #[test]
    fn same_posterior_as_the_centred_model() {
        let twin = HierLogisticNoncentered::new();
        let centred = twin.centred();
        let mut g = [0.0; GROUPS + 4];
        for (mu, beta, s, seed) in [
            (-0.3, [0.8, -0.5], -0.6, 21),
            (-0.2, [0.9, -0.6], -5.0, 22),
            (0.4, [-1.0, 1.5], 1.2, 23),
            (-1.0, [2.0, 0.3], -0.3, 24),
        ] {
            let x = point(mu, beta, s, 1.5, seed);
            let mut centred_x = x.clone();
            twin.intercepts(&x, &mut centred_x[..GROUPS]);
            let u_twin = twin.potential_and_gradient(&x, &mut g);
            let u_centred = centred.potential_and_gradient(&centred_x, &mut g);
            let gap = u_centred - (u_twin + GROUPS as f64 * s);
            assert!(
                gap.abs() < 1e-12 * u_centred.abs().max(1.0),
                "s {s}: U_c {u_centred}, U_nc + J s {}",
                u_twin + GROUPS as f64 * s
            );
            let (mut out_twin, mut out_centred) = ([0.0; GROUPS + 4], [0.0; GROUPS + 4]);
            twin.constrain(&x, &mut out_twin);
            centred.constrain(&centred_x, &mut out_centred);
            assert_eq!(out_twin, out_centred);
        }
        assert_eq!(twin.output_names(), centred.output_names());
        let reference = centred.reference_model().unwrap();
        assert_eq!(reference.name(), "hier-logistic-noncentered");
    }

    /// U is finite or +∞ (never NaN or −∞) and ∇U has no NaN with τ far
    /// beyond f64's range either way.
    #[test]
    fn extreme_scales_are_never_nan() {
        let model = HierLogisticNoncentered::new();
        let mut g = [0.0; GROUPS + 4];
        for (s, z) in [(-800.0, 1.0), (800.0, 1.0), (800.0, 0.0), (400.0, -1.0)] {
            let mut x = [z; GROUPS + 4];
            x[GROUPS + 3] = s;
            let u = model.potential_and_gradient(&x, &mut g);
            assert!(!u.is_nan() && u > f64::NEG_INFINITY, "{s} {z}: {u}");
            assert!(!g.iter().any(|v| v.is_nan()), "{s} {z}: {g:?}");
        }
    }
}
