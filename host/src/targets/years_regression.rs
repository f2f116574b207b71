//! `years-regression`: a Bayesian linear regression whose intercept and slope
//! have posterior correlation ≈ −1, because the covariate is not centred.
//!
//! Data (N = 71, fully deterministic):
//! - x_i = 1950 + i, i = 0, …, 70 (calendar years 1950…2020), used as they are;
//! - y_i = 14 + 0.018 (x_i − 1950) + 0.12 ε_i, where ε_i are standard normals
//!   made by Box–Muller from the SplitMix64 generator seeded with 1950 (two
//!   64-bit outputs per normal, see [`normals`]).
//!
//! Model: y_i ~ N(a + b x_i, σ²), a ~ N(0, 100²), b ~ N(0, 10²), log σ ~ N(0, 1).
//! Unconstrained coordinates (a, b, log σ); the prior is put on log σ itself, so
//! there is no Jacobian term. Reported quantities: a, b, sigma.
//!
//! With x̄ = 1985 and sd(x) ≈ 20.5 the conditional posterior correlation of a
//! and b is ≈ −Σx / √(N Σx²) ≈ −0.99995 (computed exactly by
//! [`YearsRegression::ab_correlation`]); a is the value of the line in year 0,
//! about −21 with sd ≈ 1.4, while b ≈ 0.018 has sd ≈ 7·10⁻⁴.
//!
//! # The exact posterior
//!
//! Given σ, (a, b) is Gaussian: precision P = Λ₀ + XᵀX/σ² (Λ₀ the prior
//! precision), mean P⁻¹Xᵀy/σ². Integrating (a, b) out,
//!
//! ```text
//! log p(t | y) = −N t − ½ log det P(t) − ½ Q(t) − ½ t² + const,   t = log σ,
//! Q(t) = min over (a, b) of ‖y − a − b x‖²/σ² + a²/100² + b²/10²,
//! ```
//!
//! a smooth, nearly Gaussian density (sd ≈ 0.085). The moments of a, b and
//! σ = eᵗ are 1-D integrals over t, computed by the trapezoid rule on a uniform
//! grid of [`QUADRATURE_POINTS`] points over the mode ± [`QUADRATURE_HALF_WIDTH`]
//! curvature sds (for a smooth integrand that decays this fast the trapezoid
//! rule converges geometrically; halving the grid and the width changes the
//! moments by < 10⁻¹² relative, see the tests), with the law of total variance
//! Var(a) = E[Var(a | σ)] + Var(E[a | σ]) for a and b.
//!
//! All of it is done in the centred coordinates (c, b), c = a + b x̄, where
//! the data part of P is diagonal (diag(N, Σ(x − x̄)²)/σ²) and well
//! conditioned; the map (c, b) ↦ (a, b) has determinant 1, so log det P is the
//! same. The uncentred 2 × 2 system has condition number ≈ 10¹⁰ and is never
//! solved.

use crate::model::{KnownPosterior, Model};

/// Number of observations (years 1950…2020).
pub const N: usize = 71;
/// First year.
pub const FIRST_YEAR: f64 = 1950.0;
/// Seed of the SplitMix64 generator that makes the noise.
pub const SEED: u64 = 1950;
/// Points of the trapezoid grid over log σ in [`YearsRegression::known_posterior`].
pub const QUADRATURE_POINTS: usize = 4001;
/// Half-width of that grid, in units of the curvature sd of log σ at the mode.
pub const QUADRATURE_HALF_WIDTH: f64 = 20.0;

const PRIOR_SD_A: f64 = 100.0;
const PRIOR_SD_B: f64 = 10.0;
const PRIOR_SD_LOG_SIGMA: f64 = 1.0;

/// The regression on calendar years; see the module documentation.
#[derive(Debug, Clone)]
pub struct YearsRegression {
    x: Vec<f64>,
    y: Vec<f64>,
}

/// Posterior mean and sd of a, b and σ (see [`YearsRegression::posterior_moments`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct YearsPosterior {
    /// Means of (a, b, σ).
    pub mean: [f64; 3],
    /// Standard deviations of (a, b, σ).
    pub sd: [f64; 3],
    /// Posterior mode of t = log σ (of the marginal density of t).
    pub log_sigma_mode: f64,
    /// Curvature sd of t at that mode (the grid's unit).
    pub log_sigma_scale: f64,
}

