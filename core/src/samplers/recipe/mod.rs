//! The complete recipe for stochastic-gradient MCMC (Ma, Chen & Fox 2015) and
//! its named instances.
//!
//! [`recipe_update`] is the discretised recipe (paper eq. 9),
//!
//! ```text
//! z ← z − ε (D(z) + Q(z)) ∇H̃(z) + ε Γ(z) + N(0, ε(2D(z) − εB̂)),
//! ```
//!
//! driven by a [`RecipeDynamics`] that supplies D·v, Q·v, Γ and a square root of
//! 2D − εB̂ on the extended state z = (θ, r, ξ, …). Each named sampler is the
//! engine plus one choice of (H, D, Q, Γ) — except the default order of
//! [`Sghmc`], which is Chen et al.'s position-first step (the gradient at the
//! new θ, [`SghmcUpdate::PositionFirst`]), written in its own file; the
//! engine's simultaneous form is [`SghmcUpdate::RecipeEuler`]:
//!
//! | sampler | paper (recipe eq.) | z | D | Q | Γ | exact? |
//! |---|---|---|---|---|---|---|
//! | [`Sgld`] | Welling & Teh 2011 (19) | θ | I | 0 | 0 | biased O(ε) |
//! | [`Psgld`] | Li et al. 2016 | θ | G = diag(1/(λ+√V)) | 0 | dropped (`step`) or Li et al.'s (`step_corrected`) | biased (adaptive G, Γ dropped); O(ε) once G is frozen |
//! | [`Sgrld`] | Patterson & Teh 2013 (20) | θ | G(θ)⁻¹ | 0 | ∂ⱼ(G⁻¹)ᵢⱼ | biased O(ε) |
//! | [`DenseSgrld`] | Patterson & Teh 2013 with a constant dense metric (HAMCMC paper §5.1) | θ | G⁻¹ (constant, dense) | 0 | 0 | biased O(ε) |
//! | [`Sghmc`] | Chen et al. 2014, Alg. 2 (default) / recipe (18) | (θ, r) | diag(0, C) | `[[0,−I],[I,0]]` | 0 | biased O(ε) |
//! | [`Sgnht`] | Ding et al. 2014 (24) | (θ, r, ξ) | diag(0, A·I, 0) | see [`Sgnht`] | (0, 0, −1) | biased O(ε) |
//! | [`Sgrhmc`] | Ma et al. 2015 (30) / naive (27) | (θ, r) | diag(0, G⁻¹) | `[[0,−G^{−½}],[G^{−½},0]]` | (0, ∂ⱼ(G^{−½})ᵢⱼ) | gSGRHMC biased O(ε); naive wrong |
//! | [`crate::Hamcmc`] | Şimşekli et al. 2016 | θ | H_t (L-BFGS) | 0 | 0 by construction | biased O(ε) |
//!
//! All of them use the recipe's step-size convention (drift −εD∇U, noise
//! N(0, 2εD)); see [`engine`] for the conversion from the (η/2, √η) convention
//! of Welling & Teh and Li et al., and for the sign of Γ (the paper's eq. 6/9
//! print it with the wrong sign).
//!
//! Every sampler here takes one minibatch gradient per step, with the random
//! numbers of a step drawn in this order: the batch (by the target), then D
//! (n at a run-time dimension n, below) standard normals
//! ([`crate::random::fill_standard_normal`]), for all samplers
//! and all settings (also when the noise covariance is zero). A NaN or infinite
//! gradient, metric or proposal returns an error and leaves the sampler exactly
//! as before the call (the generator has advanced).
//!
//! **Run-time dimension** (feature `runtime-dimension`): every sampler here
//! but [`DenseSgrld`] takes `set_dimension(n)` before its first step and
//! then moves only the first n ≤ D coordinates: n normals per step, every
//! pass stopping at n, and the extended state z = (θ, r[, ξ]) given to the
//! engine made of the first n entries of each block, laid out as in the
//! sampler compiled for n (`extended_state`), so that the chain is bit for
//! bit that sampler's. Each is also built in place (`init_in_place`,
//! `new_boxed`, `reset`, from `recipe_in_place!`); [`Sgrld`] and [`Sgrhmc`]
//! take their metric there too, by value (the macro's `metric` form), which
//! must then be [`ZeroValid`](crate::in_place::ZeroValid), as
//! [`ConstantInverseMetric`] is.
//!
//! This file holds the two macros every sampler here is declared with —
//! `recipe_sampler_traits!` (its [`Sampler`](crate::Sampler) and
//! [`Step`](crate::Step)) and `recipe_in_place!` (its in-place constructors
//! and run-time dimension) — and `extended_state`. The engine is
//! [`engine`], each sampler has its own file, and [`ConstantInverseMetric`]
//! is `constant_metric.rs`.
//!
//! ## Example
//!
//! SGHMC on a 2-D Gaussian with a full-data gradient (a [`crate::FullBatch`]
//! draws no batch); a real model implements [`crate::MinibatchPotential`]:
//!
//! ```
//! use qnmc::samplers::recipe::{Sghmc, SghmcSettings};
//! use qnmc::{FullBatch, Potential};
//! use rand_core::SeedableRng;
//! use rand_xorshift::XorShiftRng;
//!
//! struct Gaussian;
//! impl Potential<f32, 2> for Gaussian {
//!     fn potential_and_gradient(&self, x: &[f32; 2], g: &mut [f32; 2]) -> f32 {
//!         *g = *x;
//!         0.5 * (x[0] * x[0] + x[1] * x[1])
//!     }
//! }
//!
//! let target = FullBatch(Gaussian);
//! let mut sampler = Sghmc::<f32, 2>::new(SghmcSettings::new(0.05, 1.0), [2.0, -2.0]).unwrap();
//! let mut rng = XorShiftRng::seed_from_u64(1);
//! let mut second_moment = 0.0f32;
//! for _ in 0..20_000 {
//!     sampler.step(&target, &mut rng).unwrap();
//!     second_moment += sampler.position()[0] * sampler.position()[0];
//! }
//! // Var θ₀ = 1, plus an O(ε) bias.
//! assert!((second_moment / 20_000.0 - 1.0).abs() < 0.2);
//! ```

