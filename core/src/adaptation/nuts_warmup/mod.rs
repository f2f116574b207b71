//! [`AdaptiveNuts`]: NUTS with Stan's windowed warm-up — step size by dual
//! averaging throughout, the metric learned by a [`MetricEstimator`] at the end
//! of each slow window — then fixed for the kept draws.
//!
//! Per warm-up draw: the draw's acceptance statistic feeds dual averaging; in
//! a slow window the new state's position and gradient feed the estimator; at
//! a window end where the estimator replaces the metric, a first step size for
//! it is found by Stan's heuristic ([`Nuts::find_reasonable_step_size`]) and
//! dual averaging restarts from it (μ = ln 10ε); where it keeps the metric,
//! dual averaging simply goes on (its average then covers more draws).
//! After the last warm-up draw the step size is fixed to the averaged ε̄, so
//! every later draw comes from one exact kernel.
//!
//! Optionally ([`AdaptiveNuts::set_early_end`]) the warm-up ends early: once
//! k consecutive slow windows have kept the metric and were quiet (none of
//! their draws diverged or reached the maximum tree depth, the first 10
//! after a restart of dual averaging aside), the remaining
//! slow windows are skipped and only the terminal buffer follows. "The
//! estimator kept the metric" alone does not say the chain is where it will
//! sample: a chain trapped in a funnel's neck keeps its metric too
//! (docs/NUTS.md, "Early end and funnels").

use rand_core::Rng;

use super::metric_estimators::{MetricChange, MetricEstimator};
use super::schedule::WarmupSchedule;
use super::{DualAveraging, DualAveragingSettings};
use crate::error::Error;
use crate::in_place::ZeroValid;
use crate::real::Real;
use crate::samplers::nuts::{Nuts, NutsSettings, NutsStats};
use crate::target::Potential;

/// NUTS plus its warm-up: call [`step`](Self::step) once per draw and keep
/// the draws for which [`is_warming_up`](Self::is_warming_up) was `false`
/// before the call.
///
/// ```
/// use qnmc::adaptation::{AdaptiveNuts, DiagonalEstimator, WarmupSchedule};
/// use qnmc::metric::DiagonalMetric;
/// use qnmc::{NutsSettings, Potential};
/// use rand_core::SeedableRng;
///
/// /// N(0, diag(1, 10⁴)): badly scaled.
/// struct Scaled;
/// impl Potential<f64, 2> for Scaled {
///     fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
///         *g = [x[0], x[1] * 1e-4];
///         0.5 * (x[0] * x[0] + x[1] * x[1] * 1e-4)
///     }
/// }
///
/// let mut chain = AdaptiveNuts::<f64, 2, _>::new(
///     NutsSettings::new(1.0),
///     WarmupSchedule::stan(500).unwrap(),
///     DiagonalMetric::identity(),
///     DiagonalEstimator::new(),
///     [1.0, 1.0],
///     &Scaled,
/// )
/// .unwrap();
/// let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(11);
/// let mut sum_sq = 0.0;
/// for _ in 0..2500 {
///     let kept = !chain.is_warming_up();
///     chain.step(&Scaled, &mut rng);
///     if kept {
///         sum_sq += chain.position()[1] * chain.position()[1] / 2000.0;
///     }
/// }
/// // The learned metric follows the scales, and the variance 10⁴ is recovered.
/// let learned = chain.sampler().metric().variances()[1];
/// assert!(learned > 2e3 && learned < 5e4, "{learned}");
/// assert!((sum_sq / 1e4 - 1.0).abs() < 0.25, "{sum_sq}");
/// ```
#[derive(Debug, Clone)]
pub struct AdaptiveNuts<
    T: Real,
    const D: usize,
    E: MetricEstimator<T, D>,
    const MAX_DEPTH: usize = 10,
