//! Stochastic gradient Hamiltonian Monte Carlo (Chen, Fox & Guestrin 2014):
//! z = (θ, r), H = U(θ) + rᵀr/(2m), friction C, gradient-noise estimate B̂,
//! in one of two update orders ([`SghmcUpdate`]):
//!
//! ```text
//! PositionFirst (default; Chen et al.'s Algorithm 2, AMAGOLD's Algorithm 1):
//!   θ_{t+1} = θ_t + ε r_t / m
//!   r_{t+1} = r_t − ε ∇Ũ_Ω(θ_{t+1}) − ε C r_t / m + N(0, ε(2C − εB̂) I)
//!
//! RecipeEuler (Ma, Chen & Fox 2015, eq. 18: the recipe's Euler–Maruyama step,
//! D = diag(0, C·I), Q = [[0, −I], [I, 0]], Γ = 0, run by the recipe engine):
//!   θ_{t+1} = θ_t + ε r_t / m
//!   r_{t+1} = r_t − ε ∇Ũ_Ω(θ_t)     − ε C r_t / m + N(0, ε(2C − εB̂) I)
//! ```
//!
//! The two differ only in where the gradient is taken; in both the friction
//! acts on the old r_t (as Chen et al. and AMAGOLD print it). Position-first
//! is the symplectic-Euler ordering: on a Gaussian with precision p (m = 1)
//! its iteration matrix has determinant 1 − εC and is stable for
//! ε²p < 4 − 2εC, while the Euler form's determinant is 1 − εC + ε²p, > 1 as
//! soon as ε p > C, so that form blows up in the stiff tails of a target
//! (measured on AMAGOLD's double well: diverges for ε ≥ 0.15 with C = 0.5,
//! where position-first does not). With C = 0 and B̂ = 0 the Euler form is the
//! naive SGHMC of the recipe's eq. (15) (wrong: no friction against the
//! gradient noise).
//!
//! **Convention.** Recipe ε. Chen et al. write the noise as N(0, 2(C − B̂_c)η)
//! with B̂_c = ½ηV̂: that is ε = η and B̂ = V̂ here (B̂_c = ½εB̂); AMAGOLD's
//! friction β and momentum variance σ² = 1 are C = 2β (noise N(0, 4εβ)).
//! Scalar C, B̂, m.
//!
//! **Random numbers per step**, for both orders: the batch, then n standard
//! normals (drawn also when 2C − εB̂ = 0; n the dimension, D unless
//! `set_dimension` said otherwise: the state z is then (θ, r) of the first n
//! coordinates, laid out for the engine as in a sampler compiled for n). Position-first moves θ before
//! drawing them (the move takes no random numbers) and evaluates the one
//! gradient of the step at the new θ on that batch; the Euler form evaluates
//! it at the old θ. **Non-finite values**: a non-finite gradient is
//! [`Error::NonFiniteGradient`], a non-finite new θ (position-first: found
//! before the gradient is evaluated, after the random numbers are drawn) or
//! r is [`Error::NonFiniteProposal`]; either way the sampler is left exactly
//! as before the call (the generator has advanced).
//! **Exactness:** biased O(ε) (for C > 0), both orders.

use rand_core::Rng;

use super::engine::{RecipeDynamics, recipe_update};
use super::{
    COMPACT_ROWS, begin_step, check_initial, draw_step_randomness, extended_state, step_gradient,
};
use crate::error::{Error, require_non_negative, require_positive};
use crate::kernels::all_finite;
use crate::real::Real;
use crate::stats::StepStats;
use crate::target::MinibatchPotential;

