//! The L-BFGS operators of HAMCMC written on inner products only
//! ("vector-free" L-BFGS): H·g and S·z as combinations of the basis
//! s₁ … s_m, y₁ … y_m, g, z, with coefficients computed from the basis's
//! Gram matrix.
//!
//! Across machines every vector is cut in shards, and an inner product
//! costs a message round; the two-loop recursion needs 2m of them in
//! sequence, the product-form square root more. Here the ranks sum one
//! Gram matrix of (2m + 2)² / 2 numbers (the paper's "reduce of O(M²)"),
//! and every rank then runs the same recursions on coefficients, which
//! give the same numbers on every rank, and applies them to its own
//! shards. The formulas are those of docs/ALGORITHMS.md §1 (the two-loop
//! recursion with H⁰ = γI, and the corrected product form S = ∏(I − p qᵀ)
//! √γ I), with every dot product aᵀb replaced by (coefficients of a)ᵀ G
//! (coefficients of b).

/// The Gram matrix of the basis s₁ … s_m, y₁ … y_m, g, z (oldest pair
/// first), full and symmetric, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Gram {
    pairs: usize,
    entries: Vec<f64>,
}

impl Gram {
    /// Basis size 2m + 2 for `pairs` = m.
    pub fn basis_len(pairs: usize) -> usize {
        2 * pairs + 2
    }

    /// Number of distinct entries, the upper triangle: b(b + 1)/2.
    pub fn upper_len(pairs: usize) -> usize {
        let b = Self::basis_len(pairs);
        b * (b + 1) / 2
    }

    /// Basis index of s_k.
    pub fn s(k: usize) -> usize {
        k
    }

    /// Basis index of y_k.
    pub fn y(&self, k: usize) -> usize {
        self.pairs + k
    }

    /// Basis index of g.
    pub fn g(&self) -> usize {
        2 * self.pairs
    }

    /// Basis index of z.
    pub fn z(&self) -> usize {
        2 * self.pairs + 1
    }

    /// The upper triangle's entries, row by row ((0,0), (0,1), …, (1,1), …),
    /// as a partial or a total.
    pub fn upper_partial(basis: &[&[f64]], out: &mut [f64]) {
        let mut at = 0;
        for (i, a) in basis.iter().enumerate() {
            for b in &basis[i..] {
                out[at] = qnmc_host::targets::factor_dot(a, b);
                at += 1;
            }
        }
    }

    /// The matrix from its upper triangle (as [`upper_partial`](Self::upper_partial) orders it).
    pub fn from_upper(pairs: usize, upper: &[f64]) -> Self {
        let b = Self::basis_len(pairs);
        let mut entries = vec![0.0; b * b];
        let mut at = 0;
        for i in 0..b {
            for j in i..b {
                entries[i * b + j] = upper[at];
                entries[j * b + i] = upper[at];
                at += 1;
            }
        }
        Gram { pairs, entries }
    }

    /// m.
    pub fn pairs(&self) -> usize {
        self.pairs
    }

    /// `true` when every entry is finite.
    pub fn is_finite(&self) -> bool {
        self.entries.iter().all(|v| v.is_finite())
    }

    fn at(&self, i: usize, j: usize) -> f64 {
        self.entries[i * Self::basis_len(self.pairs) + j]
    }

    /// (basis vector i)ᵀ v for v given by its coefficients.
    fn row_dot(&self, i: usize, v: &[f64]) -> f64 {
        let b = Self::basis_len(self.pairs);
        self.entries[i * b..(i + 1) * b]
            .iter()
            .zip(v)
            .map(|(g, c)| g * c)
            .sum()
    }

    /// aᵀ b for a and b given by their coefficients.
    fn dot(&self, a: &[f64], b: &[f64]) -> f64 {
        a.iter()
            .enumerate()
            .map(|(i, &ai)| {
                if ai == 0.0 {
                    0.0
                } else {
                    ai * self.row_dot(i, b)
                }
            })
            .sum()
    }

    fn unit(&self, i: usize) -> Vec<f64> {
        let mut e = vec![0.0; Self::basis_len(self.pairs)];
        e[i] = 1.0;
        e
    }

    /// The coefficients of H·g (two-loop recursion, H⁰ = γI).
    pub fn inverse_hessian_times_g(&self, gamma: f64) -> Vec<f64> {
        let m = self.pairs;
        let mut q = self.unit(self.g());
        let rho: Vec<f64> = (0..m)
            .map(|k| 1.0 / self.at(Self::s(k), self.y(k)))
            .collect();
        let mut alpha = vec![0.0; m];
        for k in (0..m).rev() {
            alpha[k] = rho[k] * self.row_dot(Self::s(k), &q);
            q[self.y(k)] -= alpha[k];
        }
        let mut r: Vec<f64> = q.iter().map(|c| gamma * c).collect();
        for k in 0..m {
            let beta = rho[k] * self.row_dot(self.y(k), &r);
            r[Self::s(k)] += alpha[k] - beta;
        }
        r
    }

