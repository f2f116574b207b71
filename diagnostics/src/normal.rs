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
//! Φ⁻¹ is computed directly by Wichura's algorithm AS 241, `PPND16`
//! (M. J. Wichura (1988), *The percentage points of the normal distribution*,
//! Applied Statistics 37(3), 477–484), whose minimax rational approximations
//! have a relative error of about 10⁻¹⁶:
//!
//! - |p − ½| ≤ 0.425: Φ⁻¹(p) = q·A(r)/B(r) with q = p − ½, r = 0.425² − q²;
//! - otherwise, with r = √(−ln min(p, 1 − p)): |Φ⁻¹(p)| = C(r − 1.6)/D(r − 1.6)
//!   for r ≤ 5 (min(p, 1 − p) ≥ e⁻²⁵ ≈ 1.4·10⁻¹¹) and E(r − 5)/F(r − 5)
//!   beyond, the sign being that of p − ½;
//!
//! A … F being polynomials of degree 7 (coefficients from the paper). The
//! tail probability 1 − p is exact for p ≥ ½. Below e⁻²⁵ one Halley step on Φ
//! follows, because there the rational function evaluated in double precision
//! is a few ulps off and Φ is steep enough for that to show in Φ(Φ⁻¹(p)).
//! Against 50-digit mpmath values the relative error is at most 2.7·ε
//! (6·10⁻¹⁶, ≤ 5 ulps) in the central and intermediate regions, which are all
//! that rank normalisation of up to 10¹⁰ draws uses, and 0.6 ulp in the far
//! tail (see the tests). A call costs about 16 ns, against about 800 ns for
//! the Halley iteration on Φ from a rough start that this replaces (and that
//! was up to 7·10⁻¹⁴ off near p = ½, where Φ is only accurate in absolute
//! terms).

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
///
/// Computed directly (no iteration) by Wichura's algorithm AS 241 (PPND16),
/// see the module documentation; it costs one logarithm, one square root and
/// two degree-7 polynomials.
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
    let q = p - 0.5;
    if q.abs() <= CENTRAL_HALF_WIDTH {
        let r = CENTRAL_HALF_WIDTH_SQUARED - q * q;
        return q * rational(&as241::CENTRAL_NUM, &as241::CENTRAL_DEN, r);
    }
    // The smaller tail probability; 1 − p is exact for p in [½, 1].
    let tail = if q < 0.0 { p } else { 1.0 - p };
    let r = (-tail.ln()).sqrt();
    let x = if r <= FAR_TAIL_START {
        rational(&as241::NEAR_NUM, &as241::NEAR_DEN, r - NEAR_SHIFT)
    } else {
        polish_far_tail(
            rational(&as241::FAR_NUM, &as241::FAR_DEN, r - FAR_TAIL_START),
            tail,
        )
    };
    if q < 0.0 { -x } else { x }
}

/// One Halley step on Φ(−x) = `tail` from AS 241's far-tail estimate x,
/// for tail probabilities below e⁻²⁵ (never reached by rank normalisation of
/// fewer than 10¹⁰ draws).
///
/// Evaluated in double precision, AS 241's far-tail rational function is up to
/// ~6 ulps off (relative 7·10⁻¹⁶, at p ≈ 10⁻¹⁷⁹), and there Φ is so steep
/// (d log Φ/dz ≈ −z) that Φ(Φ⁻¹(p)) would miss p by up to 10⁻¹³ relative.
/// The step brings x to the accuracy of Φ itself. Subnormal tails, where Φ
/// has too few significant bits to help, keep the AS 241 value.
fn polish_far_tail(x: f64, tail: f64) -> f64 {
    if tail < f64::MIN_POSITIVE {
        return x;
    }
    let z = -x;
    let density = normal_pdf(z);
    if density == 0.0 {
        return x;
    }
    let u = (normal_cdf(z) - tail) / density;
    // Halley's step for f(z) = Φ(z) − tail: f' = φ, f'' = −zφ.
    let polished = z - u / (1.0 + 0.5 * z * u);
    if polished.is_finite() { -polished } else { x }
}

/// AS 241's central region is |p − ½| ≤ 0.425.
const CENTRAL_HALF_WIDTH: f64 = 0.425;

