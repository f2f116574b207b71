//! Step-size adaptation by dual averaging (Hoffman & Gelman 2014, §3.2 and
//! Algorithm 5 of "The No-U-Turn Sampler"), with Stan's defaults, and a warm-up
//! driver that fixes the step size after warm-up.
//!
//! [`DualAveraging`] is a plain state machine the caller feeds with one
//! acceptance probability αₘ per draw. With μ = ln(10 ε₀), H̄₀ = 0, x̄₀ = 0:
//!
//! ```text
//! ηₘ = 1/(m + t₀)
//! H̄ₘ = (1 − ηₘ) H̄ₘ₋₁ + ηₘ (δ − αₘ)
//! xₘ = μ − (√m / γ) H̄ₘ                     next step size εₘ = exp(xₘ)
//! x̄ₘ = m^(−κ) xₘ + (1 − m^(−κ)) x̄ₘ₋₁       final step size ε̄ = exp(x̄ₘ)
//! ```
//!
//! exactly as Stan's `stepsize_adaptation::learn_stepsize` (α > 1 is clipped to
//! 1; a NaN α, e.g. of a divergence, counts as 0). Defaults ([`DualAveragingSettings::stan`]):
//! δ = 0.8, γ = 0.05, t₀ = 10, κ = 0.75. To keep ε finite and positive in `f32`
//! as well, xₘ and x̄ₘ are clamped to [−80, 80] (ε ∈ [1.8·10⁻³⁵, 5.5·10³⁴]);
//! the clamp never acts on a sensible run.
//!
//! [`Warmup`] drives any [`Sampler`] whose step size is free (every one but
//! HAMCMC, whose step size follows its schedule): after each of the first n
//! draws it feeds the draw's
//! acceptance probability to the dual averaging and sets the next step size
//! exp(xₘ); after draw n it sets ε̄ = exp(x̄ₙ) for good. Draws after warm-up then
//! come from a fixed, exact kernel (for [`Qnhmc`](crate::Qnhmc) also set
//! `MemoryUpdate::FreezeAfter(n)`, so the sampler freezes its memory at the same
//! draw). Optional jitter multiplies every step size the driver sets by
//! (1 + j(2u − 1)), u uniform on (0, 1] drawn from the caller's generator — one
//! uniform per call, only when j > 0 — i.e. uniform on (1 − j, 1 + j] × ε, as
//! Stan's `stepsize_jitter`. A step size drawn independently of the state
//! leaves each kept draw exact (a mixture of π-invariant kernels).
//!
//! Adaptation is not exact: the warm-up draws must be discarded.

mod covariance_product;
#[cfg(all(test, feature = "runtime-dimension"))]
mod dimension_tests;
mod lbfgs_estimator;
mod lbfgs_start;
mod metric_estimators;
mod nuts_warmup;
#[cfg(test)]
mod saved_state_tests;
mod scale_shrinkage;
mod schedule;
mod welford;
mod window_covariance;

pub use lbfgs_estimator::{
    DEFAULT_RANK_TOLERANCE, LbfgsEstimator, LbfgsEstimatorSettings, MIN_GRADIENT_LINEARITY,
};
pub use lbfgs_start::LbfgsStartDiagonalEstimator;
pub use metric_estimators::{
    DenseEstimator, DiagonalEstimator, IdentityEstimator, MetricChange, MetricEstimator,
};
pub use nuts_warmup::{
    AcceptanceStatistic, AdaptiveNuts, DIVERGENCE_RATE, NEW_MAX_BYTES, STEP_SIZE_FALL,
    STEP_SIZE_FALL_WEIGHT, STUCK_ACCEPTANCE, STUCK_PROBES,
};
pub use schedule::WarmupSchedule;
pub use welford::{Welford, WelfordCovariance};

use rand_core::Rng;

use crate::error::{Error, require_positive};
use crate::real::Real;
use crate::samplers::Sampler;

/// Settings of [`DualAveraging`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DualAveragingSettings<T> {
    /// Initial step size ε₀ > 0; μ = ln(10 ε₀).
    pub initial_step_size: T,
    /// Target acceptance probability δ ∈ (0, 1).
    pub target_acceptance: T,
    /// Regularisation scale γ > 0.
    pub gamma: T,
    /// Iteration offset t₀ ≥ 0.
    pub t0: T,
    /// Averaging exponent κ ∈ (0, 1].
    pub kappa: T,
}

crate::in_place::zero_valid!(impl[T: Real] DualAveragingSettings<T> { initial_step_size, target_acceptance, gamma, t0, kappa });

impl<T: Real> DualAveragingSettings<T> {
    /// Stan's defaults: δ = 0.8, γ = 0.05, t₀ = 10, κ = 0.75.
    pub fn stan(initial_step_size: T) -> Self {
        DualAveragingSettings {
            initial_step_size,
            target_acceptance: T::from_f64(0.8),
            gamma: T::from_f64(0.05),
            t0: T::from_f64(10.0),
            kappa: T::from_f64(0.75),
        }
    }

