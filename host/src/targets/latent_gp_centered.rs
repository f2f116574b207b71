//! `latent-gp-centered`: a latent Gaussian process with Poisson counts,
//! centred (the latent function values are sampled), on simulated counts at
//! N = 20 evenly spaced inputs.
//!
//! Model, inputs tᵢ = 10 (i − 1)/19, i = 1, …, N (evenly spaced on
//! [0, 10], spacing 0.53):
//!
//! ```text
//! yᵢ ~ Poisson(exp(μ + fᵢ)),
//! f ~ MVN(0, K),  K_ik = α² exp(−(tᵢ − t_k)²/(2ρ²)) + δ_ik · 10⁻⁶  (centred),
//! μ ~ N(0, 2²),  α ~ half-N(0, 1),  ρ ~ lognormal(log 2, 0.5²).
//! ```
//!
//! The jitter 10⁻⁶ ([`JITTER`]) is numerical, not a nugget: with ρ ≈ 2 the
//! squared-exponential kernel on this grid has 8 of its 20 eigenvalues
//! below 10⁻⁶ α² (the smallest ~10⁻¹⁶), so without it K is singular in
//! floating point; with it the smallest eigenvalue of K is ≥ 10⁻⁶ and the
//! Cholesky factorisation is stable (condition number ≈ 10⁷ at α = 1,
//! ρ = 2, the largest eigenvalue being ≈ 9). It is also
//! what makes the centred form hard: f has prior sd ≈ 10⁻³ along those
//! eight rough directions and sd up to ≈ 3 α along the smooth ones, and the
//! directions turn with ρ.
//!
//! Priors: μ's N(0, 2²) is weakly informative on the log scale of counts
//! (rates e^{±4}); α's half-N(0, 1) keeps the latent function's sd on the
//! order of 1 on that scale, and as α → 0 the fᵢ are pinned to 0 with sd α:
//! the funnel in (f, log α). ρ's lognormal(log 2, 0.5²) keeps ρ away from 0
//! and ∞, where 20 counts cannot tell length scales apart: below the grid
//! spacing (ρ < 0.53: prior probability 0.4 %) f is white noise at the
//! inputs, above the span (ρ > 10: 0.07 %) a constant; in between it lets
//! the data decide. On b = log ρ it is simply N(log 2, 0.5²) (the
//! lognormal's 1/ρ cancels the Jacobian ρ).
//!
//! Unconstrained coordinates x = (f₁, …, f_N, μ, a, b), D = N + 3 = 23,
//! α = eᵃ (log-Jacobian a), ρ = eᵇ (log-Jacobian b). With K = L Lᵀ (the
//! Cholesky factor of `latent_gp_centered/cholesky.rs`), v = K⁻¹ f,
//! λᵢ = e^{μ + fᵢ}, m = log 2, s = 0.5:
//!
//! ```text
//! U = Σᵢ (λᵢ − yᵢ (μ + fᵢ)) + fᵀK⁻¹f/2 + Σᵢ log L_ii
//!     + μ²/8 + α²/2 − a + (b − m)²/(2s²),
//! ∂U/∂fᵢ = λᵢ − yᵢ + vᵢ,
//! ∂U/∂μ  = Σᵢ (λᵢ − yᵢ) + μ/4,
//! ∂U/∂θ  = tr(K⁻¹ ∂K/∂θ)/2 − vᵀ (∂K/∂θ) v/2 + (prior and Jacobian)  (θ = a, b),
//! ∂K_ik/∂a = 2α² k_ik,  ∂K_ik/∂b = α² k_ik (tᵢ − t_k)²/ρ²,
//! prior and Jacobian: α² − 1 for a, (b − m)/s² for b,
//! ```
//!
//! (k_ik = exp(−(tᵢ − t_k)²/(2ρ²)); the jitter does not depend on θ), which
//! is −log π − log|J| minus the constant
//! C = (N + 2)/2 · log 2π + ½ log(π/2) + Σᵢ log yᵢ! (the MVN, μ's and
//! log ρ's normals, the half-normal, the Poisson; 41.6310 on the built-in
//! counts). A point where K is not numerically positive definite (the
//! Cholesky factorisation fails: α beyond f64's range) or where U or ∇U is
//! not finite comes back as U = +∞ with a finite gradient (zeros where it
//! is undefined), which the samplers reject; never NaN, never a panic.
//!
//! # The data
//!
//! Simulated once with μ = 1, α = 1, ρ = 2 ([`TRUE_MU`], [`TRUE_ALPHA`],
//! [`TRUE_RHO`]) by the generator of `simulation_rng.rs` seeded with
//! [`SEED`]: first N standard normals ε₁, …, ε_N and the latent function
//! f = L ε with L the Cholesky factor of K(α = 1, ρ = 2) (jitter included;
//! kernel entries exp(−(d·d)/(2ρ·ρ)) with d = tᵢ − t_k, the factorisation
//! in the order `cholesky.rs` documents, (L ε)ᵢ summed over k = 1, …, i in
//! turn), then count by count, i = 1, …, N, yᵢ ~ Poisson(λᵢ), λᵢ = e^{1 + fᵢ},
//! by Knuth's product of uniforms: the smallest k with
//! u₁ u₂ ⋯ u_{k+1} ≤ e^{−λᵢ}. The draw of f is low on the left half
//! (Σᵢ fᵢ = −14.3), so the counts are small: 0, 1, 0, 2, 0, 1, 2, 2, 1, 1,
//! 0, 0, 0, 0, 1, 5, 4, 5, 4, 4 (Σ = 33, seven zeros; the test
//! `simulated_data_are_the_python_harness_data` holds them). Reported
//! quantities on the constrained scale: `f[1]`…`f[20]`, `mu`, `alpha`,
//! `rho`. No exact posterior is known; `qnmc check` draws its reference on
//! the non-centred twin [`LatentGpNoncentered`].

