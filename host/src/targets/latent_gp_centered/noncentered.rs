//! `latent-gp-noncentered`: the posterior of [`LatentGpCentered`] written
//! non-centred, the coordinates `qnmc check` draws that target's reference
//! in ([`crate::run::reference_run`]).
//!
//! The same model, priors and data; the latent function is a deterministic
//! function of standard normals: f = L z, z ~ N(0, I), with K(α, ρ) = L Lᵀ
//! (jitter included). Unconstrained coordinates x = (z₁, …, z_N, μ, a, b),
//! α = eᵃ, ρ = eᵇ. With λᵢ = e^{μ + fᵢ}, the likelihood's gradient
//! gᵢ = λᵢ − yᵢ (= ∂U/∂fᵢ of the Poisson part) and w = Lᵀ g:
//!
//! ```text
//! U = Σᵢ (λᵢ − yᵢ (μ + fᵢ)) + |z|²/2 + μ²/8 + α²/2 − a + (b − m)²/(2s²),
//! ∂U/∂z = z + w,
//! ∂U/∂μ = Σᵢ gᵢ + μ/4,
//! ∂U/∂θ = gᵀ (∂L/∂θ) z + (α² − 1 for a, (b − m)/s² for b),
//! ```
//!
//! with the derivative of the Cholesky factor ∂L/∂θ = L Φ(L⁻¹ (∂K/∂θ) L⁻ᵀ),
//! Φ taking the lower triangle and half the diagonal, so that
//! gᵀ (∂L/∂θ) z = Σ_{i>k} wᵢ A_ik z_k + ½ Σᵢ wᵢ A_ii zᵢ, A = L⁻¹ (∂K/∂θ) L⁻ᵀ.
//!
//! The map z ↦ f (μ, a, b fixed) has log|∂f/∂z| = log det L = Σᵢ log L_ii,
//! and at f = L z
//!
//! ```text
//! U_centred(f, μ, a, b) = U_noncentred(z, μ, a, b) + Σᵢ log L_ii
//! ```
//!
//! exactly (tested): one posterior, two parametrisations, so U minus the
//! centred model's constant is −log π − log|J| here too. The prior of z
//! depends neither on α nor on ρ: no funnel, and K's rough directions (prior
//! sd 10⁻³) are z's of sd 1 that the likelihood hardly sees. A point where
//! the factorisation fails, or where U or ∇U is not finite, gives U = +∞ as
//! in the centred model. Reported quantities are the centred model's:
//! `f[i]` computed from z, `mu`, `alpha`, `rho`.

use super::{
    Cholesky, LatentGpCentered, POINTS, covariance, hyperprior, latent_gp_output_names, rejected,
};
use crate::model::Model;

/// The non-centred latent GP; see the module documentation.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::{LatentGpCentered, LatentGpNoncentered};
/// let twin = LatentGpNoncentered::new();
/// assert_eq!(twin.name(), "latent-gp-noncentered");
/// assert_eq!(twin.output_names(), LatentGpCentered::new().output_names());
/// // z = 0: f = 0 whatever α and ρ.
/// let mut x = [0.0; 23];
/// (x[20], x[21], x[22]) = (0.5, 0.3, 0.7);
/// let mut out = [1.0; 23];
/// twin.constrain(&x, &mut out);
/// assert!(out[..20].iter().all(|f| *f == 0.0));
/// assert_eq!(out[20], 0.5);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LatentGpNoncentered {
    centred: LatentGpCentered,
}

impl LatentGpNoncentered {
    /// The twin of [`LatentGpCentered::new`] (the built-in data).
    pub fn new() -> Self {
        Self::of(LatentGpCentered::new())
    }

    /// The twin of `centred`: its data, its reported quantities.
    pub fn of(centred: LatentGpCentered) -> Self {
        LatentGpNoncentered { centred }
    }

    /// The centred model of the same posterior.
    pub fn centred(&self) -> &LatentGpCentered {
        &self.centred
    }

    /// The latent values f = L(α, ρ) z at unconstrained `x`, into `f`; NaN
    /// where K is not numerically positive definite.
    pub fn latent(&self, x: &[f64], f: &mut [f64]) {
        match self.centred.covariance_factor(x[POINTS + 1], x[POINTS + 2]) {
            Ok(chol) => chol.lower_times(&x[..POINTS], f),
            Err(_) => f.fill(f64::NAN),
        }
    }
}

