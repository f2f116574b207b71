//! `init_in_place`, `new_boxed` and `reset`, the constructors that build a
//! sampler where it lives ([`crate::in_place`]), written once for every
//! sampler built from its settings and a start (HAMCMC, SGLD, pSGLD, SGHMC,
//! SGNHT), from its settings, a start and the target (HMC, QNHMC, AMAGOLD),
//! or from its settings, a start and a metric it owns (SGRLD, SGRHMC).
//!
//! A sampler provides two methods the generated constructors call:
//!
//! - `initialize_zeroed(&mut self, settings, start[, target | metric])`: the state of
//!   its `new` on an all-zero sampler, validating first; it writes nothing
//!   of length D it does not need, so the pages of a zeroed allocation stay
//!   untouched until the chain uses them;
//! - `check_reset(&mut self, &settings, start[, target])`: the checks of
//!   `initialize_zeroed`, changing nothing observable (it may use the
//!   sampler's scratch vectors to evaluate the target), so that a `reset`
//!   that fails leaves the chain as it was.
//!
//! HMC-BFGS and MH-BFGS, whose starts are K states, get theirs from
//! `shared_methods!` in `samplers/ensemble/mod.rs`; the recipe family wraps
//! this macro in `recipe_in_place!`; the NUTS warm-up, `AdaptiveNuts`, has
//! its own (`adaptation/nuts_warmup/in_place.rs`).

use crate::error::Error;
use crate::kernels::all_finite;
use crate::real::Real;
use crate::target::Potential;

/// `in_place_constructors!(impl[T: Real, const D: usize] Sgld<T, D> {
/// settings: SgldSettings<T> })`, or with `, target: target: P` after the
/// settings for a sampler that evaluates the target at its start, or with
/// `, metric: metric: G` for a sampler that owns a metric (SGRLD, SGRHMC):
/// the constructors then take the metric last, by value, and move it into
/// the sampler after the zero fill (`initialize_zeroed(settings, start,
/// metric)`; `check_reset(&settings, start)` does not see it).
macro_rules! in_place_constructors {
    (impl[$($g:tt)*] $ty:ty { settings: $settings:ty, metric: $metric:ident: $gm:ty }) => {
        impl<$($g)*> $ty {
            /// `new` written into `slot` ([`crate::in_place`]): nothing of
            /// the sampler crosses the stack but the metric, which is moved
            /// in (a metric that holds D values crosses it whole: at a large
            /// D use one that holds fewer, as
            /// [`ConstantInverseMetric`](crate::samplers::recipe::ConstantInverseMetric)).
            pub fn init_in_place<'s>(
                slot: &'s mut core::mem::MaybeUninit<Self>,
                settings: $settings,
                initial_position: &[T; D],
                $metric: $gm,
            ) -> Result<&'s mut Self, $crate::Error> {
                let sampler = $crate::in_place::zeroed(slot);
                sampler.initialize_zeroed(settings, initial_position, $metric)?;
                Ok(sampler)
            }

            /// `new` in a `Box` allocated zeroed (feature `alloc`), the
            /// metric moved in: only the pages the chain writes are ever
            /// touched, so a sampler compiled for a large D and run at a
            /// smaller [`dimension`](Self::dimension) costs the memory of
            /// that dimension.
            #[cfg(feature = "alloc")]
            pub fn new_boxed(
                settings: $settings,
                initial_position: &[T; D],
                $metric: $gm,
            ) -> Result<alloc::boxed::Box<Self>, $crate::Error> {
                let mut sampler = $crate::in_place::zeroed_box::<Self>();
                sampler.initialize_zeroed(settings, initial_position, $metric)?;
                Ok(sampler)
            }

            /// In place, the state of `new` with `settings` at
            /// `initial_position` with the metric `metric` (the old one is
            /// replaced; the run-time dimension goes back to D). On error
            /// nothing changes.
            pub fn reset(
                &mut self,
                settings: $settings,
                initial_position: &[T; D],
                $metric: $gm,
            ) -> Result<(), $crate::Error> {
                self.check_reset(&settings, initial_position)?;
                $crate::in_place::zero(self);
                self.initialize_zeroed(settings, initial_position, $metric)
            }
        }
    };
    (impl[$($g:tt)*] $ty:ty { settings: $settings:ty $(, target: $target:ident: $p:ident)? }) => {
        impl<$($g)*> $ty {
            /// `new` written into `slot` ([`crate::in_place`]): nothing of
            /// the sampler crosses the stack.
            pub fn init_in_place<'s $(, $p: $crate::Potential<T, D>)?>(
                slot: &'s mut core::mem::MaybeUninit<Self>,
                settings: $settings,
                initial_position: &[T; D],
                $($target: &$p,)?
            ) -> Result<&'s mut Self, $crate::Error> {
                let sampler = $crate::in_place::zeroed(slot);
                sampler.initialize_zeroed(settings, initial_position $(, $target)?)?;
                Ok(sampler)
            }

            /// `new` in a `Box` allocated zeroed (feature `alloc`): only the
            /// pages the chain writes are ever touched, so a sampler
            /// compiled for a large D and run at a smaller
            /// [`dimension`](Self::dimension) costs the memory of that
            /// dimension.
            #[cfg(feature = "alloc")]
            pub fn new_boxed<$($p: $crate::Potential<T, D>)?>(
                settings: $settings,
                initial_position: &[T; D],
                $($target: &$p,)?
            ) -> Result<alloc::boxed::Box<Self>, $crate::Error> {
                let mut sampler = $crate::in_place::zeroed_box::<Self>();
                sampler.initialize_zeroed(settings, initial_position $(, $target)?)?;
                Ok(sampler)
            }

            /// In place, the state of `new` with `settings` at
            /// `initial_position` (nothing of the sampler crosses the stack;
            /// the run-time dimension goes back to D). On error nothing
            /// changes.
            pub fn reset<$($p: $crate::Potential<T, D>)?>(
                &mut self,
                settings: $settings,
                initial_position: &[T; D],
                $($target: &$p,)?
            ) -> Result<(), $crate::Error> {
                self.check_reset(&settings, initial_position $(, $target)?)?;
                $crate::in_place::zero(self);
                self.initialize_zeroed(settings, initial_position $(, $target)?)
            }
        }
    };
}

pub(crate) use in_place_constructors;

/// Copies `initial_position` into `position` and evaluates the target there
/// into `gradient`: U, or [`Error::NonFiniteInitialState`] when the start,
/// U or ∇U is not finite. What the samplers that evaluate their start (HMC,
/// QNHMC, AMAGOLD) do in `initialize_zeroed` (into their state) and in
/// `check_reset` (into scratch vectors).
pub(crate) fn evaluate_start<T: Real, const D: usize, P: Potential<T, D>>(
    initial_position: &[T; D],
    target: &P,
    position: &mut [T; D],
    gradient: &mut [T; D],
) -> Result<T, Error> {
    if !all_finite(initial_position) {
        return Err(Error::NonFiniteInitialState);
    }
    position.copy_from_slice(initial_position);
    let potential = target.potential_and_gradient(position, gradient);
    if !potential.is_finite() || !all_finite(gradient) {
        return Err(Error::NonFiniteInitialState);
    }
    Ok(potential)
}
