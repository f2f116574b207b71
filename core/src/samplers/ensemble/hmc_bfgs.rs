//! HMC-BFGS (Zhang & Sutton 2011, §4.2, Algorithm 1, eq. 15).
//!
//! Its leapfrog is the shared integrator's (`integrator.rs`), with the
//! ensemble's inverse Hessian, built from the other chains, as its
//! [`Metric`](crate::metric::Metric) (`InverseHessianMetric`, `mod.rs`).

use rand_core::Rng;

use super::{Ensemble, InverseHessianMetric, accept_or_reject, paper_curvature, validate_metric};
use crate::error::{Error, require_positive};
use crate::integrator::PhasePoint;
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

crate::in_place::zero_valid!(impl[T: Real] HmcBfgsSettings<T> {
    step_size, leapfrog_steps, scaling, curvature
});

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
/// 3. L leapfrog steps of eq. 3–5 with kinetic energy ½ pᵀHp (eq. 15), those of
///    the shared integrator with M⁻¹ = H: L × { p ← p − (ε/2)∇U; x ← x + ε H p;
///    p ← p − (ε/2)∇U };
/// 4. accept with probability min(1, exp(H₀ − H₁)), H = U + ½ pᵀHp.
///
/// Random numbers per step: n standard normals (n = [`dimension`](Self::dimension))
/// ([`fill_standard_normal`](crate::random::fill_standard_normal), in the order
/// of z's entries), then one uniform (the Metropolis test, drawn even for a
/// divergent trajectory).
///
/// [`LbfgsMemory::apply_sqrt_hessian`]: crate::lbfgs::LbfgsMemory::apply_sqrt_hessian
#[derive(Debug, Clone)]
pub struct HmcBfgs<T, const D: usize, const K: usize, const M: usize> {
    settings: HmcBfgsSettings<T>,
    ensemble: Ensemble<T, D, K, M>,
    normals: [T; D],
    point: PhasePoint<T, D>,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize, const K: usize, const M: usize] HmcBfgs<T, D, K, M> {
    settings, ensemble, normals, point
});

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
            normals: [T::ZERO; D],
            point: PhasePoint::zero(),
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
        let Some((x, g, potential)) = self.ensemble.state(chain) else {
            return stats;
        };
        let point = &mut self.point;
        point.position[..n].copy_from_slice(&x[..n]);
        point.gradient[..n].copy_from_slice(&g[..n]);
        point.potential = potential;
        stats.pairs_skipped = self.ensemble.build_metric(chain);

        fill_standard_normal(rng, &mut self.normals[..n]);
        let metric = InverseHessianMetric::new(&mut self.ensemble.memory);
        point.start(&self.normals, &metric, n);
        let h0 = point.energy;
        stats.gradient_evaluations =
            point.leapfrog_steps(eps, self.settings.leapfrog_steps, &metric, target, n);
        let h1 = if point.energy.is_finite() {
            point.energy
        } else {
            T::INFINITY
        };
        let accepted = accept_or_reject(h0, h1, rng, &mut stats);
        stats.energy = Some(if accepted { h1 } else { h0 });
        if accepted {
            self.ensemble
                .set_state(chain, &point.position, &point.gradient, point.potential);
        }
        stats
    }
}

shared_methods!(
    HmcBfgs,
    HmcBfgsSettings,
    /// Sets the leapfrog step size (e.g. from adaptation); must be finite and > 0.
);
