//! The start from an optimum: the L-BFGS optimisation from the initial point,
//! and the secant pairs measured around the optimum it found.

use crate::adaptation::quasi_newton::lbfgs_start::{
    LbfgsStart, inverse_hessian_diagonal, optimize_start, secant_at_one_sd, typical_start,
};
use crate::lbfgs::{LbfgsSettings, MinimizeOutcome};
use crate::metric::LbfgsMetric;
use crate::metric::Metric;
use crate::real::Real;
use crate::target::Potential;

use super::LbfgsEstimator;

impl<T: Real, const D: usize, const M: usize> LbfgsEstimator<T, D, M> {
    /// [`MetricEstimator::initialize_by_optimization`] once `self.memory` is
    /// set up for the path: minimise, then the first metric and start.
    ///
    /// [`MetricEstimator::initialize_by_optimization`]:
    ///     crate::adaptation::MetricEstimator::initialize_by_optimization
    pub(super) fn start_from_optimization<P: Potential<T, D>>(
        &mut self,
        target: &P,
        position: &[T; D],
        normals: &[T; D],
        metric: &mut LbfgsMetric<T, D, M>,
    ) -> Option<([T; D], u32)> {
        let moved = self.moved();
        let outcome = match optimize_start(target, position, &mut self.memory, normals, moved)? {
            LbfgsStart::StayPut {
                gradient_evaluations,
            } => {
                self.start_found_no_optimum = true;
                return Some((*position, gradient_evaluations));
            }
            LbfgsStart::Optimum(outcome) => outcome,
        };
        // Base: the diagonal of the path's L-BFGS inverse Hessian.
        let base = inverse_hessian_diagonal(&self.memory);
        if metric
            .rebuild(&base, &self.memory, self.rank_tolerance)
            .is_err()
        {
            return Some((*position, outcome.gradient_evaluations));
        }
        self.base = base;
        self.started_at_optimum = true;
        let mut spent = outcome.gradient_evaluations;
        if self.optimum_secants {
            spent += self.secants_at_optimum(target, &outcome, metric);
        }
        // Start at the optimum plus a draw from N(0, H): v = H·M^{1/2}z.
        let mut p = [T::ZERO; D];
        let mut v = [T::ZERO; D];
        metric.momentum_from_normals(normals, &mut p);
        metric.velocity(&p, &mut v);
        let (start, evaluations) = typical_start(target, &outcome, &v, normals);
        Some((start, spent + evaluations))
    }

    /// [`LbfgsEstimatorSettings::optimum_secants`]: for n ≤ `M`, one central
    /// secant at the optimum along each column of the path metric's square
    /// root, each rescaled to one sd of the curvature it measures
    /// ([`secant_at_one_sd`]). If all n are measured and survive
    /// conjugation, they replace the path's pairs in `metric` (n conjugate
    /// pairs fix H whatever the base) and are carried into the first
    /// window's pool; otherwise `metric` keeps the path's. Returns the
    /// gradient evaluations spent.
    pub(super) fn secants_at_optimum<P: Potential<T, D>>(
        &mut self,
        target: &P,
        outcome: &MinimizeOutcome<T, D>,
        metric: &mut LbfgsMetric<T, D, M>,
    ) -> u32 {
        let n = self.moved();
        if n > M || self.memory.reset(LbfgsSettings::with_max_pairs(M)).is_err() {
            return 0;
        }
        let mut spent = 0;
        self.pool_len = 0;
        let mut z = [T::ZERO; D];
        let mut p = [T::ZERO; D];
        for i in 0..n {
            let mut step = [T::ZERO; D];
            z[i] = T::ONE;
            metric.momentum_from_normals(&z, &mut p);
            metric.velocity(&p, &mut step);
            z[i] = T::ZERO;
            let (y, evaluations) = secant_at_one_sd(target, &outcome.position, &mut step);
            spent += evaluations;
            let Some(score) = y.and_then(|y| self.score(&step, &y).map(|score| (y, score))) else {
                self.pool_len = 0;
                return spent;
            };
            self.pool_s[i] = step;
            self.pool_y[i] = score.0;
            self.pool_score[i] = score.1;
            self.pool_len = i + 1;
        }
        self.conjugate_pool_into_memory();
        let rebuilt = self.conjugated == n
            && self
                .candidate
                .rebuild(&self.base, &self.memory, self.rank_tolerance)
                .is_ok();
        if rebuilt {
            crate::in_place::swap(metric, &mut self.candidate);
            self.carry_pairs_into_pool();
            // The secant steps leave the coordinates n.. alone: there the
            // metric is the base, whose log is taken out.
            let mut log_det = metric.log_det_inverse_mass();
            for b in &self.base[n..] {
                log_det -= b.ln();
            }
            self.laplace_log_mass = T::HALF * log_det - outcome.potential;
        } else {
            self.conjugated = 0;
        }
        spent
    }
}
