//! Everything a run writes: CmdStan CSV files, a JSON and a plain-text
//! summary, charts as SVG and PNG, all into an [`OutputDir`] that refuses to
//! clobber earlier results and marks partial output as such.

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