    /// Checks every setting.
    pub fn validate(&self) -> Result<(), Error> {
        require_positive(self.initial_step_size, "initial_step_size")?;
        let d = self.target_acceptance;
        if !(d.is_finite() && d > T::ZERO && d < T::ONE) {
            return Err(Error::invalid("target_acceptance", "in (0, 1)"));
        }
        require_positive(self.gamma, "gamma")?;
        if !(self.t0.is_finite() && self.t0 >= T::ZERO) {
            return Err(Error::invalid("t0", "finite and >= 0"));
        }
        let k = self.kappa;
        if !(k.is_finite() && k > T::ZERO && k <= T::ONE) {
            return Err(Error::invalid("kappa", "in (0, 1]"));
        }
        Ok(())
    }
}

/// Bound on log ε (see the module documentation).
const LOG_STEP_BOUND: f64 = 80.0;

fn clamp_log<T: Real>(x: T) -> T {
    let bound = T::from_f64(LOG_STEP_BOUND);
    if x > bound {
        bound
    } else if x < -bound {
        -bound
    } else {
        x
    }
}

/// Dual-averaging step-size adaptation (Hoffman & Gelman 2014, Algorithm 5).
#[derive(Debug, Clone)]
pub struct DualAveraging<T> {
    settings: DualAveragingSettings<T>,
    mu: T,
    counter: u64,
    s_bar: T,
    x: T,
    x_bar: T,
}

crate::in_place::zero_valid!(impl[T: Real] DualAveraging<T> { settings, mu, counter, s_bar, x, x_bar });

impl<T: Real> DualAveraging<T> {
    /// Validates the settings and starts at ε₀.
    pub fn new(settings: DualAveragingSettings<T>) -> Result<Self, Error> {
        settings.validate()?;
        let x = settings.initial_step_size.ln();
        Ok(DualAveraging {
            settings,
            mu: (T::from_f64(10.0) * settings.initial_step_size).ln(),
            counter: 0,
            s_bar: T::ZERO,
            x,
            x_bar: T::ZERO,
        })
    }

    /// Restarts the adaptation from `step_size` (μ = ln(10 ε), all averages
    /// reset), as Stan does at the end of each warm-up window.
    pub fn restart(&mut self, step_size: T) -> Result<(), Error> {
        require_positive(step_size, "step_size")?;
        self.mu = (T::from_f64(10.0) * step_size).ln();
        self.counter = 0;
        self.s_bar = T::ZERO;
        self.x = step_size.ln();
        self.x_bar = T::ZERO;
        Ok(())
    }

    /// Feeds the acceptance probability of the last draw and returns the step
    /// size for the next one, exp(xₘ).
    pub fn update(&mut self, acceptance_probability: T) -> T {
        let a = if acceptance_probability.is_finite() {
            if acceptance_probability > T::ONE {
                T::ONE
            } else if acceptance_probability < T::ZERO {
                T::ZERO
            } else {
                acceptance_probability
            }
        } else if acceptance_probability > T::ZERO {
            // +∞: a certain acceptance.
            T::ONE
        } else {
            // NaN or −∞: a divergence.
            T::ZERO
        };
        self.counter = self.counter.saturating_add(1);
        let m = T::from_u64(self.counter);
        let s = &self.settings;
        let eta = T::ONE / (m + s.t0);
        self.s_bar = (T::ONE - eta) * self.s_bar + eta * (s.target_acceptance - a);
        self.x = clamp_log(self.mu - self.s_bar * m.sqrt() / s.gamma);
        let w = m.powf(-s.kappa);
        self.x_bar = clamp_log(w * self.x + (T::ONE - w) * self.x_bar);
        self.x.exp()
    }

    /// The step size for the next adaptation draw, exp(xₘ) (ε₀ before any update).
    pub fn step_size(&self) -> T {
        self.x.exp()
    }

    /// The averaged step size exp(x̄ₘ) to use after warm-up (ε₀ before any update).
    pub fn final_step_size(&self) -> T {
        if self.counter == 0 {
            self.settings.initial_step_size
        } else {
            self.x_bar.exp()
        }
    }

    /// Updates so far.
    pub fn iterations(&self) -> u64 {
        self.counter
    }

    /// The settings.
    pub fn settings(&self) -> &DualAveragingSettings<T> {
        &self.settings
    }
}

/// Draws ε·(1 + j(2u − 1)), u uniform on (0, 1]: one uniform from `rng`.
/// With j = 0 returns ε and draws nothing.
pub fn jittered_step_size<T: Real, R: Rng + ?Sized>(step_size: T, jitter: T, rng: &mut R) -> T {
    if jitter > T::ZERO {
        let u = T::uniform_open_closed(rng);
        step_size * (T::ONE + jitter * (T::TWO * u - T::ONE))
    } else {
        step_size
    }
}

