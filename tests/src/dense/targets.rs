//! Test targets shared by the core samplers and the dense references.
//!
//! Each target computes U and ∇U in one plain function on slices, so the core
//! (through [`qnmc::Potential`] / [`qnmc::MinibatchPotential`]) and the reference
//! (through [`DenseTarget`] / [`DenseMinibatchTarget`]) see bit-identical values:
//! the tests compare the samplers, not the models.

use nalgebra::{DMatrix, DVector};
use qnmc::random::standard_normal;
use qnmc::{MinibatchPotential, Potential, Real};
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

/// A full-data target on dense vectors.
pub trait DenseTarget {
    /// Dimension D.
    fn dim(&self) -> usize;
    /// Writes ∇U(x) into `g` and returns U(x).
    fn eval(&self, x: &[f64], g: &mut [f64]) -> f64;
    /// U(x) and ∇U(x).
    fn value_and_gradient(&self, x: &DVector<f64>) -> (f64, DVector<f64>) {
        let mut g = DVector::zeros(x.len());
        let u = self.eval(x.as_slice(), g.as_mut_slice());
        (u, g)
    }
}

/// A minibatch target on dense vectors.
pub trait DenseMinibatchTarget {
    /// Dimension D.
    fn dim(&self) -> usize;
    /// Draws a batch with the sampler's generator.
    fn draw_batch_indices<R: Rng + ?Sized>(&self, rng: &mut R) -> Vec<usize>;
    /// Writes ∇Ũ_Ω(x) into `g`.
    fn batch_gradient(&self, batch: &[usize], x: &[f64], g: &mut [f64]);
    /// ∇Ũ_Ω(x).
    fn batch_gradient_vec(&self, batch: &[usize], x: &DVector<f64>) -> DVector<f64> {
        let mut g = DVector::zeros(x.len());
        self.batch_gradient(batch, x.as_slice(), g.as_mut_slice());
        g
    }
}

macro_rules! impl_potential {
    ($t:ty) => {
        impl<const D: usize> Potential<f64, D> for $t {
            fn potential_and_gradient(&self, x: &[f64; D], g: &mut [f64; D]) -> f64 {
                assert_eq!(DenseTarget::dim(self), D, "dimension mismatch");
                self.eval(x, g)
            }
        }
    };
}

/// A data generator for the targets (not a sampler stream).
fn data_rng(seed: u64) -> XorShiftRng {
    XorShiftRng::seed_from_u64(seed ^ 0x5eed_da7a)
}

fn normal(rng: &mut XorShiftRng) -> f64 {
    standard_normal::<f64, _>(rng)
}

/// N(μ, Σ) with Σ = c·11ᵀ + a·I: U = ½ (x − μ)ᵀ Σ⁻¹ (x − μ).
#[derive(Debug, Clone)]
pub struct CorrelatedGaussian {
    dim: usize,
    mean: Vec<f64>,
    /// Σ⁻¹, row-major.
    precision: Vec<f64>,
}

impl CorrelatedGaussian {
    /// Σ = c·11ᵀ + a·I, mean μ.
    pub fn new(mean: &[f64], c: f64, a: f64) -> Self {
        let d = mean.len();
        let sigma = DMatrix::from_fn(d, d, |i, j| c + if i == j { a } else { 0.0 });
        let precision = sigma.try_inverse().expect("Σ is invertible");
        let mut rows = Vec::with_capacity(d * d);
        for i in 0..d {
            for j in 0..d {
                rows.push(precision[(i, j)]);
            }
        }
        CorrelatedGaussian {
            dim: d,
            mean: mean.to_vec(),
            precision: rows,
        }
    }

    /// The precision matrix Σ⁻¹.
    pub fn precision(&self) -> DMatrix<f64> {
        DMatrix::from_row_slice(self.dim, self.dim, &self.precision)
    }
}

