//! [`WindowCovariance`]: the covariances of θ and ∇U over a warm-up window
//! on the first n ≤ K coordinates, and the metric they imply, handed to the
//! quasi-Newton metric as n mutually conjugate secant pairs.
//!
//! For a Gaussian with covariance Σ, Cov θ = Σ and Cov ∇U = Σ⁻¹; the mass
//! matrix whose inverse H minimises the Fisher divergence of the whitened
//! posterior given both (the criterion nuts-rs adapts with) is their
//! geometric mean,
//!
//! H = G^{-1/2} (G^{1/2} C G^{1/2})^{1/2} G^{-1/2},  C = Cov θ, G = Cov ∇U,
//!
//! which is Σ when the posterior is Gaussian, and which a window of a few
//! dozen draws already estimates well: the errors of C and of G⁻¹ partly
//! cancel. On posteriordb's small correlated regressions (mesquite, D = 8,
//! condition number 6·10⁶) the estimate from 50 draws left the posterior's
//! condition number at 1.4–1.6 in every chain, where the secant pairs
//! between draws left 9–13, and in one chain of four 427
//! (docs/POSTERIORDB.md).
//!
//! The estimate is formed in the base's scaled coordinates (C̃ = B^{-1/2} C
//! B^{-1/2}, G̃ = B^{1/2} G B^{1/2}, B the diagonal base), each with a tiny
//! γ added to its diagonal. With G̃ = V diag(g) Vᵀ and
//! G̃^{1/2} C̃ G̃^{1/2} = W diag(p) Wᵀ, the pairs
//!
//! s̃ₖ = G̃^{-1/2} wₖ,  ỹₖ = G̃^{1/2} wₖ / √pₖ
//!
//! satisfy ỹₖ = H̃⁻¹ s̃ₖ and s̃ⱼᵀ ỹₖ = 0 for j ≠ k: n conjugate exact secants
//! of the quadratic with inverse Hessian H̃, so the BFGS update on any base
//! reproduces H̃ (the hereditary property), and
//! [`LbfgsMetric`](crate::metric::LbfgsMetric) keeps its eigen-form and rank
//! tolerance unchanged. Storage is K² per matrix: the estimator runs it only
//! when the model's dimension n is at most its memory M.
//!
//! It also measures how linear ∇U is in θ over the window, the smallest
//! squared canonical correlation between them (1 for a Gaussian). The
//! estimator lets this metric compete, as its fourth candidate, only where
//! that measure reaches
//! [`MIN_GRADIENT_LINEARITY`](super::MIN_GRADIENT_LINEARITY).

use crate::kernels::small_dense::jacobi;
use crate::lbfgs::LbfgsMemory;
use crate::real::Real;

/// γ, added to the diagonal of both scaled covariances: 10⁻² √ε (1.5·10⁻¹⁰
/// in `f64`, 3.5·10⁻⁶ in `f32`), against scaled variances of order 1 (the
/// base is √(Var θᵢ / Var ∂ᵢU), so Var θ̃ᵢ = √(Var θᵢ Var ∂ᵢU) ≥ 1 for a
/// Gaussian). It only keeps round-off from making a covariance singular:
/// fewer than n + 2 draws are refused instead. nuts-rs's 10⁻⁵ moved the
/// metric of a correlated posterior by 8 % in the unit test below.
fn regularization<T: Real>() -> T {
    T::EPSILON.sqrt() * T::from_f64(0.01)
}

