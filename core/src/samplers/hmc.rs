//! Hamiltonian Monte Carlo with an identity or diagonal mass matrix (Neal 2011),
//! the baseline every quasi-Newton sampler is measured against.

use rand_core::Rng;

use super::sampler::{Sampler, Step};

use super::metropolis::metropolis;
use crate::error::{Error, require_positive};
use crate::kernels::all_finite;
use crate::random::fill_standard_normal;
use crate::real::Real;
use crate::stats::StepStats;
use crate::target::Potential;

/// The inverse mass matrix M⁻¹ of HMC.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InverseMass<T, const D: usize> {
    /// M = I.
    Identity,
    /// M⁻¹ = diag(values); every value finite and > 0 (the posterior variances
    /// are the ideal choice).
    Diagonal([T; D]),
}

/// Settings of [`Hmc`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HmcSettings<T, const D: usize> {
    /// Leapfrog step size ε > 0.
    pub step_size: T,
    /// Leapfrog steps per proposal, L ≥ 1.
    pub leapfrog_steps: u32,
    /// Inverse mass matrix.
    pub inverse_mass: InverseMass<T, D>,
}

impl<T: Real, const D: usize> HmcSettings<T, D> {
    /// Step size ε and L leapfrog steps with M = I.
    pub fn new(step_size: T, leapfrog_steps: u32) -> Self {
        HmcSettings {
            step_size,
            leapfrog_steps,
            inverse_mass: InverseMass::Identity,
        }
    }

    /// Checks every setting.
    pub fn validate(&self) -> Result<(), Error> {
        require_positive(self.step_size, "step_size")?;
        if self.leapfrog_steps == 0 {
            return Err(Error::invalid("leapfrog_steps", ">= 1"));
        }
        if let InverseMass::Diagonal(values) = &self.inverse_mass {
            for v in values {
                require_positive(*v, "inverse_mass")?;
            }
        }
        Ok(())
    }
}

/// Hamiltonian Monte Carlo: leapfrog with kinetic energy ½ pᵀM⁻¹p and one
/// Metropolis test per draw. An exact (π-invariant) sampler.
///
/// Random numbers per draw: D standard normals (momentum), then one uniform.
#[derive(Debug, Clone)]
pub struct Hmc<T, const D: usize> {
    settings: HmcSettings<T, D>,
    inverse_mass: [T; D],
    momentum_scale: [T; D],
    position: [T; D],
    potential: T,
    gradient: [T; D],
    proposal: [T; D],
    proposal_gradient: [T; D],
    momentum: [T; D],
}

impl<T: Real, const D: usize> Hmc<T, D> {
    /// Validates `settings` and evaluates the target at `initial_position`.
    pub fn new<P: Potential<T, D>>(
        settings: HmcSettings<T, D>,
        initial_position: [T; D],
        target: &P,
    ) -> Result<Self, Error> {
        settings.validate()?;
        let mut hmc = Hmc {
            settings,
            inverse_mass: [T::ONE; D],
            momentum_scale: [T::ONE; D],
            position: initial_position,
            potential: T::ZERO,
            gradient: [T::ZERO; D],
            proposal: [T::ZERO; D],
            proposal_gradient: [T::ZERO; D],
            momentum: [T::ZERO; D],
        };
        hmc.apply_inverse_mass();
        if !all_finite(&initial_position) {
            return Err(Error::NonFiniteInitialState);
        }
        hmc.potential = target.potential_and_gradient(&hmc.position, &mut hmc.gradient);
        if !hmc.potential.is_finite() || !all_finite(&hmc.gradient) {
            return Err(Error::NonFiniteInitialState);
        }
        Ok(hmc)
    }

    fn apply_inverse_mass(&mut self) {
        if let InverseMass::Diagonal(values) = &self.settings.inverse_mass {
            for i in 0..D {
                self.inverse_mass[i] = values[i];
                self.momentum_scale[i] = T::ONE / values[i].sqrt();
            }
        } else {
            self.inverse_mass = [T::ONE; D];
            self.momentum_scale = [T::ONE; D];
        }
    }

