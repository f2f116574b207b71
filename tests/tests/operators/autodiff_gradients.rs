//! Automatic differentiation against the hand-written gradients: every
//! built-in target of the host whose ∇U is derived by hand, with U written
//! once here generic over `qnmc::Scalar` (from the formula in the target's
//! documentation, not from its gradient code), then differentiated by
//! `ForwardGradient` (8 tangents) and `ReverseGradient`.
//!
//! Bound, per coordinate i, at every point:
//! |g_ad,i − g_hand,i| ≤ 1e-12 · max(1, |g_hand,i|), and the same for U.
//!
//! The posteriordb targets (eight schools, sblrc-blr, arK) need the shared
//! data folder; their data come from `PosteriordbPosterior::read_data`.
//!
//! Targets not here: Pima and Ripley logistic
//! regressions (not built in; the same arithmetic as German, Australian and
//! Heart, which are here), the run-time faces `GaussianModel` and
//! `LinearGaussian` (the same functions as `CorrelatedGaussian` and
//! `LinearGaussianModel`, which are here), and Stan models (no hand-written
//! gradient).

use qnmc::autodiff::{AutodiffModel, ForwardGradient, ReverseGradient};
use qnmc::{Error, Potential, Scalar};
use qnmc_host::input::{TableFormat, parse_table};
use qnmc_host::model::Model;
use qnmc_host::targets::{
    AmagoldDist1, AmagoldDist2, AnalyticToy, CorrelatedGaussian, DoubleWell, EightSchoolsCentered,
    Funnel, GaussianCovariance, LinearGaussianModel, LogisticRegression, LogisticRegressionModel,
    LogregDataset, Posteriordb, PosteriordbPosterior, RecipeCorrelated2d, RecipeQuadratic,
    RecipeQuartic, StochasticVolatility,
};
use rand_core::Rng;

use crate::common::{normal, rng};

const TOLERANCE: f64 = 1e-12;
/// Tape nodes: enough for German credit (about 60 000).
const CAPACITY: usize = 1 << 16;
const POINTS: usize = 5;

