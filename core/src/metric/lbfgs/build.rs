//! Building [`LbfgsMetric`]'s eigen-form from the pairs of an
//! [`LbfgsMemory`]: scaled pairs, the compact representation, Gram–Schmidt,
//! the small symmetric eigenproblem, truncation. The formulas are on the
//! type; everything here works in the metric's own storage.

use super::LbfgsMetric;
use crate::kernels::small_dense::{Square, SquareStorage, jacobi};
use crate::kernels::{axpy, dot_wide};
use crate::lbfgs::LbfgsMemory;
use crate::real::Real;

/// Build scratch: every small matrix of the compact representation.
#[derive(Debug, Clone)]
pub(super) struct Workspace<T, const M: usize> {
    /// R, upper triangular, Rᵢⱼ = s̃ᵢᵀỹⱼ.
    r: [[T; M]; M],
    /// R⁻¹, upper triangular.
    r_inv: [[T; M]; M],
    /// Dg + ỸᵀỸ.
    c: [[T; M]; M],
    /// T of [S̃ Ỹ] = Q T (row: basis vector, column: S̃ columns then Ỹ
    /// columns); then the eigenvectors E.
    t: Square<T, M>,
    /// A = T_S R⁻ᵀ.
    a: Square<T, M>,
    /// A (Dg + ỸᵀỸ).
    ac: Square<T, M>,
    /// I + T W Tᵀ, diagonalised in place.
    g: Square<T, M>,
}

crate::in_place::zero_valid!(impl[T: Real, const M: usize] Workspace<T, M> { r, r_inv, c, t, a, ac, g });

impl<T: Real, const M: usize> Workspace<T, M> {
    pub(super) fn new() -> Self {
        Workspace {
            r: [[T::ZERO; M]; M],
            r_inv: [[T::ZERO; M]; M],
            c: [[T::ZERO; M]; M],
            t: Square::zero(),
            a: Square::zero(),
            ac: Square::zero(),
            g: Square::zero(),
        }
    }
}

impl<T: Real, const D: usize, const M: usize> LbfgsMetric<T, D, M> {
    /// H = diag(b): no direction.
    pub(super) fn set_base_only(&mut self, skipped: usize) {
        self.rank = 0;
        self.log_det = self.log_det_base;
        self.pairs_used = 0;
        self.pairs_skipped = skipped;
    }

    /// One build from the pairs of `memory`, leaving out the oldest
    /// `left_out` usable ones. `false` when the small matrices are not
    /// finite (the caller then leaves out one more pair).
    pub(super) fn try_build(&mut self, memory: &LbfgsMemory<T, D, M>, left_out: usize) -> bool {
        let (norms, m, skipped) = self.scale_pairs(memory, left_out);
        self.compact_matrices(m);
        let r = self.orthonormalize(m, &norms);
        if !self.small_matrix(m, r) {
            return false;
        }
        // 5. G = E diag(μ) Eᵀ, E into t.
        jacobi(&mut self.work.g, &mut self.work.t, r);
        if !(self.work.g.leading_block_finite(r) && self.work.t.leading_block_finite(r)) {
            return false;
        }
        let (order, mu, rank) = self.kept_eigenvalues(r);
        self.rotate_directions(r, rank, &order);
        self.set_coefficients(rank, &mu, m, skipped);
        true
    }

