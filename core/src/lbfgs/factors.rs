//! Product-form square-root factors of the L-BFGS matrices (ALGORITHMS.md §1,
//! the corrected form of HAMCMC eq. 11):
//!
//! ```text
//! S⁰ = √γ I,  C⁰ = I/√γ;  for each pair k (oldest first), with B = C^{k−1}C^{k−1}ᵀ:
//!   α = √(sᵀy / sᵀBs),  p = s/(sᵀy),  q = y − α Bs,   S^k = (I − p qᵀ) S^{k−1}
//!   v = s/(sᵀBs),       u = y/α + Bs,                 C^k = (I − u vᵀ) C^{k−1}
//! ```
//!
//! so that S Sᵀ = H and C Cᵀ = B = H⁻¹ with H the BFGS matrix of the same pairs,
//! and log det H = D log γ + Σ_k log(sᵀBs / sᵀy).
//!
//! **Compact form.** Every vector of the product form lies in the span of the
//! pairs, V = [s₀ … s_{m−1}, y₀ … y_{m−1}]: p and v are multiples of s_k, and
//! w_k = B^{k}s_k = s_k/γ + Σ_{j<k} (y_jᵀs_k/s_jᵀy_j)·y_j − (w_jᵀs_k/s_jᵀw_j)·w_j
//! (the unrolled BFGS update, which C^{k}C^{k}ᵀ equals), so q and u are too. So
//! nothing of length D is stored besides the pairs; the factors keep
//!
//! - the Gram matrix G = VᵀV, as the rows Vᵀs_k and Vᵀy_k (age order). A push
//!   only counts; the next rebuild drops the rows of evicted pairs and computes
//!   those of the new pairs: 4 scalar products with each held pair, two
//!   partners per pass over the D entries, each summed as
//!   [`dot`](crate::kernels::dot) sums it. O(mD) per new pair;
//! - per pair, the coefficients of w_k in V and of Vᵀw_k, and sᵀy, sᵀBs = s_kᵀw_k
//!   and α. Every scalar product the rebuild needs (w_jᵀs_k, y_jᵀs_k) is an
//!   entry of Vᵀw_j or Vᵀy_j: O(m³) in all, no work of length D.
//!
//! The old explicit form rebuilt p, q, u, v as D-vectors, O(m²D) per new pair
//! (it is kept in the tests as the oracle of this one).
//!
//! An operator is applied to z as x = a·z + V c: one pass over z for its
//! projections Vᵀz (m or 2m scalar products, eight per pass, each summed as
//! `dot` sums it); the factors on the coefficients c, O(m²) (a scalar product
//! of x with s_k, y_k or w_k is a multiple of a projection plus a 2m-term sum
//! of c against a Gram row or Vᵀw_k); and one combination a·z + V c (m or 2m
//! axpys):
//! O(mD + m²), where the explicit form also cost O(mD). B·v = C(Cᵀv) takes
//! one projection and one combination, not two of each. log det H is summed
//! on first use after a rebuild, so the samplers that only draw pay no
//! logarithms.
//!
//! Storage: 8M² + 3M scalars besides the pairs, instead of 4MD (less as soon
//! as D > 2M).
//!
//! **Round-off.** The operators agree with the explicit form to round-off
//! (≤ 4e-15 relative in f64 in the tests below). When 2m > D the columns of V
//! are linearly dependent and the coefficients are not unique; they can grow
//! while V c stays moderate, and C Cᵀ, S Sᵀ then lose up to one more digit
//! than the explicit form (measured at D = 2, M = 10: 3e-14 against 4e-15).
//!
//! A pair whose sᵀBs is not positive and finite (possible only through
//! round-off on an extremely ill-conditioned memory) gets an identity factor,
//! as in the explicit form; so does a pair whose scalar products with itself or
//! with the earlier pairs that have a factor overflow (|s| or |y| beyond about
//! the square root of the largest finite value: 1.8e19 in f32, 1.3e154 in
//! f64), which the explicit form could sometimes still use. A pair with an
//! identity factor has no term in any w_k and every coefficient sum skips it,
//! so its overflowed scalar products cannot turn into NaN.

use crate::real::Real;

