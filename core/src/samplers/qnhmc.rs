//! Quasi-Newton Hamiltonian Monte Carlo (Fu, Luo & Zhang 2016, Algorithm 2) on
//! the L-BFGS engine (ALGORITHMS.md §3).
//!
//! Per proposal the preconditioner C is frozen to the current L-BFGS inverse
//! Hessian H. With momentum p ~ N(0, M):
//!
//! ```text
//! p ← p − (ε/2) C∇U(q)
//! repeat L times:  q ← q + ε C M⁻¹ p;  p ← p − ε C∇U(q)   (the last kick halved)
//! accept with probability min(1, exp(H₀ − H₁)),  H = U(q) + ½ pᵀM⁻¹p
//! ```
//!
//! With C fixed this is exactly HMC with inverse mass K = C M⁻¹ C and momentum
//! r = C⁻¹p. The paper's M = I gives K = H² ([`QnhmcMass::Identity`], the
//! default); M = C gives K = H ([`QnhmcMass::InverseHessian`], p = S·z).
//!
//! Every gradient of the trajectory yields a tentative pair (Δq, Δ∇U); the pairs
//! go into a scratch ring and are merged into the memory only if the proposal is
//! accepted (the paper resets B to C on rejection).
//!
//! **Exactness.** While the memory adapts, C depends on the chain's history and
//! the chain is adaptive, not a fixed π-invariant kernel. With
//! [`MemoryUpdate::FreezeAfter`] (or [`Qnhmc::freeze_memory`]) the memory is fixed
//! after warm-up and every later draw is an exact, MH-corrected HMC draw.

use rand_core::Rng;

use super::sampler::{Sampler, Step};

use super::metropolis::metropolis;
use crate::error::{Error, require_positive};
use crate::kernels::{all_finite, difference, dot};
use crate::lbfgs::{LbfgsMemory, LbfgsSettings, PairRing};
use crate::random::fill_standard_normal;
use crate::real::Real;
use crate::stats::StepStats;
use crate::target::Potential;

/// The mass matrix M of QNHMC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QnhmcMass {
    /// M = I, as in the paper: the effective inverse metric is H².
    #[default]
    Identity,
    /// M = C = H: the effective inverse metric is H, momentum p = S·z and
    /// kinetic energy ½ pᵀBp.
    InverseHessian,
}

/// When the L-BFGS memory learns from the trajectories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemoryUpdate {
    /// The paper's mode: the pairs of every accepted trajectory enter the
    /// memory, forever. Adaptive, so not an exact MCMC kernel.
    #[default]
    Adaptive,
    /// Adapt during the first n draws (warm-up), then freeze the memory: every
    /// draw after that is exact.
    FreezeAfter(u64),
}

/// Settings of [`Qnhmc`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QnhmcSettings<T> {
    /// Leapfrog step size ε > 0.
    pub step_size: T,
    /// Leapfrog steps per proposal, L ≥ 1.
    pub leapfrog_steps: u32,
    /// The mass matrix.
    pub mass: QnhmcMass,
    /// Whether and when the memory stops learning.
    pub memory_update: MemoryUpdate,
    /// The L-BFGS memory: pairs kept, γ, curvature policy.
    pub lbfgs: LbfgsSettings<T>,
}

impl<T: Real> QnhmcSettings<T> {
    /// ε, L, M = I, adaptive memory of `max_pairs` pairs, γ = 1, default
    /// curvature policy: the paper's algorithm.
    pub fn new(step_size: T, leapfrog_steps: u32, max_pairs: usize) -> Self {
        QnhmcSettings {
            step_size,
            leapfrog_steps,
            mass: QnhmcMass::Identity,
            memory_update: MemoryUpdate::Adaptive,
            lbfgs: LbfgsSettings::with_max_pairs(max_pairs),
        }
    }

    fn validate_step(&self) -> Result<(), Error> {
        require_positive(self.step_size, "step_size")?;
        if self.leapfrog_steps == 0 {
            return Err(Error::invalid("leapfrog_steps", ">= 1"));
        }
        Ok(())
    }
}

