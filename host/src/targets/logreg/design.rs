//! From covariate columns to a design matrix: standardisation, Ripley's cubic
//! expansion, the intercept column.

use crate::input::{InputError, InputErrorKind};
use std::path::Path;

/// Covariates by column, with their names.
#[derive(Debug, Clone)]
pub(crate) struct Covariates {
    pub names: Vec<String>,
    pub columns: Vec<Vec<f64>>,
}

impl Covariates {
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, Vec::len)
    }
}

/// (x − mean)/sd for every column, sd with the N − 1 denominator (the RMHMC
/// authors' scheme); returns each column's (mean, sd). A column that is
/// constant cannot be standardised: an error about `source` naming the column.
pub(crate) fn standardize(
    covariates: &mut Covariates,
    source: &Path,
) -> Result<Vec<(f64, f64)>, InputError> {
    let mut moments = Vec::with_capacity(covariates.columns.len());
    for (name, column) in covariates.names.iter().zip(&mut covariates.columns) {
        let n = column.len() as f64;
        let mean = column.iter().sum::<f64>() / n;
        let ss: f64 = column.iter().map(|x| (x - mean).powi(2)).sum();
        let sd = (ss / (n - 1.0)).sqrt();
        if !(sd > 0.0 && sd.is_finite()) {
            return Err(InputError::new(
                source,
                InputErrorKind::Format,
                format!(
                    "covariate {name:?} has standard deviation {sd} and cannot be standardised \
                     (drop the column or turn standardisation off)"
                ),
            ));
        }
        for x in column.iter_mut() {
            *x = (*x - mean) / sd;
        }
        moments.push((mean, sd));
    }
    Ok(moments)
}

/// [x₁, x₂, …] → [x₁, x₂, …, x₁², x₂², …, x₁³, x₂³, …] (Ripley: 2 → 6 columns).
pub(crate) fn cubic_expansion(covariates: &Covariates) -> Covariates {
    let mut names = Vec::new();
    let mut columns = Vec::new();
    for power in 1..=3 {
        for (name, column) in covariates.names.iter().zip(&covariates.columns) {
            names.push(if power == 1 {
                name.clone()
            } else {
                format!("{name}^{power}")
            });
            columns.push(column.iter().map(|x| x.powi(power)).collect());
        }
    }
    Covariates { names, columns }
}

/// The row-major design matrix [1, X] (or X), its width, and column names
/// (`(intercept)` first when present).
pub(crate) fn design_matrix(
    covariates: Covariates,
    intercept: bool,
) -> (Vec<f64>, usize, Vec<String>) {
    let width = covariates.columns.len() + usize::from(intercept);
    let rows = covariates.rows();
    let mut design = Vec::with_capacity(rows * width);
    for n in 0..rows {
        if intercept {
            design.push(1.0);
        }
        design.extend(covariates.columns.iter().map(|c| c[n]));
    }
    let mut names = Vec::with_capacity(width);
    if intercept {
        names.push("(intercept)".to_owned());
    }
    names.extend(covariates.names);
    (design, width, names)
}
