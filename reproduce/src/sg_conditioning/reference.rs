//! The reference posterior of each panel and the scale-free errors against
//! it; the logistic model's reference by importance sampling.

use nalgebra::{DMatrix, DVector};
use qnmc::Potential;
use qnmc::random::standard_normal;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use super::data::normals;
use super::{DIMENSION, PROPOSAL_DOF};

/// The reference posterior N(μ, Σ) and its whitening L⁻¹ (Σ = LLᵀ).
pub struct Reference {
    mean: DVector<f64>,
    whitening: DMatrix<f64>,
    note: String,
}

impl Reference {
    /// From the posterior mean and covariance; `note` says where they come
    /// from. `None` when the covariance is not positive definite.
    pub fn new(mean: DVector<f64>, covariance: &DMatrix<f64>, note: String) -> Option<Self> {
        let l = covariance.clone().cholesky()?.l();
        let whitening = l.try_inverse()?;
        Some(Reference {
            mean,
            whitening,
            note,
        })
    }

    /// Where the reference comes from.
    pub fn note(&self) -> &str {
        &self.note
    }

    /// (mean error, covariance error) of `draws`: ‖L⁻¹(θ̄ − μ)‖/√D and
    /// ‖L⁻¹ĈL⁻ᵀ − I‖_F/√D.
    pub(crate) fn errors<const D: usize>(&self, draws: &[[f64; D]]) -> (f64, f64) {
        let d = D;
        let n = draws.len().max(1) as f64;
        let mut mean = DVector::<f64>::zeros(d);
        for x in draws {
            for i in 0..d {
                mean[i] += x[i] / n;
            }
        }
        let mut cov = DMatrix::<f64>::zeros(d, d);
        for x in draws {
            for i in 0..d {
                let a = x[i] - mean[i];
                for j in 0..=i {
                    cov[(i, j)] += a * (x[j] - mean[j]);
                }
            }
        }
        let denominator = (draws.len() as f64 - 1.0).max(1.0);
        for i in 0..d {
            for j in 0..=i {
                cov[(i, j)] /= denominator;
                cov[(j, i)] = cov[(i, j)];
            }
        }
        let e = &self.whitening * (mean - &self.mean);
        let white = &self.whitening * cov * self.whitening.transpose() - DMatrix::identity(d, d);
        let root = (d as f64).sqrt();
        (e.norm() / root, white.norm() / root)
    }
}

