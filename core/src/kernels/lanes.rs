//! The NUTS trajectory's fused passes: each walks the vectors once and
//! returns four lanes per sum (entry 4q + l to lane l, then the tail, the
//! order of [`dot_wide`]), so that the sampler's leapfrog half-step, its
//! U-turn checks and its leaf merges cost one pass each instead of one per
//! dot product. The sampler folds the lanes as (l₀ + l₁) + (l₂ + l₃).

#[cfg(doc)]
use super::dot_wide;
use super::{at_length, vector_kernel};
use crate::real::Real;

vector_kernel! {
    /// The first half of a leapfrog step: p ← p − ½h ∇U, v ← v − ½h M⁻¹∇U,
    /// θ ← θ + h v, returning four lanes of Σ θᵢ·0. x·0 is 0 for finite x and
    /// NaN for ±∞ or NaN, so the lanes stay 0 iff θ stays finite (one
    /// multiply-add per coordinate, no branch; four lanes so the sum is not one
    /// long dependency chain). On the first `len` coordinates only.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn kick_and_drift_lanes[T: Real, const D: usize](
        half: T,
        h: T,
        gradient: &[T; D],
        gradient_velocity: &[T; D],
        momentum: &mut [T; D],
        velocity: &mut [T; D],
        position: &mut [T; D],
        len: usize,
    ) -> [T; 4]
    where length(len)
    {
        at_length!(len, D, |len| {
            let mut drift = [T::ZERO; 4];
            let mut update = |i: usize, lane: usize| {
                momentum[i] -= half * gradient[i];
                velocity[i] -= half * gradient_velocity[i];
                position[i] += h * velocity[i];
                drift[lane] += position[i] * T::ZERO;
            };
            // Blocks of four with a fixed lane each (a lane computed as i % 4
            // kept the loop scalar, its sums in memory).
            for q in 0..len / 4 {
                for lane in 0..4 {
                    update(4 * q + lane, lane);
                }
            }
            for i in len / 4 * 4..len {
                update(i, i % 4);
            }
            drift
        })
    }
}

vector_kernel! {
    /// The four [`dot_wide`] lanes of the six dot products of
    /// `merge_is_valid` (samplers/nuts), in the order v_begin_a·s₁, v_end_b·s₁,
    /// v_begin_a·s₂, v_begin_b·s₂, v_end_a·s₃, v_end_b·s₃ with s₁ = ρ_a + ρ_b,
    /// s₂ = ρ_a + p_begin_b, s₃ = p_end_a + ρ_b. One pass instead of six
    /// dependent chains; not inlined so that the lanes stay packed as loaded
    /// (see `vectors::dot_wide_lanes`).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn merge_lanes[T: Real, const D: usize](
        rho_a: &[T; D],
        p_end_a: &[T; D],
        v_begin_a: &[T; D],
        v_end_a: &[T; D],
        rho_b: &[T; D],
        p_begin_b: &[T; D],
        v_begin_b: &[T; D],
        v_end_b: &[T; D],
        len: usize,
    ) -> [[T; 4]; 6]
    where length(len)
    {
        at_length!(len, D, |len| {
            let mut acc = [[T::ZERO; 4]; 6];
            let mut add = |i: usize, l: usize| {
                let s1 = rho_a[i] + rho_b[i];
                let s2 = rho_a[i] + p_begin_b[i];
                let s3 = p_end_a[i] + rho_b[i];
                acc[0][l] += v_begin_a[i] * s1;
                acc[1][l] += v_end_b[i] * s1;
                acc[2][l] += v_begin_a[i] * s2;
                acc[3][l] += v_begin_b[i] * s2;
                acc[4][l] += v_end_a[i] * s3;
                acc[5][l] += v_end_b[i] * s3;
            };
            // Blocks of four (entry 4q + l to lane l), then the tail, as dot_wide.
            for q in 0..len / 4 {
                for l in 0..4 {
                    add(4 * q + l, l);
                }
            }
            for i in len / 4 * 4..len {
                add(i, i % 4);
            }
            acc
        })
    }
}

vector_kernel! {
    /// The [`dot_wide`] lanes of v₀·ρ and v₁·ρ, ρ = p₀ + p₁ (stored), in one pass.
    #[inline(never)]
    pub(crate) fn leaf_pair_lanes[T: Real, const D: usize](
        p0: &[T; D],
        v0: &[T; D],
        p1: &[T; D],
        v1: &[T; D],
        rho: &mut [T; D],
        len: usize,
    ) -> [[T; 4]; 2]
    where length(len)
    {
        at_length!(len, D, |len| {
            let mut acc = [[T::ZERO; 4]; 2];
            let mut add = |i: usize, l: usize| {
                let s = p0[i] + p1[i];
                rho[i] = s;
                acc[0][l] += v0[i] * s;
                acc[1][l] += v1[i] * s;
            };
            for q in 0..len / 4 {
                for l in 0..4 {
                    add(4 * q + l, l);
                }
            }
            for i in len / 4 * 4..len {
                add(i, i % 4);
            }
            acc
        })
    }
}
