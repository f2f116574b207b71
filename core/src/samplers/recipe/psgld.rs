//! Preconditioned SGLD (Li, Chen, Carlson & Carin 2016, Algorithm 1) with the
//! RMSprop preconditioner, in the recipe's form (Ma, Chen & Fox 2015, eq. 9 with
//! z = θ, D = G, Q = 0):
//!
//! ```text
//! g = ∇Ũ_Ω(θ_t)
//! V ← α V + (1 − α) (s·g) ⊙ (s·g)          (s = gradient_scale; V₀ = 0)
//! G = diag(1 ⊘ (λ + √V))
//! θ ← θ − ε G g + N(0, 2ε G)                 (Γ dropped)
//! ```
//!
//! **Biased, and not only by O(ε).** [`Psgld::step`] drops Li et al.'s
//! Γᵢ = Σⱼ ∂G_ij/∂θⱼ, as their own implementation does (they argue it is small
//! when α is close to 1); G also depends on the whole gradient history, so the
//! adaptive chain is not a time-homogeneous Markov chain in θ.
//! [`Psgld::step_corrected`] adds Γ for a target that also gives the diagonal
//! of the Hessian of Ũ_Ω ([`MinibatchHessianDiagonal`]): with V_prev held fixed
//! and Gᵢᵢ(θ) = 1/(λ + √(αV_prev,ᵢ + (1 − α)s²(∂ᵢŨ(θ))²)),
//!
//! ```text
//! Γᵢ = ∂Gᵢᵢ/∂θᵢ = −Gᵢᵢ² (1 − α) s² ∂ᵢŨ ∂ᵢᵢŨ / √Vᵢ      (0 where Vᵢ = 0),
//! θ ← θ − ε G g + ε Γ + N(0, 2ε G)
//! ```
//!
//! (the Hessian is the minibatch one, a further approximation; the history
//! dependence remains). With [`Psgld::freeze_preconditioner`] (or
//! [`Psgld::set_preconditioner`]) G is constant, Γ = 0 is exact, and the sampler
//! is SGLD with a constant diagonal preconditioner: biased by O(ε) only. With
//! G = I frozen it is [`super::Sgld`] exactly (same chain from the same seed).
//!
//! **Convention.** Recipe ε: Li et al.'s θ ← θ − (η/2)G g + N(0, ηG) is ε = η/2.
//! They accumulate V from the per-datum average gradient: set `gradient_scale`
//! to 1/N (N the data size) to match, since ∇Ũ here is N/|Ω|-scaled.
//!
//! **Random numbers per step:** the batch, then D standard normals.

use rand_core::Rng;

use super::engine::{recipe_update, recipe_work_len};
use super::sgrld::DiagonalLangevin;
use super::{begin_step, check_initial};
use crate::error::{Error, require_positive};
use crate::kernels::all_finite;
use crate::real::Real;
use crate::stats::StepStats;
use crate::target::MinibatchPotential;

/// A [`MinibatchPotential`] that also gives the diagonal of the Hessian of
/// Ũ_Ω, for [`Psgld::step_corrected`].
pub trait MinibatchHessianDiagonal<T: Real, const D: usize>: MinibatchPotential<T, D> {
    /// Writes ∂²Ũ_Ω/∂θᵢ² at `position` into `out`, on the batch `batch`.
    fn minibatch_hessian_diagonal(&self, batch: &Self::Batch, position: &[T; D], out: &mut [T; D]);
}

/// Settings of [`Psgld`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PsgldSettings<T> {
    /// ε > 0 (recipe convention; Li et al.'s step is 2ε).
    pub step_size: T,
    /// RMSprop decay α ∈ [0, 1) (Li et al. use 0.99).
    pub decay: T,
    /// λ > 0 added to √V (Li et al. use 1e-5), with 1/λ finite: G = 1/λ
    /// wherever V = 0, as before the first step.
    pub regularizer: T,
    /// s > 0 multiplying ∇Ũ before it enters V (1/N reproduces Li et al.).
    pub gradient_scale: T,
}

crate::in_place::zero_valid!(impl[T: Real] PsgldSettings<T> {
    step_size, decay, regularizer, gradient_scale
});

impl<T: Real> PsgldSettings<T> {
    /// ε, α and λ, with `gradient_scale` = 1.
    pub fn new(step_size: T, decay: T, regularizer: T) -> Self {
        PsgldSettings {
            step_size,
            decay,
            regularizer,
            gradient_scale: T::ONE,
        }
    }

