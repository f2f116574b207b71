//! Empirical-Bayes shrinkage of a diagonal metric's log scales.
//!
//! A diagonal scale estimated from n draws, b̂ᵢ = √(Var θᵢ / Var ∂ᵢU), carries
//! noise Var(ln b̂ᵢ) ≈ 1/n (each log variance of n Gaussian draws has variance
//! ≈ 2/n, and b̂ is the half-difference of two). Over D coordinates that
//! noise puts the largest scale a few noise sds above the truth, and the
//! largest scale caps NUTS's step size: on N(0, 11ᵀ + 4I), D = 100, a window
//! of 150 draws left the worst eigenvalue of Σ^(−1/2)HΣ^(−1/2) at 1.16–1.28
//! (the `learned_metric` example). The positive-part James–Stein estimator
//! pulls every ln b̂ᵢ towards their mean by the share of their spread that
//! the noise explains: all the way when the coordinates share one scale,
//! hardly at all when the scales truly differ (spread ≫ 1/n).

use crate::adaptation::metric_estimators::clamp_variance;
use crate::real::Real;

/// Shrinks the log scales ln bᵢ towards their mean by the positive-part
/// James–Stein factor: an estimate √(Var θᵢ / Var ∂ᵢU) from n draws has
/// Var(ln b̂ᵢ) ≈ 1/n (Gaussian draws), so when the spread of the ln b̂ᵢ is no
/// larger than that noise the coordinates are taken to share one scale, and
/// when the scales truly differ (spread ≫ 1/n) almost nothing changes.
pub(crate) fn shrink_log_scales<T: Real>(b: &mut [T], draws: u64) {
    let d = b.len();
    if d < 3 || draws < 3 {
        return;
    }
    let mut mean = T::ZERO;
    for v in b.iter() {
        mean += v.ln();
    }
    mean /= T::from_u64(d as u64);
    let mut spread = T::ZERO;
    for v in b.iter() {
        let e = v.ln() - mean;
        spread += e * e;
    }
    spread /= T::from_u64(d as u64 - 1);
    let noise = T::ONE / T::from_u64(draws);
    if !(spread.is_finite() && mean.is_finite()) || spread <= T::ZERO {
        return;
    }
    let keep = T::ONE - noise / spread;
    let keep = if keep > T::ZERO { keep } else { T::ZERO };
    for v in b.iter_mut() {
        let shrunk = (mean + keep * (v.ln() - mean)).exp();
        if shrunk.is_finite() && shrunk > T::ZERO {
            *v = clamp_variance(shrunk);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_scales_with_noise_become_one_scale() {
        // Spread of the logs well below the noise 1/n = 0.01.
        let mut b = [4.0, 4.1, 3.9, 4.05, 3.95];
        let geometric = b.iter().map(|v: &f64| v.ln()).sum::<f64>() / 5.0;
        shrink_log_scales(&mut b, 100);
        for v in b {
            assert!((v.ln() - geometric).abs() < 1e-12, "{b:?}");
        }
    }

    #[test]
    fn distinct_scales_barely_move() {
        // Scales 1e-2 … 1e2: spread of the logs ≈ 10, noise 1/1000.
        let mut b = [1e-2, 1e-1, 1.0, 1e1, 1e2];
        let before = b;
        shrink_log_scales(&mut b, 1000);
        for (v, w) in b.iter().zip(before) {
            // keep = 1 − 0.001/spread ≥ 0.9999: each log moves < 1e-3.
            assert!((v.ln() - w.ln()).abs() < 1e-3, "{b:?}");
            assert!(
                *v != w || w == 1.0,
                "a scale that should move a little did not"
            );
        }
    }

    #[test]
    fn the_shrinkage_factor_is_one_minus_noise_over_spread() {
        // ln b = (−a, 0, a): mean 0, spread (sample variance) a²; with n = 50
        // keep = 1 − (1/50)/a².
        let a: f64 = 0.5;
        let mut b = [(-a).exp(), 1.0, a.exp()];
        shrink_log_scales(&mut b, 50);
        let keep = 1.0 - (1.0 / 50.0) / (a * a);
        assert!((b[2].ln() - keep * a).abs() < 1e-12, "{b:?}");
        assert!((b[0].ln() + keep * a).abs() < 1e-12, "{b:?}");
        assert!((b[1] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn too_few_coordinates_or_draws_change_nothing() {
        let mut two = [1.0, 2.0];
        shrink_log_scales(&mut two, 100);
        assert_eq!(two, [1.0, 2.0]);
        let mut three = [1.0, 1.1, 0.9];
        shrink_log_scales(&mut three, 2);
        assert_eq!(three, [1.0, 1.1, 0.9]);
        let mut same = [2.0; 4];
        shrink_log_scales(&mut same, 100);
        assert_eq!(same, [2.0; 4]);
    }
}
