//! Reading user files with errors that say where: `FILE:LINE:COLUMN: message`.
//!
//! - [`InputError`]: the one error type of every file reader in this crate;
//! - [`read_table`] / [`parse_table`]: a small CSV (or whitespace-separated)
//!   table reader that keeps each row's line number;
//! - [`Records`]: the same parse one record at a time, for large files
//!   (`logreg-csv` streams its data through it), hashing what it reads;
//! - [`Sha256`]: the hash `model.json` records of a data file.

mod error;
mod records;
mod sha256;
mod table;

#[cfg(test)]
mod tests;

pub use error::{InputError, InputErrorKind};
pub(crate) use records::duplicate_error;
pub use records::{Records, Separator};
pub use sha256::Sha256;
pub use table::{Header, Table, TableFormat, parse_table, read_table};
