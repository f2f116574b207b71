//! The HAMCMC paper's linear Gaussian model (§4.1, eq. 14):
//! θ ~ N(0, I), x_n | θ ~ N(a_nᵀθ, σ²), n = 1 … N, with an analytic posterior.

use qnmc::random::standard_normal;
use qnmc::{MinibatchPotential, Potential};
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

/// The exact Gaussian posterior N(mean, covariance) of a linear Gaussian model.
#[derive(Debug, Clone, PartialEq)]
pub struct Posterior<const D: usize> {
    /// Posterior mean.
    pub mean: [f64; D],
    /// Posterior covariance, row-major.
    pub covariance: [[f64; D]; D],
}

/// Linear Gaussian regression with known noise variance σ² and prior N(0, I).
///
/// As a [`MinibatchPotential`] a batch is `B` indices drawn uniformly with
/// replacement (an array, so drawing one never allocates), and
/// ∇Ũ_Ω(θ) = θ + (N/B) Σ_{n∈Ω} a_n (a_nᵀθ − x_n)/σ², an unbiased estimate of ∇U.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearGaussianModel<const D: usize, const B: usize> {
    /// Regressors a_n.
    pub regressors: Vec<[f64; D]>,
    /// Observations x_n.
    pub observations: Vec<f64>,
    /// Noise variance σ².
    pub noise_variance: f64,
}

impl<const D: usize, const B: usize> LinearGaussianModel<D, B> {
    /// Simulates the model as the paper does: θ_true ~ N(0, I), regressors with
    /// correlated coordinates (a_n = z_n + `correlation`·w_n·1, z_n, w_n
    /// standard normal) so that the posterior is correlated, x_n ~ N(a_nᵀθ, σ²).
    /// Deterministic in `seed`.
    pub fn simulate(observations: usize, noise_variance: f64, correlation: f64, seed: u64) -> Self {
        let mut rng = XorShiftRng::seed_from_u64(seed);
        let mut truth = [0.0; D];
        for t in truth.iter_mut() {
            *t = standard_normal(&mut rng);
        }
        let sigma = noise_variance.sqrt();
        let mut regressors = Vec::with_capacity(observations);
        let mut xs = Vec::with_capacity(observations);
        for _ in 0..observations {
            let w: f64 = standard_normal(&mut rng);
            let mut a = [0.0; D];
            for v in a.iter_mut() {
                *v = standard_normal::<f64, _>(&mut rng) + correlation * w;
            }
            let mean: f64 = a.iter().zip(truth.iter()).map(|(a, t)| a * t).sum();
            xs.push(mean + sigma * standard_normal::<f64, _>(&mut rng));
            regressors.push(a);
        }
        LinearGaussianModel {
            regressors,
            observations: xs,
            noise_variance,
        }
    }

    /// Number of observations N.
    pub fn len(&self) -> usize {
        self.observations.len()
    }

    /// `true` with no observations (the posterior is then the prior).
    pub fn is_empty(&self) -> bool {
        self.observations.is_empty()
    }

    /// The analytic posterior: precision Λ = I + Σ a_n a_nᵀ/σ²,
    /// mean Λ⁻¹ Σ a_n x_n/σ², covariance Λ⁻¹.
    pub fn posterior(&self) -> Posterior<D> {
        let mut precision = nalgebra::DMatrix::<f64>::identity(D, D);
        let mut rhs = nalgebra::DVector::<f64>::zeros(D);
        for (a, x) in self.regressors.iter().zip(self.observations.iter()) {
            for i in 0..D {
                rhs[i] += a[i] * x / self.noise_variance;
                for j in 0..D {
                    precision[(i, j)] += a[i] * a[j] / self.noise_variance;
                }
            }
        }
        let chol = nalgebra::Cholesky::new(precision).expect("I + AᵀA/σ² is positive definite");
        let mean_v = chol.solve(&rhs);
        let cov_m = chol.inverse();
        let mut mean = [0.0; D];
        let mut covariance = [[0.0; D]; D];
        for i in 0..D {
            mean[i] = mean_v[i];
            for j in 0..D {
                covariance[i][j] = cov_m[(i, j)];
            }
        }
        Posterior { mean, covariance }
    }

