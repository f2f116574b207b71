//! The standard normal distribution: density φ, distribution function Φ and
//! quantile function Φ⁻¹, all to (close to) full double precision.
//!
//! Φ is evaluated in two regimes:
//!
//! - |z| < √2: the Maclaurin series
//!   Φ(z) = ½ + (1/√(2π)) Σₙ (−1)ⁿ z²ⁿ⁺¹ / (2ⁿ n! (2n+1)), whose terms shrink
//!   fast because z²/2 < 1 (absolute error ≈ ε/2, so relative ≈ 10⁻¹⁵ at
//!   worst, near Φ(−√2) ≈ 0.079);
//! - |z| ≥ √2: the lower tail Φ(−t) = φ(t)·R(t), with Mills' ratio
//!   R(t) = 1/(t + 1/(t + 2/(t + 3/(t + …)))) evaluated by the modified Lentz
//!   method, and φ(t) computed as exp(−h²/2)·exp(−(t−h)(t+h)/2) with h = t
//!   rounded down to a multiple of 1/64, so that the large part of the exponent
//!   is exact. The upper tail is 1 − Φ(−t).
//!
//! Φ⁻¹ starts from the Abramowitz–Stegun 26.2.23 rational approximation
//! (absolute error < 4.5·10⁻⁴) and polishes it with Halley steps on
//! Φ(z) − q, which converge cubically; the lower tail q = min(p, 1 − p) is
//! solved (1 − p is exact for p ≥ ½) and the sign restored by symmetry.

/// 1/√(2π).
const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;

/// Below this |z| the Maclaurin series is used for Φ.
const SERIES_LIMIT: f64 = std::f64::consts::SQRT_2;

/// Φ(−t) underflows to zero (even as a subnormal) beyond this t.
const UNDERFLOW_LIMIT: f64 = 38.5;

/// Density of the standard normal distribution, φ(z) = exp(−z²/2)/√(2π).
///
/// The exponent is split so that its large part is exact, which keeps the
/// relative error near one ulp even far in the tails.
pub fn normal_pdf(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    let t = z.abs();
    if t.is_infinite() {
        return 0.0;
    }
    // h has at most ~12 significant bits for t < 2⁶, so h² is exact.
    let h = (t * 64.0).floor() / 64.0;
    let d = t - h; // exact: h is t with its low bits cleared
    FRAC_1_SQRT_2PI * (-0.5 * h * h).exp() * (-0.5 * d * (t + h)).exp()
}

/// Distribution function of the standard normal distribution, Φ(z) = P(Z ≤ z).
///
/// Relative error about 10⁻¹⁵ over the whole range, including the far lower
/// tail (Φ(−37) ≈ 5.7·10⁻³⁰⁰ is still computed accurately). Returns NaN for
/// NaN input.
pub fn normal_cdf(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    if z.abs() < SERIES_LIMIT {
        0.5 + central_series(z)
    } else if z < 0.0 {
        lower_tail(-z)
    } else {
        1.0 - lower_tail(z)
    }
}

/// Quantile function (inverse distribution function) of the standard normal
/// distribution, Φ⁻¹(p).
///
/// Returns −∞ for p = 0, +∞ for p = 1, exactly 0 for p = ½, and NaN for p
/// outside [0, 1] or NaN. The result is accurate to a few ulps (relative error
/// below about 10⁻¹⁵); e.g. Φ⁻¹(0.975) = 1.959963984540054 and
/// Φ⁻¹(10⁻¹⁰) = −6.361340902404056.
pub fn normal_quantile(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    if p == 0.5 {
        return 0.0;
    }
    // Work in the lower tail; 1 − p is exact for p in [½, 1].
    let lower = p < 0.5;
    let q = if lower { p } else { 1.0 - p };
    let z = lower_tail_quantile(q);
    if lower { z } else { -z }
}