    /// Checks every setting.
    pub fn validate(&self) -> Result<(), Error> {
        require_positive(self.step_size, "step_size")?;
        if !(self.decay.is_finite() && self.decay >= T::ZERO && self.decay < T::ONE) {
            return Err(Error::invalid("decay", "in [0, 1)"));
        }
        require_positive(self.regularizer, "regularizer")?;
        if !(T::ONE / self.regularizer).is_finite() {
            return Err(Error::invalid(
                "regularizer",
                "finite and > 0, with 1 / regularizer finite",
            ));
        }
        require_positive(self.gradient_scale, "gradient_scale")
    }
}

/// pSGLD in dimension `D` (8·12·D bytes in f64; built in place by
/// [`init_in_place`](Self::init_in_place), `new_boxed`
/// and [`reset`](Self::reset); a run-time dimension n ≤ D by
/// `set_dimension`).
#[derive(Debug, Clone)]
pub struct Psgld<T, const D: usize> {
    settings: PsgldSettings<T>,
    position: [T; D],
    proposal: [T; D],
    gradient: [T; D],
    square_average: [T; D],
    new_square_average: [T; D],
    preconditioner: [T; D],
    new_preconditioner: [T; D],
    frozen: bool,
    correction: [T; D],
    normals: [T; D],
    work: [[T; D]; 2],
    /// The coordinates that move (0: D).
    dimension: usize,
    /// A step was taken.
    started: bool,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize] Psgld<T, D> {
    settings, position, proposal, gradient, square_average, new_square_average,
    preconditioner, new_preconditioner, frozen, correction, normals, work, dimension, started
});

impl<T: Real, const D: usize> Psgld<T, D> {
    /// Validates `settings` and starts at `initial_position` (finite, D ≥ 1)
    /// with V = 0, adapting.
    pub fn new(settings: PsgldSettings<T>, initial_position: [T; D]) -> Result<Self, Error> {
        settings.validate()?;
        check_initial(&initial_position)?;
        let g0 = T::ONE / settings.regularizer;
        Ok(Psgld {
            settings,
            position: initial_position,
            proposal: [T::ZERO; D],
            gradient: [T::ZERO; D],
            square_average: [T::ZERO; D],
            new_square_average: [T::ZERO; D],
            preconditioner: [g0; D],
            new_preconditioner: [g0; D],
            frozen: false,
            correction: [T::ZERO; D],
            normals: [T::ZERO; D],
            work: [[T::ZERO; D]; 2],
            dimension: D,
            started: false,
        })
    }

    /// The state of [`Psgld::new`] on an all-zero sampler.
    fn initialize_zeroed(
        &mut self,
        settings: PsgldSettings<T>,
        initial_position: &[T; D],
    ) -> Result<(), Error> {
        settings.validate()?;
        check_initial(initial_position)?;
        let g0 = T::ONE / settings.regularizer;
        self.settings = settings;
        self.position.copy_from_slice(initial_position);
        self.preconditioner.fill(g0);
        self.new_preconditioner.fill(g0);
        self.dimension = D;
        Ok(())
    }

    /// The current θ.
    pub fn position(&self) -> &[T; D] {
        &self.position
    }

    /// The settings in force.
    pub fn settings(&self) -> &PsgldSettings<T> {
        &self.settings
    }

    /// The diagonal of G used by the last step (or set/frozen).
    pub fn preconditioner(&self) -> &[T; D] {
        &self.preconditioner
    }

    /// The RMSprop average V.
    pub fn square_average(&self) -> &[T; D] {
        &self.square_average
    }

    /// Whether G is frozen.
    pub fn is_frozen(&self) -> bool {
        self.frozen
    }

    /// Changes ε.
    pub fn set_step_size(&mut self, step_size: T) -> Result<(), Error> {
        require_positive(step_size, "step_size")?;
        self.settings.step_size = step_size;
        Ok(())
    }

    /// Stops adapting: every later step uses the G of the last step.
    pub fn freeze_preconditioner(&mut self) {
        self.frozen = true;
    }

    /// Resumes adapting V and G.
    pub fn unfreeze_preconditioner(&mut self) {
        self.frozen = false;
    }