impl Default for LatentGpNoncentered {
    fn default() -> Self {
        Self::new()
    }
}

/// gᵀ (∂L/∂θ) z with w = Lᵀ g, given L⁻¹ and ∂K/∂θ (see the module
/// documentation).
fn factor_derivative_term(inverse_factor: &[f64], d_k: &[f64], w: &[f64], z: &[f64]) -> f64 {
    let n = w.len();
    // B = L⁻¹ ∂K (L⁻¹ is lower triangular).
    let mut product = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            product[i * n + j] = (0..=i)
                .map(|m| inverse_factor[i * n + m] * d_k[m * n + j])
                .sum();
        }
    }
    // A_ik = Σ_{m ≤ k} B_im (L⁻¹)_km, for k ≤ i.
    let mut total = 0.0;
    for i in 0..n {
        for k in 0..=i {
            let a_ik: f64 = (0..=k)
                .map(|m| product[i * n + m] * inverse_factor[k * n + m])
                .sum();
            let weight = if k == i { 0.5 } else { 1.0 };
            total += weight * w[i] * a_ik * z[k];
        }
    }
    total
}

impl Model for LatentGpNoncentered {
    fn name(&self) -> String {
        "latent-gp-noncentered".into()
    }

    fn dimension(&self) -> usize {
        POINTS + 3
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        if x.iter().any(|v| !v.is_finite()) {
            gradient.fill(0.0);
            return rejected(gradient);
        }
        let (z, head) = x.split_at(POINTS);
        let (mu, a, b) = (head[0], head[1], head[2]);
        let cov = covariance(self.centred.inputs(), a, b);
        let Ok(chol) = Cholesky::new(&cov.k, POINTS) else {
            gradient.fill(0.0);
            return rejected(gradient);
        };
        let mut f = [0.0; POINTS];
        chol.lower_times(z, &mut f);
        let mut residual = [0.0; POINTS];
        let fit = self.centred.likelihood(mu, &f, &mut residual);
        let (grad_z, grad_head) = gradient.split_at_mut(POINTS);
        chol.upper_times(&residual, grad_z); // w = Lᵀ g
        let inverse_factor = chol.lower_inverse();
        let term_a = factor_derivative_term(&inverse_factor, &cov.d_a, grad_z, z);
        let term_b = factor_derivative_term(&inverse_factor, &cov.d_b, grad_z, z);
        let mut prior_z = 0.0;
        for (g, &zi) in grad_z.iter_mut().zip(z) {
            prior_z += 0.5 * zi * zi;
            *g += zi;
        }
        let (prior, prior_gradient) = hyperprior(mu, a, b);
        let u = fit + prior_z + prior;
        grad_head[0] = residual.iter().sum::<f64>() + prior_gradient[0];
        grad_head[1] = term_a + prior_gradient[1];
        grad_head[2] = term_b + prior_gradient[2];
        if !u.is_finite() || gradient.iter().any(|g| !g.is_finite()) {
            return rejected(gradient);
        }
        u
    }