/// A vector x = Σ_k s[k]·s_k + y[k]·y_k of the span of the pairs, pairs in age
/// order; also a vector of scalar products with the pairs, such as Vᵀz
/// (s[k] = s_kᵀz, y[k] = y_kᵀz).
#[derive(Debug, Clone, Copy)]
pub(super) struct Coefficients<T, const M: usize> {
    pub(super) s: [T; M],
    pub(super) y: [T; M],
}

crate::in_place::zero_valid!(impl[T: Real, const M: usize] Coefficients<T, M> { s, y });

impl<T: Real, const M: usize> Coefficients<T, M> {
    pub(super) fn zero() -> Self {
        Coefficients {
            s: [T::ZERO; M],
            y: [T::ZERO; M],
        }
    }

    /// Σ_{k∈idx} self.s[k]·other.s[k] + Σ_{k∈idx} self.y[k]·other.y[k], each
    /// half summed in the order of `idx`, then the two halves added.
    #[inline]
    pub(super) fn dot(&self, other: &Self, idx: &[usize]) -> T {
        let (mut acc_s, mut acc_y) = (T::ZERO, T::ZERO);
        for &k in idx {
            acc_s += self.s[k] * other.s[k];
            acc_y += self.y[k] * other.y[k];
        }
        acc_s + acc_y
    }

    /// self ← self + a·other on the first m pairs.
    #[inline]
    pub(super) fn add_scaled(&mut self, a: T, other: &Self, m: usize) {
        for k in 0..m {
            self.s[k] += a * other.s[k];
            self.y[k] += a * other.y[k];
        }
    }

    /// self ← a·self on the first m pairs.
    #[inline]
    pub(super) fn scale(&mut self, a: T, m: usize) {
        for k in 0..m {
            self.s[k] *= a;
            self.y[k] *= a;
        }
    }
}

/// The Gram matrix of the pairs and the product-form factors in coefficient
/// form, pairs in age order, with log det H.
#[derive(Debug, Clone)]
pub(crate) struct ProductFactors<T, const M: usize> {
    /// Vᵀs_k: gs[k].s[j] = s_kᵀs_j, gs[k].y[j] = s_kᵀy_j.
    pub(super) gs: [Coefficients<T, M>; M],
    /// Vᵀy_k: gy[k].s[j] = y_kᵀs_j, gy[k].y[j] = y_kᵀy_j.
    pub(super) gy: [Coefficients<T, M>; M],
    /// Pairs the Gram rows describe, oldest first (the ring's pairs as of the
    /// last rebuild).
    pub(super) gram_len: usize,
    /// Pairs pushed since the last rebuild (saturating).
    pub(super) pushed: usize,
    /// Coefficients of w_k = B^{k} s_k.
    pub(super) w: [Coefficients<T, M>; M],
    /// Vᵀw_k.
    pub(super) gw: [Coefficients<T, M>; M],
    /// s_kᵀy_k, as the ring holds it.
    pub(super) curvature: [T; M],
    /// s_kᵀB^{k}s_k.
    pub(super) sbs: [T; M],
    /// α_k = √(sᵀy / sᵀBs).
    pub(super) alpha: [T; M],
    /// The pairs with a factor, ascending; the others have an identity
    /// factor and zero coefficients everywhere, and no sum reads them.
    pub(super) active: [usize; M],
    /// Number of entries of `active` in use.
    pub(super) active_len: usize,
    /// log det H, computed on first use after a rebuild (valid only when
    /// `log_det_known`): the samplers that only draw pay no logarithms.
    pub(super) log_det_inverse_hessian: T,
    pub(super) log_det_known: bool,
    pub(super) count: usize,
    pub(super) valid: bool,
}

crate::in_place::zero_valid!(impl[T: Real, const M: usize] ProductFactors<T, M> {
    gs, gy, gram_len, pushed, w, gw, curvature, sbs, alpha, active, active_len, log_det_inverse_hessian,
    log_det_known, count, valid
});

impl<T: Real, const M: usize> ProductFactors<T, M> {
    pub(crate) fn new() -> Self {
        ProductFactors {
            gs: [Coefficients::zero(); M],
            gy: [Coefficients::zero(); M],
            gram_len: 0,
            pushed: 0,
            w: [Coefficients::zero(); M],
            gw: [Coefficients::zero(); M],
            curvature: [T::ZERO; M],
            sbs: [T::ZERO; M],
            alpha: [T::ZERO; M],
            active: [0; M],
            active_len: 0,
            log_det_inverse_hessian: T::ZERO,
            log_det_known: false,
            count: 0,
            valid: false,
        }
    }

