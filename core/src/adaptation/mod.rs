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
//! [`Warmup`] drives any [`Sampler`](crate::Sampler) whose step size is free (every one but
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
//!
//! # Files
//!
//! - `dual_averaging.rs`: [`DualAveraging`] and the step-size jitter;
//! - `warmup.rs`: [`Warmup`], the step-size warm-up of any
//!   [`Sampler`](crate::Sampler);
//! - `schedule.rs`: [`WarmupSchedule`], Stan's warm-up windows;
//! - `welford.rs`: running means, variances and covariances;
//! - `metric_estimators.rs`: [`MetricEstimator`] and the identity, diagonal
//!   and dense estimators;
//! - `quasi_newton/`: [`LbfgsEstimator`], the quasi-Newton metric, and its
//!   pieces: the L-BFGS start it and [`LbfgsStartDiagonalEstimator`] share,
//!   the window's covariance pairs, the streamed covariance product, the
//!   shrinkage of a diagonal's log scales;
//! - `nuts_warmup/`: [`AdaptiveNuts`], NUTS with the windowed warm-up.
//!
//! A warm-up changes a sampler only through its public setters
//! (`set_step_size`, `metric_mut`, `set_position`), so this layer may use
//! the samplers and every layer they use. The tests that need every sampler
//! are here too: `saved_state_tests.rs` (a restored chain continues bit for
//! bit) and `dimension_tests.rs` ([`AdaptiveNuts`] at a run-time dimension).

#[cfg(all(test, feature = "runtime-dimension"))]
mod dimension_tests;
mod dual_averaging;
mod metric_estimators;
mod nuts_warmup;
mod quasi_newton;
#[cfg(test)]
mod saved_state_tests;
mod schedule;
mod warmup;
mod welford;

pub use dual_averaging::{DualAveraging, DualAveragingSettings, jittered_step_size};
pub use metric_estimators::{
    DenseEstimator, DiagonalEstimator, IdentityEstimator, MetricChange, MetricEstimator,
};
pub use nuts_warmup::{
    AcceptanceStatistic, AdaptiveNuts, DIVERGENCE_RATE, NEW_MAX_BYTES, STEP_SIZE_FALL,
    STEP_SIZE_FALL_WEIGHT, STUCK_ACCEPTANCE, STUCK_PROBES,
};
pub use quasi_newton::{
    DEFAULT_RANK_TOLERANCE, LbfgsEstimator, LbfgsEstimatorSettings, LbfgsStartDiagonalEstimator,
    MIN_GRADIENT_LINEARITY,
};
pub use schedule::WarmupSchedule;
pub use warmup::Warmup;
pub use welford::{Welford, WelfordCovariance};