/// Quasi-Newton HMC with an L-BFGS memory of at most `M` pairs in dimension `D`.
///
/// Random numbers per draw: D standard normals (momentum), then one uniform.
///
/// Practical notes:
/// - Pairs enter the memory only from accepted trajectories, so a sampler that
///   never accepts never learns. Before any pair, C = γI: choose γ (the
///   `lbfgs.scaling` setting) near the posterior's variance scale, or the step
///   size so that plain HMC with inverse metric γ²I (M = I) or γI (M = C) accepts.
/// - γ also stays the variance of every direction the pairs do not reach. The
///   default fixed γ = 1 is the paper's; when the posterior's scale is far
///   from 1, prefer [`InitialScaling::NewestPair`](crate::lbfgs::InitialScaling)
///   (γ = sᵀy/yᵀy of the newest pair), with M = C. On a 6-D Gaussian shaped
///   like posteriordb's sblrc-blr (sds 0.001 and 0.07) the memory frozen after
///   warm-up kept a variance 2.5·10⁶ times the posterior's with γ = 1 and was
///   within a condition number of 170 of the posterior covariance with the
///   newest pair's γ (`tests/tests/operators/qnhmc_memory_scaling.rs`); the `qnmc`
///   command line uses M = C and the newest pair's γ by default.
/// - As in any HMC with fixed ε and L, a learned direction whose leapfrog
///   rotation per step divides π evenly can flip sign every draw and stop mixing
///   while its ESS looks huge; vary ε between draws with
///   [`set_step_size`](Self::set_step_size) (jitter keeps the chain exact).
#[derive(Debug, Clone)]
pub struct Qnhmc<T, const D: usize, const M: usize> {
    settings: QnhmcSettings<T>,
    memory: LbfgsMemory<T, D, M>,
    tentative: PairRing<T, D, M>,
    frozen: bool,
    draws: u64,
    position: [T; D],
    potential: T,
    gradient: [T; D],
    proposal: [T; D],
    proposal_gradient: [T; D],
    previous_position: [T; D],
    previous_gradient: [T; D],
    momentum: [T; D],
    work: [T; D],
}

impl<T: Real, const D: usize, const M: usize> Qnhmc<T, D, M> {
    /// Validates `settings` and evaluates the target at `initial_position`.
    pub fn new<P: Potential<T, D>>(
        settings: QnhmcSettings<T>,
        initial_position: [T; D],
        target: &P,
    ) -> Result<Self, Error> {
        settings.validate_step()?;
        let memory = LbfgsMemory::new(settings.lbfgs)?;
        if !all_finite(&initial_position) {
            return Err(Error::NonFiniteInitialState);
        }
        let mut gradient = [T::ZERO; D];
        let potential = target.potential_and_gradient(&initial_position, &mut gradient);
        if !potential.is_finite() || !all_finite(&gradient) {
            return Err(Error::NonFiniteInitialState);
        }
        Ok(Qnhmc {
            settings,
            tentative: PairRing::new(settings.lbfgs.max_pairs),
            memory,
            frozen: settings.memory_update == MemoryUpdate::FreezeAfter(0),
            draws: 0,
            position: initial_position,
            potential,
            gradient,
            proposal: [T::ZERO; D],
            proposal_gradient: [T::ZERO; D],
            previous_position: [T::ZERO; D],
            previous_gradient: [T::ZERO; D],
            momentum: [T::ZERO; D],
            work: [T::ZERO; D],
        })
    }

    /// Sets a new step size (e.g. from adaptation); on error nothing changes.
    pub fn set_step_size(&mut self, step_size: T) -> Result<(), Error> {
        require_positive(step_size, "step_size")?;
        self.settings.step_size = step_size;
        Ok(())
    }

    /// Stops the memory from learning: every later draw is exact.
    pub fn freeze_memory(&mut self) {
        self.frozen = true;
    }

    /// Whether the memory is frozen.
    pub fn is_memory_frozen(&self) -> bool {
        self.frozen
    }

    /// The settings in force.
    pub fn settings(&self) -> &QnhmcSettings<T> {
        &self.settings
    }

    /// The L-BFGS memory (C = H of the next proposal).
    pub fn memory(&self) -> &LbfgsMemory<T, D, M> {
        &self.memory
    }

    /// Draws taken so far.
    pub fn draws(&self) -> u64 {
        self.draws
    }

    /// The current state θ.
    pub fn position(&self) -> &[T; D] {
        &self.position
    }

    /// U at the current state.
    pub fn potential(&self) -> T {
        self.potential
    }

    /// ∇U at the current state.
    pub fn gradient(&self) -> &[T; D] {
        &self.gradient
    }

    /// ½ pᵀM⁻¹p for the current momentum.
    fn kinetic(&mut self) -> T {
        match self.settings.mass {
            QnhmcMass::Identity => T::HALF * dot(&self.momentum, &self.momentum),
            QnhmcMass::InverseHessian => {
                self.memory.apply_hessian(&self.momentum, &mut self.work);
                T::HALF * dot(&self.momentum, &self.work)
            }
        }
    }

