//! [`Sampler`] and [`Step`]: what every sampler of the core has in common,
//! so that generic code (the warm-up's step-size adaptation, a chain loop,
//! a conformance test) names no concrete sampler.
//!
//! The surface is split in two because a sampler's state does not depend on
//! the target while its transition does, and in different ways:
//!
//! - [`Sampler`]: the settings, the step size and the chain's state — the
//!   same whatever target the chain runs on.
//! - [`Step`]: one transition on a target of type `P`. The exact samplers
//!   step on any [`Potential`](crate::Potential); the stochastic-gradient
//!   family on any [`MinibatchPotential`](crate::MinibatchPotential);
//!   AMAGOLD on a target that is both. Written as a type parameter (as
//!   argmin's `Solver<O, I>` takes its problem), this needs no dynamic
//!   dispatch: the target's gradient is inlined into the integrator as
//!   before.
//!
//! Every [`Step::step`] returns a `Result`: the exact samplers never fail
//! (a non-finite density is a rejected, counted transition, reported in the
//! statistics), while the stochastic-gradient samplers refuse a non-finite
//! gradient with [`Error::NonFiniteGradient`] and leave the state as it
//! was. The statistics are [`StepStats`] for every sampler but NUTS, whose
//! [`NutsStats`](crate::NutsStats) convert into them.
//!
//! A run-time dimension n ≤ `D` (a model whose size is known only when it
//! is loaded, stored in `D` slots) is [`Sampler::dimension`]: the first n
//! coordinates move, the rest stay at their start.
//!
//! ```
//! use qnmc::{Hmc, HmcSettings, Potential, Sampler, Step};
//! use rand_core::SeedableRng;
//!
//! /// A standard normal in two dimensions.
//! struct Normal;
//! impl Potential<f64, 2> for Normal {
//!     fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
//!         *g = *x;
//!         0.5 * (x[0] * x[0] + x[1] * x[1])
//!     }
//! }
//!
//! /// Any sampler, any target it can step on: `draws` transitions, and the
//! /// mean of the first coordinate.
//! fn mean_of_first<S: Step<f64, 2, P>, P>(sampler: &mut S, target: &P, draws: u32) -> f64 {
//!     let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(1);
//!     let mut sum = 0.0;
//!     for _ in 0..draws {
//!         sampler.step(target, &mut rng).expect("HMC never refuses a step");
//!         sum += sampler.position()[0];
//!     }
//!     sum / f64::from(draws)
//! }
//!
//! let mut hmc = Hmc::new(HmcSettings::new(0.5, 5), [3.0, -3.0], &Normal).unwrap();
//! Sampler::set_step_size(&mut hmc, 0.4).unwrap();
//! let mean = mean_of_first(&mut hmc, &Normal, 2000);
//! // 2000 nearly independent draws of N(0, 1): MCSE ≈ 0.022 (the first draws
//! // from the start at 3 included); 5 MCSE.
//! assert!(mean.abs() < 0.12, "{mean}");
//! assert_eq!(Sampler::potential(&hmc), Some(hmc.potential()));
//! ```

use rand_core::Rng;

use crate::error::Error;
use crate::real::Real;
use crate::stats::StepStats;

/// A sampler's target-independent surface: its settings, step size and
/// state.
pub trait Sampler<T: Real, const D: usize> {
    /// The settings type ([`HmcSettings`](crate::HmcSettings), …).
    type Settings;

    /// The settings in force.
    fn settings(&self) -> &Self::Settings;

    /// Sets the step size of the next transitions; on error (a step size
    /// that is not finite and positive, or a sampler whose step size is not
    /// free: HAMCMC follows its schedule) the old one stays.
    fn set_step_size(&mut self, step_size: T) -> Result<(), Error>;

    /// The chain's state (walker 0 for the ensembles, whose
    /// [`step`](Step::step) moves one walker at a time).
    fn position(&self) -> &[T; D];

    /// U at [`position`](Self::position) for a sampler that tracks it;
    /// `None` for the stochastic-gradient samplers, which never evaluate U.
    fn potential(&self) -> Option<T> {
        None
    }

    /// The coordinates the sampler moves: `D`, unless a run-time dimension
    /// n ≤ `D` was set (NUTS's `set_dimension`).
    fn dimension(&self) -> usize {
        D
    }
}

/// One transition of a [`Sampler`] on a target of type `P`.
pub trait Step<T: Real, const D: usize, P: ?Sized>: Sampler<T, D> {
    /// The statistics of one transition.
    type Stats: Copy + Into<StepStats<T>>;

    /// One transition. `Err`: the sampler refused it (a non-finite
    /// minibatch gradient) and its state is unchanged.
    fn step<R: Rng + ?Sized>(&mut self, target: &P, rng: &mut R) -> Result<Self::Stats, Error>;
}
