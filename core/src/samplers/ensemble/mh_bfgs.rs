//! MH-BFGS (Zhang & Sutton 2011, §4.1, eq. 14).

use rand_core::Rng;

use super::{Ensemble, accept_or_reject, paper_curvature, validate_metric};
use crate::error::{Error, require_positive};
use crate::kernels::{all_finite, dot_leading};
use crate::lbfgs::{CurvaturePolicy, InitialScaling, LbfgsMemory};
use crate::random::fill_standard_normal;
use crate::real::Real;
use crate::stats::StepStats;
use crate::target::Potential;

/// The proposal mean µ(x) of MH-BFGS; the covariance is always ε² H.
///
/// `#[repr(u8)]`: a tag byte, 0 for `RandomWalk`, so all-zero bytes are
/// `RandomWalk` ([`ZeroValid`](crate::in_place::ZeroValid)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum MhBfgsProposal {
    /// µ(x) = x: x′ = x + ε S z. Symmetric, because H depends on the other
    /// chains only: q(x′|x) = q(x|x′), so eq. 14 reduces to min(1, π(x′)/π(x))
    /// and no density term is computed (log det H cancels too).
    RandomWalk,
    /// The paper's "Newton step from x_t", in Langevin form:
    /// µ(x) = x − (ε²/2) H ∇U(x), x′ = µ(x) + ε S z (ε = √2 is the full Newton
    /// step with covariance 2H). Not symmetric: eq. 14 is evaluated with
    /// −log q(a|b) = ½ ε⁻² (a − µ(b))ᵀ B (a − µ(b)) + const, the quadratic form
    /// through [`LbfgsMemory::apply_hessian`]; log det(ε²H) is the same in both
    /// directions and cancels.
    ///
    /// [`LbfgsMemory::apply_hessian`]: crate::lbfgs::LbfgsMemory::apply_hessian
    Newton,
}

// SAFETY: `repr(u8)` without fields: the zero tag is `RandomWalk` (the first
// variant, discriminant 0).
#[allow(unsafe_code)]
unsafe impl crate::in_place::ZeroValid for MhBfgsProposal {}

crate::saved_state::saved_enum!(MhBfgsProposal { RandomWalk, Newton });

/// Settings of [`MhBfgs`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MhBfgsSettings<T> {
    /// Proposal scale ε > 0: the proposal covariance is ε² H.
    pub step_size: T,
    /// Proposal mean.
    pub proposal: MhBfgsProposal,
    /// γ of H⁰ = γI (default: γ = sᵀy / yᵀy of the newest pair, 1 without pairs).
    pub scaling: InitialScaling<T>,
    /// Which pairs enter the metric (default: the paper's sᵀy > 0).
    pub curvature: CurvaturePolicy<T>,
}

crate::in_place::zero_valid!(impl[T: Real] MhBfgsSettings<T> {
    step_size, proposal, scaling, curvature
});

impl<T: Real> MhBfgsSettings<T> {
    /// Proposal scale ε and mean rule, γ from the newest pair, the paper's
    /// curvature rule.
    pub fn new(step_size: T, proposal: MhBfgsProposal) -> Self {
        MhBfgsSettings {
            step_size,
            proposal,
            scaling: InitialScaling::NewestPair(T::ONE),
            curvature: paper_curvature(),
        }
    }

    /// Checks every setting.
    pub fn validate(&self) -> Result<(), Error> {
        require_positive(self.step_size, "step_size")?;
        validate_metric(self.scaling, &self.curvature)
    }
}

/// MH-BFGS: an ensemble of `K` Metropolis–Hastings chains in dimension `D`;
/// chain i gets a Gaussian proposal with covariance ε² H, H the L-BFGS
/// inverse-Hessian approximation from the other K − 1 chains (module docs of
/// [`ensemble`](super)). `M ≥ K − 2` is the pair capacity. An exact sampler of
/// ∏ π(x_k).
///
/// One `step` updates chain [`next_chain`](Self::next_chain) (round-robin):
/// build H; x′ = µ(x) + ε S z with S Sᵀ = H
/// ([`LbfgsMemory::apply_sqrt_inverse_hessian`]); one evaluation of U and ∇U at
/// x′ (∇U is needed because accepted states feed the other chains' metrics);
/// accept with the probability of eq. 14.
///
/// Random numbers per step: n standard normals (n =
/// [`dimension`](Self::dimension); z, via
/// [`fill_standard_normal`](crate::random::fill_standard_normal)), then one
/// uniform (drawn even for a divergent proposal).
///
/// [`LbfgsMemory::apply_sqrt_inverse_hessian`]: crate::lbfgs::LbfgsMemory::apply_sqrt_inverse_hessian
#[derive(Debug, Clone)]
pub struct MhBfgs<T, const D: usize, const K: usize, const M: usize> {
    settings: MhBfgsSettings<T>,
    ensemble: Ensemble<T, D, K, M>,
    z: [T; D],
    noise: [T; D],
    drift: [T; D],
    residual: [T; D],
    product: [T; D],
    proposal: [T; D],
    proposal_gradient: [T; D],
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize, const K: usize, const M: usize] MhBfgs<T, D, K, M> {
    settings, ensemble, z, noise, drift, residual, product, proposal, proposal_gradient
});

