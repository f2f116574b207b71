//! Stochastic gradient Nosé–Hoover thermostat (Ding, Fang, Babbush, Chen, Skeel
//! & Neven 2014) in the recipe's form, eq. (24) of Ma, Chen & Fox 2015:
//! z = (θ, r, ξ), D = diag(0, A·I, 0),
//! `Q = [[0, −I, 0], [I, 0, r/d], [0, −rᵀ/d, 0]]`, Γ = (0, 0, −1):
//!
//! ```text
//! θ ← θ + ε r_t
//! r ← r_t − ε ∇Ũ_Ω(θ_t) − ε ξ_t r_t + N(0, ε(2A − εB̂) I)
//! ξ ← ξ_t + ε (r_tᵀ r_t / d − 1)
//! ```
//!
//! **Typo in the paper.** For (D, Q) above to give eq. (24), the Hamiltonian must
//! be H = U(θ) + ½rᵀr + (d/2)(ξ − A)², not the printed (1/2d)(ξ − A)²: then
//! ∂_ξH = d(ξ − A), Q_{rξ}∂_ξH + A r = ξ r, and ξ is N(A, 1/d) at stationarity.
//!
//! All blocks move from the old state (Ding et al.'s Algorithm uses the new r in
//! the θ and ξ updates). With [`Thermostat::Fixed`] ξ is held at its current
//! value: the dynamics are then linear SGHMC with friction ξ and noise 2A − εB̂
//! (correct only for ξ = A), used by the tests.
//!
//! **Convention.** Recipe ε. **Random numbers per step:** the batch, then n
//! standard normals (n the dimension, D unless `set_dimension` said
//! otherwise: z is then (θ, r, ξ) of the first n coordinates, d = n in the
//! dynamics, laid out as in a sampler compiled for n). **Exactness:** biased O(ε).

use rand_core::Rng;

use super::engine::{RecipeDynamics, recipe_update};
use super::{begin_step, check_initial, extended_state, store_extended_state};
use crate::error::{Error, require_non_negative, require_positive};
use crate::kernels::all_finite;
use crate::real::Real;
use crate::stats::StepStats;
use crate::target::MinibatchPotential;

/// Whether the thermostat ξ evolves.
/// (`repr(u8)`, `Adaptive` = 0: all-zero bytes are `Adaptive`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Thermostat {
    /// ξ follows the dynamics (SGNHT).
    #[default]
    Adaptive,
    /// ξ stays at its current value (a friction-ξ SGHMC; for tests).
    Fixed,
}

// SAFETY: `repr(u8)` with a field-less first variant `Adaptive` of
// discriminant 0: the zero byte is `Adaptive`.
#[allow(unsafe_code)]
unsafe impl crate::in_place::ZeroValid for Thermostat {}

crate::saved_state::saved_enum!(Thermostat { Adaptive, Fixed });

/// Settings of [`Sgnht`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SgnhtSettings<T> {
    /// ε > 0 (recipe convention).
    pub step_size: T,
    /// Diffusion A ≥ 0 (the initial ξ is A).
    pub diffusion: T,
    /// B̂ ≥ 0 with 2A − εB̂ ≥ 0.
    pub noise_estimate: T,
    /// Adaptive or fixed ξ.
    pub thermostat: Thermostat,
}

crate::in_place::zero_valid!(impl[T: Real] SgnhtSettings<T> {
    step_size, diffusion, noise_estimate, thermostat
});

impl<T: Real> SgnhtSettings<T> {
    /// ε and A, with B̂ = 0 and an adaptive thermostat.
    pub fn new(step_size: T, diffusion: T) -> Self {
        SgnhtSettings {
            step_size,
            diffusion,
            noise_estimate: T::ZERO,
            thermostat: Thermostat::Adaptive,
        }
    }

    /// Checks every setting.
    pub fn validate(&self) -> Result<(), Error> {
        require_positive(self.step_size, "step_size")?;
        require_non_negative(self.diffusion, "diffusion")?;
        super::check_noise_estimate(self.step_size, self.diffusion, self.noise_estimate)
    }
}

struct SgnhtDynamics<T> {
    d: usize,
    diffusion: T,
    noise_estimate: T,
}

impl<T: Real> RecipeDynamics<T> for SgnhtDynamics<T> {
    fn state_len(&self) -> usize {
        2 * self.d + 1
    }
    fn noise_len(&self) -> usize {
        self.d
    }
    fn hamiltonian_gradient(&self, z: &[T], g: &[T], out: &mut [T]) {
        let d = self.d;
        out[..d].copy_from_slice(g);
        out[d..2 * d].copy_from_slice(&z[d..2 * d]);
        out[2 * d] = T::from_u64(d as u64) * (z[2 * d] - self.diffusion);
    }
    fn apply_diffusion(&self, _z: &[T], v: &[T], out: &mut [T]) {
        let d = self.d;
        out.fill(T::ZERO);
        for i in d..2 * d {
            out[i] = self.diffusion * v[i];
        }
    }
    fn apply_curl(&self, z: &[T], v: &[T], out: &mut [T]) {
        let d = self.d;
        let dim = T::from_u64(d as u64);
        let vxi = v[2 * d];
        let mut rv = T::ZERO;
        for i in 0..d {
            out[i] = -v[d + i];
            out[d + i] = v[i] + z[d + i] * vxi / dim;
            rv += z[d + i] * v[d + i];
        }
        out[2 * d] = -rv / dim;
    }
    fn correction(&self, _z: &[T], out: &mut [T]) {
        out.fill(T::ZERO);
        out[2 * self.d] = -T::ONE;
    }
    fn apply_noise_factor(&self, _z: &[T], eps: T, w: &[T], out: &mut [T]) {
        let d = self.d;
        out.fill(T::ZERO);
        let s = (T::TWO * self.diffusion - eps * self.noise_estimate).sqrt();
        for i in 0..d {
            out[d + i] = s * w[i];
        }
    }
}

