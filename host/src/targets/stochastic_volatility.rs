//! `stochastic-volatility`: a centred AR(1) stochastic-volatility model
//! (Kim, Shephard & Chib 1998) on simulated returns, T = 100.
//!
//! Model:
//!
//! ```text
//! h₁ ~ N(μ, σ²/(1 − φ²)),  hₜ ~ N(μ + φ(hₜ₋₁ − μ), σ²)  (t = 2, …, T),
//! yₜ ~ N(0, exp(hₜ)),
//! μ ~ N(0, 10²),  φ ~ Uniform(−1, 1),  σ ~ half-Cauchy(0, 5).
//! ```
//!
//! Unconstrained coordinates x = (μ, a, s, h₁, …, h_T), D = T + 3 = 103, with
//! φ = tanh a (log-Jacobian L = log(1 − φ²)) and σ = eˢ (log-Jacobian s). With
//! cₜ = hₜ − μ, innovations eₜ = cₜ − φ cₜ₋₁ (t ≥ 2), k = 1 − φ² = eᴸ,
//! S = k c₁² + Σₜ₌₂ eₜ² and q = e⁻²ˢ = 1/σ²:
//!
//! ```text
//! U = μ²/200 − (3/2) L + log(1 + σ²/25) + (T − 1) s + q S/2
//!     + Σₜ (hₜ + yₜ² e^{−hₜ})/2,
//! ∂U/∂μ  = μ/100 − q (k c₁ + (1 − φ) Σₜ₌₂ eₜ),
//! ∂U/∂a  = 3φ − q k (φ c₁² + Σₜ₌₂ eₜ cₜ₋₁),
//! ∂U/∂s  = 2σ²/(25 + σ²) + (T − 1) − q S,
//! ∂U/∂hₜ = q ∂(S/2)/∂cₜ + (1 − yₜ² e^{−hₜ})/2,
//!          ∂(S/2)/∂c₁ = k c₁ − φ e₂,  ∂(S/2)/∂cₜ = eₜ − φ eₜ₊₁,  ∂(S/2)/∂c_T = e_T.
//! ```
//!
//! (−(3/2)L: −L from the Jacobian of φ, −L/2 from the stationary variance of
//! h₁; (T − 1)s: T from the normal densities of h, −1 from the Jacobian of σ.)
//! This is −log π − log|J| minus the constant
//! log 10 + log 2 + log(5π/2) + (2T + 1)/2 · log 2π.
//!
//! Numerics: L = −2 log cosh a = 2(log 2 − |a| − log1p(e^{−2|a|})) and k = eᴸ
//! (never 1 − tanh²a, which is 0 for |a| > 19), 1 − φ = 2/(1 + e^{2a}) without
//! cancellation, log(1 + σ²/25) as a softplus, and yₜ² e^{−hₜ} as
//! exp(log yₜ² − hₜ); so U is finite for every finite x short of a term whose
//! true value exceeds f64 (q S for s ≲ −350, yₜ² e^{−hₜ} for hₜ ≲ −700), where
//! it is +∞, never NaN.
//!
//! Funnel geometry: as σ → 0 the h path is pinned to its AR(1) mean with sd
//! σ, so s against h is a funnel, and with φ near 1 (a ≈ 2) the h are strongly
//! correlated.
//!
//! # The data
//!
//! Simulated once from the model with the true values μ = −1, φ = 0.95,
//! σ = 0.25 ([`TRUE_MU`], [`TRUE_PHI`], [`TRUE_SIGMA`]): h₁ = μ + σ/√(1 − φ²) ε₁,
//! hₜ = μ + φ(hₜ₋₁ − μ) + σ εₜ, yₜ = exp(hₜ/2) ηₜ. The standard normals are
//! drawn in the order ε₁, η₁, ε₂, η₂, …, each by Box–Muller (cosine branch,
//! √(−2 log u₁) cos 2πu₂) from two consecutive outputs of a SplitMix64
//! generator seeded with [`SEED`] (u = (top 53 bits + 1)/2⁵³ ∈ (0, 1];
//! `simulation_rng.rs`).
//! Reported quantities on the constrained scale: `mu`, `phi`, `sigma`,
//! `h[1]`…`h[100]`. No exact posterior is known; none is claimed.

use super::eight_schools_centered::{logistic, softplus};
use super::simulation_rng::SplitMix64;
use crate::model::Model;

mod noncentered;
pub use noncentered::StochasticVolatilityNoncentered;

