//! The paper's gradient-descent baseline: full-batch gradient descent on the
//! ℓ2-regularised negative log-likelihood, U_λ(w) = −log p(t | w) + λ|w|²/2,
//! from w = 0 with the fixed step 1/L_λ, L_λ = ¼ λ_max(XᵀX) + λ (the
//! Lipschitz constant of ∇U_λ, so every step decreases U_λ). The paper
//! "trial\[s\] several time\[s\] to choose the near-optimal hyperparameter":
//! we run every λ of [`LAMBDAS`] and keep the one whose final test error is
//! lowest (chosen on the test set, as the paper seems to: optimistic for the
//! baseline).

use qnmc::Potential;

use super::data::{DIMENSION, Data, Images};

/// The regularisers tried: 10⁻², the precision of the samplers' prior
/// N(0, 100 I) (so that run ends near the posterior mode), 1 and 100.
pub const LAMBDAS: [f64; 3] = [0.01, 1.0, 100.0];

/// Power-iteration steps estimating λ_max(XᵀX).
const POWER_STEPS: usize = 20;

/// One gradient-descent run.
#[derive(Debug, Clone, PartialEq)]
pub struct Descent {
    /// Its regulariser λ.
    pub lambda: f64,
    /// The step 1/L_λ.
    pub step: f64,
    /// Test error after each step (entry 0: at w = 0, before any step).
    pub test_error: Vec<f64>,
    /// Gradient evaluations after each entry of `test_error` (the power
    /// iteration's products counted as gradients).
    pub gradients: Vec<u64>,
}

impl Descent {
    /// The test error at the end.
    pub fn final_error(&self) -> f64 {
        self.test_error.last().copied().unwrap_or(f64::NAN)
    }
}

/// λ_max(XᵀX) of the design (pixel / 255) by power iteration from 1: the
/// first eigenvector of a non-negative matrix is non-negative, so the
/// all-ones start is never orthogonal to it. Each step is one product with
/// XᵀX, obtained as the gradient difference of a zero-prior potential.
fn largest_gram_eigenvalue(images: &Images) -> f64 {
    // With labels t and prior 0, ∇U(w) = Σ (σ(xᵀw) − t) x; σ is not linear,
    // so compute XᵀXv directly from two gradients at ±h v: their difference
    // is ¼XᵀX(2h v) + O(h³) (σ'(0) = ¼, σ''(0) = 0).
    let h = 1e-4;
    let mut flat = images.clone();
    flat.prior_precision = 0.0;
    let mut v = [1.0 / (DIMENSION as f64).sqrt(); DIMENSION];
    let mut lambda = 0.0;
    let (mut gp, mut gm) = ([0.0; DIMENSION], [0.0; DIMENSION]);
    for _ in 0..POWER_STEPS {
        let plus: [f64; DIMENSION] = core::array::from_fn(|i| h * v[i]);
        let minus: [f64; DIMENSION] = core::array::from_fn(|i| -h * v[i]);
        flat.potential_and_gradient(&plus, &mut gp);
        flat.potential_and_gradient(&minus, &mut gm);
        let av: [f64; DIMENSION] = core::array::from_fn(|i| (gp[i] - gm[i]) / (0.5 * h));
        let norm = av.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm == 0.0 {
            return 0.0;
        }
        lambda = av.iter().zip(&v).map(|(a, b)| a * b).sum::<f64>();
        v = core::array::from_fn(|i| av[i] / norm);
    }
    lambda
}

/// Runs `steps` gradient-descent steps for every λ of [`LAMBDAS`]; the
/// Gram eigenvalue is estimated once and its cost added to every run's count.
pub fn run_all(data: &Data, steps: usize) -> Vec<Descent> {
    let gram = largest_gram_eigenvalue(&data.train);
    let setup = 2 * POWER_STEPS as u64;
    LAMBDAS
        .iter()
        .map(|&lambda| {
            let mut model = data.train.clone();
            model.prior_precision = lambda;
            let step = 1.0 / (0.25 * gram + lambda);
            let mut w = [0.0; DIMENSION];
            let mut g = [0.0; DIMENSION];
            let mut test_error = vec![data.test.error(&w)];
            let mut gradients = vec![setup];
            for k in 1..=steps {
                model.potential_and_gradient(&w, &mut g);
                for (wi, gi) in w.iter_mut().zip(&g) {
                    *wi -= step * gi;
                }
                test_error.push(data.test.error(&w));
                gradients.push(setup + k as u64);
            }
            Descent {
                lambda,
                step,
                test_error,
                gradients,
            }
        })
        .collect()
}

/// The run with the lowest final test error (the first on ties).
pub fn best(runs: &[Descent]) -> Option<&Descent> {
    runs.iter()
        .fold(None, |best: Option<&Descent>, r| match best {
            Some(b) if b.final_error() <= r.final_error() => Some(b),
            _ => Some(r),
        })
}