    /// The memory forgot every pair.
    #[inline]
    pub(crate) fn clear(&mut self) {
        self.gram_len = 0;
        self.pushed = 0;
        self.valid = false;
    }

    /// A pair was appended to the ring (possibly evicting the oldest).
    #[inline]
    pub(crate) fn pair_pushed(&mut self) {
        self.pushed = self.pushed.saturating_add(1);
        self.valid = false;
    }

    /// Drops the Gram rows of pairs the ring evicted since the last rebuild
    /// and returns how many of the `len` held pairs (the oldest) still have
    /// their rows: the rest are new.
    pub(super) fn keep_gram_rows(&mut self, len: usize) -> usize {
        let new = if self.pushed < len { self.pushed } else { len };
        let kept = len - new;
        let drop = self.gram_len.saturating_sub(kept);
        if drop > 0 {
            for i in 0..kept {
                for j in 0..kept {
                    self.gs[i].s[j] = self.gs[i + drop].s[j + drop];
                    self.gs[i].y[j] = self.gs[i + drop].y[j + drop];
                    self.gy[i].s[j] = self.gy[i + drop].s[j + drop];
                    self.gy[i].y[j] = self.gy[i + drop].y[j + drop];
                }
            }
        }
        kept
    }

    /// Stores [s_aᵀs_b, s_aᵀy_b, y_aᵀs_b, y_aᵀy_b] (ages a, b) in both rows.
    #[inline]
    pub(super) fn set_gram(&mut self, a: usize, b: usize, d: [T; 4]) {
        self.gs[a].s[b] = d[0];
        self.gs[b].s[a] = d[0];
        self.gs[a].y[b] = d[1];
        self.gy[b].s[a] = d[1];
        self.gy[a].s[b] = d[2];
        self.gs[b].y[a] = d[2];
        self.gy[a].y[b] = d[3];
        self.gy[b].y[a] = d[3];
    }

    /// The pairs with a factor, ascending.
    #[inline]
    pub(super) fn active(&self) -> &[usize] {
        self.active.get(..self.active_len).unwrap_or(&[])
    }

    /// `true` when pair k's scalar products with itself and with the pairs
    /// that have a factor are all finite.
    pub(super) fn gram_row_finite(&self, k: usize) -> bool {
        let (gs, gy) = (&self.gs[k], &self.gy[k]);
        let entry = |j: usize| {
            gs.s[j].is_finite() && gs.y[j].is_finite() && gy.s[j].is_finite() && gy.y[j].is_finite()
        };
        entry(k) && self.active().iter().all(|&j| entry(j))
    }

    /// Builds the factors of the `m` pairs from the Gram rows and `curvature`
    /// (already set), O(m³) with no work of length D.
    ///
    /// w_k = B^{k} s_k by the unrolled BFGS update B^{k} = I/γ +
    /// Σ_{j<k} (y_j y_jᵀ/s_jᵀy_j − w_j w_jᵀ/s_jᵀw_j), which C^{k}C^{k}ᵀ equals
    /// (ALGORITHMS.md §1): the scalar products w_jᵀs_k and y_jᵀs_k are entries
    /// of Vᵀw_j and Vᵀy_j, so each term costs O(m). A pair with an identity
    /// factor leaves B unchanged and has no term.
    pub(super) fn build(&mut self, gamma: T, m: usize) {
        self.count = m;
        self.active_len = 0;
        let gamma_inv = T::ONE / gamma;
        for k in 0..m {
            // An overflowed scalar product makes the factor the identity (the
            // explicit form got there through a non-finite sᵀBs).
            if !self.gram_row_finite(k) {
                continue;
            }
            let mut c = Coefficients::zero();
            c.s[k] = gamma_inv;
            // g = Vᵀw_k alongside.
            let mut g = self.gs[k];
            g.scale(gamma_inv, m);
            for i in 0..self.active_len {
                let j = self.active[i];
                let a = self.gw[j].s[k] / self.sbs[j];
                let b = self.gy[j].s[k] / self.curvature[j];
                // w_j has coefficients on s_0..s_j and y_0..y_{j−1} only.
                c.add_scaled(-a, &self.w[j], j + 1);
                c.y[j] += b;
                g.add_scaled(-a, &self.gw[j], m);
                g.add_scaled(b, &self.gy[j], m);
            }
            let sbs = g.s[k];
            if !(sbs.is_finite() && sbs > T::ZERO) {
                continue;
            }
            self.w[k] = c;
            self.gw[k] = g;
            self.sbs[k] = sbs;
            self.alpha[k] = (self.curvature[k] / sbs).sqrt();
            self.active[self.active_len] = k;
            self.active_len += 1;
        }
        self.log_det_known = false;
        self.valid = true;
    }

