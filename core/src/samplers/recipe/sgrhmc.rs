//! Stochastic gradient Riemann Hamiltonian Monte Carlo: the generalised gSGRHMC
//! of Ma, Chen & Fox 2015 (eq. 30, Algorithm 1) and, selectable, their naive
//! eq. (27). z = (θ, r), H = U(θ) + ½rᵀr, with a user-supplied diagonal metric
//! ([`super::DiagonalRiemannianMetric`]), S = G(θ)^{−½} = √(G⁻¹):
//!
//! ```text
//! D = [[0, 0], [0, G⁻¹]],   Q = [[0, −S], [S, 0]],   Γ = (0, Σⱼ ∂ⱼ Sᵢⱼ) = (0, ∂ᵢSᵢᵢ)
//! θ ← θ + ε S(θ_t) r_t
//! r ← r_t − ε S(θ_t) ∇Ũ_Ω(θ_t) − ε G⁻¹(θ_t) r_t + ε ∂S(θ_t) + N(0, ε(2G⁻¹(θ_t) − εB̂))
//! ```
//!
//! (Algorithm 1's signs; eq. 30 as printed has the correction's sign inside the
//! bracket wrong, see [`super::engine`].) [`Correction::Omitted`] drops ∂S: that
//! is the naive eq. (27), whose stationary distribution is wrong whenever G
//! depends on θ (the tests show it on the recipe's θ⁴ − 2θ² toy).
//!
//! ∂ᵢSᵢᵢ = ∂ᵢ(G⁻¹)ᵢᵢ / (2 Sᵢᵢ). If 2G⁻¹(θ)ᵢᵢ − εB̂ < 0 at the current θ the noise is
//! not defined and the step returns [`Error::NonFiniteProposal`].
//!
//! **The sampler owns its metric** G(θ) (the type parameter `G`, given to
//! [`Sgrhmc::new`]): [`Sgrhmc::step`] then takes the target and the
//! generator only, the signature of every sampler's [`Step`](crate::Step),
//! so SGRHMC runs in generic code (a chain loop, the warm-up) like the
//! others. To keep ownership of a metric, pass a reference (`&G` is a
//! [`DiagonalRiemannianMetric`](super::DiagonalRiemannianMetric) too); to change it between
//! steps (an adapting metric), use [`Sgrhmc::metric_mut`].
//!
//! **Convention.** Recipe ε. **Random numbers per step:** the batch, then n
//! standard normals (n the dimension, D unless `set_dimension` said
//! otherwise; the state z is then (θ, r) of the first n coordinates, laid
//! out as in a sampler compiled for n). **Exactness:** biased O(ε) with the correction; wrong
//! without it.

use rand_core::Rng;

use super::engine::{RecipeDynamics, recipe_update};
use super::{
    COMPACT_ROWS, Correction, DiagonalRiemannianMetric, begin_step, check_initial, evaluate_metric,
    extended_state, store_extended_state,
};
use crate::error::{Error, require_non_negative, require_positive};
use crate::in_place::ZeroValid;
use crate::kernels::all_finite;
use crate::real::Real;
use crate::stats::StepStats;
use crate::target::MinibatchPotential;

/// Settings of [`Sgrhmc`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SgrhmcSettings<T> {
    /// ε > 0 (recipe convention).
    pub step_size: T,
    /// B̂ ≥ 0 (needs 2G⁻¹(θ) − εB̂ ≥ 0 along the chain).
    pub noise_estimate: T,
    /// [`Correction::Included`]: gSGRHMC (eq. 30); `Omitted`: naive eq. (27).
    pub correction: Correction,
}

crate::in_place::zero_valid!(impl[T: Real] SgrhmcSettings<T> {
    step_size, noise_estimate, correction
});

impl<T: Real> SgrhmcSettings<T> {
    /// gSGRHMC with step size ε and B̂ = 0.
    pub fn new(step_size: T) -> Self {
        SgrhmcSettings {
            step_size,
            noise_estimate: T::ZERO,
            correction: Correction::Included,
        }
    }

