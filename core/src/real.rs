//! The floating-point abstraction shared by every sampler: [`Real`], implemented
//! for `f32` and `f64`.
//!
//! Every transcendental function goes straight to [`libm`], never to `std` or to a
//! trait whose implementation changes with enabled features, so the same seed
//! gives the same chain on every target. Nothing here uses fused multiply-add.

use core::fmt::{Debug, Display};
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use rand_core::Rng;

use crate::random::ziggurat_tables;

/// A floating-point scalar the samplers can run on: `f32` or `f64`.
///
/// The trait is sealed in spirit: it is implemented here for the two IEEE types
/// and the samplers rely on IEEE semantics (NaN propagation, infinities).
pub trait Real:
    Copy
    + Clone
    + Debug
    + Display
    + Default
    + PartialEq
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
    + crate::in_place::ZeroValid
    + 'static
{
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// 2.
    const TWO: Self;
    /// 1/2.
    const HALF: Self;
    /// Positive infinity.
    const INFINITY: Self;
    /// Machine epsilon.
    const EPSILON: Self;

    /// Converts an `f64` constant (a setting, a literal) to this type.
    fn from_f64(value: f64) -> Self;
    /// Converts to `f64` (for reporting; never used on the sampling path of `f32`).
    fn to_f64(self) -> f64;
    /// Converts a count to this type.
    fn from_u64(value: u64) -> Self;
    /// Square root (libm).
    fn sqrt(self) -> Self;
    /// Natural logarithm (libm).
    fn ln(self) -> Self;
    /// Exponential (libm).
    fn exp(self) -> Self;
    /// `self` raised to the power `exponent` (libm).
    fn powf(self, exponent: Self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// `true` unless the value is NaN or infinite.
    fn is_finite(self) -> bool;
    /// Sine and cosine of `self` (libm).
    fn sin_cos(self) -> (Self, Self);
    /// 2π.
    fn two_pi() -> Self;
    /// A uniform draw on (0, 1], made from the generator's native word for this
    /// type (`next_u32` for `f32`, `next_u64` for `f64`): an `f32` draw never goes
    /// through `f64`.
    fn uniform_open_closed<R: Rng + ?Sized>(rng: &mut R) -> Self;
    /// One word of the generator's native size for this type split for the
    /// ziggurat ([`crate::random::standard_normal_ziggurat`]): the layer
    /// (its 7 lowest bits) and a uniform draw on [−1, 1) from its top 53
    /// (`f64`) or 24 (`f32`) bits read as a signed integer (no branch on
    /// the sign).
    fn ziggurat_word<R: Rng + ?Sized>(rng: &mut R) -> (usize, Self);
    /// The ziggurat's layer widths X[0..=128] in this precision.
    const ZIGGURAT_X: &'static [Self; 129];
    /// exp(−X\[i\]²/2) in this precision (F\[128\] = 1).
    const ZIGGURAT_F: &'static [Self; 129];
    /// Where the ziggurat's tail begins, X\[1\].
    const ZIGGURAT_R: Self;
}

impl Real for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const TWO: Self = 2.0;
    const HALF: Self = 0.5;
    const INFINITY: Self = f64::INFINITY;
    const EPSILON: Self = f64::EPSILON;

    #[inline]
    fn from_f64(value: f64) -> Self {
        value
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline]
    fn from_u64(value: u64) -> Self {
        value as f64
    }
    #[inline]
    fn sqrt(self) -> Self {
        libm::sqrt(self)
    }
    #[inline]
    fn ln(self) -> Self {
        libm::log(self)
    }
    #[inline]
    fn exp(self) -> Self {
        libm::exp(self)
    }
    #[inline]
    fn powf(self, exponent: Self) -> Self {
        libm::pow(self, exponent)
    }
    #[inline]
    fn abs(self) -> Self {
        libm::fabs(self)
    }
    #[inline]
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
    #[inline]
    fn sin_cos(self) -> (Self, Self) {
        libm::sincos(self)
    }
    #[inline]
    fn two_pi() -> Self {
        core::f64::consts::TAU
    }
    #[inline]
    fn uniform_open_closed<R: Rng + ?Sized>(rng: &mut R) -> Self {
        // 53 random bits, shifted by one so that 0 is excluded and 1 included.
        ((rng.next_u64() >> 11) + 1) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }

    #[inline]
    fn ziggurat_word<R: Rng + ?Sized>(rng: &mut R) -> (usize, Self) {
        let word = rng.next_u64();
        // Bits 11–63 as a signed integer in [−2⁵², 2⁵²), times 2⁻⁵².
        let uniform = ((word as i64) >> 11) as f64 * (1.0 / 4_503_599_627_370_496.0);
        ((word & 127) as usize, uniform)
    }

    const ZIGGURAT_X: &'static [Self; 129] = &ziggurat_tables::X_F64;
    const ZIGGURAT_F: &'static [Self; 129] = &ziggurat_tables::F_F64;
    const ZIGGURAT_R: Self = ziggurat_tables::R_F64;
}

