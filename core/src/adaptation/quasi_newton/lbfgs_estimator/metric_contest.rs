//! The Fisher contest at a window's end: each candidate metric scored on
//! the window's held-out draws, when a candidate replaces the incumbent, and
//! whether the window's covariance metric competes at all.

use crate::kernels::dot;
use crate::metric::LbfgsMetric;
use crate::metric::Metric;
use crate::real::Real;

use super::{Candidate, LbfgsEstimator, MIN_GRADIENT_LINEARITY};
use crate::error::Error;

impl<T: Real, const D: usize, const M: usize> LbfgsEstimator<T, D, M> {
    /// Mean of ∇UᵀH∇U + (θ − μ)ᵀH⁻¹(θ − μ) over the held-out draws (the part of
    /// the Fisher divergence that depends on the metric; smaller is better).
    pub(super) fn fisher_score(&self, metric: &LbfgsMetric<T, D, M>) -> T {
        let mean = *self.diagonal.mean();
        let mut total = T::ZERO;
        let mut x = [T::ZERO; D];
        let mut out = [T::ZERO; D];
        for j in 0..self.recent_len {
            metric.velocity(&self.recent_gradient[j], &mut out);
            total += dot(&self.recent_gradient[j], &out);
            for i in 0..D {
                x[i] = self.recent_position[j][i] - mean[i];
            }
            metric.apply_hessian(&x, &mut out);
            total += dot(&x, &out);
        }
        total / T::from_u64(self.recent_len.max(1) as u64)
    }

    /// ∇UᵀH∇U + (θ − μ)ᵀH⁻¹(θ − μ) at held-out draw `j`.
    pub(super) fn fisher_term(&self, metric: &LbfgsMetric<T, D, M>, j: usize) -> T {
        let mean = self.diagonal.mean();
        let mut x = [T::ZERO; D];
        let mut out = [T::ZERO; D];
        metric.velocity(&self.recent_gradient[j], &mut out);
        let gradient_term = dot(&self.recent_gradient[j], &out);
        for i in 0..D {
            x[i] = self.recent_position[j][i] - mean[i];
        }
        metric.apply_hessian(&x, &mut out);
        gradient_term + dot(&x, &out)
    }

    /// Whether `candidate`'s Fisher score on the held-out draws is below
    /// `incumbent`'s by more than twice the standard error of their paired
    /// differences. The window's covariance metric must pass this to replace
    /// the metric in force: it fits the window's draws so closely that it
    /// beat an equally good incumbent by noise at every window end, and each
    /// replacement restarted the step size and kept the warm-up from ending
    /// early (posteriordb, 43 posteriors × 3 seeds: warm-up gradients up by
    /// a third, docs/NUTS.md).
    pub(super) fn significantly_better(
        &self,
        candidate: &LbfgsMetric<T, D, M>,
        incumbent: &LbfgsMetric<T, D, M>,
    ) -> bool {
        let len = self.recent_len;
        if len < 2 {
            return false;
        }
        let (mut sum, mut sum_sq) = (T::ZERO, T::ZERO);
        for j in 0..len {
            let d = self.fisher_term(candidate, j) - self.fisher_term(incumbent, j);
            sum += d;
            sum_sq += d * d;
        }
        let k = T::from_u64(len as u64);
        let mean = sum / k;
        let variance = (sum_sq - sum * mean) / (k - T::ONE);
        let variance = if variance > T::ZERO {
            variance
        } else {
            T::ZERO
        };
        let two = T::ONE + T::ONE;
        (mean + two * (variance / k).sqrt()) < T::ZERO
    }

    /// How far the diagonal base is from the curvature along the pair; `None`
    /// for a pair without positive, finite curvature.
    pub(super) fn score(&self, s: &[T; D], y: &[T; D]) -> Option<T> {
        let sy = dot(s, y);
        let (mut ss, mut yy) = (T::ZERO, T::ZERO);
        for i in 0..D {
            ss += s[i] * s[i] / self.base[i];
            yy += y[i] * y[i] * self.base[i];
        }
        if !(sy.is_finite() && ss.is_finite() && yy.is_finite())
            || sy <= T::ZERO
            || ss <= T::ZERO
            || yy <= T::ZERO
        {
            return None;
        }
        let score = (sy / ss).ln().abs() + (yy / sy).ln().abs();
        score.is_finite().then_some(score)
    }

