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

use super::memory::LbfgsMemory;
use crate::Real;
use crate::linalg::{axpy, dot, scale};

/// Cached vectors p, q, u, v of every pair, in age order, and log det H.
#[derive(Debug, Clone)]
pub(crate) struct ProductFactors<T, const D: usize, const M: usize> {
    p: [[T; D]; M],
    q: [[T; D]; M],
    u: [[T; D]; M],
    v: [[T; D]; M],
    log_det_inverse_hessian: T,
    count: usize,
    valid: bool,
}

impl<T: Real, const D: usize, const M: usize> ProductFactors<T, D, M> {
    pub(crate) fn new() -> Self {
        ProductFactors {
            p: [[T::ZERO; D]; M],
            q: [[T::ZERO; D]; M],
            u: [[T::ZERO; D]; M],
            v: [[T::ZERO; D]; M],
            log_det_inverse_hessian: T::ZERO,
            count: 0,
            valid: false,
        }
    }

    #[inline]
    pub(crate) fn invalidate(&mut self) {
        self.valid = false;
    }

    /// x ← C x where C = C^{count} with the first `count` factors.
    fn apply_c(&self, gamma_inv_sqrt: T, count: usize, x: &mut [T; D]) {
        scale(gamma_inv_sqrt, x);
        for k in 0..count {
            let c = dot(&self.v[k], x);
            axpy(-c, &self.u[k], x);
        }
    }

    /// x ← Cᵀ x with the first `count` factors.
    fn apply_c_transpose(&self, gamma_inv_sqrt: T, count: usize, x: &mut [T; D]) {
        for k in (0..count).rev() {
            let c = dot(&self.u[k], x);
            axpy(-c, &self.v[k], x);
        }
        scale(gamma_inv_sqrt, x);
    }

    /// x ← S x.
    fn apply_s(&self, gamma_sqrt: T, x: &mut [T; D]) {
        scale(gamma_sqrt, x);
        for k in 0..self.count {
            let c = dot(&self.q[k], x);
            axpy(-c, &self.p[k], x);
        }
    }

    /// x ← Sᵀ x.
    fn apply_s_transpose(&self, gamma_sqrt: T, x: &mut [T; D]) {
        for k in (0..self.count).rev() {
            let c = dot(&self.p[k], x);
            axpy(-c, &self.q[k], x);
        }
        scale(gamma_sqrt, x);
    }
}

impl<T: Real, const D: usize, const M: usize> LbfgsMemory<T, D, M> {
    /// Rebuilds the product-form factors from the current pairs, O(m²D). The
    /// factor operations call this themselves when the pairs have changed.
    ///
    /// A pair whose sᵀBs is not positive and finite (possible only through
    /// round-off on an extremely ill-conditioned memory) gets an identity factor.
    pub fn refresh_factors(&mut self) {
        if self.factors.valid {
            return;
        }
        let gamma = self.gamma;
        let gamma_inv_sqrt = T::ONE / gamma.sqrt();
        let d = T::from_u64(D as u64);
        let mut log_det = d * gamma.ln();
        let m = self.pairs.len();
        for k in 0..m {
            let Some((s, y, sy)) = self.pairs.get(k) else {
                break;
            };
            // w = B^{k} s = C (Cᵀ s) with the k factors built so far.
            let mut w = *s;
            self.factors.apply_c_transpose(gamma_inv_sqrt, k, &mut w);
            self.factors.apply_c(gamma_inv_sqrt, k, &mut w);
            let sbs = dot(s, &w);
            let f = &mut self.factors;
            if !(sbs.is_finite() && sbs > T::ZERO) {
                f.p[k] = [T::ZERO; D];
                f.q[k] = [T::ZERO; D];
                f.u[k] = [T::ZERO; D];
                f.v[k] = [T::ZERO; D];
                continue;
            }
            let alpha = (sy / sbs).sqrt();
            for i in 0..D {
                f.p[k][i] = s[i] / sy;
                f.q[k][i] = y[i] - alpha * w[i];
                f.v[k][i] = s[i] / sbs;
                f.u[k][i] = y[i] / alpha + w[i];
            }
            log_det += (sbs / sy).ln();
        }
        self.factors.count = m;
        self.factors.log_det_inverse_hessian = log_det;
        self.factors.valid = true;
    }

