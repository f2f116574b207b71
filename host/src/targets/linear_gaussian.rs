//! The HAMCMC paper's linear Gaussian model (§4.1, eq. 14):
//! θ ~ N(0, I), x_n | θ ~ N(a_nᵀθ, σ²), n = 1 … N, with an analytic posterior.
//!
//! Two faces of one computation: the const-generic core target
//! [`LinearGaussianModel<D, B>`] and the run-time [`LinearGaussian`] that the
//! CLI's `--target linear-gaussian` runs. Simulation, likelihood terms and the
//! posterior are written once, on slices, and shared by both.

use qnmc::random::standard_normal;
use qnmc::{MinibatchPotential, Potential};
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

use crate::model::{KnownPosterior, Model, ModelRng};

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
        let (flat, xs) = simulate_data(D, observations, noise_variance, correlation, seed);
        let regressors = flat
            .chunks_exact(D.max(1))
            .take(observations)
            .map(|row| {
                let mut a = [0.0; D];
                a.copy_from_slice(&row[..D]);
                a
            })
            .collect();
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
        let (mean_v, cov_m) = gaussian_posterior(
            D,
            self.regressors.iter().map(|a| &a[..]),
            &self.observations,
            self.noise_variance,
        )
        .expect("I + AᵀA/σ² is positive definite");
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
        add_likelihood_term(
            &self.regressors[n],
            self.observations[n],
            self.noise_variance,
            theta,
            weight,
            g,
        )
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

/// Simulates the model's data as [`LinearGaussianModel::simulate`] documents:
/// regressors row-major (N × `dimension`) and observations.
fn simulate_data(
    dimension: usize,
    observations: usize,
    noise_variance: f64,
    correlation: f64,
    seed: u64,
) -> (Vec<f64>, Vec<f64>) {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let truth: Vec<f64> = (0..dimension)
        .map(|_| standard_normal::<f64, _>(&mut rng))
        .collect();
    let sigma = noise_variance.sqrt();
    let mut regressors = Vec::with_capacity(observations * dimension);
    let mut xs = Vec::with_capacity(observations);
    for _ in 0..observations {
        let w: f64 = standard_normal(&mut rng);
        let mut mean = 0.0;
        for t in &truth {
            let a = standard_normal::<f64, _>(&mut rng) + correlation * w;
            mean += a * t;
            regressors.push(a);
        }
        xs.push(mean + sigma * standard_normal::<f64, _>(&mut rng));
    }
    (regressors, xs)
}

/// Adds `weight`·a (aᵀθ − x)/σ² to `g` and returns (aᵀθ − x)²/σ².
fn add_likelihood_term(
    a: &[f64],
    x: f64,
    noise_variance: f64,
    theta: &[f64],
    weight: f64,
    g: &mut [f64],
) -> f64 {
    let pred: f64 = a.iter().zip(theta).map(|(a, t)| a * t).sum();
    let r = (pred - x) / noise_variance;
    for (gi, ai) in g.iter_mut().zip(a) {
        *gi += weight * r * ai;
    }
    r * (pred - x)
}

/// The analytic posterior (mean, covariance): precision Λ = I + Σ a_n a_nᵀ/σ²,
/// mean Λ⁻¹ Σ a_n x_n/σ², covariance Λ⁻¹. `None` if Λ is not positive
/// definite (only with non-finite data).
fn gaussian_posterior<'a>(
    dimension: usize,
    regressors: impl Iterator<Item = &'a [f64]>,
    observations: &[f64],
    noise_variance: f64,
) -> Option<(nalgebra::DVector<f64>, nalgebra::DMatrix<f64>)> {
    let mut precision = nalgebra::DMatrix::<f64>::identity(dimension, dimension);
    let mut rhs = nalgebra::DVector::<f64>::zeros(dimension);
    for (a, x) in regressors.zip(observations) {
        for i in 0..dimension {
            rhs[i] += a[i] * x / noise_variance;
            for j in 0..dimension {
                precision[(i, j)] += a[i] * a[j] / noise_variance;
            }
        }
    }
    let chol = nalgebra::Cholesky::new(precision)?;
    Some((chol.solve(&rhs), chol.inverse()))
}

/// Why a [`LinearGaussian`] could not be built.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LinearGaussianError {
    /// The dimension was 0.
    ZeroDimension,
    /// The noise variance σ² must be finite and > 0.
    BadNoiseVariance(f64),
    /// The regressor correlation must be finite.
    BadCorrelation(f64),
    /// The data gave a posterior precision that is not positive definite
    /// (non-finite values).
    BadData,
}

impl core::fmt::Display for LinearGaussianError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LinearGaussianError::ZeroDimension => {
                write!(
                    f,
                    "the linear Gaussian model needs a dimension of at least 1"
                )
            }
            LinearGaussianError::BadNoiseVariance(v) => {
                write!(f, "the noise variance must be finite and > 0 (got {v})")
            }
            LinearGaussianError::BadCorrelation(c) => {
                write!(f, "the regressor correlation must be finite (got {c})")
            }
            LinearGaussianError::BadData => write!(
                f,
                "the simulated data do not give a positive-definite posterior precision"
            ),
        }
    }
}