/// Number of returns T.
pub const LENGTH: usize = 100;
/// Seed of the SplitMix64 generator that simulates the returns.
pub const SEED: u64 = 0x5EED_0005_7001;
/// μ of the simulation.
pub const TRUE_MU: f64 = -1.0;
/// φ of the simulation.
pub const TRUE_PHI: f64 = 0.95;
/// σ of the simulation.
pub const TRUE_SIGMA: f64 = 0.25;

const MU_PRIOR_VARIANCE: f64 = 100.0;
const SIGMA_SCALE: f64 = 5.0;

/// Simulates (h, y) of length `length` from the model with the given
/// parameters (|φ| < 1, σ > 0), as described in the module documentation.
fn simulate(seed: u64, length: usize, mu: f64, phi: f64, sigma: f64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = SplitMix64::new(seed);
    let mut h = Vec::with_capacity(length);
    let mut y = Vec::with_capacity(length);
    for t in 0..length {
        let eps = rng.normal();
        let eta = rng.normal();
        let ht = match t {
            0 => mu + sigma / (1.0 - phi * phi).sqrt() * eps,
            _ => mu + phi * (h[t - 1] - mu) + sigma * eps,
        };
        h.push(ht);
        y.push((0.5 * ht).exp() * eta);
    }
    (h, y)
}

/// log(1 − tanh²a) = −2 log cosh a, accurate and finite for every finite a.
fn log_one_minus_tanh_squared(a: f64) -> f64 {
    let b = a.abs();
    2.0 * (std::f64::consts::LN_2 - b - (-2.0 * b).exp().ln_1p())
}

/// 1 − tanh a = 2/(1 + e^{2a}), without cancellation for large a.
fn one_minus_tanh(a: f64) -> f64 {
    if a > 0.0 {
        let e = (-2.0 * a).exp();
        2.0 * e / (1.0 + e)
    } else {
        1.0 - a.tanh()
    }
}

/// q·v, but 0 when v = 0 even if q = +∞ (a zero term stays zero).
pub(crate) fn scale(q: f64, v: f64) -> f64 {
    if v == 0.0 { 0.0 } else { q * v }
}

/// The stochastic-volatility model; see the module documentation.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::StochasticVolatility;
/// let model = StochasticVolatility::new();
/// assert_eq!(model.name(), "stochastic-volatility");
/// assert_eq!(model.dimension(), 103);
/// assert_eq!(model.output_names()[..4], ["mu", "phi", "sigma", "h[1]"]);
/// let mut g = vec![0.0; 103];
/// assert!(model.potential_and_gradient(&vec![0.0; 103], &mut g).is_finite());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct StochasticVolatility {
    /// The returns yₜ.
    returns: Vec<f64>,
    /// log yₜ² (−∞ for a zero return).
    log_squared: Vec<f64>,
    /// The simulated log-volatilities hₜ (empty for returns given by the user).
    true_volatility: Vec<f64>,
}

impl StochasticVolatility {
    /// The model on the built-in simulated returns (T = 100).
    pub fn new() -> Self {
        let (h, y) = simulate(SEED, LENGTH, TRUE_MU, TRUE_PHI, TRUE_SIGMA);
        let mut model = Self::with_returns(y);
        model.true_volatility = h;
        model
    }

    /// The model on given returns; `None` when there are none or one is not
    /// finite.
    pub fn from_returns(returns: Vec<f64>) -> Option<Self> {
        if returns.is_empty() || returns.iter().any(|y| !y.is_finite()) {
            return None;
        }
        Some(Self::with_returns(returns))
    }

    fn with_returns(returns: Vec<f64>) -> Self {
        let log_squared = returns.iter().map(|y| (y * y).ln()).collect();
        StochasticVolatility {
            returns,
            log_squared,
            true_volatility: Vec::new(),
        }
    }

    /// The returns y₁, …, y_T.
    pub fn returns(&self) -> &[f64] {
        &self.returns
    }

    /// The log-volatilities h₁, …, h_T the built-in returns were simulated
    /// with (empty for [`from_returns`](Self::from_returns)).
    pub fn true_volatility(&self) -> &[f64] {
        &self.true_volatility
    }

    /// log yₜ² (−∞ for a zero return).
    fn log_squared(&self) -> &[f64] {
        &self.log_squared
    }

    fn length(&self) -> usize {
        self.returns.len()
    }
}

impl Default for StochasticVolatility {
    fn default() -> Self {
        Self::new()
    }
}

