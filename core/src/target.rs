//! What a model implements so the samplers can draw from it.
//!
//! The target density is π(θ) ∝ exp(−U(θ)). Implementations may return NaN or
//! infinite values (outside a support, overflow): the samplers treat them as
//! rejected divergences (HMC, QNHMC) or as a step error (HAMCMC), never as a panic.

use rand_core::Rng;

use crate::real::Real;

/// A full-data potential: U(θ) and ∇U(θ) from one call.
pub trait Potential<T: Real, const D: usize> {
    /// Writes ∇U(`position`) into `gradient` and returns U(`position`).
    fn potential_and_gradient(&self, position: &[T; D], gradient: &mut [T; D]) -> T;
}

impl<T: Real, const D: usize, P: Potential<T, D> + ?Sized> Potential<T, D> for &P {
    #[inline]
    fn potential_and_gradient(&self, position: &[T; D], gradient: &mut [T; D]) -> T {
        (**self).potential_and_gradient(position, gradient)
    }
}

/// A minibatch potential: the stochastic-gradient samplers draw a batch Ω with
/// the sampler's generator, then evaluate the unbiased estimate ∇Ũ_Ω at one or
/// more positions on that same batch (HAMCMC takes two gradients per batch).
///
/// ∇Ũ_Ω must include the prior term and the N/|Ω| scaling of the likelihood.
pub trait MinibatchPotential<T: Real, const D: usize> {
    /// A batch: typically a fixed-size array of indices, so no heap is needed.
    type Batch;
    /// Draws a batch Ω.
    fn draw_batch<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Batch;
    /// Writes ∇Ũ_Ω(`position`) into `gradient`.
    fn minibatch_gradient(&self, batch: &Self::Batch, position: &[T; D], gradient: &mut [T; D]);
}

/// Uses a full-data [`Potential`] where a [`MinibatchPotential`] is expected:
/// the "batch" is the whole data set and draws no random numbers.
#[derive(Debug, Clone, Copy, Default)]
pub struct FullBatch<P>(pub P);

impl<T: Real, const D: usize, P: Potential<T, D>> MinibatchPotential<T, D> for FullBatch<P> {
    type Batch = ();
    #[inline]
    fn draw_batch<R: Rng + ?Sized>(&self, _rng: &mut R) -> Self::Batch {}
    #[inline]
    fn minibatch_gradient(&self, _batch: &(), position: &[T; D], gradient: &mut [T; D]) {
        let _ = self.0.potential_and_gradient(position, gradient);
    }
}
