//! Records of a delimited text file, read one line at a time: the streaming
//! half of the table reader, for files too large to hold as text.
//!
//! Rules (those of [`parse_table`](super::parse_table)): lines starting with
//! `#` (after leading spaces) are comments; blank lines are allowed before the
//! first record and after the last, not between records; with a delimiter
//! character a field may be quoted (`"a, b"`, `""` for a quote inside) and
//! spaces around unquoted fields are trimmed; a quoted field cannot span
//! lines; a leading UTF-8 byte-order mark is ignored.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::{InputError, InputErrorKind, Sha256};

/// How fields are separated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Separator {
    /// `,` with optional `"` quoting (CSV).
    Comma,
    /// Runs of spaces or tabs (e.g. UCI's `german.data-numeric`).
    Whitespace,
    /// Another single character (`;`, tab, `|`), with `"` quoting as in CSV.
    Char(char),
}

impl Separator {
    /// The separator named on the command line: one character, or `tab`,
    /// `\t`, `comma`, `semicolon`, `space`, `whitespace` (runs of blanks).
    ///
    /// ```
    /// use qnmc_host::input::Separator;
    /// assert_eq!(Separator::from_name(";").unwrap(), Separator::Char(';'));
    /// assert_eq!(Separator::from_name("tab").unwrap(), Separator::Char('\t'));
    /// assert_eq!(Separator::from_name(",").unwrap(), Separator::Comma);
    /// assert!(Separator::from_name("ab").is_err());
    /// ```
    pub fn from_name(name: &str) -> Result<Self, String> {
        let c = match name {
            "tab" | "\\t" => '\t',
            "comma" => ',',
            "semicolon" => ';',
            "space" => ' ',
            "whitespace" => return Ok(Separator::Whitespace),
            _ => {
                let mut chars = name.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) if c != '"' && c != '#' && c != '\n' && c != '\r' => c,
                    _ => {
                        return Err(format!(
                            "expected one character (not `\"` or `#`) or tab, comma, semicolon, \
                             space, whitespace; got `{name}`"
                        ));
                    }
                }
            }
        };
        Ok(if c == ',' {
            Separator::Comma
        } else {
            Separator::Char(c)
        })
    }

    fn char(self) -> Option<char> {
        match self {
            Separator::Comma => Some(','),
            Separator::Char(c) => Some(c),
            Separator::Whitespace => None,
        }
    }
}

/// The records of a delimited file, each with its 1-based line number;
/// every byte read also goes into a SHA-256 hash ([`Records::sha256`]).
pub struct Records<R> {
    reader: R,
    source: PathBuf,
    separator: Separator,
    line: usize,
    buffer: String,
    started: bool,
    blank_since: Option<usize>,
    hash: Sha256,
}

impl<R: BufRead> Records<R> {
    /// Records of `reader`; `source` names it in errors.
    pub fn new(reader: R, source: impl AsRef<Path>, separator: Separator) -> Self {
        Records {
            reader,
            source: source.as_ref().to_path_buf(),
            separator,
            line: 0,
            buffer: String::new(),
            started: false,
            blank_since: None,
            hash: Sha256::new(),
        }
    }

    /// The file or name errors are about.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// SHA-256 of the bytes read so far (the whole file once
    /// [`next_record`](Self::next_record) has returned `None`).
    pub fn sha256(&self) -> String {
        self.hash.hex()
    }

    /// The next record and its line, `None` at the end of the input.
    pub fn next_record(&mut self) -> Result<Option<(usize, Vec<String>)>, InputError> {
        loop {
            self.buffer.clear();
            let read = self
                .reader
                .read_line(&mut self.buffer)
                .map_err(|e| InputError::io(&self.source, &e))?;
            if read == 0 {
                return Ok(None);
            }
            self.hash.update(self.buffer.as_bytes());
            self.line += 1;
            let mut raw = self.buffer.trim_end_matches(['\n', '\r']);
            if self.line == 1 {
                raw = raw.strip_prefix('\u{feff}').unwrap_or(raw);
            }
            let content = raw.trim();
            if content.starts_with('#') {
                continue;
            }
            if content.is_empty() {
                if self.started && self.blank_since.is_none() {
                    self.blank_since = Some(self.line);
                }
                continue;
            }
            if let Some(blank) = self.blank_since {
                return Err(InputError::new(
                    &self.source,
                    InputErrorKind::RaggedRow,
                    "blank line between rows (only trailing blank lines are allowed)",
                )
                .at(blank, None));
            }
            self.started = true;
            let fields = match self.separator.char() {
                None => content.split_whitespace().map(str::to_owned).collect(),
                Some(c) => split_line(raw, c, &self.source, self.line)?,
            };
            return Ok(Some((self.line, fields)));
        }
    }
}

/// Splits one line into fields at `delimiter`; `"` quotes a field, `""` is a
/// quote in it. Blanks around fields (spaces and tabs other than the
/// delimiter) are trimmed.
fn split_line(
    raw: &str,
    delimiter: char,
    source: &Path,
    line: usize,
) -> Result<Vec<String>, InputError> {
    let blank = |c: char| (c == ' ' || c == '\t') && c != delimiter;
    let mut fields = Vec::new();
    let mut chars = raw.chars().peekable();
    loop {
        let mut field = String::new();
        while chars.peek().is_some_and(|&c| blank(c)) {
            chars.next();
        }
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                    None => {
                        return Err(InputError::new(
                            source,
                            InputErrorKind::Format,
                            "unterminated quoted field (quotes cannot span lines)",
                        )
                        .at(line, Some(fields.len() + 1)));
                    }
                }
            }
            while chars.peek().is_some_and(|&c| blank(c)) {
                chars.next();
            }
            match chars.next() {
                None => {
                    fields.push(field);
                    return Ok(fields);
                }
                Some(c) if c == delimiter => fields.push(field),
                Some(c) => {
                    return Err(InputError::new(
                        source,
                        InputErrorKind::Format,
                        format!("unexpected {c:?} after a closing quote"),
                    )
                    .at(line, Some(fields.len() + 1)));
                }
            }
        } else {
            loop {
                match chars.next() {
                    None => {
                        fields.push(field.trim_matches(blank).to_owned());
                        return Ok(fields);
                    }
                    Some(c) if c == delimiter => break,
                    Some(c) => field.push(c),
                }
            }
            fields.push(field.trim_matches(blank).to_owned());
        }
    }
}

/// The first repeated name of a header row: (1-based column of the repeat,
/// 1-based column of the first, the name). Empty names (R's row-name column)
/// are not compared.
pub(crate) fn duplicate_name(names: &[String]) -> Option<(usize, usize, &str)> {
    let mut seen = std::collections::HashMap::new();
    for (i, name) in names.iter().enumerate() {
        if name.is_empty() {
            continue;
        }
        if let Some(&first) = seen.get(name.as_str()) {
            return Some((i + 1, first + 1, name.as_str()));
        }
        seen.insert(name.as_str(), i);
    }
    None
}

/// The error for a repeated header name.
pub(crate) fn duplicate_error(source: &Path, line: usize, names: &[String]) -> Option<InputError> {
    let (column, first, name) = duplicate_name(names)?;
    Some(
        InputError::new(
            source,
            InputErrorKind::Format,
            format!(
                "duplicate column name {name:?} (also column {first}): every column needs its \
                 own name"
            ),
        )
        .at(line, Some(column)),
    )
}