/// Running covariances of θ and ∇U on the first n ≤ K coordinates, with the
/// scratch the metric's pairs are computed in.
#[derive(Debug, Clone)]
pub(crate) struct WindowCovariance<T, const K: usize> {
    count: u64,
    mean_position: [T; K],
    mean_gradient: [T; K],
    comoment_position: [[T; K]; K],
    comoment_gradient: [[T; K]; K],
    /// Co-moment of θ (rows) and ∇U (columns), for
    /// [`gradient_linearity`](Self::gradient_linearity).
    comoment_cross: [[T; K]; K],
    /// Scratch: G̃, then G̃^{1/2} C̃ G̃^{1/2}, diagonalised in place.
    a: [[T; K]; K],
    /// Scratch: V, the eigenvectors of G̃.
    v: [[T; K]; K],
    /// Scratch: C̃ G̃^{1/2}, then W, the eigenvectors of G̃^{1/2} C̃ G̃^{1/2}.
    w: [[T; K]; K],
    /// Scratch: G̃^{1/2}.
    root: [[T; K]; K],
}

crate::in_place::zero_valid!(impl[T: Real, const K: usize] WindowCovariance<T, K> {
    count, mean_position, mean_gradient, comoment_position, comoment_gradient, comoment_cross, a, v, w, root
});

impl<T: Real, const K: usize> WindowCovariance<T, K> {
    /// No draws.
    pub(crate) fn new() -> Self {
        WindowCovariance {
            count: 0,
            mean_position: [T::ZERO; K],
            mean_gradient: [T::ZERO; K],
            comoment_position: [[T::ZERO; K]; K],
            comoment_gradient: [[T::ZERO; K]; K],
            comoment_cross: [[T::ZERO; K]; K],
            a: [[T::ZERO; K]; K],
            v: [[T::ZERO; K]; K],
            w: [[T::ZERO; K]; K],
            root: [[T::ZERO; K]; K],
        }
    }

    /// Forgets every draw.
    pub(crate) fn clear(&mut self) {
        crate::in_place::zero(self);
    }

    /// Adds a draw's first n ≤ K coordinates (Welford).
    pub(crate) fn add(&mut self, position: &[T], gradient: &[T], n: usize) {
        let n = n.min(K).min(position.len()).min(gradient.len());
        self.count = self.count.saturating_add(1);
        let count = T::from_u64(self.count);
        let mut before = [T::ZERO; K];
        for i in 0..n {
            before[i] = position[i] - self.mean_position[i];
        }
        welford(
            &mut self.mean_position,
            &mut self.comoment_position,
            position,
            n,
            count,
        );
        welford(
            &mut self.mean_gradient,
            &mut self.comoment_gradient,
            gradient,
            n,
            count,
        );
        // Co-moment update: (θ − mean before) (∇U − mean after)ᵀ.
        for i in 0..n {
            for j in 0..n {
                self.comoment_cross[i][j] += before[i] * (gradient[j] - self.mean_gradient[j]);
            }
        }
    }