/// Self-normalised importance sampling of `target` from a Student-t
/// ([`PROPOSAL_DOF`]) centred at `mode` with scale `covariance` (the Laplace
/// approximation): mean, covariance and the weights' ESS. Two threads.
pub(super) fn importance_reference<P: Potential<f64, DIMENSION> + Sync>(
    target: &P,
    mode: &[f64; DIMENSION],
    covariance: &DMatrix<f64>,
    draws: usize,
    seed: u64,
) -> Option<(DVector<f64>, DMatrix<f64>, f64)> {
    let l = covariance.clone().cholesky()?.l();
    let nu = PROPOSAL_DOF as f64;
    let d = DIMENSION;
    let threads = 2;
    let chunk = draws.div_ceil(threads);
    let samples: Vec<(Vec<f64>, f64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                let l = &l;
                scope.spawn(move || {
                    let mut rng = XorShiftRng::seed_from_u64(seed ^ ((k as u64 + 1) * 0x9E37));
                    let mut out = Vec::with_capacity(chunk);
                    let mut gradient = [0.0; DIMENSION];
                    for _ in 0..chunk {
                        let z = DVector::from_iterator(d, normals(&mut rng));
                        let chi2: f64 = (0..PROPOSAL_DOF)
                            .map(|_| standard_normal::<f64, _>(&mut rng).powi(2))
                            .sum();
                        let scale = (nu / chi2).sqrt();
                        let step = l * &z * scale;
                        let mut w = *mode;
                        for i in 0..d {
                            w[i] += step[i];
                        }
                        // log q up to a constant: ‖L⁻¹(w − mode)‖² = scale²‖z‖².
                        let r2 = scale * scale * z.norm_squared();
                        let log_q = -0.5 * (nu + d as f64) * (1.0 + r2 / nu).ln();
                        let u = target.potential_and_gradient(&w, &mut gradient);
                        out.push((w.to_vec(), -u - log_q));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let top = samples
        .iter()
        .map(|s| s.1)
        .filter(|v| v.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = samples
        .iter()
        .map(|s| {
            if s.1.is_finite() {
                (s.1 - top).exp()
            } else {
                0.0
            }
        })
        .collect();
    let total: f64 = weights.iter().sum();
    if total.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let mut mean = DVector::<f64>::zeros(d);
    for (s, w) in samples.iter().zip(&weights) {
        for i in 0..d {
            mean[i] += w * s.0[i] / total;
        }
    }
    let mut cov = DMatrix::<f64>::zeros(d, d);
    for (s, w) in samples.iter().zip(&weights) {
        for i in 0..d {
            for j in 0..d {
                cov[(i, j)] += w * (s.0[i] - mean[i]) * (s.0[j] - mean[j]) / total;
            }
        }
    }
    let ess = total * total / weights.iter().map(|w| w * w).sum::<f64>();
    Some((mean, cov, ess))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sg_conditioning::LINEAR_BATCH;
    use crate::sg_conditioning::data::linear_model;
    use qnmc_host::targets::LinearGaussianModel;

    /// `n` exact draws from N(`mean`, `covariance`).
    fn gaussian_draws(
        mean: &DVector<f64>,
        covariance: &DMatrix<f64>,
        n: usize,
        seed: u64,
    ) -> Vec<[f64; DIMENSION]> {
        let l = covariance.clone().cholesky().unwrap().l();
        let mut rng = XorShiftRng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let z = DVector::from_iterator(DIMENSION, normals(&mut rng));
                let x = mean + &l * z;
                let mut out = [0.0; DIMENSION];
                out.copy_from_slice(x.as_slice());
                out
            })
            .collect()
    }

    fn small_linear() -> (
        LinearGaussianModel<DIMENSION, LINEAR_BATCH>,
        DVector<f64>,
        DMatrix<f64>,
    ) {
        let model = linear_model(2000, 1e3, 5);
        let p = model.posterior();
        let mean = DVector::from_column_slice(&p.mean);
        let cov = DMatrix::from_fn(DIMENSION, DIMENSION, |i, j| p.covariance[i][j]);
        (model, mean, cov)
    }

    /// Exact draws score near 0: with n draws the mean error is the RMS of D
    /// standard normals over √n (≈ 1/√n) and the covariance error ≈
    /// √((D + 1)/n) (off-diagonal entries of the whitened sample covariance
    /// have variance 1/n, diagonal 2/n). The bounds are 3× those Monte-Carlo
    /// scales; the draws shifted by 0.5 sd along every axis must score a mean
    /// error of 0.5 ± the same noise, and scaled by 1.2 a covariance error
    /// near 0.44·√D/√D = 0.44.
    #[test]
    fn errors_are_zero_for_exact_draws_and_see_shifts_and_scales() {
        let (_, mean, cov) = small_linear();
        let reference = Reference::new(mean.clone(), &cov, String::new()).unwrap();
        let n = 20_000;
        let draws = gaussian_draws(&mean, &cov, n, 1);
        let (m, c) = reference.errors(&draws);
        let mc_mean = 1.0 / (n as f64).sqrt();
        let mc_cov = ((DIMENSION as f64 + 1.0) / n as f64).sqrt();
        assert!(m < 3.0 * mc_mean, "mean error {m} for exact draws");
        assert!(c < 3.0 * mc_cov, "covariance error {c} for exact draws");

        // θ + 0.5 L 1: whitened mean off by 0.5 in every coordinate.
        let l = cov.clone().cholesky().unwrap().l();
        let shift = &l * DVector::from_element(DIMENSION, 0.5);
        let shifted: Vec<[f64; DIMENSION]> = draws
            .iter()
            .map(|x| {
                let mut y = *x;
                for i in 0..DIMENSION {
                    y[i] += shift[i];
                }
                y
            })
            .collect();
        let (m, _) = reference.errors(&shifted);
        assert!((m - 0.5).abs() < 3.0 * mc_mean, "shifted mean error {m}");

        // Spread 1.2× around the mean: whitened covariance 1.44 I.
        let scaled: Vec<[f64; DIMENSION]> = draws
            .iter()
            .map(|x| {
                let mut y = *x;
                for i in 0..DIMENSION {
                    y[i] = mean[i] + 1.2 * (x[i] - mean[i]);
                }
                y
            })
            .collect();
        let (_, c) = reference.errors(&scaled);
        assert!(
            (c - 0.44).abs() < 3.0 * 1.44 * mc_cov,
            "scaled covariance error {c}"
        );
    }

    /// On a Gaussian posterior (the linear model) the importance-sampling
    /// reference must recover the exact mean and covariance: errors within
    /// 4× the Monte-Carlo scales of [`errors_are_zero_for_exact_draws_and_see_shifts_and_scales`]
    /// at the weights' ESS (the t proposal is wider than the target, so the
    /// weight ESS is below the number of draws).
    #[test]
    fn importance_reference_recovers_a_gaussian_posterior() {
        let (model, mean, cov) = small_linear();
        let exact = Reference::new(mean.clone(), &cov, String::new()).unwrap();
        let mut mode = [0.0; DIMENSION];
        mode.copy_from_slice(mean.as_slice());
        let (m, c, ess) = importance_reference(&model, &mode, &cov, 20_000, 3).unwrap();
        assert!(ess > 2000.0 && ess <= 20_000.0, "weight ESS {ess}");
        let fake: Vec<[f64; DIMENSION]> = gaussian_draws(&m, &c, 40_000, 9);
        // Score the IS moments through draws from N(m, c): their own noise
        // adds the exact-draw scales at 40 000 draws.
        let (me, ce) = exact.errors(&fake);
        let mc_mean = 1.0 / ess.sqrt() + 1.0 / 200.0;
        let mc_cov = ((DIMENSION as f64 + 1.0) / ess).sqrt() + (11.0f64 / 40_000.0).sqrt();
        assert!(me < 4.0 * mc_mean, "IS mean error {me} (weight ESS {ess})");
        assert!(
            ce < 4.0 * mc_cov,
            "IS covariance error {ce} (weight ESS {ess})"
        );
    }
}
