//! `stochastic-volatility-noncentered`: the posterior of
//! [`StochasticVolatility`] written non-centred, the coordinates `qnmc
//! check` draws that target's reference in
//! ([`crate::run::reference_run`]).
//!
//! The same model, priors and returns; the latent path is a deterministic
//! function of standard normals z₁, …, z_T:
//!
//! ```text
//! w₁ = z₁/√(1 − φ²),  wₜ = φ wₜ₋₁ + zₜ  (t = 2, …, T),  hₜ = μ + σ wₜ,
//! zₜ ~ N(0, 1),  yₜ ~ N(0, exp(hₜ)),
//! μ ~ N(0, 10²),  φ ~ Uniform(−1, 1),  σ ~ half-Cauchy(0, 5),
//! ```
//!
//! which gives h the centred model's AR(1) law. Unconstrained coordinates
//! x = (μ, a, s, z₁, …, z_T), φ = tanh a, σ = eˢ, L = log(1 − φ²) = log k as
//! in the centred model. With gₜ = (1 − yₜ² e^{−hₜ})/2 (= ∂U/∂hₜ of the
//! observations), the backward sums rₜ = gₜ + φ rₜ₊₁ (r_T = g_T) and the
//! forward derivatives dₜ = k ∂wₜ/∂φ, d₁ = φ w₁, dₜ = φ dₜ₋₁ + k wₜ₋₁:
//!
//! ```text
//! U = μ²/200 − L + log(1 + σ²/25) − s + Σₜ zₜ²/2 + Σₜ (hₜ + yₜ² e^{−hₜ})/2,
//! ∂U/∂μ  = μ/100 + Σₜ gₜ,
//! ∂U/∂a  = 2φ + σ Σₜ gₜ dₜ,
//! ∂U/∂s  = 2σ²/(25 + σ²) − 1 + σ Σₜ gₜ wₜ,
//! ∂U/∂z₁ = z₁ + σ r₁/√k,   ∂U/∂zₜ = zₜ + σ rₜ  (t ≥ 2).
//! ```
//!
//! (−L and −s are the Jacobians of φ and σ; h is not a coordinate, so its
//! AR(1) density is replaced by the standard normal density of z.) U minus
//! the same constant as the centred model's is −log π − log|J| on these
//! coordinates. The map z ↦ h (μ, φ, σ fixed) is triangular with diagonal
//! σ/√k, σ, …, σ, so log|∂h/∂z| = T s − L/2 and, at h = h(z),
//!
//! ```text
//! U_centred(μ, a, s, h) = U_noncentred(μ, a, s, z) + T s − L/2
//! ```
//!
//! exactly (tested): one posterior, two parametrisations. Here the prior of
//! the latent coordinates does not depend on σ, so there is no funnel
//! between σ and the path; what is left is a posterior in (φ, σ) that 100
//! returns identify weakly.
//!
//! Reported quantities are the centred model's, on the constrained scale:
//! `mu`, `phi`, `sigma`, `h[1]`…`h[T]` (h computed from z). U is finite for
//! moderate inputs; where the path overflows (1/√k or σ wₜ beyond f64, so
//! that the true U does too) it is +∞, never NaN or −∞, and the gradient
//! holds no NaN.

use super::{
    MU_PRIOR_VARIANCE, SIGMA_SCALE, StochasticVolatility, log_one_minus_tanh_squared, scale,
};
use crate::model::Model;
use crate::targets::eight_schools_centered::{logistic, softplus};

/// The non-centred stochastic-volatility model; see the module
/// documentation.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::{StochasticVolatility, StochasticVolatilityNoncentered};
/// let centred = StochasticVolatility::new();
/// let twin = StochasticVolatilityNoncentered::new();
/// assert_eq!(twin.name(), "stochastic-volatility-noncentered");
/// assert_eq!(twin.dimension(), 103);
/// assert_eq!(twin.output_names(), centred.output_names());
/// // At the origin (φ = 0, σ = 1, z = 0) the path is h = μ = 0.
/// let mut out = vec![1.0; 103];
/// twin.constrain(&vec![0.0; 103], &mut out);
/// assert!(out[3..].iter().all(|h| *h == 0.0));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct StochasticVolatilityNoncentered {
    centred: StochasticVolatility,
}

impl StochasticVolatilityNoncentered {
    /// The twin of [`StochasticVolatility::new`] (the built-in returns).
    pub fn new() -> Self {
        Self::of(StochasticVolatility::new())
    }

    /// The twin of `centred`: its returns, its reported quantities.
    pub fn of(centred: StochasticVolatility) -> Self {
        StochasticVolatilityNoncentered { centred }
    }

    /// The centred model of the same posterior.
    pub fn centred(&self) -> &StochasticVolatility {
        &self.centred
    }

    /// The latent path h at unconstrained `x` = (μ, a, s, z), written into
    /// `h` (length T).
    pub fn path(&self, x: &[f64], h: &mut [f64]) {
        let (mu, a, s) = (x[0], x[1], x[2]);
        let phi = a.tanh();
        let inverse_root_k = (-0.5 * log_one_minus_tanh_squared(a)).exp();
        let sigma = s.exp();
        let mut w = 0.0;
        for (t, (ht, &zt)) in h.iter_mut().zip(&x[3..]).enumerate() {
            w = if t == 0 {
                zt * inverse_root_k
            } else {
                phi * w + zt
            };
            *ht = mu + scale(sigma, w);
        }
    }