/// [`Sampler`](crate::Sampler) and [`Step`](crate::Step) for a recipe
/// sampler `$sampler<T, D>` with settings `$settings<T>`, or
/// `$sampler<T, D, G>` that owns a metric `G` (`recipe_sampler_traits!(Sgrld<G:
/// DiagonalRiemannianMetric>, SgrldSettings, dimension)`; its `Step` needs
/// `G: DiagonalRiemannianMetric<T, D>`), forwarding to the inherent
/// `settings`, `set_step_size`, `position`, optionally `dimension`, and
/// `step(target, rng)` on a [`MinibatchPotential`] every recipe sampler has.
macro_rules! recipe_sampler_traits {
    ($sampler:ident, $settings:ident $(, $dimension:ident)?) => {
        recipe_sampler_traits!(@impls [$sampler<T, D>] [] [] $settings $(, $dimension)?);
    };
    ($sampler:ident<$g:ident: $bound:ident>, $settings:ident $(, $dimension:ident)?) => {
        recipe_sampler_traits!(
            @impls [$sampler<T, D, $g>] [$g] [$g: $bound<T, D>,] $settings $(, $dimension)?
        );
    };
    (@impls [$ty:ty] [$($free:tt)*] [$($bounded:tt)*] $settings:ident $(, $dimension:ident)?) => {
        impl<T: $crate::Real, const D: usize, $($free)*> $crate::Sampler<T, D> for $ty {
            type Settings = $settings<T>;
            fn settings(&self) -> &$settings<T> {
                <$ty>::settings(self)
            }
            fn set_step_size(&mut self, step_size: T) -> Result<(), $crate::error::Error> {
                <$ty>::set_step_size(self, step_size)
            }
            fn position(&self) -> &[T; D] {
                <$ty>::position(self)
            }
            $(
                fn $dimension(&self) -> usize {
                    <$ty>::$dimension(self)
                }
            )?
        }

        impl<
            T: $crate::Real,
            const D: usize,
            $($bounded)*
            P: $crate::target::MinibatchPotential<T, D>,
        > $crate::Step<T, D, P> for $ty
        {
            type Stats = $crate::stats::StepStats<T>;
            fn step<R: rand_core::Rng + ?Sized>(
                &mut self,
                target: &P,
                rng: &mut R,
            ) -> Result<$crate::stats::StepStats<T>, $crate::error::Error> {
                <$ty>::step(self, target, rng)
            }
        }
    };
}

