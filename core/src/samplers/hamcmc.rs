//! Hessian Approximated MCMC (Şimşekli, Badeau, Cemgil & Richard 2016,
//! Algorithm 1, eq. 10–12), with the index bookkeeping of ALGORITHMS.md §2.
//!
//! The sampler keeps the last M draws θ_{t−M} … θ_{t−1} and the last M − 1 pairs
//! s_τ = θ_τ − θ_{τ−M}, y_τ = ∇Ũ_{Ω_τ}(θ_τ) − ∇Ũ_{Ω_τ}(θ_{τ−M}) (+ λ s_τ), none of
//! which involves θ_{t−M}; that is what removes the Γ correction term. Step t:
//!
//! ```text
//! draw Ω_t, z ~ N(0, I);  g = ∇Ũ_{Ω_t}(θ_{t−M})
//! θ_t = θ_{t−M} − ε_t H g + √(2ε_t) S z          (S Sᵀ = H, product form)
//! new pair from ∇Ũ_{Ω_t}(θ_t) on the same batch   (two gradients per step)
//! ```
//!
//! **Start-up** (the paper assumes θ_0 … θ_{2M} given): draws 1 … M−1 are plain
//! preconditioned SGLD steps with H = γI from the previous draw, one gradient
//! each. From draw M on, the rule above runs with the pairs that exist (none at
//! t = M, the full M − 1 from t = 2M − 1).
//!
//! **Step sizes**: constant, or ε_t = (a / t_b)^κ with t_b the first index of
//! t's block of M draws (Condition 1: constant within blocks, 1/2 < κ ≤ 1).
//! Posterior averages weight draw t by ε_t (eq. 12); each step reports its ε_t.
//!
//! HAMCMC is a stochastic-gradient sampler: biased for a fixed step size,
//! asymptotically unbiased with the decaying schedule.

use rand_core::Rng;

use super::sampler::{Sampler, Step};

use crate::error::{Error, require_positive};
use crate::kernels::all_finite;
use crate::lbfgs::{CurvaturePolicy, InitialScaling, LbfgsMemory, LbfgsSettings};
use crate::random::fill_standard_normal;
use crate::real::Real;
use crate::stats::StepStats;
use crate::target::MinibatchPotential;

/// HAMCMC's step-size sequence ε_t.
///
/// `#[repr(u8)]` gives it a defined layout: a tag byte, 0 for `Constant`,
/// then its fields, so all-zero bytes are `Constant(0)`
/// ([`ZeroValid`](crate::in_place::ZeroValid)).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
pub enum StepSizeSchedule<T> {
    /// ε_t = ε for every t (biased by O(ε), cheapest to tune).
    Constant(T),
    /// ε_t = (a / t_b)^κ, held constant within each block of M draws, where t_b
    /// is the first draw index of t's block (the paper uses κ = 0.51).
    BlockDecaying {
        /// a > 0.
        scale: T,
        /// κ ∈ (1/2, 1].
        exponent: T,
    },
}

// SAFETY: `repr(u8)`: the zero tag is `Constant` (the first variant,
// discriminant 0), whose one field is a `Real`, valid as zero bytes.
#[allow(unsafe_code)]
unsafe impl<T: Real> crate::in_place::ZeroValid for StepSizeSchedule<T> {}

/// The tag (0 `Constant`, 1 `BlockDecaying`), then the fields.
impl<T: Real> crate::saved_state::SavedState for StepSizeSchedule<T> {
    fn save_state(
        &self,
        out: &mut crate::saved_state::StateWriter<'_>,
    ) -> Result<(), crate::saved_state::StateError> {
        match self {
            StepSizeSchedule::Constant(e) => {
                out.bytes(&[0])?;
                e.save_state(out)
            }
            StepSizeSchedule::BlockDecaying { scale, exponent } => {
                out.bytes(&[1])?;
                scale.save_state(out)?;
                exponent.save_state(out)
            }
        }
    }
    fn restore_state(
        &mut self,
        input: &mut crate::saved_state::StateReader<'_>,
    ) -> Result<(), crate::saved_state::StateError> {
        let [tag] = input.take::<1>()?;
        let (mut a, mut b) = (T::ZERO, T::ZERO);
        *self = match tag {
            0 => {
                a.restore_state(input)?;
                StepSizeSchedule::Constant(a)
            }
            1 => {
                a.restore_state(input)?;
                b.restore_state(input)?;
                StepSizeSchedule::BlockDecaying {
                    scale: a,
                    exponent: b,
                }
            }
            _ => return Err(crate::saved_state::StateError::InvalidField),
        };
        Ok(())
    }
}