    fn output_names(&self) -> Vec<String> {
        latent_gp_output_names()
    }

    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        self.latent(x, &mut out[..POINTS]);
        out[POINTS] = x[POINTS];
        out[POINTS + 1] = x[POINTS + 1].exp();
        out[POINTS + 2] = x[POINTS + 2].exp();
    }

    /// Its own reference model: a reference run of this target and one of
    /// [`LatentGpCentered`] are the same run.
    fn reference_model(&self) -> Option<Box<dyn Model>> {
        Some(Box::new(self.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::testing::{gradient_error, random_point};

    /// (z, μ, a, b) with z uniform in ±`z_scale`.
    fn point(mu: f64, a: f64, b: f64, z_scale: f64, seed: u64) -> Vec<f64> {
        let mut x = random_point(POINTS, z_scale, seed);
        x.extend([mu, a, b]);
        x
    }

    /// ∇U against central differences (step 1e-4, for the reason the
    /// centred model's test gives), relative error below 1e-5 of
    /// max(1, ‖∇U‖∞) (the largest measured is 1.8e-6, at a random point with
    /// α = 4.2): in the bulk, with α tiny and large, ρ short and long,
    /// and at random points.
    #[test]
    fn gradient_matches_finite_differences() {
        let model = LatentGpNoncentered::new();
        let mut points = vec![
            point(1.0, 0.0, 2f64.ln(), 1.5, 1),
            point(0.8, -4.0, 0.5, 1.0, 2),
            point(1.2, -0.5, 0.5f64.ln(), 1.5, 3),
            point(0.5, 0.3, 6f64.ln(), 2.0, 4),
            point(-1.0, 1.2, 0.0, 1.0, 5),
        ];
        for seed in 0..3 {
            points.push(random_point(model.dimension(), 1.5, 40 + seed));
        }
        for x in &points {
            let err = gradient_error(&model, x, 1e-4);
            assert!(
                err < 1e-5,
                "a {}, b {}: {err:e}",
                x[POINTS + 1],
                x[POINTS + 2]
            );
        }
    }

    /// At f = L z: U_centred − U_noncentred = Σᵢ log L_ii = ½ log det K (the
    /// log-Jacobian of z ↦ f) to 1e-12 relative, in the bulk, in the neck
    /// (a = −4), with ρ short and long; a missing or wrong Jacobian misses
    /// by |Σ log L_ii| = 2.7 (ρ = 0.5) to 115 (a = −4) at these points. The
    /// reported quantities agree.
    #[test]
    fn same_posterior_as_the_centred_model() {
        let twin = LatentGpNoncentered::new();
        let centred = twin.centred();
        let mut g = [0.0; POINTS + 3];
        for (mu, a, b, seed) in [
            (1.0, 0.0, 2f64.ln(), 21),
            (0.9, -4.0, 0.6, 22),
            (1.1, 0.4, 0.5f64.ln(), 23),
            (0.3, -0.7, 5f64.ln(), 24),
        ] {
            let x = point(mu, a, b, 1.5, seed);
            let mut centred_x = x.clone();
            twin.latent(&x, &mut centred_x[..POINTS]);
            let u_twin = twin.potential_and_gradient(&x, &mut g);
            let u_centred = centred.potential_and_gradient(&centred_x, &mut g);
            let log_jacobian = 0.5 * centred.covariance_factor(a, b).unwrap().log_determinant();
            assert!(log_jacobian.abs() > 2.5, "{log_jacobian}");
            let gap = u_centred - (u_twin + log_jacobian);
            assert!(
                gap.abs() < 1e-12 * u_centred.abs().max(1.0),
                "a {a} b {b}: U_c {u_centred}, U_nc + log det L {}",
                u_twin + log_jacobian
            );
            let (mut out_twin, mut out_centred) = ([0.0; POINTS + 3], [0.0; POINTS + 3]);
            twin.constrain(&x, &mut out_twin);
            centred.constrain(&centred_x, &mut out_centred);
            assert_eq!(out_twin, out_centred);
        }
        assert_eq!(twin.output_names(), centred.output_names());
        let reference = centred.reference_model().unwrap();
        assert_eq!(reference.name(), "latent-gp-noncentered");
    }

    /// U is finite or +∞ (never NaN or −∞) and ∇U finite with α beyond
    /// f64's range (the factorisation fails: U = +∞), α → 0, ρ → 0 and ∞,
    /// and NaN coordinates; `constrain` gives NaN latent values where K
    /// cannot be factorised, never a panic.
    #[test]
    fn extreme_inputs_are_never_nan() {
        let model = LatentGpNoncentered::new();
        let mut g = [0.0; POINTS + 3];
        for (a, b, z, expect_infinite) in [
            (400.0, 0.0, 1.0, true),
            (-800.0, 0.0, 1.0, false),
            (0.0, -800.0, 1.0, false),
            (0.0, 800.0, 1.0, false),
            (150.0, 0.0, 0.0, false),
            (0.0, 0.0, f64::NAN, true),
        ] {
            let mut x = [z; POINTS + 3];
            (x[POINTS], x[POINTS + 1], x[POINTS + 2]) = (1.0, a, b);
            let u = model.potential_and_gradient(&x, &mut g);
            assert!(!u.is_nan() && u > f64::NEG_INFINITY, "{a} {b} {z}: {u}");
            assert_eq!(u == f64::INFINITY, expect_infinite, "{a} {b} {z}: {u}");
            assert!(g.iter().all(|v| v.is_finite()), "{a} {b} {z}: {g:?}");
        }
        let mut x = [1.0; POINTS + 3];
        x[POINTS + 1] = 400.0;
        let mut out = [0.0; POINTS + 3];
        model.constrain(&x, &mut out);
        assert!(out[..POINTS].iter().all(|f| f.is_nan()));
    }
}
