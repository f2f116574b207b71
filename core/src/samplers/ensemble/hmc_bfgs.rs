//! HMC-BFGS (Zhang & Sutton 2011, §4.2, Algorithm 1, eq. 15).

use rand_core::Rng;

use super::{Ensemble, accept_or_reject, paper_curvature, validate_metric};
use crate::error::{Error, require_positive};
use crate::kernels::{all_finite, dot};
use crate::lbfgs::{CurvaturePolicy, InitialScaling};
use crate::random::fill_standard_normal;
use crate::real::Real;
use crate::stats::StepStats;
use crate::target::Potential;

/// Settings of [`HmcBfgs`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HmcBfgsSettings<T> {
    /// Leapfrog step size ε > 0.
    pub step_size: T,
    /// Leapfrog steps per update, L ≥ 1.
    pub leapfrog_steps: u32,
    /// γ of H⁰ = γI (default: γ = sᵀy / yᵀy of the newest pair, 1 without pairs).
    pub scaling: InitialScaling<T>,
    /// Which pairs enter the metric (default: the paper's sᵀy > 0).
    pub curvature: CurvaturePolicy<T>,
}

impl<T: Real> HmcBfgsSettings<T> {
    /// Step size ε and L leapfrog steps, γ from the newest pair, the paper's
    /// curvature rule.
    pub fn new(step_size: T, leapfrog_steps: u32) -> Self {
        HmcBfgsSettings {
            step_size,
            leapfrog_steps,
            scaling: InitialScaling::NewestPair(T::ONE),
            curvature: paper_curvature(),
        }
    }

    /// Checks every setting (the γ and curvature settings are checked as by
    /// [`LbfgsMemory::new`]).
    ///
    /// [`LbfgsMemory::new`]: crate::lbfgs::LbfgsMemory::new
    pub fn validate(&self) -> Result<(), Error> {
        require_positive(self.step_size, "step_size")?;
        if self.leapfrog_steps == 0 {
            return Err(Error::invalid("leapfrog_steps", ">= 1"));
        }
        validate_metric(self.scaling, &self.curvature)
    }
}

/// HMC-BFGS: an ensemble of `K` HMC chains in dimension `D`; chain i is moved
/// by HMC with mass matrix B = H⁻¹, the L-BFGS Hessian approximation built from
/// the other K − 1 chains (module docs of [`ensemble`](super)). `M ≥ K − 2` is
/// the pair capacity. An exact sampler of ∏ π(x_k).
///
/// One `step` updates chain [`next_chain`](Self::next_chain) (round-robin):
/// 1. build H from the other chains;
/// 2. p = C z with C Cᵀ = B ([`LbfgsMemory::apply_sqrt_hessian`]), so p ~ N(0, B);
/// 3. L leapfrog steps of eq. 3–5 with kinetic energy ½ pᵀHp (eq. 15):
///    p ← p − (ε/2)∇U; L × { x ← x + ε H p; p ← p − ε∇U } with the last kick halved;
/// 4. accept with probability min(1, exp(H₀ − H₁)), H = U + ½ pᵀHp.
///
/// Random numbers per step: D standard normals
/// ([`fill_standard_normal`](crate::random::fill_standard_normal), in the order
/// of z's entries), then one uniform (the Metropolis test, drawn even for a
/// divergent trajectory).
///
/// [`LbfgsMemory::apply_sqrt_hessian`]: crate::lbfgs::LbfgsMemory::apply_sqrt_hessian
#[derive(Debug, Clone)]
pub struct HmcBfgs<T, const D: usize, const K: usize, const M: usize> {
    settings: HmcBfgsSettings<T>,
    ensemble: Ensemble<T, D, K, M>,
    z: [T; D],
    momentum: [T; D],
    velocity: [T; D],
    proposal: [T; D],
    proposal_gradient: [T; D],
}

impl<T: Real, const D: usize, const K: usize, const M: usize> HmcBfgs<T, D, K, M> {
    /// Validates the settings, `K ≥ 3` and `M ≥ K − 2` (errors name `K` and `M`),
    /// and evaluates the target at every initial state.
    pub fn new<P: Potential<T, D>>(
        settings: HmcBfgsSettings<T>,
        initial_positions: [[T; D]; K],
        target: &P,
    ) -> Result<Self, Error> {
        settings.validate()?;
        Ok(HmcBfgs {
            settings,
            ensemble: Ensemble::new(
                settings.scaling,
                settings.curvature,
                initial_positions,
                target,
            )?,
            z: [T::ZERO; D],
            momentum: [T::ZERO; D],
            velocity: [T::ZERO; D],
            proposal: [T::ZERO; D],
            proposal_gradient: [T::ZERO; D],
        })
    }

    /// ½ pᵀHp of `self.momentum`, with H p left in `self.velocity`.
    fn kinetic(&mut self) -> T {
        self.ensemble
            .memory
            .apply_inverse_hessian(&self.momentum, &mut self.velocity);
        T::HALF * dot(&self.momentum, &self.velocity)
    }

    /// Updates chain [`next_chain`](Self::next_chain) and moves the cursor on.
    /// Never fails: a non-finite energy is a rejected, counted divergence.
    pub fn step<P: Potential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> StepStats<T> {
        let eps = self.settings.step_size;
        let half = T::HALF * eps;
        let mut stats = StepStats::new(eps);
        let chain = self.ensemble.take_next();
        let Some((x, g, mut potential)) = self.ensemble.state(chain) else {
            return stats;
        };
        self.proposal = *x;
        self.proposal_gradient = *g;
        stats.pairs_skipped = self.ensemble.build_metric(chain);

        fill_standard_normal(rng, &mut self.z);
        self.ensemble
            .memory
            .apply_sqrt_hessian(&self.z, &mut self.momentum);
        let h0 = potential + self.kinetic();

        for i in 0..D {
            self.momentum[i] -= half * self.proposal_gradient[i];
        }
        let mut finite = true;
        for l in 1..=self.settings.leapfrog_steps {
            self.ensemble
                .memory
                .apply_inverse_hessian(&self.momentum, &mut self.velocity);
            for i in 0..D {
                self.proposal[i] += eps * self.velocity[i];
            }
            if !all_finite(&self.proposal) {
                finite = false;
                break;
            }
            potential = target.potential_and_gradient(&self.proposal, &mut self.proposal_gradient);
            stats.gradient_evaluations += 1;
            if !potential.is_finite() || !all_finite(&self.proposal_gradient) {
                finite = false;
                break;
            }
            let kick = if l == self.settings.leapfrog_steps {
                half
            } else {
                eps
            };
            for i in 0..D {
                self.momentum[i] -= kick * self.proposal_gradient[i];
            }
        }
        let h1 = if finite {
            potential + self.kinetic()
        } else {
            T::INFINITY
        };
        if accept_or_reject(h0, h1, rng, &mut stats) {
            self.ensemble
                .set_state(chain, &self.proposal, &self.proposal_gradient, potential);
        }
        stats
    }
}

shared_methods!(
    HmcBfgs,
    HmcBfgsSettings,
    /// Sets the leapfrog step size (e.g. from adaptation); must be finite and > 0.
);