impl<T: Real> StepSizeSchedule<T> {
    fn validate(&self) -> Result<(), Error> {
        match *self {
            StepSizeSchedule::Constant(e) => require_positive(e, "step_size"),
            StepSizeSchedule::BlockDecaying { scale, exponent } => {
                require_positive(scale, "step_size.scale")?;
                if exponent.is_finite() && exponent > T::HALF && exponent <= T::ONE {
                    Ok(())
                } else {
                    Err(Error::invalid("step_size.exponent", "in (0.5, 1]"))
                }
            }
        }
    }

    /// ε_t for draw `t` ≥ 1 with blocks of `block` draws.
    pub fn step_size(&self, t: u64, block: u64) -> T {
        match *self {
            StepSizeSchedule::Constant(e) => e,
            StepSizeSchedule::BlockDecaying { scale, exponent } => {
                let block = if block == 0 { 1 } else { block };
                let first = (t.saturating_sub(1) / block) * block + 1;
                (scale / T::from_u64(first)).powf(exponent)
            }
        }
    }
}

/// Settings of [`Hamcmc`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HamcmcSettings<T> {
    /// The step sizes ε_t.
    pub step_size: StepSizeSchedule<T>,
    /// γ > 0 of H⁰ = γI (the paper's γ).
    pub gamma: T,
    /// Trust region λ and skip rule for the pairs.
    pub curvature: CurvaturePolicy<T>,
}

crate::in_place::zero_valid!(impl[T: Real] HamcmcSettings<T> { step_size, gamma, curvature });

impl<T: Real> HamcmcSettings<T> {
    /// A schedule, γ, and the trust region λ (with no relative skip rule beyond
    /// sᵀy > 0), as the paper parametrises HAMCMC.
    pub fn new(step_size: StepSizeSchedule<T>, gamma: T, trust_region: T) -> Self {
        HamcmcSettings {
            step_size,
            gamma,
            curvature: CurvaturePolicy {
                trust_region,
                min_relative_curvature: T::ZERO,
            },
        }
    }
}

/// HAMCMC with memory size `M` ≥ 2 (M draws and M − 1 pairs) in dimension `D`.
///
/// Random numbers per draw: the batch (drawn by the target), then n standard
/// normals (n = [`dimension`](Self::dimension), D unless
/// `set_dimension` said otherwise).
///
/// It is about 8·(2M + 5)·D bytes in f64 (the M draws, the M − 1 pairs and
/// five vectors): 5.2 MB at D = 10⁴ with M = 20. [`Hamcmc::new`] returns it
/// by value, through the stack; [`init_in_place`](Self::init_in_place),
/// `new_boxed` (feature `alloc`) and
/// [`reset`](Self::reset) build it where it lives ([`crate::in_place`]).
#[derive(Debug, Clone)]
pub struct Hamcmc<T, const D: usize, const M: usize> {
    settings: HamcmcSettings<T>,
    memory: LbfgsMemory<T, D, M>,
    history: [[T; D]; M],
    history_len: usize,
    oldest: usize,
    newest: usize,
    draws: u64,
    base_gradient: [T; D],
    new_gradient: [T; D],
    proposal: [T; D],
    noise: [T; D],
    work: [T; D],
    /// The coordinates that move, n ≤ D ([`Hamcmc::set_dimension`]); 0 (the
    /// all-zero value of [`crate::in_place`]) is D.
    dimension: usize,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize, const M: usize] Hamcmc<T, D, M> {
    settings, memory, history, history_len, oldest, newest, draws, base_gradient,
    new_gradient, proposal, noise, work, dimension
});

