//! How close a set of 2-D samples is to the exact Gaussian posterior
//! N(μ, Σ): the checks that turn Figure 1's picture into numbers.

use qnmc::random::standard_normal;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use super::DIMENSION;
use qnmc_host::targets::Posterior;

/// The 0.95 quantile of χ² with 2 degrees of freedom, −2 ln 0.05: the
/// squared Mahalanobis radius of the exact posterior's 95 % ellipse.
pub const CHI2_2_95: f64 = 5.991_464_547_107_979;

/// A set of samples measured against the exact posterior, in posterior
/// units (Σ = L Lᵀ, W = L⁻¹ Ĉ L⁻ᵀ the whitened sample covariance).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// ‖L⁻¹(μ̂ − μ)‖ / √D.
    pub mean_error: f64,
    /// tr(W)/D = tr(Σ⁻¹Ĉ)/D: 1 for the right spread, below 1 for samples
    /// huddled near the mode, above 1 for over-dispersed ones.
    pub spread: f64,
    /// ‖W − I‖_F / √D.
    pub covariance_error: f64,
    /// KL(N(μ̂, Ĉ) ‖ N(μ, Σ)) = ½(tr W + ‖L⁻¹(μ̂ − μ)‖² − D − ln det W):
    /// the KL of a Gaussian fitted to the samples from the exact posterior.
    pub kl: f64,
    /// Fraction of samples outside the exact 95 % ellipse (0.05 for exact
    /// draws).
    pub outside_95: f64,
}

impl Fit {
    /// Measures `samples` (at least 3; NaN fields otherwise) against
    /// `posterior`.
    pub fn new(samples: &[[f64; DIMENSION]], posterior: &Posterior<DIMENSION>) -> Fit {
        let nan = Fit {
            mean_error: f64::NAN,
            spread: f64::NAN,
            covariance_error: f64::NAN,
            kl: f64::NAN,
            outside_95: f64::NAN,
        };
        let n = samples.len();
        let s = &posterior.covariance;
        // Σ = L Lᵀ by hand (2 × 2).
        let l00 = s[0][0].sqrt();
        let l10 = s[1][0] / l00;
        let l11 = (s[1][1] - l10 * l10).sqrt();
        if n < 3 || !(l00 > 0.0 && l11 > 0.0) {
            return nan;
        }
        // u = L⁻¹ (x − μ).
        let whiten = |x: &[f64; 2]| {
            let d0 = x[0] - posterior.mean[0];
            let d1 = x[1] - posterior.mean[1];
            let u0 = d0 / l00;
            [u0, (d1 - l10 * u0) / l11]
        };
        let mut mean = [0.0; 2];
        let mut outside = 0usize;
        for x in samples {
            let u = whiten(x);
            mean[0] += u[0];
            mean[1] += u[1];
            if u[0] * u[0] + u[1] * u[1] > CHI2_2_95 {
                outside += 1;
            }
        }
        mean[0] /= n as f64;
        mean[1] /= n as f64;
        let mut w = [[0.0; 2]; 2];
        for x in samples {
            let u = whiten(x);
            let c = [u[0] - mean[0], u[1] - mean[1]];
            for i in 0..2 {
                for j in 0..2 {
                    w[i][j] += c[i] * c[j] / (n - 1) as f64;
                }
            }
        }
        let d = DIMENSION as f64;
        let trace = w[0][0] + w[1][1];
        let det = w[0][0] * w[1][1] - w[0][1] * w[1][0];
        let mean_sq = mean[0] * mean[0] + mean[1] * mean[1];
        let off = (w[0][0] - 1.0).powi(2) + (w[1][1] - 1.0).powi(2) + 2.0 * w[0][1].powi(2);
        let kl = if det > 0.0 {
            0.5 * (trace + mean_sq - d - det.ln())
        } else {
            f64::INFINITY
        };
        if !trace.is_finite() {
            return nan;
        }
        Fit {
            mean_error: (mean_sq / d).sqrt(),
            spread: trace / d,
            covariance_error: (off / d).sqrt(),
            kl,
            outside_95: outside as f64 / n as f64,
        }
    }
}

/// `n` independent draws from the exact posterior (μ + L z).
pub fn exact_draws(posterior: &Posterior<DIMENSION>, n: usize, seed: u64) -> Vec<[f64; DIMENSION]> {
    let s = &posterior.covariance;
    let l00 = s[0][0].sqrt();
    let l10 = s[1][0] / l00;
    let l11 = (s[1][1] - l10 * l10).max(0.0).sqrt();
    let mut rng = XorShiftRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let z0: f64 = standard_normal(&mut rng);
            let z1: f64 = standard_normal(&mut rng);
            [
                posterior.mean[0] + l00 * z0,
                posterior.mean[1] + l10 * z0 + l11 * z1,
            ]
        })
        .collect()
}

/// Points of the exact posterior's ellipse of Mahalanobis radius `r`
/// (closed: the last point repeats the first).
pub fn ellipse(posterior: &Posterior<DIMENSION>, r: f64, points: usize) -> Vec<(f64, f64)> {
    let s = &posterior.covariance;
    let l00 = s[0][0].sqrt();
    let l10 = s[1][0] / l00;
    let l11 = (s[1][1] - l10 * l10).max(0.0).sqrt();
    (0..=points)
        .map(|k| {
            let phi = std::f64::consts::TAU * k as f64 / points as f64;
            let (z0, z1) = (r * phi.cos(), r * phi.sin());
            (
                posterior.mean[0] + l00 * z0,
                posterior.mean[1] + l10 * z0 + l11 * z1,
            )
        })
        .collect()
}