> {
    nuts: Nuts<T, D, E::Metric, MAX_DEPTH>,
    estimator: E,
    schedule: WarmupSchedule,
    dual: DualAveraging<T>,
    draws: u64,
    metric_updates: u32,
    metric_update_failures: u32,
    warmup_gradient_evaluations: u64,
    jitter: T,
    final_step_size: T,
    statistic: AcceptanceStatistic,
    /// Consecutive slow windows that kept the metric and were quiet (no
    /// divergence, no tree at the maximum depth).
    windows_kept_in_a_row: u32,
    /// Draws of the current slow window that diverged or reached the maximum
    /// tree depth, except in the first draws after dual averaging restarted.
    window_troubled_draws: u32,
    /// Draws of the current slow window that diverged, except in the first
    /// draws after dual averaging restarted.
    window_divergent_draws: u32,
    /// Draws of the current slow window, except in the first draws after dual
    /// averaging restarted.
    window_counted_draws: u32,
    /// δ for the terminal buffer when the last slow window diverged (zero:
    /// keep δ; [`set_divergence_target`](Self::set_divergence_target)).
    divergence_target: T,
    /// End the slow windows after this many kept in a row (0: never).
    early_end_after: u32,
    /// Last warm-up draw (the schedule's, or earlier after an early end).
    warmup_end: u64,
    /// The slow windows are over (early end): no more estimates.
    slow_windows_over: bool,
    /// The warm-up was extended by one terminal buffer at the divergence
    /// target (at most once).
    warmup_extended: bool,
    /// Over the terminal buffer's draws (exploration aside), the moving
    /// average (weight [`STEP_SIZE_FALL_WEIGHT`] on the newest) of
    /// ln(averaged step size / dual averaging's iterate): how far the step
    /// size of the latest draws fell below the one the kept draws will use.
    terminal_step_size_fall: T,
    /// What precedes the first warm-up draw has run
    /// ([`prepare_warmup`](AdaptiveNuts::prepare_warmup)).
    prepared: bool,
    /// Refresh the metric from the latest draws every this many draws of
    /// the initial buffer, in a chain that starts where it was (0: never;
    /// [`set_early_refresh`](Self::set_early_refresh)).
    early_refresh_every: u64,
    /// The early refreshes run on draws before this one (0: none).
    early_until: u64,
    /// An early refresh changed the metric (the first one restarts dual
    /// averaging).
    early_refreshed: bool,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize, E: MetricEstimator<T, D> + ZeroValid, const MAX_DEPTH: usize]
    AdaptiveNuts<T, D, E, MAX_DEPTH> where [E::Metric: ZeroValid] {
    nuts, estimator, schedule, dual, draws, metric_updates, metric_update_failures,
    warmup_gradient_evaluations, jitter, final_step_size, statistic, windows_kept_in_a_row,
    early_end_after, warmup_end, slow_windows_over, window_troubled_draws,
    window_divergent_draws, window_counted_draws, divergence_target, warmup_extended,
    terminal_step_size_fall, prepared, early_refresh_every, early_until, early_refreshed
});

/// Draws after a (re)start of dual averaging whose divergences and deep trees
/// do not make a window troubled: Stan's t₀ = 10, the iterations over which
/// dual averaging damps its first, exploratory step sizes.
const STEP_SIZE_EXPLORATION_DRAWS: u64 = 10;

/// The last slow window "diverged" for
/// [`AdaptiveNuts::set_divergence_target`] when at least 1 in this many of its
/// draws (the first after a restart of dual averaging aside), and at least
/// two, diverged. posteriordb (43 posteriors, 2 seeds, 4 chains): the latent
/// Gaussian process gp_pois_regr diverged in 9–17 of the last window's draws
/// in every chain (it failed its z-tests on 2 of 10 seeds at δ = 0.8, none
/// at 0.95); 309 of the 344 chains did not diverge there, and of the others
/// all but one diverged at most 7 times.
pub const DIVERGENCE_RATE: u64 = 50;

