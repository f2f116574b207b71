//! Small dense matrices in fixed storage ([`SquareStorage`], the 2M × 2M
//! [`Square`]) and the cyclic Jacobi eigensolver for the small symmetric
//! matrices of the quasi-Newton metric (its 2M × 2M core) and of the
//! warm-up's window covariances (n × n, n ≤ M), in whatever fixed storage
//! each keeps.

use crate::real::Real;

/// Most Jacobi sweeps (each sweep rotates every off-diagonal pair once).
pub(crate) const MAX_JACOBI_SWEEPS: usize = 50;

/// A square matrix in fixed storage, reached entry by entry.
pub(crate) trait SquareStorage<T: Real> {
    /// Entry (i, j).
    fn get(&self, i: usize, j: usize) -> T;
    /// Sets entry (i, j).
    fn set(&mut self, i: usize, j: usize, value: T);
    /// The n × n identity in the leading block, zero elsewhere.
    fn set_identity(&mut self, n: usize);
}

impl<T: Real, const K: usize> SquareStorage<T> for [[T; K]; K] {
    #[inline]
    fn get(&self, i: usize, j: usize) -> T {
        self[i][j]
    }

    #[inline]
    fn set(&mut self, i: usize, j: usize, value: T) {
        self[i][j] = value;
    }

    fn set_identity(&mut self, n: usize) {
        for (i, row) in self.iter_mut().enumerate() {
            for (j, x) in row.iter_mut().enumerate() {
                *x = if i == j && i < n { T::ONE } else { T::ZERO };
            }
        }
    }
}

/// A 2M × 2M matrix in fixed storage (const generics cannot say 2M): entry
/// (i, j) is `self.0[i / M][i % M][j / M][j % M]`, reached through the
/// flattened rows.
#[derive(Debug, Clone)]
pub(crate) struct Square<T, const M: usize>([[[[T; M]; 2]; M]; 2]);

// SAFETY: its one field is an array of `Real`s, which are `ZeroValid`.
#[allow(unsafe_code)]
unsafe impl<T: Real, const M: usize> crate::in_place::ZeroValid for Square<T, M> {}

impl<T: Real, const M: usize> crate::saved_state::SavedState for Square<T, M> {
    fn save_state(
        &self,
        out: &mut crate::saved_state::StateWriter<'_>,
    ) -> Result<(), crate::saved_state::StateError> {
        self.0.save_state(out)
    }
    fn restore_state(
        &mut self,
        input: &mut crate::saved_state::StateReader<'_>,
    ) -> Result<(), crate::saved_state::StateError> {
        self.0.restore_state(input)
    }
}

impl<T: Real, const M: usize> Square<T, M> {
    pub(crate) fn zero() -> Self {
        Square([[[[T::ZERO; M]; 2]; M]; 2])
    }

    /// Row i (length 2M); i < 2M.
    #[inline]
    pub(crate) fn row(&self, i: usize) -> &[T] {
        self.0.as_flattened()[i].as_flattened()
    }

    #[inline]
    pub(crate) fn row_mut(&mut self, i: usize) -> &mut [T] {
        self.0.as_flattened_mut()[i].as_flattened_mut()
    }

    /// `true` when the leading n × n block is finite.
    pub(crate) fn leading_block_finite(&self, n: usize) -> bool {
        (0..n).all(|i| self.row(i).iter().take(n).all(|x| x.is_finite()))
    }
}

impl<T: Real, const M: usize> SquareStorage<T> for Square<T, M> {
    #[inline]
    fn get(&self, i: usize, j: usize) -> T {
        self.row(i)[j]
    }

    #[inline]
    fn set(&mut self, i: usize, j: usize, value: T) {
        self.row_mut(i)[j] = value;
    }

    fn set_identity(&mut self, n: usize) {
        for (i, row) in self.0.as_flattened_mut().iter_mut().enumerate() {
            for (j, x) in row.as_flattened_mut().iter_mut().enumerate() {
                *x = if i == j && i < n { T::ONE } else { T::ZERO };
            }
        }
    }
}

