//! AMAGOLD: amortized Metropolis-adjusted stochastic gradient second-order
//! Langevin dynamics (Zhang, Cooper & De Sa 2020, Algorithm 2), and L2MC, its
//! full-batch case.
//!
//! One outer step (one draw) from (θ, r), with momentum variance σ², step size
//! ε, friction β and T inner steps:
//!
//! ```text
//! (Resample variant only)  r ~ N(0, σ²I)                                      line 3
//! r₋½ = r,  ρ = 0,  θ₀ = θ + ½ ε σ⁻² r₋½                                       lines 4–5
//! for t = 0 … T−1:
//!     if t ≠ 0:  θₜ = θₜ₋₁ + ε σ⁻² rₜ₋½                                        line 8
//!     ηₜ ~ N(0, 4εβσ² I);  draw a batch Ωₜ;  gₜ = ∇Ũ_Ωₜ(θₜ)                   lines 10–11
//!     rₜ₊½ = ((1 − εβ) rₜ₋½ − ε gₜ + ηₜ) / (1 + εβ)                           line 12
//!     ρ   += ½ ε σ⁻² gₜᵀ (rₜ₋½ + rₜ₊½)                                          line 13
//! θ* = θ_{T−1} + ½ ε σ⁻² r_{T−½},  r* = r_{T−½}                                lines 15–16
//! a = exp(U(θ) − U(θ*) + ρ)   (full-data U)                                     line 17
//! with probability min(1, a): (θ, r) ← (θ*, r*);  otherwise r ← −r₋½          lines 18–19
//! ```
//!
//! The inner loop is the paper's time-symmetric form of the SGHMC update (eq. in
//! §5: rₜ₊½ = rₜ₋½ − ε∇Ũ − εβ(rₜ₋½ + rₜ₊½) + ηₜ, solved for rₜ₊½), and ρ is the
//! log of the product of reverse/forward proposal densities in eq. (6).
//!
//! **Variants** ([`MomentumRefresh`]): `Resample` draws a fresh momentum before
//! every outer step (a reversible chain, Theorem 1); `Persistent` keeps the
//! momentum across outer steps and negates it on rejection (skew-reversible,
//! Theorem 1; Horowitz-style non-reversible chain). In both the stationary
//! distribution of θ is π exactly, for any fixed ε, β, T and any batch size.
//!
//! **Exact, not biased.** The minibatch gradients only shape the proposal; the
//! full-data Metropolis–Hastings test (one evaluation of U per outer step)
//! removes the discretisation and minibatch bias. The price: one full-data
//! evaluation of U (here through [`Potential::potential_and_gradient`], so also
//! one full gradient, which is discarded) every T inner steps.
//!
//! **L2MC** (second-order Langevin dynamics with amortized MH) is the
//! full-batch case: call [`Amagold::step_full_batch`] with a plain
//! [`Potential`]: every ∇Ũₜ is the full ∇U and no batch is drawn.
//! **HMC** is the full-batch case with β = 0 and `Resample` (the paper's
//! Appendix D): then ηₜ = 0, ρ = ½σ⁻²(‖r₋½‖² − ‖r*‖²) and a = exp(−ΔH), with
//! the *position* Verlet (drift–kick–drift) leapfrog, ε as the leapfrog step and
//! inverse mass σ⁻²I. (The core [`crate::Hmc`] uses the kick–drift–kick form, so
//! its chains are equal in distribution, not draw by draw.)
//!
//! **Random draws per outer step, in this order** (the reference-chain tests
//! replay them):
//! 1. `Resample`, or `Persistent` on the very first step: D standard normals
//!    ([`crate::random::fill_standard_normal`]) for r = σ·z;
//! 2. for each of the T inner steps: if β > 0, D standard normals for
//!    ηₜ = 2σ√(εβ)·z (none when β = 0: ηₜ = 0), then the batch
//!    ([`MinibatchPotential::draw_batch`], nothing for `step_full_batch`);
//! 3. exactly one uniform for the Metropolis test (also for a divergence).
//!
//! [`StepStats::gradient_evaluations`] counts the T inner (minibatch)
//! gradients plus the one full-data evaluation of the Metropolis test;
//! `energy_error` is −log a = U(θ*) − U(θ) − ρ.
//!
//! **Bad input.** A NaN/∞ minibatch gradient, proposal position or full U ends
//! the trajectory early (no further draws of step 2) as a rejected, counted
//! divergence: θ is unchanged, and in the `Persistent` variant the momentum is
//! negated as for every rejection. `step` never fails and never panics.