    /// How linear ∇U is in θ over the window: the smallest squared canonical
    /// correlation between θ and ∇U on the first n coordinates, in [0, 1].
    ///
    /// For a Gaussian ∇U = Σ⁻¹(θ − μ) exactly, so every canonical
    /// correlation is 1 whatever the draws, and the window's
    /// covariance metric is exact. Where curvature varies over the posterior
    /// (a latent Gaussian process under a Poisson likelihood, a funnel), some
    /// direction of ∇U is far from any linear function of θ, the Gaussian
    /// metric fits only an average curvature, and its steps are too long in
    /// the stiff region. `None` with fewer than n + 2 draws, n > K, or
    /// anything not finite and positive. No γ here: against the small
    /// eigenvalues of a window of few draws (n + 2 draws of a posterior with
    /// condition number 10⁹) even γ = 10⁻² √ε pulled a Gaussian's measure to
    /// 0.84; a direction of zero variance gives `None` instead. Uses the
    /// metric's scratch: call it
    /// before [`pairs_into`](Self::pairs_into), not between its uses.
    ///
    /// With C̃ = U diag(c) Uᵀ, G̃ = V diag(g) Vᵀ and X̃ the scaled
    /// cross-covariance, the squared canonical correlations are the
    /// eigenvalues of ZᵀZ, Z = diag(c^{-1/2}) Uᵀ X̃ V diag(g^{-1/2}).
    pub(crate) fn gradient_linearity(&mut self, base: &[T], n: usize) -> Option<T> {
        if n == 0 || n > K || n > base.len() || self.count < n as u64 + 2 {
            return None;
        }
        let denominator = T::from_u64(self.count - 1);
        let sqrt_base = sqrt_of_base::<T, K>(base, n)?;
        // a = C̃ (→ U in v), root = G̃ (→ V in w).
        for i in 0..n {
            for j in 0..n {
                let c = T::HALF * (self.comoment_position[i][j] + self.comoment_position[j][i]);
                let g = T::HALF * (self.comoment_gradient[i][j] + self.comoment_gradient[j][i]);
                self.a[i][j] = c / denominator / (sqrt_base[i] * sqrt_base[j]);
                self.root[i][j] = g / denominator * (sqrt_base[i] * sqrt_base[j]);
            }
        }
        jacobi(&mut self.a, &mut self.v, n);
        jacobi(&mut self.root, &mut self.w, n);
        let mut c = [T::ZERO; K];
        let mut g = [T::ZERO; K];
        for k in 0..n {
            c[k] = self.a[k][k];
            g[k] = self.root[k][k];
            if !(c[k].is_finite() && c[k] > T::ZERO && g[k].is_finite() && g[k] > T::ZERO) {
                return None;
            }
        }
        // a = X̃ V, X̃ᵢⱼ = Cov(θᵢ, ∂ⱼU) √bⱼ / √bᵢ.
        for i in 0..n {
            for j in 0..n {
                let mut sum = T::ZERO;
                for k in 0..n {
                    sum += self.comoment_cross[i][k] * sqrt_base[k] * self.w[k][j];
                }
                self.a[i][j] = sum / denominator / sqrt_base[i];
            }
        }
        // root = Z = diag(c^{-1/2}) Uᵀ (X̃ V) diag(g^{-1/2}).
        for i in 0..n {
            for j in 0..n {
                let mut sum = T::ZERO;
                for k in 0..n {
                    sum += self.v[k][i] * self.a[k][j];
                }
                self.root[i][j] = sum / (c[i] * g[j]).sqrt();
            }
        }
        // a = ZᵀZ, symmetric by construction; its eigenvalues are the squared
        // canonical correlations.
        for i in 0..n {
            for j in 0..=i {
                let mut sum = T::ZERO;
                for k in 0..n {
                    sum += self.root[k][i] * self.root[k][j];
                }
                self.a[i][j] = sum;
                self.a[j][i] = sum;
            }
        }
        jacobi(&mut self.a, &mut self.v, n);
        let mut smallest = T::INFINITY;
        for k in 0..n {
            let r = self.a[k][k];
            if !r.is_finite() {
                return None;
            }
            if r < smallest {
                smallest = r;
            }
        }
        Some(if smallest < T::ZERO {
            T::ZERO
        } else if smallest > T::ONE {
            T::ONE
        } else {
            smallest
        })
    }

    /// Clears `memory` and fills it with the n conjugate pairs of the
    /// window's metric on the base diag(`base`) (see the module's docs).
    /// Returns `false`, with `memory` empty, when there are fewer than n + 2
    /// draws, n > K or n > M, or anything is not finite and positive.
    pub(crate) fn pairs_into<const D: usize, const M: usize>(
        &mut self,
        base: &[T; D],
        n: usize,
        memory: &mut LbfgsMemory<T, D, M>,
    ) -> bool {
        self.regularized_pairs_into(base, n, memory, regularization())
    }

