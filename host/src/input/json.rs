//! JSON files, plain or as a one-entry `.json.zip` (posteriordb's data and
//! reference draws, a Stan model's data), read into `serde_json::Value` with
//! errors that name the file, line and column, and the typed reads of their
//! entries.

use super::{InputError, InputErrorKind};
use serde_json::Value;
use std::io::Read;
use std::path::Path;

/// Parses JSON `text`; a syntax error is placed at its line and character
/// column in `file`.
fn parse(text: &str, file: &Path, what: &str) -> Result<Value, InputError> {
    serde_json::from_str(text).map_err(|e| {
        InputError::new(
            file,
            InputErrorKind::Format,
            format!("{what}: invalid JSON: {e}"),
        )
        .at(e.line(), Some(e.column()))
    })
}

/// Reads the JSON file `path`.
pub fn read_json(path: &Path) -> Result<Value, InputError> {
    let text = std::fs::read_to_string(path).map_err(|e| InputError::io(path, &e))?;
    parse(&text, path, "the file")
}

/// Reads the single JSON entry of the zip archive `path` (posteriordb stores
/// data and reference draws this way, deflate-compressed).
pub fn read_zipped_json(path: &Path) -> Result<Value, InputError> {
    let file = std::fs::File::open(path).map_err(|e| InputError::io(path, &e))?;
    let bad_zip = |e: zip::result::ZipError| {
        InputError::new(
            path,
            InputErrorKind::Format,
            format!("not a readable zip archive: {e}"),
        )
    };
    let mut archive = zip::ZipArchive::new(file).map_err(bad_zip)?;
    if archive.len() != 1 {
        return Err(InputError::new(
            path,
            InputErrorKind::Format,
            format!(
                "expected one JSON file in the archive, found {} entries",
                archive.len()
            ),
        ));
    }
    let mut entry = archive.by_index(0).map_err(bad_zip)?;
    let name = entry.name().to_owned();
    let mut text = String::new();
    entry.read_to_string(&mut text).map_err(|e| {
        InputError::new(
            path,
            InputErrorKind::Format,
            format!("cannot decompress {name}: {e}"),
        )
    })?;
    parse(&text, path, &format!("{name} in the archive"))
}

/// The entry `key` of JSON object `value`.
pub(crate) fn field<'a>(value: &'a Value, key: &str, file: &Path) -> Result<&'a Value, InputError> {
    value.get(key).ok_or_else(|| {
        InputError::new(
            file,
            InputErrorKind::Format,
            format!("no entry {key:?} in the JSON object"),
        )
    })
}

/// `value` as a list of numbers (`what` names it in messages).
pub(crate) fn numbers(value: &Value, what: &str, file: &Path) -> Result<Vec<f64>, InputError> {
    let list = value.as_array().ok_or_else(|| {
        InputError::new(
            file,
            InputErrorKind::Format,
            format!("{what} is not a list of numbers"),
        )
    })?;
    list.iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_f64().ok_or_else(|| {
                InputError::new(
                    file,
                    InputErrorKind::NotANumber,
                    format!("{what}[{}] = {v} is not a number", i + 1),
                )
            })
        })
        .collect()
}

/// Entry `key` of `value` as a list of numbers.
pub(crate) fn number_list(value: &Value, key: &str, file: &Path) -> Result<Vec<f64>, InputError> {
    numbers(field(value, key, file)?, &format!("entry {key:?}"), file)
}

/// Entry `key` of `value` as one number.
pub(crate) fn number(value: &Value, key: &str, file: &Path) -> Result<f64, InputError> {
    field(value, key, file)?.as_f64().ok_or_else(|| {
        InputError::new(
            file,
            InputErrorKind::NotANumber,
            format!("entry {key:?} is not a number"),
        )
    })
}

/// Checks that entry `what` has `expected` elements.
pub(crate) fn expect_len(
    found: usize,
    expected: usize,
    what: &str,
    file: &Path,
) -> Result<(), InputError> {
    if found == expected {
        Ok(())
    } else {
        Err(InputError::new(
            file,
            InputErrorKind::Dimension,
            format!("{what} has {found} elements, expected {expected}"),
        ))
    }
}