    /// Sets G = diag(`diagonal`) (finite, > 0) and freezes it.
    /// Only the first [`dimension`](Self::dimension) entries are read.
    pub fn set_preconditioner(&mut self, diagonal: [T; D]) -> Result<(), Error> {
        let n = self.dimension();
        if !all_finite(&diagonal[..n]) || diagonal[..n].iter().any(|&g| g <= T::ZERO) {
            return Err(Error::invalid("preconditioner", "finite and > 0"));
        }
        self.preconditioner[..n].copy_from_slice(&diagonal[..n]);
        self.frozen = true;
        Ok(())
    }

    /// One step without Γ (Li et al.'s practice). On a non-finite gradient or
    /// proposal it returns the error and leaves the sampler (θ, V, G) exactly as
    /// before the call; a gradient so large that (s·g)² overflows V is
    /// [`Error::NonFiniteGradient`] too.
    pub fn step<P: MinibatchPotential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> Result<StepStats<T>, Error> {
        self.advance(target, rng, |_, _, _| false)
    }

    /// One step with Li et al.'s Γ (see the module docs); Γ = 0 while G is
    /// frozen. Same random numbers and error behaviour as [`Psgld::step`]; a
    /// non-finite Hessian diagonal is [`Error::NonFiniteGradient`].
    pub fn step_corrected<P: MinibatchHessianDiagonal<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> Result<StepStats<T>, Error> {
        self.advance(target, rng, |batch, position, out| {
            target.minibatch_hessian_diagonal(batch, position, out);
            true
        })
    }

    /// The step; `hessian` writes the Hessian diagonal and returns `true`, or
    /// returns `false` for no correction.
    fn advance<P, R, H>(
        &mut self,
        target: &P,
        rng: &mut R,
        hessian: H,
    ) -> Result<StepStats<T>, Error>
    where
        P: MinibatchPotential<T, D>,
        R: Rng + ?Sized,
        H: FnOnce(&P::Batch, &[T; D], &mut [T; D]) -> bool,
    {
        let eps = self.settings.step_size;
        let n = self.dimension();
        let (stats, batch) = begin_step(
            target,
            rng,
            eps,
            &self.position,
            &mut self.normals,
            &mut self.gradient,
            n,
        )?;
        let corrected = !self.frozen && hessian(&batch, &self.position, &mut self.correction);
        if corrected && !all_finite(&self.correction[..n]) {
            return Err(Error::NonFiniteGradient);
        }
        if self.frozen {
            self.new_square_average[..n].copy_from_slice(&self.square_average[..n]);
            self.new_preconditioner[..n].copy_from_slice(&self.preconditioner[..n]);
        } else {
            let a = self.settings.decay;
            let s = self.settings.gradient_scale;
            for i in 0..n {
                let sg = s * self.gradient[i];
                let v = a * self.square_average[i] + (T::ONE - a) * (sg * sg);
                let g = T::ONE / (self.settings.regularizer + v.sqrt());
                self.new_square_average[i] = v;
                self.new_preconditioner[i] = g;
                if corrected {
                    // Γᵢ = −Gᵢᵢ²(1 − α)s²·gᵢ·Hᵢᵢ/√Vᵢ; `correction` holds Hᵢᵢ on entry.
                    self.correction[i] = if v > T::ZERO {
                        -(g * g * (T::ONE - a) * (s * s) * self.gradient[i] * self.correction[i])
                            / v.sqrt()
                    } else {
                        T::ZERO
                    };
                }
            }
            // A finite gradient whose square overflows V would make V = ∞ and
            // G = 0 for good (α > 0 keeps V infinite): refuse the step instead.
            if !all_finite(&self.new_square_average[..n])
                || !all_finite(&self.new_preconditioner[..n])
                || (corrected && !all_finite(&self.correction[..n]))
            {
                return Err(Error::NonFiniteGradient);
            }
        }
        let dynamics = DiagonalLangevin {
            diffusion: &self.new_preconditioner[..n],
            gamma: if corrected {
                Some(&self.correction[..n])
            } else {
                None
            },
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
        self.square_average[..n].copy_from_slice(&self.new_square_average[..n]);
        self.preconditioner[..n].copy_from_slice(&self.new_preconditioner[..n]);
        self.started = true;
        Ok(stats)
    }
}

recipe_in_place!(Psgld, PsgldSettings);
recipe_sampler_traits!(Psgld, PsgldSettings, dimension);