/// Solves Φ(z) = q for z ≤ 0, given 0 < q < ½.
fn lower_tail_quantile(q: f64) -> f64 {
    let mut z = -abramowitz_stegun(q);
    for _ in 0..8 {
        let density = normal_pdf(z);
        if density == 0.0 {
            break;
        }
        let u = (normal_cdf(z) - q) / density;
        // Halley's step for f(z) = Φ(z) − q: f' = φ, f'' = −zφ.
        let step = u / (1.0 + 0.5 * z * u);
        z -= step;
        if !step.is_finite() || step.abs() <= f64::EPSILON * z.abs() {
            break;
        }
    }
    z
}

/// Abramowitz & Stegun 26.2.23: the upper-tail quantile x with
/// Q(x) = 1 − Φ(x) = q, for 0 < q ≤ ½, with absolute error below 4.5·10⁻⁴.
fn abramowitz_stegun(q: f64) -> f64 {
    const C: [f64; 3] = [2.515_517, 0.802_853, 0.010_328];
    const D: [f64; 3] = [1.432_788, 0.189_269, 0.001_308];
    let t = (-2.0 * q.ln()).sqrt();
    let num = C[0] + t * (C[1] + t * C[2]);
    let den = 1.0 + t * (D[0] + t * (D[1] + t * D[2]));
    t - num / den
}

/// Φ(z) − ½ for |z| < √2, by its Maclaurin series.
fn central_series(z: f64) -> f64 {
    let half_z2 = 0.5 * z * z;
    let mut power = z; // (−1)ⁿ z²ⁿ⁺¹ / (2ⁿ n!)
    let mut sum = z;
    for n in 1..200 {
        power *= -half_z2 / n as f64;
        let term = power / (2 * n + 1) as f64;
        sum += term;
        if term.abs() <= 0.25 * f64::EPSILON * sum.abs() {
            break;
        }
    }
    FRAC_1_SQRT_2PI * sum
}

