//! [`InputError`]: what went wrong in a user's file, and where.

use std::fmt;
use std::path::{Path, PathBuf};

/// The kind of an [`InputError`], for callers that react to some kinds
/// differently (the message alone is meant for people).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputErrorKind {
    /// The file is missing or cannot be read (the message carries the OS error).
    Io,
    /// The file (or its data part) is empty.
    Empty,
    /// A named column does not exist (the message lists those that do).
    MissingColumn,
    /// A cell that must be a number is not one (the message quotes the cell).
    NotANumber,
    /// A row has a different number of fields from the first row.
    RaggedRow,
    /// Sizes that must agree do not: a covariance that is not square, not
    /// symmetric or not positive definite, a vector of the wrong length.
    Dimension,
    /// Class labels that cannot be mapped to 0/1.
    Label,
    /// Anything else about the content: broken quoting, a constant column that
    /// cannot be standardised, malformed JSON or zip archive, a missing entry.
    Format,
}

/// An error in an input file, displayed as `FILE:LINE:COLUMN: message`.
///
/// `LINE` is the 1-based line of the file. `COLUMN` is, for tables read by
/// [`read_table`](super::read_table), the 1-based index of the *field* in its
/// row (the spreadsheet column, not a character offset); for JSON files it is
/// the 1-based character column reported by the JSON parser. Either part is
/// left out when it does not apply (`FILE:LINE: message`, `FILE: message`).
///
/// ```
/// use qnmc_host::input::{InputError, InputErrorKind};
///
/// let e = InputError::new("data.csv", InputErrorKind::NotANumber, "cell \"abc\" is not a number")
///     .at(3, Some(2));
/// assert_eq!(e.to_string(), "data.csv:3:2: cell \"abc\" is not a number");
/// assert_eq!(e.kind(), InputErrorKind::NotANumber);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    file: PathBuf,
    line: Option<usize>,
    column: Option<usize>,
    kind: InputErrorKind,
    message: String,
}

impl InputError {
    /// An error about `file` as a whole (no line or column yet).
    pub fn new(file: impl AsRef<Path>, kind: InputErrorKind, message: impl Into<String>) -> Self {
        InputError {
            file: file.as_ref().to_path_buf(),
            line: None,
            column: None,
            kind,
            message: message.into(),
        }
    }

    /// The file could not be opened or read: the message names the file and
    /// the operating system's reason.
    pub fn io(file: impl AsRef<Path>, error: &std::io::Error) -> Self {
        let file = file.as_ref();
        let message = format!("cannot read {}: {error}", file.display());
        InputError::new(file, InputErrorKind::Io, message)
    }

    /// The same error placed at 1-based `line` and, when known, `column`.
    pub fn at(mut self, line: usize, column: Option<usize>) -> Self {
        self.line = Some(line);
        self.column = column;
        self
    }

    /// The file the error is about.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The 1-based line, when the error is about one place.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// The 1-based column (field index for tables), when known.
    pub fn column(&self) -> Option<usize> {
        self.column
    }

    /// What kind of problem this is.
    pub fn kind(&self) -> InputErrorKind {
        self.kind
    }

    /// The message without the location prefix.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for InputError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_drops_missing_parts() {
        let e = InputError::new("a.csv", InputErrorKind::Empty, "the file is empty");
        assert_eq!(e.to_string(), "a.csv: the file is empty");
        let e = e.at(7, None);
        assert_eq!(e.to_string(), "a.csv:7: the file is empty");
        assert_eq!(
            e.clone().at(7, Some(4)).to_string(),
            "a.csv:7:4: the file is empty"
        );
        assert_eq!((e.line(), e.column()), (Some(7), None));
    }

    #[test]
    fn io_error_names_file_and_reason() {
        let os = std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = InputError::io("missing.csv", &os);
        assert_eq!(e.kind(), InputErrorKind::Io);
        assert!(
            e.to_string()
                .starts_with("missing.csv: cannot read missing.csv: ")
        );
        assert!(e.to_string().contains(&os.to_string()));
    }
}
