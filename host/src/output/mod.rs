//! Everything a run writes: CmdStan CSV files, a JSON and a plain-text
//! summary, charts as SVG and PNG, all into an [`OutputDir`] that refuses to
//! clobber earlier results and marks partial output as such.

mod cmdstan_csv;
mod cmdstan_read;
mod error;
mod float_text;
mod out_dir;

pub use cmdstan_csv::{SAMPLER_COLUMNS, cmdstan_csv, csv_column_name, quantity_name};
pub use cmdstan_read::{CmdStanCsvError, CmdStanDraws, read_cmdstan_csv, run_draws_from_cmdstan};
pub use error::OutputError;
pub use float_text::float_text;
pub use out_dir::{INCOMPLETE_MARKER, OutputDir};
