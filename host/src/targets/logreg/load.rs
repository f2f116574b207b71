//! Building a [`LogisticRegressionModel`] from a named data set or a CSV file.

use super::design::{Covariates, cubic_expansion, design_matrix, standardize};
use super::labels::LabelColumn;
use super::model::{DataDescription, Missing, Parts};
use super::{LogisticRegressionModel, LogregDataset};
use crate::input::{
    InputError, InputErrorKind, Records, Separator, Table, TableFormat, parse_table, read_table,
};
use std::io::{BufRead, BufReader};
use std::path::Path;

const GERMAN: &str = include_str!("../../../data/german_credit/german.data-numeric");
const AUSTRALIAN: &str = include_str!("../../../data/australian_credit/australian.csv");
const HEART: &str = include_str!("../../../data/heart/heart.csv");

/// The prior variance of the papers: w ~ N(0, 100·I).
pub const PAPER_PRIOR_VARIANCE: f64 = 100.0;

/// The largest covariate magnitude a CSV may hold without standardisation:
/// the curvature of the log density sums x² over the rows, which overflows
/// above about 1.3e154 for a single row.
pub const MAX_RAW_COVARIATE: f64 = 1e150;

/// Separators a one-column header is checked for, with their
/// `--delimiter` names.
const OTHER_SEPARATORS: [(char, &str); 5] = [
    (';', "semicolon"),
    ('\t', "tab"),
    ('|', "'|'"),
    (',', "comma"),
    (' ', "whitespace"),
];

/// When `header` is one column holding another separator than the one the
/// file was read with (a semicolon-separated file read as CSV), the
/// `--delimiter` that would split it, as the end of a sentence.
fn separator_hint(header: &[String], used: Separator) -> Option<String> {
    let [only] = header else {
        return None;
    };
    let (c, name) = OTHER_SEPARATORS
        .iter()
        .filter(|(c, _)| Separator::from_name(&c.to_string()) != Ok(used))
        .max_by_key(|(c, _)| only.matches(*c).count())
        .filter(|(c, _)| only.contains(*c))?;
    Some(format!(
        " (one column: the header holds {:?}; if the file is separated by it, pass --delimiter {name})",
        c.to_string()
    ))
}

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
    /// Field separator (default `,`).
    pub separator: Separator,
    /// Columns left out (header names); each must exist.
    pub drop_columns: Vec<String>,
    /// What to do with a missing value (an empty cell or `NA`, any case) in
    /// a column that is used.
    pub missing: Missing,
}

/// `true` for a cell that means "no value": empty, or `NA` in any case.
fn is_missing(cell: &str) -> bool {
    cell.is_empty() || cell.eq_ignore_ascii_case("na")
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
            separator: Separator::Comma,
            drop_columns: Vec::new(),
            missing: Missing::Error,
        }
    }
}

/// Covariates and labels taken out of one or more tables.
struct Extracted {
    covariates: Covariates,
    labels: LabelColumn,
}