    /// [`pairs_into`](Self::pairs_into) with `gamma` for γ.
    fn regularized_pairs_into<const D: usize, const M: usize>(
        &mut self,
        base: &[T; D],
        n: usize,
        memory: &mut LbfgsMemory<T, D, M>,
        gamma: T,
    ) -> bool {
        memory.clear();
        if n == 0 || n > K || n > M || n > D || self.count < n as u64 + 2 {
            return false;
        }
        let denominator = T::from_u64(self.count - 1);
        let Some(sqrt_base) = sqrt_of_base::<T, K>(base, n) else {
            return false;
        };
        // G̃ = B^{1/2} G B^{1/2} + γI, diagonalised: G̃ = V diag(g) Vᵀ.
        for i in 0..n {
            for j in 0..n {
                let g = T::HALF * (self.comoment_gradient[i][j] + self.comoment_gradient[j][i]);
                self.a[i][j] = g / denominator * sqrt_base[i] * sqrt_base[j];
            }
            self.a[i][i] += gamma;
        }
        jacobi(&mut self.a, &mut self.v, n);
        let mut g = [T::ZERO; K];
        for k in 0..n {
            g[k] = self.a[k][k];
            if !(g[k].is_finite() && g[k] > T::ZERO) {
                return false;
            }
        }
        // root = G̃^{1/2} = V diag(√g) Vᵀ.
        for i in 0..n {
            for j in 0..n {
                let mut sum = T::ZERO;
                for k in 0..n {
                    sum += self.v[i][k] * g[k].sqrt() * self.v[j][k];
                }
                self.root[i][j] = sum;
            }
        }
        // a = C̃ G̃^{1/2} first (C̃ = B^{-1/2} C B^{-1/2} + γI), then
        // a = G̃^{1/2} C̃ G̃^{1/2}, symmetrised.
        for i in 0..n {
            for j in 0..n {
                let mut sum = T::ZERO;
                for k in 0..n {
                    let c = T::HALF * (self.comoment_position[i][k] + self.comoment_position[k][i])
                        / denominator
                        / (sqrt_base[i] * sqrt_base[k]);
                    let c = if i == k { c + gamma } else { c };
                    sum += c * self.root[k][j];
                }
                self.w[i][j] = sum;
            }
        }
        for i in 0..n {
            for j in 0..n {
                let mut sum = T::ZERO;
                for k in 0..n {
                    sum += self.root[i][k] * self.w[k][j];
                }
                self.a[i][j] = sum;
            }
        }
        for i in 0..n {
            for j in 0..i {
                let value = T::HALF * (self.a[i][j] + self.a[j][i]);
                self.a[i][j] = value;
                self.a[j][i] = value;
            }
        }
        jacobi(&mut self.a, &mut self.w, n);
        let mut s = [T::ZERO; D];
        let mut y = [T::ZERO; D];
        for k in 0..n {
            let p = self.a[k][k];
            if !(p.is_finite() && p > T::ZERO) {
                memory.clear();
                return false;
            }
            // s̃ = p^{1/4} G̃^{-1/2} w and ỹ = H̃⁻¹ s̃ = p^{-1/4} G̃^{1/2} w
            // (the pair of the module's docs times p^{1/4}: neither half is
            // scaled towards under- or overflow), with G̃^{±1/2} = V diag(g^{±1/2}) Vᵀ;
            // then s = B^{1/2} s̃, y = B^{-1/2} ỹ.
            let root_root_p = p.sqrt().sqrt();
            let mut projected = [T::ZERO; K];
            for l in 0..n {
                let mut sum = T::ZERO;
                for i in 0..n {
                    sum += self.v[i][l] * self.w[i][k];
                }
                projected[l] = sum;
            }
            for i in 0..n {
                let (mut si, mut yi) = (T::ZERO, T::ZERO);
                for l in 0..n {
                    let root_g = g[l].sqrt();
                    si += self.v[i][l] * projected[l] / root_g;
                    yi += self.v[i][l] * projected[l] * root_g;
                }
                s[i] = si * root_root_p * sqrt_base[i];
                y[i] = yi / root_root_p / sqrt_base[i];
            }
            if !crate::kernels::all_finite(&s) || !crate::kernels::all_finite(&y) {
                memory.clear();
                return false;
            }
            memory.try_push(&s, &y);
        }
        true
    }
}

