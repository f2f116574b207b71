//! What the minibatch gradient noise does to a Langevin chain with a constant
//! preconditioner H on this Gaussian posterior: the predicted spread of
//! SGLD (H = I) and SGRLD (H = G⁻¹), to set beside the measured one.
//!
//! One step is θ' = θ − εH(Λ(θ − μ) + ξ) + √(2ε)·S z with S Sᵀ = H, Λ the
//! posterior precision and ξ the minibatch error of ∇Ũ, of covariance V.
//! Its stationary covariance solves C = A C Aᵀ + 2εH + ε²HVH, A = I − εHΛ
//! (V taken at the posterior mean, ε fixed). Without ξ the spread
//! tr(Λ C)/D is 1 up to the Euler bias; the ε²HVH term is what inflates it.

use super::{BATCH, DIMENSION, EXPONENT, Model, Problem};

type Matrix = [[f64; DIMENSION]; DIMENSION];

fn mul(a: &Matrix, b: &Matrix) -> Matrix {
    let mut c = [[0.0; DIMENSION]; DIMENSION];
    for i in 0..DIMENSION {
        for j in 0..DIMENSION {
            for k in 0..DIMENSION {
                c[i][j] += a[i][k] * b[k][j];
            }
        }
    }
    c
}

fn transpose(a: &Matrix) -> Matrix {
    let mut t = *a;
    for (i, row) in a.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            t[j][i] = v;
        }
    }
    t
}

fn add(a: &Matrix, b: &Matrix) -> Matrix {
    let mut c = *a;
    for (ci, bi) in c.iter_mut().zip(b) {
        for (x, y) in ci.iter_mut().zip(bi) {
            *x += y;
        }
    }
    c
}

fn scale(a: &Matrix, s: f64) -> Matrix {
    a.map(|row| row.map(|x| s * x))
}

/// Covariance V of the minibatch gradient ∇Ũ_Ω(θ) over batches of B
/// indices drawn with replacement: (N²/B)·Cov_n(gₙ), gₙ = aₙ(aₙᵀθ − xₙ)/σ².
pub fn gradient_noise(model: &Model, theta: &[f64; DIMENSION], batch: usize) -> Matrix {
    let n = model.len() as f64;
    let grads: Vec<[f64; DIMENSION]> = model
        .regressors
        .iter()
        .zip(&model.observations)
        .map(|(a, x)| {
            let r = (a[0] * theta[0] + a[1] * theta[1] - x) / model.noise_variance;
            [a[0] * r, a[1] * r]
        })
        .collect();
    let mut mean = [0.0; DIMENSION];
    for g in &grads {
        for i in 0..DIMENSION {
            mean[i] += g[i] / n;
        }
    }
    let mut cov = [[0.0; DIMENSION]; DIMENSION];
    for g in &grads {
        for i in 0..DIMENSION {
            for j in 0..DIMENSION {
                cov[i][j] += (g[i] - mean[i]) * (g[j] - mean[j]) / n;
            }
        }
    }
    scale(&cov, n * n / batch as f64)
}

/// Stationary covariance of θ' = Aθ + noise(Q): Σₖ Aᵏ Q Aᵏᵀ by doubling
/// (64 doublings sum 2⁶⁴ terms); NaN entries if A is not stable.
fn stationary(a: &Matrix, q: &Matrix) -> Matrix {
    let mut sum = *q;
    let mut power = *a;
    for _ in 0..64 {
        sum = add(&sum, &mul(&mul(&power, &sum), &transpose(&power)));
        power = mul(&power, &power);
    }
    sum
}

/// Predicted spread tr(Λ C)/D of a chain with constant preconditioner
/// `h` and step `eps`, with (`noise` = true) or without the gradient noise.
pub fn predicted_spread(problem: &Problem, h: &Matrix, eps: f64, noise: bool) -> f64 {
    let cov = &problem.posterior.covariance;
    let det = cov[0][0] * cov[1][1] - cov[0][1] * cov[1][0];
    let precision = [
        [cov[1][1] / det, -cov[0][1] / det],
        [-cov[1][0] / det, cov[0][0] / det],
    ];
    let v = gradient_noise(&problem.model, &problem.posterior.mean, BATCH);
    let mut a = scale(&mul(h, &precision), -eps);
    for (i, row) in a.iter_mut().enumerate() {
        row[i] += 1.0;
    }
    let mut q = scale(h, 2.0 * eps);
    if noise {
        q = add(&q, &scale(&mul(&mul(h, &v), h), eps * eps));
    }
    let c = stationary(&a, &q);
    let lc = mul(&precision, &c);
    (lc[0][0] + lc[1][1]) / DIMENSION as f64
}

/// The mean of ε_t = (a/t)^κ over the kept half t ∈ (T/2, T].
pub fn mean_kept_step(a: f64, samples: usize) -> f64 {
    let kept = samples - samples / 2;
    (samples / 2 + 1..=samples)
        .map(|t| (a / t as f64).powf(EXPONENT))
        .sum::<f64>()
        / kept as f64
}