    /// p ← p − h C∇U(proposal).
    fn kick(&mut self, h: T) {
        self.memory
            .apply_inverse_hessian(&self.proposal_gradient, &mut self.work);
        for i in 0..D {
            self.momentum[i] -= h * self.work[i];
        }
    }

    /// One draw. A non-finite potential or gradient ends the trajectory as a
    /// rejected divergence; the memory is then left untouched.
    pub fn step<P: Potential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> StepStats<T> {
        let eps = self.settings.step_size;
        let half = T::HALF * eps;
        let steps = self.settings.leapfrog_steps;
        let recording = !self.frozen;
        let mut stats = StepStats::new(eps);

        fill_standard_normal(rng, &mut self.momentum);
        if self.settings.mass == QnhmcMass::InverseHessian {
            self.memory
                .apply_sqrt_inverse_hessian(&self.momentum, &mut self.work);
            self.momentum = self.work;
        }
        let h0 = self.potential + self.kinetic();

        self.tentative.clear();
        let mut skipped = 0u32;
        self.proposal = self.position;
        self.proposal_gradient = self.gradient;
        self.kick(half);
        let mut proposal_potential = self.potential;
        let mut finite = true;
        for l in 1..=steps {
            match self.settings.mass {
                QnhmcMass::Identity => self
                    .memory
                    .apply_inverse_hessian(&self.momentum, &mut self.work),
                QnhmcMass::InverseHessian => self.work = self.momentum,
            }
            self.previous_position = self.proposal;
            self.previous_gradient = self.proposal_gradient;
            for i in 0..D {
                self.proposal[i] += eps * self.work[i];
            }
            proposal_potential =
                target.potential_and_gradient(&self.proposal, &mut self.proposal_gradient);
            stats.gradient_evaluations += 1;
            if !proposal_potential.is_finite()
                || !all_finite(&self.proposal_gradient)
                || !all_finite(&self.proposal)
            {
                finite = false;
                break;
            }
            if recording {
                let mut s = [T::ZERO; D];
                let mut y = [T::ZERO; D];
                difference(&self.proposal, &self.previous_position, &mut s);
                difference(&self.proposal_gradient, &self.previous_gradient, &mut y);
                match self.memory.curvature_policy().admit(&s, &mut y) {
                    Some(sy) => self.tentative.push(&s, &y, sy),
                    None => skipped += 1,
                }
            }
            self.kick(if l == steps { half } else { eps });
        }
        let h1 = if finite {
            proposal_potential + self.kinetic()
        } else {
            T::INFINITY
        };
        let decision = metropolis(h0, h1, rng);
        stats.accepted = decision.accepted;
        stats.acceptance_probability = decision.probability;
        stats.energy_error = decision.energy_error;
        stats.divergent = decision.divergent;
        stats.pairs_skipped = skipped;
        self.memory.count_skipped(skipped);
        if decision.accepted {
            core::mem::swap(&mut self.position, &mut self.proposal);
            core::mem::swap(&mut self.gradient, &mut self.proposal_gradient);
            self.potential = proposal_potential;
            if recording {
                for k in 0..self.tentative.len() {
                    if let Some((s, y, sy)) = self.tentative.get(k) {
                        self.memory.push_admitted(s, y, sy);
                    }
                }
            }
        }
        self.tentative.clear();
        self.draws += 1;
        if let MemoryUpdate::FreezeAfter(n) = self.settings.memory_update {
            if self.draws >= n {
                self.frozen = true;
            }
        }
        stats
    }
}

impl<T: Real, const D: usize, const M: usize> Sampler<T, D> for Qnhmc<T, D, M> {
    type Settings = QnhmcSettings<T>;
    fn settings(&self) -> &QnhmcSettings<T> {
        Qnhmc::settings(self)
    }
    fn set_step_size(&mut self, step_size: T) -> Result<(), Error> {
        Qnhmc::set_step_size(self, step_size)
    }
    fn position(&self) -> &[T; D] {
        Qnhmc::position(self)
    }
    fn potential(&self) -> Option<T> {
        Some(Qnhmc::potential(self))
    }
}

impl<T: Real, const D: usize, const M: usize, P: Potential<T, D>> Step<T, D, P> for Qnhmc<T, D, M> {
    type Stats = StepStats<T>;
    fn step<R: Rng + ?Sized>(&mut self, target: &P, rng: &mut R) -> Result<StepStats<T>, Error> {
        Ok(Qnhmc::step(self, target, rng))
    }
}