impl Model for StochasticVolatility {
    fn name(&self) -> String {
        "stochastic-volatility".into()
    }

    fn dimension(&self) -> usize {
        self.length() + 3
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        let n = self.length();
        let (mu, a, s) = (x[0], x[1], x[2]);
        let h = &x[3..3 + n];
        let phi = a.tanh();
        let log_k = log_one_minus_tanh_squared(a);
        let k = log_k.exp(); // 1 − φ²
        let one_minus_phi = one_minus_tanh(a);
        let q = (-2.0 * s).exp(); // 1/σ²
        let (grad_head, grad_h) = gradient.split_at_mut(3);
        let grad_h = &mut grad_h[..n];

        // The AR(1) prior of h: S, its parts, and ∂(S/2)/∂cₜ into grad_h.
        let c1 = h[0] - mu;
        let mut sum_sq = k * c1 * c1; // S
        let mut sum_e = 0.0; // Σ eₜ
        let mut sum_e_lag = 0.0; // Σ eₜ cₜ₋₁
        grad_h[0] = k * c1;
        for t in 1..n {
            let lag = h[t - 1] - mu;
            let e = (h[t] - mu) - phi * lag;
            sum_sq += e * e;
            sum_e += e;
            sum_e_lag += e * lag;
            grad_h[t - 1] -= phi * e;
            grad_h[t] = e;
        }
        // A zero term (h exactly on its AR(1) mean) stays 0 even where q
        // overflows (no 0·∞); elsewhere q S is +∞ only if its true value is.
        let scaled = scale(q, sum_sq);

        // Observations: (hₜ + yₜ² e^{−hₜ})/2.
        let mut u_obs = 0.0;
        for ((g, &ht), &log_y2) in grad_h.iter_mut().zip(h).zip(&self.log_squared) {
            let w = (log_y2 - ht).exp(); // yₜ² e^{−hₜ}
            u_obs += 0.5 * (ht + w);
            *g = scale(q, *g) + 0.5 * (1.0 - w);
        }

        let z = 2.0 * (s - SIGMA_SCALE.ln()); // σ²/25 = eᶻ
        let steps = (n - 1) as f64;
        let u = 0.5 * mu * mu / MU_PRIOR_VARIANCE - 1.5 * log_k
            + softplus(z)
            + steps * s
            + 0.5 * scaled
            + u_obs;
        let lagged = phi * c1 * c1 + sum_e_lag;
        grad_head[0] = mu / MU_PRIOR_VARIANCE - scale(q, k * c1 + one_minus_phi * sum_e);
        grad_head[1] = 3.0 * phi - scale(q, k * lagged);
        grad_head[2] = 2.0 * logistic(z) + steps - scaled;
        u
    }

