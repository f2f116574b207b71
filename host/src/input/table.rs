//! A small reader for numeric tables: comma-separated (CSV) or
//! whitespace-separated, with an optional header row.
//!
//! Rules: lines starting with `#` (after leading spaces) are comments and
//! skipped; blank lines are allowed before the first row and after the last
//! one, not between rows; every row must have as many fields as the first.
//! In comma mode a field may be quoted (`"a, b"`, with `""` for a quote inside);
//! spaces around unquoted fields are trimmed; a quoted field cannot span lines.
//! A leading UTF-8 byte-order mark is ignored.

use super::records::{Records, duplicate_error};
use super::{InputError, InputErrorKind, Separator};
use std::path::{Path, PathBuf};

/// Whether the first row names the columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Header {
    /// The first row is a header.
    Present,
    /// Every row is data.
    Absent,
    /// The first row is a header when one of its fields is not a number.
    Detect,
}

/// The layout of a table file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableFormat {
    /// Field separator.
    pub separator: Separator,
    /// Header row or not.
    pub header: Header,
}

impl TableFormat {
    /// CSV with a header row.
    pub const CSV_WITH_HEADER: TableFormat = TableFormat {
        separator: Separator::Comma,
        header: Header::Present,
    };
    /// CSV without a header row.
    pub const CSV_NO_HEADER: TableFormat = TableFormat {
        separator: Separator::Comma,
        header: Header::Absent,
    };
    /// Whitespace-separated, no header.
    pub const WHITESPACE_NO_HEADER: TableFormat = TableFormat {
        separator: Separator::Whitespace,
        header: Header::Absent,
    };
}

/// A table of text cells, each row remembering its line in the file, so that
/// every later error (a cell that is not a number, a bad label) can say where.
///
/// ```
/// use qnmc_host::input::{parse_table, TableFormat};
///
/// let text = "# a comment\nx,y,label\n1.5,2,yes\n\"3\",4,no\n\n";
/// let table = parse_table(text, "inline.csv", TableFormat::CSV_WITH_HEADER).unwrap();
/// assert_eq!(table.len(), 2);
/// assert_eq!(table.column_index("label").unwrap(), 2);
/// assert_eq!(table.numeric_column(0).unwrap(), [1.5, 3.0]);
/// let err = table.numeric_column(2).unwrap_err();
/// assert_eq!(err.to_string(), "inline.csv:3:3: cell \"yes\" in column \"label\" is not a number");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    source: PathBuf,
    header: Option<Vec<String>>,
    header_line: Option<usize>,
    rows: Vec<Vec<String>>,
    lines: Vec<usize>,
}

/// Reads the table in file `path`.
pub fn read_table(path: impl AsRef<Path>, format: TableFormat) -> Result<Table, InputError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| InputError::io(path, &e))?;
    parse_table(&text, path, format)
}

/// Parses `text` as a table; `source` names it in error messages.
pub fn parse_table(
    text: &str,
    source: impl AsRef<Path>,
    format: TableFormat,
) -> Result<Table, InputError> {
    let source = source.as_ref();
    let mut reader = Records::new(text.as_bytes(), source, format.separator);
    let mut records: Vec<(usize, Vec<String>)> = Vec::new();
    while let Some(record) = reader.next_record()? {
        records.push(record);
    }
    let Some((_, first)) = records.first() else {
        return Err(InputError::new(
            source,
            InputErrorKind::Empty,
            "the file is empty (no rows besides comments and blank lines)",
        ));
    };
    let width = first.len();
    for (line, fields) in &records {
        if fields.len() != width {
            return Err(InputError::new(
                source,
                InputErrorKind::RaggedRow,
                format!(
                    "ragged row: expected {width} fields (as in the first row), found {}",
                    fields.len()
                ),
            )
            .at(*line, None));
        }
    }
    let has_header = match format.header {
        Header::Present => true,
        Header::Absent => false,
        Header::Detect => first.iter().any(|f| parse_number(f).is_none()),
    };
    let (header_line, header) = if has_header {
        let (line, names) = records.remove(0);
        if let Some(e) = duplicate_error(source, line, &names) {
            return Err(e);
        }
        (Some(line), Some(names))
    } else {
        (None, None)
    };
    if records.is_empty() {
        return Err(InputError::new(
            source,
            InputErrorKind::Empty,
            "the file has a header row but no data rows",
        ));
    }
    let (lines, rows) = records.into_iter().unzip();
    Ok(Table {
        source: source.to_path_buf(),
        header,
        header_line,
        rows,
        lines,
    })
}