use rand_core::Rng;

use super::sampler::{Sampler, Step};

use super::in_place_constructors::evaluate_start;
use super::metropolis::metropolis;
use crate::error::{Error, require_non_negative, require_positive};
use crate::kernels::{all_finite, axpy_leading};
use crate::random::fill_standard_normal;
use crate::real::Real;
use crate::stats::StepStats;
use crate::target::{MinibatchPotential, Potential};

/// How the momentum is refreshed between outer steps.
///
/// `#[repr(u8)]`: all-zero bytes are `Resample`
/// ([`ZeroValid`](crate::in_place::ZeroValid)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum MomentumRefresh {
    /// Draw r ~ N(0, σ²I) before every outer step: a reversible chain.
    #[default]
    Resample,
    /// Keep the momentum (negated on rejection): a skew-reversible chain.
    Persistent,
}

// SAFETY: `repr(u8)` with a field-less first variant `Resample` of
// discriminant 0: the zero byte is `Resample`.
#[allow(unsafe_code)]
unsafe impl crate::in_place::ZeroValid for MomentumRefresh {}

crate::saved_state::saved_enum!(MomentumRefresh {
    Resample,
    Persistent
});

/// Settings of [`Amagold`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AmagoldSettings<T> {
    /// Step size ε > 0.
    pub step_size: T,
    /// Inner (stochastic leapfrog) steps per Metropolis test, T ≥ 1.
    pub inner_steps: u32,
    /// Friction β ≥ 0 (0: no friction and no injected noise).
    pub friction: T,
    /// Momentum variance σ² > 0 (the mass matrix is σ²I).
    pub momentum_variance: T,
    /// Reversible (`Resample`) or skew-reversible (`Persistent`) variant.
    pub momentum_refresh: MomentumRefresh,
}

crate::in_place::zero_valid!(impl[T: Real] AmagoldSettings<T> {
    step_size, inner_steps, friction, momentum_variance, momentum_refresh
});

impl<T: Real> AmagoldSettings<T> {
    /// Step size ε, T inner steps and friction β, with σ² = 1 and the
    /// reversible (`Resample`) variant.
    pub fn new(step_size: T, inner_steps: u32, friction: T) -> Self {
        AmagoldSettings {
            step_size,
            inner_steps,
            friction,
            momentum_variance: T::ONE,
            momentum_refresh: MomentumRefresh::Resample,
        }
    }

    /// Checks every setting.
    pub fn validate(&self) -> Result<(), Error> {
        require_positive(self.step_size, "step_size")?;
        if self.inner_steps == 0 {
            return Err(Error::invalid("inner_steps", ">= 1"));
        }
        require_non_negative(self.friction, "friction")?;
        require_positive(self.momentum_variance, "momentum_variance")?;
        Ok(())
    }
}

/// Where the inner steps take their gradients from.
trait GradientSource<T: Real, const D: usize> {
    fn gradient<R: Rng + ?Sized>(&self, rng: &mut R, position: &[T; D], gradient: &mut [T; D]);
    fn potential(&self, position: &[T; D], gradient: &mut [T; D]) -> T;
}

/// AMAGOLD: draws a fresh batch per inner step.
struct Minibatch<'a, P>(&'a P);

impl<T: Real, const D: usize, P: Potential<T, D> + MinibatchPotential<T, D>> GradientSource<T, D>
    for Minibatch<'_, P>
{
    #[inline]
    fn gradient<R: Rng + ?Sized>(&self, rng: &mut R, position: &[T; D], gradient: &mut [T; D]) {
        let batch = self.0.draw_batch(rng);
        self.0.minibatch_gradient(&batch, position, gradient);
    }
    #[inline]
    fn potential(&self, position: &[T; D], gradient: &mut [T; D]) -> T {
        self.0.potential_and_gradient(position, gradient)
    }
}