    /// Step 1: Scaled pairs: s̃ₖ into slot k, ỹₖ into slot M + k, skipping pairs
    /// whose products are not finite and positive and the oldest `left_out`
    /// usable ones. Returns the original norms of s̃ and ỹ, the pairs used
    /// m and the pairs skipped.
    fn scale_pairs(
        &mut self,
        memory: &LbfgsMemory<T, D, M>,
        left_out: usize,
    ) -> ([[T; M]; 2], usize, usize) {
        let mut norms = [[T::ZERO; M]; 2];
        let mut used = 0;
        let mut skipped = 0;
        let mut usable = 0;
        for (s, y, _) in memory.pairs().iter() {
            let [s_slots, y_slots] = &mut self.directions;
            let (Some(st), Some(yt)) = (s_slots.get_mut(used), y_slots.get_mut(used)) else {
                break;
            };
            for i in 0..D {
                st[i] = s[i] * self.inv_sqrt_base[i];
                yt[i] = y[i] * self.sqrt_base[i];
            }
            let sy = dot_wide(st, yt);
            let ss = dot_wide(st, st);
            let yy = dot_wide(yt, yt);
            let fine = |x: T| x.is_finite() && x > T::ZERO;
            if !(fine(sy) && fine(ss) && fine(yy)) {
                skipped += 1;
                continue;
            }
            if usable < left_out {
                usable += 1;
                skipped += 1;
                continue;
            }
            norms[0][used] = ss.sqrt();
            norms[1][used] = yy.sqrt();
            used += 1;
        }
        (norms, used, skipped)
    }

    /// Step 2: R = upper(S̃ᵀỸ), C = Dg + ỸᵀỸ, R⁻¹ (the first `m` pairs).
    fn compact_matrices(&mut self, m: usize) {
        let [s_slots, y_slots] = &self.directions;
        let w = &mut self.work;
        for i in 0..m {
            for j in i..m {
                w.r[i][j] = dot_wide(&s_slots[i], &y_slots[j]);
                let yy = dot_wide(&y_slots[i], &y_slots[j]);
                w.c[i][j] = yy;
                w.c[j][i] = yy;
            }
            w.c[i][i] += w.r[i][i];
        }
        for j in 0..m {
            w.r_inv[j][j] = T::ONE / w.r[j][j];
            for i in (0..j).rev() {
                let mut sum = T::ZERO;
                for k in i + 1..=j {
                    sum += w.r[i][k] * w.r_inv[k][j];
                }
                w.r_inv[i][j] = -sum / w.r[i][i];
            }
            for i in j + 1..m {
                w.r_inv[i][j] = T::ZERO;
            }
        }
    }

    /// Step 3: [S̃ Ỹ] = Q T by modified Gram–Schmidt, twice; Q compacted into
    /// slots 0..r. Column j of V is slot j (j < m) or M + j − m. Returns r.
    fn orthonormalize(&mut self, m: usize, norms: &[[T; M]; 2]) -> usize {
        let drop_below = if T::EPSILON < T::from_f64(1e-10) {
            T::from_f64(1e-10)
        } else {
            T::from_f64(1e-5)
        };
        self.work.t.set_identity(0);
        let mut r = 0;
        {
            let t = &mut self.work.t;
            let flat = self.directions.as_flattened_mut();
            for j in 0..2 * m {
                let (slot, norm) = if j < m {
                    (j, norms[0][j])
                } else {
                    (M + j - m, norms[1][j - m])
                };
                let (done, rest) = flat.split_at_mut(slot);
                let Some(v) = rest.first_mut() else {
                    break;
                };
                for _pass in 0..2 {
                    for (i, q) in done.iter().enumerate().take(r) {
                        let h = dot_wide(q, v);
                        axpy(-h, q, v);
                        t.set(i, j, t.get(i, j) + h);
                    }
                }
                let remainder = dot_wide(v, v).sqrt();
                if r < D && remainder.is_finite() && remainder > drop_below * norm {
                    let inv = T::ONE / remainder;
                    for x in v.iter_mut() {
                        *x *= inv;
                    }
                    t.set(r, j, remainder);
                    if let Some(target) = done.get_mut(r) {
                        target.copy_from_slice(v);
                    }
                    r += 1;
                }
            }
        }
        r
    }

