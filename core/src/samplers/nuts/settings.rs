//! [`NutsSettings`], what the sampler is told, and [`NutsStats`], what one
//! draw reports.

#[cfg(doc)]
use super::Nuts;
use crate::error::{Error, require_positive};
use crate::real::Real;
use crate::stats::StepStats;

/// Stan's default maximum tree depth.
pub const DEFAULT_MAX_TREE_DEPTH: u32 = 10;

/// Settings of [`Nuts`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NutsSettings<T> {
    /// Leapfrog step size ε > 0.
    pub step_size: T,
    /// At most 2^depth − 1 leapfrog steps per draw; 1 ≤ depth ≤ the sampler's
    /// const `MAX_DEPTH`.
    pub max_tree_depth: u32,
    /// An energy error H − H₀ above this (> 0) is a divergence (Stan: 1000).
    pub max_energy_error: T,
}

crate::in_place::zero_valid!(impl[T: Real] NutsSettings<T> { step_size, max_tree_depth, max_energy_error });

impl<T: Real> NutsSettings<T> {
    /// Step size ε, Stan's maximum depth 10 and divergence threshold 1000.
    pub fn new(step_size: T) -> Self {
        NutsSettings {
            step_size,
            max_tree_depth: DEFAULT_MAX_TREE_DEPTH,
            max_energy_error: T::from_f64(1000.0),
        }
    }

    /// Checks every setting against a sampler whose storage holds trees of
    /// depth at most `max_depth_bound`.
    pub fn validate(&self, max_depth_bound: usize) -> Result<(), Error> {
        require_positive(self.step_size, "step_size")?;
        if self.max_tree_depth == 0 || self.max_tree_depth as usize > max_depth_bound {
            return Err(Error::invalid(
                "max_tree_depth",
                ">= 1 and at most the const MAX_DEPTH",
            ));
        }
        require_positive(self.max_energy_error, "max_energy_error")
    }
}

/// What happened during one NUTS draw (Stan's sampler diagnostics).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct NutsStats<T> {
    /// Valid doublings of the trajectory (Stan's `treedepth__`).
    pub tree_depth: u32,
    /// Leapfrog steps taken (Stan's `n_leapfrog__`).
    pub leapfrog_steps: u32,
    /// Target evaluations (leapfrog steps whose position was finite).
    pub gradient_evaluations: u32,
    /// Mean over the leapfrog steps of min(1, exp(H₀ − H)) (Stan's
    /// `accept_stat__`, what dual averaging targets).
    pub acceptance_statistic: T,
    /// Mean over the leapfrog steps of the symmetric (Barker) acceptance
    /// 2·min(1, e^(H₀−H)) / (1 + e^(H₀−H)), which penalises energy errors of
    /// either sign (nuts-rs adapts its step size to this one); 0 for a
    /// divergent step.
    pub symmetric_acceptance_statistic: T,
    /// H = U + ½pᵀM⁻¹p of the new state with the momentum it had on the
    /// trajectory (the momentum drawn at the start when the state did not
    /// move): Stan's `energy__`, U being the target's potential (−log density,
    /// Jacobians included when the target has them).
    pub energy: T,
    /// H(new state) − H₀.
    pub energy_error: T,
    /// A leapfrog step reached an energy error above the threshold or a
    /// non-finite state; the trajectory stopped there.
    pub divergent: bool,
    /// The tree reached the maximum depth without a U-turn or divergence.
    pub reached_max_depth: bool,
    /// The new state differs from the old one.
    pub moved: bool,
    /// The step size used.
    pub step_size: T,
}

impl<T: Real> NutsStats<T> {
    /// The same draw as the [`StepStats`] every sampler reports (for
    /// [`Warmup`](crate::Warmup)): `acceptance_probability` is the acceptance
    /// statistic, `accepted` whether the state moved.
    pub fn step_stats(&self) -> StepStats<T> {
        StepStats {
            accepted: self.moved,
            acceptance_probability: self.acceptance_statistic,
            energy_error: self.energy_error,
            divergent: self.divergent,
            gradient_evaluations: self.gradient_evaluations,
            pairs_skipped: 0,
            step_size: self.step_size,
            energy: Some(self.energy),
        }
    }
}

impl<T: Real> From<NutsStats<T>> for StepStats<T> {
    fn from(stats: NutsStats<T>) -> StepStats<T> {
        stats.step_stats()
    }
}
