//! Per-draw statistics returned by every `step` call.

use crate::real::Real;

/// What happened during one draw.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct StepStats<T> {
    /// Whether the proposal was accepted (always `true` for HAMCMC, which has no
    /// accept/reject test).
    pub accepted: bool,
    /// min(1, exp(−ΔH)), or 1 for HAMCMC; 0 for a divergent proposal.
    pub acceptance_probability: T,
    /// H(proposal) − H(current), NaN or ±∞ for a divergent proposal, 0 for HAMCMC.
    pub energy_error: T,
    /// The trajectory produced a non-finite energy or an energy error above the
    /// sampler's divergence threshold; a divergent proposal is always rejected.
    pub divergent: bool,
    /// Gradient evaluations spent on this draw.
    pub gradient_evaluations: u32,
    /// L-BFGS pairs rejected by the curvature policy during this draw.
    pub pairs_skipped: u32,
    /// The step size used for this draw (HAMCMC's estimator weights ε_t).
    pub step_size: T,
    /// The Hamiltonian H = U + K of the phase point the draw keeps (Stan's
    /// `energy__`): U = −log π at the kept state, K = ½ pᵀM⁻¹p of its
    /// momentum (the proposal's final momentum when it was accepted, else the
    /// momentum drawn at the start of the draw). `None` for samplers without
    /// a Hamiltonian of the target (Metropolis, MH-BFGS, HAMCMC, the
    /// stochastic-gradient recipe family, and AMAGOLD, whose test weighs U
    /// against the ratio of its damped, noisy proposal densities).
    pub energy: Option<T>,
}

impl<T: Real> StepStats<T> {
    pub(crate) fn new(step_size: T) -> Self {
        StepStats {
            accepted: false,
            acceptance_probability: T::ZERO,
            energy_error: T::ZERO,
            divergent: false,
            gradient_evaluations: 0,
            pairs_skipped: 0,
            step_size,
            energy: None,
        }
    }
}