impl<T: Real, const D: usize, const M: usize> Hamcmc<T, D, M> {
    fn memory_settings(settings: &HamcmcSettings<T>) -> Result<LbfgsSettings<T>, Error> {
        if M < 2 {
            return Err(Error::invalid(
                "M",
                ">= 2 (HAMCMC keeps M draws and M - 1 pairs)",
            ));
        }
        settings.step_size.validate()?;
        let lbfgs = LbfgsSettings {
            max_pairs: M - 1,
            scaling: InitialScaling::Fixed(settings.gamma),
            curvature: settings.curvature,
        };
        // The memory's own check, with the setting named as HAMCMC names it.
        LbfgsMemory::<T, D, M>::validate(&lbfgs).map_err(|e| match e {
            Error::InvalidSetting {
                setting: "scaling",
                requirement,
            } => Error::invalid("gamma", requirement),
            other => other,
        })?;
        Ok(lbfgs)
    }

    /// Validates `settings` (and M ≥ 2) and starts the chain at θ_0 =
    /// `initial_position`, which must be finite.
    pub fn new(settings: HamcmcSettings<T>, initial_position: [T; D]) -> Result<Self, Error> {
        let lbfgs = Self::memory_settings(&settings)?;
        let memory = LbfgsMemory::new(lbfgs)?;
        if !all_finite(&initial_position) {
            return Err(Error::NonFiniteInitialState);
        }
        let mut history = [[T::ZERO; D]; M];
        history[0] = initial_position;
        Ok(Hamcmc {
            settings,
            memory,
            history,
            history_len: 1,
            oldest: 0,
            newest: 0,
            draws: 0,
            base_gradient: [T::ZERO; D],
            new_gradient: [T::ZERO; D],
            proposal: [T::ZERO; D],
            noise: [T::ZERO; D],
            work: [T::ZERO; D],
            dimension: D,
        })
    }

    /// The checks of [`initialize_zeroed`](Self::initialize_zeroed),
    /// changing nothing.
    fn check_reset(
        &mut self,
        settings: &HamcmcSettings<T>,
        initial_position: &[T; D],
    ) -> Result<(), Error> {
        Self::memory_settings(settings)?;
        if !all_finite(initial_position) {
            return Err(Error::NonFiniteInitialState);
        }
        Ok(())
    }