    /// log det H = D log γ + Σ_k log(sᵀBs / sᵀy) over the pairs with a
    /// factor, in age order.
    pub(super) fn log_det(&mut self, gamma: T, dimension: T) -> T {
        if self.log_det_known {
            return self.log_det_inverse_hessian;
        }
        let mut log_det = dimension * gamma.ln();
        for &k in self.active() {
            log_det += (self.sbs[k] / self.curvature[k]).ln();
        }
        self.log_det_inverse_hessian = log_det;
        self.log_det_known = true;
        log_det
    }

    /// s_kᵀx for x = a z + V c, r = Vᵀz.
    #[inline]
    pub(super) fn s_dot(
        &self,
        k: usize,
        a: T,
        r: &Coefficients<T, M>,
        c: &Coefficients<T, M>,
    ) -> T {
        a * r.s[k] + self.gs[k].dot(c, self.active())
    }

    /// y_kᵀx.
    #[inline]
    pub(super) fn y_dot(
        &self,
        k: usize,
        a: T,
        r: &Coefficients<T, M>,
        c: &Coefficients<T, M>,
    ) -> T {
        a * r.y[k] + self.gy[k].dot(c, self.active())
    }

    /// w_kᵀx.
    #[inline]
    pub(super) fn w_dot(
        &self,
        k: usize,
        a: T,
        r: &Coefficients<T, M>,
        c: &Coefficients<T, M>,
    ) -> T {
        let active = self.active();
        a * self.w[k].dot(r, active) + self.gw[k].dot(c, active)
    }

    /// x ← (I − p_{m−1}q_{m−1}ᵀ)…(I − p₀q₀ᵀ) x for x = a z + V c; changes
    /// only c.s.
    pub(super) fn s_steps(&self, a: T, r: &Coefficients<T, M>, c: &mut Coefficients<T, M>) {
        for &k in self.active() {
            let t = self.y_dot(k, a, r, c) - self.alpha[k] * self.w_dot(k, a, r, c);
            c.s[k] -= t / self.curvature[k];
        }
    }

    /// x ← (I − q₀p₀ᵀ)…(I − q_{m−1}p_{m−1}ᵀ) x (needs r.s only).
    pub(super) fn s_transpose_steps(
        &self,
        a: T,
        r: &Coefficients<T, M>,
        c: &mut Coefficients<T, M>,
    ) {
        for &k in self.active().iter().rev() {
            let t = self.s_dot(k, a, r, c) / self.curvature[k];
            // c ← c − t·q_k with q_k = y_k − α w_k.
            c.y[k] -= t;
            c.add_scaled(self.alpha[k] * t, &self.w[k], k + 1);
        }
    }

    /// x ← (I − u_{m−1}v_{m−1}ᵀ)…(I − u₀v₀ᵀ) x (needs r.s only).
    pub(super) fn c_steps(&self, a: T, r: &Coefficients<T, M>, c: &mut Coefficients<T, M>) {
        for &k in self.active() {
            let t = self.s_dot(k, a, r, c) / self.sbs[k];
            // c ← c − t·u_k with u_k = y_k/α + w_k.
            c.y[k] -= t / self.alpha[k];
            c.add_scaled(-t, &self.w[k], k + 1);
        }
    }

    /// x ← (I − v₀u₀ᵀ)…(I − v_{m−1}u_{m−1}ᵀ) x; changes only c.s.
    pub(super) fn c_transpose_steps(
        &self,
        a: T,
        r: &Coefficients<T, M>,
        c: &mut Coefficients<T, M>,
    ) {
        for &k in self.active().iter().rev() {
            let t = self.y_dot(k, a, r, c) / self.alpha[k] + self.w_dot(k, a, r, c);
            c.s[k] -= t / self.sbs[k];
        }
    }
}
