//! Targets with U and ∇U written by hand, each with its known posterior.
//!
//! - [`CorrelatedGaussian`]: N(0, c·11ᵀ + a·I), the QNHMC paper's benchmark
//!   (c = 1, a = 4, D = 100);
//! - [`GaussianCovariance`]: N(μ, Σ) with Σ read from a CSV file (`gaussian-cov`);
//! - [`LinearGaussianModel`]: the HAMCMC paper's linear Gaussian model (eq. 14),
//!   full-data and minibatch, with its analytic posterior;
//! - [`LogisticRegression`]: Bayesian logistic regression with a compile-time
//!   dimension, with the German credit data built in (D = 25);
//! - [`LogisticRegressionModel`]: the same with a run-time dimension, on the
//!   papers' five data sets ([`LogregDataset`]) or a user's CSV file.

mod correlated_gaussian;
mod gaussian_covariance;
mod linear_gaussian;
mod logistic_regression;
mod logreg;
#[cfg(test)]
mod testing;

pub use correlated_gaussian::CorrelatedGaussian;
pub use gaussian_covariance::{GaussianCovariance, SYMMETRY_TOLERANCE};
pub use linear_gaussian::{LinearGaussianModel, Posterior};
pub use logistic_regression::LogisticRegression;
pub use logreg::{
    CsvOptions, LabelMapping, LogisticRegressionModel, LogregDataset, PAPER_PRIOR_VARIANCE,
    UnknownDataset,
};
