//! Building a [`LogisticRegressionModel`] from a named data set or a CSV file.

use super::design::{Covariates, cubic_expansion, design_matrix, standardize};
use super::labels::{LabelCell, map_labels};
use super::model::Parts;
use super::{LogisticRegressionModel, LogregDataset};
use crate::input::{InputError, InputErrorKind, Table, TableFormat, parse_table, read_table};
use std::path::Path;

const GERMAN: &str = include_str!("../../../data/german_credit/german.data-numeric");
const AUSTRALIAN: &str = include_str!("../../../data/australian_credit/australian.csv");
const HEART: &str = include_str!("../../../data/heart/heart.csv");

/// The prior variance of the papers: w ~ N(0, 100·I).
pub const PAPER_PRIOR_VARIANCE: f64 = 100.0;

/// How to turn a user's CSV file into a logistic regression
/// ([`LogisticRegressionModel::from_csv`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CsvOptions {
    /// Header name of the label column; every other column is a covariate
    /// (except a first column named `rownames` or with an empty name, R's row
    /// names, which is dropped).
    pub label_column: String,
    /// Standardise each covariate to mean 0, sd 1 (N − 1 denominator).
    pub standardize: bool,
    /// Put an intercept column of ones first (coefficient `w[1]`).
    pub intercept: bool,
    /// Prior variance v of w ~ N(0, v·I).
    pub prior_variance: f64,
}

impl CsvOptions {
    /// The papers' preprocessing for label column `label_column`:
    /// standardised covariates, an intercept, prior variance 100.
    pub fn new(label_column: impl Into<String>) -> Self {
        CsvOptions {
            label_column: label_column.into(),
            standardize: true,
            intercept: true,
            prior_variance: PAPER_PRIOR_VARIANCE,
        }
    }
}

/// Covariates and label cells taken out of one or more tables.
struct Extracted {
    covariates: Covariates,
    labels: Vec<LabelCell>,
}

/// Splits `table` into covariate columns (all but `label` and `dropped`) and
/// label cells; `names` are the covariate names when the table has no header.
fn extract(table: &Table, label: usize, dropped: Option<usize>) -> Result<Extracted, InputError> {
    let keep: Vec<usize> = (0..table.width())
        .filter(|&c| c != label && Some(c) != dropped)
        .collect();
    let names = keep
        .iter()
        .map(|&c| match table.header() {
            Some(h) => h[c].clone(),
            None => format!("V{}", c + 1),
        })
        .collect();
    let columns = keep
        .iter()
        .map(|&c| table.numeric_column(c))
        .collect::<Result<Vec<_>, _>>()?;
    let labels = (0..table.len())
        .map(|row| LabelCell {
            text: table.cell(row, label).to_owned(),
            file: table.source().to_path_buf(),
            line: table.line(row),
            column: label + 1,
        })
        .collect();
    Ok(Extracted {
        covariates: Covariates { names, columns },
        labels,
    })
}

/// Appends `more` below `all` (same columns, checked by the caller).
fn append(all: &mut Extracted, more: Extracted) {
    for (column, extra) in all
        .covariates
        .columns
        .iter_mut()
        .zip(more.covariates.columns)
    {
        column.extend(extra);
    }
    all.labels.extend(more.labels);
}

/// The index of R's row-name column, if the first column is one.
fn row_names_column(table: &Table) -> Option<usize> {
    let first = table.header()?.first()?;
    (first.is_empty() || first == "rownames").then_some(0)
}

/// Final assembly shared by every constructor.
struct Assembly<'a> {
    name: String,
    source: &'a Path,
    label_column: String,
    standardize: bool,
    cubic: bool,
    intercept: bool,
    prior_variance: f64,
}

impl Assembly<'_> {
    fn build(self, data: Extracted) -> Result<LogisticRegressionModel, InputError> {
        let (labels, label_mapping) = map_labels(&data.labels, &self.label_column)?;
        let mut covariates = if self.cubic {
            cubic_expansion(&data.covariates)
        } else {
            data.covariates
        };
        if self.standardize {
            standardize(&mut covariates, self.source)?;
        }
        let (design, dimension, column_names) = design_matrix(&covariates, self.intercept);
        if dimension == 0 {
            return Err(InputError::new(
                self.source,
                InputErrorKind::Dimension,
                "no covariates and no intercept: the model would have no coefficients",
            ));
        }
        if !(self.prior_variance > 0.0 && self.prior_variance.is_finite()) {
            return Err(InputError::new(
                self.source,
                InputErrorKind::Format,
                format!(
                    "the prior variance must be positive and finite, not {}",
                    self.prior_variance
                ),
            ));
        }
        Ok(LogisticRegressionModel::from_parts(Parts {
            name: self.name,
            design,
            dimension,
            labels,
            prior_variance: self.prior_variance,
            column_names,
            intercept: self.intercept,
            label_mapping,
        }))
    }
}

impl LogisticRegressionModel {
    /// One of the three data sets built into the crate (German, Australian,
    /// Heart), preprocessed as the papers do (see [`from_dataset`](Self::from_dataset));
    /// `None` for Pima and Ripley, which are not shipped (GPL).
    pub fn builtin(dataset: LogregDataset) -> Option<Self> {
        let (text, file, format) = match dataset {
            LogregDataset::German => (
                GERMAN,
                "german.data-numeric",
                TableFormat::WHITESPACE_NO_HEADER,
            ),
            LogregDataset::Australian => (AUSTRALIAN, "australian.csv", TableFormat::CSV_NO_HEADER),
            LogregDataset::Heart => (HEART, "heart.csv", TableFormat::CSV_NO_HEADER),
            LogregDataset::Pima | LogregDataset::Ripley => return None,
        };
        let source = Path::new("<built-in>").join(file);
        let table = parse_table(text, &source, format).ok()?;
        let label = table.width() - 1;
        let data = extract(&table, label, None).ok()?;
        Assembly {
            name: dataset.target_name(),
            source: &source,
            label_column: format!("column {}", label + 1),
            standardize: true,
            cubic: false,
            intercept: true,
            prior_variance: PAPER_PRIOR_VARIANCE,
        }
        .build(data)
        .ok()
    }