/// The in-place constructors (`in_place_constructors!`) and the run-time
/// dimension of a recipe sampler
/// `$sampler<T, D>` with settings `$settings<T>` ([`crate::in_place`],
/// feature `runtime-dimension`), or of a sampler `$sampler<T, D, G>` that
/// owns a metric `G` (`recipe_in_place!(Sgrld<G>, SgrldSettings, metric)`:
/// the constructors take the metric last, which must be
/// [`ZeroValid`](crate::in_place::ZeroValid)). The sampler provides
/// `initialize_zeroed(&mut self, settings, &[T; D][, metric]) -> Result<(),
/// Error>` (the state of `new` on an all-zero sampler, validating first),
/// an inherent `position()` and the fields `dimension` (0: D) and `started`
/// (a step was taken).
macro_rules! recipe_in_place {
    ($sampler:ident, $settings:ident) => {
        $crate::samplers::in_place_constructors::in_place_constructors!(
            impl[T: $crate::Real, const D: usize] $sampler<T, D> { settings: $settings<T> }
        );
        recipe_in_place!(@dimension impl[T: $crate::Real, const D: usize] $sampler<T, D>, $settings);
    };
    ($sampler:ident<G>, $settings:ident, metric) => {
        $crate::samplers::in_place_constructors::in_place_constructors!(
            impl[
                T: $crate::Real,
                const D: usize,
                G: $crate::samplers::recipe::DiagonalRiemannianMetric<T, D>
                    + $crate::in_place::ZeroValid
            ] $sampler<T, D, G> { settings: $settings<T>, metric: metric: G }
        );
        recipe_in_place!(@dimension impl[T: $crate::Real, const D: usize, G] $sampler<T, D, G>, $settings);
    };
    (@dimension impl[$($g:tt)*] $ty:ty, $settings:ident) => {
        impl<$($g)*> $ty {
            /// The checks of `initialize_zeroed`, changing nothing.
            fn check_reset(
                &mut self,
                settings: &$settings<T>,
                initial_position: &[T; D],
            ) -> Result<(), $crate::error::Error> {
                settings.validate()?;
                $crate::samplers::recipe::check_initial(initial_position)
            }

            /// n: the sampler moves the first n coordinates and keeps the
            /// rest at zero (D unless `set_dimension`
            /// said otherwise).
            #[inline]
            pub fn dimension(&self) -> usize {
                $crate::samplers::dimension::in_use::<D>(self.dimension)
            }

            /// Moves only the first `n` coordinates (1 ≤ n ≤ D; feature
            /// `runtime-dimension`; before the first step): a model of
            /// run-time dimension n in storage for D. Each step takes n
            /// normals and every pass stops at n, so a step costs what
            /// dimension n costs and the chain is bit for bit that of the
            /// sampler compiled for n on the same coordinates. The target is
            /// evaluated at positions zero from n on; what it writes to the
            /// gradient there is ignored. The position must be zero from n
            /// on; on error nothing changes.
            #[cfg(feature = "runtime-dimension")]
            pub fn set_dimension(&mut self, n: usize) -> Result<(), $crate::error::Error> {
                $crate::samplers::dimension::check_new(n, self.started, self.position())?;
                self.dimension = n;
                Ok(())
            }
        }
    };
}