    /// Step 4: G = I + T W Tᵀ = I + A C Aᵀ − N − Nᵀ with A = T_S R⁻ᵀ, N = T_Y Aᵀ;
    /// `false` when G is not finite.
    fn small_matrix(&mut self, m: usize, r: usize) -> bool {
        let w = &mut self.work;
        for i in 0..r {
            for k in 0..m {
                let mut sum = T::ZERO;
                for j in k..m {
                    sum += w.t.get(i, j) * w.r_inv[k][j];
                }
                w.a.set(i, k, sum);
            }
            for l in 0..m {
                let mut sum = T::ZERO;
                for k in 0..m {
                    sum += w.a.get(i, k) * w.c[k][l];
                }
                w.ac.set(i, l, sum);
            }
        }
        // N into g first; then each unordered pair {i, l} reads its two
        // entries of N once and writes G over both.
        for i in 0..r {
            for l in 0..r {
                let mut sum = T::ZERO;
                for k in 0..m {
                    sum += w.t.get(i, m + k) * w.a.get(l, k);
                }
                w.g.set(i, l, sum);
            }
        }
        for i in 0..r {
            for l in i..r {
                let mut aca = T::ZERO;
                for k in 0..m {
                    aca += w.ac.get(i, k) * w.a.get(l, k);
                }
                let mut value = aca - w.g.get(i, l) - w.g.get(l, i);
                if i == l {
                    value += T::ONE;
                }
                w.g.set(i, l, value);
                w.g.set(l, i, value);
            }
        }
        if !w.g.leading_block_finite(r) {
            return false;
        }
        true
    }

    /// Step 6: Keep the directions with |ln μ| > τ (all for τ = 0), largest μ
    /// first (insertion sort: stable, deterministic). Returns their columns
    /// of E, their μ and their count.
    fn kept_eigenvalues(&self, r: usize) -> ([[usize; M]; 2], [[T; M]; 2], usize) {
        let floor = T::EPSILON;
        let mut order = [[0usize; M]; 2];
        let mut mu = [[T::ZERO; M]; 2];
        let mut rank = 0;
        {
            let order = order.as_flattened_mut();
            let mu = mu.as_flattened_mut();
            for k in 0..r {
                // Finite (checked above); clamped so that H stays positive definite.
                let mut value = self.work.g.get(k, k);
                if value < floor {
                    value = floor;
                }
                if self.rank_tolerance > T::ZERO && value.ln().abs() <= self.rank_tolerance {
                    continue;
                }
                let mut pos = rank;
                while pos > 0 && mu[pos - 1] < value {
                    mu[pos] = mu[pos - 1];
                    order[pos] = order[pos - 1];
                    pos -= 1;
                }
                mu[pos] = value;
                order[pos] = k;
                rank += 1;
            }
        }
        (order, mu, rank)
    }

    /// Step 7: U = Q E (kept columns), row by row in place.
    fn rotate_directions(&mut self, r: usize, rank: usize, order: &[[usize; M]; 2]) {
        let flat = self.directions.as_flattened_mut();
        let order = order.as_flattened();
        let e = &self.work.t;
        let mut row = [[T::ZERO; M]; 2];
        let row = row.as_flattened_mut();
        for i in 0..D {
            for (j, x) in row.iter_mut().enumerate().take(r) {
                *x = flat[j][i];
            }
            for (u, &k) in flat.iter_mut().zip(order).take(rank) {
                let mut sum = T::ZERO;
                for (j, x) in row.iter().enumerate().take(r) {
                    sum += *x * e.get(j, k);
                }
                u[i] = sum;
            }
        }
    }

    /// Step 8: Coefficients and log det.
    fn set_coefficients(&mut self, rank: usize, mu: &[[T; M]; 2], m: usize, skipped: usize) {
        let mut log_det = self.log_det_base;
        let mu = mu.as_flattened();
        for k in 0..rank {
            let value = mu[k];
            let root = value.sqrt();
            self.eigenvalues.as_flattened_mut()[k] = value;
            self.velocity_coefficients.as_flattened_mut()[k] = value - T::ONE;
            self.momentum_coefficients.as_flattened_mut()[k] = T::ONE / root - T::ONE;
            self.sqrt_coefficients.as_flattened_mut()[k] = root - T::ONE;
            self.hessian_coefficients.as_flattened_mut()[k] = T::ONE / value - T::ONE;
            log_det += value.ln();
        }
        self.rank = rank;
        self.log_det = log_det;
        self.pairs_used = m;
        self.pairs_skipped = skipped;
    }
}