    /// Replaces the settings (e.g. a step size from adaptation); on error the
    /// old settings stay.
    pub fn set_settings(&mut self, settings: HmcSettings<T, D>) -> Result<(), Error> {
        settings.validate()?;
        self.settings = settings;
        self.apply_inverse_mass();
        Ok(())
    }

    /// Sets a new step size (e.g. from adaptation); on error nothing changes.
    pub fn set_step_size(&mut self, step_size: T) -> Result<(), Error> {
        require_positive(step_size, "step_size")?;
        self.settings.step_size = step_size;
        Ok(())
    }

    /// The settings in force.
    pub fn settings(&self) -> &HmcSettings<T, D> {
        &self.settings
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

    fn kinetic(&self) -> T {
        let mut k = T::ZERO;
        for i in 0..D {
            k += self.momentum[i] * self.inverse_mass[i] * self.momentum[i];
        }
        T::HALF * k
    }

    /// One draw: momentum, L leapfrog steps, Metropolis test. A non-finite
    /// potential, gradient or position (an overflowing drift, which is not
    /// evaluated) ends the trajectory as a rejected divergence.
    pub fn step<P: Potential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> StepStats<T> {
        let eps = self.settings.step_size;
        let half = T::HALF * eps;
        let mut stats = StepStats::new(eps);

        fill_standard_normal(rng, &mut self.momentum);
        for i in 0..D {
            self.momentum[i] *= self.momentum_scale[i];
        }
        let h0 = self.potential + self.kinetic();

        self.proposal = self.position;
        self.proposal_gradient = self.gradient;
        for i in 0..D {
            self.momentum[i] -= half * self.proposal_gradient[i];
        }
        let mut proposal_potential = self.potential;
        let mut finite = true;
        for l in 1..=self.settings.leapfrog_steps {
            for i in 0..D {
                self.proposal[i] += eps * self.inverse_mass[i] * self.momentum[i];
            }
            if !all_finite(&self.proposal) {
                finite = false;
                break;
            }
            proposal_potential =
                target.potential_and_gradient(&self.proposal, &mut self.proposal_gradient);
            stats.gradient_evaluations += 1;
            if !proposal_potential.is_finite() || !all_finite(&self.proposal_gradient) {
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
            proposal_potential + self.kinetic()
        } else {
            T::INFINITY
        };
        let decision = metropolis(h0, h1, rng);
        stats.accepted = decision.accepted;
        stats.acceptance_probability = decision.probability;
        stats.energy_error = decision.energy_error;
        stats.divergent = decision.divergent;
        if decision.accepted {
            core::mem::swap(&mut self.position, &mut self.proposal);
            core::mem::swap(&mut self.gradient, &mut self.proposal_gradient);
            self.potential = proposal_potential;
        }
        stats
    }
}

impl<T: Real, const D: usize> Sampler<T, D> for Hmc<T, D> {
    type Settings = HmcSettings<T, D>;
    fn settings(&self) -> &HmcSettings<T, D> {
        Hmc::settings(self)
    }
    fn set_step_size(&mut self, step_size: T) -> Result<(), Error> {
        Hmc::set_step_size(self, step_size)
    }
    fn position(&self) -> &[T; D] {
        Hmc::position(self)
    }
    fn potential(&self) -> Option<T> {
        Some(Hmc::potential(self))
    }
}

impl<T: Real, const D: usize, P: Potential<T, D>> Step<T, D, P> for Hmc<T, D> {
    type Stats = StepStats<T>;
    fn step<R: Rng + ?Sized>(&mut self, target: &P, rng: &mut R) -> Result<StepStats<T>, Error> {
        Ok(Hmc::step(self, target, rng))
    }
}