/// √bᵢ of the base's first n ≤ K entries, or `None` if one is not finite
/// and positive.
fn sqrt_of_base<T: Real, const K: usize>(base: &[T], n: usize) -> Option<[T; K]> {
    let mut sqrt_base = [T::ZERO; K];
    for i in 0..n {
        sqrt_base[i] = base[i].sqrt();
        if !(sqrt_base[i].is_finite() && sqrt_base[i] > T::ZERO) {
            return None;
        }
    }
    Some(sqrt_base)
}

/// One Welford step of a mean and comoment matrix on the first n coordinates.
fn welford<T: Real, const K: usize>(
    mean: &mut [T; K],
    comoment: &mut [[T; K]; K],
    x: &[T],
    n: usize,
    count: T,
) {
    let mut before = [T::ZERO; K];
    for i in 0..n {
        before[i] = x[i] - mean[i];
        mean[i] += before[i] / count;
    }
    for i in 0..n {
        let after = x[i] - mean[i];
        for j in 0..n {
            comoment[i][j] += after * before[j];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lbfgs::LbfgsSettings;
    use crate::metric::{LbfgsMetric, Metric};
    use rand_core::{Rng, SeedableRng};

    const D: usize = 5;

    /// A badly scaled, strongly correlated factor L (Σ = L Lᵀ has condition
    /// number ~10⁹).
    const L: [[f64; D]; D] = [
        [100.0, 0.0, 0.0, 0.0, 0.0],
        [99.0, 1.0, 0.0, 0.0, 0.0],
        [-3.0, 0.5, 0.02, 0.0, 0.0],
        [10.0, -2.0, 0.01, 3.0, 0.0],
        [0.5, 0.1, 0.0, 0.2, 0.3],
    ];

    fn sigma() -> [[f64; D]; D] {
        let l = L;
        let mut s = [[0.0; D]; D];
        for i in 0..D {
            for j in 0..D {
                for k in 0..D {
                    s[i][j] += l[i][k] * l[j][k];
                }
            }
        }
        s
    }

    fn solve(a: &[[f64; D]; D], b: &[f64; D]) -> [f64; D] {
        // Gaussian elimination with partial pivoting (test only).
        let mut m = *a;
        let mut x = *b;
        for c in 0..D {
            let p = (c..D)
                .max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs()))
                .unwrap();
            m.swap(c, p);
            x.swap(c, p);
            for r in c + 1..D {
                let f = m[r][c] / m[c][c];
                for k in c..D {
                    m[r][k] -= f * m[c][k];
                }
                x[r] -= f * x[c];
            }
        }
        for c in (0..D).rev() {
            for k in c + 1..D {
                x[c] -= m[c][k] * x[k];
            }
            x[c] /= m[c][c];
        }
        x
    }

    /// The metric built from `draws` draws (μ + L u, u uniform: any spread
    /// would do for the identity below, but draws spread like the posterior
    /// keep the scaled covariances well conditioned, as a warm-up's are)
    /// with the exact gradients of N(μ, Σ).
    fn gaussian_window(draws: usize, seed: u64) -> WindowCovariance<f64, 6> {
        let s = sigma();
        let mu = [1.0, -2.0, 0.5, 3.0, 0.0];
        let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(seed);
        let mut cov = WindowCovariance::<f64, 6>::new();
        for _ in 0..draws {
            let u: [f64; D] =
                core::array::from_fn(|_| (rng.next_u64() as f64 / u64::MAX as f64 - 0.5) * 3.0);
            let mut x = [0.0; D];
            let mut centred = [0.0; D];
            for i in 0..D {
                for k in 0..D {
                    centred[i] += L[i][k] * u[k];
                }
                x[i] = mu[i] + centred[i];
            }
            let g = solve(&s, &centred);
            cov.add(&x, &g, D);
        }
        cov
    }

    /// The metric of [`gaussian_window`]'s draws on a base off Σ's diagonal
    /// by factors up to 30.
    fn metric_of(draws: usize, seed: u64, gamma: f64) -> Option<LbfgsMetric<f64, D, 6>> {
        let mut cov = gaussian_window(draws, seed);
        let base = [3e5, 1e3, 0.3, 100.0, 0.1];
        let mut memory = LbfgsMemory::<f64, D, 6>::new(LbfgsSettings::with_max_pairs(6)).unwrap();
        if !cov.regularized_pairs_into(&base, D, &mut memory, gamma) {
            return None;
        }
        assert_eq!(memory.len(), D);
        Some(LbfgsMetric::new(&base, &memory, 0.0).unwrap())
    }

    /// With ∇U = Σ⁻¹(θ − μ) the sample covariances satisfy G = Σ⁻¹ C Σ⁻¹
    /// whatever the draws, so the geometric mean of C and G⁻¹ is Σ exactly:
    /// without regularisation the metric must be Σ up to rounding (10⁻⁷
    /// relative to the diagonal; the scaled covariances' condition number is
    /// ~10⁵ here), and with the default γ within 10⁻² (this Σ, condition
    /// number ~10⁹, has scaled eigenvalues down to ~10⁻⁷), for several seeds
    /// and draw counts from n + 2 up; nuts-rs's γ = 10⁻⁵ moves it by up to
    /// 8 % (bound 0.2: the reason γ is smaller here). The first bound failed (error 10⁻²) while P = G̃^{1/2} C̃ G̃^{1/2}
    /// was symmetrised from half a product.
    #[test]
    fn exact_gradients_of_a_gaussian_give_its_covariance() {
        let s = sigma();
        for (seed, draws, gamma, bound) in [
            (1, 7, 0.0, 1e-7),
            (2, 12, 0.0, 1e-7),
            (3, 50, 0.0, 1e-7),
            (4, 400, 0.0, 1e-7),
            (2, 12, 1e-5, 2e-1),
            (2, 12, regularization(), 1e-2),
            (4, 400, regularization(), 1e-2),
        ] {
            let metric = metric_of(draws, seed, gamma).expect("enough draws");
            for j in 0..D {
                let mut e = [0.0; D];
                e[j] = 1.0;
                let mut column = [0.0; D];
                metric.velocity(&e, &mut column);
                for i in 0..D {
                    let scale = (s[i][i] * s[j][j]).sqrt();
                    let error = (column[i] - s[i][j]).abs() / scale;
                    assert!(
                        error < bound,
                        "seed {seed} draws {draws} γ {gamma} H[{i}][{j}] {} Σ {} ({error:e})",
                        column[i],
                        s[i][j]
                    );
                }
            }
        }
    }

    /// ∇U is exactly linear in θ for a Gaussian, so every canonical
    /// correlation is 1 whatever the draws: from n + 2 draws up, on a base off
    /// Σ's diagonal by factors up to 30 and on the unit base (the measure is
    /// invariant to it). Bound 10⁻²; it was 0.84 for 7 draws while the
    /// measure added γ to the covariances.
    #[test]
    fn a_gaussian_window_is_linear() {
        for (seed, draws) in [(1, 7), (2, 12), (3, 50), (4, 400)] {
            let mut cov = gaussian_window(draws, seed);
            for base in [[3e5, 1e3, 0.3, 100.0, 0.1], [1.0; D]] {
                let r = cov.gradient_linearity(&base, D).expect("enough draws");
                assert!(r > 0.99 && r <= 1.0, "seed {seed} draws {draws}: {r}");
            }
        }
    }

    /// Reference values: θ ~ N(0, 1) with ∂U = f(θ) has squared canonical
    /// correlation Corr(θ, f(θ))² = E[f′(θ)]² / Var f(θ) (Stein's identity):
    /// 2θ → 1; θ³ → 3² / 15 = 0.6; e^θ → e / (e² − e) = 1/(e − 1) ≈ 0.582;
    /// θ² → 0. Each from 50 000 independent draws, in one coordinate and as
    /// the smallest of two (the other Gaussian and correlated with it). The
    /// bound 0.03 is about four standard errors of the estimate for these
    /// heavy-tailed f (largest error over seeds 1–8 is printed on failure).
    #[test]
    fn nonlinear_gradients_match_their_canonical_correlations() {
        let e = core::f64::consts::E;
        type Reference = (fn(f64) -> f64, f64, &'static str);
        let table: [Reference; 4] = [
            (|t| 2.0 * t, 1.0, "2θ"),
            (|t| t * t * t, 0.6, "θ³"),
            (|t| t.exp(), 1.0 / (e - 1.0), "e^θ"),
            (|t| t * t, 0.0, "θ²"),
        ];
        for seed in 1..=8u64 {
            for (f, expected, name) in table {
                let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(seed);
                let mut one = WindowCovariance::<f64, 3>::new();
                let mut two = WindowCovariance::<f64, 3>::new();
                for _ in 0..50_000 {
                    let mut z = [0.0; 2];
                    crate::random::fill_standard_normal(&mut rng, &mut z);
                    let (t, u) = (z[0], 0.8 * z[0] + 0.6 * z[1]);
                    one.add(&[t], &[f(t)], 1);
                    // (t, u) correlated; the second ∂U is z₁ = (u − 0.8t)/0.6,
                    // linear in θ and independent of t, so the other
                    // canonical correlation is 1 and this one is unchanged.
                    two.add(&[t, u], &[f(t), 3.0 * z[1]], 2);
                }
                for (cov, n, base) in [(&mut one, 1, [2.0, 1.0]), (&mut two, 2, [0.5, 7.0])] {
                    let r = cov.gradient_linearity(&base, n).expect("enough draws");
                    assert!(
                        (r - expected).abs() < 0.03,
                        "seed {seed} f = {name}, n = {n}: {r} against {expected}"
                    );
                }
            }
        }
    }

    /// Too few draws (n + 1), a dimension above the storage K or the memory M,
    /// and a base that is not positive give no pairs and an empty memory, and
    /// no linearity (nor does a base shorter than n).
    #[test]
    fn refuses_what_it_cannot_estimate() {
        assert!(metric_of(D + 1, 9, regularization()).is_none());
        let mut cov = WindowCovariance::<f64, 3>::new();
        for k in 0..10 {
            let x = [
                k as f64,
                (k * k) as f64 % 7.0,
                1.0 / (k + 1) as f64,
                0.0,
                0.0,
            ];
            cov.add(&x, &x, 3);
        }
        let mut memory = LbfgsMemory::<f64, D, 6>::new(LbfgsSettings::with_max_pairs(6)).unwrap();
        assert!(!cov.pairs_into(&[1.0; D], 4, &mut memory));
        assert!(!cov.pairs_into(&[1.0, 0.0, 1.0, 1.0, 1.0], 3, &mut memory));
        assert!(memory.is_empty());
        let mut small = LbfgsMemory::<f64, D, 2>::new(LbfgsSettings::with_max_pairs(2)).unwrap();
        assert!(!cov.pairs_into(&[1.0; D], 3, &mut small));
        assert!(cov.pairs_into(&[1.0; D], 3, &mut memory));
        assert_eq!(memory.len(), 3);
        assert!(
            gaussian_window(D + 1, 9)
                .gradient_linearity(&[1.0; D], D)
                .is_none()
        );
        assert!(cov.gradient_linearity(&[1.0; D], 4).is_none());
        assert!(cov.gradient_linearity(&[1.0, 0.0, 1.0], 3).is_none());
        assert!(cov.gradient_linearity(&[1.0; 2], 3).is_none());
        assert!(cov.gradient_linearity(&[1.0; D], 3).is_some());
    }
}