    /// Whether the window's ∇U is linear enough in θ for its covariance
    /// metric to compete ([`MIN_GRADIENT_LINEARITY`]), or the chain's
    /// L-BFGS start found no optimum (then any window whose measure is
    /// defined competes: see [`start_found_no_optimum`](Self::start_found_no_optimum));
    /// records the measure for
    /// [`last_gradient_linearity`](Self::last_gradient_linearity).
    pub(super) fn covariance_applies(&mut self, base: &[T; D], n: usize) -> bool {
        let linearity = self.covariance.gradient_linearity(base, n);
        self.last_linearity = linearity.unwrap_or(T::from_f64(f64::NAN));
        linearity.is_some_and(|r| {
            self.start_found_no_optimum || r >= T::from_f64(MIN_GRADIENT_LINEARITY)
        })
    }

    /// Whether the window's covariance metric is kept and competes in this
    /// chain (`window_covariance`, and `covariance_without_optimum_only`
    /// satisfied).
    pub(super) fn covariance_on(&self) -> bool {
        self.window_covariance
            && (!self.covariance_without_optimum_only || self.start_found_no_optimum)
    }

    /// The contest of a window's end: the metric in force against each
    /// candidate, scored on the held-out draws. Returns the winner, if a
    /// candidate won, and the last error of a candidate that failed to build
    /// (the contest goes on without it).
    pub(super) fn run_contest(
        &mut self,
        metric: &LbfgsMetric<T, D, M>,
        base: &[T; D],
        n: usize,
    ) -> (Option<Candidate>, Result<(), Error>) {
        // Candidates: the metric in force, the new diagonal alone, the new
        // diagonal with the window's conjugated pairs, and (n ≤ M) the metric
        // of the window's covariances; the smallest Fisher score on the
        // held-out draws wins (a NaN score never does).
        let mut best = self.fisher_score(metric);
        self.last_scores = [best, T::INFINITY, T::INFINITY, T::INFINITY];
        self.last_linearity = T::from_f64(f64::NAN);
        let mut winner = None;
        let mut result = Ok(());
        for candidate in [Candidate::Diagonal, Candidate::Pairs, Candidate::Covariance] {
            // With fewer than two held-out draws (M = 1) there is no score to
            // compare: take the pairs candidate, rather than letting the bare
            // diagonal win every window.
            if candidate == Candidate::Diagonal && self.recent_len < 2 {
                continue;
            }
            match candidate {
                Candidate::Diagonal => {}
                Candidate::Pairs => self.conjugate_pool_into_memory(),
                Candidate::Covariance => {
                    if !self.covariance_on()
                        || self.recent_len < 2
                        || !self.covariance_applies(base, n)
                        || !self.covariance.pairs_into(base, n, &mut self.memory)
                    {
                        continue;
                    }
                }
            }
            match self
                .candidate
                .rebuild(base, &self.memory, self.rank_tolerance)
            {
                Ok(()) => {
                    let score = self.fisher_score(&self.candidate);
                    self.last_scores[candidate as usize] = score;
                    let clear = candidate != Candidate::Covariance
                        || !self.last_scores[0].is_finite()
                        || self.significantly_better(&self.candidate, metric);
                    if clear && (self.recent_len < 2 || score < best || !best.is_finite()) {
                        best = score;
                        winner = Some(candidate);
                    }
                }
                Err(e) => result = Err(e),
            }
        }
        (winner, result)
    }

    /// Makes `candidate`, the contest's winner, the metric in force: rebuilt
    /// on the diagonal of every draw of the window (`base_all`), or on
    /// `base` when that fails or for the covariance candidate.
    pub(super) fn install_winner(
        &mut self,
        metric: &mut LbfgsMetric<T, D, M>,
        candidate: Candidate,
        base: [T; D],
        base_all: [T; D],
    ) -> Result<(), Error> {
        let mut final_base = base_all;
        match candidate {
            Candidate::Diagonal => self.memory.clear(),
            Candidate::Pairs => {
                self.conjugated_pairs_into_memory();
                self.match_base_to_window(&mut final_base);
            }
            // Its n conjugate pairs fix H whatever the base: rebuilt on
            // the base they were computed on (the memory still holds
            // them: the covariance candidate is scored last).
            Candidate::Covariance => final_base = base,
        }
        let tolerance = self.rank_tolerance;
        let rebuilt = match self.candidate.rebuild(&final_base, &self.memory, tolerance) {
            Ok(()) => Ok(final_base),
            Err(_) => self
                .candidate
                .rebuild(&base, &self.memory, tolerance)
                .map(|()| base),
        };
        let b = rebuilt?;
        crate::in_place::swap(metric, &mut self.candidate);
        self.pairs_used = if candidate == Candidate::Diagonal {
            0
        } else {
            metric.pairs_used()
        };
        self.base = b;
        Ok(())
    }
}