use super::simulation_rng::SplitMix64;
use super::stochastic_volatility::scale;
use crate::model::Model;

mod cholesky;
mod noncentered;
use cholesky::{Cholesky, NotPositiveDefinite};
pub use noncentered::LatentGpNoncentered;

/// Number of inputs N.
pub const POINTS: usize = 20;
/// The inputs run from 0 to this value, evenly spaced.
pub const SPAN: f64 = 10.0;
/// Added to K's diagonal so that it stays numerically positive definite.
pub const JITTER: f64 = 1e-6;
/// Seed of the generator that simulates the data.
pub const SEED: u64 = 0x5EED_0069_0001;
/// μ of the simulation.
pub const TRUE_MU: f64 = 1.0;
/// α of the simulation.
pub const TRUE_ALPHA: f64 = 1.0;
/// ρ of the simulation.
pub const TRUE_RHO: f64 = 2.0;

/// Prior sd of μ.
const MU_PRIOR_SD: f64 = 2.0;
/// Prior sd of log ρ (its mean is log 2).
const LOG_RHO_PRIOR_SD: f64 = 0.5;

/// The inputs tᵢ = SPAN · i / (N − 1), i = 0, …, N − 1.
fn inputs() -> Vec<f64> {
    (0..POINTS)
        .map(|i| SPAN * i as f64 / (POINTS - 1) as f64)
        .collect()
}

/// K(α, ρ) and its derivatives in a = log α and b = log ρ, row-major.
struct Covariance {
    k: Vec<f64>,
    d_a: Vec<f64>,
    d_b: Vec<f64>,
}