impl std::error::Error for LinearGaussianError {}

/// The run-time face of the linear Gaussian model: dimension, data and the
/// exact posterior known at run time; name `linear-gaussian`.
///
/// [`Model::stochastic_gradient`] draws `batch_size` indices uniformly with
/// replacement and returns θ + (N/B) Σ_{n∈Ω} a_n (a_nᵀθ − x_n)/σ², unbiased
/// for ∇U (`batch_size` 0 gives the exact gradient).
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::LinearGaussian;
/// let model = LinearGaussian::paper(10, 1).unwrap();
/// assert_eq!((model.name().as_str(), model.dimension()), ("linear-gaussian", 10));
/// assert_eq!(model.data_size(), Some(1000));
/// // ∇U vanishes at the posterior mean.
/// let mean = model.known_posterior().unwrap().mean;
/// let mut g = vec![0.0; 10];
/// model.potential_and_gradient(&mean, &mut g);
/// assert!(g.iter().all(|v| v.abs() < 1e-8));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LinearGaussian {
    dimension: usize,
    /// Regressors, row-major N × dimension.
    regressors: Vec<f64>,
    observations: Vec<f64>,
    noise_variance: f64,
    posterior_mean: Vec<f64>,
    posterior_sd: Vec<f64>,
}

impl LinearGaussian {
    /// Number of observations of [`LinearGaussian::paper`].
    pub const PAPER_OBSERVATIONS: usize = 1000;
    /// σ² of [`LinearGaussian::paper`] (the HAMCMC paper's first experiment).
    pub const PAPER_NOISE_VARIANCE: f64 = 10.0;
    /// Regressor correlation of [`LinearGaussian::paper`]: makes the posterior
    /// correlated, as the paper asks (it does not give its construction).
    pub const PAPER_CORRELATION: f64 = 0.9;

    /// Simulated exactly as [`LinearGaussianModel::simulate`] (same data for
    /// the same arguments), deterministic in `seed`.
    pub fn simulate(
        dimension: usize,
        observations: usize,
        noise_variance: f64,
        correlation: f64,
        seed: u64,
    ) -> Result<Self, LinearGaussianError> {
        if dimension == 0 {
            return Err(LinearGaussianError::ZeroDimension);
        }
        if !(noise_variance.is_finite() && noise_variance > 0.0) {
            return Err(LinearGaussianError::BadNoiseVariance(noise_variance));
        }
        if !correlation.is_finite() {
            return Err(LinearGaussianError::BadCorrelation(correlation));
        }
        let (regressors, observations) =
            simulate_data(dimension, observations, noise_variance, correlation, seed);
        Self::from_parts(dimension, regressors, observations, noise_variance)
    }

    /// N = 1000 observations, σ² = 10, correlation 0.9, in `dimension` coordinates.
    pub fn paper(dimension: usize, seed: u64) -> Result<Self, LinearGaussianError> {
        Self::simulate(
            dimension,
            Self::PAPER_OBSERVATIONS,
            Self::PAPER_NOISE_VARIANCE,
            Self::PAPER_CORRELATION,
            seed,
        )
    }

    fn from_parts(
        dimension: usize,
        regressors: Vec<f64>,
        observations: Vec<f64>,
        noise_variance: f64,
    ) -> Result<Self, LinearGaussianError> {
        let (mean, cov) = gaussian_posterior(
            dimension,
            regressors.chunks_exact(dimension),
            &observations,
            noise_variance,
        )
        .ok_or(LinearGaussianError::BadData)?;
        Ok(LinearGaussian {
            dimension,
            regressors,
            observations,
            noise_variance,
            posterior_mean: mean.iter().copied().collect(),
            posterior_sd: (0..dimension).map(|i| cov[(i, i)].sqrt()).collect(),
        })
    }

    /// Regressor a_n (n < N).
    pub fn regressor(&self, n: usize) -> &[f64] {
        &self.regressors[n * self.dimension..(n + 1) * self.dimension]
    }

    /// Observations x_n.
    pub fn observations(&self) -> &[f64] {
        &self.observations
    }

    /// Noise variance σ².
    pub fn noise_variance(&self) -> f64 {
        self.noise_variance
    }
}

impl<const D: usize, const B: usize> TryFrom<&LinearGaussianModel<D, B>> for LinearGaussian {
    type Error = LinearGaussianError;

    fn try_from(m: &LinearGaussianModel<D, B>) -> Result<Self, LinearGaussianError> {
        if D == 0 {
            return Err(LinearGaussianError::ZeroDimension);
        }
        if !(m.noise_variance.is_finite() && m.noise_variance > 0.0) {
            return Err(LinearGaussianError::BadNoiseVariance(m.noise_variance));
        }
        let regressors = m.regressors.iter().flatten().copied().collect();
        Self::from_parts(D, regressors, m.observations.clone(), m.noise_variance)
    }
}

