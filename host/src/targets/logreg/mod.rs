//! Bayesian logistic regression with a run-time dimension: the five data sets
//! of the papers ([`LogregDataset`]) and the user's CSV files.
//!
//! [`LogisticRegressionModel`] is the [`Model`](crate::model::Model) the CLI
//! runs (`logreg-german`, …, `logreg-csv`); the const-generic
//! [`LogisticRegression`](crate::targets::LogisticRegression) shares its
//! arithmetic and its German-credit preprocessing.

mod dataset;
mod design;
mod labels;
pub(crate) mod likelihood;
mod load;
mod model;

#[cfg(test)]
mod csv_tests;
#[cfg(test)]
mod tests;

pub use dataset::{LogregDataset, UnknownDataset};
pub use labels::LabelMapping;
pub use load::{CsvOptions, PAPER_PRIOR_VARIANCE};
pub use model::Missing;
pub use model::{DataDescription, LogisticRegressionModel};