    /// `out` ← S·z, with S Sᵀ = H: maps z ~ N(0, I) to a draw of N(0, H).
    pub fn apply_sqrt_inverse_hessian(&mut self, z: &[T; D], out: &mut [T; D]) {
        self.refresh_factors();
        *out = *z;
        self.factors.apply_s(self.gamma.sqrt(), out);
    }

    /// `out` ← Sᵀ·z.
    pub fn apply_sqrt_inverse_hessian_transpose(&mut self, z: &[T; D], out: &mut [T; D]) {
        self.refresh_factors();
        *out = *z;
        self.factors.apply_s_transpose(self.gamma.sqrt(), out);
    }

    /// `out` ← C·z, with C Cᵀ = B = H⁻¹: maps z ~ N(0, I) to a draw of N(0, B).
    pub fn apply_sqrt_hessian(&mut self, z: &[T; D], out: &mut [T; D]) {
        self.refresh_factors();
        *out = *z;
        let count = self.factors.count;
        self.factors.apply_c(T::ONE / self.gamma.sqrt(), count, out);
    }

    /// `out` ← Cᵀ·z.
    pub fn apply_sqrt_hessian_transpose(&mut self, z: &[T; D], out: &mut [T; D]) {
        self.refresh_factors();
        *out = *z;
        let count = self.factors.count;
        self.factors
            .apply_c_transpose(T::ONE / self.gamma.sqrt(), count, out);
    }

    /// `out` ← B·v = C(Cᵀv), the Hessian approximation times `v`, O(mD).
    pub fn apply_hessian(&mut self, v: &[T; D], out: &mut [T; D]) {
        self.refresh_factors();
        *out = *v;
        let g = T::ONE / self.gamma.sqrt();
        let count = self.factors.count;
        self.factors.apply_c_transpose(g, count, out);
        self.factors.apply_c(g, count, out);
    }

    /// log det H = D log γ + Σ_k log(sᵀBs / sᵀy).
    pub fn log_det_inverse_hessian(&mut self) -> T {
        self.refresh_factors();
        self.factors.log_det_inverse_hessian
    }
}

#[cfg(test)]
mod tests {
    use crate::lbfgs::{LbfgsMemory, LbfgsSettings};

    /// For one pair in 2-D the BFGS matrices can be written by hand:
    /// with γ = 1, s = e₁, y = (2, 0): H = diag(1/2, 1), B = diag(2, 1).
    #[test]
    fn one_pair_by_hand() {
        let mut m = LbfgsMemory::<f64, 2, 3>::new(LbfgsSettings::with_max_pairs(3)).unwrap();
        assert!(m.try_push(&[1.0, 0.0], &[2.0, 0.0]));
        let mut out = [0.0; 2];
        m.apply_inverse_hessian(&[1.0, 1.0], &mut out);
        assert!((out[0] - 0.5).abs() < 1e-15 && (out[1] - 1.0).abs() < 1e-15);
        m.apply_hessian(&[1.0, 1.0], &mut out);
        assert!((out[0] - 2.0).abs() < 1e-15 && (out[1] - 1.0).abs() < 1e-15);
        // S Sᵀ e₁ = H e₁ = (1/2, 0).
        let mut st = [0.0; 2];
        m.apply_sqrt_inverse_hessian_transpose(&[1.0, 0.0], &mut st);
        m.apply_sqrt_inverse_hessian(&st.clone(), &mut out);
        assert!((out[0] - 0.5).abs() < 1e-15 && out[1].abs() < 1e-15);
        assert!((m.log_det_inverse_hessian() - 0.5f64.ln()).abs() < 1e-15);
    }
}