/// The order in which an [`Sghmc`] step updates θ and r (see the module docs).
/// (`repr(u8)`, `PositionFirst` = 0: all-zero bytes are `PositionFirst`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum SghmcUpdate {
    /// θ first, then r with the gradient at the new θ (symplectic-Euler
    /// ordering), as Chen, Fox & Guestrin 2014, Algorithm 2, and Zhang, Cooper
    /// & De Sa 2020 (AMAGOLD), Algorithm 1, write SGHMC:
    /// θ′ = θ + εr/m, r′ = r − ε∇Ũ_Ω(θ′) − εCr/m + N(0, ε(2C − εB̂)I).
    /// The default.
    #[default]
    PositionFirst,
    /// Both blocks from the old state, the complete recipe's Euler–Maruyama
    /// step (Ma, Chen & Fox 2015, eq. 18):
    /// θ′ = θ + εr/m, r′ = r − ε∇Ũ_Ω(θ) − εCr/m + N(0, ε(2C − εB̂)I).
    /// Unstable once εp > C on a Gaussian direction of precision p.
    RecipeEuler,
}

// SAFETY: `repr(u8)` with a field-less first variant `PositionFirst` of
// discriminant 0: the zero byte is `PositionFirst`.
#[allow(unsafe_code)]
unsafe impl crate::in_place::ZeroValid for SghmcUpdate {}

crate::saved_state::saved_enum!(SghmcUpdate {
    PositionFirst,
    RecipeEuler
});

/// Settings of [`Sghmc`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SghmcSettings<T> {
    /// ε > 0 (recipe convention).
    pub step_size: T,
    /// Friction C ≥ 0 (the diffusion of the momentum block).
    pub friction: T,
    /// B̂ ≥ 0 with 2C − εB̂ ≥ 0.
    pub noise_estimate: T,
    /// Scalar mass m > 0 (M = m·I).
    pub mass: T,
    /// The update order.
    pub update: SghmcUpdate,
}

crate::in_place::zero_valid!(impl[T: Real] SghmcSettings<T> {
    step_size, friction, noise_estimate, mass, update
});

impl<T: Real> SghmcSettings<T> {
    /// ε and C, with B̂ = 0, m = 1 and Chen et al.'s
    /// [`SghmcUpdate::PositionFirst`] order.
    pub fn new(step_size: T, friction: T) -> Self {
        SghmcSettings {
            step_size,
            friction,
            noise_estimate: T::ZERO,
            mass: T::ONE,
            update: SghmcUpdate::PositionFirst,
        }
    }

    /// Checks every setting.
    pub fn validate(&self) -> Result<(), Error> {
        require_positive(self.step_size, "step_size")?;
        require_non_negative(self.friction, "friction")?;
        require_positive(self.mass, "mass")?;
        super::check_noise_estimate(self.step_size, self.friction, self.noise_estimate)
    }
}

pub(super) struct SghmcDynamics<T> {
    pub(super) d: usize,
    pub(super) friction: T,
    pub(super) noise_estimate: T,
    pub(super) mass: T,
}

impl<T: Real> RecipeDynamics<T> for SghmcDynamics<T> {
    fn state_len(&self) -> usize {
        2 * self.d
    }
    fn noise_len(&self) -> usize {
        self.d
    }
    fn hamiltonian_gradient(&self, z: &[T], g: &[T], out: &mut [T]) {
        let (gt, gr) = out.split_at_mut(self.d);
        gt.copy_from_slice(g);
        for (o, &r) in gr.iter_mut().zip(&z[self.d..]) {
            *o = r / self.mass;
        }
    }
    fn apply_diffusion(&self, _z: &[T], v: &[T], out: &mut [T]) {
        let (ot, or) = out.split_at_mut(self.d);
        ot.fill(T::ZERO);
        for (o, &vi) in or.iter_mut().zip(&v[self.d..]) {
            *o = self.friction * vi;
        }
    }
    fn apply_curl(&self, _z: &[T], v: &[T], out: &mut [T]) {
        let (ot, or) = out.split_at_mut(self.d);
        let (vt, vr) = v.split_at(self.d);
        for (o, &vi) in ot.iter_mut().zip(vr) {
            *o = -vi;
        }
        or.copy_from_slice(vt);
    }
    fn correction(&self, _z: &[T], out: &mut [T]) {
        out.fill(T::ZERO);
    }
    fn apply_noise_factor(&self, _z: &[T], eps: T, w: &[T], out: &mut [T]) {
        let (ot, or) = out.split_at_mut(self.d);
        ot.fill(T::ZERO);
        let s = (T::TWO * self.friction - eps * self.noise_estimate).sqrt();
        for (o, &wi) in or.iter_mut().zip(w) {
            *o = s * wi;
        }
    }
}

