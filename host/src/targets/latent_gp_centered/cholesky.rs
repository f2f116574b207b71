//! A small dense Cholesky factorisation K = L Lᵀ for the latent GP's
//! covariance (n = 20), row-major `Vec<f64>` storage, with the solves and
//! inverses the GP's U and ∇U need.
//!
//! The order of operations is fixed and documented because
//! `compare/nutpie/models.py` repeats the factorisation in Python to
//! simulate the built-in data bit for bit: row by row (Cholesky–
//! Banachiewicz), for i = 0, …, n − 1 and j = 0, …, i,
//! s = K_ij − Σ_{k<j} L_ik L_jk (subtracted for k = 0, 1, … in turn), then
//! L_ii = √s, or L_ij = s / L_jj for j < i.
//!
//! A matrix that is not numerically positive definite (a pivot s ≤ 0, or
//! any non-finite entry on the way) is refused with [`NotPositiveDefinite`],
//! never a panic or NaN: the targets turn that into U = +∞.

/// The factorisation failed at row `row` (0-based): the matrix is not
/// numerically positive definite, or has a non-finite entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotPositiveDefinite {
    /// Row whose pivot was not positive and finite.
    pub row: usize,
}

/// The lower-triangular factor L of a symmetric positive definite n × n
/// matrix K = L Lᵀ (row-major; entries above the diagonal are 0).
#[derive(Debug, Clone, PartialEq)]
pub struct Cholesky {
    n: usize,
    l: Vec<f64>,
}

