//! [`LogisticRegressionModel`]: Bayesian logistic regression whose dimension
//! is known at run time, as a [`Model`].

use super::LabelMapping;
use super::likelihood::{add_observation, add_observation_gradient, prior};
use crate::input::Separator;
use crate::model::{Model, ModelRng, OriginalScale};
use rand_core::Rng;
use serde_json::json;
use std::path::{Path, PathBuf};

/// Where a model's data came from and how they were read and transformed:
/// what `model.json` records.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DataDescription {
    /// The data file (for built-in data sets `<built-in>/<file>`).
    pub file: PathBuf,
    /// SHA-256 of the file's bytes (user CSV files), as `sha256sum` prints it.
    pub sha256: Option<String>,
    /// The label column, as messages name it (`column "sick"`).
    pub label_column: String,
    /// Field separator (user CSV files).
    pub separator: Option<Separator>,
    /// Columns left out with `--drop-columns`.
    pub dropped_columns: Vec<String>,
    /// The missing-value rule (user CSV files).
    pub missing: Option<Missing>,
    /// Data rows in the file.
    pub rows_read: usize,
    /// File lines of the rows left out for a missing value.
    pub dropped_rows: Vec<usize>,
    /// Rows used.
    pub rows: usize,
    /// Covariate names, in design order (without the intercept).
    pub covariates: Vec<String>,
    /// (mean, sd) of each covariate before standardisation; `None` when the
    /// covariates were used as they are.
    pub standardization: Option<Vec<(f64, f64)>>,
    /// Which rows of the file were used and how they became covariates, when
    /// that is not every row as it is (Fashion-MNIST: the images of two
    /// classes, pixels scaled to [0, 1]).
    pub selection: Option<String>,
    /// How labels became 0 and 1, when not by the CSV rule of
    /// [`LabelMapping`].
    pub label_rule: Option<String>,
}

impl DataDescription {
    pub(crate) fn new(file: &Path, label_column: &str) -> Self {
        DataDescription {
            file: file.to_path_buf(),
            label_column: label_column.to_owned(),
            ..DataDescription::default()
        }
    }
}

/// Bayesian logistic regression with prior w ~ N(0, v·I), dimension and data
/// known at run time:
///
/// U(w) = Σₙ [log(1 + e^{fₙ}) − tₙ fₙ] + ‖w‖²/(2v),  fₙ = xₙᵀw,
/// ∇U(w) = Σₙ (σ(fₙ) − tₙ) xₙ + w/v.
///
/// The stochastic gradient draws `batch_size` observations uniformly with
/// replacement and scales their sum by N/B, an unbiased estimate of ∇U
/// (`batch_size` 0 means the exact gradient). Reported quantities are the
/// coefficients `w[1]`, …, `w[D]`; **`w[1]` is the intercept** when the
/// model has one (the built-in data sets all do), then one coefficient per
/// covariate in file order ([`column_names`](Self::column_names)).
///
/// Build one with [`builtin`](Self::builtin), [`from_dataset`](Self::from_dataset)
/// or [`from_csv`](Self::from_csv).
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::{LogisticRegressionModel, LogregDataset};
///
/// let german = LogisticRegressionModel::builtin(LogregDataset::German).unwrap();
/// assert_eq!(german.dimension(), 25);
/// assert_eq!(german.data_size(), Some(1000));
/// assert_eq!(german.output_names()[0], "w[1]");
/// assert_eq!(german.column_names()[0], "(intercept)");
/// let mut g = vec![0.0; 25];
/// // At w = 0 every term is log 2.
/// let u = german.potential_and_gradient(&vec![0.0; 25], &mut g);
/// assert!((u - 1000.0 * 2f64.ln()).abs() < 1e-9);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LogisticRegressionModel {
    name: String,
    design: Vec<f64>,
    labels: Vec<f64>,
    dimension: usize,
    prior_variance: f64,
    column_names: Vec<String>,
    intercept: bool,
    label_mapping: LabelMapping,
    data: DataDescription,
}

