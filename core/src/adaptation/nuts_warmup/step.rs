//! [`AdaptiveNuts::step`]: one draw and, during the warm-up, the window
//! bookkeeping and step-size restarts around it.

use rand_core::Rng;

use super::{
    AcceptanceStatistic, AdaptiveNuts, DualAveraging, MetricChange, MetricEstimator, NutsStats,
    STEP_SIZE_EXPLORATION_DRAWS, STEP_SIZE_FALL, STEP_SIZE_FALL_WEIGHT,
};
use crate::real::Real;
use crate::target::Potential;

impl<T: Real, const D: usize, E: MetricEstimator<T, D>, const MAX_DEPTH: usize>
    AdaptiveNuts<T, D, E, MAX_DEPTH>
{
    /// One draw, then one step of adaptation if it was a warm-up draw.
    pub fn step<P: Potential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> NutsStats<T> {
        self.prepare_warmup(target, rng);
        if !self.is_warming_up() {
            if self.jitter > T::ZERO {
                let eps =
                    crate::adaptation::jittered_step_size(self.final_step_size, self.jitter, rng);
                let _ = self.nuts.set_step_size(eps);
            }
            self.draws = self.draws.saturating_add(1);
            return self.nuts.step(target, rng);
        }
        let stats = self.nuts.step(target, rng);
        self.warmup_gradient_evaluations += stats.gradient_evaluations as u64;
        self.draws += 1;
        let draw = self.draws;
        // Trouble in the first draws after dual averaging (re)started is its
        // own exploration (its first iterate is about 10ε: on the 100-D
        // Gaussian the second draw after every restart diverged at ε ≈ 3–6),
        // not a sign of where the chain is.
        let exploring = self.dual.iterations() < STEP_SIZE_EXPLORATION_DRAWS;
        let slow = !self.slow_windows_over;
        let terminal = self.count_window_draw(&stats, draw, exploring, slow);
        let mut next = self.dual.update(match self.statistic {
            AcceptanceStatistic::Stan => stats.acceptance_statistic,
            AcceptanceStatistic::Symmetric => stats.symmetric_acceptance_statistic,
        });
        if terminal && !exploring {
            let w = T::from_f64(STEP_SIZE_FALL_WEIGHT);
            let fall = (self.dual.final_step_size() / next).ln();
            self.terminal_step_size_fall = (T::ONE - w) * self.terminal_step_size_fall + w * fall;
        } else {
            self.terminal_step_size_fall = T::ZERO;
        }
        if draw < self.early_until {
            next = self.early_refresh(draw, next, target, rng);
        }
        // The estimator borrows the state in place: copies of position and
        // gradient would cost 2·D numbers of stack each (16 KB at D = 1000).
        let nuts = &self.nuts;
        if slow && self.schedule.in_slow_window(draw) {
            self.estimator
                .observe(nuts.position(), nuts.gradient(), nuts.metric());
        }
        if slow && self.schedule.is_window_end(draw) {
            next = self.end_slow_window(draw, next, target, rng);
        }
        if draw == self.warmup_end {
            next = self.end_warmup(draw, next, target, rng);
        }
        let _ = self.nuts.set_step_size(next);
        stats
    }

    /// Counts warm-up draw number `draw` (with `stats`) in the window
    /// counters, which serve the slow window in force (while `slow`) and,
    /// once the slow windows are over, the terminal buffer; draws while dual
    /// averaging is `exploring` do not count. Returns whether the draw is in
    /// the terminal buffer.
    fn count_window_draw(
        &mut self,
        stats: &NutsStats<T>,
        draw: u64,
        exploring: bool,
        slow: bool,
    ) -> bool {
        let terminal_start = self
            .warmup_end
            .saturating_sub(self.schedule.terminal_buffer());
        let terminal = draw > terminal_start;
        let in_window = slow && self.schedule.in_slow_window(draw) && !terminal;
        if !exploring && (in_window || terminal) {
            self.window_counted_draws = self.window_counted_draws.saturating_add(1);
            if stats.divergent {
                self.window_divergent_draws = self.window_divergent_draws.saturating_add(1);
            }
        }
        if (stats.divergent || stats.reached_max_depth) && !exploring && in_window {
            self.window_troubled_draws = self.window_troubled_draws.saturating_add(1);
        }
        terminal
    }

    /// Draw `draw` of the initial buffer with early refreshes
    /// ([`set_early_refresh`](Self::set_early_refresh)): the estimator sees
    /// the state, and every `early_refresh_every` draws the metric is
    /// refreshed from the latest draws. Returns the step size of the next
    /// draw, `next` unless the first refresh that changed the metric
    /// restarted dual averaging from a step size found for it.
    fn early_refresh<P: Potential<T, D>, R: Rng + ?Sized>(
        &mut self,
        draw: u64,
        mut next: T,
        target: &P,
        rng: &mut R,
    ) -> T {
        let nuts = &self.nuts;
        self.estimator
            .observe_early(nuts.position(), nuts.gradient());
        // `checked_rem`: a period set to 0 after the start stops the
        // refreshes instead of dividing by zero.
        if draw.checked_rem(self.early_refresh_every) == Some(0)
            && self.estimator.refresh_early(self.nuts.metric_mut()) == Ok(MetricChange::Replaced)
            && !self.early_refreshed
        {
            // The first metric from draws: a step size for it, as at a
            // window end; later refreshes keep dual averaging going.
            self.early_refreshed = true;
            let _ = self.nuts.set_step_size(next);
            next = self.restart_step_size(target, rng);
        }
        next
    }

    /// The end of a slow window at draw `draw`: the estimator's probes and
    /// its new metric; a replaced metric restarts dual averaging from a step
    /// size found for it. Counts the window towards the early end, ends the
    /// slow windows there ([`set_early_end`](Self::set_early_end)), and
    /// raises the target acceptance after a last slow window that diverged
    /// ([`set_divergence_target`](Self::set_divergence_target)). Returns the
    /// step size of the next draw (`next` unless dual averaging restarted).
    fn end_slow_window<P: Potential<T, D>, R: Rng + ?Sized>(
        &mut self,
        draw: u64,
        mut next: T,
        target: &P,
        rng: &mut R,
    ) -> T {
        let nuts = &self.nuts;
        let probes = self
            .estimator
            .probe(target, nuts.position(), nuts.gradient(), nuts.metric());
        self.warmup_gradient_evaluations += probes as u64;
        let change = self.estimator.end_window(self.nuts.metric_mut());
        match change {
            Ok(_) => self.metric_updates += 1,
            Err(_) => self.metric_update_failures += 1,
        }
        // A window counts towards the early end only if it kept the metric
        // and was quiet: a chain that diverges or runs trees to the
        // maximum depth is not yet where it will sample (a funnel's neck,
        // a start far in the tails), whatever the estimator preferred.
        let quiet = self.window_troubled_draws == 0;
        let diverged = self.window_diverged();
        self.window_troubled_draws = 0;
        self.window_divergent_draws = 0;
        self.window_counted_draws = 0;
        if change == Ok(MetricChange::Kept) {
            // Same metric: the step size adapted so far still applies.
            self.windows_kept_in_a_row = if quiet {
                self.windows_kept_in_a_row + 1
            } else {
                0
            };
        } else {
            self.windows_kept_in_a_row = 0;
            let _ = self.nuts.set_step_size(next);
            next = self.restart_step_size(target, rng);
        }
        if self.early_end_after > 0 && self.windows_kept_in_a_row >= self.early_end_after {
            self.slow_windows_over = true;
            let end = draw.saturating_add(self.schedule.terminal_buffer());
            self.warmup_end = self.warmup_end.min(end);
        }
        let last_slow_window =
            draw.saturating_add(self.schedule.terminal_buffer()) >= self.warmup_end;
        let mut settings = *self.dual.settings();
        if diverged && last_slow_window && self.divergence_target > settings.target_acceptance {
            settings.target_acceptance = self.divergence_target;
            settings.initial_step_size = next;
            if let Ok(dual) = DualAveraging::new(settings) {
                self.dual = dual;
            }
        }
        next
    }

    /// The last warm-up draw `draw`: fixes the step size of the kept draws
    /// to the averaged one and returns it, unless the terminal buffer
    /// diverged or the chain is stuck at that step size
    /// ([`set_divergence_target`](Self::set_divergence_target)); then the
    /// warm-up goes on for one more terminal buffer, from `next` (returned).
    fn end_warmup<P: Potential<T, D>, R: Rng + ?Sized>(
        &mut self,
        draw: u64,
        mut next: T,
        target: &P,
        rng: &mut R,
    ) -> T {
        let mut settings = *self.dual.settings();
        let extensible =
            !self.warmup_extended && self.divergence_target > settings.target_acceptance;
        let diverged = extensible && self.window_diverged();
        // The chain ended the terminal buffer where the averaged step
        // size may no longer fit: try it there before keeping it.
        let stuck = extensible
            && !diverged
            && self.terminal_step_size_fall > T::from_f64(STEP_SIZE_FALL).ln()
            && self.stuck_at(self.dual.final_step_size(), target, rng);
        if diverged || stuck {
            // The terminal buffer diverged with no slow window left to
            // see it (after an early end, or a last window that did not):
            // one more terminal buffer at the divergence target; or the
            // chain cannot move at the averaged step size: one more at δ.
            self.warmup_extended = true;
            self.warmup_end = draw.saturating_add(self.schedule.terminal_buffer());
            self.window_divergent_draws = 0;
            self.window_counted_draws = 0;
            self.terminal_step_size_fall = T::ZERO;
            if diverged {
                settings.target_acceptance = self.divergence_target;
            }
            settings.initial_step_size = next;
            if let Ok(dual) = DualAveraging::new(settings) {
                self.dual = dual;
            }
        } else {
            next = self.dual.final_step_size();
            self.final_step_size = next;
        }
        next
    }
}