mod constant_metric;
mod dense_sgrld;
pub mod engine;
mod psgld;
mod sghmc;
mod sgld;
mod sgnht;
mod sgrhmc;
mod sgrld;

pub use constant_metric::ConstantInverseMetric;
pub use dense_sgrld::{DenseSgrld, DenseSgrldSettings};
pub use engine::{RecipeDynamics, recipe_update, recipe_work_len};
pub use psgld::{MinibatchHessianDiagonal, Psgld, PsgldSettings};
pub use sghmc::{Sghmc, SghmcSettings, SghmcUpdate};
pub use sgld::{Sgld, SgldSettings};
pub use sgnht::{Sgnht, SgnhtSettings, Thermostat};
pub use sgrhmc::{Sgrhmc, SgrhmcSettings};
pub use sgrld::{Sgrld, SgrldSettings};

use rand_core::Rng;

use crate::error::Error;
use crate::kernels::all_finite;
use crate::random::fill_standard_normal;
use crate::real::Real;
use crate::stats::StepStats;
use crate::target::MinibatchPotential;

/// Whether a state-dependent sampler adds the recipe's correction term Γ.
/// (`repr(u8)`, `Included` = 0: all-zero bytes are `Included`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Correction {
    /// Γ included: the recipe's sampler (SGRLD eq. 20, gSGRHMC eq. 30). Correct
    /// as ε → 0.
    #[default]
    Included,
    /// Γ omitted: the naive sampler (e.g. the recipe's eq. 27 for SGRHMC). Its
    /// stationary distribution is wrong whenever the metric depends on θ; offered
    /// only to demonstrate that.
    Omitted,
}

// SAFETY: `repr(u8)` with a field-less first variant `Included` of
// discriminant 0: the zero byte is `Included`.
#[allow(unsafe_code)]
unsafe impl crate::in_place::ZeroValid for Correction {}

crate::saved_state::saved_enum!(Correction { Included, Omitted });

/// A diagonal, position-dependent metric G(θ) for [`Sgrld`] and [`Sgrhmc`].
///
/// The samplers need the diagonal of G(θ)⁻¹ and its element-wise derivative
/// ∂(G⁻¹)ᵢᵢ/∂θᵢ (the only non-zero terms of Σⱼ ∂ⱼ(G⁻¹)ᵢⱼ for a diagonal metric);
/// SGRHMC derives G^{−½} and ∂ᵢ(G^{−½})ᵢᵢ = ∂ᵢ(G⁻¹)ᵢᵢ / (2√(G⁻¹)ᵢᵢ) from them.
///
/// Riemannian: G depends on θ. Not to be confused with
/// [`metric::DiagonalMetric`](crate::metric::DiagonalMetric), the constant
/// diagonal mass of NUTS and HMC (until issue 24 the two shared that name).
///
/// **Run-time dimension** (feature `runtime-dimension`): a sampler that moves
/// only its first n coordinates (`set_dimension`) calls
/// [`leading_inverse_metric`](Self::leading_inverse_metric) with n. The
/// position it passes is zero from n on, and it reads only the first n
/// entries of `inverse` and `derivative`: whatever the metric writes beyond
/// (the default writes all D, through
/// [`inverse_metric`](Self::inverse_metric)) is ignored. A metric that
/// overrides it to write n entries makes a step cost n, not D.
pub trait DiagonalRiemannianMetric<T: Real, const D: usize> {
    /// Writes (G(θ)⁻¹)ᵢᵢ into `inverse` (must be finite and > 0) and
    /// ∂(G(θ)⁻¹)ᵢᵢ/∂θᵢ into `derivative` (must be finite).
    fn inverse_metric(&self, position: &[T; D], inverse: &mut [T; D], derivative: &mut [T; D]);