/// SGNHT in dimension `D` (8·14·D bytes in f64; built in place by
/// [`init_in_place`](Self::init_in_place), `new_boxed` and
/// [`reset`](Self::reset); a run-time dimension n ≤ D by `set_dimension`).
#[derive(Debug, Clone)]
pub struct Sgnht<T, const D: usize> {
    settings: SgnhtSettings<T>,
    /// θ, r, and ξ in `state[2][0]` (the rest of row 2 is unused; θ and r
    /// hold their first n entries at a run-time dimension n).
    state: [[T; D]; 3],
    /// The step's z′ = (θ′, r′, ξ′), in the layout of a sampler compiled for n.
    proposal: [[T; D]; 3],
    gradient: [T; D],
    normals: [T; D],
    /// The engine's scratch (4D + 2 entries), after z's copy (2n + 1) at a
    /// run-time dimension n < D.
    work: [[T; D]; 6],
    /// The coordinates that move (0: D).
    dimension: usize,
    /// A step was taken.
    started: bool,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize] Sgnht<T, D> {
    settings, state, proposal, gradient, normals, work, dimension, started
});

impl<T: Real, const D: usize> Sgnht<T, D> {
    /// Validates `settings` and starts at θ = `initial_position` (finite, D ≥ 1),
    /// r = 0, ξ = A.
    pub fn new(settings: SgnhtSettings<T>, initial_position: [T; D]) -> Result<Self, Error> {
        settings.validate()?;
        check_initial(&initial_position)?;
        let mut extra = [T::ZERO; D];
        extra[0] = settings.diffusion;
        Ok(Sgnht {
            settings,
            state: [initial_position, [T::ZERO; D], extra],
            proposal: [[T::ZERO; D]; 3],
            gradient: [T::ZERO; D],
            normals: [T::ZERO; D],
            work: [[T::ZERO; D]; 6],
            dimension: D,
            started: false,
        })
    }

    /// The state of [`Sgnht::new`] on an all-zero sampler (r = 0, ξ = A).
    fn initialize_zeroed(
        &mut self,
        settings: SgnhtSettings<T>,
        initial_position: &[T; D],
    ) -> Result<(), Error> {
        settings.validate()?;
        check_initial(initial_position)?;
        self.settings = settings;
        self.state[0].copy_from_slice(initial_position);
        self.state[2][0] = settings.diffusion;
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

    /// The current thermostat ξ.
    pub fn thermostat(&self) -> T {
        self.state[2][0]
    }

    /// Sets r (finite). Only the first [`dimension`](Self::dimension)
    /// entries are read.
    pub fn set_momentum(&mut self, momentum: [T; D]) -> Result<(), Error> {
        let n = self.dimension();
        if !all_finite(&momentum[..n]) {
            return Err(Error::invalid("momentum", "finite"));
        }
        self.state[1][..n].copy_from_slice(&momentum[..n]);
        Ok(())
    }

    /// Sets ξ (finite).
    pub fn set_thermostat(&mut self, xi: T) -> Result<(), Error> {
        if !xi.is_finite() {
            return Err(Error::invalid("thermostat", "finite"));
        }
        self.state[2][0] = xi;
        Ok(())
    }

    /// The settings in force.
    pub fn settings(&self) -> &SgnhtSettings<T> {
        &self.settings
    }

    /// Changes ε (2A − εB̂ ≥ 0 must still hold).
    pub fn set_step_size(&mut self, step_size: T) -> Result<(), Error> {
        let mut s = self.settings;
        s.step_size = step_size;
        s.validate()?;
        self.settings = s;
        Ok(())
    }

    /// One step. On a non-finite gradient or proposal it returns the error and
    /// leaves the sampler exactly as before the call.
    pub fn step<P: MinibatchPotential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> Result<StepStats<T>, Error> {
        let eps = self.settings.step_size;
        let n = self.dimension();
        let (stats, _) = begin_step(
            target,
            rng,
            eps,
            &self.state[0],
            &mut self.normals,
            &mut self.gradient,
            n,
        )?;
        let dynamics = SgnhtDynamics {
            d: n,
            diffusion: self.settings.diffusion,
            noise_estimate: self.settings.noise_estimate,
        };
        let len = 2 * n + 1;
        let (z, work) = extended_state(&self.state, 2, 1, n, self.work.as_flattened_mut())?;
        let Some(out) = self.proposal.as_flattened_mut().get_mut(..len) else {
            return Err(Error::invalid("D", ">= 1"));
        };
        recipe_update(
            &dynamics,
            z,
            &self.gradient[..n],
            eps,
            &self.normals[..n],
            work,
            out,
        )?;
        if self.settings.thermostat == Thermostat::Fixed {
            out[2 * n] = self.state[2][0];
        }
        if !all_finite(out) {
            return Err(Error::NonFiniteProposal);
        }
        store_extended_state(out, 2, n, &mut self.state);
        self.started = true;
        Ok(stats)
    }
}

recipe_in_place!(Sgnht, SgnhtSettings);
recipe_sampler_traits!(Sgnht, SgnhtSettings, dimension);