/// The terminal buffer's step size "fell" when, at its end, dual
/// averaging's iterates (the step sizes of its last draws) lie below the
/// averaged step size the kept draws will use by more than this factor, as
/// a moving geometric mean ([`STEP_SIZE_FALL_WEIGHT`]): the chain has moved
/// where the averaged step size may no longer fit (a funnel's neck). Then
/// [`STUCK_PROBES`] transitions at the averaged step size are tried, and if
/// none accepts ([`STUCK_ACCEPTANCE`]),
/// [`AdaptiveNuts::set_divergence_target`] extends the warm-up by one
/// terminal buffer at δ. Issue 44's suite: a chain that entered
/// the neck in the last 15–25 warm-up draws (iterates 0.11–0.2 against an
/// average of 0.34 in centred eight schools, 0.04–0.05 against 0.29 in the
/// hierarchical logistic regression) then had every kept transition's
/// first leapfrog step rejected or divergent, for all its kept draws.
/// Outside a neck the iterate saws around the average (÷3 after a draw of
/// low acceptance, then ×1.35 per draw), within a factor of about 1.3 on
/// geometric average.
pub const STEP_SIZE_FALL: f64 = 1.5;

/// Weight of the newest draw in the moving average of [`STEP_SIZE_FALL`]:
/// the last 10 draws carry 89 % of it.
pub const STEP_SIZE_FALL_WEIGHT: f64 = 0.2;

/// Transitions at the averaged step size tried where a terminal buffer's
/// step size fell ([`STEP_SIZE_FALL`]) before the warm-up ends.
pub const STUCK_PROBES: u32 = 3;

/// A chain is stuck at a step size when none of [`STUCK_PROBES`]
/// transitions reaches this acceptance statistic. The frozen chains of
/// issue 44's suite had 10⁻¹⁰⁰–10⁻³ on every kept transition. On its
/// seeds 1–20 (5 targets) [`STEP_SIZE_FALL`] fired in 15 of 100 runs;
/// the probes found 5 chains stuck, among them the 3 that had frozen a
/// whole run, and moved in the others, whose warm-up ended as before
/// (docs/NUTS.md, "A chain that ends its warm-up in a neck").
pub const STUCK_ACCEPTANCE: f64 = 0.1;

/// Which per-draw acceptance statistic dual averaging drives to its target δ.
/// (`repr(u8)`, `Stan` = 0: all-zero bytes are `Stan`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum AcceptanceStatistic {
    /// Stan's mean of min(1, e^(H₀−H)) ([`NutsStats::acceptance_statistic`]).
    #[default]
    Stan = 0,
    /// The symmetric (Barker) mean 2·min(1, e^(H₀−H))/(1 + e^(H₀−H))
    /// ([`NutsStats::symmetric_acceptance_statistic`]), which nuts-rs adapts
    /// to. At the same δ it allows a larger step size than Stan's statistic
    /// on near-Gaussian targets.
    Symmetric,
}

// SAFETY: `repr(u8)` and `Stan = 0`: the zero byte is `Stan`.
#[allow(unsafe_code)]
unsafe impl ZeroValid for AcceptanceStatistic {}

crate::saved_state::saved_enum!(AcceptanceStatistic { Stan, Symmetric });

/// The largest [`AdaptiveNuts`] that [`AdaptiveNuts::new`] builds (bytes,
/// `size_of`); a larger one is refused at compile time. A debug build
/// needs about five times the sampler's size of stack to build it by value
/// (2 MB for the default f64 sampler at D = 100, 387 KB, which overflowed a
/// default 2 MiB thread), so 256 KiB keeps that within 1.3 MB. The default
/// quasi-Newton sampler (f64, M = 20) fits up to D = 25 (234 KB); the
/// diagonal one up to D = 400 or so.
///
/// ```compile_fail
/// use qnmc::NutsSettings;
/// use qnmc::adaptation::{AdaptiveNuts, LbfgsEstimator, WarmupSchedule};
/// use qnmc::metric::LbfgsMetric;
/// # struct Bowl;
/// # impl qnmc::Potential<f64, 100> for Bowl {
/// #     fn potential_and_gradient(&self, x: &[f64; 100], g: &mut [f64; 100]) -> f64 {
/// #         g.copy_from_slice(x);
/// #         x.iter().map(|v| 0.5 * v * v).sum()
/// #     }
/// # }
/// // The default sampler at D = 100 (387 KB): refused; use new_boxed.
/// let chain = AdaptiveNuts::<f64, 100, LbfgsEstimator<f64, 100, 20>>::new(
///     NutsSettings::new(0.1),
///     WarmupSchedule::stan(500).unwrap(),
///     LbfgsMetric::identity(),
///     LbfgsEstimator::new(0.0).unwrap(),
///     [0.5; 100],
///     &Bowl,
/// );
/// ```
pub const NEW_MAX_BYTES: usize = 256 * 1024;

