//! The trajectory's pieces: phase points advanced by the leapfrog step, the
//! drawn states, the spans the U-turn checks merge, the multinomial weights
//! and the counters of one transition. The tree that uses them is built in
//! [`Nuts`](super::Nuts)'s `step`.

use crate::integrator::{PhasePoint, copy_leading};
use crate::kernels::at_length;
#[cfg(doc)]
use crate::kernels::dot_wide;
use crate::kernels::lanes::{leaf_pair_lanes, merge_lanes};
use crate::real::Real;

/// A drawn state: what the chain moves to.
#[derive(Debug, Clone)]
#[cfg_attr(target_arch = "x86_64", repr(C, align(64)))]
pub(super) struct Sample<T, const D: usize> {
    pub(super) position: [T; D],
    pub(super) gradient: [T; D],
    pub(super) potential: T,
    pub(super) energy: T,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize] Sample<T, D> { position, gradient, potential, energy });

impl<T: Real, const D: usize> Sample<T, D> {
    pub(super) fn zero() -> Self {
        Sample {
            position: [T::ZERO; D],
            gradient: [T::ZERO; D],
            potential: T::ZERO,
            energy: T::ZERO,
        }
    }

    #[inline]
    pub(super) fn take(&mut self, point: &PhasePoint<T, D>, n: usize) {
        copy_leading(&mut self.position, &point.position, n);
        copy_leading(&mut self.gradient, &point.gradient, n);
        self.potential = point.potential;
        self.energy = point.energy;
    }
}

/// What the U-turn checks need of a completed (sub)tree, in build order.
#[derive(Debug, Clone)]
#[cfg_attr(target_arch = "x86_64", repr(C, align(64)))]
pub(super) struct Span<T, const D: usize> {
    /// Sum of the momenta of its leaves.
    pub(super) rho: [T; D],
    pub(super) momentum_begin: [T; D],
    pub(super) velocity_begin: [T; D],
    pub(super) momentum_end: [T; D],
    pub(super) velocity_end: [T; D],
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize] Span<T, D> { rho, momentum_begin, velocity_begin, momentum_end, velocity_end });

impl<T: Real, const D: usize> Span<T, D> {
    pub(super) fn zero() -> Self {
        Span {
            rho: [T::ZERO; D],
            momentum_begin: [T::ZERO; D],
            velocity_begin: [T::ZERO; D],
            momentum_end: [T::ZERO; D],
            velocity_end: [T::ZERO; D],
        }
    }

    #[inline]
    pub(super) fn set_leaf(&mut self, point: &PhasePoint<T, D>, n: usize) {
        copy_leading(&mut self.rho, &point.momentum, n);
        copy_leading(&mut self.momentum_begin, &point.momentum, n);
        copy_leading(&mut self.velocity_begin, &point.velocity, n);
        copy_leading(&mut self.momentum_end, &point.momentum, n);
        copy_leading(&mut self.velocity_end, &point.velocity, n);
    }

    /// Appends `next` (built after `self`): ρ adds, the end moves.
    #[inline]
    pub(super) fn absorb(&mut self, next: &Span<T, D>, n: usize) {
        at_length!(n, D, |n| {
            for i in 0..n {
                self.rho[i] += next.rho[i];
            }
        });
        copy_leading(&mut self.momentum_end, &next.momentum_end, n);
        copy_leading(&mut self.velocity_end, &next.velocity_end, n);
    }
}

/// The three checks of docs/NUTS.md on trees A then B (trajectory or build
/// order), given by their ρ and their end momenta/velocities:
/// crit(a, b, ρ) = a·ρ > 0 and b·ρ > 0 (the trajectory has not turned back)
/// for (v_begin_a, v_end_b, ρ_a + ρ_b), (v_begin_a, v_begin_b, ρ_a + p_begin_b)
/// and (v_end_a, v_end_b, p_end_a + ρ_b). The six dot products are those of
/// [`dot_wide`], computed in one pass.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(super) fn merge_is_valid<T: Real, const D: usize>(
    rho_a: &[T; D],
    p_end_a: &[T; D],
    v_begin_a: &[T; D],
    v_end_a: &[T; D],
    rho_b: &[T; D],
    p_begin_b: &[T; D],
    v_begin_b: &[T; D],
    v_end_b: &[T; D],
    n: usize,
) -> bool {
    merge_lanes(
        rho_a, p_end_a, v_begin_a, v_end_a, rho_b, p_begin_b, v_begin_b, v_end_b, n,
    )
    .iter()
    .all(|l| (l[0] + l[1]) + (l[2] + l[3]) > T::ZERO)
}

