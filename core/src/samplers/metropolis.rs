//! The Metropolis accept/reject test shared by the Hamiltonian samplers.

use rand_core::Rng;

use crate::real::Real;

/// Energy error above which a proposal counts as divergent (Stan's value).
pub const DIVERGENCE_THRESHOLD: f64 = 1000.0;

/// Outcome of the Metropolis test on H(current) = `h0`, H(proposal) = `h1`.
pub(crate) struct Decision<T> {
    pub accepted: bool,
    pub probability: T,
    pub energy_error: T,
    pub divergent: bool,
}

/// Draws exactly one uniform u ∈ (0, 1] (also for a divergent proposal, so the
/// random stream does not depend on the outcome) and accepts iff
/// u ≤ min(1, exp(h0 − h1)). A non-finite `h1` or an energy error above
/// [`DIVERGENCE_THRESHOLD`] is a divergence and is rejected.
pub(crate) fn metropolis<T: Real, R: Rng + ?Sized>(h0: T, h1: T, rng: &mut R) -> Decision<T> {
    let u = T::uniform_open_closed(rng);
    let energy_error = h1 - h0;
    if !energy_error.is_finite() || energy_error > T::from_f64(DIVERGENCE_THRESHOLD) {
        return Decision {
            accepted: false,
            probability: T::ZERO,
            energy_error,
            divergent: true,
        };
    }
    let probability = if energy_error <= T::ZERO {
        T::ONE
    } else {
        (-energy_error).exp()
    };
    Decision {
        accepted: u <= probability,
        probability,
        energy_error,
        divergent: false,
    }
}