    /// The z of path `h` at (μ, a, s): the inverse of [`path`](Self::path),
    /// z₁ = √k (h₁ − μ)/σ, zₜ = (hₜ − μ − φ(hₜ₋₁ − μ))/σ.
    pub fn innovations(&self, mu: f64, a: f64, s: f64, h: &[f64], z: &mut [f64]) {
        let phi = a.tanh();
        let root_k = (0.5 * log_one_minus_tanh_squared(a)).exp();
        let inverse_sigma = (-s).exp();
        for t in 0..h.len() {
            let c = h[t] - mu;
            z[t] = inverse_sigma
                * if t == 0 {
                    root_k * c
                } else {
                    c - phi * (h[t - 1] - mu)
                };
        }
    }
}

impl Default for StochasticVolatilityNoncentered {
    fn default() -> Self {
        Self::new()
    }
}

impl Model for StochasticVolatilityNoncentered {
    fn name(&self) -> String {
        "stochastic-volatility-noncentered".into()
    }

    fn dimension(&self) -> usize {
        self.centred.dimension()
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        let n = self.centred.returns().len();
        let (mu, a, s) = (x[0], x[1], x[2]);
        let z = &x[3..3 + n];
        let phi = a.tanh();
        let log_k = log_one_minus_tanh_squared(a);
        let k = log_k.exp(); // 1 − φ²
        let inverse_root_k = (-0.5 * log_k).exp();
        let sigma = s.exp();
        let (grad_head, grad_z) = gradient.split_at_mut(3);
        let grad_z = &mut grad_z[..n];

        // Forward: w, h, the observations' gₜ (kept in grad_z), and the sums
        // Σ g, Σ g w, Σ g d.
        let (mut w, mut d) = (0.0, 0.0);
        let (mut sum_g, mut sum_gw, mut sum_gd) = (0.0, 0.0, 0.0);
        let (mut u_obs, mut u_z) = (0.0, 0.0);
        for (t, ((g, &zt), &log_y2)) in grad_z
            .iter_mut()
            .zip(z)
            .zip(self.centred.log_squared())
            .enumerate()
        {
            if t == 0 {
                w = zt * inverse_root_k;
                d = phi * w;
            } else {
                d = phi * d + k * w;
                w = phi * w + zt;
            }
            let ht = mu + scale(sigma, w);
            let e = (log_y2 - ht).exp(); // yₜ² e^{−hₜ}
            u_obs += 0.5 * (ht + e);
            u_z += 0.5 * zt * zt;
            *g = 0.5 * (1.0 - e);
            sum_g += *g;
            sum_gw += *g * w;
            sum_gd += *g * d;
        }
        // Backward: rₜ = gₜ + φ rₜ₊₁, then ∂U/∂zₜ.
        let mut r = 0.0;
        for t in (0..n).rev() {
            r = grad_z[t] + phi * r;
            let factor = if t == 0 { inverse_root_k } else { 1.0 };
            grad_z[t] = z[t] + scale(sigma, scale(factor, r));
        }

        let zs = 2.0 * (s - SIGMA_SCALE.ln()); // σ²/25 = e^zs
        let u = 0.5 * mu * mu / MU_PRIOR_VARIANCE - log_k + softplus(zs) - s + u_z + u_obs;
        grad_head[0] = mu / MU_PRIOR_VARIANCE + sum_g;
        grad_head[1] = 2.0 * phi + scale(sigma, sum_gd);
        grad_head[2] = 2.0 * logistic(zs) - 1.0 + scale(sigma, sum_gw);
        if u.is_finite() {
            u
        } else {
            // A path that overflows (1/√k or σ w beyond f64): the true U
            // exceeds f64 too; no NaN reaches the sampler.
            for v in gradient.iter_mut().filter(|v| v.is_nan()) {
                *v = 0.0;
            }
            f64::INFINITY
        }
    }

