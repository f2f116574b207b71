//! Stochastic gradient Riemannian Langevin dynamics (Patterson & Teh 2013) in the
//! recipe's form, eq. (20) of Ma, Chen & Fox 2015: z = θ, D(θ) = G(θ)⁻¹, Q = 0,
//! Γᵢ(θ) = Σⱼ ∂ⱼ(G⁻¹)ᵢⱼ(θ), with a user-supplied diagonal metric
//! ([`super::DiagonalMetric`]):
//!
//! ```text
//! θᵢ ← θᵢ − ε (G⁻¹)ᵢᵢ ∂ᵢŨ_Ω(θ) + ε ∂ᵢ(G⁻¹)ᵢᵢ + N(0, 2ε (G⁻¹)ᵢᵢ)
//! ```
//!
//! (Γ enters with a plus sign: see [`super::engine`].) With
//! [`Correction::Omitted`] Γ is dropped (a naive, wrong sampler whenever G
//! depends on θ).
//!
//! **Convention.** Recipe ε (drift −εG⁻¹∇U, noise 2εG⁻¹).
//! **Random numbers per step:** the batch, then D standard normals.
//! **Exactness:** biased O(ε) with Γ; wrong with Γ omitted.

use rand_core::Rng;

use super::engine::{RecipeDynamics, recipe_update};
use super::{Correction, DiagonalMetric, begin_step, check_initial, evaluate_metric};
use crate::Real;
use crate::error::{Error, require_positive};
use crate::linalg::all_finite;
use crate::stats::StepStats;
use crate::target::MinibatchPotential;

/// Langevin dynamics with a diagonal diffusion d and an explicit Γ (shared by
/// SGRLD and pSGLD): D = diag(d), Q = 0, B̂ = 0.
pub(super) struct DiagonalLangevin<'a, T> {
    pub(super) diffusion: &'a [T],
    pub(super) gamma: Option<&'a [T]>,
}

impl<T: Real> RecipeDynamics<T> for DiagonalLangevin<'_, T> {
    fn state_len(&self) -> usize {
        self.diffusion.len()
    }
    fn noise_len(&self) -> usize {
        self.diffusion.len()
    }
    fn hamiltonian_gradient(&self, _z: &[T], g: &[T], out: &mut [T]) {
        out.copy_from_slice(g);
    }
    fn apply_diffusion(&self, _z: &[T], v: &[T], out: &mut [T]) {
        for ((o, &vi), &d) in out.iter_mut().zip(v).zip(self.diffusion) {
            *o = d * vi;
        }
    }
    fn apply_curl(&self, _z: &[T], _v: &[T], out: &mut [T]) {
        out.fill(T::ZERO);
    }
    fn correction(&self, _z: &[T], out: &mut [T]) {
        match self.gamma {
            Some(g) => out.copy_from_slice(g),
            None => out.fill(T::ZERO),
        }
    }
    fn apply_noise_factor(&self, _z: &[T], _eps: T, w: &[T], out: &mut [T]) {
        for ((o, &wi), &d) in out.iter_mut().zip(w).zip(self.diffusion) {
            *o = (T::TWO * d).sqrt() * wi;
        }
    }
}

/// Settings of [`Sgrld`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SgrldSettings<T> {
    /// ε > 0 (recipe convention).
    pub step_size: T,
    /// Whether Γ is added (default: yes).
    pub correction: Correction,
}

impl<T: Real> SgrldSettings<T> {
    /// SGRLD with Γ.
    pub fn new(step_size: T) -> Self {
        SgrldSettings {
            step_size,
            correction: Correction::Included,
        }
    }

    /// Checks every setting.
    pub fn validate(&self) -> Result<(), Error> {
        require_positive(self.step_size, "step_size")
    }
}

/// SGRLD with a diagonal metric in dimension `D`.
#[derive(Debug, Clone)]
pub struct Sgrld<T, const D: usize> {
    settings: SgrldSettings<T>,
    position: [T; D],
    proposal: [T; D],
    gradient: [T; D],
    inverse: [T; D],
    derivative: [T; D],
    normals: [T; D],
    work: [[T; D]; 2],
}

impl<T: Real, const D: usize> Sgrld<T, D> {
    /// Validates `settings` and starts at `initial_position` (finite, D ≥ 1).
    pub fn new(settings: SgrldSettings<T>, initial_position: [T; D]) -> Result<Self, Error> {
        settings.validate()?;
        check_initial(&initial_position)?;
        Ok(Sgrld {
            settings,
            position: initial_position,
            proposal: [T::ZERO; D],
            gradient: [T::ZERO; D],
            inverse: [T::ZERO; D],
            derivative: [T::ZERO; D],
            normals: [T::ZERO; D],
            work: [[T::ZERO; D]; 2],
        })
    }

    /// The current θ.
    pub fn position(&self) -> &[T; D] {
        &self.position
    }

    /// The settings in force.
    pub fn settings(&self) -> &SgrldSettings<T> {
        &self.settings
    }

    /// Changes ε.
    pub fn set_step_size(&mut self, step_size: T) -> Result<(), Error> {
        require_positive(step_size, "step_size")?;
        self.settings.step_size = step_size;
        Ok(())
    }

    /// One step with metric `metric` evaluated at the current θ. A non-finite
    /// gradient or metric (or G⁻¹ ≤ 0) returns [`Error::NonFiniteGradient`], a
    /// non-finite proposal [`Error::NonFiniteProposal`]; the sampler is then
    /// exactly as before the call.
    pub fn step<P, G, R>(
        &mut self,
        target: &P,
        metric: &G,
        rng: &mut R,
    ) -> Result<StepStats<T>, Error>
    where
        P: MinibatchPotential<T, D>,
        G: DiagonalMetric<T, D> + ?Sized,
        R: Rng + ?Sized,
    {
        let eps = self.settings.step_size;
        let (stats, _) = begin_step(
            target,
            rng,
            eps,
            &self.position,
            &mut self.normals,
            &mut self.gradient,
        )?;
        evaluate_metric(
            metric,
            &self.position,
            &mut self.inverse,
            &mut self.derivative,
        )?;
        let dynamics = DiagonalLangevin {
            diffusion: &self.inverse,
            gamma: match self.settings.correction {
                Correction::Included => Some(&self.derivative),
                Correction::Omitted => None,
            },
        };
        recipe_update(
            &dynamics,
            &self.position,
            &self.gradient,
            eps,
            &self.normals,
            self.work.as_flattened_mut(),
            &mut self.proposal,
        )?;
        if !all_finite(&self.proposal) {
            return Err(Error::NonFiniteProposal);
        }
        self.position = self.proposal;
        Ok(stats)
    }
}
