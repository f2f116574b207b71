//! Class labels in a file mapped to 0/1, with the rule written down.

use crate::input::{InputError, InputErrorKind};
use std::fmt;
use std::path::PathBuf;

/// Which label text became 0 and which became 1.
///
/// The rule, applied to the distinct (trimmed) label cells of the column:
/// 1. if every label is a number: labels already in {0, 1} stay as they are;
///    otherwise there must be exactly two distinct values and the smaller
///    becomes 0, the larger 1 (so UCI's 1 = good, 2 = bad gives bad = 1);
/// 2. otherwise there must be exactly two distinct words; they are compared
///    case-insensitively (then exactly) and the first in alphabetical order
///    becomes 0: `No`/`Yes` → 0/1, `false`/`true` → 0/1, `bad`/`good` → 0/1.
///
/// ```
/// use qnmc_host::targets::LabelMapping;
/// let m = LabelMapping { zero: "No".into(), one: "Yes".into() };
/// assert_eq!(m.to_string(), "\"No\" → 0, \"Yes\" → 1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelMapping {
    /// The label text mapped to 0.
    pub zero: String,
    /// The label text mapped to 1.
    pub one: String,
}

impl fmt::Display for LabelMapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} → 0, {:?} → 1", self.zero, self.one)
    }
}

/// One label cell and where it is.
#[derive(Debug, Clone)]
pub(crate) struct LabelCell {
    pub text: String,
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
}

impl LabelCell {
    fn error(&self, message: String) -> InputError {
        InputError::new(&self.file, InputErrorKind::Label, message).at(self.line, Some(self.column))
    }
}

/// Maps `cells` to 0/1 by the rule of [`LabelMapping`]; `column` names the
/// label column in messages.
pub(crate) fn map_labels(
    cells: &[LabelCell],
    column: &str,
) -> Result<(Vec<f64>, LabelMapping), InputError> {
    if let Some(empty) = cells.iter().find(|c| c.text.is_empty()) {
        return Err(empty.error(format!("empty label in {column}")));
    }
    let numbers: Option<Vec<f64>> = cells.iter().map(|c| c.text.parse::<f64>().ok()).collect();
    match numbers {
        Some(values) => map_numeric(cells, &values, column),
        None => map_words(cells, column),
    }
}

fn map_numeric(
    cells: &[LabelCell],
    values: &[f64],
    column: &str,
) -> Result<(Vec<f64>, LabelMapping), InputError> {
    let mut distinct: Vec<f64> = Vec::new();
    for (cell, &v) in cells.iter().zip(values) {
        if !v.is_finite() {
            return Err(cell.error(format!("label {:?} in {column} is not finite", cell.text)));
        }
        if !distinct.contains(&v) {
            if distinct.len() == 2 {
                return Err(too_many(cell, column, &distinct_texts(cells, 3)));
            }
            distinct.push(v);
        }
    }
    if distinct.iter().all(|&v| v == 0.0 || v == 1.0) {
        let mapping = LabelMapping {
            zero: "0".into(),
            one: "1".into(),
        };
        return Ok((values.to_vec(), mapping));
    }
    if distinct.len() < 2 {
        return Err(only_one(cells, column));
    }
    let (low, high) = (distinct[0].min(distinct[1]), distinct[0].max(distinct[1]));
    let text_of = |v: f64| {
        let i = values.iter().position(|&x| x == v).unwrap_or(0);
        cells[i].text.clone()
    };
    let mapping = LabelMapping {
        zero: text_of(low),
        one: text_of(high),
    };
    let labels = values
        .iter()
        .map(|&v| if v == high { 1.0 } else { 0.0 })
        .collect();
    Ok((labels, mapping))
}

fn map_words(cells: &[LabelCell], column: &str) -> Result<(Vec<f64>, LabelMapping), InputError> {
    let mut distinct: Vec<&str> = Vec::new();
    for cell in cells {
        if !distinct.contains(&cell.text.as_str()) {
            if distinct.len() == 2 {
                return Err(too_many(cell, column, &distinct_texts(cells, 3)));
            }
            distinct.push(&cell.text);
        }
    }
    if distinct.len() < 2 {
        return Err(only_one(cells, column));
    }
    distinct.sort_by(|a, b| a.to_lowercase().cmp(&b.to_lowercase()).then(a.cmp(b)));
    let mapping = LabelMapping {
        zero: distinct[0].to_owned(),
        one: distinct[1].to_owned(),
    };
    let labels = cells
        .iter()
        .map(|c| if c.text == mapping.one { 1.0 } else { 0.0 })
        .collect();
    Ok((labels, mapping))
}

fn distinct_texts(cells: &[LabelCell], at_most: usize) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for c in cells {
        if !seen.contains(&c.text) {
            seen.push(c.text.clone());
            if seen.len() == at_most {
                break;
            }
        }
    }
    seen
}

fn too_many(cell: &LabelCell, column: &str, first: &[String]) -> InputError {
    let list: Vec<String> = first.iter().map(|t| format!("{t:?}")).collect();
    cell.error(format!(
        "{column} has more than two distinct labels ({}, …); logistic regression needs two classes",
        list.join(", ")
    ))
}

fn only_one(cells: &[LabelCell], column: &str) -> InputError {
    let first = &cells[0];
    InputError::new(
        &first.file,
        InputErrorKind::Label,
        format!(
            "{column} has a single label {:?}: logistic regression needs two classes (or 0/1 labels)",
            first.text
        ),
    )
}
