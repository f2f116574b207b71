//! [`GaussianCovariance`]: N(μ, Σ) with Σ read from a CSV file (`gaussian-cov`).

use crate::input::{Header, InputError, InputErrorKind, Separator, Table, TableFormat, read_table};
use crate::model::{KnownPosterior, Model};
use nalgebra::{Cholesky, DMatrix, DVector};
use std::path::{Path, PathBuf};

/// Relative tolerance of the symmetry check: |Σᵢⱼ − Σⱼᵢ| ≤ 1e-8 ·
/// max(|Σᵢⱼ|, |Σⱼᵢ|, √(|Σᵢᵢ Σⱼⱼ|)), room for matrices printed with ~9 digits.
pub const SYMMETRY_TOLERANCE: f64 = 1e-8;

/// A Gaussian N(μ, Σ) whose covariance is read from a CSV file: D rows of D
/// numbers, with or without a header row (a first row holding anything that
/// is not a number is taken as a header). μ = 0 unless set with
/// [`with_mean`](Self::with_mean).
///
/// U(x) = ½ (x − μ)ᵀ Σ⁻¹ (x − μ), ∇U(x) = Σ⁻¹ (x − μ), with Σ⁻¹ from the
/// Cholesky factor of Σ. The posterior is known exactly: mean μ, marginal sds
/// √Σᵢᵢ, Gaussian marginals.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::GaussianCovariance;
///
/// let path = std::env::temp_dir().join("qnmc_doc_cov.csv");
/// std::fs::write(&path, "a,b\n4,2\n2,3\n").unwrap();
/// let target = GaussianCovariance::from_csv(&path).unwrap();
/// assert_eq!(target.dimension(), 2);
/// let known = target.known_posterior().unwrap();
/// assert_eq!(known.sd, [2.0, 3f64.sqrt()]);
/// let mut g = [0.0; 2];
/// let u = target.potential_and_gradient(&[0.0, 0.0], &mut g);
/// assert_eq!((u, g), (0.0, [0.0, 0.0]));
///
/// std::fs::write(&path, "4,2\n1,3\n").unwrap();
/// let err = GaussianCovariance::from_csv(&path).unwrap_err().to_string();
/// assert!(err.ends_with(":1:2: the covariance is not symmetric: entry (1, 2) is 2 but entry (2, 1) is 1"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GaussianCovariance {
    source: PathBuf,
    mean: Vec<f64>,
    covariance: DMatrix<f64>,
    precision: DMatrix<f64>,
}

impl GaussianCovariance {
    /// Reads Σ from the CSV file `path` and checks it: every entry a finite
    /// number, square, symmetric (see [`SYMMETRY_TOLERANCE`]), positive
    /// definite. Errors point at the offending line and field.
    pub fn from_csv(path: impl AsRef<Path>) -> Result<Self, InputError> {
        let path = path.as_ref();
        let format = TableFormat {
            separator: Separator::Comma,
            header: Header::Detect,
        };
        let table = read_table(path, format)?;
        Self::from_table(&table)
    }

    /// Σ from a table already read (any source name).
    pub fn from_table(table: &Table) -> Result<Self, InputError> {
        let source = table.source();
        let d = table.width();
        if table.len() != d {
            let message = format!(
                "the covariance is not square: {} rows of {d} numbers (expected {d} rows)",
                table.len()
            );
            let error = InputError::new(source, InputErrorKind::Dimension, message);
            return Err(if table.len() > d {
                error.at(table.line(d), None)
            } else {
                error
            });
        }
        let mut covariance = DMatrix::zeros(d, d);
        for i in 0..d {
            for j in 0..d {
                let value = table.number(i, j)?;
                if !value.is_finite() {
                    return Err(table.error_at(
                        i,
                        j,
                        InputErrorKind::NotANumber,
                        format!("covariance entry {value} is not finite"),
                    ));
                }
                covariance[(i, j)] = value;
            }
        }
        for i in 0..d {
            for j in i + 1..d {
                let (a, b) = (covariance[(i, j)], covariance[(j, i)]);
                let scale = a
                    .abs()
                    .max(b.abs())
                    .max((covariance[(i, i)] * covariance[(j, j)]).abs().sqrt());
                if (a - b).abs() > SYMMETRY_TOLERANCE * scale {
                    return Err(table.error_at(
                        i,
                        j,
                        InputErrorKind::Dimension,
                        format!(
                            "the covariance is not symmetric: entry ({}, {}) is {a} but entry ({}, {}) is {b}",
                            i + 1,
                            j + 1,
                            j + 1,
                            i + 1
                        ),
                    ));
                }
            }
        }
        let Some(cholesky) = Cholesky::new(covariance.clone()) else {
            let k = first_indefinite_block(&covariance);
            return Err(table.error_at(
                k - 1,
                k - 1,
                InputErrorKind::Dimension,
                format!(
                    "the covariance is not positive definite: its leading {k}×{k} block is not \
                     (Cholesky fails at diagonal entry ({k}, {k}))"
                ),
            ));
        };
        let precision = cholesky.inverse();
        Ok(GaussianCovariance {
            source: source.to_path_buf(),
            mean: vec![0.0; d],
            covariance,
            precision,
        })
    }

    /// The same Gaussian centred at `mean` instead of 0; an error (about the
    /// covariance file) when the lengths differ or an entry is not finite.
    pub fn with_mean(mut self, mean: Vec<f64>) -> Result<Self, InputError> {
        let d = self.mean.len();
        if mean.len() != d {
            return Err(InputError::new(
                &self.source,
                InputErrorKind::Dimension,
                format!(
                    "a mean of {} entries does not fit this {d}×{d} covariance",
                    mean.len()
                ),
            ));
        }
        if let Some(bad) = mean.iter().find(|m| !m.is_finite()) {
            return Err(InputError::new(
                &self.source,
                InputErrorKind::NotANumber,
                format!("mean entry {bad} is not finite"),
            ));
        }
        self.mean = mean;
        Ok(self)
    }

    /// The mean μ.
    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// The covariance Σ as read.
    pub fn covariance(&self) -> &DMatrix<f64> {
        &self.covariance
    }

    /// The precision Σ⁻¹.
    pub fn precision(&self) -> &DMatrix<f64> {
        &self.precision
    }
}

/// The smallest k whose leading k×k block of `matrix` has no Cholesky factor
/// (only called once the whole matrix failed, so some k ≤ D does).
fn first_indefinite_block(matrix: &DMatrix<f64>) -> usize {
    let d = matrix.nrows();
    (1..=d)
        .find(|&k| Cholesky::new(matrix.view((0, 0), (k, k)).into_owned()).is_none())
        .unwrap_or(d)
}

impl Model for GaussianCovariance {
    fn name(&self) -> String {
        "gaussian-cov".into()
    }

    fn dimension(&self) -> usize {
        self.mean.len()
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        let centred = DVector::from_iterator(x.len(), x.iter().zip(&self.mean).map(|(a, m)| a - m));
        let g = &self.precision * &centred;
        gradient.copy_from_slice(g.as_slice());
        0.5 * centred.dot(&g)
    }

    fn initial_point(&self) -> Vec<f64> {
        self.mean.clone()
    }

    fn known_posterior(&self) -> Option<KnownPosterior> {
        Some(KnownPosterior {
            source: format!("analytic (covariance from {})", self.source.display()),
            mean: self.mean.clone(),
            sd: (0..self.mean.len())
                .map(|i| self.covariance[(i, i)].sqrt())
                .collect(),
            mean_mcse: None,
            sd_mcse: None,
            gaussian_marginals: true,
        })
    }
}

#[cfg(test)]
mod tests;