/// K and ∂K/∂a, ∂K/∂b at inputs `t`, a = log α, b = log ρ. The diagonal is
/// α² + jitter exactly; off it, with r = (tᵢ − t_k)² · e^{−2b}/2,
/// k = e^{−r} and ∂k/∂b = 2 r k, kept 0 where k underflows (ρ → 0).
fn covariance(t: &[f64], a: f64, b: f64) -> Covariance {
    let n = t.len();
    let alpha2 = (2.0 * a).exp();
    let half_precision = 0.5 * (-2.0 * b).exp(); // 1/(2ρ²)
    let mut cov = Covariance {
        k: vec![0.0; n * n],
        d_a: vec![0.0; n * n],
        d_b: vec![0.0; n * n],
    };
    for i in 0..n {
        cov.k[i * n + i] = alpha2 + JITTER;
        cov.d_a[i * n + i] = 2.0 * alpha2;
        for j in 0..i {
            let d = t[i] - t[j];
            let r = d * d * half_precision;
            let kernel = (-r).exp();
            let value = scale(alpha2, kernel);
            let (d_a, d_b) = (2.0 * value, scale(2.0 * r, value));
            for (m, v) in [
                (&mut cov.k, value),
                (&mut cov.d_a, d_a),
                (&mut cov.d_b, d_b),
            ] {
                m[i * n + j] = v;
                m[j * n + i] = v;
            }
        }
    }
    cov
}

