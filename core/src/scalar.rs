//! [`Scalar`]: the arithmetic a model's potential is written in once, so that
//! the same function runs on `f32`/`f64` values and on the automatic
//! differentiation types of [`crate::autodiff`] ([`crate::autodiff::Dual`],
//! [`crate::autodiff::Var`]).
//!
//! [`crate::Real`] is the samplers' scalar: besides arithmetic it carries
//! random draws and the ziggurat's tables, which a dual number cannot
//! provide. `Scalar` is the part a model needs: the operators, constants from
//! `f64`, comparisons and the elementary functions. For `f32` and `f64` every
//! function calls exactly the [`libm`] function [`crate::Real`] calls (and
//! `libm` for the ones `Real` does not have), so a model evaluated on `f64`
//! gives the same bits as the same formula written with `Real`. Nothing here
//! uses fused multiply-add.

use core::fmt::Debug;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// The scalar a potential U(θ) is written in, generic so that one function
/// gives values (`f64`, `f32`) and exact gradients ([`crate::autodiff`]).
///
/// Comparisons (`<`, `>=`, `==`) of the AD types compare values only, so a
/// model may branch on a value (e.g. a numerically stable form for each sign);
/// the derivative is that of the branch taken.
pub trait Scalar:
    Copy
    + Debug
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
{
    /// A constant (data, a hyper-parameter, a literal); for the AD types its
    /// derivative is zero and it costs no tape entry.
    fn from_f64(value: f64) -> Self;
    /// The value as `f64` (the primal value of an AD type), for reporting.
    fn to_f64(self) -> f64;
    /// Square root (libm `sqrt`).
    fn sqrt(self) -> Self;
    /// Natural logarithm (libm `log`).
    fn ln(self) -> Self;
    /// Exponential (libm `exp`).
    fn exp(self) -> Self;
    /// `self` raised to the power `exponent` (libm `pow`).
    fn powf(self, exponent: Self) -> Self;
    /// Absolute value (libm `fabs`); the AD types take the derivative +1 at 0.
    fn abs(self) -> Self;
    /// Sine (libm `sin`).
    fn sin(self) -> Self;
    /// Cosine (libm `cos`).
    fn cos(self) -> Self;
    /// Sine and cosine (libm `sincos`, as [`crate::Real::sin_cos`]).
    fn sin_cos(self) -> (Self, Self);
    /// ln(1 + x), accurate for small x (libm `log1p`).
    fn ln_1p(self) -> Self;
    /// eˣ − 1, accurate for small x (libm `expm1`).
    fn exp_m1(self) -> Self;
    /// Hyperbolic tangent (libm `tanh`).
    fn tanh(self) -> Self;

    /// `self` raised to the integer power `n`, by repeated squaring (at most
    /// 2·log₂|n| multiplications, then one division for n < 0; `powi(0)` is
    /// 1). Unlike [`powf`](Self::powf), which goes through a logarithm, it
    /// takes any sign of `self` (x³ of a negative x) and the AD types get
    /// the exact derivative of the products: n·xⁿ⁻¹, 0 at x = 0 for n ≥ 2.
    ///
    /// ```
    /// use qnmc::Scalar;
    /// use qnmc::autodiff::Dual;
    ///
    /// // (Written as Scalar::powi: on a plain f64, std's own powi comes first.)
    /// assert_eq!(Scalar::powi(-2.0_f64, 3), -8.0);
    /// assert_eq!(Scalar::powi(2.0_f64, -2), 0.25);
    /// let x = Dual::<f64, 1>::variable(-2.0, 0);
    /// let y = x.powi(3);
    /// assert_eq!((y.value, y.tangent[0]), (-8.0, 12.0));
    /// ```
    #[inline]
    fn powi(self, n: i32) -> Self {
        let mut result = Self::from_f64(1.0);
        let mut base = self;
        let mut k = n.unsigned_abs();
        while k > 0 {
            if k & 1 == 1 {
                result *= base;
            }
            k >>= 1;
            if k > 0 {
                base *= base;
            }
        }
        if n < 0 {
            Self::from_f64(1.0) / result
        } else {
            result
        }
    }

    /// log(1 + eˣ) without overflow for large x or loss for very negative x:
    /// max(x, 0) + ln_1p(e^{−|x|}).
    #[inline]
    fn softplus(self) -> Self {
        let zero = Self::from_f64(0.0);
        let positive = if self > zero { self } else { zero };
        positive + (-self.abs()).exp().ln_1p()
    }

    /// log(eᵃ + eᵇ) without overflow: max + ln_1p(e^{−|a − b|}) (NaN if
    /// either is NaN).
    #[inline]
    fn log_add_exp(self, other: Self) -> Self {
        let (high, low) = if self >= other {
            (self, other)
        } else {
            (other, self)
        };
        if low.to_f64() == f64::NEG_INFINITY || high.to_f64() == f64::INFINITY {
            return high;
        }
        high + (low - high).exp().ln_1p()
    }
}

