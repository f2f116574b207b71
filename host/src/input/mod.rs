//! Reading user files with errors that say where: `FILE:LINE:COLUMN: message`.
//!
//! - [`InputError`]: the one error type of every file reader in this crate;
//! - [`read_table`] / [`parse_table`]: a small CSV (or whitespace-separated)
//!   table reader that keeps each row's line number.

mod error;
mod table;

#[cfg(test)]
mod tests;

pub use error::{InputError, InputErrorKind};
pub use table::{Header, Separator, Table, TableFormat, parse_table, read_table};
