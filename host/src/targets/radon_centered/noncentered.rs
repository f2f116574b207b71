//! `radon-noncentered`: the posterior of [`RadonCentered`] written
//! non-centred, the coordinates `qnmc check` draws that target's reference
//! in ([`crate::run::reference_run`]).
//!
//! The same model, priors and data; the intercepts are a deterministic
//! function of standard normals: αⱼ = μ_α + σ_α zⱼ, zⱼ ~ N(0, 1).
//! Unconstrained coordinates x = (z₁, …, z_J, μ_α, β, a, b), σ_α = eᵃ,
//! σ_y = eᵇ. With rᵢ = yᵢ − α_{j[i]} − β xᵢ, R = Σᵢ rᵢ², q_y = e⁻²ᵇ and the
//! per-group sums Gⱼ = −q_y Σ_{i: j[i] = j} rᵢ (= ∂U/∂αⱼ of the
//! observations):
//!
//! ```text
//! U = μ_α²/200 + β²/200 + σ_α²/2 − a + σ_y²/2 + (N − 1) b + Σⱼ zⱼ²/2 + q_y R/2,
//! ∂U/∂zⱼ = zⱼ + σ_α Gⱼ,
//! ∂U/∂μ_α = μ_α/100 + Σⱼ Gⱼ,
//! ∂U/∂β  = β/100 − q_y Σᵢ rᵢ xᵢ,
//! ∂U/∂a  = σ_α² − 1 + σ_α Σⱼ zⱼ Gⱼ,
//! ∂U/∂b  = σ_y² + N − 1 − q_y R.
//! ```
//!
//! The map z ↦ α (μ_α, a fixed) has log|∂α/∂z| = J a, and at α = α(z)
//!
//! ```text
//! U_centred(α, μ_α, β, a, b) = U_noncentred(z, μ_α, β, a, b) + J a
//! ```
//!
//! exactly (tested): one posterior, two parametrisations, so U minus the
//! centred model's constant is −log π − log|J| here too. The prior of z does
//! not depend on σ_α, so there is no funnel; the large groups, whose
//! intercepts the data pin, make z and a correlated instead (αⱼ − μ_α known,
//! σ_α zⱼ fixed), which a diagonal metric adapts to on the scale of the
//! posterior. Reported quantities are the centred model's: `alpha[j]`
//! computed from z, `mu_alpha`, `beta`, `sigma_alpha`, `sigma_y`.

use super::{GROUPS, LOCATION_PRIOR_VARIANCE, RadonCentered, radon_output_names, scale};
use crate::model::Model;

/// The non-centred varying-intercept regression; see the module
/// documentation.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::{RadonCentered, RadonNoncentered};
/// let twin = RadonNoncentered::new();
/// assert_eq!(twin.name(), "radon-noncentered");
/// assert_eq!(twin.output_names(), RadonCentered::new().output_names());
/// // z = 1, μ_α = 0.5, σ_α = e⁰: every αⱼ = 1.5.
/// let mut x = [1.0; 24];
/// x[20] = 0.5;
/// (x[22], x[23]) = (0.0, 0.0);
/// let mut out = [0.0; 24];
/// twin.constrain(&x, &mut out);
/// assert!(out[..20].iter().all(|a| *a == 1.5));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RadonNoncentered {
    centred: RadonCentered,
}

impl RadonNoncentered {
    /// The twin of [`RadonCentered::new`] (the built-in data).
    pub fn new() -> Self {
        Self::of(RadonCentered::new())
    }

    /// The twin of `centred`: its data, its reported quantities.
    pub fn of(centred: RadonCentered) -> Self {
        RadonNoncentered { centred }
    }

    /// The centred model of the same posterior.
    pub fn centred(&self) -> &RadonCentered {
        &self.centred
    }

