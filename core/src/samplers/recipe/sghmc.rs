//! Stochastic gradient Hamiltonian Monte Carlo (Chen, Fox & Guestrin 2014) in
//! the recipe's form, eq. (18) of Ma, Chen & Fox 2015: z = (θ, r),
//! H = U(θ) + rᵀr/(2m), D = diag(0, C·I), `Q = [[0, −I], [I, 0]]`, Γ = 0:
//!
//! ```text
//! θ ← θ + ε r_t / m
//! r ← r_t − ε ∇Ũ_Ω(θ_t) − ε C r_t / m + N(0, ε(2C − εB̂) I)
//! ```
//!
//! Both blocks move from the old state (the recipe's Euler–Maruyama step; Chen
//! et al.'s Algorithm 2 instead uses the new θ in the r update). With C = 0 and
//! B̂ = 0 this is the naive SGHMC of the recipe's eq. (15) (wrong: no friction
//! against the gradient noise).
//!
//! **Convention.** Recipe ε. Chen et al. write the noise as N(0, 2(C − B̂_c)η)
//! with B̂_c = ½ηV̂: that is ε = η and B̂ = V̂ here (B̂_c = ½εB̂). Scalar C, B̂, m.
//! **Random numbers per step:** the batch, then D standard normals (drawn also
//! when 2C − εB̂ = 0). **Exactness:** biased O(ε) (for C > 0).

use rand_core::Rng;

use super::engine::{RecipeDynamics, recipe_update};
use super::{begin_step, check_initial};
use crate::Real;
use crate::error::{Error, require_non_negative, require_positive};
use crate::linalg::all_finite;
use crate::stats::StepStats;
use crate::target::MinibatchPotential;

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
}

impl<T: Real> SghmcSettings<T> {
    /// ε and C, with B̂ = 0 and m = 1.
    pub fn new(step_size: T, friction: T) -> Self {
        SghmcSettings {
            step_size,
            friction,
            noise_estimate: T::ZERO,
            mass: T::ONE,
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

/// SGHMC in dimension `D`.
#[derive(Debug, Clone)]
pub struct Sghmc<T, const D: usize> {
    settings: SghmcSettings<T>,
    state: [[T; D]; 2],
    proposal: [[T; D]; 2],
    gradient: [T; D],
    normals: [T; D],
    work: [[T; D]; 4],
}

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
            work: [[T::ZERO; D]; 4],
        })
    }

    /// The current θ.
    pub fn position(&self) -> &[T; D] {
        &self.state[0]
    }

    /// The current momentum r.
    pub fn momentum(&self) -> &[T; D] {
        &self.state[1]
    }

    /// Sets r (finite), e.g. to resample it.
    pub fn set_momentum(&mut self, momentum: [T; D]) -> Result<(), Error> {
        if !all_finite(&momentum) {
            return Err(Error::invalid("momentum", "finite"));
        }
        self.state[1] = momentum;
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

    /// One step. On a non-finite gradient or proposal it returns the error and
    /// leaves the sampler exactly as before the call.
    pub fn step<P: MinibatchPotential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> Result<StepStats<T>, Error> {
        let eps = self.settings.step_size;
        let (stats, _) = begin_step(
            target,
            rng,
            eps,
            &self.state[0],
            &mut self.normals,
            &mut self.gradient,
        )?;
        let dynamics = SghmcDynamics {
            d: D,
            friction: self.settings.friction,
            noise_estimate: self.settings.noise_estimate,
            mass: self.settings.mass,
        };
        recipe_update(
            &dynamics,
            self.state.as_flattened(),
            &self.gradient,
            eps,
            &self.normals,
            self.work.as_flattened_mut(),
            self.proposal.as_flattened_mut(),
        )?;
        if !all_finite(self.proposal.as_flattened()) {
            return Err(Error::NonFiniteProposal);
        }
        self.state = self.proposal;
        Ok(stats)
    }
}
