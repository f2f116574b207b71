//! Stochastic gradient Riemannian Langevin dynamics (Patterson & Teh 2013) in the
//! recipe's form, eq. (20) of Ma, Chen & Fox 2015: z = θ, D(θ) = G(θ)⁻¹, Q = 0,
//! Γᵢ(θ) = Σⱼ ∂ⱼ(G⁻¹)ᵢⱼ(θ), with a user-supplied diagonal metric
//! ([`super::DiagonalRiemannianMetric`]):
//!
//! ```text
//! θᵢ ← θᵢ − ε (G⁻¹)ᵢᵢ ∂ᵢŨ_Ω(θ) + ε ∂ᵢ(G⁻¹)ᵢᵢ + N(0, 2ε (G⁻¹)ᵢᵢ)
//! ```
//!
//! (Γ enters with a plus sign: see [`super::engine`].) With
//! [`Correction::Omitted`] Γ is dropped (a naive, wrong sampler whenever G
//! depends on θ).
//!
//! **The sampler owns its metric** G(θ) (the type parameter `G`, given to
//! [`Sgrld::new`]): [`Sgrld::step`] then takes the target and the generator
//! only, the signature of every sampler's [`Step`](crate::Step), so SGRLD
//! runs in generic code (a chain loop, the warm-up) like the others. To keep
//! ownership of a metric, pass a reference (`&G` is a
//! [`DiagonalRiemannianMetric`](super::DiagonalRiemannianMetric) too); to change it between
//! steps (an adapting metric), use [`Sgrld::metric_mut`].
//!
//! ```
//! use qnmc::samplers::recipe::{DiagonalRiemannianMetric, Sgrld, SgrldSettings};
//! use qnmc::{FullBatch, Potential, Step};
//! use rand_core::SeedableRng;
//! use rand_xorshift::XorShiftRng;
//!
//! struct Gaussian;
//! impl Potential<f64, 2> for Gaussian {
//!     fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
//!         *g = *x;
//!         0.5 * (x[0] * x[0] + x[1] * x[1])
//!     }
//! }
//!
//! /// A constant metric G⁻¹ = scale·I.
//! struct Scaled {
//!     scale: f64,
//! }
//! impl DiagonalRiemannianMetric<f64, 2> for Scaled {
//!     fn inverse_metric(&self, _x: &[f64; 2], inverse: &mut [f64; 2], derivative: &mut [f64; 2]) {
//!         *inverse = [self.scale; 2];
//!         *derivative = [0.0; 2];
//!     }
//! }
//!
//! /// Any sampler, through the common `Step` signature.
//! fn run<S: Step<f64, 2, FullBatch<Gaussian>>>(sampler: &mut S, steps: u32) {
//!     let mut rng = XorShiftRng::seed_from_u64(1);
//!     for _ in 0..steps {
//!         sampler.step(&FullBatch(Gaussian), &mut rng).unwrap();
//!     }
//! }
//!
//! // The sampler owns its metric ...
//! let mut sgrld = Sgrld::new(SgrldSettings::new(0.05), [2.0, -2.0], Scaled { scale: 1.0 }).unwrap();
//! run(&mut sgrld, 1000);
//! sgrld.metric_mut().scale = 0.5; // ... which may change between steps,
//! run(&mut sgrld, 1000);
//! // ... or borrows one the caller keeps.
//! let metric = Scaled { scale: 2.0 };
//! let mut borrowed = Sgrld::new(SgrldSettings::new(0.05), [2.0, -2.0], &metric).unwrap();
//! run(&mut borrowed, 1000);
//! assert!(sgrld.position().iter().chain(borrowed.position()).all(|x| x.abs() < 10.0));
//! ```
//!
//! **Convention.** Recipe ε (drift −εG⁻¹∇U, noise 2εG⁻¹).
//! **Random numbers per step:** the batch, then n standard normals (n the
//! dimension, D unless `set_dimension` said otherwise).
//! **Exactness:** biased O(ε) with Γ; wrong with Γ omitted.

use rand_core::Rng;

use super::engine::{RecipeDynamics, recipe_update, recipe_work_len};
use super::{Correction, DiagonalRiemannianMetric, begin_step, check_initial, evaluate_metric};
use crate::error::{Error, require_positive};
use crate::in_place::ZeroValid;
use crate::kernels::all_finite;
use crate::real::Real;
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