/// A uniform number in [−1, 1).
fn uniform(r: &mut impl Rng) -> f64 {
    (r.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// `POINTS` points centre + scale·U[−1, 1)ᴰ, from `seed`.
fn points<const D: usize>(centre: [f64; D], scale: [f64; D], seed: u64) -> Vec<[f64; D]> {
    let mut r = rng(seed);
    (0..POINTS)
        .map(|_| core::array::from_fn(|i| centre[i] + scale[i] * uniform(&mut r)))
        .collect()
}

/// The worst relative error max |a − h| / max(1, |h|) over the coordinates.
fn relative_error(ad: &[f64], hand: &[f64]) -> f64 {
    ad.iter()
        .zip(hand)
        .map(|(a, h)| (a - h).abs() / h.abs().max(1.0))
        .fold(0.0, f64::max)
}

/// Checks both modes against `hand` at `points`; returns the worst errors
/// (forward, reverse) and the tape length, and prints them.
fn check<M: AutodiffModel<D>, const D: usize>(
    name: &str,
    model: &M,
    points: &[[f64; D]],
    mut hand: impl FnMut(&[f64; D], &mut [f64; D]) -> f64,
) -> [f64; 2] {
    let forward = ForwardGradient::<_, 8>::new(model);
    let reverse = Box::new(ReverseGradient::<_, f64, CAPACITY>::new(model));
    let mut worst = [0.0f64; 2];
    for x in points {
        let mut g_hand = [0.0; D];
        let u_hand = hand(x, &mut g_hand);
        assert!(u_hand.is_finite(), "{name}: U = {u_hand} at {x:?}");
        let (mut g_f, mut g_r) = ([0.0; D], [0.0; D]);
        let u_f = forward.potential_and_gradient(x, &mut g_f);
        let u_r = reverse
            .try_potential_and_gradient(x, &mut g_r)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // U on f64, forward and reverse: the same bits.
        assert_eq!(u_f.to_bits(), model.potential(x).to_bits(), "{name}");
        assert_eq!(u_f.to_bits(), u_r.to_bits(), "{name}");
        let u_err = relative_error(&[u_f], &[u_hand]);
        assert!(
            u_err <= TOLERANCE,
            "{name}: U {u_f} vs {u_hand} ({u_err:e})"
        );
        for (k, g) in [g_f, g_r].iter().enumerate() {
            let err = relative_error(g, &g_hand);
            assert!(
                err <= TOLERANCE,
                "{name} ({}): {err:e} at {x:?}\n  ad   {g:?}\n  hand {g_hand:?}",
                ["forward", "reverse"][k]
            );
            worst[k] = worst[k].max(err);
        }
    }
    println!(
        "{name:<28} D = {D:>3}  worst relative error: forward {:.1e}, reverse {:.1e}  ({} tape nodes)",
        worst[0],
        worst[1],
        reverse.tape().len()
    );
    worst
}

/// A hand-written `Model` (run-time dimension) as a fixed-size closure.
fn model_gradient<const D: usize>(
    model: &dyn Model,
) -> impl FnMut(&[f64; D], &mut [f64; D]) -> f64 {
    move |x, g| model.potential_and_gradient(x, g)
}

// ---- The models, written once ------------------------------------------

/// A JSON list of numbers (posteriordb data).
fn numbers(value: &serde_json::Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

/// sblrc-blr (posteriordb `blr.stan`): β ~ N(0, 10²) (5 coefficients),
/// σ = eˢ ~ N⁺(0, 10²) with its log-Jacobian, y ~ N(Xβ, σ):
/// U = ‖β‖²/200 + σ²/200 + ‖y − Xβ‖²/(2σ²) + (N − 1)·s.
struct Blr {
    rows: Vec<[f64; 5]>,
    y: Vec<f64>,
}

impl AutodiffModel<6> for Blr {
    fn potential<S: Scalar>(&self, p: &[S; 6]) -> S {
        let s = p[5];
        let sigma2 = (S::from_f64(2.0) * s).exp();
        let mut u = S::from_f64(0.0);
        for &b in &p[..5] {
            u += S::from_f64(0.5 / 100.0) * b * b;
        }
        let mut ss = S::from_f64(0.0);
        for (row, &y) in self.rows.iter().zip(&self.y) {
            let mut mu = S::from_f64(0.0);
            for k in 0..5 {
                mu += p[k] * S::from_f64(row[k]);
            }
            let e = S::from_f64(y) - mu;
            ss += e * e;
        }
        let n = self.y.len() as f64;
        u + S::from_f64(0.5 / 100.0) * sigma2
            + S::from_f64(0.5) * ss / sigma2
            + S::from_f64(n - 1.0) * s
    }
}

/// arK (posteriordb `arK.stan`, K = 5): α, β ~ N(0, 10²), σ = eˢ ~
/// Cauchy⁺(0, 2.5) with its log-Jacobian, y_t ~ N(α + Σₖ βₖ y_{t−k}, σ):
/// U = α²/200 + ‖β‖²/200 + log(1 + σ²/2.5²) + Σ_t e_t²/(2σ²) + (T − K − 1)·s.
struct Ark {
    y: Vec<f64>,
}

impl AutodiffModel<7> for Ark {
    fn potential<S: Scalar>(&self, p: &[S; 7]) -> S {
        const K: usize = 5;
        let s = p[K + 1];
        let sigma2 = (S::from_f64(2.0) * s).exp();
        let mut u = S::from_f64(0.0);
        for &c in &p[..=K] {
            u += S::from_f64(0.5 / 100.0) * c * c;
        }
        let mut ss = S::from_f64(0.0);
        for t in K..self.y.len() {
            let mut mu = p[0];
            for i in 0..K {
                mu += p[i + 1] * S::from_f64(self.y[t - i - 1]);
            }
            let e = S::from_f64(self.y[t]) - mu;
            ss += e * e;
        }
        let observed = (self.y.len() - K) as f64;
        u + (sigma2 / S::from_f64(2.5 * 2.5)).ln_1p()
            + S::from_f64(0.5) * ss / sigma2
            + S::from_f64(observed - 1.0) * s
    }
}

/// Logistic regression: U(w) = ‖w‖²/(2v) + Σₙ softplus(fₙ) − tₙ fₙ, fₙ = xₙᵀw.
struct Logistic<const D: usize> {
    rows: Vec<[f64; D]>,
    labels: Vec<f64>,
    prior_variance: f64,
}

impl<const D: usize> AutodiffModel<D> for Logistic<D> {
    fn potential<S: Scalar>(&self, w: &[S; D]) -> S {
        let inverse = S::from_f64(1.0 / self.prior_variance);
        let mut u = S::from_f64(0.0);
        for &wi in w {
            u += S::from_f64(0.5) * wi * wi * inverse;
        }
        for (x, &t) in self.rows.iter().zip(&self.labels) {
            let mut f = w[0] * S::from_f64(x[0]);
            for k in 1..D {
                f += w[k] * S::from_f64(x[k]);
            }
            u += f.softplus() - S::from_f64(t) * f;
        }
        u
    }
}

fn logistic_from<const D: usize>(model: &LogisticRegressionModel) -> Logistic<D> {
    Logistic {
        rows: (0..model.len())
            .map(|n| model.design_row(n).try_into().unwrap())
            .collect(),
        labels: model.labels().to_vec(),
        prior_variance: model.prior_variance(),
    }
}

/// N(0, c·11ᵀ + a·I): U = ½ θᵀΣ⁻¹θ, Σ⁻¹ = (I − c11ᵀ/(a + cD))/a.
struct Correlated<const D: usize> {
    a: f64,
    c: f64,
}

impl<const D: usize> AutodiffModel<D> for Correlated<D> {
    fn potential<S: Scalar>(&self, x: &[S; D]) -> S {
        let (a, c) = (S::from_f64(self.a), S::from_f64(self.c));
        let mut sum = S::from_f64(0.0);
        for &v in x {
            sum += v;
        }
        let shift = c * sum / (a + c * S::from_f64(D as f64));
        let mut u = S::from_f64(0.0);
        for &v in x {
            u += v * (v - shift) / a;
        }
        S::from_f64(0.5) * u
    }
}

/// Linear Gaussian: U = ½‖θ‖² + Σₙ (xₙ − aₙᵀθ)²/(2σ²).
struct Linear<const D: usize> {
    regressors: Vec<[f64; D]>,
    observations: Vec<f64>,
    noise_variance: f64,
}

impl<const D: usize> AutodiffModel<D> for Linear<D> {
    fn potential<S: Scalar>(&self, theta: &[S; D]) -> S {
        let mut u = S::from_f64(0.0);
        for &t in theta {
            u += t * t;
        }
        for (a, &x) in self.regressors.iter().zip(&self.observations) {
            let mut prediction = S::from_f64(0.0);
            for k in 0..D {
                prediction += S::from_f64(a[k]) * theta[k];
            }
            let r = prediction - S::from_f64(x);
            u += r * r / S::from_f64(self.noise_variance);
        }
        S::from_f64(0.5) * u
    }
}

/// Neal's funnel: U = v²/18 + Σᵢ (xᵢ² e⁻ᵛ/2 + v/2).
struct NealFunnel;

impl<const D: usize> AutodiffModel<D> for NealFunnel {
    fn potential<S: Scalar>(&self, x: &[S; D]) -> S {
        let v = x[0];
        let precision = (-v).exp();
        let mut u = v * v / S::from_f64(18.0);
        for &xi in &x[1..] {
            u += S::from_f64(0.5) * (xi * xi * precision + v);
        }
        u
    }
}

const Y: [f64; 8] = [28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0];
const SIGMA: [f64; 8] = [15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0];

/// Centred eight schools, x = (θ, μ, s = log τ):
/// U = μ²/50 + log(1 + τ²/25) + 7s + Σ (θⱼ − μ)²/(2τ²) + Σ (yⱼ − θⱼ)²/(2σⱼ²).
struct SchoolsCentred;

impl AutodiffModel<10> for SchoolsCentred {
    fn potential<S: Scalar>(&self, x: &[S; 10]) -> S {
        let (mu, s) = (x[8], x[9]);
        let half = S::from_f64(0.5);
        let tau2 = (S::from_f64(2.0) * s).exp();
        let mut u = half * mu * mu / S::from_f64(25.0)
            + (S::from_f64(2.0) * (s - S::from_f64(5f64.ln()))).softplus()
            + S::from_f64(7.0) * s;
        for j in 0..8 {
            let d = x[j] - mu;
            let miss = x[j] - S::from_f64(Y[j]);
            u += half * d * d / tau2 + half * miss * miss / S::from_f64(SIGMA[j] * SIGMA[j]);
        }
        u
    }
}

/// Non-centred eight schools, x = (θ̃, μ, s = log τ):
/// U = ½Σθ̃ⱼ² + Σ (yⱼ − μ − τθ̃ⱼ)²/(2σⱼ²) + μ²/50 + log(1 + τ²/25) − s.
struct SchoolsNoncentred;

impl AutodiffModel<10> for SchoolsNoncentred {
    fn potential<S: Scalar>(&self, x: &[S; 10]) -> S {
        let (mu, s) = (x[8], x[9]);
        let half = S::from_f64(0.5);
        let tau = s.exp();
        let mut u =
            half * mu * mu / S::from_f64(25.0) + (tau * tau / S::from_f64(25.0)).ln_1p() - s;
        for j in 0..8 {
            let r = S::from_f64(Y[j]) - mu - tau * x[j];
            u += half * x[j] * x[j] + half * r * r / S::from_f64(SIGMA[j] * SIGMA[j]);
        }
        u
    }
}

/// Stochastic volatility, x = (μ, a, s, h₁…h_T), φ = tanh a, σ = eˢ,
/// L = log(1 − φ²) = 2(log 2 − |a| − log1p(e^{−2|a|})), k = eᴸ, q = e⁻²ˢ:
/// U = μ²/200 − (3/2)L + log(1 + σ²/25) + (T − 1)s + q S/2 + Σ (hₜ + yₜ²e^{−hₜ})/2,
/// S = k c₁² + Σₜ₌₂ (cₜ − φcₜ₋₁)², cₜ = hₜ − μ.
struct Volatility {
    log_squared: Vec<f64>,
}

impl AutodiffModel<103> for Volatility {
    fn potential<S: Scalar>(&self, x: &[S; 103]) -> S {
        let (mu, a, s) = (x[0], x[1], x[2]);
        let h = &x[3..];
        let two = S::from_f64(2.0);
        let half = S::from_f64(0.5);
        let phi = a.tanh();
        let b = a.abs();
        let log_k = two * (S::from_f64(core::f64::consts::LN_2) - b - (-two * b).exp().ln_1p());
        let k = log_k.exp();
        let q = (-two * s).exp();
        let c1 = h[0] - mu;
        let mut sum_sq = k * c1 * c1;
        for t in 1..h.len() {
            let e = (h[t] - mu) - phi * (h[t - 1] - mu);
            sum_sq += e * e;
        }
        let mut u = half * mu * mu / S::from_f64(100.0) - S::from_f64(1.5) * log_k
            + (two * (s - S::from_f64(5f64.ln()))).softplus()
            + S::from_f64((h.len() - 1) as f64) * s
            + half * q * sum_sq;
        for (&ht, &log_y2) in h.iter().zip(&self.log_squared) {
            u += half * (ht + (S::from_f64(log_y2) - ht).exp());
        }
        u
    }
}

/// Years regression, x = (a, b, t = log σ):
/// U = Σ (yᵢ − a − b xᵢ)²/(2σ²) + N t + a²/(2·100²) + b²/(2·10²) + t²/2.
struct Years {
    x: Vec<f64>,
    y: Vec<f64>,
}

impl Years {
    /// The data of `qnmc_host::targets::YearsRegression`'s documentation:
    /// xᵢ = 1950 + i, yᵢ = 14 + 0.018 i + 0.12 εᵢ, εᵢ by Box–Muller from
    /// SplitMix64 seeded with 1950.
    fn new() -> Self {
        let mut state = 1950u64;
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (((z ^ (z >> 31)) >> 11) + 1) as f64 / 9_007_199_254_740_992.0
        };
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for i in 0..71 {
            let (u1, u2) = (next(), next());
            let e = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            x.push(1950.0 + i as f64);
            y.push(14.0 + 0.018 * i as f64 + 0.12 * e);
        }
        Years { x, y }
    }
}

impl AutodiffModel<3> for Years {
    fn potential<S: Scalar>(&self, p: &[S; 3]) -> S {
        let (a, b, t) = (p[0], p[1], p[2]);
        let half = S::from_f64(0.5);
        let mut squares = S::from_f64(0.0);
        for (&xi, &yi) in self.x.iter().zip(&self.y) {
            let r = S::from_f64(yi) - a - b * S::from_f64(xi);
            squares += r * r;
        }
        half * squares * (-S::from_f64(2.0) * t).exp()
            + S::from_f64(self.x.len() as f64) * t
            + half * (a / S::from_f64(100.0)) * (a / S::from_f64(100.0))
            + half * (b / S::from_f64(10.0)) * (b / S::from_f64(10.0))
            + half * t * t
    }
}

/// N(μ, Σ) with the precision P = Σ⁻¹: U = ½ (x − μ)ᵀ P (x − μ).
struct Dense<const D: usize> {
    mean: [f64; D],
    precision: [[f64; D]; D],
}

impl<const D: usize> AutodiffModel<D> for Dense<D> {
    fn potential<S: Scalar>(&self, x: &[S; D]) -> S {
        let d: [S; D] = core::array::from_fn(|i| x[i] - S::from_f64(self.mean[i]));
        let mut u = S::from_f64(0.0);
        for i in 0..D {
            for j in 0..D {
                u += d[i] * S::from_f64(self.precision[i][j]) * d[j];
            }
        }
        S::from_f64(0.5) * u
    }
}

/// The toys, one closed form each.
struct Toy(&'static str);

impl<const D: usize> AutodiffModel<D> for Toy {
    fn potential<S: Scalar>(&self, z: &[S; D]) -> S {
        let c = S::from_f64;
        let t = z[0];
        match self.0 {
            // (θ + 4)(θ + 1)(θ − 1)(θ − 3)/14 + 1/2.
            "double-well" => {
                (t + c(4.0)) * (t + c(1.0)) * (t - c(1.0)) * (t - c(3.0)) / c(14.0) + c(0.5)
            }
            "quadratic" => c(0.5) * t * t,
            "quartic" => t * t * t * t - c(2.0) * t * t,
            // (z₁ − z₂²/4)²/2 + z₂²/8.
            "dist1" => {
                let r = t - c(0.25) * z[1] * z[1];
                c(0.5) * r * r + c(0.125) * z[1] * z[1]
            }
            // −log(½N(z; 0, Σ₊) + ½N(z; 0, Σ₋)), Σ± = [[2, ±1.8], [±1.8, 2]].
            "dist2" => {
                let det = 2.0 * 2.0 - 1.8 * 1.8;
                let quadratic = |sign: f64| {
                    (c(2.0) * t * t - c(2.0 * 1.8 * sign) * t * z[1] + c(2.0) * z[1] * z[1])
                        / c(det)
                };
                let (a, b) = (-c(0.5) * quadratic(1.0), -c(0.5) * quadratic(-1.0));
                let log_normal = 0.5f64.ln() - (2.0 * std::f64::consts::PI).ln() - 0.5 * det.ln();
                -(a.log_add_exp(b) + c(log_normal))
            }
            // θ₁⁴/10 + (4(θ₂ + 1.2) − θ₁²)²/2.
            "recipe-2d" => {
                let s = c(4.0) * (z[1] + c(1.2)) - t * t;
                c(0.1) * t * t * t * t + c(0.5) * s * s
            }
            _ => c(f64::NAN),
        }
    }
}

fn toy<const D: usize>(
    name: &'static str,
    target: impl AnalyticToy<D>,
    centre: [f64; D],
    scale: [f64; D],
    seed: u64,
) {
    let points = points(centre, scale, seed);
    check(name, &Toy(name), &points, |x, g| {
        target.energy_and_gradient(x, g)
    });
}

/// Runs `body` on a thread with a large stack: a tape of `CAPACITY` nodes
/// is 2 MB, and `ReverseGradient::new` returns it by value.
fn big_stack(body: impl FnOnce() + Send) {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn_scoped(scope, body)
            .unwrap()
            .join()
            .unwrap();
    });
}

// ---- The checks ----------------------------------------------------------

#[test]
fn logistic_regressions() {
    big_stack(|| {
        let german = LogisticRegression::<25, 1>::german_credit();
        let model = Logistic {
            rows: german.design.clone(),
            labels: german.labels.clone(),
            prior_variance: german.prior_variance,
        };
        let at = points([0.0; 25], [0.5; 25], 1);
        check("german (LogisticRegression)", &model, &at, |x, g| {
            german.potential_and_gradient(x, g)
        });
        let runtime = LogisticRegressionModel::builtin(LogregDataset::German).unwrap();
        check(
            "german (run-time model)",
            &model,
            &at,
            model_gradient(&runtime),
        );

        let australian = LogisticRegressionModel::builtin(LogregDataset::Australian).unwrap();
        let at = points([0.0; 15], [0.5; 15], 2);
        check(
            "australian",
            &logistic_from::<15>(&australian),
            &at,
            model_gradient(&australian),
        );

        let heart = LogisticRegressionModel::builtin(LogregDataset::Heart).unwrap();
        let at = points([0.0; 14], [0.5; 14], 3);
        check(
            "heart",
            &logistic_from::<14>(&heart),
            &at,
            model_gradient(&heart),
        );
    });
}

#[test]
fn gaussians() {
    big_stack(|| {
        let target = CorrelatedGaussian::<100>::paper();
        let at = points([0.0; 100], [5.0; 100], 4);
        check(
            "gaussian (100-D correlated)",
            &Correlated::<100> { a: 4.0, c: 1.0 },
            &at,
            |x, g| target.potential_and_gradient(x, g),
        );

        let linear = LinearGaussianModel::<10, 1>::simulate(100, 1.0, 0.5, 11);
        let model = Linear {
            regressors: linear.regressors.clone(),
            observations: linear.observations.clone(),
            noise_variance: linear.noise_variance,
        };
        let at = points([0.0; 10], [2.0; 10], 5);
        check("linear-gaussian", &model, &at, |x, g| {
            linear.potential_and_gradient(x, g)
        });

        // gaussian-cov: Σ = LLᵀ + I from a random L, as its CSV file would hold it.
        const D: usize = 6;
        let mut r = rng(6);
        let l: Vec<f64> = (0..D * D).map(|_| normal(&mut r)).collect();
        let mut csv = String::new();
        for i in 0..D {
            let row: Vec<String> = (0..D)
                .map(|j| {
                    let s: f64 = (0..D).map(|k| l[i * D + k] * l[j * D + k]).sum();
                    format!("{:e}", s + if i == j { 1.0 } else { 0.0 })
                })
                .collect();
            csv += &(row.join(",") + "\n");
        }
        let table = parse_table(&csv, "sigma.csv", TableFormat::CSV_NO_HEADER).unwrap();
        let mean: [f64; D] = core::array::from_fn(|_| normal(&mut r));
        let target = GaussianCovariance::from_table(&table)
            .unwrap()
            .with_mean(mean.to_vec())
            .unwrap();
        let model = Dense::<D> {
            mean,
            precision: core::array::from_fn(|i| {
                core::array::from_fn(|j| target.precision()[(i, j)])
            }),
        };
        let at = points(mean, [3.0; D], 7);
        check("gaussian-cov (6-D)", &model, &at, model_gradient(&target));
    });
}

#[test]
fn funnels_and_hierarchies() {
    big_stack(|| {
        let funnel = Funnel::neal();
        let mut at = Vec::new();
        // Body, neck (v = −4, −6 with x at the conditional scale) and mouth.
        for (v, x_scale, seed) in [
            (0.3, 2.0, 8),
            (-4.0, 0.135, 9),
            (-6.0, 0.05, 10),
            (5.0, 20.0, 11),
        ] {
            let mut scale = [x_scale; 10];
            scale[0] = 0.5;
            let mut centre = [0.0; 10];
            centre[0] = v;
            at.extend(points(centre, scale, seed));
        }
        check("funnel", &NealFunnel, &at, model_gradient(&funnel));

        let schools = EightSchoolsCentered::new();
        let mut at = Vec::new();
        for (log_tau, seed) in [(0.5, 12), (-3.0, 13), (-5.0, 14), (2.0, 15), (4.0, 16)] {
            let tau = f64::exp(log_tau);
            for mut x in points([0.0; 10], [1.0; 10], seed) {
                let mu = 10.0 * x[8];
                for theta in &mut x[..8] {
                    *theta = mu + 2.0 * tau * *theta;
                }
                x[8] = mu;
                x[9] = log_tau + 0.1 * x[9];
                at.push(x);
            }
        }
        check(
            "eight-schools-centered",
            &SchoolsCentred,
            &at,
            model_gradient(&schools),
        );

        let sv = StochasticVolatility::new();
        let model = Volatility {
            log_squared: sv.returns().iter().map(|y| (y * y).ln()).collect(),
        };
        let mut at = Vec::new();
        for (mu, a, s, jitter, seed) in [
            (-1.0, 1.8, -1.4, 0.1, 17),
            (0.5, -0.3, 0.2, 0.5, 18),
            (-2.0, 2.8, -3.0, 0.05, 19),
        ] {
            let mut centre = [0.0; 103];
            centre[0] = mu;
            centre[1] = a;
            centre[2] = s;
            centre[3..].copy_from_slice(sv.true_volatility());
            let mut scale = [jitter; 103];
            scale[..3].copy_from_slice(&[0.2, 0.2, 0.2]);
            at.extend(points(centre, scale, seed));
        }
        check("stochastic-volatility", &model, &at, model_gradient(&sv));

        let years = qnmc_host::targets::YearsRegression::new();
        let at = points([-21.0, 0.018, -2.1], [5.0, 0.003, 0.5], 20);
        check(
            "years-regression",
            &Years::new(),
            &at,
            model_gradient(&years),
        );

        // eight_schools_noncentered from posteriordb, when the shared data are here.
        let Some(root) = qnmc_host::shared_data::for_test("autodiff eight_schools_noncentered")
        else {
            return;
        };
        let pdb = Posteriordb::eight_schools(&root.join("posteriordb/posterior_database")).unwrap();
        let at = points(
            [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 4.0, 1.5],
            [2.0; 10],
            21,
        );
        check(
            "eight-schools (noncentered)",
            &SchoolsNoncentred,
            &at,
            model_gradient(&pdb),
        );

        let root = root.join("posteriordb/posterior_database");
        let data = PosteriordbPosterior::SblrcBlr.read_data(&root).unwrap();
        let blr = Blr {
            rows: data["X"]
                .as_array()
                .unwrap()
                .iter()
                .map(|row| core::array::from_fn(|k| row[k].as_f64().unwrap()))
                .collect(),
            y: numbers(&data["y"]),
        };
        let pdb = Posteriordb::sblrc_blr(&root).unwrap();
        let at = points([0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.5; 6], 28);
        check("sblrc-blr", &blr, &at, model_gradient(&pdb));

        let data = PosteriordbPosterior::ArK.read_data(&root).unwrap();
        assert_eq!(data["K"].as_f64(), Some(5.0));
        let ark = Ark {
            y: numbers(&data["y"]),
        };
        let pdb = Posteriordb::ark(&root).unwrap();
        let at = points([0.0; 7], [1.0; 7], 29);
        check("arK", &ark, &at, model_gradient(&pdb));
    });
}

#[test]
fn toys() {
    big_stack(|| {
        toy("double-well", DoubleWell::paper(), [0.0], [4.0], 22);
        toy("quadratic", RecipeQuadratic::paper(), [0.0], [3.0], 23);
        toy("quartic", RecipeQuartic::paper(), [0.0], [2.0], 24);
        toy("dist1", AmagoldDist1::paper(), [2.0, 0.0], [4.0, 4.0], 25);
        toy("dist2", AmagoldDist2::paper(), [0.0, 0.0], [3.0, 3.0], 26);
        toy(
            "recipe-2d",
            RecipeCorrelated2d::paper(),
            [0.0, -1.2],
            [2.0, 1.0],
            27,
        );
    });
}

/// German credit on a tape too small: NaN through `Potential`, the error
/// from the checked call, never a panic; a NaN from the model (a NaN
/// coordinate) comes back as NaN from both modes.
#[test]
fn small_tape_and_nan() {
    let german = LogisticRegression::<25, 1>::german_credit();
    let model = Logistic {
        rows: german.design.clone(),
        labels: german.labels.clone(),
        prior_variance: german.prior_variance,
    };
    let small = Box::new(ReverseGradient::<_, f64, 1000>::new(&model));
    let mut g = [0.0; 25];
    assert!(small.potential_and_gradient(&[0.1; 25], &mut g).is_nan());
    assert!(g.iter().all(|v| v.is_nan()));
    assert_eq!(
        small.try_potential_and_gradient(&[0.1; 25], &mut g),
        Err(Error::TapeFull { capacity: 1000 })
    );
    let mut x = [0.1; 25];
    x[3] = f64::NAN;
    let forward = ForwardGradient::<_, 8>::new(&model);
    assert!(forward.potential_and_gradient(&x, &mut g).is_nan());
    assert!(g[3].is_nan());
    big_stack(move || {
        let reverse = Box::new(ReverseGradient::<_, f64, CAPACITY>::new(&model));
        let mut g = [0.0; 25];
        assert!(reverse.potential_and_gradient(&x, &mut g).is_nan());
        assert!(g[3].is_nan());
    });
}
