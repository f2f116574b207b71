//! [`AdaptiveNuts`] built where it lives: in a `static`, a local
//! `MaybeUninit` or a heap allocation, never on the stack and copied.

use core::mem::MaybeUninit;

use super::AdaptiveNuts;
use crate::adaptation::metric_estimators::MetricEstimator;
use crate::adaptation::schedule::WarmupSchedule;
use crate::error::Error;
use crate::in_place::ZeroValid;
use crate::real::Real;
use crate::samplers::nuts::NutsSettings;
use crate::target::Potential;

/// Building the sampler where it lives ([`crate::in_place`]).
impl<T: Real, const D: usize, E, const MAX_DEPTH: usize> AdaptiveNuts<T, D, E, MAX_DEPTH>
where
    E: MetricEstimator<T, D> + ZeroValid,
    E::Metric: ZeroValid,
{
    /// Builds the sampler in `slot` (a `static`, a local `MaybeUninit`, a
    /// heap allocation), as [`new`](Self::new) with the metric the estimator
    /// starts from (the identity) would, and returns it there: the sampler is
    /// never built on the stack and copied, so `construction + step` needs
    /// only the stack of one draw beyond the sampler itself. On error the
    /// slot holds zero bytes and nothing is returned.
    ///
    /// ```
    /// use core::mem::MaybeUninit;
    /// use qnmc::adaptation::{
    ///     AdaptiveNuts, DEFAULT_RANK_TOLERANCE, LbfgsEstimator, LbfgsEstimatorSettings,
    ///     WarmupSchedule,
    /// };
    /// use qnmc::{NutsSettings, Potential};
    /// use rand_core::SeedableRng;
    ///
    /// struct Normal;
    /// impl Potential<f64, 3> for Normal {
    ///     fn potential_and_gradient(&self, x: &[f64; 3], g: &mut [f64; 3]) -> f64 {
    ///         *g = *x;
    ///         0.5 * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2])
    ///     }
    /// }
    ///
    /// type Chain = AdaptiveNuts<f64, 3, LbfgsEstimator<f64, 3, 4>>;
    /// let mut slot = MaybeUninit::<Chain>::uninit();
    /// let chain = Chain::init_in_place(
    ///     &mut slot,
    ///     NutsSettings::new(1.0),
    ///     WarmupSchedule::stan(200).unwrap(),
    ///     LbfgsEstimatorSettings::new(DEFAULT_RANK_TOLERANCE),
    ///     &[1.0, -1.0, 0.5],
    ///     &Normal,
    /// )
    /// .unwrap();
    /// let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(3);
    /// for _ in 0..300 {
    ///     chain.step(&Normal, &mut rng);
    /// }
    /// assert!(!chain.is_warming_up());
    /// ```
    pub fn init_in_place<'s, P: Potential<T, D>>(
        slot: &'s mut MaybeUninit<Self>,
        settings: NutsSettings<T>,
        schedule: WarmupSchedule,
        estimator: E::Settings,
        initial_position: &[T; D],
        target: &P,
    ) -> Result<&'s mut Self, Error> {
        let chain = crate::in_place::zeroed(slot);
        chain.reset(settings, schedule, estimator, initial_position, target)?;
        Ok(chain)
    }

    /// [`init_in_place`](Self::init_in_place) into a `Box` allocated zeroed
    /// on the heap (feature `alloc`): the way to keep a large sampler on an
    /// ordinary thread, whose stack it need never fit.
    ///
    /// Sizes and stack of the default (`LbfgsEstimator<f64, D, 20>`), built
    /// here, in bytes (`cargo run -p qnmc-tests-debug --example stack_use`,
    /// `--release` for the second figure; a debug build keeps copies an
    /// optimised one elides):
    ///
    /// | D | sampler (heap) | stack to build it, debug / release | stack of a draw (warm-up included), debug / release |
    /// |---|---|---|---|
    /// | 25 | 211 392 | 8.5 K / ≤ 4 K | 17 K / 6 K |
    /// | 100 | 387 264 | 9.7 K / ≤ 4 K | 47 K / 20 K |
    /// | 1000 | 2 496 512 | 26 K / 10 K | 451 K / 193 K |
    ///
    /// `AdaptiveNuts::new` returns the sampler by value instead: it builds
    /// it on the stack, and a debug build needs about five times its size
    /// there (2 MB at D = 100, overflowing a default 2 MiB thread), so it
    /// refuses at compile time a sampler above [`NEW_MAX_BYTES`](super::NEW_MAX_BYTES).
    ///
    /// `size_of` the f64 sampler (bytes, x86-64; the maximum tree depth 10)
    /// by dimension D and L-BFGS memory M: about 8·(93 + 10M)·D bytes plus
    /// O(M²) for the quasi-Newton metric (2M directions each in the metric,
    /// the estimator's candidate, its pair pool, its memory and its recent
    /// draws), 8·74·D for the diagonal one:
    ///
    /// | D | diagonal | M = 5 | M = 10 | M = 20 |
    /// |---|---|---|---|---|
    /// | 10 | 7 104 | 24 768 | 61 696 | 199 168 |
    /// | 25 | 15 744 | 41 664 | 84 608 | 234 112 |
    /// | 100 | 60 224 | 127 552 | 200 576 | 409 984 |
    /// | 1000 | 592 768 | 1 156 992 | 1 589 824 | 2 519 296 |
    #[cfg(feature = "alloc")]
    pub fn new_boxed<P: Potential<T, D>>(
        settings: NutsSettings<T>,
        schedule: WarmupSchedule,
        estimator: E::Settings,
        initial_position: &[T; D],
        target: &P,
    ) -> Result<alloc::boxed::Box<Self>, Error> {
        let mut chain = crate::in_place::zeroed_box::<Self>();
        chain.reset(settings, schedule, estimator, initial_position, target)?;
        Ok(chain)
    }
}