/// Warm-up driver: dual averaging for the first n draws, then a fixed step size.
///
/// ```
/// use qnmc::adaptation::{DualAveragingSettings, Warmup};
/// use qnmc::{Hmc, HmcSettings, Potential};
/// use rand_core::SeedableRng;
/// # struct Iso;
/// # impl Potential<f64, 2> for Iso {
/// #     fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
/// #         *g = *x;
/// #         0.5 * (x[0] * x[0] + x[1] * x[1])
/// #     }
/// # }
/// let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(1);
/// let mut hmc = Hmc::new(HmcSettings::new(1.0, 5), [0.0; 2], &Iso).unwrap();
/// let mut warmup = Warmup::new(DualAveragingSettings::stan(1.0), 500, 0.0).unwrap();
/// warmup.start(&mut hmc, &mut rng).unwrap();
/// for _ in 0..1500 {
///     let stats = hmc.step(&Iso, &mut rng);
///     let kept = !warmup.is_adapting();
///     warmup.after_draw(&mut hmc, &stats, &mut rng).unwrap();
///     if kept { /* use hmc.position() */ }
/// }
/// assert!(!warmup.is_adapting());
/// ```
#[derive(Debug, Clone)]
pub struct Warmup<T> {
    dual: DualAveraging<T>,
    warmup_draws: u64,
    draws: u64,
    jitter: T,
    fixed: T,
    restart_draw: u64,
}

crate::in_place::zero_valid!(impl[T: Real] Warmup<T> { dual, warmup_draws, draws, jitter, fixed, restart_draw });

impl<T: Real> Warmup<T> {
    /// Dual averaging with `settings` for `warmup_draws` draws, then ε̄; every
    /// step size set is jittered by a factor uniform on (1 − j, 1 + j],
    /// `jitter` = j ∈ [0, 1).
    pub fn new(
        settings: DualAveragingSettings<T>,
        warmup_draws: u64,
        jitter: T,
    ) -> Result<Self, Error> {
        let dual = DualAveraging::new(settings)?;
        if !(jitter.is_finite() && jitter >= T::ZERO && jitter < T::ONE) {
            return Err(Error::invalid("jitter", "in [0, 1)"));
        }
        Ok(Warmup {
            dual,
            warmup_draws,
            draws: 0,
            jitter,
            fixed: settings.initial_step_size,
            restart_draw: 0,
        })
    }

    /// Restarts the dual averaging after warm-up draw `draw` (0 < `draw` <
    /// warm-up length; other values: no restart) from the averaged ε̄ reached
    /// so far, with μ = ln(10 ε̄) — Stan's window restart. Use it when the
    /// kernel changes during warm-up, e.g. a QNHMC memory frozen with
    /// `MemoryUpdate::FreezeAfter(draw)`: the final ε̄ then only averages
    /// draws of the frozen kernel.
    pub fn with_restart(mut self, draw: u64) -> Self {
        self.restart_draw = draw;
        self
    }

    /// Sets the sampler's step size to ε₀ (jittered) before the first draw.
    pub fn start<const D: usize, S: Sampler<T, D> + ?Sized, R: Rng + ?Sized>(
        &mut self,
        sampler: &mut S,
        rng: &mut R,
    ) -> Result<T, Error> {
        let eps = if self.warmup_draws == 0 || self.draws < self.warmup_draws {
            self.dual.step_size()
        } else {
            self.fixed
        };
        let eps = jittered_step_size(eps, self.jitter, rng);
        sampler.set_step_size(eps)?;
        Ok(eps)
    }

    /// Call once after every draw with that draw's statistics: adapts during
    /// warm-up, fixes ε̄ after the last warm-up draw, and sets the step size of
    /// the next draw (returned). On error (a step size the sampler refuses) the
    /// sampler keeps its old step size.
    pub fn after_draw<const D: usize, S: Sampler<T, D> + ?Sized, R: Rng + ?Sized>(
        &mut self,
        sampler: &mut S,
        stats: &crate::StepStats<T>,
        rng: &mut R,
    ) -> Result<T, Error> {
        let eps = if self.draws < self.warmup_draws {
            let mut next = self.dual.update(stats.acceptance_probability);
            self.draws += 1;
            if self.draws == self.restart_draw && self.draws < self.warmup_draws {
                next = self.dual.final_step_size();
                self.dual.restart(next)?;
            }
            if self.draws == self.warmup_draws {
                self.fixed = self.dual.final_step_size();
                self.fixed
            } else {
                next
            }
        } else {
            self.draws = self.draws.saturating_add(1);
            self.fixed
        };
        let eps = jittered_step_size(eps, self.jitter, rng);
        sampler.set_step_size(eps)?;
        Ok(eps)
    }

    /// `true` while the next draw is a warm-up draw (to be discarded).
    pub fn is_adapting(&self) -> bool {
        self.draws < self.warmup_draws
    }

    /// Draws seen so far.
    pub fn draws(&self) -> u64 {
        self.draws
    }

    /// The step size fixed after warm-up (ε₀ until warm-up ends).
    pub fn final_step_size(&self) -> T {
        self.fixed
    }

    /// The dual-averaging state.
    pub fn dual_averaging(&self) -> &DualAveraging<T> {
        &self.dual
    }
}