/// L2MC: the full gradient, no random draw.
struct Full<'a, P>(&'a P);

impl<T: Real, const D: usize, P: Potential<T, D>> GradientSource<T, D> for Full<'_, P> {
    #[inline]
    fn gradient<R: Rng + ?Sized>(&self, _rng: &mut R, position: &[T; D], gradient: &mut [T; D]) {
        let _ = self.0.potential_and_gradient(position, gradient);
    }
    #[inline]
    fn potential(&self, position: &[T; D], gradient: &mut [T; D]) -> T {
        self.0.potential_and_gradient(position, gradient)
    }
}

/// The AMAGOLD sampler (Zhang, Cooper & De Sa 2020, Algorithm 2); see the
/// module documentation for the update, the random-number order and the
/// variants. An exact (π-invariant) sampler with stochastic gradients.
///
/// It is about 8·7·D bytes in f64. [`Amagold::new`] returns it by value,
/// through the stack; [`init_in_place`](Self::init_in_place),
/// `new_boxed` (feature `alloc`) and [`reset`](Self::reset)
/// build it where it lives ([`crate::in_place`]), and
/// `set_dimension` runs a model of run-time dimension
/// n ≤ D in it at the cost of n.
#[derive(Debug, Clone)]
pub struct Amagold<T, const D: usize> {
    settings: AmagoldSettings<T>,
    position: [T; D],
    potential: T,
    /// r (the momentum carried between outer steps; r₋½ during a step).
    momentum: [T; D],
    has_momentum: bool,
    proposal: [T; D],
    /// rₜ₋½ / rₜ₊½ during the inner loop.
    inner_momentum: [T; D],
    next_momentum: [T; D],
    gradient: [T; D],
    noise: [T; D],
    /// The coordinates that move, n ≤ D ([`Amagold::set_dimension`]); 0
    /// (the all-zero value of [`crate::in_place`]) is D.
    dimension: usize,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize] Amagold<T, D> {
    settings, position, potential, momentum, has_momentum, proposal, inner_momentum,
    next_momentum, gradient, noise, dimension
});

/// L2MC is AMAGOLD with full-batch gradients: use [`Amagold::step_full_batch`].
pub type L2mc<T, const D: usize> = Amagold<T, D>;

impl<T: Real, const D: usize> Amagold<T, D> {
    /// Validates `settings` and evaluates the full-data U at `initial_position`.
    pub fn new<P: Potential<T, D>>(
        settings: AmagoldSettings<T>,
        initial_position: [T; D],
        target: &P,
    ) -> Result<Self, Error> {
        settings.validate()?;
        if !all_finite(&initial_position) {
            return Err(Error::NonFiniteInitialState);
        }
        let mut sampler = Amagold {
            settings,
            position: initial_position,
            potential: T::ZERO,
            momentum: [T::ZERO; D],
            has_momentum: false,
            proposal: [T::ZERO; D],
            inner_momentum: [T::ZERO; D],
            next_momentum: [T::ZERO; D],
            gradient: [T::ZERO; D],
            noise: [T::ZERO; D],
            dimension: D,
        };
        sampler.potential = target.potential_and_gradient(&sampler.position, &mut sampler.gradient);
        if !sampler.potential.is_finite() || !all_finite(&sampler.gradient) {
            return Err(Error::NonFiniteInitialState);
        }
        Ok(sampler)
    }

    /// The checks of [`initialize_zeroed`](Self::initialize_zeroed),
    /// changing nothing observable: the target is evaluated into the
    /// scratch vectors.
    fn check_reset<P: Potential<T, D>>(
        &mut self,
        settings: &AmagoldSettings<T>,
        initial_position: &[T; D],
        target: &P,
    ) -> Result<(), Error> {
        settings.validate()?;
        evaluate_start(
            initial_position,
            target,
            &mut self.proposal,
            &mut self.noise,
        )?;
        Ok(())
    }