macro_rules! float_scalar {
    ($t:ty, $sqrt:ident, $log:ident, $exp:ident, $pow:ident, $fabs:ident, $sin:ident,
     $cos:ident, $sincos:ident, $log1p:ident, $expm1:ident, $tanh:ident) => {
        impl Scalar for $t {
            #[inline]
            fn from_f64(value: f64) -> Self {
                value as $t
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn sqrt(self) -> Self {
                libm::$sqrt(self)
            }
            #[inline]
            fn ln(self) -> Self {
                libm::$log(self)
            }
            #[inline]
            fn exp(self) -> Self {
                libm::$exp(self)
            }
            #[inline]
            fn powf(self, exponent: Self) -> Self {
                libm::$pow(self, exponent)
            }
            #[inline]
            fn abs(self) -> Self {
                libm::$fabs(self)
            }
            #[inline]
            fn sin(self) -> Self {
                libm::$sin(self)
            }
            #[inline]
            fn cos(self) -> Self {
                libm::$cos(self)
            }
            #[inline]
            fn sin_cos(self) -> (Self, Self) {
                libm::$sincos(self)
            }
            #[inline]
            fn ln_1p(self) -> Self {
                libm::$log1p(self)
            }
            #[inline]
            fn exp_m1(self) -> Self {
                libm::$expm1(self)
            }
            #[inline]
            fn tanh(self) -> Self {
                libm::$tanh(self)
            }
        }
    };
}

float_scalar!(
    f64, sqrt, log, exp, pow, fabs, sin, cos, sincos, log1p, expm1, tanh
);
float_scalar!(
    f32, sqrtf, logf, expf, powf, fabsf, sinf, cosf, sincosf, log1pf, expm1f, tanhf
);

#[cfg(test)]
mod tests {
    use super::Scalar;
    use crate::real::Real;

    /// On f64 and f32 every function shared with `Real` gives `Real`'s bits.
    #[test]
    fn same_bits_as_real() {
        for x in [0.3f64, 1.0, 2.5, 17.0, 1e-8, 700.0] {
            assert_eq!(Scalar::sqrt(x).to_bits(), Real::sqrt(x).to_bits());
            assert_eq!(Scalar::ln(x).to_bits(), Real::ln(x).to_bits());
            assert_eq!(Scalar::exp(x).to_bits(), Real::exp(x).to_bits());
            assert_eq!(Scalar::abs(-x).to_bits(), Real::abs(-x).to_bits());
            assert_eq!(Scalar::powf(x, 1.7).to_bits(), Real::powf(x, 1.7).to_bits());
            let (s, c) = Scalar::sin_cos(x);
            let (rs, rc) = Real::sin_cos(x);
            assert_eq!((s.to_bits(), c.to_bits()), (rs.to_bits(), rc.to_bits()));
            let y = x as f32;
            assert_eq!(Scalar::sqrt(y).to_bits(), Real::sqrt(y).to_bits());
            assert_eq!(Scalar::ln(y).to_bits(), Real::ln(y).to_bits());
            assert_eq!(Scalar::exp(y).to_bits(), Real::exp(y).to_bits());
            assert_eq!(Scalar::powf(y, 1.7).to_bits(), Real::powf(y, 1.7).to_bits());
        }
    }

    /// The helpers against their direct formulas where those are accurate.
    #[test]
    fn softplus_and_log_add_exp() {
        for z in [-30.0f64, -5.0, -0.5, 0.0, 0.5, 5.0, 30.0] {
            let direct = libm::log1p(libm::exp(z));
            assert!(
                (z.softplus() - direct).abs() <= 4.0 * f64::EPSILON * direct,
                "{z}"
            );
            let (a, b) = (z, 0.25 * z + 1.0);
            let direct = libm::log(libm::exp(a) + libm::exp(b));
            let got = Scalar::log_add_exp(a, b);
            assert!((got - direct).abs() <= 4.0 * f64::EPSILON * direct.abs().max(1.0));
            assert_eq!(got.to_bits(), Scalar::log_add_exp(b, a).to_bits());
        }
        assert_eq!(800.0f64.softplus(), 800.0);
        assert_eq!((-800.0f64).softplus(), 0.0);
        assert_eq!(Scalar::log_add_exp(f64::NEG_INFINITY, 2.0), 2.0);
        assert!(Scalar::log_add_exp(f64::NAN, 2.0).is_nan());
    }
}