impl<T: Real, const D: usize, E: MetricEstimator<T, D>, const MAX_DEPTH: usize>
    AdaptiveNuts<T, D, E, MAX_DEPTH>
{
    /// NUTS with `settings` (its step size is the first guess), started at
    /// `initial_position` with `metric`, which `estimator` initialises and then
    /// tunes over `schedule`.
    ///
    /// The sampler is returned by value, so it is built on the stack: a
    /// sampler larger than [`NEW_MAX_BYTES`] does not compile here (the
    /// error names `new_boxed` (feature `alloc`) and
    /// [`init_in_place`](Self::init_in_place), which build it where it
    /// lives).
    pub fn new<P: Potential<T, D>>(
        settings: NutsSettings<T>,
        schedule: WarmupSchedule,
        metric: E::Metric,
        mut estimator: E,
        initial_position: [T; D],
        target: &P,
    ) -> Result<Self, Error> {
        const {
            assert!(
                core::mem::size_of::<Self>() <= NEW_MAX_BYTES,
                "this AdaptiveNuts is too large to build on the stack with AdaptiveNuts::new \
                 (a debug build keeps about five copies of it there): build it where it lives \
                 with AdaptiveNuts::new_boxed (feature alloc) or AdaptiveNuts::init_in_place"
            )
        };
        let mut nuts = Nuts::new(settings, metric, initial_position, target)?;
        let (position, gradient) = (*nuts.position(), *nuts.gradient());
        if schedule.warmup_draws() > 0 {
            estimator.initialize(&position, &gradient, nuts.metric_mut())?;
        }
        let dual = DualAveraging::new(DualAveragingSettings::stan(settings.step_size))?;
        Ok(AdaptiveNuts {
            nuts,
            estimator,
            schedule,
            dual,
            draws: 0,
            metric_updates: 0,
            metric_update_failures: 0,
            warmup_gradient_evaluations: 0,
            jitter: T::ZERO,
            final_step_size: settings.step_size,
            statistic: AcceptanceStatistic::Stan,
            windows_kept_in_a_row: 0,
            window_troubled_draws: 0,
            window_divergent_draws: 0,
            window_counted_draws: 0,
            divergence_target: T::ZERO,
            early_end_after: 0,
            warmup_end: schedule.warmup_draws(),
            slow_windows_over: false,
            warmup_extended: false,
            terminal_step_size_fall: T::ZERO,
            prepared: false,
            early_refresh_every: 0,
            early_until: 0,
            early_refreshed: false,
        })
    }

    /// In place, the state of [`new`](Self::new) with `settings`, `schedule`,
    /// an estimator built with `estimator` (its [`MetricEstimator::Settings`])
    /// and the metric it starts from (the identity), at `initial_position`:
    /// a new chain in the same storage, nothing of the sampler copied onto
    /// the stack. The acceptance statistic, target acceptance, jitter and
    /// early end return to their defaults. On an invalid setting nothing
    /// changes; if the start is not finite for the target, the estimator
    /// and metric may already be reset (the sampler stays usable).
    pub fn reset<P: Potential<T, D>>(
        &mut self,
        settings: NutsSettings<T>,
        schedule: WarmupSchedule,
        estimator: E::Settings,
        initial_position: &[T; D],
        target: &P,
    ) -> Result<(), Error> {
        settings.validate(MAX_DEPTH)?;
        let dual = DualAveraging::new(DualAveragingSettings::stan(settings.step_size))?;
        self.estimator.reset(estimator, self.nuts.metric_mut())?;
        self.estimator.set_dimension(self.nuts.dimension());
        self.nuts.reset(settings, initial_position, target)?;
        if schedule.warmup_draws() > 0 {
            let (position, gradient, metric) = self.nuts.state_and_metric_mut();
            self.estimator.initialize(position, gradient, metric)?;
        }
        self.schedule = schedule;
        self.dual = dual;
        self.draws = 0;
        self.metric_updates = 0;
        self.metric_update_failures = 0;
        self.warmup_gradient_evaluations = 0;
        self.jitter = T::ZERO;
        self.final_step_size = settings.step_size;
        self.statistic = AcceptanceStatistic::Stan;
        self.windows_kept_in_a_row = 0;
        self.window_troubled_draws = 0;
        self.window_divergent_draws = 0;
        self.window_counted_draws = 0;
        self.divergence_target = T::ZERO;
        self.early_end_after = 0;
        self.warmup_end = schedule.warmup_draws();
        self.slow_windows_over = false;
        self.warmup_extended = false;
        self.terminal_step_size_fall = T::ZERO;
        self.prepared = false;
        self.early_refresh_every = 0;
        self.early_until = 0;
        self.early_refreshed = false;
        Ok(())
    }

    /// Samples only the first `n` coordinates (1 ≤ n ≤ D; call before the
    /// first draw): [`Nuts::set_dimension`], and the estimator's statistics
    /// over coordinates use those n only
    /// ([`MetricEstimator::set_dimension`]). The warm-up then costs what
    /// dimension n costs, and with a metric estimator of this crate the chain
    /// is bit for bit the chain of a sampler of size n. [`reset`](Self::reset)
    /// keeps the dimension. On error nothing changes. (Feature
    /// `runtime-dimension`.)
    #[cfg(feature = "runtime-dimension")]
    pub fn set_dimension(&mut self, n: usize) -> Result<(), Error> {
        self.nuts.set_dimension(n)?;
        self.estimator.set_dimension(n);
        Ok(())
    }

    /// Sets the target acceptance δ of dual averaging (Stan: 0.8); call before
    /// the first draw.
    pub fn set_target_acceptance(&mut self, delta: T) -> Result<(), Error> {
        let mut settings = *self.dual.settings();
        settings.target_acceptance = delta;
        settings.initial_step_size = self.nuts.settings().step_size;
        self.dual = DualAveraging::new(settings)?;
        Ok(())
    }

    /// When the last slow window diverged (at least 1 in [`DIVERGENCE_RATE`]
    /// of its draws and at least two, the first 10 after dual averaging
    /// restarted aside), adapt the step size of the terminal
    /// buffer — the one the kept draws use — to the target acceptance
    /// `delta` instead of δ, if `delta` is larger, restarting dual averaging
    /// from the current step size: what a Stan user does by hand on seeing
    /// divergences (raising `adapt_delta`). When instead the terminal buffer
    /// itself diverges that often (after an early end no slow window is left
    /// to see it), the warm-up goes on for one more terminal buffer at
    /// `delta`; when instead the buffer's step size fell in its last draws
    /// and the chain cannot move at the averaged step size
    /// ([`STEP_SIZE_FALL`]), for one more terminal buffer at δ (either once;
    /// [`warmup_draws`](Self::warmup_draws) then says how long it was). `None` (the default) never
    /// changes δ; `delta` outside (0, 1) is an error and changes nothing.
    /// Call before the first draw.
    pub fn set_divergence_target(&mut self, delta: Option<T>) -> Result<(), Error> {
        self.divergence_target = match delta {
            None => T::ZERO,
            Some(d) if d.is_finite() && d > T::ZERO && d < T::ONE => d,
            Some(_) => return Err(Error::invalid("divergence target acceptance", "in (0, 1)")),
        };
        Ok(())
    }

    /// Sets the step size of the next draws (during warm-up the adaptation
    /// overrides it after the next draw); on error nothing changes.
    pub fn set_step_size(&mut self, step_size: T) -> Result<(), Error> {
        self.nuts.set_step_size(step_size)
    }

    /// Chooses the acceptance statistic the step size is adapted to (default
    /// [`AcceptanceStatistic::Stan`]).
    pub fn set_acceptance_statistic(&mut self, statistic: AcceptanceStatistic) {
        self.statistic = statistic;
    }

    /// After warm-up, draw each step size uniformly on ((1 − j)ε̄, (1 + j)ε̄]
    /// (`jitter` = j ∈ [0, 1); one uniform per draw, only when j > 0), as
    /// Stan's `stepsize_jitter` and nuts-rs (j = 0.1) do: a step size drawn
    /// independently of the state keeps every kept draw exact, and it keeps a
    /// trajectory length from sitting on a tree-depth boundary. Default 0.
    pub fn set_jitter(&mut self, jitter: T) -> Result<(), Error> {
        if !(jitter.is_finite() && jitter >= T::ZERO && jitter < T::ONE) {
            return Err(Error::invalid("jitter", "in [0, 1)"));
        }
        self.jitter = jitter;
        Ok(())
    }

    /// In the initial buffer of a chain that starts where it was (no
    /// optimisation, or one that refused what it reached, as in a centred
    /// hierarchy), set the metric every `every` draws from the latest draws
    /// ([`MetricEstimator::refresh_early`]; 0, the default: never), instead
    /// of keeping the first guess 1/|∂ᵢU| at the start until the first slow
    /// window ends. The first refresh that changes the metric restarts dual
    /// averaging from a step size found for it. Call before the first draw.
    pub fn set_early_refresh(&mut self, every: u64) {
        self.early_refresh_every = every;
    }

    /// Ends the warm-up early once `windows` consecutive slow windows have kept
    /// the metric (the estimator found nothing better than the metric in
    /// force) and were quiet — no draw of the window diverged or reached the
    /// maximum tree depth, except in the first 10 draws after dual averaging
    /// restarted (its exploratory step sizes): the remaining slow windows
    /// are skipped and only the terminal buffer follows. 0 (the default)
    /// never ends early. Call before the first
    /// draw; [`is_warming_up`](Self::is_warming_up) and
    /// [`warmup_draws`](Self::warmup_draws) then tell where the warm-up ended.
    pub fn set_early_end(&mut self, windows: u32) {
        self.early_end_after = windows;
    }

    /// Warm-up draws: the schedule's, fewer after an early end, or one
    /// terminal buffer more after a diverging terminal buffer
    /// ([`set_divergence_target`](Self::set_divergence_target)); final only
    /// once the warm-up is over.
    pub fn warmup_draws(&self) -> u64 {
        self.warmup_end
    }

    /// The step size fixed at the end of warm-up (the initial one before).
    pub fn final_step_size(&self) -> T {
        self.final_step_size
    }

    /// `true` while the next draw is a warm-up draw (to be discarded).
    pub fn is_warming_up(&self) -> bool {
        self.draws < self.warmup_end
    }

    /// What precedes the first warm-up draw, if it has not run yet since
    /// [`new`](Self::new) or [`reset`](Self::reset): the estimator's
    /// optimisation (the L-BFGS start of [`LbfgsEstimator`](super::LbfgsEstimator),
    /// which moves the chain to its start), then the search for a first step
    /// size. [`step`](Self::step) calls it; call it before the first draw to
    /// look at the start (e.g. [`LbfgsEstimator::laplace_log_mass`](super::LbfgsEstimator::laplace_log_mass)
    /// through [`estimator`](Self::estimator)), or to start again with
    /// [`reset`](Self::reset) elsewhere. Its gradients are counted in
    /// [`warmup_gradient_evaluations`](Self::warmup_gradient_evaluations).
    /// Without warm-up draws it does nothing.
    pub fn prepare_warmup<P: Potential<T, D>, R: Rng + ?Sized>(&mut self, target: &P, rng: &mut R) {
        if self.prepared || self.draws > 0 || self.schedule.warmup_draws() == 0 {
            return;
        }
        self.prepared = true;
        self.optimize_start(target, rng);
        self.restart_step_size(target, rng);
    }

    /// A step size for a new metric, or for the first one: Stan's heuristic
    /// ([`Nuts::find_reasonable_step_size`]) from the sampler's current step
    /// size, its gradients counted in the warm-up's, and dual averaging
    /// restarted from what it found. Returns that step size.
    fn restart_step_size<P: Potential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> T {
        let (eps, evaluations) = self.nuts.find_reasonable_step_size(target, rng);
        self.warmup_gradient_evaluations += evaluations as u64;
        let _ = self.dual.restart(eps);
        eps
    }

    /// `true` if none of [`STUCK_PROBES`] transitions at `step_size` from the
    /// current state reaches an acceptance statistic of
    /// [`STUCK_ACCEPTANCE`]: the kept draws would not move. The probes are
    /// warm-up draws (the chain moves if they accept), their gradients
    /// counted in the warm-up's.
    fn stuck_at<P: Potential<T, D>, R: Rng + ?Sized>(
        &mut self,
        step_size: T,
        target: &P,
        rng: &mut R,
    ) -> bool {
        if self.nuts.set_step_size(step_size).is_err() {
            return false;
        }
        for _ in 0..STUCK_PROBES {
            let stats = self.nuts.step(target, rng);
            self.warmup_gradient_evaluations += stats.gradient_evaluations as u64;
            if stats.acceptance_statistic >= T::from_f64(STUCK_ACCEPTANCE) {
                return false;
            }
        }
        true
    }

    /// At least 1 in [`DIVERGENCE_RATE`] of the counted draws of the window
    /// in force (a slow window, or the terminal buffer) diverged, and at
    /// least two.
    fn window_diverged(&self) -> bool {
        self.window_divergent_draws >= 2
            && u64::from(self.window_divergent_draws) * DIVERGENCE_RATE
                >= u64::from(self.window_counted_draws)
    }

    /// The estimator's optional optimisation before the first warm-up draw
    /// (e.g. L-BFGS for the quasi-Newton metric); a start it proposes that is
    /// not finite for the target is ignored.
    fn optimize_start<P: Potential<T, D>, R: Rng + ?Sized>(&mut self, target: &P, rng: &mut R) {
        let mut normals = [T::ZERO; D];
        let n = self.nuts.dimension();
        crate::random::fill_standard_normal(rng, &mut normals[..n]);
        let position = *self.nuts.position();
        let mut stayed = true;
        if let Some((start, evaluations)) = self.estimator.initialize_by_optimization(
            target,
            &position,
            &normals,
            self.nuts.metric_mut(),
        ) {
            self.warmup_gradient_evaluations += evaluations as u64 + 1;
            stayed = start == position;
            let _ = self.nuts.set_position(&start, target);
        }
        if stayed && self.early_refresh_every > 0 {
            self.early_until = self.schedule.initial_buffer() + 1;
        }
    }

    /// The sampler (state, metric, settings).
    pub fn sampler(&self) -> &Nuts<T, D, E::Metric, MAX_DEPTH> {
        &self.nuts
    }

    /// The current state θ.
    pub fn position(&self) -> &[T; D] {
        self.nuts.position()
    }

    /// The estimator.
    pub fn estimator(&self) -> &E {
        &self.estimator
    }

    /// Draws so far (warm-up included).
    pub fn draws(&self) -> u64 {
        self.draws
    }

    /// Slow windows that ended with a usable estimate (the metric replaced,
    /// or kept as [`MetricChange::Kept`] by an estimator that may keep it),
    /// and windows whose estimate was refused (an error: the old metric
    /// stayed).
    pub fn metric_updates(&self) -> (u32, u32) {
        (self.metric_updates, self.metric_update_failures)
    }

    /// Gradient evaluations of the warm-up: its draws and the step-size
    /// searches.
    pub fn warmup_gradient_evaluations(&self) -> u64 {
        self.warmup_gradient_evaluations
    }
}

mod in_place;
mod step;

#[cfg(test)]
mod tests;