crate::in_place::zero_valid!(impl[T: Real] SgrldSettings<T> { step_size, correction });

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

/// SGRLD with a diagonal metric `G` in dimension `D` (8·8·D bytes in f64
/// and the metric; built in place by [`init_in_place`](Self::init_in_place),
/// `new_boxed` and [`reset`](Self::reset), which take the metric too and
/// need it [`ZeroValid`](crate::in_place::ZeroValid); a run-time dimension
/// n ≤ D by `set_dimension`, with which the metric sees positions that are
/// zero from n on and what it writes there is ignored, see
/// [`DiagonalRiemannianMetric`]).
#[derive(Debug, Clone)]
pub struct Sgrld<T, const D: usize, G> {
    settings: SgrldSettings<T>,
    metric: G,
    position: [T; D],
    proposal: [T; D],
    gradient: [T; D],
    inverse: [T; D],
    derivative: [T; D],
    normals: [T; D],
    work: [[T; D]; 2],
    /// The coordinates that move (0: D).
    dimension: usize,
    /// A step was taken.
    started: bool,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize, G: ZeroValid] Sgrld<T, D, G> {
    settings, metric, position, proposal, gradient, inverse, derivative, normals, work,
    dimension, started
});

impl<T: Real, const D: usize, G: DiagonalRiemannianMetric<T, D>> Sgrld<T, D, G> {
    /// Validates `settings` and starts at `initial_position` (finite, D ≥ 1),
    /// with `metric` as G(θ) (pass `&metric` to keep it).
    pub fn new(
        settings: SgrldSettings<T>,
        initial_position: [T; D],
        metric: G,
    ) -> Result<Self, Error> {
        settings.validate()?;
        check_initial(&initial_position)?;
        Ok(Sgrld {
            settings,
            metric,
            position: initial_position,
            proposal: [T::ZERO; D],
            gradient: [T::ZERO; D],
            inverse: [T::ZERO; D],
            derivative: [T::ZERO; D],
            normals: [T::ZERO; D],
            work: [[T::ZERO; D]; 2],
            dimension: D,
            started: false,
        })
    }

    /// One step with the metric evaluated at the current θ. A non-finite
    /// gradient or metric (or G⁻¹ ≤ 0) returns [`Error::NonFiniteGradient`], a
    /// non-finite proposal [`Error::NonFiniteProposal`]; the sampler is then
    /// exactly as before the call.
    pub fn step<P, R>(&mut self, target: &P, rng: &mut R) -> Result<StepStats<T>, Error>
    where
        P: MinibatchPotential<T, D>,
        R: Rng + ?Sized,
    {
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
        evaluate_metric(
            &self.metric,
            n,
            &self.position,
            &mut self.inverse,
            &mut self.derivative,
        )?;
        let dynamics = DiagonalLangevin {
            diffusion: &self.inverse[..n],
            gamma: match self.settings.correction {
                Correction::Included => Some(&self.derivative[..n]),
                Correction::Omitted => None,
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
        self.started = true;
        Ok(stats)
    }
}

impl<T: Real, const D: usize, G: DiagonalRiemannianMetric<T, D> + ZeroValid> Sgrld<T, D, G> {
    /// The state of [`Sgrld::new`] on an all-zero sampler, with `metric`
    /// (the all-zero metric it replaces needs no drop: it is `ZeroValid`).
    fn initialize_zeroed(
        &mut self,
        settings: SgrldSettings<T>,
        initial_position: &[T; D],
        metric: G,
    ) -> Result<(), Error> {
        settings.validate()?;
        check_initial(initial_position)?;
        self.settings = settings;
        self.metric = metric;
        self.position.copy_from_slice(initial_position);
        self.dimension = D;
        Ok(())
    }
}

recipe_in_place!(Sgrld<G>, SgrldSettings, metric);

impl<T: Real, const D: usize, G> Sgrld<T, D, G> {
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

    /// The metric G(θ).
    pub fn metric(&self) -> &G {
        &self.metric
    }

    /// The metric, to change between steps (e.g. an adapting metric); the
    /// next [`step`](Self::step) evaluates it at the current θ.
    pub fn metric_mut(&mut self) -> &mut G {
        &mut self.metric
    }
}

recipe_sampler_traits!(Sgrld<G: DiagonalRiemannianMetric>, SgrldSettings, dimension);