/// Splits `table` into covariate columns (all but `label` and `dropped`) and
/// label cells (added to `labels`, or to a new label column).
fn extract(
    table: &Table,
    label: usize,
    dropped: Option<usize>,
    labels: Option<LabelColumn>,
) -> Result<Extracted, InputError> {
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
        .map(|&c| {
            let column = table.numeric_column(c)?;
            match column.iter().position(|v| !v.is_finite()) {
                Some(row) => Err(not_finite(table, row, c)),
                None => Ok(column),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut labels = labels
        .unwrap_or_else(|| LabelColumn::new(table.source(), label + 1, table.column_label(label)));
    for row in 0..table.len() {
        labels.push(table.cell(row, label), table.line(row))?;
    }
    Ok(Extracted {
        covariates: Covariates { names, columns },
        labels,
    })
}

fn not_finite(table: &Table, row: usize, column: usize) -> InputError {
    table.error_at(
        row,
        column,
        InputErrorKind::NotANumber,
        format!(
            "cell {:?} in {} is not a finite number",
            table.cell(row, column),
            table.column_label(column)
        ),
    )
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
    standardize: bool,
    cubic: bool,
    intercept: bool,
    prior_variance: f64,
    /// What `model.json` says about the data (the covariates and
    /// standardisation are filled in here).
    data: DataDescription,
}

impl Assembly<'_> {
    fn build(self, data: Extracted) -> Result<LogisticRegressionModel, InputError> {
        let mut description = self.data;
        description.rows = data.labels.len();
        let (labels, label_mapping) = data.labels.map()?;
        let mut covariates = if self.cubic {
            cubic_expansion(&data.covariates)
        } else {
            data.covariates
        };
        if self.standardize {
            description.standardization = Some(standardize(&mut covariates, self.source)?);
        }
        description.covariates = covariates.names.clone();
        let (design, dimension, column_names) = design_matrix(covariates, self.intercept);
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
            data: description,
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
        let data = extract(&table, label, None, None).ok()?;
        Assembly {
            name: dataset.target_name(),
            source: &source,
            data: DataDescription::new(&source, &format!("column {}", label + 1)),
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
                let mut data = extract(&first, label, row_names_column(&first), None)?;
                let mut labels = data.labels;
                labels.set_file(&test);
                let more = extract(&second, label, row_names_column(&second), Some(labels))?;
                for (column, extra) in data
                    .covariates
                    .columns
                    .iter_mut()
                    .zip(more.covariates.columns)
                {
                    column.extend(extra);
                }
                data.labels = more.labels;
                Assembly {
                    name: dataset.target_name(),
                    source: &train,
                    data: DataDescription::new(&train, "column \"type\""),
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
                let data = extract(&table, label, row_names_column(&table), None)?;
                Assembly {
                    name: dataset.target_name(),
                    source: &path,
                    data: DataDescription::new(&path, "column \"yc\""),
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
        let file = std::fs::File::open(path).map_err(|e| InputError::io(path, &e))?;
        let mut records = Records::new(
            BufReader::with_capacity(1 << 16, file),
            path,
            options.separator,
        );
        let header = CsvHeader::read(&mut records, path, options)?;
        let label = header.label;
        let label_name = format!("column {:?}", options.label_column);
        let mut labels = LabelColumn::new(path, label + 1, label_name.clone());
        let mut columns: Vec<Vec<f64>> = vec![Vec::new(); header.keep.len()];
        let mut values = vec![0.0; header.keep.len()];
        let mut dropped_lines = Vec::new();
        let mut rows_read = 0;
        while let Some((line, fields)) = records.next_record()? {
            rows_read += 1;
            if let Some(c) = header.read_row(path, options, line, &fields, &mut values)? {
                match options.missing {
                    Missing::Drop => {
                        dropped_lines.push(line);
                        continue;
                    }
                    Missing::Error => {
                        return Err(header.missing_error(path, &label_name, line, &fields, c));
                    }
                }
            }
            labels.push(&fields[label], line)?;
            for (column, &v) in columns.iter_mut().zip(&values) {
                column.push(v);
            }
        }
        if rows_read == 0 {
            return Err(InputError::new(
                path,
                InputErrorKind::Empty,
                "the file has a header row but no data rows",
            ));
        }
        if labels.len() == 0 {
            return Err(InputError::new(
                path,
                InputErrorKind::Empty,
                format!(
                    "every one of the {rows_read} data rows has a missing value (--missing drop)"
                ),
            ));
        }
        let names = header
            .keep
            .iter()
            .map(|&c| header.names[c].clone())
            .collect();
        let mut data = DataDescription::new(path, &options.label_column);
        data.sha256 = Some(records.sha256());
        data.separator = Some(options.separator);
        data.dropped_columns = options.drop_columns.clone();
        data.missing = Some(options.missing);
        data.rows_read = rows_read;
        data.dropped_rows = dropped_lines;
        Assembly {
            name: "logreg-csv".into(),
            source: path,
            data,
            standardize: options.standardize,
            cubic: false,
            intercept: options.intercept,
            prior_variance: options.prior_variance,
        }
        .build(Extracted {
            covariates: Covariates { names, columns },
            labels,
        })
    }
}

/// The header row of a user's CSV file
/// ([`LogisticRegressionModel::from_csv`]) and the columns it selects.
struct CsvHeader {
    /// The column names, in file order.
    names: Vec<String>,
    /// The label column.
    label: usize,
    /// The covariate columns, in file order: all but the label, the
    /// dropped columns and R's row names.
    keep: Vec<usize>,
}

impl CsvHeader {
    /// Reads the header row of `records` (the file `path`) and finds the
    /// label column and the dropped columns of `options` in it.
    fn read<R: BufRead>(
        records: &mut Records<R>,
        path: &Path,
        options: &CsvOptions,
    ) -> Result<Self, InputError> {
        let Some((header_line, header)) = records.next_record()? else {
            return Err(InputError::new(
                path,
                InputErrorKind::Empty,
                "the file is empty (no rows besides comments and blank lines)",
            ));
        };
        if let Some(e) = crate::input::duplicate_error(path, header_line, &header) {
            return Err(e);
        }
        let column_of = |name: &str| {
            header.iter().position(|n| n == name).ok_or_else(|| {
                let list: Vec<String> = header.iter().map(|n| format!("{n:?}")).collect();
                InputError::new(
                    path,
                    InputErrorKind::MissingColumn,
                    format!(
                        "no column named {name:?}; the columns are {}{}",
                        list.join(", "),
                        separator_hint(&header, options.separator).unwrap_or_default()
                    ),
                )
                .at(header_line, None)
            })
        };
        let label = column_of(&options.label_column)?;
        let mut dropped = Vec::new();
        for name in &options.drop_columns {
            let c = column_of(name)?;
            if c == label {
                return Err(InputError::new(
                    path,
                    InputErrorKind::Format,
                    format!("--drop-columns names the label column {name:?}"),
                )
                .at(header_line, Some(c + 1)));
            }
            dropped.push(c);
        }
        let row_names = (header[0].is_empty() || header[0] == "rownames").then_some(0);
        let keep: Vec<usize> = (0..header.len())
            .filter(|&c| c != label && !dropped.contains(&c) && Some(c) != row_names)
            .collect();
        Ok(CsvHeader {
            names: header,
            label,
            keep,
        })
    }

    /// Reads the covariates of the data row `fields` (at `line` of the file
    /// `path`) into `values`, one per kept column: an error for a ragged row
    /// or a cell that is not a usable number; `Some(column)` for the first
    /// column (covariates before the label) with a missing value, whose
    /// entry of `values` is then stale.
    fn read_row(
        &self,
        path: &Path,
        options: &CsvOptions,
        line: usize,
        fields: &[String],
        values: &mut [f64],
    ) -> Result<Option<usize>, InputError> {
        let header = &self.names;
        if fields.len() != header.len() {
            return Err(InputError::new(
                path,
                InputErrorKind::RaggedRow,
                format!(
                    "ragged row: expected {} fields (as in the first row), found {}",
                    header.len(),
                    fields.len()
                ),
            )
            .at(line, None));
        }
        let at = |c: usize, message: String| {
            InputError::new(path, InputErrorKind::NotANumber, message).at(line, Some(c + 1))
        };
        let mut missing = None;
        for (value, &c) in values.iter_mut().zip(&self.keep) {
            let cell = fields[c].as_str();
            if is_missing(cell) {
                missing.get_or_insert(c);
                continue;
            }
            *value = match cell.parse::<f64>() {
                Ok(v) if !options.standardize && v.abs() > MAX_RAW_COVARIATE => {
                    return Err(at(
                        c,
                        format!(
                            "cell {cell:?} in column {:?} is too large to use as it is \
                             (--no-standardize): beyond {MAX_RAW_COVARIATE:e} the squares \
                             the log density's curvature sums overflow; rescale the column, \
                             or leave out --no-standardize",
                            header[c]
                        ),
                    ));
                }
                Ok(v) if v.is_finite() => v,
                Ok(_) => {
                    return Err(at(
                        c,
                        format!(
                            "cell {cell:?} in column {:?} is not a finite number",
                            header[c]
                        ),
                    ));
                }
                Err(_) => {
                    return Err(at(
                        c,
                        format!("cell {cell:?} in column {:?} is not a number", header[c]),
                    ));
                }
            };
        }
        if is_missing(fields[self.label].trim()) {
            missing.get_or_insert(self.label);
        }
        Ok(missing)
    }

    /// The error for the missing value in column `c` of the data row
    /// `fields` (at `line` of `path`) under `--missing error`; `label_name`
    /// names the label column.
    fn missing_error(
        &self,
        path: &Path,
        label_name: &str,
        line: usize,
        fields: &[String],
        c: usize,
    ) -> InputError {
        let what = if fields[c].is_empty() {
            "an empty cell".to_owned()
        } else {
            format!("{:?}", fields[c])
        };
        let message = if c == self.label {
            format!(
                "empty label in {label_name}: a missing value ({what}); \
                 --missing drop leaves such rows out"
            )
        } else {
            format!(
                "missing value ({what}) in column {:?}; --missing drop leaves \
                 such rows out",
                self.names[c]
            )
        };
        InputError::new(path, InputErrorKind::NotANumber, message).at(line, Some(c + 1))
    }
}
