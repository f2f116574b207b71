//! Reading user files with errors that say where: `FILE:LINE:COLUMN: message`.
//!
//! - [`InputError`]: the one error type of every file reader in this crate;
//! - [`read_table`] / [`parse_table`]: a small CSV (or whitespace-separated)
//!   table reader that keeps each row's line number;
//! - [`Records`]: the same parse one record at a time, for large files
//!   (`logreg-csv` streams its data through it), hashing what it reads; the
//!   table reader is built on it. Any one-character delimiter, quoted
//!   fields; a header that names a column twice is refused;
//! - [`read_json`], [`read_zipped_json`]: JSON files, plain or as a
//!   one-entry zip (posteriordb's, a Stan model's data);
//! - [`quantity_name`]: `w.1` → `w[1]`, Stan's names of CSV columns;
//! - [`Sha256`]: the hash `model.json` records of a data file;
//! - [`read_idx`], [`read_idx_images`], [`read_idx_labels`]: the IDX files
//!   of the MNIST family (gzip-compressed or raw).

mod error;
mod idx;
mod json;
mod quantity_name;
mod records;
mod sha256;
mod table;

#[cfg(test)]
mod tests;

pub use error::{InputError, InputErrorKind};
pub use idx::{IdxArray, IdxImages, parse_idx, read_idx, read_idx_images, read_idx_labels};
#[cfg(test)]
pub(crate) use idx::{gzip, idx_bytes};
pub(crate) use json::{expect_len, field, number, number_list, numbers};
pub use json::{read_json, read_zipped_json};
pub use quantity_name::quantity_name;
pub(crate) use records::duplicate_error;
pub use records::{Records, Separator};
pub use sha256::Sha256;
pub use table::{Header, Table, TableFormat, parse_table, read_table};