impl Cholesky {
    /// Factorises the symmetric `n × n` row-major `matrix` (only its lower
    /// triangle is read).
    pub fn new(matrix: &[f64], n: usize) -> Result<Self, NotPositiveDefinite> {
        assert_eq!(matrix.len(), n * n, "Cholesky of a {n} x {n} matrix");
        let mut l = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..=i {
                let mut s = matrix[i * n + j];
                for k in 0..j {
                    s -= l[i * n + k] * l[j * n + k];
                }
                let value = if i == j {
                    if s.is_nan() || s <= 0.0 {
                        return Err(NotPositiveDefinite { row: i });
                    }
                    s.sqrt()
                } else {
                    s / l[j * n + j]
                };
                if !value.is_finite() {
                    return Err(NotPositiveDefinite { row: i });
                }
                l[i * n + j] = value;
            }
        }
        Ok(Cholesky { n, l })
    }

    /// L_ij (0 above the diagonal).
    pub fn factor(&self, i: usize, j: usize) -> f64 {
        self.l[i * self.n + j]
    }

    /// log det K = 2 Σᵢ log L_ii.
    pub fn log_determinant(&self) -> f64 {
        2.0 * (0..self.n).map(|i| self.factor(i, i).ln()).sum::<f64>()
    }

    /// L v, for v of length n (Σ_{k ≤ i} L_ik v_k, k ascending).
    pub fn lower_times(&self, v: &[f64], out: &mut [f64]) {
        let n = self.n;
        for i in 0..n {
            let mut s = 0.0;
            for k in 0..=i {
                s += self.l[i * n + k] * v[k];
            }
            out[i] = s;
        }
    }

    /// Lᵀ v.
    pub fn upper_times(&self, v: &[f64], out: &mut [f64]) {
        let n = self.n;
        for i in 0..n {
            let mut s = 0.0;
            for k in i..n {
                s += self.l[k * n + i] * v[k];
            }
            out[i] = s;
        }
    }

    /// Solves L w = b (forward substitution), in place.
    pub fn solve_lower(&self, b: &mut [f64]) {
        let n = self.n;
        for i in 0..n {
            let mut s = b[i];
            for k in 0..i {
                s -= self.l[i * n + k] * b[k];
            }
            b[i] = s / self.l[i * n + i];
        }
    }

    /// Solves Lᵀ w = b (back substitution), in place.
    pub fn solve_upper(&self, b: &mut [f64]) {
        let n = self.n;
        for i in (0..n).rev() {
            let mut s = b[i];
            for k in i + 1..n {
                s -= self.l[k * n + i] * b[k];
            }
            b[i] = s / self.l[i * n + i];
        }
    }

    /// L⁻¹ (lower triangular, row-major).
    pub fn lower_inverse(&self) -> Vec<f64> {
        let n = self.n;
        let mut inverse = vec![0.0; n * n];
        let mut column = vec![0.0; n];
        for j in 0..n {
            column.fill(0.0);
            column[j] = 1.0;
            self.solve_lower(&mut column);
            for i in j..n {
                inverse[i * n + j] = column[i];
            }
        }
        inverse
    }

    /// K⁻¹ = L⁻ᵀ L⁻¹ (symmetric, row-major).
    pub fn inverse(&self) -> Vec<f64> {
        let n = self.n;
        let li = self.lower_inverse();
        let mut inverse = vec![0.0; n * n];
        for i in 0..n {
            for k in 0..=i {
                // (L⁻ᵀ L⁻¹)_ik = Σ_m (L⁻¹)_mi (L⁻¹)_mk, m ≥ max(i, k) = i.
                let mut s = 0.0;
                for m in i..n {
                    s += li[m * n + i] * li[m * n + k];
                }
                inverse[i * n + k] = s;
                inverse[k * n + i] = s;
            }
        }
        inverse
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3 × 3 matrix with a factor of small integers: K = L Lᵀ with
    /// L = [[2, 0, 0], [1, 3, 0], [−1, 2, 1]].
    const L3: [f64; 9] = [2.0, 0.0, 0.0, 1.0, 3.0, 0.0, -1.0, 2.0, 1.0];

    fn product_llt(l: &[f64], n: usize) -> Vec<f64> {
        let mut k = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                k[i * n + j] = (0..n).map(|m| l[i * n + m] * l[j * n + m]).sum();
            }
        }
        k
    }

    /// The factor of L Lᵀ is L (exactly: every step is exact in integers),
    /// log det = 2 log(2·3·1), and the solves and inverses invert: K K⁻¹ = I
    /// and L L⁻¹ = I to 1e-14, K w = b reproduces b.
    #[test]
    fn factor_solves_and_inverses() {
        let k = product_llt(&L3, 3);
        let c = Cholesky::new(&k, 3).unwrap();
        for i in 0..3 {
            for j in 0..3 {
                assert_eq!(c.factor(i, j), L3[i * 3 + j], "{i} {j}");
            }
        }
        assert!((c.log_determinant() - 2.0 * 6f64.ln()).abs() < 1e-14);
        let b = [1.0, -2.0, 0.5];
        let mut w = b;
        c.solve_lower(&mut w);
        c.solve_upper(&mut w);
        for i in 0..3 {
            let kw: f64 = (0..3).map(|j| k[i * 3 + j] * w[j]).sum();
            assert!((kw - b[i]).abs() < 1e-14, "{i}: {kw}");
        }
        let (mut lw, mut back) = ([0.0; 3], [0.0; 3]);
        c.lower_times(&b, &mut lw);
        back.copy_from_slice(&lw);
        c.solve_lower(&mut back);
        assert!(back.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-14));
        c.upper_times(&b, &mut lw);
        back.copy_from_slice(&lw);
        c.solve_upper(&mut back);
        assert!(back.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-14));
        let ki = c.inverse();
        let li = c.lower_inverse();
        for i in 0..3 {
            for j in 0..3 {
                let eye = if i == j { 1.0 } else { 0.0 };
                let kk: f64 = (0..3).map(|m| k[i * 3 + m] * ki[m * 3 + j]).sum();
                let ll: f64 = (0..3).map(|m| L3[i * 3 + m] * li[m * 3 + j]).sum();
                assert!((kk - eye).abs() < 1e-14, "K K⁻¹ {i} {j}: {kk}");
                assert!((ll - eye).abs() < 1e-14, "L L⁻¹ {i} {j}: {ll}");
            }
        }
    }

    /// Not positive definite (a negative and a zero pivot), NaN and ∞
    /// entries: refused with the failing row, no panic.
    #[test]
    fn refuses_what_is_not_positive_definite() {
        let indefinite = [1.0, 2.0, 2.0, 1.0];
        assert_eq!(
            Cholesky::new(&indefinite, 2),
            Err(NotPositiveDefinite { row: 1 })
        );
        let singular = [1.0, 1.0, 1.0, 1.0];
        assert_eq!(
            Cholesky::new(&singular, 2),
            Err(NotPositiveDefinite { row: 1 })
        );
        assert_eq!(
            Cholesky::new(&[f64::NAN, 0.0, 0.0, 1.0], 2),
            Err(NotPositiveDefinite { row: 0 })
        );
        assert_eq!(
            Cholesky::new(&[f64::INFINITY, 0.0, 0.0, 1.0], 2),
            Err(NotPositiveDefinite { row: 0 })
        );
        assert_eq!(
            Cholesky::new(&[1.0, 0.0, f64::INFINITY, 1.0], 2),
            Err(NotPositiveDefinite { row: 1 })
        );
        assert!(Cholesky::new(&[4.0, 1.0, 1.0, 3.0], 2).is_ok());
    }
}
