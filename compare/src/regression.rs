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
//! With x̄ ≈ 1985 and sd(x) ≈ 20.5 the conditional posterior correlation of a
//! and b is −Σx / √(N Σx²) ≈ −0.99995 (computed exactly by
//! [`YearsRegression::ab_correlation`]); a is the value of the line in year 0,
//! about −21 with sd ≈ 1.4, while b ≈ 0.018 has sd ≈ 7·10⁻⁴.

use qnmc_host::model::Model;

/// Number of observations (years 1950…2020).
pub const N: usize = 71;
/// First year.
pub const FIRST_YEAR: f64 = 1950.0;
/// Seed of the SplitMix64 generator that makes the noise.
pub const SEED: u64 = 1950;

const PRIOR_SD_A: f64 = 100.0;
const PRIOR_SD_B: f64 = 10.0;
const PRIOR_SD_LOG_SIGMA: f64 = 1.0;

/// The regression on calendar years; see the module documentation.
#[derive(Debug, Clone)]
pub struct YearsRegression {
    x: Vec<f64>,
    y: Vec<f64>,
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

    /// The posterior correlation of a and b given σ (the same for every σ, so
    /// also the marginal one): from the 2 × 2 posterior precision
    /// [[N/σ² + 1/100², Σx/σ²], [Σx/σ², Σx²/σ² + 1/10²]] at σ = 0.12.
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
