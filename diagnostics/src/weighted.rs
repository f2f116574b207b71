//! Step-size-weighted estimators for samplers with varying step sizes.
//!
//! HAMCMC (Şimşekli et al. 2016) runs with decreasing step sizes εₜ and
//! estimates posterior expectations by weighting each draw by its step size
//! (paper, eq. 12):
//!
//! ĥ = Σₜ εₜ h(θₜ) / Σₜ εₜ.
//!
//! [`weighted_mean`] is this estimator with h(θ) = θ; [`weighted_variance`]
//! applies it to h(θ) = (θ − ĥ)², i.e. the plug-in variance of the weighted
//! empirical distribution.

/// Whether `values` and `weights` form a valid weighted sample: same non-zero
/// length, every weight finite and ≥ 0, positive total weight.
fn total_weight(values: &[f64], weights: &[f64]) -> Option<f64> {
    if values.is_empty() || values.len() != weights.len() {
        return None;
    }
    if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
        return None;
    }
    let total: f64 = weights.iter().sum();
    (total > 0.0 && total.is_finite()).then_some(total)
}

/// Weighted mean Σ wₜ xₜ / Σ wₜ (HAMCMC eq. 12 with the step sizes εₜ as
/// weights).
///
/// NaN if the input is empty, the lengths differ, a weight is negative or not
/// finite, or the total weight is not positive. Zero weights are allowed (the
/// draw is ignored, unless its value is not finite).
pub fn weighted_mean(values: &[f64], weights: &[f64]) -> f64 {
    let Some(total) = total_weight(values, weights) else {
        return f64::NAN;
    };
    values.iter().zip(weights).map(|(x, w)| w * x).sum::<f64>() / total
}

/// Weighted (plug-in) variance Σ wₜ (xₜ − x̂)² / Σ wₜ, with x̂ the
/// [`weighted_mean`]: the HAMCMC estimator applied to h(θ) = (θ − x̂)².
///
/// No small-sample correction is applied, so with equal weights this is the
/// 1/N ("population") variance, not the N − 1 one of
/// [`variance`](super::variance). NaN under the same conditions as
/// [`weighted_mean`].
pub fn weighted_variance(values: &[f64], weights: &[f64]) -> f64 {
    let Some(total) = total_weight(values, weights) else {
        return f64::NAN;
    };
    let m = values.iter().zip(weights).map(|(x, w)| w * x).sum::<f64>() / total;
    values
        .iter()
        .zip(weights)
        .map(|(x, w)| w * (x - m) * (x - m))
        .sum::<f64>()
        / total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_mean_by_hand() {
        // (1·0.5 + 2·0.25 + 4·0.25) / 1 = 2.
        assert_eq!(weighted_mean(&[1.0, 2.0, 4.0], &[0.5, 0.25, 0.25]), 2.0);
        // Unnormalised weights: (3·1 + 6·2) / 3 = 5.
        assert_eq!(weighted_mean(&[3.0, 6.0], &[1.0, 2.0]), 5.0);
        // Equal weights give the plain mean.
        assert!((weighted_mean(&[1.0, 2.0, 3.0, 6.0], &[0.1; 4]) - 3.0).abs() < 1e-15);
        // A zero weight drops the draw.
        assert_eq!(weighted_mean(&[1.0, 100.0], &[2.0, 0.0]), 1.0);
    }

    #[test]
    fn weighted_variance_by_hand() {
        // Mean 2 (above); Σ w (x − 2)² = 0.5·1 + 0 + 0.25·4 = 1.5.
        let v = weighted_variance(&[1.0, 2.0, 4.0], &[0.5, 0.25, 0.25]);
        assert!((v - 1.5).abs() < 1e-15, "{v}");
        // Equal weights: population variance of 1 2 3 6 (mean 3) = 14/4.
        let v = weighted_variance(&[1.0, 2.0, 3.0, 6.0], &[2.0; 4]);
        assert!((v - 3.5).abs() < 1e-15, "{v}");
    }

    #[test]
    fn invalid_weights_are_nan() {
        assert!(weighted_mean(&[], &[]).is_nan());
        assert!(weighted_mean(&[1.0, 2.0], &[1.0]).is_nan());
        assert!(weighted_mean(&[1.0, 2.0], &[0.0, 0.0]).is_nan());
        assert!(weighted_mean(&[1.0, 2.0], &[-1.0, 3.0]).is_nan());
        assert!(weighted_mean(&[1.0, 2.0], &[f64::NAN, 3.0]).is_nan());
        assert!(weighted_variance(&[], &[]).is_nan());
        assert!(weighted_variance(&[1.0], &[1.0, 2.0]).is_nan());
        assert!(weighted_variance(&[1.0, 2.0], &[0.0, 0.0]).is_nan());
    }
}