/// A number in a cell: Rust's float syntax (`1`, `-2.5e3`, `inf`, `NaN`).
fn parse_number(cell: &str) -> Option<f64> {
    cell.parse::<f64>().ok()
}

impl Table {
    /// The file (or name) the table was read from.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// Column names, when the table has a header row.
    pub fn header(&self) -> Option<&[String]> {
        self.header.as_deref()
    }

    /// Number of data rows (the header excluded).
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// `true` without data rows (never, for a table that was read successfully).
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Number of fields per row.
    pub fn width(&self) -> usize {
        self.rows[0].len()
    }

    /// The 1-based file line of data row `row`.
    pub fn line(&self, row: usize) -> usize {
        self.lines[row]
    }

    /// The 1-based file line of the header row, if any.
    pub fn header_line(&self) -> Option<usize> {
        self.header_line
    }

    /// The text of cell (`row`, `column`), both 0-based.
    pub fn cell(&self, row: usize, column: usize) -> &str {
        &self.rows[row][column]
    }

    /// A name for `column` (0-based) in messages: its header name, or its
    /// 1-based number.
    pub fn column_label(&self, column: usize) -> String {
        match &self.header {
            Some(names) => format!("column {:?}", names[column]),
            None => format!("column {}", column + 1),
        }
    }

    /// The 0-based index of the column named `name`; the error lists the
    /// columns that exist (or says the file has no header).
    pub fn column_index(&self, name: &str) -> Result<usize, InputError> {
        let Some(names) = &self.header else {
            return Err(InputError::new(
                &self.source,
                InputErrorKind::MissingColumn,
                format!("no column named {name:?}: the file has no header row"),
            ));
        };
        names.iter().position(|n| n == name).ok_or_else(|| {
            let list: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
            InputError::new(
                &self.source,
                InputErrorKind::MissingColumn,
                format!(
                    "no column named {name:?}; the columns are {}",
                    list.join(", ")
                ),
            )
            .at(self.header_line().unwrap_or(1), None)
        })
    }

    /// An error located at cell (`row`, `column`), both 0-based.
    pub fn error_at(
        &self,
        row: usize,
        column: usize,
        kind: InputErrorKind,
        message: impl Into<String>,
    ) -> InputError {
        InputError::new(&self.source, kind, message).at(self.lines[row], Some(column + 1))
    }

    /// Cell (`row`, `column`) as a number; the error quotes the cell.
    pub fn number(&self, row: usize, column: usize) -> Result<f64, InputError> {
        let cell = self.cell(row, column);
        parse_number(cell).ok_or_else(|| {
            self.error_at(
                row,
                column,
                InputErrorKind::NotANumber,
                format!(
                    "cell {cell:?} in {} is not a number",
                    self.column_label(column)
                ),
            )
        })
    }

    /// Every cell of `column` as a number, top to bottom.
    pub fn numeric_column(&self, column: usize) -> Result<Vec<f64>, InputError> {
        (0..self.len())
            .map(|row| self.number(row, column))
            .collect()
    }

    /// Every cell of the table as a number, row-major.
    pub fn numeric_rows(&self) -> Result<Vec<Vec<f64>>, InputError> {
        (0..self.len())
            .map(|row| (0..self.width()).map(|c| self.number(row, c)).collect())
            .collect()
    }
}
