//! Class labels in a file mapped to 0/1, with the rule written down.

use crate::input::{InputError, InputErrorKind};
use std::fmt;
use std::path::{Path, PathBuf};

/// Which label text became 0 and which became 1.
///
/// The rule, applied to the distinct (trimmed) label cells of the column:
/// 1. if every label is a number: labels already in {0, 1} stay as they are;
///    otherwise there must be exactly two distinct values and the smaller
///    becomes 0, the larger 1 (so UCI's 1 = good, 2 = bad gives bad = 1);
/// 2. otherwise there must be exactly two distinct words, case ignored
///    (`Yes`, `yes` and `YES` are one class, shown as first spelled); the
///    first in alphabetical order becomes 0: `No`/`Yes` → 0/1,
///    `false`/`true` → 0/1, `bad`/`good` → 0/1.
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

/// A label cell's class key: numbers by value, words case-insensitively.
#[derive(Debug, Clone, PartialEq)]
enum Key {
    Number(f64),
    Word(String),
}

/// One distinct label: its key, its first spelling and where that was.
#[derive(Debug, Clone)]
struct Distinct {
    key: Key,
    text: String,
}

/// The label column, collected one cell at a time (at most two distinct
/// labels are kept; each row stores the index of its label).
#[derive(Debug, Clone)]
pub(crate) struct LabelColumn {
    file: PathBuf,
    /// 1-based field index of the label column.
    column: usize,
    /// The column in messages (`column "k"`).
    name: String,
    distinct: Vec<Distinct>,
    rows: Vec<u8>,
}

impl LabelColumn {
    /// An empty label column: field `column` (1-based) of `file`, called
    /// `name` in messages.
    pub fn new(file: &Path, column: usize, name: impl Into<String>) -> Self {
        LabelColumn {
            file: file.to_path_buf(),
            column,
            name: name.into(),
            distinct: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// Later cells come from `file` (Pima's second file).
    pub fn set_file(&mut self, file: &Path) {
        self.file = file.to_path_buf();
    }

    fn error(&self, line: usize, message: String) -> InputError {
        InputError::new(&self.file, InputErrorKind::Label, message).at(line, Some(self.column))
    }

    /// Adds the label cell of the next row, at file line `line`. Empty cells
    /// are an error (the caller decides about missing values first); so are
    /// non-finite numbers and a third distinct label.
    pub fn push(&mut self, text: &str, line: usize) -> Result<(), InputError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(self.error(line, format!("empty label in {}", self.name)));
        }
        let key = match text.parse::<f64>() {
            Ok(v) if !v.is_finite() => {
                return Err(self.error(
                    line,
                    format!("label {text:?} in {} is not finite", self.name),
                ));
            }
            Ok(v) => Key::Number(v),
            Err(_) => Key::Word(text.to_lowercase()),
        };
        let index = match self.distinct.iter().position(|d| d.key == key) {
            Some(i) => i,
            None if self.distinct.len() == 2 => {
                let list: Vec<String> = self
                    .distinct
                    .iter()
                    .map(|d| format!("{:?}", d.text))
                    .chain([format!("{text:?}")])
                    .collect();
                return Err(self.error(
                    line,
                    format!(
                        "{} has more than two distinct labels ({}, …); logistic regression needs \
                         two classes",
                        self.name,
                        list.join(", ")
                    ),
                ));
            }
            None => {
                self.distinct.push(Distinct {
                    key,
                    text: text.to_owned(),
                });
                self.distinct.len() - 1
            }
        };
        self.rows.push(index as u8);
        Ok(())
    }

    /// Number of labels pushed.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// The 0/1 labels and the rule that made them (see [`LabelMapping`]).
    pub fn map(self) -> Result<(Vec<f64>, LabelMapping), InputError> {
        let only_one = || {
            InputError::new(
                &self.file,
                InputErrorKind::Label,
                format!(
                    "{} has a single label {:?}: logistic regression needs two classes (or 0/1 labels)",
                    self.name,
                    self.distinct.first().map_or("", |d| d.text.as_str())
                ),
            )
        };
        let numbers: Option<Vec<f64>> = self
            .distinct
            .iter()
            .map(|d| match d.key {
                Key::Number(v) => Some(v),
                Key::Word(_) => None,
            })
            .collect();
        // Which distinct label is class 1.
        let one: Vec<f64> = match numbers {
            Some(values) if values.iter().all(|&v| v == 0.0 || v == 1.0) => {
                let labels = self.rows.iter().map(|&i| values[i as usize]).collect();
                let mapping = LabelMapping {
                    zero: "0".into(),
                    one: "1".into(),
                };
                return Ok((labels, mapping));
            }
            _ if self.distinct.len() < 2 => return Err(only_one()),
            Some(values) => values
                .iter()
                .map(|&v| f64::from(v > values[0].min(values[1])))
                .collect(),
            None => {
                let (a, b) = (&self.distinct[0].text, &self.distinct[1].text);
                let a_first = a
                    .to_lowercase()
                    .cmp(&b.to_lowercase())
                    .then(a.cmp(b))
                    .is_lt();
                if a_first {
                    vec![0.0, 1.0]
                } else {
                    vec![1.0, 0.0]
                }
            }
        };
        let text_of = |class: f64| {
            let i = one.iter().position(|&c| c == class).unwrap_or(0);
            self.distinct[i].text.clone()
        };
        let mapping = LabelMapping {
            zero: text_of(0.0),
            one: text_of(1.0),
        };
        let labels = self.rows.iter().map(|&i| one[i as usize]).collect();
        Ok((labels, mapping))
    }
}