/// Everything a model is made of; see [`LogisticRegressionModel::from_parts`].
pub(crate) struct Parts {
    pub name: String,
    pub design: Vec<f64>,
    pub dimension: usize,
    pub labels: Vec<f64>,
    pub prior_variance: f64,
    pub column_names: Vec<String>,
    pub intercept: bool,
    pub label_mapping: LabelMapping,
    pub data: DataDescription,
}

impl LogisticRegressionModel {
    pub(crate) fn from_parts(parts: Parts) -> Self {
        debug_assert_eq!(parts.design.len(), parts.labels.len() * parts.dimension);
        LogisticRegressionModel {
            name: parts.name,
            design: parts.design,
            labels: parts.labels,
            dimension: parts.dimension,
            prior_variance: parts.prior_variance,
            column_names: parts.column_names,
            intercept: parts.intercept,
            label_mapping: parts.label_mapping,
            data: parts.data,
        }
    }

    /// Where the data came from and how they were read (see [`DataDescription`]).
    pub fn data_description(&self) -> &DataDescription {
        &self.data
    }

    /// `true` for a model of a user's CSV file: its reported quantities are
    /// named after the columns (`(intercept)`, `age`, …) instead of `w[k]`.
    fn named_by_columns(&self) -> bool {
        self.name == "logreg-csv"
    }

    /// Number of observations N.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// `true` without observations (never for a model that was read).
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Row n of the design matrix (after preprocessing), length D.
    pub fn design_row(&self, n: usize) -> &[f64] {
        &self.design[n * self.dimension..(n + 1) * self.dimension]
    }

    /// The 0/1 labels tₙ.
    pub fn labels(&self) -> &[f64] {
        &self.labels
    }

    /// The prior variance v.
    pub fn prior_variance(&self) -> f64 {
        self.prior_variance
    }

    /// `true` when the first coefficient `w[1]` is an intercept.
    pub fn has_intercept(&self) -> bool {
        self.intercept
    }

    /// The name of each design column, in coefficient order: `(intercept)`
    /// first when present, then the covariates (header names, or `V1`, `V2`,
    /// … for files without a header; `x^2`, `x^3` for Ripley's expansion).
    pub fn column_names(&self) -> &[String] {
        &self.column_names
    }

    /// Which label text became 0 and which 1 (see [`LabelMapping`] for the rule).
    pub fn label_mapping(&self) -> &LabelMapping {
        &self.label_mapping
    }

    /// Number of observations with label 1.
    pub fn positives(&self) -> usize {
        self.labels.iter().filter(|&&t| t == 1.0).count()
    }
}

impl Model for LogisticRegressionModel {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn potential_and_gradient(&self, w: &[f64], gradient: &mut [f64]) -> f64 {
        let mut u = prior(w, self.prior_variance, gradient);
        for (n, &t) in self.labels.iter().enumerate() {
            u += add_observation(self.design_row(n), t, w, gradient);
        }
        u
    }

    fn output_names(&self) -> Vec<String> {
        if self.named_by_columns() {
            return self.column_names.clone();
        }
        (1..=self.dimension).map(|i| format!("w[{i}]")).collect()
    }