/// SGHMC in dimension `D`, in the update order of its settings ([`SghmcUpdate`])
/// (8·10·D bytes in f64, 8·12·D with the feature `runtime-dimension`; built
/// in place by [`init_in_place`](Self::init_in_place), `new_boxed` and
/// [`reset`](Self::reset); a run-time dimension n ≤ D by `set_dimension`).
#[derive(Debug, Clone)]
pub struct Sghmc<T, const D: usize> {
    settings: SghmcSettings<T>,
    /// θ and r (their first n entries at a run-time dimension n).
    state: [[T; D]; 2],
    /// θ′ and r′, in the same rows.
    proposal: [[T; D]; 2],
    gradient: [T; D],
    normals: [T; D],
    /// The engine's scratch ([`SghmcUpdate::RecipeEuler`]), after z's copy
    /// at a run-time dimension.
    work: [[T; D]; 4 + COMPACT_ROWS],
    /// The coordinates that move (0: D).
    dimension: usize,
    /// A step was taken.
    started: bool,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize] Sghmc<T, D> {
    settings, state, proposal, gradient, normals, work, dimension, started
});

impl<T: Real, const D: usize> Sghmc<T, D> {
    /// Validates `settings` and starts at θ = `initial_position` (finite, D ≥ 1),
    /// r = 0.
    pub fn new(settings: SghmcSettings<T>, initial_position: [T; D]) -> Result<Self, Error> {
        settings.validate()?;
        check_initial(&initial_position)?;
        Ok(Sghmc {
            settings,
            state: [initial_position, [T::ZERO; D]],
            proposal: [[T::ZERO; D]; 2],
            gradient: [T::ZERO; D],
            normals: [T::ZERO; D],
            work: [[T::ZERO; D]; 4 + COMPACT_ROWS],
            dimension: D,
            started: false,
        })
    }

    /// The state of [`Sghmc::new`] on an all-zero sampler (r = 0).
    fn initialize_zeroed(
        &mut self,
        settings: SghmcSettings<T>,
        initial_position: &[T; D],
    ) -> Result<(), Error> {
        settings.validate()?;
        check_initial(initial_position)?;
        self.settings = settings;
        self.state[0].copy_from_slice(initial_position);
        self.dimension = D;
        Ok(())
    }

    /// The current θ.
    pub fn position(&self) -> &[T; D] {
        &self.state[0]
    }

    /// The current momentum r.
    pub fn momentum(&self) -> &[T; D] {
        &self.state[1]
    }

    /// Sets r (finite), e.g. to resample it. Only the first
    /// [`dimension`](Self::dimension) entries are read.
    pub fn set_momentum(&mut self, momentum: [T; D]) -> Result<(), Error> {
        let n = self.dimension();
        if !all_finite(&momentum[..n]) {
            return Err(Error::invalid("momentum", "finite"));
        }
        self.state[1][..n].copy_from_slice(&momentum[..n]);
        Ok(())
    }

    /// The settings in force.
    pub fn settings(&self) -> &SghmcSettings<T> {
        &self.settings
    }

    /// Changes ε (2C − εB̂ ≥ 0 must still hold).
    pub fn set_step_size(&mut self, step_size: T) -> Result<(), Error> {
        let mut s = self.settings;
        s.step_size = step_size;
        s.validate()?;
        self.settings = s;
        Ok(())
    }