/// The merge of two single leaves, the earlier (p₀, v₀) and the later
/// (p₁, v₁): then ρ_a = p_end_a = p₀, ρ_b = p_begin_b = p₁ and both velocities
/// of each tree coincide, so the three checks of [`merge_is_valid`] are one,
/// crit(v₀, v₁, p₀ + p₁). Writes ρ = p₀ + p₁ of the merged tree to `rho`.
#[inline]
pub(super) fn leaf_pair_is_valid<T: Real, const D: usize>(
    p0: &[T; D],
    v0: &[T; D],
    p1: &[T; D],
    v1: &[T; D],
    rho: &mut [T; D],
    n: usize,
) -> bool {
    leaf_pair_lanes(p0, v0, p1, v1, rho, n)
        .iter()
        .all(|l| (l[0] + l[1]) + (l[2] + l[3]) > T::ZERO)
}

pub(super) fn merge_spans_valid<T: Real, const D: usize>(
    a: &Span<T, D>,
    b: &Span<T, D>,
    n: usize,
) -> bool {
    merge_is_valid(
        &a.rho,
        &a.momentum_end,
        &a.velocity_begin,
        &a.velocity_end,
        &b.rho,
        &b.momentum_begin,
        &b.velocity_begin,
        &b.velocity_end,
        n,
    )
}

/// The leaves' multinomial weights exp(H₀ − H), kept in linear space
/// relative to a reference energy: a weight is exp(`reference` − H), one
/// exponential per leaf (the one the acceptance statistic needs anyway)
/// instead of the log-space sums' three exponentials and a logarithm. The
/// reference is H₀ unless a leaf's weight would exceed [`MAX_WEIGHT`] (its H
/// far below H₀, e.g. a chain falling from the tails): then the weights are
/// rebased on that leaf. Decisions equal the log-space ones of docs/NUTS.md
/// up to rounding.
pub(super) struct Weights<T> {
    pub(super) reference: T,
    /// Sum of the weights of the trajectory's valid leaves (the tree).
    pub(super) tree: T,
    /// Sum of the weights of the subtree being built.
    pub(super) subtree: T,
}

impl<T: Real> Weights<T> {
    /// The largest weight before a rebase, 2⁶⁴ (f32 holds 2¹⁰ leaves of it).
    pub(super) const MAX_WEIGHT: f64 = 18_446_744_073_709_551_616.0;

    /// The weight of a leaf of energy `energy` whose exp(H₀ − H) is `ratio`,
    /// rebasing first when it would exceed `MAX_WEIGHT`.
    #[inline]
    pub(super) fn leaf(&mut self, h0: T, energy: T, ratio: T) -> T {
        let weight = if self.reference == h0 {
            ratio
        } else {
            (self.reference - energy).exp()
        };
        if weight <= T::from_f64(Self::MAX_WEIGHT) {
            return weight;
        }
        // exp(H − reference) < 2⁻⁶⁴: may underflow to 0, which is harmless.
        let scale = (energy - self.reference).exp();
        self.tree *= scale;
        self.subtree *= scale;
        self.reference = energy;
        T::ONE
    }
}

/// Two distinct elements of a slice, mutably.
#[inline]
pub(super) fn two_mut<X>(xs: &mut [X], a: usize, b: usize) -> Option<(&mut X, &mut X)> {
    if a < b {
        let (lo, hi) = xs.split_at_mut(b);
        Some((lo.get_mut(a)?, hi.get_mut(0)?))
    } else if b < a {
        let (lo, hi) = xs.split_at_mut(a);
        let (x, y) = (hi.get_mut(0)?, lo.get_mut(b)?);
        Some((x, y))
    } else {
        None
    }
}

/// How a new subtree ended.
pub(super) enum Subtree {
    /// All 2^depth leaves built, no divergence, no inner U-turn; its weight
    /// is in `Weights::subtree`.
    Valid,
    /// A divergence or an inner U-turn: the subtree is discarded.
    Invalid,
}

/// Counters of one transition.
pub(super) struct Tally<T> {
    pub(super) leapfrog_steps: u32,
    pub(super) gradient_evaluations: u32,
    pub(super) acceptance_sum: T,
    pub(super) symmetric_acceptance_sum: T,
    pub(super) divergent: bool,
}