    /// The first `n` (1 ≤ n ≤ D) entries of what
    /// [`inverse_metric`](Self::inverse_metric) writes, for a sampler of
    /// run-time dimension n (`position` is zero from n on; the entries from
    /// n on are not read). By default `inverse_metric` itself.
    fn leading_inverse_metric(
        &self,
        n: usize,
        position: &[T; D],
        inverse: &mut [T; D],
        derivative: &mut [T; D],
    ) {
        let _ = n;
        self.inverse_metric(position, inverse, derivative)
    }
}

impl<T: Real, const D: usize, G: DiagonalRiemannianMetric<T, D> + ?Sized>
    DiagonalRiemannianMetric<T, D> for &G
{
    fn inverse_metric(&self, position: &[T; D], inverse: &mut [T; D], derivative: &mut [T; D]) {
        (**self).inverse_metric(position, inverse, derivative)
    }

    fn leading_inverse_metric(
        &self,
        n: usize,
        position: &[T; D],
        inverse: &mut [T; D],
        derivative: &mut [T; D],
    ) {
        (**self).leading_inverse_metric(n, position, inverse, derivative)
    }
}

/// Evaluates the metric's first `n` entries (the sampler's dimension) and
/// checks them: a non-finite or non-positive G⁻¹ or a non-finite derivative
/// is reported as [`Error::NonFiniteGradient`].
pub(crate) fn evaluate_metric<
    T: Real,
    const D: usize,
    G: DiagonalRiemannianMetric<T, D> + ?Sized,
>(
    metric: &G,
    n: usize,
    position: &[T; D],
    inverse: &mut [T; D],
    derivative: &mut [T; D],
) -> Result<(), Error> {
    let n = n.min(D);
    metric.leading_inverse_metric(n, position, inverse, derivative);
    let (inverse, derivative) = (&inverse[..n], &derivative[..n]);
    if !all_finite(inverse) || !all_finite(derivative) || inverse.iter().any(|&g| g <= T::ZERO) {
        return Err(Error::NonFiniteGradient);
    }
    Ok(())
}

/// The common start of every recipe sampler's step, in the documented order:
/// draw the batch Ω, fill `normals` with standard normals, evaluate
/// ∇Ũ_Ω(`position`) into `gradient`. Returns the step's statistics (one
/// gradient, no MH test) and the batch, or `NonFiniteGradient` (nothing of the
/// sampler's state has been touched but these scratch buffers).
pub(crate) fn begin_step<T, const D: usize, P, R>(
    target: &P,
    rng: &mut R,
    step_size: T,
    position: &[T; D],
    normals: &mut [T; D],
    gradient: &mut [T; D],
    len: usize,
) -> Result<(StepStats<T>, P::Batch), Error>
where
    T: Real,
    P: MinibatchPotential<T, D>,
    R: Rng + ?Sized,
{
    let batch = draw_step_randomness(target, rng, normals, len);
    let stats = step_gradient(target, &batch, step_size, position, gradient, len)?;
    Ok((stats, batch))
}

/// The random numbers of one step, in the documented order: the batch Ω (drawn
/// by the target), then `len` (the sampler's dimension, at most D) standard
/// normals into the first entries of `normals`.
pub(crate) fn draw_step_randomness<T, const D: usize, P, R>(
    target: &P,
    rng: &mut R,
    normals: &mut [T; D],
    len: usize,
) -> P::Batch
where
    T: Real,
    P: MinibatchPotential<T, D>,
    R: Rng + ?Sized,
{
    let batch = target.draw_batch(rng);
    fill_standard_normal(rng, &mut normals[..len.min(D)]);
    batch
}

/// ∇Ũ_Ω(`position`) into `gradient` and the step's statistics (one gradient,
/// no MH test), or `NonFiniteGradient` (only the first `len` entries, the
/// sampler's dimension, are checked).
pub(crate) fn step_gradient<T, const D: usize, P>(
    target: &P,
    batch: &P::Batch,
    step_size: T,
    position: &[T; D],
    gradient: &mut [T; D],
    len: usize,
) -> Result<StepStats<T>, Error>
where
    T: Real,
    P: MinibatchPotential<T, D>,
{
    let mut stats = StepStats::new(step_size);
    stats.accepted = true;
    stats.acceptance_probability = T::ONE;
    target.minibatch_gradient(batch, position, gradient);
    stats.gradient_evaluations = 1;
    if !all_finite(&gradient[..len.min(D)]) {
        return Err(Error::NonFiniteGradient);
    }
    Ok(stats)
}