    /// The state of [`Amagold::new`] on an all-zero sampler.
    fn initialize_zeroed<P: Potential<T, D>>(
        &mut self,
        settings: AmagoldSettings<T>,
        initial_position: &[T; D],
        target: &P,
    ) -> Result<(), Error> {
        settings.validate()?;
        let potential = evaluate_start(
            initial_position,
            target,
            &mut self.position,
            &mut self.gradient,
        )?;
        self.settings = settings;
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
    /// `runtime-dimension`; before the first step): a model of run-time
    /// dimension n in storage for D. Momenta and noise are n normals and
    /// every pass stops at n, so a step costs what dimension n costs and the
    /// chain is bit for bit that of an `Amagold<T, n>` on the same
    /// coordinates. The target is evaluated at positions zero from n on;
    /// what it writes to the gradient there is ignored. The position must
    /// be zero from n on; on error nothing changes.
    #[cfg(feature = "runtime-dimension")]
    pub fn set_dimension(&mut self, n: usize) -> Result<(), Error> {
        super::dimension::check_new(n, self.has_momentum, &self.position)?;
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

    /// Replaces the settings; on error the old settings stay. The carried
    /// momentum (`Persistent` variant) is kept.
    pub fn set_settings(&mut self, settings: AmagoldSettings<T>) -> Result<(), Error> {
        settings.validate()?;
        self.settings = settings;
        Ok(())
    }

    /// The settings in force.
    pub fn settings(&self) -> &AmagoldSettings<T> {
        &self.settings
    }

    /// The current state θ.
    pub fn position(&self) -> &[T; D] {
        &self.position
    }

    /// The full-data U at the current state.
    pub fn potential(&self) -> T {
        self.potential
    }

    /// The momentum carried to the next outer step (`None` before the first
    /// step). Only meaningful for the `Persistent` variant.
    pub fn momentum(&self) -> Option<&[T; D]> {
        if self.has_momentum {
            Some(&self.momentum)
        } else {
            None
        }
    }

    /// One AMAGOLD draw: T inner steps on fresh minibatch gradients, then the
    /// full-data Metropolis–Hastings test.
    pub fn step<P, R>(&mut self, target: &P, rng: &mut R) -> StepStats<T>
    where
        P: Potential<T, D> + MinibatchPotential<T, D>,
        R: Rng + ?Sized,
    {
        self.outer_step(&Minibatch(target), rng)
    }

    /// One L2MC draw: AMAGOLD with full-batch gradients (no batch is drawn).
    pub fn step_full_batch<P: Potential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> StepStats<T> {
        self.outer_step(&Full(target), rng)
    }

    fn outer_step<G: GradientSource<T, D>, R: Rng + ?Sized>(
        &mut self,
        source: &G,
        rng: &mut R,
    ) -> StepStats<T> {
        let eps = self.settings.step_size;
        let beta = self.settings.friction;
        let sigma2 = self.settings.momentum_variance;
        let mut stats = StepStats::new(eps);
        let n = self.dimension();

        // Line 3: momentum.
        if self.settings.momentum_refresh == MomentumRefresh::Resample || !self.has_momentum {
            fill_standard_normal(rng, &mut self.momentum[..n]);
            let sigma = sigma2.sqrt();
            for r in self.momentum[..n].iter_mut() {
                *r *= sigma;
            }
            self.has_momentum = true;
        }

        let drift = eps / sigma2; // ε σ⁻²
        let half_drift = T::HALF * drift;
        let eb = eps * beta;
        let damp = T::ONE - eb;
        let inv = T::ONE / (T::ONE + eb);
        let noise_scale = T::TWO * (eps * beta * sigma2).sqrt(); // sqrt(4εβσ²)

        // Lines 4–5.
        self.inner_momentum[..n].copy_from_slice(&self.momentum[..n]);
        let mut rho = T::ZERO;
        for i in 0..n {
            self.proposal[i] = self.position[i] + half_drift * self.inner_momentum[i];
        }
        let mut finite = all_finite(&self.proposal[..n]);
        if finite {
            for t in 0..self.settings.inner_steps {
                if t != 0 {
                    axpy_leading(drift, &self.inner_momentum, &mut self.proposal, n);
                    if !all_finite(&self.proposal[..n]) {
                        finite = false;
                        break;
                    }
                }
                if beta > T::ZERO {
                    fill_standard_normal(rng, &mut self.noise[..n]);
                    for z in self.noise[..n].iter_mut() {
                        *z *= noise_scale;
                    }
                } else {
                    self.noise[..n].fill(T::ZERO);
                }
                source.gradient(rng, &self.proposal, &mut self.gradient);
                stats.gradient_evaluations += 1;
                if !all_finite(&self.gradient[..n]) {
                    finite = false;
                    break;
                }
                // ρ += ½ε σ⁻² ∇Ũᵀ(r₋ + r₊), the sum in `dot`'s order.
                let mut gradient_dot_sum = T::ZERO;
                for i in 0..n {
                    let next = (damp * self.inner_momentum[i] - eps * self.gradient[i]
                        + self.noise[i])
                        * inv;
                    self.next_momentum[i] = next;
                    gradient_dot_sum += self.gradient[i] * (self.inner_momentum[i] + next);
                }
                rho += half_drift * gradient_dot_sum;
                self.inner_momentum[..n].swap_with_slice(&mut self.next_momentum[..n]);
            }
        }
        // Line 15.
        let mut proposal_potential = T::INFINITY;
        if finite {
            axpy_leading(half_drift, &self.inner_momentum, &mut self.proposal, n);
            finite = all_finite(&self.proposal[..n]) && all_finite(&self.inner_momentum[..n]);
        }
        if finite {
            proposal_potential = source.potential(&self.proposal, &mut self.gradient);
            stats.gradient_evaluations += 1;
        }
        // Line 17: a = exp(h0 − h1) with h0 = U(θ), h1 = U(θ*) − ρ.
        let h1 = if finite && rho.is_finite() {
            proposal_potential - rho
        } else {
            T::INFINITY
        };
        let decision = metropolis(self.potential, h1, rng);
        stats.accepted = decision.accepted;
        stats.acceptance_probability = decision.probability;
        stats.energy_error = decision.energy_error;
        stats.divergent = decision.divergent;
        if decision.accepted {
            self.position[..n].swap_with_slice(&mut self.proposal[..n]);
            self.momentum[..n].copy_from_slice(&self.inner_momentum[..n]);
            self.potential = proposal_potential;
        } else {
            for r in self.momentum[..n].iter_mut() {
                *r = -*r;
            }
        }
        stats
    }
}

super::in_place_constructors::in_place_constructors!(
    impl[T: Real, const D: usize] Amagold<T, D> { settings: AmagoldSettings<T>, target: target: P }
);

impl<T: Real, const D: usize> Sampler<T, D> for Amagold<T, D> {
    type Settings = AmagoldSettings<T>;
    fn settings(&self) -> &AmagoldSettings<T> {
        Amagold::settings(self)
    }
    fn set_step_size(&mut self, step_size: T) -> Result<(), Error> {
        Amagold::set_step_size(self, step_size)
    }
    fn position(&self) -> &[T; D] {
        Amagold::position(self)
    }
    fn dimension(&self) -> usize {
        Amagold::dimension(self)
    }
    fn potential(&self) -> Option<T> {
        Some(Amagold::potential(self))
    }
}

/// AMAGOLD's transition: minibatch inner steps, then the full-data test.
/// L2MC (the same sampler on full-batch gradients) is
/// [`step_full_batch`](Amagold::step_full_batch).
impl<T: Real, const D: usize, P: Potential<T, D> + MinibatchPotential<T, D>> Step<T, D, P>
    for Amagold<T, D>
{
    type Stats = StepStats<T>;
    fn step<R: Rng + ?Sized>(&mut self, target: &P, rng: &mut R) -> Result<StepStats<T>, Error> {
        Ok(Amagold::step(self, target, rng))
    }
}
