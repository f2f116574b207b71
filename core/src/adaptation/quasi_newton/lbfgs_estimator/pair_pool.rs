//! The pool of candidate curvature pairs: pairs offered by the draws and by
//! probes, the
//! base matched to the window, and the pool conjugated into the L-BFGS memory
//! (and carried over to the next window).

use crate::adaptation::metric_estimators::clamp_variance;
use crate::kernels::dot;
use crate::real::Real;
use crate::target::Potential;

use super::{BASE_MATCHING_ROUNDS, LbfgsEstimator};

impl<T: Real, const D: usize, const M: usize> LbfgsEstimator<T, D, M> {
    /// Puts the pairs [`conjugate_pool_into_memory`](Self::conjugate_pool_into_memory)
    /// left in the pool's first slots back into the memory.
    pub(super) fn conjugated_pairs_into_memory(&mut self) {
        self.memory.clear();
        for k in 0..self.conjugated {
            self.memory.try_push(&self.pool_s[k], &self.pool_y[k]);
        }
    }

    pub(super) fn offer(&mut self, s: &[T; D], y: &[T; D]) {
        let Some(score) = self.score(s, y) else {
            return;
        };
        let capacity = self.max_pairs.min(M);
        let slot = if self.pool_len < capacity {
            self.pool_len += 1;
            self.pool_len - 1
        } else {
            let mut worst = 0;
            for k in 1..capacity {
                if self.pool_score[k] < self.pool_score[worst] {
                    worst = k;
                }
            }
            if capacity == 0 || self.pool_score[worst] >= score {
                return;
            }
            worst
        };
        self.pool_s[slot] = *s;
        self.pool_y[slot] = *y;
        self.pool_score[slot] = score;
    }

    /// Moment matching for the winner's base: rescales `base` (the window's
    /// √(Var θᵢ / Var ∂ᵢU)) until the metric of the pairs on it has the same
    /// √(Hᵢᵢ / (H⁻¹)ᵢᵢ) — what that estimate would find for a Gaussian with
    /// covariance H. The estimate charges the correlated part of Var θᵢ to
    /// the base; the pairs already carry it (on N(0, 11ᵀ + 4I) the estimate
    /// is 4.49 where the base should be 4). Leaves `base` as it was if a
    /// rebuild fails.
    pub(super) fn match_base_to_window(&mut self, base: &mut [T; D]) {
        let target = *base;
        let mut matched = *base;
        let mut scale = [T::ZERO; D];
        for _ in 0..BASE_MATCHING_ROUNDS {
            if self
                .candidate
                .rebuild(&matched, &self.memory, self.rank_tolerance)
                .is_err()
            {
                return;
            }
            self.candidate.geometric_diagonal(&mut scale);
            for i in 0..D {
                let f = target[i] / scale[i];
                if f.is_finite() && f > T::ZERO {
                    matched[i] = clamp_variance(matched[i] * f);
                }
            }
        }
        *base = matched;
    }

    /// Conjugates the pool's pairs (most informative first) into the memory.
    pub(super) fn conjugate_pool_into_memory(&mut self) {
        // Order by descending score (selection sort on the small pool).
        for a in 0..self.pool_len {
            let mut best = a;
            for b in a + 1..self.pool_len {
                if self.pool_score[b] > self.pool_score[best] {
                    best = b;
                }
            }
            self.pool_s.swap(a, best);
            self.pool_y.swap(a, best);
            self.pool_score.swap(a, best);
        }
        let mut kept = 0usize;
        for k in 0..self.pool_len {
            // At most D pairs can be mutually conjugate: once D are kept they
            // span every direction, and a further pair's y, stripped of its
            // components along them, is only the target's departure from a
            // quadratic plus rounding (on arK, D = 7 with 20 pairs, a y
            // cancelled to 1e-16 of its length passed the cosine test below
            // and put eigenvalues of 1e17 into H).
            if kept == D {
                break;
            }
            let norm_before = dot(&self.pool_s[k], &self.pool_s[k]);
            let y_norm_before = dot(&self.pool_y[k], &self.pool_y[k]);
            for j in 0..kept {
                let sjyj = dot(&self.pool_s[j], &self.pool_y[j]);
                let c = dot(&self.pool_s[j], &self.pool_y[k]) / sjyj;
                if !c.is_finite() {
                    continue;
                }
                let (sj, yj) = (self.pool_s[j], self.pool_y[j]);
                for i in 0..D {
                    self.pool_s[k][i] -= c * sj[i];
                    self.pool_y[k][i] -= c * yj[i];
                }
            }
            let norm_after = dot(&self.pool_s[k], &self.pool_s[k]);
            let sy = dot(&self.pool_s[k], &self.pool_y[k]);
            let yy = dot(&self.pool_y[k], &self.pool_y[k]);
            // Both halves of the pair must survive the conjugation: an s or a
            // y that cancels to a sliver of its length is rounding noise.
            let independent = norm_after > T::from_f64(1e-6) * norm_before
                && yy > T::from_f64(1e-6) * y_norm_before;
            let curved = sy.is_finite() && sy > T::from_f64(1e-8) * (norm_after * yy).sqrt();
            if independent && curved {
                if kept != k {
                    self.pool_s.swap(kept, k);
                    self.pool_y.swap(kept, k);
                }
                kept += 1;
            }
        }
        self.memory.clear();
        for k in 0..kept {
            let (s, y) = (self.pool_s[k], self.pool_y[k]);
            self.memory.try_push(&s, &y);
        }
        self.pool_len = 0;
        self.conjugated = kept;
    }

    /// Puts the last window's conjugated pairs (still in the pool's first
    /// slots) back into the pool, scored against the current base, so the
    /// next window's pairs compete with them instead of starting empty: a
    /// direction one window captured (on the 100-D Gaussian, the all-ones
    /// direction of variance 104) is not lost because the next window's
    /// pairs happen to miss it.
    /// With room for a single pair nothing is carried: that pair must follow
    /// the current window (carried, a stale pair kept its place and the
    /// one-pair firmware job's MCSE grew by a fifth).
    pub(super) fn carry_pairs_into_pool(&mut self) {
        let capacity = self.max_pairs.min(M);
        let carried = if capacity >= 2 {
            self.conjugated.min(capacity)
        } else {
            0
        };
        let mut len = 0;
        for k in 0..carried {
            let (s, y) = (self.pool_s[k], self.pool_y[k]);
            if let Some(score) = self.score(&s, &y) {
                self.pool_s[len] = s;
                self.pool_y[len] = y;
                self.pool_score[len] = score;
                len += 1;
            }
        }
        self.pool_len = len;
        self.conjugated = 0;
    }

    /// Offers the secant pair (step, ∇U(position + step) − gradient) to the
    /// pool; returns the gradient evaluations spent (1, or 0 when the probe
    /// point is not finite).
    pub(super) fn probe_pair<P: Potential<T, D>>(
        &mut self,
        target: &P,
        position: &[T; D],
        gradient: &[T; D],
        step: &[T; D],
    ) -> u32 {
        let mut x = [T::ZERO; D];
        for i in 0..D {
            x[i] = position[i] + step[i];
        }
        if !crate::kernels::all_finite(&x) {
            return 0;
        }
        let mut g = [T::ZERO; D];
        let u = target.potential_and_gradient(&x, &mut g);
        if u.is_finite() && crate::kernels::all_finite(&g) {
            for i in 0..D {
                g[i] -= gradient[i];
            }
            self.offer(step, &g);
        }
        1
    }
}