impl Real for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const TWO: Self = 2.0;
    const HALF: Self = 0.5;
    const INFINITY: Self = f32::INFINITY;
    const EPSILON: Self = f32::EPSILON;

    #[inline]
    fn from_f64(value: f64) -> Self {
        value as f32
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline]
    fn from_u64(value: u64) -> Self {
        value as f32
    }
    #[inline]
    fn sqrt(self) -> Self {
        libm::sqrtf(self)
    }
    #[inline]
    fn ln(self) -> Self {
        libm::logf(self)
    }
    #[inline]
    fn exp(self) -> Self {
        libm::expf(self)
    }
    #[inline]
    fn powf(self, exponent: Self) -> Self {
        libm::powf(self, exponent)
    }
    #[inline]
    fn abs(self) -> Self {
        libm::fabsf(self)
    }
    #[inline]
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    #[inline]
    fn sin_cos(self) -> (Self, Self) {
        libm::sincosf(self)
    }
    #[inline]
    fn two_pi() -> Self {
        core::f32::consts::TAU
    }
    #[inline]
    fn uniform_open_closed<R: Rng + ?Sized>(rng: &mut R) -> Self {
        // 24 random bits from one u32, shifted by one: (0, 1] with no f64 step.
        ((rng.next_u32() >> 8) + 1) as f32 * (1.0 / 16_777_216.0)
    }

    #[inline]
    fn ziggurat_word<R: Rng + ?Sized>(rng: &mut R) -> (usize, Self) {
        let word = rng.next_u32();
        // Bits 8–31 as a signed integer in [−2²³, 2²³), times 2⁻²³.
        let uniform = ((word as i32) >> 8) as f32 * (1.0 / 8_388_608.0);
        ((word & 127) as usize, uniform)
    }

    const ZIGGURAT_X: &'static [Self; 129] = &ziggurat_tables::X_F32;
    const ZIGGURAT_F: &'static [Self; 129] = &ziggurat_tables::F_F32;
    const ZIGGURAT_R: Self = ziggurat_tables::R_F32;
}

#[cfg(test)]
mod tests {
    use super::Real;
    use rand_core::SeedableRng;
    use rand_xorshift::XorShiftRng;

    #[test]
    fn uniform_draws_stay_in_open_closed_interval() {
        let mut rng = XorShiftRng::seed_from_u64(7);
        for _ in 0..10_000 {
            let a = f64::uniform_open_closed(&mut rng);
            let b = f32::uniform_open_closed(&mut rng);
            assert!(a > 0.0 && a <= 1.0);
            assert!(b > 0.0 && b <= 1.0);
        }
    }

    /// Reference values of the libm-backed functions, with the error bound each
    /// type guarantees (a few ulp).
    #[test]
    fn transcendental_reference_values() {
        let table: [(f64, f64, f64); 4] = [
            // x, ln x, exp x
            (1.0, 0.0, core::f64::consts::E),
            (2.0, core::f64::consts::LN_2, 7.38905609893065),
            (0.5, -core::f64::consts::LN_2, 1.6487212707001282),
            (10.0, core::f64::consts::LN_10, 22026.465794806718),
        ];
        for (x, ln, exp) in table {
            assert!((Real::ln(x) - ln).abs() <= 4.0 * f64::EPSILON * ln.abs().max(1.0));
            assert!((Real::exp(x) - exp).abs() <= 4.0 * f64::EPSILON * exp);
            let xf = x as f32;
            assert!(
                (Real::ln(xf) as f64 - ln).abs() <= 4.0 * f32::EPSILON as f64 * ln.abs().max(1.0)
            );
            assert!((Real::exp(xf) as f64 - exp).abs() <= 4.0 * f32::EPSILON as f64 * exp);
        }
        assert_eq!(Real::sqrt(16.0f64), 4.0);
        assert_eq!(Real::sqrt(16.0f32), 4.0);
    }
}
