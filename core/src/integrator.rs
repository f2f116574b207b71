//! The leapfrog integrator every Hamiltonian sampler with a [`Metric`]
//! shares: [`Nuts`](crate::Nuts) (one step at a time, either direction),
//! [`Hmc`](crate::Hmc) and [`HmcBfgs`](crate::samplers::ensemble::HmcBfgs)
//! (a fixed number of steps per proposal).
//!
//! A [`PhasePoint`] carries, beside θ, p, ∇U and U, the velocity v = M⁻¹p
//! and w = M⁻¹∇U, so a step applies the metric once, to the new gradient:
//! p ← p − (h/2)∇U and v ← v − (h/2)w (the metric is linear), θ ← θ + h v,
//! then the new ∇U, w = M⁻¹∇U and the second half kick, whose pass also sums
//! the kinetic energy ½ p·v in the fixed four-lane order of
//! [`dot_wide`](crate::kernels::dot_wide). The kicks are never merged across
//! steps, so an L-step proposal is bit for bit L single steps (NUTS's leaves).
//! The passes are the lane kernels of [`kernels::lanes`](crate::kernels::lanes)
//! and [`kernels::vectors`](crate::kernels::vectors).
//!
//! A step whose new position is not finite ends the trajectory before the
//! target is evaluated (its energy set to +∞); a U or ∇U that is not finite
//! gives a non-finite energy, which ends the trajectory as a divergence.
//!
//! Friction dynamics (AMAGOLD, the complete-recipe family) and QNHMC's
//! position-dependent metric integrate in their own files.

use crate::kernels::half_kick_and_kinetic_energy_leading;
use crate::kernels::lanes::kick_and_drift_lanes;
use crate::metric::Metric;
use crate::real::Real;
use crate::target::Potential;

/// A point of the trajectory with everything the next leapfrog step needs.
#[derive(Debug, Clone)]
#[cfg_attr(target_arch = "x86_64", repr(C, align(64)))]
pub(crate) struct PhasePoint<T, const D: usize> {
    pub(crate) position: [T; D],
    pub(crate) momentum: [T; D],
    pub(crate) gradient: [T; D],
    /// v = M⁻¹ p.
    pub(crate) velocity: [T; D],
    /// w = M⁻¹ ∇U.
    pub(crate) gradient_velocity: [T; D],
    pub(crate) potential: T,
    pub(crate) energy: T,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize] PhasePoint<T, D> { position, momentum, gradient, velocity, gradient_velocity, potential, energy });

impl<T: Real, const D: usize> PhasePoint<T, D> {
    pub(crate) fn zero() -> Self {
        PhasePoint {
            position: [T::ZERO; D],
            momentum: [T::ZERO; D],
            gradient: [T::ZERO; D],
            velocity: [T::ZERO; D],
            gradient_velocity: [T::ZERO; D],
            potential: T::ZERO,
            energy: T::ZERO,
        }
    }

    /// One leapfrog step of signed size `h`. Returns `false` (without
    /// evaluating the target) when the new position is not finite; otherwise
    /// `energy` is set, NaN or ±∞ when U or ∇U was not finite.
    #[inline(always)]
    pub(crate) fn leapfrog<K: Metric<T, D>, P: Potential<T, D>>(
        &mut self,
        h: T,
        metric: &K,
        target: &P,
        n: usize,
    ) -> bool {
        let half = T::HALF * h;
        let drift = kick_and_drift_lanes(
            half,
            h,
            &self.gradient,
            &self.gradient_velocity,
            &mut self.momentum,
            &mut self.velocity,
            &mut self.position,
            n,
        );
        if (drift[0] + drift[1]) + (drift[2] + drift[3]) != T::ZERO {
            self.energy = T::INFINITY;
            return false;
        }
        self.potential = target.potential_and_gradient(&self.position, &mut self.gradient);
        metric.velocity_leading(&self.gradient, &mut self.gradient_velocity, n);
        self.energy = self.potential
            + half_kick_and_kinetic_energy_leading(
                half,
                &self.gradient,
                &self.gradient_velocity,
                &mut self.momentum,
                &mut self.velocity,
                n,
            );
        true
    }

    /// Starts a trajectory at the position, gradient and potential already
    /// in `self`: p = M^{1/2} z from the standard normals `normals`,
    /// v = M⁻¹p, w = M⁻¹∇U and the energy U + K.
    #[inline(always)]
    pub(crate) fn start<K: Metric<T, D>>(&mut self, normals: &[T; D], metric: &K, n: usize) {
        metric.momentum_from_normals_leading(normals, &mut self.momentum, n);
        metric.velocity_leading(&self.momentum, &mut self.velocity, n);
        metric.velocity_leading(&self.gradient, &mut self.gradient_velocity, n);
        self.energy = self.potential + kinetic_energy(metric, &self.momentum, &self.velocity, n);
    }

    /// `steps` leapfrog steps of size `h`, stopping at the first that ends
    /// with a non-finite position (not evaluated) or energy. Returns the
    /// gradient evaluations made; `energy` is finite only if all `steps`
    /// were taken and ended finite.
    #[inline]
    pub(crate) fn leapfrog_steps<K: Metric<T, D>, P: Potential<T, D>>(
        &mut self,
        h: T,
        steps: u32,
        metric: &K,
        target: &P,
        n: usize,
    ) -> u32 {
        let mut evaluations = 0;
        for _ in 0..steps {
            if !self.leapfrog(h, metric, target, n) {
                break;
            }
            evaluations += 1;
            if !self.energy.is_finite() {
                break;
            }
        }
        evaluations
    }

    /// `self` ← `other` on the first `n` coordinates (the rest stays zero).
    #[inline]
    pub(crate) fn copy_leading(&mut self, other: &Self, n: usize) {
        copy_leading(&mut self.position, &other.position, n);
        copy_leading(&mut self.momentum, &other.momentum, n);
        copy_leading(&mut self.gradient, &other.gradient, n);
        copy_leading(&mut self.velocity, &other.velocity, n);
        copy_leading(&mut self.gradient_velocity, &other.gradient_velocity, n);
        self.potential = other.potential;
        self.energy = other.energy;
    }
}

/// K = ½ p·v on the first `n` coordinates: the metric's own
/// [`Metric::kinetic_energy`] when n = D, else the same [`dot_wide`](crate::kernels::dot_wide) sum on
/// the first n entries (bit for bit that of a sampler of size n).
#[inline]
pub(crate) fn kinetic_energy<T: Real, const D: usize, K: Metric<T, D>>(
    metric: &K,
    p: &[T; D],
    v: &[T; D],
    n: usize,
) -> T {
    if n >= D {
        metric.kinetic_energy(p, v)
    } else {
        T::HALF * crate::kernels::dot_wide_slice(&p[..n], &v[..n])
    }
}

/// `dst[..n]` ← `src[..n]` (n at most D): the coordinates a sampler of
/// dimension n moves; the rest stays zero.
#[inline]
pub(crate) fn copy_leading<T: Copy, const D: usize>(dst: &mut [T; D], src: &[T; D], n: usize) {
    if n >= D {
        *dst = *src;
    } else {
        dst[..n].copy_from_slice(&src[..n]);
    }
}