/// Φ(−t) for t ≥ √2: φ(t) times Mills' ratio, the latter by its continued
/// fraction R(t) = 1/(t + 1/(t + 2/(t + 3/(t + …)))) (modified Lentz).
fn lower_tail(t: f64) -> f64 {
    if t > UNDERFLOW_LIMIT {
        return 0.0;
    }
    const TINY: f64 = 1e-300;
    // f = b₀ + a₁/(b₁ + a₂/(b₂ + …)) with b_k = t, a_k = k.
    let mut f = t;
    let mut c = t;
    let mut d = 0.0_f64;
    for k in 1..2000 {
        let a = k as f64;
        d = t + a * d;
        if d == 0.0 {
            d = TINY;
        }
        d = 1.0 / d;
        c = t + a / c;
        if c == 0.0 {
            c = TINY;
        }
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() <= 0.5 * f64::EPSILON {
            break;
        }
    }
    normal_pdf(t) / f
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (p, Φ⁻¹(p)) with p the exact double shown; reference values computed
    /// with 80-digit arithmetic (mpmath, root of log Φ(z) = log p), rounded.
    const QUANTILES: [(f64, f64); 25] = [
        (1e-300, -37.047_096_299_361_2),
        (1e-100, -21.273_453_560_965_324),
        (1e-20, -9.262_340_089_798_408),
        (1e-10, -6.361_340_902_404_056),
        (1e-5, -4.264_890_793_922_825),
        (0.001, -3.090_232_306_167_813_5),
        (0.01, -2.326_347_874_040_841),
        (0.025, -1.959_963_984_540_054_2),
        (0.05, -1.644_853_626_951_472_7),
        (0.1, -1.281_551_565_544_600_4),
        (0.2, -0.841_621_233_572_914_2),
        (0.3, -0.524_400_512_708_040_8),
        (0.4, -0.253_347_103_135_799_7),
        (0.45, -0.125_661_346_855_074),
        (0.49, -0.025_068_908_258_711_058),
        (0.5, 0.0),
        (0.51, 0.025_068_908_258_711_058),
        (0.6, 0.253_347_103_135_799_7),
        (0.75, 0.674_489_750_196_081_7),
        (0.9, 1.281_551_565_544_600_6),
        (0.975, 1.959_963_984_540_053_9),
        (0.99, 2.326_347_874_040_840_8),
        (0.999, 3.090_232_306_167_813),
        (0.999_999_999_9, 6.361_340_889_697_422),
        (0.000_156_240_234_985_313_42, -3.604_727_626_963_325_4),
    ];

    #[test]
    fn quantile_matches_reference_table() {
        for &(p, expected) in &QUANTILES {
            let got = normal_quantile(p);
            let err = (got - expected).abs();
            let bound = 4.0 * f64::EPSILON * expected.abs().max(1.0);
            assert!(
                err <= bound,
                "Φ⁻¹({p:e}) = {got:.17} but expected {expected:.17} (error {err:e} > {bound:e})"
            );
        }
    }

    #[test]
    fn quantile_matches_textbook_values() {
        // The values quoted in the task (for the real numbers 0.975, 0.5, 1e-10).
        assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-14);
        assert_eq!(normal_quantile(0.5), 0.0);
        assert!((normal_quantile(1e-10) + 6.361_340_902_404_056).abs() < 1e-14);
    }

    #[test]
    fn quantile_edge_cases() {
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
        assert_eq!(normal_quantile(1.0), f64::INFINITY);
        assert!(normal_quantile(-0.1).is_nan());
        assert!(normal_quantile(1.1).is_nan());
        assert!(normal_quantile(f64::NAN).is_nan());
        // The smallest subnormal still gives a finite, sensible answer.
        let z = normal_quantile(f64::from_bits(1));
        assert!(z.is_finite() && z < -38.0 && z > -38.6, "{z}");
    }

    #[test]
    fn quantile_is_antisymmetric() {
        for i in 1..500 {
            let p = i as f64 / 1000.0;
            let a = normal_quantile(p);
            let b = normal_quantile(1.0 - p);
            assert!(
                (a + b).abs() <= 1e-15 * a.abs().max(1.0),
                "p = {p}: {a} vs {b}"
            );
        }
    }

    #[test]
    fn cdf_inverts_quantile() {
        for i in 1..1000 {
            let p = i as f64 / 1000.0;
            let back = normal_cdf(normal_quantile(p));
            // Φ itself is only accurate to ~ε/2 absolute where it is ½ + series.
            assert!((back - p).abs() <= 1e-16 + 2e-15 * p, "p = {p}: {back}");
        }
        for e in 1..300 {
            let p = 10f64.powi(-e);
            let z = normal_quantile(p);
            let back = normal_cdf(z);
            // Rounding z to a double alone moves Φ(z) by a relative ~z²·ε/2.
            let bound = 1e-15 + 2.0 * z * z * f64::EPSILON;
            assert!(((back - p) / p).abs() <= bound, "p = {p:e}: {back:e}");
        }
    }

    #[test]
    fn cdf_reference_values() {
        // Φ(z) to 17 significant digits (mpmath, 60 digits).
        let table = [
            (-1.0, 0.158_655_253_931_457_05),
            (-2.0, 0.022_750_131_948_179_21),
            (-5.0, 2.866_515_718_791_939e-7),
            (-10.0, 7.619_853_024_160_526e-24),
            (-37.0, 5.725_571_222_524_577e-300),
            (0.5, 0.691_462_461_274_013_1),
            (1.3, 0.903_199_515_414_389_7),
            (1.5, 0.933_192_798_731_141_9),
        ];
        for (z, expected) in table {
            let got = normal_cdf(z);
            let rel = ((got - expected) / expected).abs();
            assert!(
                rel <= 2e-15,
                "Φ({z}) = {got:e}, expected {expected:e} (rel {rel:e})"
            );
        }
        assert_eq!(normal_cdf(0.0), 0.5);
        assert_eq!(normal_cdf(f64::NEG_INFINITY), 0.0);
        assert_eq!(normal_cdf(f64::INFINITY), 1.0);
    }

    #[test]
    fn pdf_reference_values() {
        assert!((normal_pdf(0.0) - FRAC_1_SQRT_2PI).abs() < 1e-17);
        // φ(1) = e^{-1/2}/√(2π) = 0.24197072451914335
        assert!((normal_pdf(1.0) - 0.241_970_724_519_143_35).abs() < 1e-16);
        assert_eq!(normal_pdf(f64::INFINITY), 0.0);
        assert_eq!(normal_pdf(-3.0), normal_pdf(3.0));
    }
}