    fn output_names(&self) -> Vec<String> {
        self.centred.output_names()
    }

    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        out[0] = x[0];
        out[1] = x[1].tanh();
        out[2] = x[2].exp();
        self.path(x, &mut out[3..]);
    }

    /// Its own reference model: a reference run of this target and one of
    /// [`StochasticVolatility`] are the same run.
    fn reference_model(&self) -> Option<Box<dyn Model>> {
        Some(Box::new(self.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::testing::{gradient_error, random_point};

    /// (μ, a, s) and z with coordinates uniform in ±`z_scale`.
    fn point(mu: f64, a: f64, s: f64, z_scale: f64, seed: u64) -> Vec<f64> {
        let mut x = vec![mu, a, s];
        x.extend(random_point(super::super::LENGTH, z_scale, seed));
        x
    }

    /// ∇U against central differences (step 1e-6), relative error below 1e-6
    /// of max(1, ‖∇U‖∞): in the bulk, with σ small and large, φ near ±1,
    /// and at random points; and for T = 1, 2 (the ends of the recursions).
    #[test]
    fn gradient_matches_finite_differences() {
        let model = StochasticVolatilityNoncentered::new();
        let mut points = vec![
            point(-1.0, 1.83, -1.4, 1.5, 1),
            point(-0.5, 0.2, -5.0, 1.0, 2),
            point(-1.2, 2.5, -2.0, 0.5, 3),
            point(0.5, -2.0, 0.5, 1.0, 4),
            point(-1.0, -0.3, 1.2, 2.0, 5),
        ];
        for seed in 0..3 {
            points.push(random_point(model.dimension(), 2.0, 40 + seed));
        }
        for x in &points {
            let err = gradient_error(&model, x, 1e-6);
            assert!(err < 1e-6, "mu {}, a {}, s {}: {err:e}", x[0], x[1], x[2]);
        }
        for y in [vec![0.3, -1.1], vec![0.7]] {
            let short =
                StochasticVolatilityNoncentered::of(StochasticVolatility::from_returns(y).unwrap());
            let x = random_point(short.dimension(), 1.5, 7);
            let err = gradient_error(&short, &x, 1e-6);
            assert!(err < 1e-6, "T = {}: {err:e}", short.dimension() - 3);
        }
    }

    /// At h = path(z): U_centred(μ, a, s, h) − U_noncentred(μ, a, s, z) =
    /// T s − L/2 (log|∂h/∂z|), to rounding, at points in the bulk, in the
    /// neck (σ = e⁻⁵), with φ near 1 and far out; and `innovations` inverts
    /// `path`. A wrong Jacobian (T s without −L/2, or (T − 1) s) misses by
    /// |L|/2 ≥ 0.02 or by |s| ≥ 0.3 at these points.
    #[test]
    fn same_posterior_as_the_centred_model() {
        let twin = StochasticVolatilityNoncentered::new();
        let centred = twin.centred();
        let n = centred.returns().len();
        let d = twin.dimension();
        let (mut g, mut h, mut z) = (vec![0.0; d], vec![0.0; n], vec![0.0; n]);
        for (mu, a, s, spread, seed) in [
            (-1.0, 0.3, -1.4, 1.0, 21),
            (-0.9, 1.8, -0.3, 1.2, 22),
            (0.4, -0.6, -5.0, 2.0, 23),
            (-1.5, 3.0, 0.8, 0.7, 24),
            (2.0, -1.2, 1.5, 1.5, 25),
        ] {
            let x = point(mu, a, s, spread, seed);
            twin.path(&x, &mut h);
            let mut centred_x = vec![mu, a, s];
            centred_x.extend_from_slice(&h);
            let u_twin = twin.potential_and_gradient(&x, &mut g);
            let u_centred = centred.potential_and_gradient(&centred_x, &mut g);
            let log_k = log_one_minus_tanh_squared(a);
            let log_jacobian = n as f64 * s - 0.5 * log_k;
            let gap = u_centred - (u_twin + log_jacobian);
            assert!(
                gap.abs() < 1e-10 * u_centred.abs().max(1.0),
                "a {a}, s {s}: U_c {u_centred}, U_nc + log|J| {}",
                u_twin + log_jacobian
            );
            twin.innovations(mu, a, s, &h, &mut z);
            for (got, want) in z.iter().zip(&x[3..]) {
                assert!(
                    (got - want).abs() < 1e-9 * (1.0 + want.abs()),
                    "{got} {want}"
                );
            }
            // The reported quantities: the centred model's at the matched h.
            let mut out_twin = vec![0.0; d];
            let mut out_centred = vec![0.0; d];
            twin.constrain(&x, &mut out_twin);
            centred.constrain(&centred_x, &mut out_centred);
            assert_eq!(out_twin, out_centred);
        }
        assert_eq!(twin.output_names(), centred.output_names());
    }

    /// U is finite or +∞ (never NaN or −∞) and ∇U has no NaN, with φ at ±1
    /// in f64, σ overflowing or 0, and far-out μ and z.
    #[test]
    fn extreme_inputs_are_never_nan() {
        let model = StochasticVolatilityNoncentered::new();
        let d = model.dimension();
        let mut g = vec![0.0; d];
        for (mu, a, s, z) in [
            (0.0, 40.0, 0.0, 0.0),
            (0.0, -800.0, 0.0, 1.0),
            (1e5, 20.0, 300.0, 50.0),
            (-1e3, 3.0, -300.0, -50.0),
            (0.0, 0.0, 700.0, 3.0),
            (0.0, 0.0, -800.0, 1.0),
        ] {
            let mut x = vec![z; d];
            (x[0], x[1], x[2]) = (mu, a, s);
            let u = model.potential_and_gradient(&x, &mut g);
            assert!(!u.is_nan(), "U({mu}, {a}, {s}, z = {z}) = {u}");
            assert!(u > -f64::INFINITY, "U({mu}, {a}, {s}, z = {z}) = {u}");
            assert!(!g.iter().any(|v| v.is_nan()), "{mu} {a} {s} {z}: {g:?}");
        }
    }
}