    /// The intercepts αⱼ = μ_α + σ_α zⱼ at unconstrained `x`, into `alpha`.
    pub fn intercepts(&self, x: &[f64], alpha: &mut [f64]) {
        let (mu, sigma_alpha) = (x[GROUPS], x[GROUPS + 2].exp());
        for (aj, &zj) in alpha.iter_mut().zip(&x[..GROUPS]) {
            *aj = mu + scale(sigma_alpha, zj);
        }
    }
}

impl Default for RadonNoncentered {
    fn default() -> Self {
        Self::new()
    }
}

impl Model for RadonNoncentered {
    fn name(&self) -> String {
        "radon-noncentered".into()
    }

    fn dimension(&self) -> usize {
        GROUPS + 4
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        let (z, head) = x.split_at(GROUPS);
        let (mu, beta, a, b) = (head[0], head[1], head[2], head[3]);
        let (sigma_alpha, q_y) = (a.exp(), (-2.0 * b).exp());
        let mut alpha = [0.0; GROUPS];
        self.intercepts(x, &mut alpha);
        let (grad_z, grad_head) = gradient.split_at_mut(GROUPS);

        // Observations: R, −Σ rᵢ per group (into grad_z), −Σ rᵢ xᵢ.
        grad_z.fill(0.0);
        let (mut squares, mut minus_rx) = (0.0, 0.0);
        let data = &self.centred;
        for ((&j, &xi), &yi) in data
            .groups()
            .iter()
            .zip(data.covariates())
            .zip(data.outcomes())
        {
            let r = yi - alpha[j] - beta * xi;
            squares += r * r;
            grad_z[j] -= r;
            minus_rx -= r * xi;
        }

        let (mut sum_g, mut sum_zg, mut prior_z) = (0.0, 0.0, 0.0);
        for (g, &zj) in grad_z.iter_mut().zip(z) {
            let group_gradient = scale(q_y, *g); // Gⱼ
            sum_g += group_gradient;
            sum_zg += zj * group_gradient;
            prior_z += 0.5 * zj * zj;
            *g = zj + scale(sigma_alpha, group_gradient);
        }

        let n = data.observations() as f64;
        let (var_alpha, var_y) = (sigma_alpha * sigma_alpha, (2.0 * b).exp());
        let fit = scale(q_y, squares);
        let u = 0.5 * (mu * mu + beta * beta) / LOCATION_PRIOR_VARIANCE + 0.5 * var_alpha - a
            + 0.5 * var_y
            + (n - 1.0) * b
            + prior_z
            + 0.5 * fit;
        grad_head[0] = mu / LOCATION_PRIOR_VARIANCE + sum_g;
        grad_head[1] = beta / LOCATION_PRIOR_VARIANCE + scale(q_y, minus_rx);
        grad_head[2] = var_alpha - 1.0 + scale(sigma_alpha, sum_zg);
        grad_head[3] = var_y + n - 1.0 - fit;
        if !u.is_finite() {
            // σ_α, σ_y or α = μ_α + σ_α z beyond f64: the true U exceeds f64
            // too; no NaN (∞ · 0 of an infinite residual) reaches the sampler.
            for v in gradient.iter_mut().filter(|v| v.is_nan()) {
                *v = 0.0;
            }
            return f64::INFINITY;
        }
        u
    }

