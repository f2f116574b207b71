//! Forward mode: [`Dual`] numbers with `N` tangents, and [`ForwardGradient`],
//! which evaluates U on them ⌈D/N⌉ times to fill ∇U.

use core::cmp::Ordering;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use super::AutodiffModel;
use crate::real::Real;
use crate::scalar::Scalar;
use crate::target::Potential;

/// A dual number: a value and `N` directional derivatives (tangents),
/// propagated by the chain rule through every [`Scalar`] operation.
///
/// Comparisons look at the value only. In the elementary functions a
/// tangent that is exactly zero stays zero (so a constant such as
/// `sqrt(0)` or `ln(0)` never turns its zero tangent into NaN); the
/// arithmetic operators follow IEEE rules on every tangent.
#[derive(Debug, Clone, Copy)]
pub struct Dual<T, const N: usize> {
    /// The value.
    pub value: T,
    /// The derivatives along the `N` seeded directions.
    pub tangent: [T; N],
}

impl<T: Scalar, const N: usize> Dual<T, N> {
    /// A constant: `value` with zero tangents.
    #[inline]
    pub fn constant(value: T) -> Self {
        Dual {
            value,
            tangent: [T::from_f64(0.0); N],
        }
    }

    /// `value` seeded along direction `direction` (tangent 1 there, 0
    /// elsewhere; a constant if `direction ≥ N`).
    #[inline]
    pub fn variable(value: T, direction: usize) -> Self {
        let mut dual = Self::constant(value);
        if direction < N {
            dual.tangent[direction] = T::from_f64(1.0);
        }
        dual
    }

    /// The chain rule of a function with value `value` and derivative
    /// `derivative` at `self.value`.
    #[inline]
    fn chain(self, value: T, derivative: T) -> Self {
        let zero = T::from_f64(0.0);
        let mut tangent = [zero; N];
        for k in 0..N {
            if self.tangent[k] != zero {
                tangent[k] = derivative * self.tangent[k];
            }
        }
        Dual { value, tangent }
    }
}

impl<T: Scalar, const N: usize> PartialEq for Dual<T, N> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<T: Scalar, const N: usize> PartialOrd for Dual<T, N> {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.value.partial_cmp(&other.value)
    }
}

impl<T: Scalar, const N: usize> Add for Dual<T, N> {
    type Output = Self;
    #[inline]
    fn add(mut self, other: Self) -> Self {
        self.value += other.value;
        for k in 0..N {
            self.tangent[k] += other.tangent[k];
        }
        self
    }
}

impl<T: Scalar, const N: usize> Sub for Dual<T, N> {
    type Output = Self;
    #[inline]
    fn sub(mut self, other: Self) -> Self {
        self.value -= other.value;
        for k in 0..N {
            self.tangent[k] -= other.tangent[k];
        }
        self
    }
}

impl<T: Scalar, const N: usize> Mul for Dual<T, N> {
    type Output = Self;
    #[inline]
    fn mul(self, other: Self) -> Self {
        let mut tangent = self.tangent;
        for k in 0..N {
            tangent[k] = self.tangent[k] * other.value + self.value * other.tangent[k];
        }
        Dual {
            value: self.value * other.value,
            tangent,
        }
    }
}

impl<T: Scalar, const N: usize> Div for Dual<T, N> {
    type Output = Self;
    #[inline]
    fn div(self, other: Self) -> Self {
        // (a/b)' = (a' − (a/b)·b')/b.
        let value = self.value / other.value;
        let mut tangent = self.tangent;
        for k in 0..N {
            tangent[k] = (self.tangent[k] - value * other.tangent[k]) / other.value;
        }
        Dual { value, tangent }
    }
}

impl<T: Scalar, const N: usize> Neg for Dual<T, N> {
    type Output = Self;
    #[inline]
    fn neg(mut self) -> Self {
        self.value = -self.value;
        for k in 0..N {
            self.tangent[k] = -self.tangent[k];
        }
        self
    }
}

macro_rules! assign_ops {
    ($($trait:ident $method:ident $op:tt),*) => {$(
        impl<T: Scalar, const N: usize> $trait for Dual<T, N> {
            #[inline]
            fn $method(&mut self, other: Self) {
                *self = *self $op other;
            }
        }
    )*};
}
assign_ops!(AddAssign add_assign +, SubAssign sub_assign -, MulAssign mul_assign *,
            DivAssign div_assign /);

