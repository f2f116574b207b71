//! Plain summary statistics on one slice of draws: mean, variance, quantile.

/// Arithmetic mean of `x`; NaN if `x` is empty.
pub fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    x.iter().sum::<f64>() / x.len() as f64
}

/// Sample variance of `x` with the N − 1 denominator (two-pass); NaN if `x`
/// has fewer than two elements.
pub fn variance(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return f64::NAN;
    }
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() - 1) as f64
}

/// Sample quantile of `x` at probability `p`, R's default "type 7" (linear
/// interpolation between order statistics at position (N − 1)·p), which is
/// also what Stan's `quantile` and the R package posterior use.
///
/// NaN if `x` is empty or contains NaN, or if `p` is not in [0, 1].
pub fn quantile(x: &[f64], p: f64) -> f64 {
    if x.is_empty() || !(0.0..=1.0).contains(&p) || x.iter().any(|v| v.is_nan()) {
        return f64::NAN;
    }
    let mut sorted = x.to_vec();
    sorted.sort_by(f64::total_cmp);
    quantile_sorted(&sorted, p)
}

/// Type-7 quantile of already sorted, NaN-free, non-empty data.
pub(crate) fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 1 {
        return sorted[0];
    }
    if p == 0.0 {
        return sorted[0];
    }
    if p == 1.0 {
        return sorted[n - 1];
    }
    let index = (n - 1) as f64 * p;
    let lo = index.floor() as usize;
    let hi = index.ceil() as usize;
    let h = index - lo as f64;
    (1.0 - h) * sorted[lo] + h * sorted[hi]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_variance_by_hand() {
        let x = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&x), 5.0);
        // Σ(x − 5)² = 32, / 7.
        assert!((variance(&x) - 32.0 / 7.0).abs() < 1e-15);
        assert!(mean(&[]).is_nan());
        assert!(variance(&[1.0]).is_nan());
    }

    #[test]
    fn quantile_type_7() {
        let x = [3.0, 1.0, 4.0, 1.0, 5.0];
        // sorted 1 1 3 4 5
        assert_eq!(quantile(&x, 0.0), 1.0);
        assert_eq!(quantile(&x, 1.0), 5.0);
        assert_eq!(quantile(&x, 0.5), 3.0);
        // index 4·0.3 = 1.2 → 1 + 0.2·(3 − 1) = 1.4
        assert!((quantile(&x, 0.3) - 1.4).abs() < 1e-15);
        // index 4·0.95 = 3.8 → 4 + 0.8·1 = 4.8
        assert!((quantile(&x, 0.95) - 4.8).abs() < 1e-15);
        assert!(quantile(&[], 0.5).is_nan());
        assert!(quantile(&x, 1.5).is_nan());
        assert!(quantile(&[1.0, f64::NAN], 0.5).is_nan());
    }
}