    fn output_names(&self) -> Vec<String> {
        radon_output_names()
    }

    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        self.intercepts(x, &mut out[..GROUPS]);
        out[GROUPS..GROUPS + 2].copy_from_slice(&x[GROUPS..GROUPS + 2]);
        out[GROUPS + 2] = x[GROUPS + 2].exp();
        out[GROUPS + 3] = x[GROUPS + 3].exp();
    }

    /// Its own reference model: a reference run of this target and one of
    /// [`RadonCentered`] are the same run.
    fn reference_model(&self) -> Option<Box<dyn Model>> {
        Some(Box::new(self.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::testing::{gradient_error, random_point};

    /// (z, μ_α, β, a, b) with z uniform in ±`z_scale`.
    fn point(mu: f64, beta: f64, a: f64, b: f64, z_scale: f64, seed: u64) -> Vec<f64> {
        let mut x = random_point(GROUPS, z_scale, seed);
        x.extend([mu, beta, a, b]);
        x
    }

    /// ∇U against central differences (step 1e-6), relative error below 1e-6
    /// of max(1, ‖∇U‖∞) (the same budget as the centred model's test): in
    /// the bulk, with σ_α tiny and large, and at random points.
    #[test]
    fn gradient_matches_finite_differences() {
        let model = RadonNoncentered::new();
        let mut points = vec![
            point(1.4, -0.6, -1.2, -0.2, 1.5, 1),
            point(1.5, -0.7, -6.0, -0.25, 1.0, 2),
            point(0.5, 0.4, 1.5, 0.8, 2.0, 3),
            point(-2.0, 3.0, 0.0, -1.0, 1.0, 4),
        ];
        for seed in 0..3 {
            points.push(random_point(model.dimension(), 2.0, 40 + seed));
        }
        for x in &points {
            let err = gradient_error(&model, x, 1e-6);
            assert!(err < 1e-6, "a {}, b {}: {err:e}", x[22], x[23]);
        }
    }

    /// At α = α(z): U_centred − U_noncentred = J a (log|∂α/∂z|) to 1e-12
    /// relative, in the bulk, in the neck (a = −5) and with σ_α large; a
    /// missing or wrong Jacobian misses by |J a| ≥ 6 at these points. The
    /// reported quantities agree.
    #[test]
    fn same_posterior_as_the_centred_model() {
        let twin = RadonNoncentered::new();
        let centred = twin.centred();
        let mut g = [0.0; GROUPS + 4];
        for (mu, beta, a, b, seed) in [
            (1.4, -0.6, -1.2, -0.2, 21),
            (1.6, -0.8, -5.0, -0.3, 22),
            (0.3, 0.5, 1.2, 0.4, 23),
            (-1.0, 2.0, -0.3, -1.5, 24),
        ] {
            let x = point(mu, beta, a, b, 1.5, seed);
            let mut centred_x = x.clone();
            twin.intercepts(&x, &mut centred_x[..GROUPS]);
            let u_twin = twin.potential_and_gradient(&x, &mut g);
            let u_centred = centred.potential_and_gradient(&centred_x, &mut g);
            let gap = u_centred - (u_twin + GROUPS as f64 * a);
            assert!(
                gap.abs() < 1e-12 * u_centred.abs().max(1.0),
                "a {a}: U_c {u_centred}, U_nc + J a {}",
                u_twin + GROUPS as f64 * a
            );
            let (mut out_twin, mut out_centred) = ([0.0; GROUPS + 4], [0.0; GROUPS + 4]);
            twin.constrain(&x, &mut out_twin);
            centred.constrain(&centred_x, &mut out_centred);
            assert_eq!(out_twin, out_centred);
        }
        assert_eq!(twin.output_names(), centred.output_names());
        let reference = centred.reference_model().unwrap();
        assert_eq!(reference.name(), "radon-noncentered");
    }

    /// U is finite or +∞ (never NaN or −∞) and ∇U has no NaN with σ_α, σ_y
    /// far beyond f64's range either way.
    #[test]
    fn extreme_scales_are_never_nan() {
        let model = RadonNoncentered::new();
        let mut g = [0.0; GROUPS + 4];
        for (a, b, z) in [
            (-800.0, 0.0, 1.0),
            (800.0, 0.0, 1.0),
            (800.0, 0.0, 0.0),
            (0.0, -800.0, 1.0),
            (0.0, 800.0, 1.0),
            (400.0, -400.0, 1.0),
        ] {
            let mut x = [z; GROUPS + 4];
            (x[GROUPS + 2], x[GROUPS + 3]) = (a, b);
            let u = model.potential_and_gradient(&x, &mut g);
            assert!(!u.is_nan() && u > f64::NEG_INFINITY, "{a} {b} {z}: {u}");
            assert!(!g.iter().any(|v| v.is_nan()), "{a} {b} {z}: {g:?}");
        }
    }
}