    /// A data set of the papers, preprocessed as the RMHMC authors' scripts do:
    /// every covariate standardised ((x − mean)/sd, sd with N − 1), design
    /// [1, X] with the intercept first, labels to 0/1 (German and Heart
    /// 1 → 0, 2 → 1; Pima No → 0, Yes → 1; Australian and Ripley already
    /// 0/1), prior w ~ N(0, 100·I).
    ///
    /// German, Australian and Heart are built in and ignore `data_dir`.
    /// Pima (`Pima.tr.csv` followed by `Pima.te.csv`: 532 rows, covariates
    /// npreg, glu, bp, skin, bmi, ped, age, label `type`) and Ripley
    /// (`synth.tr.csv`: 250 rows, covariates xs, ys, label `yc`) come from the
    /// R package MASS, which is GPL, and are therefore not shipped: they are
    /// read from `data_dir` (the Rdatasets CSV layout, with a `rownames`
    /// column that is dropped). The repository's `shared/data/logreg/` holds
    /// them.
    ///
    /// Ripley: the two covariates get the cubic expansion
    /// [x₁, x₂, x₁², x₂², x₁³, x₂³] *first* and the six columns are *then*
    /// standardised, as the RMHMC scripts do (powers of standardised values
    /// would not be standardised columns); D = 7.
    pub fn from_dataset(dataset: LogregDataset, data_dir: &Path) -> Result<Self, InputError> {
        match dataset {
            LogregDataset::German | LogregDataset::Australian | LogregDataset::Heart => {
                Ok(Self::builtin(dataset).expect("the built-in data sets parse"))
            }
            LogregDataset::Pima => {
                let train = data_dir.join("Pima.tr.csv");
                let test = data_dir.join("Pima.te.csv");
                let first = read_table(&train, TableFormat::CSV_WITH_HEADER)?;
                let second = read_table(&test, TableFormat::CSV_WITH_HEADER)?;
                if first.header() != second.header() {
                    return Err(InputError::new(
                        &test,
                        InputErrorKind::Dimension,
                        format!("the columns differ from those of {}", train.display()),
                    )
                    .at(second.header_line().unwrap_or(1), None));
                }
                let label = first.column_index("type")?;
                let mut data = extract(&first, label, row_names_column(&first))?;
                append(
                    &mut data,
                    extract(&second, label, row_names_column(&second))?,
                );
                Assembly {
                    name: dataset.target_name(),
                    source: &train,
                    label_column: "column \"type\"".into(),
                    standardize: true,
                    cubic: false,
                    intercept: true,
                    prior_variance: PAPER_PRIOR_VARIANCE,
                }
                .build(data)
            }
            LogregDataset::Ripley => {
                let path = data_dir.join("synth.tr.csv");
                let table = read_table(&path, TableFormat::CSV_WITH_HEADER)?;
                let label = table.column_index("yc")?;
                let data = extract(&table, label, row_names_column(&table))?;
                Assembly {
                    name: dataset.target_name(),
                    source: &path,
                    label_column: "column \"yc\"".into(),
                    standardize: true,
                    cubic: true,
                    intercept: true,
                    prior_variance: PAPER_PRIOR_VARIANCE,
                }
                .build(data)
            }
        }
    }

    /// A logistic regression on the user's CSV file `path` (comma separated,
    /// header row required, `#` comment lines allowed): the column named
    /// `options.label_column` holds the labels (two classes, mapped to 0/1 by
    /// the rule of [`LabelMapping`](super::LabelMapping), see
    /// [`label_mapping`](Self::label_mapping)), every other column is a
    /// numeric covariate, in file order. The target name is `logreg-csv`.
    ///
    /// ```
    /// use qnmc_host::model::Model;
    /// use qnmc_host::targets::{CsvOptions, LogisticRegressionModel};
    ///
    /// let path = std::env::temp_dir().join("qnmc_doc_logreg.csv");
    /// std::fs::write(&path, "age,smoker,sick\n30,1,No\n50,0,Yes\n40,1,Yes\n").unwrap();
    /// let model = LogisticRegressionModel::from_csv(&path, &CsvOptions::new("sick")).unwrap();
    /// assert_eq!(model.dimension(), 3); // intercept, age, smoker
    /// assert_eq!(model.labels(), [0.0, 1.0, 1.0]);
    /// assert_eq!(model.label_mapping().to_string(), "\"No\" → 0, \"Yes\" → 1");
    ///
    /// let err = LogisticRegressionModel::from_csv(&path, &CsvOptions::new("ill")).unwrap_err();
    /// assert!(err.to_string().ends_with(
    ///     "no column named \"ill\"; the columns are \"age\", \"smoker\", \"sick\""));
    /// ```
    pub fn from_csv(path: impl AsRef<Path>, options: &CsvOptions) -> Result<Self, InputError> {
        let path = path.as_ref();
        let table = read_table(path, TableFormat::CSV_WITH_HEADER)?;
        let label = table.column_index(&options.label_column)?;
        let data = extract(&table, label, row_names_column(&table))?;
        Assembly {
            name: "logreg-csv".into(),
            source: path,
            label_column: format!("column {:?}", options.label_column),
            standardize: options.standardize,
            cubic: false,
            intercept: options.intercept,
            prior_variance: options.prior_variance,
        }
        .build(data)
    }
}