/// ½ ε⁻² (a − µ(b))ᵀ B (a − µ(b)) over the first n coordinates for the
/// Newton mean, µ(b) = b + `drift` where `drift` = −(ε²/2) H ∇U(b) must
/// already hold (`residual` and `product` are scratch).
#[allow(clippy::too_many_arguments)]
fn newton_energy<T: Real, const D: usize, const M: usize>(
    memory: &mut LbfgsMemory<T, D, M>,
    eps: T,
    drift: &[T; D],
    a: &[T; D],
    b: &[T; D],
    residual: &mut [T; D],
    product: &mut [T; D],
    n: usize,
) -> T {
    for i in 0..n {
        residual[i] = a[i] - (b[i] + drift[i]);
    }
    memory.apply_hessian(residual, product);
    T::HALF * dot_leading(residual, product, n) / (eps * eps)
}

/// `drift` ← −(ε²/2) H g over the first n coordinates.
fn set_drift<T: Real, const D: usize, const M: usize>(
    memory: &LbfgsMemory<T, D, M>,
    eps: T,
    g: &[T; D],
    drift: &mut [T; D],
    n: usize,
) {
    memory.apply_inverse_hessian(g, drift);
    let c = -(T::HALF * eps * eps);
    for v in drift.iter_mut().take(n) {
        *v *= c;
    }
}

impl<T: Real, const D: usize, const K: usize, const M: usize> MhBfgs<T, D, K, M> {
    /// Validates the settings, `K ≥ 3` and `M ≥ K − 2` (errors name `K` and `M`),
    /// and evaluates the target at every initial state.
    pub fn new<P: Potential<T, D>>(
        settings: MhBfgsSettings<T>,
        initial_positions: [[T; D]; K],
        target: &P,
    ) -> Result<Self, Error> {
        settings.validate()?;
        Ok(MhBfgs {
            settings,
            ensemble: Ensemble::new(
                settings.scaling,
                settings.curvature,
                initial_positions,
                target,
            )?,
            z: [T::ZERO; D],
            noise: [T::ZERO; D],
            drift: [T::ZERO; D],
            residual: [T::ZERO; D],
            product: [T::ZERO; D],
            proposal: [T::ZERO; D],
            proposal_gradient: [T::ZERO; D],
        })
    }

    /// Updates chain [`next_chain`](Self::next_chain) and moves the cursor on.
    /// Never fails: a non-finite energy is a rejected, counted divergence.
    pub fn step<P: Potential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> StepStats<T> {
        let eps = self.settings.step_size;
        let mut stats = StepStats::new(eps);
        let n = self.ensemble.dimension();
        let chain = self.ensemble.take_next();
        if chain >= K {
            return stats;
        }
        stats.pairs_skipped = self.ensemble.build_metric(chain);
        let ensemble = &mut self.ensemble;
        let (x, g, u) = (
            &ensemble.positions[chain],
            &ensemble.gradients[chain],
            ensemble.potentials[chain],
        );
        let memory = &mut ensemble.memory;

        fill_standard_normal(rng, &mut self.z[..n]);
        memory.apply_sqrt_inverse_hessian(&self.z, &mut self.noise);
        let newton = self.settings.proposal == MhBfgsProposal::Newton;
        if newton {
            set_drift(memory, eps, g, &mut self.drift, n);
        } else {
            self.drift[..n].fill(T::ZERO);
        }
        for i in 0..n {
            self.proposal[i] = x[i] + self.drift[i] + eps * self.noise[i];
        }

        let mut h0 = u;
        let mut h1 = T::INFINITY;
        let mut potential = T::INFINITY;
        if all_finite(&self.proposal[..n]) {
            if newton {
                h0 += newton_energy(
                    memory,
                    eps,
                    &self.drift,
                    &self.proposal,
                    x,
                    &mut self.residual,
                    &mut self.product,
                    n,
                );
            }
            potential = target.potential_and_gradient(&self.proposal, &mut self.proposal_gradient);
            stats.gradient_evaluations = 1;
            if potential.is_finite() && all_finite(&self.proposal_gradient[..n]) {
                h1 = potential;
                if newton {
                    set_drift(memory, eps, &self.proposal_gradient, &mut self.drift, n);
                    h1 += newton_energy(
                        memory,
                        eps,
                        &self.drift,
                        x,
                        &self.proposal,
                        &mut self.residual,
                        &mut self.product,
                        n,
                    );
                }
            }
        }
        if accept_or_reject(h0, h1, rng, &mut stats) {
            self.ensemble
                .set_state(chain, &self.proposal, &self.proposal_gradient, potential);
        }
        stats
    }
}

shared_methods!(
    MhBfgs,
    MhBfgsSettings,
    /// Sets the proposal scale ε; must be finite and > 0.
);
