//! Reverse mode: a fixed-capacity [`Tape`], tape variables [`Var`], and
//! [`ReverseGradient`], which records U once and sweeps it backwards for ∇U.

use core::cell::Cell;
use core::cmp::Ordering;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use super::AutodiffModel;
use crate::error::Error;
use crate::real::Real;
use crate::scalar::Scalar;
use crate::target::Potential;

/// The index of no node: a constant operand, or a result the full tape
/// could not record.
const NONE: u32 = u32::MAX;

/// One recorded operation: up to two operands with the partial derivatives
/// of the result with respect to them, and the adjoint ∂U/∂(this result)
/// filled by the backward sweep.
#[derive(Debug, Clone, Copy)]
struct Node<T> {
    parents: [u32; 2],
    weights: [T; 2],
    adjoint: T,
}

/// A fixed-capacity record of the operations of one evaluation of U: room
/// for `CAPACITY` nodes (the D inputs, then one per operation whose result
/// depends on them; constants and operations on constants take none).
///
/// Storage is a plain array of [`Cell`]s, not a `heapless::Vec`: the tape
/// is appended to through shared references ([`Var`] is `Copy` and holds a
/// `&Tape`), which needs interior mutability per node, and a length counter
/// is all `heapless::Vec` would add (the core uses no `heapless`; see
/// `docs/ARCHITECTURE.md`). A node takes two `u32` indices and three scalars (32 bytes for
/// `f64`, 20 for `f32`), so the tape is `CAPACITY` × 32 bytes in `f64`: put
/// a large one in a `Box` (or a thread with a large stack), not on a small stack.
///
/// When the model needs more nodes than `CAPACITY` the tape stops recording
/// (values are still computed), remembers that it overflowed, and the
/// gradient is reported as [`Error::TapeFull`] (or as NaN by
/// [`ReverseGradient`]'s [`Potential`] implementation); nothing panics.
pub struct Tape<T, const CAPACITY: usize> {
    nodes: [Cell<Node<T>>; CAPACITY],
    len: Cell<u32>,
    overflowed: Cell<bool>,
}

impl<T, const CAPACITY: usize> core::fmt::Debug for Tape<T, CAPACITY> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Tape")
            .field("capacity", &CAPACITY)
            .field("len", &self.len.get())
            .field("overflowed", &self.overflowed.get())
            .finish()
    }
}

impl<T: Scalar, const CAPACITY: usize> Default for Tape<T, CAPACITY> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Scalar, const CAPACITY: usize> Tape<T, CAPACITY> {
    /// An empty tape.
    pub fn new() -> Self {
        let zero = T::from_f64(0.0);
        let empty = Node {
            parents: [NONE; 2],
            weights: [zero; 2],
            adjoint: zero,
        };
        Tape {
            nodes: core::array::from_fn(|_| Cell::new(empty)),
            len: Cell::new(0),
            overflowed: Cell::new(false),
        }
    }

    /// The number of nodes recorded by the last evaluation (at most
    /// `CAPACITY`; see [`Tape::overflowed`]).
    pub fn len(&self) -> usize {
        self.len.get() as usize
    }

    /// `true` if nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.len.get() == 0
    }

    /// `true` if the last evaluation needed more than `CAPACITY` nodes.
    pub fn overflowed(&self) -> bool {
        self.overflowed.get()
    }

    /// Appends a node; [`NONE`] (and the overflow mark) when full.
    #[inline]
    fn push(&self, parents: [u32; 2], weights: [T; 2]) -> u32 {
        let len = self.len.get();
        if (len as usize) < CAPACITY && len < NONE {
            let adjoint = T::from_f64(0.0);
            self.nodes[len as usize].set(Node {
                parents,
                weights,
                adjoint,
            });
            self.len.set(len + 1);
            len
        } else {
            self.overflowed.set(true);
            NONE
        }
    }

    /// Records U(`position`) of `model` and writes ∇U into `gradient`
    /// (one forward evaluation and one backward sweep over the tape).
    ///
    /// # Errors
    /// [`Error::TapeFull`] if U needs more than `CAPACITY` nodes; `gradient`
    /// is then filled with NaN. A NaN or infinity in the model is not an
    /// error: it propagates to U and ∇U as IEEE arithmetic says.
    pub fn potential_and_gradient<M: AutodiffModel<D>, const D: usize>(
        &self,
        model: &M,
        position: &[T; D],
        gradient: &mut [T; D],
    ) -> Result<T, Error> {
        self.len.set(0);
        self.overflowed.set(false);
        let zero = T::from_f64(0.0);
        let theta: [Var<'_, T, CAPACITY>; D] = core::array::from_fn(|i| Var {
            value: position[i],
            index: self.push([NONE; 2], [zero; 2]),
            tape: Some(self),
        });
        let u = model.potential(&theta);
        if self.overflowed.get() {
            *gradient = [T::from_f64(f64::NAN); D];
            return Err(Error::TapeFull { capacity: CAPACITY });
        }
        *gradient = [zero; D];
        if u.index == NONE || u.tape.is_none() {
            return Ok(u.value); // U does not depend on θ.
        }
        let last = u.index as usize;
        let mut top = self.nodes[last].get();
        top.adjoint = T::from_f64(1.0);
        self.nodes[last].set(top);
        for i in (0..=last).rev() {
            let node = self.nodes[i].get();
            for (&parent, &weight) in node.parents.iter().zip(&node.weights) {
                if parent != NONE {
                    let cell = &self.nodes[parent as usize];
                    let mut p = cell.get();
                    p.adjoint += weight * node.adjoint;
                    cell.set(p);
                }
            }
        }
        for (g, node) in gradient.iter_mut().zip(&self.nodes) {
            *g = node.get().adjoint;
        }
        Ok(u.value)
    }
}