    /// The coefficients of S·z, S Sᵀ = H, in the product form
    /// S = (I − p_m q_mᵀ) ⋯ (I − p₁ q₁ᵀ) √γ with
    /// p = s/(sᵀy), q = y − α B s, α = √(sᵀy / sᵀBs), B = B^{k−1} the
    /// Hessian approximation of the older pairs (B⁰ = I/γ).
    pub fn sqrt_inverse_hessian_times_z(&self, gamma: f64) -> Vec<f64> {
        let m = self.pairs;
        // B^{k−1} s_k for each k, and sᵀBs, from the BFGS update of B:
        // B^k x = B^{k−1}x − Bs_k (Bs_kᵀ x)/(s_kᵀ Bs_k) + y_k (y_kᵀ x)/(s_kᵀ y_k).
        let mut bs: Vec<Vec<f64>> = Vec::with_capacity(m);
        let mut s_bs = Vec::with_capacity(m);
        let mut factors: Vec<(Vec<f64>, Vec<f64>)> = Vec::with_capacity(m);
        for k in 0..m {
            let s = self.unit(Self::s(k));
            let mut v: Vec<f64> = s.iter().map(|c| c / gamma).collect();
            for j in 0..k {
                let along = self.dot(&bs[j], &s) / s_bs[j];
                for (vi, b) in v.iter_mut().zip(&bs[j]) {
                    *vi -= along * b;
                }
                v[self.y(j)] += self.at(self.y(j), Self::s(k)) / self.at(Self::s(j), self.y(j));
            }
            let sbs = self.dot(&s, &v);
            let sy = self.at(Self::s(k), self.y(k));
            let alpha = (sy / sbs).sqrt();
            let p: Vec<f64> = s.iter().map(|c| c / sy).collect();
            let mut q: Vec<f64> = v.iter().map(|c| -alpha * c).collect();
            q[self.y(k)] += 1.0;
            factors.push((p, q));
            bs.push(v);
            s_bs.push(sbs);
        }
        let mut out = self.unit(self.z());
        out[self.z()] = gamma.sqrt();
        for (p, q) in &factors {
            let along = self.dot(q, &out);
            for (o, pi) in out.iter_mut().zip(p) {
                *o -= along * pi;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qnmc::lbfgs::{CurvaturePolicy, InitialScaling, LbfgsMemory, LbfgsSettings};
    use rand_core::{Rng, SeedableRng};
    use rand_xorshift::XorShiftRng;

    const D: usize = 12;

    fn uniform(rng: &mut XorShiftRng) -> f64 {
        (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }

    /// H·g and S·z from the Gram matrix equal the core's two-loop recursion
    /// and product-form square root on the same pairs, to 1e-10 relative
    /// (f64 rounding of two different orders of the same sums), for m = 0
    /// to 4 pairs on 20 random problems each.
    #[test]
    fn matches_the_core_operators() {
        let mut rng = XorShiftRng::seed_from_u64(3);
        for m in 0..5 {
            for _ in 0..20 {
                let gamma = 0.5 + uniform(&mut rng).abs() * 3.0;
                let mut memory = LbfgsMemory::<f64, D, 4>::new(LbfgsSettings {
                    max_pairs: 4,
                    scaling: InitialScaling::Fixed(gamma),
                    curvature: CurvaturePolicy {
                        trust_region: 0.0,
                        min_relative_curvature: 0.0,
                    },
                })
                .unwrap();
                let (mut ss, mut ys) = (Vec::new(), Vec::new());
                while ss.len() < m {
                    let s: [f64; D] = core::array::from_fn(|_| uniform(&mut rng));
                    // y = A s with A = I + a random rank-one, plus noise: sᵀy > 0 mostly.
                    let y: [f64; D] =
                        core::array::from_fn(|i| 2.0 * s[i] + 0.3 * uniform(&mut rng));
                    if memory.try_push(&s, &y) {
                        ss.push(s);
                        ys.push(y);
                    }
                }
                let g: [f64; D] = core::array::from_fn(|_| uniform(&mut rng));
                let z: [f64; D] = core::array::from_fn(|_| uniform(&mut rng));
                let mut basis: Vec<&[f64]> = Vec::new();
                basis.extend(ss.iter().map(|v| &v[..]));
                basis.extend(ys.iter().map(|v| &v[..]));
                basis.push(&g);
                basis.push(&z);
                let mut upper = vec![0.0; Gram::upper_len(m)];
                Gram::upper_partial(&basis, &mut upper);
                let gram = Gram::from_upper(m, &upper);
                let expand = |c: &[f64]| -> Vec<f64> {
                    (0..D)
                        .map(|i| basis.iter().zip(c).map(|(b, ci)| ci * b[i]).sum())
                        .collect()
                };
                let (mut hg, mut sz) = ([0.0; D], [0.0; D]);
                memory.apply_inverse_hessian(&g, &mut hg);
                memory.apply_sqrt_inverse_hessian(&z, &mut sz);
                for (ours, core) in [
                    (expand(&gram.inverse_hessian_times_g(gamma)), hg),
                    (expand(&gram.sqrt_inverse_hessian_times_z(gamma)), sz),
                ] {
                    let scale = core.iter().fold(0.0f64, |a, &v| a.max(f64::abs(v)));
                    for (a, b) in ours.iter().zip(&core) {
                        assert!(
                            (a - b).abs() <= 1e-10 * scale,
                            "m = {m}: {ours:?} vs {core:?}"
                        );
                    }
                }
            }
        }
    }
}
