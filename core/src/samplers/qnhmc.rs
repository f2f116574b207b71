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

use super::in_place_constructors::evaluate_start;
use super::metropolis::metropolis;
use crate::error::{Error, require_positive};
use crate::kernels::{all_finite, axpy_leading, dot_leading};
use crate::lbfgs::{LbfgsMemory, LbfgsSettings, PairRing};
use crate::random::fill_standard_normal;
use crate::real::Real;
use crate::stats::StepStats;
use crate::target::Potential;

/// The mass matrix M of QNHMC.
///
/// `#[repr(u8)]`: all-zero bytes are `Identity`
/// ([`ZeroValid`](crate::in_place::ZeroValid)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum QnhmcMass {
    /// M = I, as in the paper: the effective inverse metric is H².
    #[default]
    Identity,
    /// M = C = H: the effective inverse metric is H, momentum p = S·z and
    /// kinetic energy ½ pᵀBp.
    InverseHessian,
}

/// When the L-BFGS memory learns from the trajectories.
///
/// `#[repr(u8)]`: a tag byte, 0 for `Adaptive`, so all-zero bytes are
/// `Adaptive` ([`ZeroValid`](crate::in_place::ZeroValid)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum MemoryUpdate {
    /// The paper's mode: the pairs of every accepted trajectory enter the
    /// memory, forever. Adaptive, so not an exact MCMC kernel.
    #[default]
    Adaptive,
    /// Adapt during the first n draws (warm-up), then freeze the memory: every
    /// draw after that is exact.
    FreezeAfter(u64),
}

// SAFETY: `repr(u8)` with a field-less first variant `Identity` of
// discriminant 0: the zero byte is `Identity`.
#[allow(unsafe_code)]
unsafe impl crate::in_place::ZeroValid for QnhmcMass {}

crate::saved_state::saved_enum!(QnhmcMass {
    Identity,
    InverseHessian
});

// SAFETY: `repr(u8)`: the zero tag is `Adaptive` (the first variant,
// discriminant 0), which has no fields; the other bytes are padding or the
// inactive variant's `u64`, and any bytes are valid there.
#[allow(unsafe_code)]
unsafe impl crate::in_place::ZeroValid for MemoryUpdate {}