impl<T: Scalar, const N: usize> Scalar for Dual<T, N> {
    #[inline]
    fn from_f64(value: f64) -> Self {
        Self::constant(T::from_f64(value))
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self.value.to_f64()
    }
    #[inline]
    fn sqrt(self) -> Self {
        let root = self.value.sqrt();
        self.chain(root, T::from_f64(0.5) / root)
    }
    #[inline]
    fn ln(self) -> Self {
        self.chain(self.value.ln(), T::from_f64(1.0) / self.value)
    }
    #[inline]
    fn exp(self) -> Self {
        let e = self.value.exp();
        self.chain(e, e)
    }
    #[inline]
    fn powf(self, exponent: Self) -> Self {
        let zero = T::from_f64(0.0);
        let value = self.value.powf(exponent.value);
        // ∂/∂a aᵇ = b·a^(b−1) (finite at a = 0 for b ≥ 1);
        // ∂/∂b aᵇ = aᵇ·ln a (0 where aᵇ = 0), only where b has a tangent.
        let base = exponent.value * self.value.powf(exponent.value - T::from_f64(1.0));
        let mut result = self.chain(value, base);
        if exponent.tangent.iter().any(|t| *t != zero) {
            let power = if value == zero {
                zero
            } else {
                value * self.value.ln()
            };
            for k in 0..N {
                if exponent.tangent[k] != zero {
                    result.tangent[k] += power * exponent.tangent[k];
                }
            }
        }
        result
    }
    #[inline]
    fn abs(self) -> Self {
        let sign = if self.value >= T::from_f64(0.0) {
            1.0
        } else {
            -1.0
        };
        self.chain(self.value.abs(), T::from_f64(sign))
    }
    #[inline]
    fn sin(self) -> Self {
        self.chain(self.value.sin(), self.value.cos())
    }
    #[inline]
    fn cos(self) -> Self {
        self.chain(self.value.cos(), -self.value.sin())
    }
    #[inline]
    fn sin_cos(self) -> (Self, Self) {
        let (s, c) = self.value.sin_cos();
        (self.chain(s, c), self.chain(c, -s))
    }
    #[inline]
    fn ln_1p(self) -> Self {
        let one = T::from_f64(1.0);
        self.chain(self.value.ln_1p(), one / (one + self.value))
    }
    #[inline]
    fn exp_m1(self) -> Self {
        self.chain(self.value.exp_m1(), self.value.exp())
    }
    #[inline]
    fn tanh(self) -> Self {
        let t = self.value.tanh();
        self.chain(t, T::from_f64(1.0) - t * t)
    }
}

/// ∇U by forward mode: U evaluated on [`Dual`] numbers with `N` tangents,
/// ⌈D/N⌉ times (the first `N` coordinates seeded, then the next `N`, …).
///
/// Cost: ⌈D/N⌉ evaluations of U, each carrying `N` tangents (about 1 + N
/// times the arithmetic of U); memory: D·(N + 1) scalars on the stack.
/// `N` = 8 to 16 is a good default; `N` ≥ D gives one evaluation. U comes
/// back bit for bit as the model computes it on `T`.
///
/// A NaN or infinity in the model propagates to U and ∇U as IEEE arithmetic
/// says; the samplers count it as a divergence.
#[derive(Debug, Clone, Copy, Default)]
pub struct ForwardGradient<M, const N: usize> {
    model: M,
}

impl<M, const N: usize> ForwardGradient<M, N> {
    /// Wraps `model`.
    pub const fn new(model: M) -> Self {
        ForwardGradient { model }
    }

    /// The wrapped model.
    pub fn model(&self) -> &M {
        &self.model
    }
}

impl<T, M, const D: usize, const N: usize> Potential<T, D> for ForwardGradient<M, N>
where
    T: Real + Scalar,
    M: AutodiffModel<D>,
{
    fn potential_and_gradient(&self, position: &[T; D], gradient: &mut [T; D]) -> T {
        const { assert!(N > 0, "ForwardGradient needs at least one tangent") };
        let mut start = 0;
        let mut potential = <T as Real>::ZERO;
        loop {
            let theta: [Dual<T, N>; D] =
                core::array::from_fn(|i| Dual::variable(position[i], i.wrapping_sub(start)));
            let u = self.model.potential(&theta);
            if start == 0 {
                potential = u.value;
            }
            let width = N.min(D - start);
            gradient[start..start + width].copy_from_slice(&u.tangent[..width]);
            start += N;
            if start >= D {
                return potential;
            }
        }
    }
}