/// A variable on a [`Tape`]: its value, its node and the tape (`None` for
/// a constant, which has no node). `Copy`, so a model uses it like a float.
///
/// Comparisons look at the value only.
#[derive(Clone, Copy)]
pub struct Var<'t, T, const CAPACITY: usize> {
    value: T,
    index: u32,
    tape: Option<&'t Tape<T, CAPACITY>>,
}

impl<'t, T: Scalar, const CAPACITY: usize> Var<'t, T, CAPACITY> {
    /// The value.
    pub fn value(&self) -> T {
        self.value
    }

    /// `true` for a constant (no node on a tape).
    pub fn is_constant(&self) -> bool {
        self.tape.is_none()
    }

    /// A constant.
    #[inline]
    fn constant(value: T) -> Self {
        Var {
            value,
            index: NONE,
            tape: None,
        }
    }

    /// The node of f(self) with value `value` and f'(self) = `derivative`.
    #[inline]
    fn unary(self, value: T, derivative: T) -> Self {
        match self.tape {
            None => Self::constant(value),
            Some(tape) => Var {
                value,
                index: tape.push([self.index, NONE], [derivative, T::from_f64(0.0)]),
                tape: Some(tape),
            },
        }
    }

    /// The node of f(self, other) with value `value` and partial
    /// derivatives `d_self`, `d_other`.
    #[inline]
    fn binary(self, other: Self, value: T, d_self: T, d_other: T) -> Self {
        let zero = T::from_f64(0.0);
        match (self.tape, other.tape) {
            (None, None) => Self::constant(value),
            (Some(tape), None) => Var {
                value,
                index: tape.push([self.index, NONE], [d_self, zero]),
                tape: Some(tape),
            },
            (None, Some(tape)) => Var {
                value,
                index: tape.push([other.index, NONE], [d_other, zero]),
                tape: Some(tape),
            },
            (Some(tape), Some(_)) => Var {
                value,
                index: tape.push([self.index, other.index], [d_self, d_other]),
                tape: Some(tape),
            },
        }
    }
}

impl<T: core::fmt::Debug, const CAPACITY: usize> core::fmt::Debug for Var<'_, T, CAPACITY> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut s = f.debug_struct("Var");
        s.field("value", &self.value);
        if self.tape.is_some() && self.index != NONE {
            s.field("node", &self.index);
        }
        s.finish()
    }
}

impl<T: Scalar, const CAPACITY: usize> PartialEq for Var<'_, T, CAPACITY> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<T: Scalar, const CAPACITY: usize> PartialOrd for Var<'_, T, CAPACITY> {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.value.partial_cmp(&other.value)
    }
}

impl<T: Scalar, const CAPACITY: usize> Add for Var<'_, T, CAPACITY> {
    type Output = Self;
    #[inline]
    fn add(self, other: Self) -> Self {
        let one = T::from_f64(1.0);
        self.binary(other, self.value + other.value, one, one)
    }
}

impl<T: Scalar, const CAPACITY: usize> Sub for Var<'_, T, CAPACITY> {
    type Output = Self;
    #[inline]
    fn sub(self, other: Self) -> Self {
        let one = T::from_f64(1.0);
        self.binary(other, self.value - other.value, one, -one)
    }
}

impl<T: Scalar, const CAPACITY: usize> Mul for Var<'_, T, CAPACITY> {
    type Output = Self;
    #[inline]
    fn mul(self, other: Self) -> Self {
        self.binary(other, self.value * other.value, other.value, self.value)
    }
}

impl<T: Scalar, const CAPACITY: usize> Div for Var<'_, T, CAPACITY> {
    type Output = Self;
    #[inline]
    fn div(self, other: Self) -> Self {
        // ∂(a/b)/∂a = 1/b, ∂(a/b)/∂b = −(a/b)/b.
        let value = self.value / other.value;
        let inverse = T::from_f64(1.0) / other.value;
        self.binary(other, value, inverse, -value / other.value)
    }
}

impl<T: Scalar, const CAPACITY: usize> Neg for Var<'_, T, CAPACITY> {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        self.unary(-self.value, -T::from_f64(1.0))
    }
}