    /// Checks every setting.
    pub fn validate(&self) -> Result<(), Error> {
        require_positive(self.step_size, "step_size")?;
        require_non_negative(self.noise_estimate, "noise_estimate")
    }
}

struct SgrhmcDynamics<'a, T> {
    inverse: &'a [T],
    root: &'a [T],
    root_derivative: Option<&'a [T]>,
    noise_estimate: T,
}

impl<T: Real> RecipeDynamics<T> for SgrhmcDynamics<'_, T> {
    fn state_len(&self) -> usize {
        2 * self.inverse.len()
    }
    fn noise_len(&self) -> usize {
        self.inverse.len()
    }
    fn hamiltonian_gradient(&self, z: &[T], g: &[T], out: &mut [T]) {
        let d = self.inverse.len();
        out[..d].copy_from_slice(g);
        out[d..].copy_from_slice(&z[d..]);
    }
    fn apply_diffusion(&self, _z: &[T], v: &[T], out: &mut [T]) {
        let d = self.inverse.len();
        for i in 0..d {
            out[i] = T::ZERO;
            out[d + i] = self.inverse[i] * v[d + i];
        }
    }
    fn apply_curl(&self, _z: &[T], v: &[T], out: &mut [T]) {
        let d = self.inverse.len();
        for i in 0..d {
            out[i] = -(self.root[i] * v[d + i]);
            out[d + i] = self.root[i] * v[i];
        }
    }
    fn correction(&self, _z: &[T], out: &mut [T]) {
        let d = self.inverse.len();
        out.fill(T::ZERO);
        if let Some(ds) = self.root_derivative {
            out[d..].copy_from_slice(ds);
        }
    }
    fn apply_noise_factor(&self, _z: &[T], eps: T, w: &[T], out: &mut [T]) {
        let d = self.inverse.len();
        for i in 0..d {
            out[i] = T::ZERO;
            out[d + i] = (T::TWO * self.inverse[i] - eps * self.noise_estimate).sqrt() * w[i];
        }
    }
}

/// gSGRHMC (or the naive eq. 27) with a diagonal metric `G` in dimension `D`
/// (8·13·D bytes in f64 and the metric, 8·15·D with the feature
/// `runtime-dimension`; built in place by
/// [`init_in_place`](Self::init_in_place), `new_boxed` and
/// [`reset`](Self::reset), which take the metric too and need it
/// [`ZeroValid`]; a run-time dimension n ≤ D by `set_dimension`, with which
/// the metric sees positions that are zero from n on and what it writes
/// there is ignored, see [`DiagonalRiemannianMetric`]).
#[derive(Debug, Clone)]
pub struct Sgrhmc<T, const D: usize, G> {
    settings: SgrhmcSettings<T>,
    metric: G,
    /// θ and r (their first n entries at a run-time dimension n).
    state: [[T; D]; 2],
    /// The step's z′, in the layout of a sampler compiled for n.
    proposal: [[T; D]; 2],
    gradient: [T; D],
    inverse: [T; D],
    derivative: [T; D],
    root: [T; D],
    normals: [T; D],
    /// The engine's scratch, after z's copy at a run-time dimension.
    work: [[T; D]; 4 + COMPACT_ROWS],
    /// The coordinates that move (0: D).
    dimension: usize,
    /// A step was taken.
    started: bool,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize, G: ZeroValid] Sgrhmc<T, D, G> {
    settings, metric, state, proposal, gradient, inverse, derivative, root, normals, work,
    dimension, started
});