/// 0.425², as the decimal AS 241 writes it.
const CENTRAL_HALF_WIDTH_SQUARED: f64 = 0.180_625;

/// AS 241 switches from its intermediate to its far-tail approximation at
/// r = √(−ln min(p, 1 − p)) = 5, i.e. min(p, 1 − p) = e⁻²⁵ ≈ 1.4·10⁻¹¹.
const FAR_TAIL_START: f64 = 5.0;

/// The intermediate-tail approximation is a rational function of r − 1.6.
const NEAR_SHIFT: f64 = 1.6;

/// The coefficients of AS 241's three rational approximations, with the
/// 20 significant digits Wichura publishes (more than a double holds; the
/// compiler rounds each to the nearest double).
#[allow(clippy::excessive_precision)]
mod as241 {
    /// AS 241, |p − ½| ≤ 0.425: numerator coefficients (of r⁰ … r⁷) of
    /// Φ⁻¹(p)/(p − ½) as a rational function of r = 0.425² − (p − ½)².
    pub(super) const CENTRAL_NUM: [f64; 8] = [
        3.387_132_872_796_366_608,
        1.331_416_678_917_843_774_5e2,
        1.971_590_950_306_551_442_7e3,
        1.373_169_376_550_946_112_5e4,
        4.592_195_393_154_987_145_7e4,
        6.726_577_092_700_870_085_3e4,
        3.343_057_558_358_812_810_5e4,
        2.509_080_928_730_122_672_7e3,
    ];

    /// AS 241, |p − ½| ≤ 0.425: denominator coefficients (of r⁰ … r⁷).
    pub(super) const CENTRAL_DEN: [f64; 8] = [
        1.0,
        4.231_333_070_160_091_125_2e1,
        6.871_870_074_920_579_083e2,
        5.394_196_021_424_751_107_7e3,
        2.121_379_430_158_659_586_7e4,
        3.930_789_580_009_271_061e4,
        2.872_908_573_572_194_267_4e4,
        5.226_495_278_852_854_561e3,
    ];

    /// AS 241, r = √(−ln min(p, 1 − p)) ≤ 5: numerator coefficients (of s⁰ … s⁷)
    /// of |Φ⁻¹(p)| as a rational function of s = r − 1.6.
    pub(super) const NEAR_NUM: [f64; 8] = [
        1.423_437_110_749_683_577_34,
        4.630_337_846_156_545_295_9,
        5.769_497_221_460_691_405_5,
        3.647_848_324_763_204_605_04,
        1.270_458_252_452_368_382_58,
        2.417_807_251_774_506_117_7e-1,
        2.272_384_498_926_918_458_33e-2,
        7.745_450_142_783_414_076_4e-4,
    ];

    /// AS 241, r ≤ 5: denominator coefficients (of s⁰ … s⁷).
    pub(super) const NEAR_DEN: [f64; 8] = [
        1.0,
        2.053_191_626_637_758_821_87,
        1.676_384_830_183_803_849_4,
        6.897_673_349_851_000_045_5e-1,
        1.481_039_764_274_800_745_9e-1,
        1.519_866_656_361_645_719_66e-2,
        5.475_938_084_995_344_946e-4,
        1.050_750_071_644_416_843_24e-9,
    ];

    /// AS 241, r > 5: numerator coefficients (of s⁰ … s⁷) of |Φ⁻¹(p)| as a
    /// rational function of s = r − 5.
    pub(super) const FAR_NUM: [f64; 8] = [
        6.657_904_643_501_103_777_2,
        5.463_784_911_164_114_369_9,
        1.784_826_539_917_291_335_8,
        2.965_605_718_285_048_912_3e-1,
        2.653_218_952_657_612_309_3e-2,
        1.242_660_947_388_078_438_6e-3,
        2.711_555_568_743_487_578_15e-5,
        2.010_334_399_292_288_132_65e-7,
    ];

    /// AS 241, r > 5: denominator coefficients (of s⁰ … s⁷).
    pub(super) const FAR_DEN: [f64; 8] = [
        1.0,
        5.998_322_065_558_879_376_9e-1,
        1.369_298_809_227_358_053_1e-1,
        1.487_536_129_085_061_485_25e-2,
        7.868_691_311_456_132_591e-4,
        1.846_318_317_510_054_681_8e-5,
        1.421_511_758_316_445_888_7e-7,
        2.044_263_103_389_939_785_64e-15,
    ];
}