    fn description(&self) -> Option<serde_json::Value> {
        let d = &self.data;
        let finite = |v: f64| if v.is_finite() { json!(v) } else { json!(null) };
        Some(json!({
            "model": "Bayesian logistic regression: y ~ Bernoulli(sigmoid(x'w)), w ~ N(0, v I)",
            "target": self.name,
            "data": {
                "file": d.file.display().to_string(),
                "absolute_path": std::fs::canonicalize(&d.file).ok().map(|p| p.display().to_string()),
                "sha256": d.sha256,
                "separator": d.separator.map(|s| match s {
                    Separator::Comma => ",".to_owned(),
                    Separator::Whitespace => "whitespace".to_owned(),
                    Separator::Char(c) => c.to_string(),
                }),
                "dropped_columns": d.dropped_columns,
                "missing_values": d.missing.map(|m| m.to_string()),
                "rows_in_file": d.rows_read,
                "rows_dropped": d.dropped_rows.len(),
                "dropped_row_lines": d.dropped_rows,
                "rows_used": self.len(),
                "label_1_rows": self.positives(),
                "selection": d.selection,
            },
            "label": {
                "column": d.label_column,
                "zero": self.label_mapping.zero,
                "one": self.label_mapping.one,
                "rule": d.label_rule.as_deref().unwrap_or(
                    "numbers: 0/1 kept, else the smaller value is 0; words (case ignored): \
                     the first alphabetically is 0"
                ),
            },
            "covariates": d.covariates,
            "intercept": self.intercept,
            "standardization": d.standardization.as_ref().map(|m| json!({
                "formula": "z = (x - mean) / sd, sd with the N - 1 denominator",
                "mean": m.iter().map(|p| finite(p.0)).collect::<Vec<_>>(),
                "sd": m.iter().map(|p| finite(p.1)).collect::<Vec<_>>(),
            })),
            "prior": { "distribution": "normal", "mean": 0.0, "variance": self.prior_variance },
            "parameters": self.output_names(),
            "design_columns": self.column_names,
        }))
    }

    fn original_scale(&self) -> Option<OriginalScale> {
        let moments = self.data.standardization.as_ref()?;
        let d = self.dimension;
        let offset = usize::from(self.intercept);
        let covariates = self.column_names[offset..].to_vec();
        let mut names = Vec::with_capacity(covariates.len() + 1);
        let mut rows = Vec::with_capacity(covariates.len() + 1);
        // β₀ = w₀ − Σⱼ wⱼ mⱼ / sⱼ (without an intercept in the model, the
        // same constant is implied by the centring).
        let mut intercept = vec![0.0; d];
        if self.intercept {
            intercept[0] = 1.0;
        }
        for (j, &(mean, sd)) in moments.iter().enumerate() {
            intercept[offset + j] = -mean / sd;
        }
        names.push(if self.intercept {
            "(intercept)".to_owned()
        } else {
            "(implied intercept)".to_owned()
        });
        rows.push(intercept);
        for (j, (name, &(_, sd))) in covariates.iter().zip(moments).enumerate() {
            let mut row = vec![0.0; d];
            row[offset + j] = 1.0 / sd;
            names.push(name.clone());
            rows.push(row);
        }
        Some(OriginalScale { names, rows })
    }

    fn data_size(&self) -> Option<usize> {
        Some(self.len())
    }

    fn stochastic_gradient(
        &self,
        w: &[f64],
        batch_size: usize,
        rng: &mut ModelRng,
        gradient: &mut [f64],
    ) {
        if batch_size == 0 {
            let _ = self.potential_and_gradient(w, gradient);
            return;
        }
        let _ = prior(w, self.prior_variance, gradient);
        let n = self.len() as u64;
        let weight = self.len() as f64 / batch_size as f64;
        for _ in 0..batch_size {
            // Multiply-shift maps a u32 to [0, N) without division.
            let i = ((u64::from(rng.next_u32()) * n) >> 32) as usize;
            add_observation_gradient(self.design_row(i), self.labels[i], w, weight, gradient);
        }
    }
}

/// What to do with missing values (empty cells, `NA`) in a CSV fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Missing {
    /// Refuse the file, naming the first missing cell (the default).
    #[default]
    Error,
    /// Leave out every row with a missing value in a used column (counted
    /// and recorded in `model.json`).
    Drop,
}

impl std::str::FromStr for Missing {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "error" => Ok(Missing::Error),
            "drop" => Ok(Missing::Drop),
            _ => Err(format!("expected `error` or `drop`, got `{s}`")),
        }
    }
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Missing::Error => "error",
            Missing::Drop => "drop",
        })
    }
}
