//! Targets with U and ∇U written by hand, each with its known posterior.
//!
//! - [`CorrelatedGaussian`]: N(0, c·11ᵀ + a·I), the QNHMC paper's benchmark
//!   (c = 1, a = 4, D = 100), and [`GaussianModel`], its run-time
//!   [`crate::model::Model`] (`--target gaussian`);
//! - [`LinearGaussianModel`]: the HAMCMC paper's linear Gaussian model (eq. 14),
//!   full-data and minibatch, with its analytic posterior, and
//!   [`LinearGaussian`], its run-time model (`--target linear-gaussian`);
//! - [`LogisticRegression`]: Bayesian logistic regression, with the German
//!   credit data built in (D = 25).

mod correlated_gaussian;
mod linear_gaussian;
mod logistic_regression;

pub use correlated_gaussian::{
    CorrelatedGaussian, GaussianModel, GaussianModelError, correlated_gaussian_potential,
};
pub use linear_gaussian::{LinearGaussian, LinearGaussianError, LinearGaussianModel, Posterior};
pub use logistic_regression::LogisticRegression;
