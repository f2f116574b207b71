//! Stochastic gradient Langevin dynamics (Welling & Teh 2011), as the recipe's
//! eq. (19) with D = I, Q = 0, Γ = 0 (Ma, Chen & Fox 2015, §3.1):
//!
//! ```text
//! θ ← θ − ε ∇Ũ_Ω(θ) + N(0, ε(2 − εB̂) I)
//! ```
//!
//! B̂ ≥ 0 is an optional scalar estimate of the gradient-noise variance
//! (recipe eq. 9; B̂ > 0 is the idea behind stochastic gradient Fisher scoring);
//! the default B̂ = 0 is plain SGLD.
//!
//! **Convention.** Recipe ε: Welling & Teh's θ ← θ − (η/2)∇Ũ + N(0, η) is ε = η/2.
//!
//! **Random numbers per step:** the batch (drawn by the target), then D standard
//! normals. **Exactness:** biased for fixed ε (O(ε) in the stationary moments);
//! asymptotically unbiased only with ε → 0.

use rand_core::Rng;

use super::engine::{RecipeDynamics, recipe_update, recipe_work_len};
use super::{begin_step, check_initial};
use crate::error::{Error, require_positive};
use crate::kernels::all_finite;
use crate::real::Real;
use crate::stats::StepStats;
use crate::target::MinibatchPotential;

/// Settings of [`Sgld`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SgldSettings<T> {
    /// ε > 0 (recipe convention).
    pub step_size: T,
    /// B̂ ≥ 0 with 2 − εB̂ ≥ 0 (0: plain SGLD).
    pub noise_estimate: T,
}

crate::in_place::zero_valid!(impl[T: Real] SgldSettings<T> { step_size, noise_estimate });

impl<T: Real> SgldSettings<T> {
    /// Plain SGLD with step size ε (B̂ = 0).
    pub fn new(step_size: T) -> Self {
        SgldSettings {
            step_size,
            noise_estimate: T::ZERO,
        }
    }

    /// Checks every setting.
    pub fn validate(&self) -> Result<(), Error> {
        require_positive(self.step_size, "step_size")?;
        super::check_noise_estimate(self.step_size, T::ONE, self.noise_estimate)
    }
}

struct SgldDynamics<T> {
    n: usize,
    noise_estimate: T,
}

impl<T: Real> RecipeDynamics<T> for SgldDynamics<T> {
    fn state_len(&self) -> usize {
        self.n
    }
    fn noise_len(&self) -> usize {
        self.n
    }
    fn hamiltonian_gradient(&self, _z: &[T], g: &[T], out: &mut [T]) {
        out.copy_from_slice(g);
    }
    fn apply_diffusion(&self, _z: &[T], v: &[T], out: &mut [T]) {
        out.copy_from_slice(v);
    }
    fn apply_curl(&self, _z: &[T], _v: &[T], out: &mut [T]) {
        out.fill(T::ZERO);
    }
    fn correction(&self, _z: &[T], out: &mut [T]) {
        out.fill(T::ZERO);
    }
    fn apply_noise_factor(&self, _z: &[T], eps: T, w: &[T], out: &mut [T]) {
        let s = (T::TWO - eps * self.noise_estimate).sqrt();
        for (o, &wi) in out.iter_mut().zip(w) {
            *o = s * wi;
        }
    }
}

/// SGLD in dimension `D` (8·6·D bytes in f64; built in place by
/// [`init_in_place`](Self::init_in_place), `new_boxed`
/// and [`reset`](Self::reset); a run-time dimension n ≤ D by
/// `set_dimension`).
#[derive(Debug, Clone)]
pub struct Sgld<T, const D: usize> {
    settings: SgldSettings<T>,
    position: [T; D],
    proposal: [T; D],
    gradient: [T; D],
    normals: [T; D],
    work: [[T; D]; 2],
    /// The coordinates that move (0: D).
    dimension: usize,
    /// A step was taken.
    started: bool,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize] Sgld<T, D> {
    settings, position, proposal, gradient, normals, work, dimension, started
});

impl<T: Real, const D: usize> Sgld<T, D> {
    /// Validates `settings` and starts at `initial_position` (finite, D ≥ 1).
    pub fn new(settings: SgldSettings<T>, initial_position: [T; D]) -> Result<Self, Error> {
        settings.validate()?;
        check_initial(&initial_position)?;
        Ok(Sgld {
            settings,
            position: initial_position,
            proposal: [T::ZERO; D],
            gradient: [T::ZERO; D],
            normals: [T::ZERO; D],
            work: [[T::ZERO; D]; 2],
            dimension: D,
            started: false,
        })
    }

    /// The state of [`Sgld::new`] on an all-zero sampler.
    fn initialize_zeroed(
        &mut self,
        settings: SgldSettings<T>,
        initial_position: &[T; D],
    ) -> Result<(), Error> {
        settings.validate()?;
        check_initial(initial_position)?;
        self.settings = settings;
        self.position.copy_from_slice(initial_position);
        self.dimension = D;
        Ok(())
    }

    /// The current θ.
    pub fn position(&self) -> &[T; D] {
        &self.position
    }

    /// The settings in force.
    pub fn settings(&self) -> &SgldSettings<T> {
        &self.settings
    }

    /// Changes ε (e.g. for a decaying schedule); B̂ must stay admissible.
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
            &self.position,
            &mut self.normals,
            &mut self.gradient,
            n,
        )?;
        let dynamics = SgldDynamics {
            n,
            noise_estimate: self.settings.noise_estimate,
        };
        recipe_update(
            &dynamics,
            &self.position[..n],
            &self.gradient[..n],
            eps,
            &self.normals[..n],
            &mut self.work.as_flattened_mut()[..recipe_work_len(n)],
            &mut self.proposal[..n],
        )?;
        if !all_finite(&self.proposal[..n]) {
            return Err(Error::NonFiniteProposal);
        }
        self.position[..n].copy_from_slice(&self.proposal[..n]);
        self.started = true;
        Ok(stats)
    }
}

recipe_in_place!(Sgld, SgldSettings);
recipe_sampler_traits!(Sgld, SgldSettings, dimension);