impl<T: Real, const D: usize, G: DiagonalRiemannianMetric<T, D>> Sgrhmc<T, D, G> {
    /// Validates `settings` and starts at θ = `initial_position` (finite, D ≥ 1),
    /// r = 0, with `metric` as G(θ) (pass `&metric` to keep it).
    pub fn new(
        settings: SgrhmcSettings<T>,
        initial_position: [T; D],
        metric: G,
    ) -> Result<Self, Error> {
        settings.validate()?;
        check_initial(&initial_position)?;
        Ok(Sgrhmc {
            settings,
            metric,
            state: [initial_position, [T::ZERO; D]],
            proposal: [[T::ZERO; D]; 2],
            gradient: [T::ZERO; D],
            inverse: [T::ZERO; D],
            derivative: [T::ZERO; D],
            root: [T::ZERO; D],
            normals: [T::ZERO; D],
            work: [[T::ZERO; D]; 4 + COMPACT_ROWS],
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
            &self.state[0],
            &mut self.normals,
            &mut self.gradient,
            n,
        )?;
        evaluate_metric(
            &self.metric,
            n,
            &self.state[0],
            &mut self.inverse,
            &mut self.derivative,
        )?;
        for i in 0..n {
            self.root[i] = self.inverse[i].sqrt();
            // ∂ᵢ√g = ∂ᵢg / (2√g); reuse `derivative` for it.
            self.derivative[i] /= T::TWO * self.root[i];
        }
        let dynamics = SgrhmcDynamics {
            inverse: &self.inverse[..n],
            root: &self.root[..n],
            root_derivative: match self.settings.correction {
                Correction::Included => Some(&self.derivative[..n]),
                Correction::Omitted => None,
            },
            noise_estimate: self.settings.noise_estimate,
        };
        let (z, work) = extended_state(&self.state, 2, 0, n, self.work.as_flattened_mut())?;
        let out = &mut self.proposal.as_flattened_mut()[..2 * n];
        recipe_update(
            &dynamics,
            z,
            &self.gradient[..n],
            eps,
            &self.normals[..n],
            work,
            out,
        )?;
        if !all_finite(out) {
            return Err(Error::NonFiniteProposal);
        }
        store_extended_state(out, 2, n, &mut self.state);
        self.started = true;
        Ok(stats)
    }
}

impl<T: Real, const D: usize, G: DiagonalRiemannianMetric<T, D> + ZeroValid> Sgrhmc<T, D, G> {
    /// The state of [`Sgrhmc::new`] on an all-zero sampler (r = 0), with
    /// `metric` (the all-zero metric it replaces needs no drop: it is
    /// `ZeroValid`).
    fn initialize_zeroed(
        &mut self,
        settings: SgrhmcSettings<T>,
        initial_position: &[T; D],
        metric: G,
    ) -> Result<(), Error> {
        settings.validate()?;
        check_initial(initial_position)?;
        self.settings = settings;
        self.metric = metric;
        self.state[0].copy_from_slice(initial_position);
        self.dimension = D;
        Ok(())
    }
}

recipe_in_place!(Sgrhmc<G>, SgrhmcSettings, metric);

impl<T: Real, const D: usize, G> Sgrhmc<T, D, G> {
    /// The current θ.
    pub fn position(&self) -> &[T; D] {
        &self.state[0]
    }

    /// The current momentum r.
    pub fn momentum(&self) -> &[T; D] {
        &self.state[1]
    }

    /// Sets r (finite), e.g. to resample it (Algorithm 1's optional step).
    /// Only the first [`dimension`](Self::dimension) entries are read.
    pub fn set_momentum(&mut self, momentum: [T; D]) -> Result<(), Error> {
        let n = self.dimension();
        if !all_finite(&momentum[..n]) {
            return Err(Error::invalid("momentum", "finite"));
        }
        self.state[1][..n].copy_from_slice(&momentum[..n]);
        Ok(())
    }

    /// The settings in force.
    pub fn settings(&self) -> &SgrhmcSettings<T> {
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

recipe_sampler_traits!(Sgrhmc<G: DiagonalRiemannianMetric>, SgrhmcSettings, dimension);