impl Model for LinearGaussian {
    fn name(&self) -> String {
        "linear-gaussian".into()
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn output_names(&self) -> Vec<String> {
        (1..=self.dimension)
            .map(|i| format!("theta[{i}]"))
            .collect()
    }

    /// U(θ) = ½‖θ‖² + Σ_n (x_n − a_nᵀθ)²/(2σ²).
    fn potential_and_gradient(&self, theta: &[f64], gradient: &mut [f64]) -> f64 {
        gradient.copy_from_slice(theta);
        let mut u: f64 = theta.iter().map(|t| t * t).sum();
        for (n, x) in self.observations.iter().enumerate() {
            u += add_likelihood_term(
                self.regressor(n),
                *x,
                self.noise_variance,
                theta,
                1.0,
                gradient,
            );
        }
        0.5 * u
    }

    fn data_size(&self) -> Option<usize> {
        Some(self.observations.len())
    }

    fn stochastic_gradient(
        &self,
        theta: &[f64],
        batch_size: usize,
        rng: &mut ModelRng,
        gradient: &mut [f64],
    ) {
        let n_data = self.observations.len();
        if batch_size == 0 || n_data == 0 {
            let _ = self.potential_and_gradient(theta, gradient);
            return;
        }
        gradient.copy_from_slice(theta);
        let weight = n_data as f64 / batch_size as f64;
        for _ in 0..batch_size {
            // Multiply-shift maps a u32 to [0, N) without division.
            let n = ((rng.next_u32() as u64 * n_data as u64) >> 32) as usize;
            add_likelihood_term(
                self.regressor(n),
                self.observations[n],
                self.noise_variance,
                theta,
                weight,
                gradient,
            );
        }
    }

    fn known_posterior(&self) -> Option<KnownPosterior> {
        Some(KnownPosterior {
            source: "analytic (conjugate Gaussian posterior)".into(),
            mean: self.posterior_mean.clone(),
            sd: self.posterior_sd.clone(),
            mean_mcse: None,
            sd_mcse: None,
            gaussian_marginals: true,
        })
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

    /// The run-time model has the const-generic model's data, U, ∇U and
    /// posterior (shared code, so equal to rounding), and its stochastic
    /// gradient is unbiased: mean of 20 000 estimates within 5 Monte-Carlo
    /// standard errors (sd/√reps) of ∇U in every coordinate (P(false alarm)
    /// ≈ 6e-7 per coordinate).
    #[test]
    fn runtime_model_matches_const_generic_model() {
        let fixed = LinearGaussianModel::<3, 5>::simulate(40, 2.0, 0.5, 2);
        let runtime = LinearGaussian::simulate(3, 40, 2.0, 0.5, 2).unwrap();
        assert_eq!(LinearGaussian::try_from(&fixed).unwrap(), runtime);
        assert_eq!(runtime.observations(), &fixed.observations[..]);
        assert_eq!(runtime.regressor(7), &fixed.regressors[7][..]);
        let x = [0.1, 0.2, -0.3];
        let (mut g1, mut g2) = ([0.0; 3], [0.0; 3]);
        let u1 = fixed.potential_and_gradient(&x, &mut g1);
        let u2 = runtime.potential_and_gradient(&x, &mut g2);
        assert!((u1 - u2).abs() < 1e-12 * u1.abs());
        for i in 0..3 {
            assert!((g1[i] - g2[i]).abs() < 1e-12 * g1[i].abs().max(1.0));
        }
        let post = fixed.posterior();
        let known = runtime.known_posterior().unwrap();
        for i in 0..3 {
            assert!((known.mean[i] - post.mean[i]).abs() < 1e-12);
            assert!((known.sd[i] - post.covariance[i][i].sqrt()).abs() < 1e-12);
        }
        let mut rng = ModelRng::seed_from_u64(3);
        let reps = 20_000;
        let (mut s1, mut s2) = ([0.0; 3], [0.0; 3]);
        for _ in 0..reps {
            let mut g = [0.0; 3];
            runtime.stochastic_gradient(&x, 4, &mut rng, &mut g);
            for i in 0..3 {
                s1[i] += g[i];
                s2[i] += g[i] * g[i];
            }
        }
        for i in 0..3 {
            let m = s1[i] / reps as f64;
            let sd = (s2[i] / reps as f64 - m * m).sqrt();
            assert!(sd > 0.0);
            assert!(
                (m - g1[i]).abs() < 5.0 * sd / (reps as f64).sqrt(),
                "{i}: {m} vs {}",
                g1[i]
            );
        }
    }

    #[test]
    fn bad_settings_are_errors() {
        assert_eq!(
            LinearGaussian::simulate(0, 10, 1.0, 0.0, 1),
            Err(LinearGaussianError::ZeroDimension)
        );
        assert!(matches!(
            LinearGaussian::simulate(2, 10, -1.0, 0.0, 1),
            Err(LinearGaussianError::BadNoiseVariance(_))
        ));
        assert!(LinearGaussian::simulate(2, 10, 1.0, f64::INFINITY, 1).is_err());
        assert!(!LinearGaussianError::BadData.to_string().is_empty());
    }
}
