//! The benchmark's data: covariates with a chosen condition number in a
//! random rotation, and the two models built on them.

use qnmc::random::standard_normal;
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

use super::{DIMENSION, LINEAR_BATCH, LOGISTIC_BATCH, LOGISTIC_PRIOR_VARIANCE, LOGISTIC_SIGNAL_SD};
use qnmc_host::targets::{LinearGaussianModel, LogisticRegression};

/// A random rotation (Gram–Schmidt of a Gaussian matrix), rows orthonormal.
fn rotation(rng: &mut XorShiftRng) -> [[f64; DIMENSION]; DIMENSION] {
    let mut q = [[0.0; DIMENSION]; DIMENSION];
    for k in 0..DIMENSION {
        let mut v = [0.0; DIMENSION];
        for x in v.iter_mut() {
            *x = standard_normal(rng);
        }
        for u in q.iter().take(k) {
            let p: f64 = v.iter().zip(u).map(|(a, b)| a * b).sum();
            for (a, b) in v.iter_mut().zip(u) {
                *a -= p * b;
            }
        }
        let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt();
        for (o, a) in q[k].iter_mut().zip(&v) {
            *o = a / norm;
        }
    }
    q
}

/// `rows` covariate vectors with covariance Q diag(s²) Qᵀ, cond = `condition`.
pub(super) fn covariates(
    rows: usize,
    condition: f64,
    rng: &mut XorShiftRng,
) -> Vec<[f64; DIMENSION]> {
    let q = rotation(rng);
    let sds: Vec<f64> = (0..DIMENSION)
        .map(|i| condition.powf(-0.5 * i as f64 / (DIMENSION - 1) as f64))
        .collect();
    (0..rows)
        .map(|_| {
            let mut x = [0.0; DIMENSION];
            for (k, row) in q.iter().enumerate() {
                let z = sds[k] * standard_normal::<f64, _>(rng);
                for (xi, qi) in x.iter_mut().zip(row) {
                    *xi += z * qi;
                }
            }
            x
        })
        .collect()
}

pub(super) fn normals(rng: &mut XorShiftRng) -> [f64; DIMENSION] {
    let mut v = [0.0; DIMENSION];
    for x in v.iter_mut() {
        *x = standard_normal(rng);
    }
    v
}

fn dot(a: &[f64; DIMENSION], b: &[f64; DIMENSION]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The linear Gaussian data set at condition `condition` (noise variance 1).
pub fn linear_model(
    rows: usize,
    condition: f64,
    seed: u64,
) -> LinearGaussianModel<DIMENSION, LINEAR_BATCH> {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let regressors = covariates(rows, condition, &mut rng);
    let theta = normals(&mut rng);
    let observations = regressors
        .iter()
        .map(|a| dot(a, &theta) + standard_normal::<f64, _>(&mut rng))
        .collect();
    LinearGaussianModel {
        regressors,
        observations,
        noise_variance: 1.0,
    }
}

/// The logistic data set at condition `condition`.
pub fn logistic_model(
    rows: usize,
    condition: f64,
    seed: u64,
) -> LogisticRegression<DIMENSION, LOGISTIC_BATCH> {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let design = covariates(rows, condition, &mut rng);
    let mut w = normals(&mut rng);
    let sd = (design.iter().map(|x| dot(x, &w).powi(2)).sum::<f64>() / rows.max(1) as f64).sqrt();
    for v in w.iter_mut() {
        *v *= LOGISTIC_SIGNAL_SD / sd.max(f64::MIN_POSITIVE);
    }
    let labels = design
        .iter()
        .map(|x| {
            let p = 1.0 / (1.0 + (-dot(x, &w)).exp());
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            f64::from(u8::from(u < p))
        })
        .collect();
    LogisticRegression::new(design, labels, LOGISTIC_PRIOR_VARIANCE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, DVector, SymmetricEigen};
    use rand_core::SeedableRng;

    #[test]
    fn covariates_have_the_asked_condition_number() {
        let mut rng = XorShiftRng::seed_from_u64(4);
        let x = covariates(50_000, 1e3, &mut rng);
        let mut cov = DMatrix::<f64>::zeros(DIMENSION, DIMENSION);
        for row in &x {
            let v = DVector::from_column_slice(row);
            cov += &v * v.transpose() / x.len() as f64;
        }
        let e = SymmetricEigen::new(cov).eigenvalues;
        let (lo, hi) = e.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
        // Sample eigenvalues of 50 000 draws: within a few % of 1 and 1e-3.
        assert!((hi - 1.0).abs() < 0.05, "largest {hi}");
        assert!((lo / 1e-3 - 1.0).abs() < 0.05, "smallest {lo}");
    }
}