    /// The state of [`Hamcmc::new`] on an all-zero sampler.
    fn initialize_zeroed(
        &mut self,
        settings: HamcmcSettings<T>,
        initial_position: &[T; D],
    ) -> Result<(), Error> {
        let lbfgs = Self::memory_settings(&settings)?;
        if !all_finite(initial_position) {
            return Err(Error::NonFiniteInitialState);
        }
        self.memory.initialize_zeroed(lbfgs)?;
        self.settings = settings;
        self.history[0].copy_from_slice(initial_position);
        self.history_len = 1;
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
    /// (the two-loop recursion, the square-root factor, the pairs) stops at
    /// n, so a draw costs what dimension n costs and the chain is bit for
    /// bit that of a `Hamcmc<T, n, M>` on the same coordinates. The target
    /// is evaluated at positions zero from n on; what it writes to the
    /// gradient there is ignored. The start must be zero from n on; on
    /// error nothing changes.
    #[cfg(feature = "runtime-dimension")]
    pub fn set_dimension(&mut self, n: usize) -> Result<(), Error> {
        super::dimension::check_new(n, self.draws != 0, self.position())?;
        self.memory.set_dimension(n)?;
        self.dimension = n;
        Ok(())
    }

    /// The newest draw θ_t.
    pub fn position(&self) -> &[T; D] {
        &self.history[self.newest]
    }

    /// Draws taken so far (t).
    pub fn draws(&self) -> u64 {
        self.draws
    }

    /// The settings in force.
    pub fn settings(&self) -> &HamcmcSettings<T> {
        &self.settings
    }

    /// The L-BFGS memory (M − 1 pairs at most).
    pub fn memory(&self) -> &LbfgsMemory<T, D, M> {
        &self.memory
    }

    /// The step size the next draw will use.
    pub fn next_step_size(&self) -> T {
        self.settings.step_size.step_size(self.draws + 1, M as u64)
    }

    /// One draw. On a non-finite gradient or proposal it returns the error and
    /// leaves the sampler exactly as before the call (the generator has advanced).
    pub fn step<P: MinibatchPotential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> Result<StepStats<T>, Error> {
        let eps = self.next_step_size();
        let mut stats = StepStats::new(eps);
        stats.accepted = true;
        stats.acceptance_probability = T::ONE;

        let n = self.dimension();
        let batch = target.draw_batch(rng);
        fill_standard_normal(rng, &mut self.noise[..n]);
        let full = self.history_len == M;
        let base = if full { self.oldest } else { self.newest };

        target.minibatch_gradient(&batch, &self.history[base], &mut self.base_gradient);
        stats.gradient_evaluations = 1;
        if !all_finite(&self.base_gradient[..n]) {
            return Err(Error::NonFiniteGradient);
        }
        self.memory
            .apply_inverse_hessian(&self.base_gradient, &mut self.work);
        let noise_scale = (T::TWO * eps).sqrt();
        // S·z goes to `new_gradient`, free until the second gradient.
        self.memory
            .apply_sqrt_inverse_hessian(&self.noise, &mut self.new_gradient);
        let from = &self.history[base][..n];
        for (i, p) in self.proposal[..n].iter_mut().enumerate() {
            *p = from[i] - eps * self.work[i] + noise_scale * self.new_gradient[i];
        }
        if !all_finite(&self.proposal[..n]) {
            return Err(Error::NonFiniteProposal);
        }

        if full {
            target.minibatch_gradient(&batch, &self.proposal, &mut self.new_gradient);
            stats.gradient_evaluations = 2;
            if !all_finite(&self.new_gradient[..n]) {
                return Err(Error::NonFiniteGradient);
            }
            // s in `noise` and y in `work`: both free now.
            for i in 0..n {
                self.noise[i] = self.proposal[i] - self.history[base][i];
                self.work[i] = self.new_gradient[i] - self.base_gradient[i];
            }
            if !self.memory.try_push_in_place(&self.noise, &mut self.work) {
                stats.pairs_skipped = 1;
            }
            self.history[self.oldest][..n].copy_from_slice(&self.proposal[..n]);
            self.newest = self.oldest;
            self.oldest = if self.oldest + 1 == M {
                0
            } else {
                self.oldest + 1
            };
        } else {
            self.history[self.history_len][..n].copy_from_slice(&self.proposal[..n]);
            self.newest = self.history_len;
            self.history_len += 1;
        }
        self.draws += 1;
        Ok(stats)
    }
}

super::in_place_constructors::in_place_constructors!(
    impl[T: Real, const D: usize, const M: usize] Hamcmc<T, D, M> { settings: HamcmcSettings<T> }
);

impl<T: Real, const D: usize, const M: usize> Sampler<T, D> for Hamcmc<T, D, M> {
    type Settings = HamcmcSettings<T>;
    fn settings(&self) -> &HamcmcSettings<T> {
        Hamcmc::settings(self)
    }
    /// Always refused: HAMCMC's step size follows its schedule
    /// ([`StepSizeSchedule`]).
    fn set_step_size(&mut self, _step_size: T) -> Result<(), Error> {
        Err(Error::InvalidSetting {
            setting: "step_size",
            requirement: "fixed by HAMCMC's schedule",
        })
    }
    fn position(&self) -> &[T; D] {
        Hamcmc::position(self)
    }
    fn dimension(&self) -> usize {
        Hamcmc::dimension(self)
    }
}

impl<T: Real, const D: usize, const M: usize, P: MinibatchPotential<T, D>> Step<T, D, P>
    for Hamcmc<T, D, M>
{
    type Stats = StepStats<T>;
    fn step<R: Rng + ?Sized>(&mut self, target: &P, rng: &mut R) -> Result<StepStats<T>, Error> {
        Hamcmc::step(self, target, rng)
    }
}
