//! Dual averaging of the step size (Hoffman & Gelman 2014, §3.2 and
//! Algorithm 5), with Stan's defaults and clamps (the module docs of
//! [`adaptation`](crate::adaptation) give the recursion), and the step-size
//! jitter.

use rand_core::Rng;

use crate::error::{Error, require_positive};
use crate::real::Real;

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