/// Cyclic Jacobi on the leading n × n block of the symmetric `g`: on return
/// its diagonal holds the eigenvalues and `e` (set to I first) the
/// eigenvectors as columns, g₀ = E diag(g) Eᵀ. Rows and columns are rotated
/// in the fixed order (0,1), (0,2), …, (n−2, n−1); an off-diagonal entry below
/// ε·√|gₚₚ gqq| is set to zero instead; the sweeps stop when one rotates
/// nothing, or after [`MAX_JACOBI_SWEEPS`].
pub(crate) fn jacobi<T: Real, S: SquareStorage<T>>(g: &mut S, e: &mut S, n: usize) {
    e.set_identity(n);
    for _sweep in 0..MAX_JACOBI_SWEEPS {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let gpq = g.get(p, q);
                if gpq == T::ZERO {
                    continue;
                }
                let (gpp, gqq) = (g.get(p, p), g.get(q, q));
                if gpq.abs() <= T::EPSILON * gpp.abs().sqrt() * gqq.abs().sqrt() {
                    g.set(p, q, T::ZERO);
                    g.set(q, p, T::ZERO);
                    continue;
                }
                rotated = true;
                // tan of the rotation angle, the smaller root (Rutishauser).
                let theta = (gqq - gpp) / (gpq + gpq);
                let theta2 = theta * theta;
                let t = if theta2.is_finite() {
                    let t = T::ONE / (theta.abs() + (theta2 + T::ONE).sqrt());
                    if theta < T::ZERO { -t } else { t }
                } else {
                    T::HALF / theta
                };
                let c = T::ONE / (t * t + T::ONE).sqrt();
                let s = t * c;
                g.set(p, p, gpp - t * gpq);
                g.set(q, q, gqq + t * gpq);
                g.set(p, q, T::ZERO);
                g.set(q, p, T::ZERO);
                for k in 0..n {
                    if k != p && k != q {
                        let (gkp, gkq) = (g.get(k, p), g.get(k, q));
                        let kp = c * gkp - s * gkq;
                        let kq = s * gkp + c * gkq;
                        g.set(k, p, kp);
                        g.set(p, k, kp);
                        g.set(k, q, kq);
                        g.set(q, k, kq);
                    }
                    let (ekp, ekq) = (e.get(k, p), e.get(k, q));
                    e.set(k, p, c * ekp - s * ekq);
                    e.set(k, q, s * ekp + c * ekq);
                }
            }
        }
        if !rotated {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference eigenvalues of small symmetric matrices (closed forms), and
    /// g₀ = E diag(λ) Eᵀ with EᵀE = I, to 1e-13.
    #[test]
    fn eigenvalues_and_vectors_of_a_reference_table() {
        // [[2, 1], [1, 2]]: 1 and 3. tridiag(−1, 2, −1) of size 3:
        // 2 − √2, 2, 2 + √2. diag(5, 1, 3) with zero coupling: itself.
        let cases: [([[f64; 3]; 3], usize, [f64; 3]); 3] = [
            (
                [[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0; 3]],
                2,
                [1.0, 3.0, 0.0],
            ),
            (
                [[2.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 2.0]],
                3,
                [
                    2.0 - core::f64::consts::SQRT_2,
                    2.0,
                    2.0 + core::f64::consts::SQRT_2,
                ],
            ),
            (
                [[5.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 3.0]],
                3,
                [1.0, 3.0, 5.0],
            ),
        ];
        for (g0, n, expected) in cases {
            let mut g = g0;
            let mut e = [[0.0; 3]; 3];
            jacobi(&mut g, &mut e, n);
            let mut values: [f64; 3] = core::array::from_fn(|i| if i < n { g[i][i] } else { 0.0 });
            values[..n].sort_by(|a, b| a.total_cmp(b));
            for k in 0..n {
                assert!((values[k] - expected[k]).abs() < 1e-13, "{values:?}");
            }
            for i in 0..n {
                for j in 0..n {
                    let (mut back, mut ortho) = (0.0, 0.0);
                    for k in 0..n {
                        back += e[i][k] * g[k][k] * e[j][k];
                        ortho += e[k][i] * e[k][j];
                    }
                    assert!((back - g0[i][j]).abs() < 1e-13);
                    assert!((ortho - if i == j { 1.0 } else { 0.0 }).abs() < 1e-13);
                }
            }
        }
    }
}