/// num(x)/den(x) for polynomials given by their coefficients of x⁰ … x⁷,
/// each evaluated by Horner's rule.
fn rational(num: &[f64; 8], den: &[f64; 8], x: f64) -> f64 {
    let horner = |c: &[f64; 8]| c.iter().rev().fold(0.0, |acc, &k| acc * x + k);
    horner(num) / horner(den)
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

    /// (p, Φ⁻¹(p)) at the points where AS 241 is weakest or switches between
    /// its three approximations, and at the Blom scores of 4 000 draws that
    /// rank normalisation uses. p is the exact double written; Φ⁻¹(p) is the
    /// root of log Φ(z) = log p found by `mpmath.findroot` with 50-digit
    /// arithmetic (mpmath 1.3.0, `ncdf`), rounded to the nearest double. The
    /// "worst" points are where the largest errors were found on 11 153 points
    /// (every Blom score and half-rank of 4 000 draws, p = 10^(−k/10) for
    /// k = 3 … 2999, 1 − 10^(−k/10) for k = 3 … 159): 2.7·ε relative at most
    /// (4.7 ulps at p ≈ 0.45); in the far tail, before the Halley step,
    /// 3.3·ε (5.8 ulps at p = 10⁻¹⁷⁹), after it 0.6 ulp.
    const AS241_CHECKS: [(f64, f64); 26] = [
        (0.00015624023498531342, -3.6047276269633253), // Blom score of rank 1 of 4000
        (0.0004062246109618149, -3.3485182759186025),  // rank 2 of 4000
        (0.07490156865195925, -1.4402271747939057),    // rank 300 of 4000
        (0.25001562402349853, -0.6744405843173221),    // rank 1000.5 of 4000 (a tie)
        (0.4998750078120118, -0.0003133089576451471),  // rank 2000 of 4000
        (0.9995937753890382, 3.3485182759185803),      // rank 3999 of 4000
        (0.45175301543653523, -0.12123357545660249),   // worst central point of the check
        (0.3, -0.5244005127080408),                    // central
        (0.0751, -1.43882539275254),                   // central
        (0.075, -1.439531470938456),                   // central edge, p − ½ = −0.425
        (0.07499999999999998, -1.4395314709384561),    // just outside
        (0.925, 1.4395314709384561),                   // upper central edge
        (0.9250000000000002, 1.439531470938457),       // just outside
        (0.05, -1.6448536269514726),                   // intermediate tail
        (0.0001, -3.7190164854556804),                 // intermediate tail
        (1.9952623149688828e-09, -5.88458564280394),   // worst intermediate point of the check
        (1.3887943864964021e-11, -6.657904643501103),  // r = 5 edge, p = e^-25
        (1.388794386496402e-11, -6.657904643501103),   // just beyond
        (1e-12, -7.034483825301132),                   // far tail
        (1e-50, -14.933337534788489),                  // far tail
        (1e-179, -28.561880122347745),                 // worst far point of the check
        (1e-300, -37.0470962993612),                   // far tail
        (2.2250738585072014e-308, -37.5193793471445),  // smallest normal
        (5e-324, -38.467405617144344),                 // smallest subnormal
        (0.9999, 3.7190164854557084),                  // upper intermediate tail
        (0.999999999999, 7.0344869100478356),          // upper far tail
    ];

    #[test]
    fn quantile_is_within_four_epsilon_at_as241_checks() {
        let mut worst = 0.0_f64;
        for &(p, expected) in &AS241_CHECKS {
            let got = normal_quantile(p);
            let rel = ((got - expected) / expected).abs();
            worst = worst.max(rel / f64::EPSILON);
            // The Halley step makes the (normal) far tail good to about an ulp.
            let far = p.min(1.0 - p) < (-25.0_f64).exp() && p >= f64::MIN_POSITIVE;
            let bound = if far { 1.5 } else { 4.0 } * f64::EPSILON;
            assert!(
                rel <= bound,
                "Φ⁻¹({p:e}) = {got:.17} but expected {expected:.17} (relative error {rel:e})"
            );
        }
        eprintln!("largest relative error at the AS 241 checks: {worst:.2} ε");
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