impl DenseTarget for CorrelatedGaussian {
    fn dim(&self) -> usize {
        self.dim
    }
    fn eval(&self, x: &[f64], g: &mut [f64]) -> f64 {
        let d = self.dim;
        let mut u = 0.0;
        for (i, row) in self.precision.chunks_exact(d).enumerate() {
            let mut gi = 0.0;
            for ((p, xj), mj) in row.iter().zip(x).zip(&self.mean) {
                gi += p * (xj - mj);
            }
            g[i] = gi;
            u += 0.5 * (x[i] - self.mean[i]) * gi;
        }
        u
    }
}
impl_potential!(CorrelatedGaussian);

/// Bayesian logistic regression: labels in {0, 1}, features xₙ, prior N(0, σ²I).
/// U(θ) = Σₙ [log(1 + e^{ηₙ}) − yₙ ηₙ] + |θ|²/(2σ²), ηₙ = xₙᵀθ.
#[derive(Debug, Clone)]
pub struct LogisticRegression {
    dim: usize,
    features: Vec<f64>,
    labels: Vec<f64>,
    prior_variance: f64,
}

impl LogisticRegression {
    /// `n` synthetic points in dimension `dim` (first feature 1, an intercept),
    /// labels drawn from a fixed true θ.
    pub fn synthetic(dim: usize, n: usize, seed: u64) -> Self {
        let mut rng = data_rng(seed);
        let truth: Vec<f64> = (0..dim).map(|_| normal(&mut rng)).collect();
        let mut features = Vec::with_capacity(n * dim);
        let mut labels = Vec::with_capacity(n);
        for _ in 0..n {
            let mut eta = 0.0;
            for (j, t) in truth.iter().enumerate() {
                let x = if j == 0 { 1.0 } else { normal(&mut rng) };
                features.push(x);
                eta += x * t;
            }
            let u = <f64 as Real>::uniform_open_closed(&mut rng);
            labels.push(if u < 1.0 / (1.0 + (-eta).exp()) {
                1.0
            } else {
                0.0
            });
        }
        LogisticRegression {
            dim,
            features,
            labels,
            prior_variance: 4.0,
        }
    }
}

impl DenseTarget for LogisticRegression {
    fn dim(&self) -> usize {
        self.dim
    }
    fn eval(&self, x: &[f64], g: &mut [f64]) -> f64 {
        let d = self.dim;
        let mut u = 0.0;
        for j in 0..d {
            g[j] = x[j] / self.prior_variance;
            u += 0.5 * x[j] * x[j] / self.prior_variance;
        }
        for (row, &label) in self.features.chunks_exact(d).zip(&self.labels) {
            let eta: f64 = row.iter().zip(x).map(|(a, b)| a * b).sum();
            // log(1 + e^η) computed stably.
            let softplus = if eta > 0.0 {
                eta + (-eta).exp().ln_1p()
            } else {
                eta.exp().ln_1p()
            };
            u += softplus - label * eta;
            let sigmoid = 1.0 / (1.0 + (-eta).exp());
            for j in 0..d {
                g[j] += (sigmoid - label) * row[j];
            }
        }
        u
    }
}
impl_potential!(LogisticRegression);

/// A product of D/2 banana-shaped densities (a twisted Gaussian, not log-concave):
/// for each pair (a, b) = (x_{2k}, x_{2k+1}),
/// U = a²/(2·σ²) + (b − β(a² − σ²))²/2.
#[derive(Debug, Clone)]
pub struct Banana {
    dim: usize,
    /// σ² of the first coordinate.
    pub spread: f64,
    /// β, the twist.
    pub twist: f64,
}

impl Banana {
    /// D must be even.
    pub fn new(dim: usize, spread: f64, twist: f64) -> Self {
        assert!(dim % 2 == 0, "Banana needs an even dimension");
        Banana { dim, spread, twist }
    }
}