    fn output_names(&self) -> Vec<String> {
        ["mu", "phi", "sigma"]
            .into_iter()
            .map(String::from)
            .chain((1..=self.length()).map(|t| format!("h[{t}]")))
            .collect()
    }

    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        out[0] = x[0];
        out[1] = x[1].tanh();
        out[2] = x[2].exp();
        out[3..].copy_from_slice(&x[3..]);
    }

    /// The non-centred twin ([`StochasticVolatilityNoncentered`]): the same
    /// posterior without the funnel between σ and the path.
    fn reference_model(&self) -> Option<Box<dyn Model>> {
        Some(Box::new(StochasticVolatilityNoncentered::of(self.clone())))
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

    /// The model's log density on the constrained scale plus the log-Jacobians,
    /// written out factor by factor (naive formulas: moderate inputs only).
    fn log_density(y: &[f64], x: &[f64]) -> f64 {
        let (mu, phi, sigma) = (x[0], x[1].tanh(), x[2].exp());
        let h = &x[3..];
        let prior = normal_lpdf(mu, 0.0, 10.0)
            + (0.5f64).ln() // uniform on (−1, 1)
            + (2.0 / (PI * 5.0 * (1.0 + (sigma / 5.0).powi(2)))).ln();
        let jacobian = (1.0 - phi * phi).ln() + x[2];
        let mut states = normal_lpdf(h[0], mu, sigma / (1.0 - phi * phi).sqrt());
        for t in 1..h.len() {
            states += normal_lpdf(h[t], mu + phi * (h[t - 1] - mu), sigma);
        }
        let observations: f64 = y
            .iter()
            .zip(h)
            .map(|(&yt, &ht)| normal_lpdf(yt, 0.0, (0.5 * ht).exp()))
            .sum();
        prior + jacobian + states + observations
    }

    /// A point near the posterior bulk: μ, a, s given, h = the simulated path
    /// plus uniform noise of half-width `jitter`.
    fn point(
        model: &StochasticVolatility,
        mu: f64,
        a: f64,
        s: f64,
        jitter: f64,
        seed: u64,
    ) -> Vec<f64> {
        let noise = random_point(model.length(), jitter, seed);
        let mut x = vec![mu, a, s];
        x.extend(
            model
                .true_volatility()
                .iter()
                .zip(&noise)
                .map(|(h, e)| h + e),
        );
        x
    }

    /// ∇U against central differences (step 1e-6), relative error below 1e-6
    /// of max(1, ‖∇U‖∞), at points in the bulk, in the neck (s = −3, −5 with
    /// h close to an AR(1) path), with φ near ±1, and at random points.
    #[test]
    fn gradient_matches_finite_differences() {
        let model = StochasticVolatility::new();
        let tolerance = 1e-6;
        let mut points = vec![
            point(&model, -1.0, 1.83, -1.4, 0.3, 1),
            point(&model, -0.5, 1.0, -3.0, 0.05, 2),
            point(&model, -1.2, 2.5, -5.0, 0.01, 3),
            point(&model, 0.5, -2.0, 0.5, 1.0, 4),
            point(&model, -1.0, 6.0, -2.0, 0.2, 5),
        ];
        for seed in 0..3 {
            points.push(random_point(model.dimension(), 2.0, 40 + seed));
        }
        for x in &points {
            let err = gradient_error(&model, x, 1e-6);
            assert!(
                err < tolerance,
                "mu {}, a {}, s {}: {err:e}",
                x[0],
                x[1],
                x[2]
            );
        }
        // A short series (T = 2, T = 1): the ends of the recursion.
        for y in [vec![0.3, -1.1], vec![0.7]] {
            let short = StochasticVolatility::from_returns(y).unwrap();
            let x = random_point(short.dimension(), 1.5, 7);
            let err = gradient_error(&short, &x, 1e-6);
            assert!(err < tolerance, "T = {}: {err:e}", short.length());
        }
    }

    /// U plus the documented constant equals −(log prior + log likelihood +
    /// log-Jacobians), each factor evaluated on the constrained scale.
    #[test]
    fn potential_matches_constrained_log_density() {
        let model = StochasticVolatility::new();
        for x in [
            point(&model, -0.8, 1.7, -1.2, 0.4, 11),
            point(&model, 1.5, -0.6, 0.3, 1.5, 12),
        ] {
            let mut g = vec![0.0; model.dimension()];
            let u = model.potential_and_gradient(&x, &mut g);
            let lp = log_density(model.returns(), &x);
            let t = LENGTH as f64;
            let constant =
                10f64.ln() + 2f64.ln() + (2.5 * PI).ln() + (2.0 * t + 1.0) / 2.0 * (2.0 * PI).ln();
            assert!(
                (u + constant + lp).abs() < 1e-12 * lp.abs(),
                "U + C = {}, −log π = {}",
                u + constant,
                -lp
            );
        }
        // By hand, T = 1, y = 1, at the origin (φ = 0, σ = 1, h = 0):
        // U = 0 − 0 + log(26/25) + 0 + 0 + (0 + 1)/2.
        let one = StochasticVolatility::from_returns(vec![1.0]).unwrap();
        let mut g = [0.0; 4];
        let u = one.potential_and_gradient(&[0.0; 4], &mut g);
        let by_hand = (26.0f64 / 25.0).ln() + 0.5;
        assert!((u - by_hand).abs() < 1e-15, "{u} vs {by_hand}");
    }

    #[test]
    fn names_constrain_and_start() {
        let model = StochasticVolatility::new();
        let names = model.output_names();
        assert_eq!(names.len(), 103);
        assert_eq!(names[..4], ["mu", "phi", "sigma", "h[1]"]);
        assert_eq!(names[102], "h[100]");
        let x = random_point(103, 2.0, 3);
        let mut out = vec![0.0; 103];
        model.constrain(&x, &mut out);
        assert_eq!(out[0], x[0]);
        assert_eq!(out[1], x[1].tanh());
        assert_eq!(out[2], x[2].exp());
        assert_eq!(out[3..], x[3..]);
        assert_eq!(model.initial_point(), vec![0.0; 103]);
        assert!(model.known_posterior().is_none());
        assert!(StochasticVolatility::from_returns(Vec::new()).is_none());
        assert!(StochasticVolatility::from_returns(vec![1.0, f64::NAN]).is_none());
    }

    /// The simulation is deterministic and looks like its parameters: the
    /// path's mean, lag-1 autocorrelation and innovation sd, and the returns'
    /// scale (loose bounds for T = 100).
    #[test]
    fn simulated_data_match_the_true_values() {
        let a = StochasticVolatility::new();
        assert_eq!(a, StochasticVolatility::new());
        let (h, y) = (a.true_volatility(), a.returns());
        assert_eq!((h.len(), y.len()), (LENGTH, LENGTH));
        assert!(y.iter().all(|v| v.is_finite() && *v != 0.0));
        let n = LENGTH as f64;
        let mean = h.iter().sum::<f64>() / n;
        assert!((mean - TRUE_MU).abs() < 1.0, "mean h {mean}");
        let innovations: Vec<f64> = h
            .windows(2)
            .map(|w| w[1] - TRUE_MU - TRUE_PHI * (w[0] - TRUE_MU))
            .collect();
        let sd = (innovations.iter().map(|e| e * e).sum::<f64>() / (n - 1.0)).sqrt();
        assert!((sd - TRUE_SIGMA).abs() < 0.07, "innovation sd {sd}");
        // E[y²] = E[eʰ] ≈ e^{μ + Var h/2}, Var h = σ²/(1 − φ²) ≈ 0.64.
        let y2 = y.iter().map(|v| v * v).sum::<f64>() / n;
        assert!(y2 > 0.1 && y2 < 1.5, "mean y² {y2}");
        // The generator: mean ≈ 0 and variance ≈ 1 over many draws.
        let mut rng = SplitMix64::new(SEED);
        let e: Vec<f64> = (0..20_000).map(|_| rng.normal()).collect();
        let m = e.iter().sum::<f64>() / 20_000.0;
        let v = e.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 19_999.0;
        assert!(m.abs() < 0.05 && (v - 1.0).abs() < 0.05, "{m} {v}");
    }

    /// The stable helpers against direct formulas where those are accurate,
    /// and U, ∇U at extreme inputs: finite, or +∞ but never NaN.
    #[test]
    fn extreme_inputs_are_finite_or_infinite_never_nan() {
        for a in [-3.0, -0.5, 0.0, 0.7, 2.0] {
            let direct = (1.0 - f64::tanh(a).powi(2)).ln();
            assert!(
                (log_one_minus_tanh_squared(a) - direct).abs() < 1e-12,
                "{a}"
            );
            assert!((one_minus_tanh(a) - (1.0 - a.tanh())).abs() < 1e-15, "{a}");
        }
        assert!((log_one_minus_tanh_squared(400.0) - 2.0 * (2f64.ln() - 400.0)).abs() < 1e-12);
        assert!((one_minus_tanh(30.0) / (2.0 * (-60.0f64).exp()) - 1.0).abs() < 1e-15);

        let model = StochasticVolatility::new();
        let d = model.dimension();
        let mut g = vec![0.0; d];
        for (mu, a, s, h) in [
            (0.0, 40.0, 0.0, 0.0),
            (0.0, -800.0, 0.0, 0.0),
            (1e5, 800.0, 300.0, 50.0),
            (-1e3, 3.0, -300.0, -50.0),
            (0.0, 0.0, 700.0, 600.0),
        ] {
            let mut x = vec![h; d];
            (x[0], x[1], x[2]) = (mu, a, s);
            let u = model.potential_and_gradient(&x, &mut g);
            assert!(u.is_finite(), "U({mu}, {a}, {s}, h = {h}) = {u}");
            assert!(g.iter().all(|v| v.is_finite()), "{mu} {a} {s} {h}: {g:?}");
        }
        // h exactly on the AR(1) mean, σ → 0: q overflows, S = 0, U finite.
        let mut x = vec![0.0; d];
        x[2] = -800.0;
        let u = model.potential_and_gradient(&x, &mut g);
        assert!(u.is_finite() && g.iter().all(|v| v.is_finite()), "{u}");
        // Off the mean the true value overflows: +∞, no NaN.
        x[3] = 1.0;
        let u = model.potential_and_gradient(&x, &mut g);
        assert!(u == f64::INFINITY && !g.iter().any(|v| v.is_nan()), "{u}");
        let u = model.potential_and_gradient(&vec![-1e4; d], &mut g);
        assert!(!u.is_nan() && !g.iter().any(|v| v.is_nan()), "{u}");
    }
}