/// The tag (0 `Adaptive`, 1 `FreezeAfter`), then n for `FreezeAfter`.
impl crate::saved_state::SavedState for MemoryUpdate {
    fn save_state(
        &self,
        out: &mut crate::saved_state::StateWriter<'_>,
    ) -> Result<(), crate::saved_state::StateError> {
        match self {
            MemoryUpdate::Adaptive => out.bytes(&[0]),
            MemoryUpdate::FreezeAfter(n) => {
                out.bytes(&[1])?;
                n.save_state(out)
            }
        }
    }
    fn restore_state(
        &mut self,
        input: &mut crate::saved_state::StateReader<'_>,
    ) -> Result<(), crate::saved_state::StateError> {
        *self = match input.take::<1>()? {
            [0] => MemoryUpdate::Adaptive,
            [1] => MemoryUpdate::FreezeAfter(u64::from_le_bytes(input.take()?)),
            _ => return Err(crate::saved_state::StateError::InvalidField),
        };
        Ok(())
    }
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

crate::in_place::zero_valid!(impl[T: Real] QnhmcSettings<T> {
    step_size, leapfrog_steps, mass, memory_update, lbfgs
});

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
/// Random numbers per draw: n standard normals (momentum; n =
/// [`dimension`](Self::dimension), D unless
/// `set_dimension` said otherwise), then one uniform.
///
/// It is about 8·(4M + 9)·D bytes in f64 (the memory's and the tentative
/// ring's pairs, nine vectors). [`Qnhmc::new`] returns it by value, through
/// the stack; [`init_in_place`](Self::init_in_place),
/// `new_boxed` (feature `alloc`) and [`reset`](Self::reset)
/// build it where it lives ([`crate::in_place`]).
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
    /// The coordinates that move, n ≤ D ([`Qnhmc::set_dimension`]); 0 (the
    /// all-zero value of [`crate::in_place`]) is D.
    dimension: usize,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize, const M: usize] Qnhmc<T, D, M> {
    settings, memory, tentative, frozen, draws, position, potential, gradient, proposal,
    proposal_gradient, previous_position, previous_gradient, momentum, work, dimension
});

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
            dimension: D,
        })
    }

    /// The checks of [`initialize_zeroed`](Self::initialize_zeroed),
    /// changing nothing observable: the target is evaluated into the
    /// scratch vectors.
    fn check_reset<P: Potential<T, D>>(
        &mut self,
        settings: &QnhmcSettings<T>,
        initial_position: &[T; D],
        target: &P,
    ) -> Result<(), Error> {
        settings.validate_step()?;
        LbfgsMemory::<T, D, M>::validate(&settings.lbfgs)?;
        evaluate_start(
            initial_position,
            target,
            &mut self.proposal,
            &mut self.proposal_gradient,
        )?;
        Ok(())
    }

    /// The state of [`Qnhmc::new`] on an all-zero sampler; on error it is
    /// all zero again but for the settings.
    fn initialize_zeroed<P: Potential<T, D>>(
        &mut self,
        settings: QnhmcSettings<T>,
        initial_position: &[T; D],
        target: &P,
    ) -> Result<(), Error> {
        settings.validate_step()?;
        self.memory.initialize_zeroed(settings.lbfgs)?;
        let potential = evaluate_start(
            initial_position,
            target,
            &mut self.position,
            &mut self.gradient,
        )?;
        self.settings = settings;
        self.tentative.set_capacity(settings.lbfgs.max_pairs);
        self.frozen = settings.memory_update == MemoryUpdate::FreezeAfter(0);
        self.potential = potential;
        self.dimension = D;
        Ok(())
    }

    /// n: the sampler moves the first n coordinates and keeps the rest at
    /// zero (D unless `set_dimension` said otherwise).
    #[inline]
    pub fn dimension(&self) -> usize {
        super::dimension::in_use::<D>(self.dimension)
    }

    /// Moves only the first `n` coordinates (1 ≤ n ≤ D; feature
    /// `runtime-dimension`; before the first draw): a model of run-time
    /// dimension n in storage for D. The others stay exactly zero and are
    /// never drawn or written: each draw takes n normals and every pass
    /// (leapfrog, memory, pairs, copies) stops at n, so a draw costs what
    /// dimension n costs and the chain is bit for bit that of a
    /// `Qnhmc<T, n, M>` on the same coordinates. The target is evaluated at
    /// positions zero from n on; what it writes to the gradient there is
    /// ignored (set to zero). The position must be zero from n on; on error
    /// nothing changes.
    #[cfg(feature = "runtime-dimension")]
    pub fn set_dimension(&mut self, n: usize) -> Result<(), Error> {
        super::dimension::check_new(n, self.draws != 0, &self.position)?;
        self.memory.set_dimension(n)?;
        self.dimension = n;
        self.gradient[n..].iter_mut().for_each(|g| *g = T::ZERO);
        Ok(())
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
        let n = self.dimension();
        match self.settings.mass {
            QnhmcMass::Identity => T::HALF * dot_leading(&self.momentum, &self.momentum, n),
            QnhmcMass::InverseHessian => {
                self.memory.apply_hessian(&self.momentum, &mut self.work);
                T::HALF * dot_leading(&self.momentum, &self.work, n)
            }
        }
    }

    /// p ← p − h C∇U(proposal).
    fn kick(&mut self, h: T) {
        self.memory
            .apply_inverse_hessian(&self.proposal_gradient, &mut self.work);
        let n = self.dimension();
        axpy_leading(-h, &self.work, &mut self.momentum, n);
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
        let n = self.dimension();

        fill_standard_normal(rng, &mut self.momentum[..n]);
        if self.settings.mass == QnhmcMass::InverseHessian {
            self.memory
                .apply_sqrt_inverse_hessian(&self.momentum, &mut self.work);
            self.momentum[..n].copy_from_slice(&self.work[..n]);
        }
        let h0 = self.potential + self.kinetic();

        self.tentative.clear();
        let mut skipped = 0u32;
        self.proposal[..n].copy_from_slice(&self.position[..n]);
        self.proposal_gradient[..n].copy_from_slice(&self.gradient[..n]);
        self.kick(half);
        let mut proposal_potential = self.potential;
        let mut finite = true;
        for l in 1..=steps {
            match self.settings.mass {
                QnhmcMass::Identity => self
                    .memory
                    .apply_inverse_hessian(&self.momentum, &mut self.work),
                QnhmcMass::InverseHessian => {
                    self.work[..n].copy_from_slice(&self.momentum[..n]);
                }
            }
            self.previous_position[..n].copy_from_slice(&self.proposal[..n]);
            self.previous_gradient[..n].copy_from_slice(&self.proposal_gradient[..n]);
            axpy_leading(eps, &self.work, &mut self.proposal, n);
            proposal_potential =
                target.potential_and_gradient(&self.proposal, &mut self.proposal_gradient);
            stats.gradient_evaluations += 1;
            if !proposal_potential.is_finite()
                || !all_finite(&self.proposal_gradient[..n])
                || !all_finite(&self.proposal[..n])
            {
                finite = false;
                break;
            }
            if recording {
                // s and y overwrite the previous point and gradient, which
                // the next step writes again before reading.
                let (s, y) = (&mut self.previous_position, &mut self.previous_gradient);
                for i in 0..n {
                    s[i] = self.proposal[i] - s[i];
                    y[i] = self.proposal_gradient[i] - y[i];
                }
                match self.memory.curvature_policy().admit_leading(s, y, n) {
                    Some(sy) => self.tentative.push_leading(s, y, sy, n),
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
        stats.energy = Some(if decision.accepted { h1 } else { h0 });
        stats.pairs_skipped = skipped;
        self.memory.count_skipped(skipped);
        if decision.accepted {
            self.position[..n].swap_with_slice(&mut self.proposal[..n]);
            self.gradient[..n].swap_with_slice(&mut self.proposal_gradient[..n]);
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

super::in_place_constructors::in_place_constructors!(
    impl[T: Real, const D: usize, const M: usize] Qnhmc<T, D, M> {
        settings: QnhmcSettings<T>, target: target: P
    }
);

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
    fn dimension(&self) -> usize {
        Qnhmc::dimension(self)
    }
}

impl<T: Real, const D: usize, const M: usize, P: Potential<T, D>> Step<T, D, P> for Qnhmc<T, D, M> {
    type Stats = StepStats<T>;
    fn step<R: Rng + ?Sized>(&mut self, target: &P, rng: &mut R) -> Result<StepStats<T>, Error> {
        Ok(Qnhmc::step(self, target, rng))
    }
}