impl DenseTarget for Banana {
    fn dim(&self) -> usize {
        self.dim
    }
    fn eval(&self, x: &[f64], g: &mut [f64]) -> f64 {
        let mut u = 0.0;
        for k in 0..self.dim / 2 {
            let (a, b) = (x[2 * k], x[2 * k + 1]);
            let w = b - self.twist * (a * a - self.spread);
            u += 0.5 * a * a / self.spread + 0.5 * w * w;
            g[2 * k] = a / self.spread - 2.0 * self.twist * a * w;
            g[2 * k + 1] = w;
        }
        u
    }
}
impl_potential!(Banana);

/// The HAMCMC paper's linear Gaussian model: yₙ = aₙᵀθ + e, e ~ N(0, σ_y²),
/// θ ~ N(0, σ_θ² I). Minibatches of `batch_size` indices drawn with replacement
/// (one `next_u64` each); ∇Ũ_Ω = (N/|Ω|) Σ_{n∈Ω} aₙ(aₙᵀθ − yₙ)/σ_y² + θ/σ_θ².
#[derive(Debug, Clone)]
pub struct LinearGaussianMinibatch {
    dim: usize,
    design: Vec<f64>,
    observations: Vec<f64>,
    noise_variance: f64,
    prior_variance: f64,
    batch_size: usize,
}

impl LinearGaussianMinibatch {
    /// `n` synthetic observations from a fixed true θ.
    pub fn synthetic(dim: usize, n: usize, batch_size: usize, seed: u64) -> Self {
        let mut rng = data_rng(seed);
        let truth: Vec<f64> = (0..dim).map(|_| normal(&mut rng)).collect();
        let noise_variance = 1.0;
        let mut design = Vec::with_capacity(n * dim);
        let mut observations = Vec::with_capacity(n);
        for _ in 0..n {
            let mut mean = 0.0;
            for t in &truth {
                let a = normal(&mut rng);
                design.push(a);
                mean += a * t;
            }
            observations.push(mean + noise_variance * normal(&mut rng));
        }
        LinearGaussianMinibatch {
            dim,
            design,
            observations,
            noise_variance,
            prior_variance: 10.0,
            batch_size,
        }
    }

    /// Number of observations N.
    pub fn len(&self) -> usize {
        self.observations.len()
    }

    /// `true` without observations.
    pub fn is_empty(&self) -> bool {
        self.observations.is_empty()
    }
}

impl DenseMinibatchTarget for LinearGaussianMinibatch {
    fn dim(&self) -> usize {
        self.dim
    }
    fn draw_batch_indices<R: Rng + ?Sized>(&self, rng: &mut R) -> Vec<usize> {
        let n = self.observations.len() as u64;
        (0..self.batch_size)
            .map(|_| (rng.next_u64() % n) as usize)
            .collect()
    }
    fn batch_gradient(&self, batch: &[usize], x: &[f64], g: &mut [f64]) {
        let d = self.dim;
        g[..d].fill(0.0);
        for &n in batch {
            let row = &self.design[n * d..(n + 1) * d];
            let residual: f64 =
                row.iter().zip(x).map(|(a, b)| a * b).sum::<f64>() - self.observations[n];
            for j in 0..d {
                g[j] += row[j] * residual / self.noise_variance;
            }
        }
        let scale = self.observations.len() as f64 / batch.len() as f64;
        for j in 0..d {
            g[j] = scale * g[j] + x[j] / self.prior_variance;
        }
    }
}

impl<const D: usize> MinibatchPotential<f64, D> for LinearGaussianMinibatch {
    type Batch = Vec<usize>;
    fn draw_batch<R: Rng + ?Sized>(&self, rng: &mut R) -> Vec<usize> {
        assert_eq!(DenseMinibatchTarget::dim(self), D, "dimension mismatch");
        self.draw_batch_indices(rng)
    }
    fn minibatch_gradient(&self, batch: &Vec<usize>, x: &[f64; D], g: &mut [f64; D]) {
        self.batch_gradient(batch, x, g)
    }
}