/// The rows of D an extended-state sampler whose scratch is otherwise too
/// short adds to its scratch for [`extended_state`]'s copy of z (feature
/// `runtime-dimension`; without it the dimension is always D, z is the
/// state itself, and nothing is added).
#[cfg(feature = "runtime-dimension")]
pub(crate) const COMPACT_ROWS: usize = 2;
#[cfg(not(feature = "runtime-dimension"))]
pub(crate) const COMPACT_ROWS: usize = 0;

/// The extended state z of a sampler of dimension n (SGHMC, SGNHT, SGRHMC)
/// in the layout of the sampler compiled for n, which is what the recipe
/// engine reads (so that the chain is bit for bit that one): the first n
/// entries of each of the first `blocks` rows of `state` (θ, r), then the
/// first `tail` entries of the next row (SGNHT's ξ). At n = D that is the
/// state itself, and the whole of `work` is returned as the engine's
/// scratch; below D, z is copied to the start of `work` and the rest of
/// `work` returned. [`Error::InvalidSetting`] when `work` or `state` is too
/// short (not for the samplers' sizes).
pub(crate) fn extended_state<'a, T: Real, const D: usize>(
    state: &'a [[T; D]],
    blocks: usize,
    tail: usize,
    n: usize,
    work: &'a mut [T],
) -> Result<(&'a [T], &'a mut [T]), Error> {
    let short = || Error::invalid("state", "scratch for the extended state");
    let len = blocks * n + tail;
    if n >= D {
        let z = state.as_flattened().get(..len).ok_or_else(short)?;
        return Ok((z, work));
    }
    let (z, rest) = work.split_at_mut_checked(len).ok_or_else(short)?;
    for (b, row) in state.iter().enumerate().take(blocks) {
        z[b * n..(b + 1) * n].copy_from_slice(&row[..n]);
    }
    if tail > 0 {
        let row = state.get(blocks).ok_or_else(short)?;
        z[blocks * n..].copy_from_slice(&row[..tail]);
    }
    Ok((z, rest))
}

/// Writes an extended state `z` in [`extended_state`]'s layout for
/// dimension n back into the rows of `state` (at n = D a plain copy).
pub(crate) fn store_extended_state<T: Real, const D: usize>(
    z: &[T],
    blocks: usize,
    n: usize,
    state: &mut [[T; D]],
) {
    for (b, row) in state.iter_mut().enumerate().take(blocks) {
        row[..n].copy_from_slice(&z[b * n..(b + 1) * n]);
    }
    let tail = &z[blocks * n..];
    if let Some(row) = state.get_mut(blocks) {
        row[..tail.len()].copy_from_slice(tail);
    }
}

/// D ≥ 1 and a finite initial position.
pub(crate) fn check_initial<T: Real, const D: usize>(initial: &[T; D]) -> Result<(), Error> {
    if D == 0 {
        return Err(Error::invalid("D", ">= 1"));
    }
    if !all_finite(initial) {
        return Err(Error::NonFiniteInitialState);
    }
    Ok(())
}

/// `2·diffusion − step_size·noise_estimate ≥ 0`, as the recipe's eq. (9) requires.
pub(crate) fn check_noise_estimate<T: Real>(
    step_size: T,
    diffusion: T,
    noise_estimate: T,
) -> Result<(), Error> {
    if noise_estimate.is_finite()
        && noise_estimate >= T::ZERO
        && T::TWO * diffusion - step_size * noise_estimate >= T::ZERO
    {
        Ok(())
    } else {
        Err(Error::invalid(
            "noise_estimate",
            "finite, >= 0 and with 2 * diffusion - step_size * noise_estimate >= 0",
        ))
    }
}