/// tr(A B) = Σ_ik A_ik B_ik for symmetric A, B.
fn trace_of_product(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// vᵀ M v.
fn quadratic_form(m: &[f64], v: &[f64]) -> f64 {
    let n = v.len();
    let mut s = 0.0;
    for i in 0..n {
        let row: f64 = (0..n).map(|k| m[i * n + k] * v[k]).sum();
        s += v[i] * row;
    }
    s
}

/// U = +∞ for a rejected point: a finite gradient (0 where it is NaN or
/// was never computed) and +∞.
fn rejected(gradient: &mut [f64]) -> f64 {
    for g in gradient.iter_mut().filter(|g| !g.is_finite()) {
        *g = 0.0;
    }
    f64::INFINITY
}

/// The data of the latent GP.
#[derive(Debug, Clone, PartialEq)]
struct Observations {
    /// The inputs tᵢ.
    inputs: Vec<f64>,
    /// The counts yᵢ.
    counts: Vec<f64>,
    /// The latent function values fᵢ the counts were simulated with.
    true_latent: Vec<f64>,
}

/// Simulates the data as described in the module documentation.
fn simulate() -> Observations {
    let mut rng = SplitMix64::new(SEED);
    let t = inputs();
    let eps: Vec<f64> = (0..POINTS).map(|_| rng.normal()).collect();
    // K(α = 1, ρ = 2) written out as the documentation says, so that Python
    // repeats every operation.
    let mut k = vec![0.0; POINTS * POINTS];
    for i in 0..POINTS {
        for j in 0..POINTS {
            let d = t[i] - t[j];
            let kernel = (-(d * d) / (2.0 * TRUE_RHO * TRUE_RHO)).exp();
            k[i * POINTS + j] =
                TRUE_ALPHA * TRUE_ALPHA * kernel + if i == j { JITTER } else { 0.0 };
        }
    }
    let chol = Cholesky::new(&k, POINTS).expect("K(1, 2) is positive definite");
    let mut true_latent = vec![0.0; POINTS];
    chol.lower_times(&eps, &mut true_latent);
    let counts = true_latent
        .iter()
        .map(|f| {
            let threshold = (-(TRUE_MU + f).exp()).exp();
            let (mut count, mut product) = (0.0, rng.open_uniform());
            while product > threshold {
                count += 1.0;
                product *= rng.open_uniform();
            }
            count
        })
        .collect();
    Observations {
        inputs: t,
        counts,
        true_latent,
    }
}

/// The centred latent GP; see the module documentation.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::LatentGpCentered;
/// let model = LatentGpCentered::new();
/// assert_eq!(model.name(), "latent-gp-centered");
/// assert_eq!(model.dimension(), 23);
/// assert_eq!(model.output_names()[19..], ["f[20]", "mu", "alpha", "rho"]);
/// let mut out = [0.0; 23];
/// model.constrain(&[0.0; 23], &mut out);
/// assert_eq!(out[21..], [1.0, 1.0]); // α = ρ = e⁰
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LatentGpCentered {
    data: Observations,
}

impl LatentGpCentered {
    /// The model on the built-in simulated data.
    pub fn new() -> Self {
        LatentGpCentered { data: simulate() }
    }

    /// The inputs t₁, …, t_N.
    pub fn inputs(&self) -> &[f64] {
        &self.data.inputs
    }

    /// The counts y₁, …, y_N.
    pub fn counts(&self) -> &[f64] {
        &self.data.counts
    }

    /// The latent function values the counts were simulated with.
    pub fn true_latent(&self) -> &[f64] {
        &self.data.true_latent
    }

    /// The Cholesky factor of K(α = eᵃ, ρ = eᵇ) on the inputs, or why there
    /// is none.
    pub(crate) fn covariance_factor(
        &self,
        a: f64,
        b: f64,
    ) -> Result<Cholesky, NotPositiveDefinite> {
        Cholesky::new(&covariance(&self.data.inputs, a, b).k, POINTS)
    }

    /// The likelihood's part of U at intercept `mu` and latent values `f`:
    /// returns Σᵢ (λᵢ − yᵢ (μ + fᵢ)) and writes λᵢ − yᵢ into `residual`.
    fn likelihood(&self, mu: f64, f: &[f64], residual: &mut [f64]) -> f64 {
        let mut u = 0.0;
        for ((r, &fi), &y) in residual.iter_mut().zip(f).zip(&self.data.counts) {
            let eta = mu + fi;
            let rate = eta.exp();
            u += rate - y * eta;
            *r = rate - y;
        }
        u
    }
}

impl Default for LatentGpCentered {
    fn default() -> Self {
        Self::new()
    }
}

/// The prior of (μ, a, b) and the log-Jacobians of α and ρ, as U, and its
/// gradient.
fn hyperprior(mu: f64, a: f64, b: f64) -> (f64, [f64; 3]) {
    let alpha2 = (2.0 * a).exp();
    let (mu_var, rho_var) = (
        MU_PRIOR_SD * MU_PRIOR_SD,
        LOG_RHO_PRIOR_SD * LOG_RHO_PRIOR_SD,
    );
    let b_off = b - std::f64::consts::LN_2;
    let u = 0.5 * mu * mu / mu_var + 0.5 * alpha2 - a + 0.5 * b_off * b_off / rho_var;
    (u, [mu / mu_var, alpha2 - 1.0, b_off / rho_var])
}

/// The names both parametrisations report.
fn latent_gp_output_names() -> Vec<String> {
    (1..=POINTS)
        .map(|i| format!("f[{i}]"))
        .chain(["mu", "alpha", "rho"].map(String::from))
        .collect()
}

impl Model for LatentGpCentered {
    fn name(&self) -> String {
        "latent-gp-centered".into()
    }

    fn dimension(&self) -> usize {
        POINTS + 3
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        if x.iter().any(|v| !v.is_finite()) {
            gradient.fill(0.0);
            return rejected(gradient);
        }
        let (f, head) = x.split_at(POINTS);
        let (mu, a, b) = (head[0], head[1], head[2]);
        let cov = covariance(&self.data.inputs, a, b);
        let Ok(chol) = Cholesky::new(&cov.k, POINTS) else {
            gradient.fill(0.0);
            return rejected(gradient);
        };
        // w = L⁻¹ f, fᵀK⁻¹f = |w|², v = L⁻ᵀ w = K⁻¹ f.
        let mut v = f.to_vec();
        chol.solve_lower(&mut v);
        let quadratic: f64 = v.iter().map(|w| w * w).sum();
        chol.solve_upper(&mut v);
        let inverse = chol.inverse();

        let (grad_f, grad_head) = gradient.split_at_mut(POINTS);
        let fit = self.likelihood(mu, f, grad_f);
        let residual_sum: f64 = grad_f.iter().sum();
        for (g, vi) in grad_f.iter_mut().zip(&v) {
            *g += vi;
        }
        let (prior, prior_gradient) = hyperprior(mu, a, b);
        let u = fit + 0.5 * quadratic + 0.5 * chol.log_determinant() + prior;
        grad_head[0] = residual_sum + prior_gradient[0];
        for (g, (d_k, p)) in grad_head[1..]
            .iter_mut()
            .zip([(&cov.d_a, prior_gradient[1]), (&cov.d_b, prior_gradient[2])])
        {
            *g = 0.5 * trace_of_product(&inverse, d_k) - 0.5 * quadratic_form(d_k, &v) + p;
        }
        if !u.is_finite() || gradient.iter().any(|g| !g.is_finite()) {
            return rejected(gradient);
        }
        u
    }

    fn output_names(&self) -> Vec<String> {
        latent_gp_output_names()
    }

    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        out[..POINTS + 1].copy_from_slice(&x[..POINTS + 1]);
        out[POINTS + 1] = x[POINTS + 1].exp();
        out[POINTS + 2] = x[POINTS + 2].exp();
    }

    /// The non-centred twin ([`LatentGpNoncentered`]): the same posterior
    /// with f = L z, without the funnel and K's rough directions.
    fn reference_model(&self) -> Option<Box<dyn Model>> {
        Some(Box::new(LatentGpNoncentered::of(self.clone())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::testing::{gradient_error, random_point};
    use std::f64::consts::PI;

    /// A typical point: f = L(a, b) z with z uniform in ±1.5 (so that
    /// fᵀK⁻¹f is of its typical size N/2 and not 10⁶ along K's rough
    /// directions), the hyperparameters given.
    fn point(mu: f64, a: f64, b: f64, seed: u64) -> Vec<f64> {
        let model = LatentGpCentered::new();
        let z = random_point(POINTS, 1.5, seed);
        let mut x = vec![0.0; POINTS + 3];
        model
            .covariance_factor(a, b)
            .unwrap()
            .lower_times(&z, &mut x[..POINTS]);
        x[POINTS..].copy_from_slice(&[mu, a, b]);
        x
    }

    /// ∇U against central differences, relative error below 1e-5 of
    /// max(1, ‖∇U‖∞) (the largest measured is 1.3e-6, at a random point; a
    /// wrong term errs by O(1)): in the bulk, in the neck (log α = −3), with
    /// ρ short (0.5) and long (6), α large, and at two random points. The step is
    /// 1e-4, not 1e-6: K's condition number (~10⁷ at ρ ≈ 2) leaves U with
    /// rounding noise ~10⁻¹⁰ as a function of a and b, which a step of 1e-6
    /// turns into errors ~10⁻⁴ (measured on the twin's ∂U/∂a at ρ = 2,
    /// |∂U/∂a| = 15: 1.4e-6 at h = 1e-4, 1.6e-5 at 1e-5, 8e-5 at 1e-6,
    /// 1.3e-3 at 1e-7); at 1e-4 truncation (≈ h² U‴/6) and rounding
    /// (≈ 10⁻¹⁰/h = 10⁻⁶) stay within it.
    #[test]
    fn gradient_matches_finite_differences() {
        let model = LatentGpCentered::new();
        let mut points = vec![
            point(1.0, 0.0, 2f64.ln(), 1),
            point(0.8, -3.0, 0.5, 2),
            point(1.2, -0.5, 0.5f64.ln(), 3),
            point(0.5, 0.3, 6f64.ln(), 4),
            point(-1.0, 1.5, 0.0, 5),
        ];
        for seed in 0..2 {
            points.push(random_point(model.dimension(), 1.0, 40 + seed));
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

    /// log det K and K⁻¹ f by Gaussian elimination with partial pivoting,
    /// not by the Cholesky factor: (log det, fᵀK⁻¹f).
    fn log_det_and_quadratic_by_elimination(k: &[f64], f: &[f64]) -> (f64, f64) {
        let n = f.len();
        let mut m: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                let mut row = k[i * n..(i + 1) * n].to_vec();
                row.push(f[i]);
                row
            })
            .collect();
        let mut log_det = 0.0;
        for c in 0..n {
            let p = (c..n)
                .max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs()))
                .unwrap();
            m.swap(c, p);
            let pivot = m[c][c];
            assert!(pivot != 0.0);
            log_det += pivot.abs().ln();
            for r in c + 1..n {
                let factor = m[r][c] / pivot;
                for col in c..=n {
                    m[r][col] -= factor * m[c][col];
                }
            }
        }
        let mut w = vec![0.0; n];
        for i in (0..n).rev() {
            let s: f64 = (i + 1..n).map(|j| m[i][j] * w[j]).sum();
            w[i] = (m[i][n] - s) / m[i][i];
        }
        let quadratic = f.iter().zip(&w).map(|(a, b)| a * b).sum();
        (log_det, quadratic)
    }

    /// U plus the documented constant equals −(log prior + log likelihood +
    /// log-Jacobians), each factor evaluated on the constrained scale, with
    /// K built entry by entry and its log det and quadratic form by
    /// Gaussian elimination: to 1e-12 relative with ρ = 0.5 (K well
    /// conditioned), 1e-9 at ρ = 2 and 3 (K's condition number ~10⁷ costs
    /// digits in either method). A missing term (½ log det K is −75 at
    /// ρ = 2) or a wrong constant misses by far more.
    #[test]
    fn potential_matches_an_independent_evaluation() {
        let model = LatentGpCentered::new();
        let t = model.inputs();
        for (x, tolerance) in [
            (point(1.0, -0.4, 0.5f64.ln(), 11), 1e-12),
            (point(1.1, 0.2, 2f64.ln(), 12), 1e-9),
            (point(0.6, -1.0, 3f64.ln(), 13), 1e-9),
        ] {
            let mut g = [0.0; POINTS + 3];
            let u = model.potential_and_gradient(&x, &mut g);
            let (f, mu) = (&x[..POINTS], x[POINTS]);
            let (alpha, rho) = (x[POINTS + 1].exp(), x[POINTS + 2].exp());
            let mut k = vec![0.0; POINTS * POINTS];
            for i in 0..POINTS {
                for j in 0..POINTS {
                    let d = (t[i] - t[j]) / rho;
                    k[i * POINTS + j] = alpha * alpha * (-0.5 * d * d).exp();
                }
                k[i * POINTS + i] += JITTER;
            }
            let (log_det, quadratic) = log_det_and_quadratic_by_elimination(&k, f);
            let mut lp = -0.5 * POINTS as f64 * (2.0 * PI).ln() - 0.5 * log_det - 0.5 * quadratic;
            for (i, &y) in model.counts().iter().enumerate() {
                let rate = (mu + f[i]).exp();
                let log_factorial: f64 = (1..=y as u64).map(|k| (k as f64).ln()).sum();
                lp += y * rate.ln() - rate - log_factorial;
            }
            // μ ~ N(0, 2²); α ~ half-N(0, 1) and its Jacobian α;
            // ρ ~ lognormal(log 2, 0.5²) and its Jacobian ρ.
            lp += -0.5 * (mu / 2.0).powi(2) - 2f64.ln() - 0.5 * (2.0 * PI).ln();
            lp += 0.5 * (2.0 / PI).ln() - 0.5 * alpha * alpha + alpha.ln();
            let z = (rho.ln() - 2f64.ln()) / 0.5;
            lp += -0.5 * z * z - 0.5f64.ln() - 0.5 * (2.0 * PI).ln() - rho.ln() + rho.ln();
            let log_factorials: f64 = model
                .counts()
                .iter()
                .map(|&y| (1..=y as u64).map(|k| (k as f64).ln()).sum::<f64>())
                .sum();
            let constant = 0.5 * (POINTS + 2) as f64 * (2.0 * PI).ln()
                + 0.5 * (0.5 * PI).ln()
                + log_factorials;
            assert!(
                (u + constant + lp).abs() < tolerance * lp.abs().max(1.0),
                "U + C = {}, −log π = {}",
                u + constant,
                -lp
            );
        }
    }

    /// The data: the documented inputs, and the values
    /// `compare/nutpie/models.py`'s `simulate_latent_gp()` computes in
    /// Python (printed with `repr`, i.e. exactly: the generator, the
    /// kernel, the Cholesky factorisation and the Poisson draws agree bit
    /// for bit).
    #[test]
    fn simulated_data_are_the_python_harness_data() {
        let model = LatentGpCentered::new();
        assert_eq!(model, LatentGpCentered::new());
        let t = model.inputs();
        assert_eq!(t.len(), POINTS);
        assert_eq!((t[0], t[POINTS - 1]), (0.0, 10.0));
        assert!(
            t.windows(2)
                .all(|w| (w[1] - w[0] - 10.0 / 19.0).abs() < 1e-14)
        );
        assert_eq!(model.counts(), PYTHON_COUNTS);
        let f = model.true_latent();
        assert_eq!(f[0], PYTHON_FIRST_F);
        assert_eq!(f[POINTS - 1], PYTHON_LAST_F);
        assert_eq!(f.iter().sum::<f64>(), PYTHON_SUM_F);
    }

    // Printed by `cd compare/nutpie && python3 -c 'from models import *;
    // d = simulate_latent_gp(); f = [float(v) for v in d["f"]]; s = 0.0
    // for v in f: s += v
    // print([float(v) for v in d["y"]], repr(f[0]), repr(f[-1]), repr(s))'`
    // (the sum in the order of the data, as Rust's `sum`).
    const PYTHON_COUNTS: [f64; POINTS] = [
        0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 2.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 5.0, 4.0, 5.0,
        4.0, 4.0,
    ];
    const PYTHON_FIRST_F: f64 = -1.6167498740730823;
    const PYTHON_LAST_F: f64 = 0.5844332813014352;
    const PYTHON_SUM_F: f64 = -14.25083515875501;

    #[test]
    fn names_constrain_and_start() {
        let model = LatentGpCentered::new();
        let names = model.output_names();
        assert_eq!(names.len(), 23);
        assert_eq!(names[0], "f[1]");
        assert_eq!(names[19], "f[20]");
        let x = random_point(23, 2.0, 3);
        let mut out = [0.0; 23];
        model.constrain(&x, &mut out);
        assert_eq!(out[..21], x[..21]);
        assert_eq!(out[21..], [x[21].exp(), x[22].exp()]);
        assert_eq!(model.initial_point(), vec![0.0; 23]);
        assert!(model.known_posterior().is_none());
        let mut g = [f64::NAN; 23];
        assert!(model.potential_and_gradient(&[0.0; 23], &mut g).is_finite());
        assert!(g.iter().all(|v| v.is_finite()));
    }

    /// U is finite or +∞ (never NaN or −∞) and ∇U finite: α beyond f64's
    /// range (K = ∞: the Cholesky factorisation fails, U = +∞), α → 0
    /// (K = jitter · I), ρ → 0 and ∞, huge μ, and NaN or ∞ coordinates
    /// (U = +∞). A failing factorisation gives +∞, not a panic.
    #[test]
    fn extreme_inputs_are_never_nan() {
        let model = LatentGpCentered::new();
        assert!(model.covariance_factor(400.0, 0.0).is_err());
        let mut g = [0.0; POINTS + 3];
        for (mu, a, b, expect_infinite) in [
            (1.0, 400.0, 0.0, true),
            (1.0, 800.0, 0.0, true),
            (1.0, -800.0, 0.0, false),
            (1.0, 0.0, -800.0, false),
            (1.0, 0.0, 800.0, false),
            (1e300, 0.0, 0.0, true),
            (-1e300, 0.0, 0.0, true),
            (f64::NAN, 0.0, 0.0, true),
            (1.0, f64::INFINITY, 0.0, true),
            (1.0, 0.0, f64::NEG_INFINITY, true),
        ] {
            let mut x = [0.5; POINTS + 3];
            x[POINTS..].copy_from_slice(&[mu, a, b]);
            let u = model.potential_and_gradient(&x, &mut g);
            assert!(!u.is_nan() && u > f64::NEG_INFINITY, "{mu} {a} {b}: {u}");
            assert_eq!(u == f64::INFINITY, expect_infinite, "{mu} {a} {b}: {u}");
            assert!(g.iter().all(|v| v.is_finite()), "{mu} {a} {b}: {g:?}");
        }
    }
}