macro_rules! assign_ops {
    ($($trait:ident $method:ident $op:tt),*) => {$(
        impl<T: Scalar, const CAPACITY: usize> $trait for Var<'_, T, CAPACITY> {
            #[inline]
            fn $method(&mut self, other: Self) {
                *self = *self $op other;
            }
        }
    )*};
}
assign_ops!(AddAssign add_assign +, SubAssign sub_assign -, MulAssign mul_assign *,
            DivAssign div_assign /);

impl<T: Scalar, const CAPACITY: usize> Scalar for Var<'_, T, CAPACITY> {
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
        self.unary(root, T::from_f64(0.5) / root)
    }
    #[inline]
    fn ln(self) -> Self {
        self.unary(self.value.ln(), T::from_f64(1.0) / self.value)
    }
    #[inline]
    fn exp(self) -> Self {
        let e = self.value.exp();
        self.unary(e, e)
    }
    #[inline]
    fn powf(self, exponent: Self) -> Self {
        let zero = T::from_f64(0.0);
        let value = self.value.powf(exponent.value);
        let d_base = if self.tape.is_some() {
            exponent.value * self.value.powf(exponent.value - T::from_f64(1.0))
        } else {
            zero
        };
        let d_exponent = if exponent.tape.is_none() || value == zero {
            zero
        } else {
            value * self.value.ln()
        };
        self.binary(exponent, value, d_base, d_exponent)
    }
    #[inline]
    fn abs(self) -> Self {
        let sign = if self.value >= T::from_f64(0.0) {
            1.0
        } else {
            -1.0
        };
        self.unary(self.value.abs(), T::from_f64(sign))
    }
    #[inline]
    fn sin(self) -> Self {
        self.unary(self.value.sin(), self.value.cos())
    }
    #[inline]
    fn cos(self) -> Self {
        self.unary(self.value.cos(), -self.value.sin())
    }
    #[inline]
    fn sin_cos(self) -> (Self, Self) {
        let (s, c) = self.value.sin_cos();
        (self.unary(s, c), self.unary(c, -s))
    }
    #[inline]
    fn ln_1p(self) -> Self {
        let one = T::from_f64(1.0);
        self.unary(self.value.ln_1p(), one / (one + self.value))
    }
    #[inline]
    fn exp_m1(self) -> Self {
        self.unary(self.value.exp_m1(), self.value.exp())
    }
    #[inline]
    fn tanh(self) -> Self {
        let t = self.value.tanh();
        self.unary(t, T::from_f64(1.0) - t * t)
    }
}

/// ∇U by reverse mode on a tape of `CAPACITY` nodes owned by the wrapper:
/// U is evaluated once on [`Var`]s, recording every operation, and one
/// backward sweep gives the whole gradient.
///
/// Cost: one evaluation of U plus a sweep, whatever D; memory: the tape
/// (`CAPACITY` × 32 bytes in `f64`, see [`Tape`]). [`Tape::len`] (through
/// [`ReverseGradient::tape`]) after one evaluation tells how many nodes the
/// model needs. U comes back bit for bit as the model computes it on `T`.
///
/// The tape is mutated through `&self` (a [`Cell`]), so the wrapper is not
/// `Sync`: one per thread. A tape too small is never a panic: the
/// [`Potential`] implementation returns U = NaN and a NaN gradient (the
/// samplers count a divergence), and
/// [`ReverseGradient::try_potential_and_gradient`] returns
/// [`Error::TapeFull`].
#[derive(Debug)]
pub struct ReverseGradient<M, T, const CAPACITY: usize> {
    model: M,
    tape: Tape<T, CAPACITY>,
}

impl<M, T: Scalar, const CAPACITY: usize> ReverseGradient<M, T, CAPACITY> {
    /// Wraps `model`, with an empty tape.
    pub fn new(model: M) -> Self {
        ReverseGradient {
            model,
            tape: Tape::new(),
        }
    }

    /// The wrapped model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// The tape (its [`Tape::len`] is the node count of the last evaluation).
    pub fn tape(&self) -> &Tape<T, CAPACITY> {
        &self.tape
    }

    /// U(`position`), with ∇U written into `gradient`.
    ///
    /// # Errors
    /// [`Error::TapeFull`] when U needs more than `CAPACITY` nodes
    /// (`gradient` is then NaN).
    pub fn try_potential_and_gradient<const D: usize>(
        &self,
        position: &[T; D],
        gradient: &mut [T; D],
    ) -> Result<T, Error>
    where
        M: AutodiffModel<D>,
    {
        self.tape
            .potential_and_gradient(&self.model, position, gradient)
    }
}

impl<T, M, const D: usize, const CAPACITY: usize> Potential<T, D>
    for ReverseGradient<M, T, CAPACITY>
where
    T: Real + Scalar,
    M: AutodiffModel<D>,
{
    fn potential_and_gradient(&self, position: &[T; D], gradient: &mut [T; D]) -> T {
        self.try_potential_and_gradient(position, gradient)
            .unwrap_or(<T as Scalar>::from_f64(f64::NAN))
    }
}