/// SplitMix64 (Steele, Lea & Flood 2014): one 64-bit output per call.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `n` standard normals: for each, u₁, u₂ uniform on (0, 1] from the top 53
/// bits of two SplitMix64 outputs, ε = √(−2 ln u₁) cos(2π u₂).
fn normals(seed: u64, n: usize) -> Vec<f64> {
    let mut state = seed;
    let mut uniform = || ((splitmix64(&mut state) >> 11) + 1) as f64 / 9_007_199_254_740_992.0;
    (0..n)
        .map(|_| {
            let u1 = uniform();
            let u2 = uniform();
            (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        })
        .collect()
}

/// Sufficient statistics in centred coordinates.
struct Centred {
    /// x̄.
    x_mean: f64,
    /// ȳ.
    y_mean: f64,
    /// Σ(x − x̄)².
    sxx: f64,
    /// Σ(x − x̄) y.
    sxy: f64,
    /// Least-squares residual sum of squares Σ(y − ȳ − b̂ (x − x̄))².
    rss: f64,
}

/// What is known given t = log σ: the log marginal density of t (up to a
/// constant) and the conditional mean and covariance of (a, b).
struct Conditional {
    log_density: f64,
    mean_a: f64,
    mean_b: f64,
    var_a: f64,
    var_b: f64,
}

impl Centred {
    fn conditional(&self, t: f64) -> Conditional {
        let n = N as f64;
        let inv_s2 = (-2.0 * t).exp();
        let (pa, pb) = (
            1.0 / (PRIOR_SD_A * PRIOR_SD_A),
            1.0 / (PRIOR_SD_B * PRIOR_SD_B),
        );
        let xm = self.x_mean;
        // Precision of (c, b), c = a + b x̄: prior (c − x̄ b)²/A² + b²/B² plus
        // the data's diag(N, Sxx)/σ².
        let p_cc = pa + n * inv_s2;
        let p_cb = -xm * pa;
        let p_bb = xm * xm * pa + pb + self.sxx * inv_s2;
        let det = p_cc * p_bb - p_cb * p_cb;
        let (h_c, h_b) = (n * self.y_mean * inv_s2, self.sxy * inv_s2);
        let m_c = (p_bb * h_c - p_cb * h_b) / det;
        let m_b = (p_cc * h_b - p_cb * h_c) / det;
        let (s_cc, s_cb, s_bb) = (p_bb / det, -p_cb / det, p_cc / det);
        let b_hat = self.sxy / self.sxx;
        let m_a = m_c - xm * m_b;
        // Q at its minimiser, each term ≥ 0 (no cancellation).
        let q = (self.rss + n * (self.y_mean - m_c).powi(2) + self.sxx * (m_b - b_hat).powi(2))
            * inv_s2
            + m_a * m_a * pa
            + m_b * m_b * pb;
        let log_density =
            -n * t - 0.5 * det.ln() - 0.5 * q - 0.5 * (t / PRIOR_SD_LOG_SIGMA).powi(2);
        Conditional {
            log_density,
            mean_a: m_a,
            mean_b: m_b,
            var_a: s_cc - 2.0 * xm * s_cb + xm * xm * s_bb,
            var_b: s_bb,
        }
    }
}

impl YearsRegression {
    /// The data set of the module documentation.
    pub fn new() -> Self {
        let x: Vec<f64> = (0..N).map(|i| FIRST_YEAR + i as f64).collect();
        let noise = normals(SEED, N);
        let y = x
            .iter()
            .zip(&noise)
            .map(|(&x, &e)| 14.0 + 0.018 * (x - FIRST_YEAR) + 0.12 * e)
            .collect();
        YearsRegression { x, y }
    }

    /// The posterior correlation of a and b given σ = 0.12 (it hardly
    /// depends on σ, since the prior's precision is negligible next to the
    /// data's): from the 2 × 2 posterior precision
    /// [[N/σ² + 1/100², Σx/σ²], [Σx/σ², Σx²/σ² + 1/10²]].
    pub fn ab_correlation(&self) -> f64 {
        let s2 = 0.12f64 * 0.12;
        let sx: f64 = self.x.iter().sum();
        let sxx: f64 = self.x.iter().map(|x| x * x).sum();
        let paa = N as f64 / s2 + 1.0 / (PRIOR_SD_A * PRIOR_SD_A);
        let pbb = sxx / s2 + 1.0 / (PRIOR_SD_B * PRIOR_SD_B);
        let pab = sx / s2;
        // The inverse of [[p, q], [q, r]] has correlation −q / √(p r).
        -pab / (paa * pbb).sqrt()
    }

    fn centred(&self) -> Centred {
        let n = N as f64;
        let x_mean = self.x.iter().sum::<f64>() / n;
        let y_mean = self.y.iter().sum::<f64>() / n;
        let sxx: f64 = self.x.iter().map(|x| (x - x_mean).powi(2)).sum();
        let sxy: f64 = self
            .x
            .iter()
            .zip(&self.y)
            .map(|(x, y)| (x - x_mean) * y)
            .sum();
        let b_hat = sxy / sxx;
        let rss = self
            .x
            .iter()
            .zip(&self.y)
            .map(|(x, y)| (y - y_mean - b_hat * (x - x_mean)).powi(2))
            .sum();
        Centred {
            x_mean,
            y_mean,
            sxx,
            sxy,
            rss,
        }
    }

    /// Posterior means and sds of (a, b, σ) by the trapezoid rule over
    /// t = log σ with `points` grid points on the mode ± `half_width` curvature
    /// sds (see the module documentation; [`known_posterior`](Model::known_posterior)
    /// uses [`QUADRATURE_POINTS`] and [`QUADRATURE_HALF_WIDTH`]).
    pub fn posterior_moments(&self, points: usize, half_width: f64) -> YearsPosterior {
        let c = self.centred();
        let f = |t: f64| c.conditional(t).log_density;
        // The mode: Newton on f with central differences, from the
        // least-squares σ (f is concave near it).
        let mut t = 0.5 * (c.rss / N as f64).ln();
        let h = 1e-4;
        let mut curvature = 1.0;
        for _ in 0..50 {
            let (fp, f0, fm) = (f(t + h), f(t), f(t - h));
            let d1 = (fp - fm) / (2.0 * h);
            curvature = -(fp - 2.0 * f0 + fm) / (h * h);
            let step = d1 / curvature.max(1e-12);
            t += step;
            if step.abs() < 1e-12 {
                break;
            }
        }
        let scale = 1.0 / curvature.sqrt();
        let points = points.max(3);
        let start = t - half_width * scale;
        let dt = 2.0 * half_width * scale / (points - 1) as f64;
        let grid: Vec<(f64, Conditional)> = (0..points)
            .map(|i| {
                let ti = start + i as f64 * dt;
                (ti, c.conditional(ti))
            })
            .collect();
        let top = grid
            .iter()
            .map(|(_, g)| g.log_density)
            .fold(f64::NEG_INFINITY, f64::max);
        // Trapezoid weights (end points halved), normalised.
        let mut weights: Vec<f64> = grid
            .iter()
            .enumerate()
            .map(|(i, (_, g))| {
                let end = i == 0 || i == points - 1;
                (g.log_density - top).exp() * if end { 0.5 } else { 1.0 }
            })
            .collect();
        let total: f64 = weights.iter().sum();
        weights.iter_mut().for_each(|w| *w /= total);
        let expect = |value: &dyn Fn(f64, &Conditional) -> f64| -> f64 {
            grid.iter()
                .zip(&weights)
                .map(|((ti, g), w)| w * value(*ti, g))
                .sum()
        };
        let mean_a = expect(&|_, g| g.mean_a);
        let mean_b = expect(&|_, g| g.mean_b);
        let mean_s = expect(&|ti, _| ti.exp());
        // Law of total variance, centred at the overall mean.
        let var_a = expect(&|_, g| g.var_a + (g.mean_a - mean_a).powi(2));
        let var_b = expect(&|_, g| g.var_b + (g.mean_b - mean_b).powi(2));
        let var_s = expect(&|ti, _| (ti.exp() - mean_s).powi(2));
        YearsPosterior {
            mean: [mean_a, mean_b, mean_s],
            sd: [var_a.sqrt(), var_b.sqrt(), var_s.sqrt()],
            log_sigma_mode: t,
            log_sigma_scale: scale,
        }
    }
}

impl Default for YearsRegression {
    fn default() -> Self {
        Self::new()
    }
}

impl Model for YearsRegression {
    fn name(&self) -> String {
        "years-regression".into()
    }

    fn dimension(&self) -> usize {
        3
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        let (a, b, log_sigma) = (x[0], x[1], x[2]);
        let inv_var = (-2.0 * log_sigma).exp();
        let (mut sr, mut srx, mut srr) = (0.0, 0.0, 0.0);
        for (&xi, &yi) in self.x.iter().zip(&self.y) {
            let r = yi - a - b * xi;
            sr += r;
            srx += r * xi;
            srr += r * r;
        }
        let n = N as f64;
        let u = 0.5 * srr * inv_var
            + n * log_sigma
            + 0.5 * (a / PRIOR_SD_A).powi(2)
            + 0.5 * (b / PRIOR_SD_B).powi(2)
            + 0.5 * (log_sigma / PRIOR_SD_LOG_SIGMA).powi(2);
        gradient[0] = -sr * inv_var + a / (PRIOR_SD_A * PRIOR_SD_A);
        gradient[1] = -srx * inv_var + b / (PRIOR_SD_B * PRIOR_SD_B);
        gradient[2] = -srr * inv_var + n + log_sigma / (PRIOR_SD_LOG_SIGMA * PRIOR_SD_LOG_SIGMA);
        u
    }

    fn output_names(&self) -> Vec<String> {
        vec!["a".into(), "b".into(), "sigma".into()]
    }

    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        out[0] = x[0];
        out[1] = x[1];
        out[2] = x[2].exp();
    }

    fn known_posterior(&self) -> Option<KnownPosterior> {
        let p = self.posterior_moments(QUADRATURE_POINTS, QUADRATURE_HALF_WIDTH);
        Some(KnownPosterior {
            source: format!(
                "exact: (a, b) integrated out given sigma, trapezoid rule over log sigma \
                 ({QUADRATURE_POINTS} points, mode +- {QUADRATURE_HALF_WIDTH} sd; relative error < 1e-12)"
            ),
            mean: p.mean.to_vec(),
            sd: p.sd.to_vec(),
            mean_mcse: None,
            sd_mcse: None,
            gaussian_marginals: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelRng;
    use crate::targets::testing::uniform;
    use nalgebra::{Matrix3, Vector3};
    use rand_core::SeedableRng;

    #[test]
    fn gradient_matches_finite_differences() {
        let m = YearsRegression::new();
        let x = [-20.0, 0.0175, -2.0];
        let mut g = [0.0; 3];
        m.potential_and_gradient(&x, &mut g);
        for i in 0..3 {
            let h = 1e-6 * x[i].abs().max(1e-3);
            let (mut xp, mut xm) = (x, x);
            xp[i] += h;
            xm[i] -= h;
            let mut scratch = [0.0; 3];
            let fd = (m.potential_and_gradient(&xp, &mut scratch)
                - m.potential_and_gradient(&xm, &mut scratch))
                / (2.0 * h);
            assert!(
                (fd - g[i]).abs() <= 1e-5 * g[i].abs().max(1.0),
                "coordinate {i}: {fd} vs {}",
                g[i]
            );
        }
    }

    #[test]
    fn intercept_and_slope_are_almost_perfectly_anticorrelated() {
        let rho = YearsRegression::new().ab_correlation();
        assert!(rho < -0.9999 && rho > -1.0, "{rho}");
    }

    #[test]
    fn data_are_deterministic() {
        let a = YearsRegression::new();
        let b = YearsRegression::new();
        assert_eq!(a.y, b.y);
        assert_eq!(a.x[0], 1950.0);
        assert_eq!(a.x[N - 1], 2020.0);
        let e = normals(SEED, 1000);
        let mean = e.iter().sum::<f64>() / 1000.0;
        let var = e.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 999.0;
        assert!(
            mean.abs() < 0.15 && (var - 1.0).abs() < 0.15,
            "{mean} {var}"
        );
    }

    #[test]
    fn quadrature_has_converged() {
        // A grid a quarter as fine and 60 % as wide gives the same moments:
        // the trapezoid rule's error on this grid is far below 1e-12.
        let m = YearsRegression::new();
        let fine = m.posterior_moments(QUADRATURE_POINTS, QUADRATURE_HALF_WIDTH);
        let coarse = m.posterior_moments(1001, 12.0);
        for j in 0..3 {
            let dm = (fine.mean[j] - coarse.mean[j]).abs() / fine.sd[j];
            let ds = (fine.sd[j] - coarse.sd[j]).abs() / fine.sd[j];
            eprintln!(
                "{j}: mean {:.15e} sd {:.15e}; coarse grid differs by {dm:.1e}, {ds:.1e} sd",
                fine.mean[j], fine.sd[j]
            );
            assert!(dm < 1e-12 && ds < 1e-12, "{j}: {dm:e} {ds:e}");
        }
        // The marginal of log sigma at the grid's ends is negligible (the
        // right tail is the heavier one, σ^−(N−2)-like: e^−87 there).
        let c = m.centred();
        let top = c.conditional(fine.log_sigma_mode).log_density;
        for end in [-1.0, 1.0] {
            let t = fine.log_sigma_mode + end * QUADRATURE_HALF_WIDTH * fine.log_sigma_scale;
            let drop = top - c.conditional(t).log_density;
            assert!(drop > 60.0, "log density {drop} below the mode at {t}");
        }
        let known = m.known_posterior().unwrap();
        assert_eq!(known.mean, fine.mean.to_vec());
        assert_eq!(known.sd, fine.sd.to_vec());
        // The numbers the module documentation quotes.
        assert!((fine.mean[0] + 21.0).abs() < 2.0 && (fine.sd[0] - 1.4).abs() < 0.2);
        assert!((fine.mean[1] - 0.018).abs() < 0.001 && (fine.sd[1] - 7e-4).abs() < 1e-4);
        assert!((fine.mean[2] - 0.12).abs() < 0.03);
        assert!((fine.log_sigma_scale - 0.085).abs() < 0.01);
    }

    /// One standard normal by Box–Muller (the cosine half).
    fn normal(rng: &mut ModelRng) -> f64 {
        let u1 = 0.5 * (1.0 - uniform(rng)); // (0, 1]
        let u2 = 0.5 * (1.0 + uniform(rng));
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// The analytic Hessian of U in the model's own coordinates (a, b, log σ).
    fn hessian(m: &YearsRegression, x: &[f64; 3]) -> Matrix3<f64> {
        let inv_var = (-2.0 * x[2]).exp();
        let (mut sx, mut sxx, mut sr, mut srx, mut srr) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for (&xi, &yi) in m.x.iter().zip(&m.y) {
            let r = yi - x[0] - x[1] * xi;
            sx += xi;
            sxx += xi * xi;
            sr += r;
            srx += r * xi;
            srr += r * r;
        }
        let n = N as f64;
        Matrix3::new(
            n * inv_var + 1.0 / (PRIOR_SD_A * PRIOR_SD_A),
            sx * inv_var,
            2.0 * sr * inv_var,
            sx * inv_var,
            sxx * inv_var + 1.0 / (PRIOR_SD_B * PRIOR_SD_B),
            2.0 * srx * inv_var,
            2.0 * sr * inv_var,
            2.0 * srx * inv_var,
            2.0 * srr * inv_var + 1.0,
        )
    }

    /// An independent computation: self-normalised importance sampling of the
    /// full 3-D posterior, U from the model itself (no marginalisation, no
    /// centring), proposal a multivariate t (ν = 8) on the Laplace
    /// approximation at the mode of U. Its standard errors are the
    /// delta-method ones, √(Σ wᵢ² (fᵢ − f̂)²) / Σ wᵢ; the quadrature must agree
    /// within 4.5 of them for each of the six moments (a correct quadrature
    /// fails this with probability < 10⁻⁴; the seed is fixed anyway).
    #[test]
    fn quadrature_agrees_with_importance_sampling() {
        let m = YearsRegression::new();
        let exact = m.posterior_moments(QUADRATURE_POINTS, QUADRATURE_HALF_WIDTH);
        // Mode of U by Newton from a rough start (the line of the data
        // generator, 14 + 0.018 (x − 1950), and σ = e⁻² ≈ 0.14).
        let mut x = [14.0 - 0.018 * FIRST_YEAR, 0.018, -2.0];
        let mut g = [0.0; 3];
        for _ in 0..100 {
            m.potential_and_gradient(&x, &mut g);
            let step = hessian(&m, &x)
                .cholesky()
                .expect("U is convex near its mode")
                .solve(&Vector3::from(g));
            for i in 0..3 {
                x[i] -= step[i];
            }
            if step[2].abs() < 1e-13 && step[1].abs() < 1e-15 {
                break;
            }
        }
        m.potential_and_gradient(&x, &mut g);
        assert!(g.iter().all(|v| v.abs() < 1e-6), "not a mode: {g:?}");
        // x = mode + L⁻ᵀ z with H = L Lᵀ, z ~ t_ν(0, I):
        // log q = Σ log Lᵢᵢ − (ν + 3)/2 · log(1 + |z|²/ν) + const.
        let l = hessian(&m, &x).cholesky().unwrap().l();
        let lt = l.transpose();
        let log_det: f64 = (0..3).map(|i| l[(i, i)].ln()).sum();
        let nu = 8.0;
        let draws = 2_000_000;
        let mut rng = ModelRng::seed_from_u64(20250101);
        let mut samples = Vec::with_capacity(draws);
        let mut log_w = Vec::with_capacity(draws);
        for _ in 0..draws {
            let z = Vector3::new(normal(&mut rng), normal(&mut rng), normal(&mut rng));
            let chi2: f64 = (0..8).map(|_| normal(&mut rng).powi(2)).sum();
            let z = z * (nu / chi2).sqrt();
            let d = lt.solve_upper_triangular(&z).unwrap();
            let p = [x[0] + d[0], x[1] + d[1], x[2] + d[2]];
            let log_q = log_det - 0.5 * (nu + 3.0) * (1.0 + z.norm_squared() / nu).ln();
            let u = m.potential_and_gradient(&p, &mut g);
            log_w.push(-u - log_q);
            samples.push([p[0], p[1], p[2].exp()]);
        }
        let top = log_w.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = log_w.iter().map(|l| (l - top).exp()).collect();
        let total: f64 = w.iter().sum();
        let ess = total * total / w.iter().map(|v| v * v).sum::<f64>();
        assert!(ess > 0.5 * draws as f64, "importance ESS {ess}");
        for j in 0..3 {
            let mean = samples.iter().zip(&w).map(|(s, w)| w * s[j]).sum::<f64>() / total;
            let var = samples
                .iter()
                .zip(&w)
                .map(|(s, w)| w * (s[j] - mean).powi(2))
                .sum::<f64>()
                / total;
            let se_mean = samples
                .iter()
                .zip(&w)
                .map(|(s, w)| (w * (s[j] - mean)).powi(2))
                .sum::<f64>()
                .sqrt()
                / total;
            let se_var = samples
                .iter()
                .zip(&w)
                .map(|(s, w)| (w * ((s[j] - mean).powi(2) - var)).powi(2))
                .sum::<f64>()
                .sqrt()
                / total;
            let sd = var.sqrt();
            let se_sd = se_var / (2.0 * sd);
            let z_mean = (exact.mean[j] - mean) / se_mean;
            let z_sd = (exact.sd[j] - sd) / se_sd;
            eprintln!(
                "{j}: quadrature mean {:.10e} sd {:.10e}; importance sampling mean {mean:.10e} ± {se_mean:.2e}, sd {sd:.10e} ± {se_sd:.2e}; z {z_mean:+.2} {z_sd:+.2}; ESS {ess:.0}",
                exact.mean[j], exact.sd[j]
            );
            assert!(
                z_mean.abs() < 4.5 && z_sd.abs() < 4.5,
                "{j}: z {z_mean} {z_sd}"
            );
        }
    }
}