    fn add_likelihood_gradient(
        &self,
        n: usize,
        theta: &[f64; D],
        weight: f64,
        g: &mut [f64; D],
    ) -> f64 {
        let a = &self.regressors[n];
        let mut pred = 0.0;
        for i in 0..D {
            pred += a[i] * theta[i];
        }
        let r = (pred - self.observations[n]) / self.noise_variance;
        for i in 0..D {
            g[i] += weight * r * a[i];
        }
        r * (pred - self.observations[n])
    }
}

impl<const D: usize, const B: usize> Potential<f64, D> for LinearGaussianModel<D, B> {
    /// U(θ) = ½‖θ‖² + Σ_n (x_n − a_nᵀθ)²/(2σ²).
    fn potential_and_gradient(&self, theta: &[f64; D], g: &mut [f64; D]) -> f64 {
        let mut u = 0.0;
        for i in 0..D {
            g[i] = theta[i];
            u += theta[i] * theta[i];
        }
        for n in 0..self.len() {
            u += self.add_likelihood_gradient(n, theta, 1.0, g);
        }
        0.5 * u
    }
}

impl<const D: usize, const B: usize> MinibatchPotential<f64, D> for LinearGaussianModel<D, B> {
    type Batch = [u32; B];

    fn draw_batch<R: Rng + ?Sized>(&self, rng: &mut R) -> [u32; B] {
        let n = self.len() as u64;
        let mut batch = [0u32; B];
        for b in batch.iter_mut() {
            // Multiply-shift maps a u32 to [0, N) without division.
            *b = ((rng.next_u32() as u64 * n) >> 32) as u32;
        }
        batch
    }

    fn minibatch_gradient(&self, batch: &[u32; B], theta: &[f64; D], g: &mut [f64; D]) {
        *g = *theta;
        if B == 0 {
            return;
        }
        let weight = self.len() as f64 / B as f64;
        for &n in batch {
            self.add_likelihood_gradient(n as usize, theta, weight, g);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradient_matches_finite_differences_and_posterior_mean_is_stationary() {
        let model = LinearGaussianModel::<4, 8>::simulate(50, 10.0, 0.9, 1);
        let x = [0.2, -0.4, 1.0, 0.5];
        let mut g = [0.0; 4];
        let _ = model.potential_and_gradient(&x, &mut g);
        let h = 1e-6;
        for i in 0..4 {
            let (mut xp, mut xm) = (x, x);
            xp[i] += h;
            xm[i] -= h;
            let mut t = [0.0; 4];
            let fd = (model.potential_and_gradient(&xp, &mut t)
                - model.potential_and_gradient(&xm, &mut t))
                / (2.0 * h);
            assert!(
                (fd - g[i]).abs() < 1e-5 * fd.abs().max(1.0),
                "{i}: {fd} vs {}",
                g[i]
            );
        }
        // ∇U vanishes at the posterior mean (the mode of a Gaussian).
        let post = model.posterior();
        let _ = model.potential_and_gradient(&post.mean, &mut g);
        assert!(g.iter().all(|v| v.abs() < 1e-9), "{g:?}");
    }

    /// The minibatch gradient is unbiased: its average over many batches matches
    /// ∇U within 5 standard errors in every coordinate.
    #[test]
    fn minibatch_gradient_is_unbiased() {
        let model = LinearGaussianModel::<3, 5>::simulate(40, 2.0, 0.5, 2);
        let x = [0.1, 0.2, -0.3];
        let mut full = [0.0; 3];
        let _ = model.potential_and_gradient(&x, &mut full);
        let mut rng = XorShiftRng::seed_from_u64(9);
        let reps = 20_000;
        let (mut s1, mut s2) = ([0.0; 3], [0.0; 3]);
        for _ in 0..reps {
            let b = model.draw_batch(&mut rng);
            let mut g = [0.0; 3];
            model.minibatch_gradient(&b, &x, &mut g);
            for i in 0..3 {
                s1[i] += g[i];
                s2[i] += g[i] * g[i];
            }
        }
        for i in 0..3 {
            let m = s1[i] / reps as f64;
            let sd = (s2[i] / reps as f64 - m * m).sqrt();
            assert!(
                (m - full[i]).abs() < 5.0 * sd / (reps as f64).sqrt(),
                "{i}: {m} vs {}",
                full[i]
            );
        }
    }
}
