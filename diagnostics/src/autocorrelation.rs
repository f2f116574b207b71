//! Autocovariance and autocorrelation of one chain.
//!
//! The "biased" estimator recommended by Geyer (1992) and used by Stan:
//!
//! γ̂ₖ = (1/n) Σ_{i=0}^{n−1−k} (xᵢ − x̄)(x_{i+k} − x̄),   ρ̂ₖ = γ̂ₖ / γ̂₀,
//!
//! i.e. every lag is normalised by n (not n − k), so γ̂₀ is the population
//! variance (1/n) Σ (xᵢ − x̄)². All lags are computed at once in O(n log n)
//! with a zero-padded FFT of length ≥ 2n (no circular wrap-around), as Stan
//! does; the result agrees with the direct O(n²) sum to round-off
//! (~10⁻¹⁵·γ̂₀).

use super::fft::{Complex, Direction, fft_in_place};
use super::stats::mean;

/// Autocovariances γ̂₀ … γ̂ₙ₋₁ of `x` (length n), each normalised by n.
///
/// Returns an empty vector for empty input. Non-finite input gives non-finite
/// output.
pub fn autocovariance(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    if n == 0 {
        return Vec::new();
    }
    let m = mean(x);
    let size = (2 * n).next_power_of_two();
    let mut data = vec![Complex::default(); size];
    for (slot, v) in data.iter_mut().zip(x) {
        slot.re = v - m;
    }
    fft_in_place(&mut data, Direction::Forward);
    for c in &mut data {
        *c = Complex {
            re: c.re * c.re + c.im * c.im,
            im: 0.0,
        };
    }
    fft_in_place(&mut data, Direction::Inverse);
    let scale = 1.0 / (size as f64 * n as f64);
    data[..n].iter().map(|c| c.re * scale).collect()
}

/// Autocorrelations ρ̂₀ … ρ̂_max_lag of `x` (so `max_lag + 1` values, ρ̂₀ = 1).
///
/// Lags k ≥ n have an empty sum in the biased estimator and are reported as
/// 0. Returns an empty vector for empty input, and NaN values when `x` has
/// zero variance (ρ̂ₖ = γ̂ₖ/γ̂₀ = 0/0).
pub fn autocorrelation(x: &[f64], max_lag: usize) -> Vec<f64> {
    if x.is_empty() {
        return Vec::new();
    }
    let acov = autocovariance(x);
    let var = acov[0];
    (0..=max_lag)
        .map(|k| acov.get(k).copied().unwrap_or(0.0) / var)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct O(n·lags) sum, as a reference.
    fn autocovariance_direct(x: &[f64]) -> Vec<f64> {
        let n = x.len();
        let m = mean(x);
        (0..n)
            .map(|k| (0..n - k).map(|i| (x[i] - m) * (x[i + k] - m)).sum::<f64>() / n as f64)
            .collect()
    }

    /// A deterministic AR(1) chain xₜ = φ xₜ₋₁ + uₜ with uniform noise from a
    /// small LCG (no dependencies).
    fn ar1(n: usize, phi: f64) -> Vec<f64> {
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut x = 0.0;
        (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let u = (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                x = phi * x + u;
                x
            })
            .collect()
    }

    #[test]
    fn hand_computed_ramp() {
        // x = 1 2 3 4, x̄ = 2.5, centred −1.5 −0.5 0.5 1.5:
        // γ₀ = 5/4, γ₁ = (0.75 − 0.25 + 0.75)/4 = 0.3125,
        // γ₂ = (−0.75 − 0.75)/4 = −0.375, γ₃ = −2.25/4 = −0.5625.
        let x = [1.0, 2.0, 3.0, 4.0];
        let expected = [1.25, 0.3125, -0.375, -0.5625];
        let got = autocovariance(&x);
        assert_eq!(got.len(), 4);
        for (g, e) in got.iter().zip(expected) {
            assert!((g - e).abs() < 1e-15, "{got:?}");
        }
        let rho = autocorrelation(&x, 5);
        let expected_rho = [1.0, 0.25, -0.3, -0.45, 0.0, 0.0];
        assert_eq!(rho.len(), 6);
        for (r, e) in rho.iter().zip(expected_rho) {
            assert!((r - e).abs() < 1e-15, "{rho:?}");
        }
    }

    #[test]
    fn alternating_sequence_is_ar1_with_phi_minus_one() {
        // xₜ = (−1)ᵗ, n even: x̄ = 0 and ρₖ = (−1)ᵏ (n − k)/n exactly.
        let n = 100;
        let x: Vec<f64> = (0..n)
            .map(|t| if t % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let rho = autocorrelation(&x, 10);
        for (k, r) in rho.iter().enumerate() {
            let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
            let expected = sign * (n - k) as f64 / n as f64;
            assert!((r - expected).abs() < 1e-14, "lag {k}: {r} vs {expected}");
        }
    }

    #[test]
    fn fft_matches_direct_sum() {
        for &n in &[2usize, 3, 5, 17, 64, 100, 1000, 1023] {
            let x = ar1(n, 0.9);
            let fast = autocovariance(&x);
            let slow = autocovariance_direct(&x);
            let scale = slow[0].abs();
            for (k, (f, s)) in fast.iter().zip(&slow).enumerate() {
                assert!(
                    (f - s).abs() <= 1e-13 * scale,
                    "n = {n}, lag {k}: {f} vs {s}"
                );
            }
        }
    }

    #[test]
    fn ar1_lag_one_is_near_phi() {
        let x = ar1(20_000, 0.7);
        let rho = autocorrelation(&x, 3);
        assert!((rho[1] - 0.7).abs() < 0.03, "{rho:?}");
        assert!((rho[2] - 0.49).abs() < 0.03, "{rho:?}");
    }

    #[test]
    fn degenerate_inputs() {
        assert!(autocovariance(&[]).is_empty());
        assert!(autocorrelation(&[], 3).is_empty());
        assert_eq!(autocovariance(&[7.0]), vec![0.0]);
        assert!(
            autocorrelation(&[2.0, 2.0, 2.0], 1)
                .iter()
                .all(|r| r.is_nan())
        );
    }
}
