//! Everything a run writes: CmdStan CSV files, a JSON and a plain-text
//! summary, charts as SVG and PNG, all into an [`OutputDir`] that refuses to
//! clobber earlier results and marks partial output as such.
//!
//! | file | what |
//! |---|---|
//! | `out_dir.rs` | [`OutputDir`]: no overwrite without force, atomic writes, the [`INCOMPLETE_MARKER`] (with an interrupted run's reason), [`OutputDir::check_available`] before any work; a stopped run's folder reused unless it holds chain files, or continued ([`OutputDir::continue_stopped`]); a finished one reopened ([`OutputDir::reopen`]) |
//! | `cmdstan_csv.rs`, `cmdstan_read.rs` | CmdStan CSV files written and read back |
//! | `streamed_file.rs`, `chain_csv_stream.rs` | [`ChainCsvFiles`]: the `DrawSink` that writes each chain's file while it draws, whole lines through [`OutputDir::stream`]'s [`StreamedFile`], byte for byte the file the writer makes at the end |
//! | `value_spill.rs` | [`ValueSpills`]: the `DrawSink` that keeps each chain's values in a scratch file, read back as `DrawValues`, so that `qnmc run`'s memory does not grow with its draws |
//! | `checkpoint_files.rs` | [`CheckpointFiles`]: the `CheckpointStore` of `qnmc run --output`, in [`RESUME_FOLDER`] with the run's command for `--resume`, its rows read back from the chain files |
//! | `run_summary.rs`, `row_facts.rs`, `summary_json.rs`, `summary_table.rs` | the summary from any `DrawValues` ([`summarize_run_from`]) with each chain's [`RowFacts`], `summary.json` and the text summary |
//! | `run_health.rs`, `separated_chains.rs` | [`RunHealth`]: the warnings and the unusable verdict after every run (divergences, R̂, ESS per chain, E-BFMI, tree depth, acceptance, a chain frozen for over half its draws; the stochastic-gradient bias note); [`separated_chains`]: chains that never met (a funnel's neck, separated modes), unusable |
//! | `model_files.rs` | `model.json` and `coefficients.csv`, from `Model::description` and `Model::original_scale` |
//! | `plots.rs`, `fonts.rs`, `run_charts.rs` | charts as SVG and PNG (plotters; grouped bar charts too), text in the DejaVu Sans subset compiled in from `host/fonts/` so that no system font is read; trace, autocorrelation, density and rank charts; [`PlotSelection`]: none in a run unless asked, the slowest-mixing quantities by bulk ESS and `lp__` for `qnmc plot` |
//! | `run_files.rs`, `run_folder.rs` | everything a run wrote, in one call; a finished run read back from its folder for `qnmc plot` |

mod chain_csv_stream;
mod checkpoint_files;
mod cmdstan_csv;
mod cmdstan_read;
mod error;
mod float_text;
mod fonts;
mod model_files;
mod out_dir;
mod plots;
mod row_facts;
mod run_charts;
mod run_files;
mod run_folder;
mod run_health;
mod run_summary;
mod separated_chains;
mod streamed_file;
mod summary_json;
mod summary_table;
#[cfg(test)]
mod test_runs;
mod value_spill;

pub use chain_csv_stream::ChainCsvFiles;
pub use checkpoint_files::{CheckpointFiles, RESUME_FOLDER, RunCommand};
pub use cmdstan_csv::write_chain_csv;
pub use cmdstan_csv::{SAMPLER_COLUMNS, cmdstan_csv, csv_column_name, sampler_columns};
pub use cmdstan_read::{CmdStanCsvError, CmdStanDraws, read_cmdstan_csv, run_draws_from_cmdstan};
pub use error::OutputError;
pub use float_text::float_text;
pub use fonts::EMBEDDED_FONT;
pub use model_files::{
    COEFFICIENTS_FILE, MODEL_JSON_FILE, coefficient_table, coefficient_table_from, model_json,
    write_model_files, write_model_files_from,
};
pub use out_dir::{INCOMPLETE_MARKER, MANIFEST, OutputDir};
pub use plots::{
    CHART_SIZE, chart_file_names, render_chart, render_chart_files, render_png, render_svg,
};
pub use row_facts::{RowFacts, RowScan};
pub use run_charts::{
    DEFAULT_PLOTTED, LP_NAME, MAX_LAG, MAX_TRACE_POINTS, PlotSelection, run_charts,
};
pub use run_files::{
    SUMMARY_JSON_FILE, SUMMARY_TEXT_FILE, chain_file_name, write_charts, write_run_files,
    write_run_files_after_chains, write_run_files_plotting, write_run_files_summarized,
};
pub use run_folder::{add_charts, read_run_folder};
pub use run_health::{
    ACCEPTANCE_TOLERANCE, EBFMI_WARNING, ESS_PER_CHAIN, FIXED_STEP_ACCEPTANCE, RHAT_WARNING,
    RunHealth, assess as assess_run, ebfmi,
};
pub use run_summary::{
    ChainSummary, QuantitySummary, RunSummary, TruthComparison, summarize_run, summarize_run_from,
};
pub use separated_chains::{
    ChainGroup, LOWER_QUANTILE, MIN_DRAWS, SEPARATED_RHAT, Separation, UPPER_QUANTILE,
    separated_chains,
};
pub use streamed_file::StreamedFile;
pub use summary_json::{summary_json, summary_json_with};
pub use summary_table::{summary_table, summary_table_with};
pub use value_spill::{RunValues, SPILL_FOLDER, ValueSpills};