    /// One step in the order of [`SghmcSettings::update`]. On a non-finite
    /// gradient or proposal it returns the error and leaves the sampler
    /// exactly as before the call.
    pub fn step<P: MinibatchPotential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> Result<StepStats<T>, Error> {
        let n = self.dimension();
        let stats = match self.settings.update {
            SghmcUpdate::PositionFirst => self.position_first(target, rng, n)?,
            SghmcUpdate::RecipeEuler => self.recipe_euler(target, rng, n)?,
        };
        if !all_finite(&self.proposal[0][..n]) || !all_finite(&self.proposal[1][..n]) {
            return Err(Error::NonFiniteProposal);
        }
        for (state, proposal) in self.state.iter_mut().zip(&self.proposal) {
            state[..n].copy_from_slice(&proposal[..n]);
        }
        self.started = true;
        Ok(stats)
    }

    /// θ′ = θ + εr/m; r′ = r + (−ε∇Ũ_Ω(θ′) − εCr/m + √ε·√(2C − εB̂)·w),
    /// into `proposal`, for the first `n` coordinates.
    fn position_first<P: MinibatchPotential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
        n: usize,
    ) -> Result<StepStats<T>, Error> {
        let SghmcSettings {
            step_size: eps,
            friction,
            noise_estimate,
            mass,
            ..
        } = self.settings;
        let [theta, r] = &self.state;
        for ((o, &t), &ri) in self.proposal[0][..n].iter_mut().zip(theta).zip(r) {
            *o = t + eps * ri / mass;
        }
        let batch = draw_step_randomness(target, rng, &mut self.normals, n);
        if !all_finite(&self.proposal[0][..n]) {
            return Err(Error::NonFiniteProposal);
        }
        // θ′ is zero from n on: `proposal[0]` is written nowhere else.
        let stats = step_gradient(
            target,
            &batch,
            eps,
            &self.proposal[0],
            &mut self.gradient,
            n,
        )?;
        // r′ = r + Δr with the increment summed first, as the papers' loop
        // `r += −ε∇Ũ − εCr/m + noise` rounds (the host's AMAGOLD Fig. 1
        // reproduction checks the chains are identical bit for bit).
        let noise = eps.sqrt() * (T::TWO * friction - eps * noise_estimate).sqrt();
        for (((o, &ri), &g), &w) in self.proposal[1][..n]
            .iter_mut()
            .zip(r)
            .zip(&self.gradient)
            .zip(&self.normals)
        {
            *o = ri + (-(eps * g) - eps * friction * ri / mass + noise * w);
        }
        Ok(stats)
    }

    /// The recipe engine's eq. (18) step from the old state, into `proposal`
    /// (z of the first `n` coordinates, as a sampler compiled for n lays it
    /// out; θ′ and r′ are then moved to their rows).
    fn recipe_euler<P: MinibatchPotential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
        n: usize,
    ) -> Result<StepStats<T>, Error> {
        let eps = self.settings.step_size;
        let (stats, _) = begin_step(
            target,
            rng,
            eps,
            &self.state[0],
            &mut self.normals,
            &mut self.gradient,
            n,
        )?;
        let dynamics = SghmcDynamics {
            d: n,
            friction: self.settings.friction,
            noise_estimate: self.settings.noise_estimate,
            mass: self.settings.mass,
        };
        let (z, work) = extended_state(&self.state, 2, 0, n, self.work.as_flattened_mut())?;
        let out = self.proposal.as_flattened_mut();
        recipe_update(
            &dynamics,
            z,
            &self.gradient[..n],
            eps,
            &self.normals[..n],
            work,
            &mut out[..2 * n],
        )?;
        if n < D {
            // r′ to its row, and θ′'s row zero from n on again (position-first
            // evaluates the target there).
            out.copy_within(n..2 * n, D);
            out[n..D.min(2 * n)].fill(T::ZERO);
        }
        Ok(stats)
    }
}

recipe_in_place!(Sghmc, SghmcSettings);
recipe_sampler_traits!(Sghmc, SghmcSettings, dimension);
