//! Bayesian logistic regression with a run-time dimension: the five data sets
//! of the papers ([`LogregDataset`]), the user's CSV files, and two classes
//! of Fashion-MNIST ([`FashionMnist`], the offline stand-in for the QNHMC
//! paper's MNIST 7 vs 9) with a held-out test set ([`HeldOutSet`]).
//!
//! [`LogisticRegressionModel`] is the [`Model`](crate::model::Model) the CLI
//! runs (`logreg-german`, …, `logreg-csv`); the const-generic
//! [`LogisticRegression`](crate::targets::LogisticRegression) shares its
//! arithmetic and its German-credit preprocessing.

mod dataset;
mod design;
mod fashion_mnist;
mod held_out;
mod labels;
pub(crate) mod likelihood;
mod load;
mod model;

#[cfg(test)]
mod csv_tests;
#[cfg(test)]
mod fashion_mnist_tests;
#[cfg(test)]
mod tests;

pub use dataset::{LogregDataset, UnknownDataset};
pub use fashion_mnist::{FashionMnist, FashionMnistNotFound};
pub use held_out::HeldOutSet;
pub use labels::LabelMapping;
pub use load::{CsvOptions, PAPER_PRIOR_VARIANCE};
pub use model::Missing;
pub use model::{DataDescription, LogisticRegressionModel};
