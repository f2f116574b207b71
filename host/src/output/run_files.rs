//! Writing everything a run produced into its output folder in one call.

use std::path::PathBuf;

use rayon::prelude::*;

use super::run_charts::run_charts_summarized;
use super::summary_json::summary_json_in_folder;
use super::{
    OutputDir, OutputError, PlotSelection, RunSummary, chart_file_names, cmdstan_csv,
    render_chart_files, summarize_run, summary_table_with,
};
use crate::chart::Chart;
use crate::draws::RunDraws;
use crate::model::KnownPosterior;

/// File name of chain `chain_id`'s CmdStan CSV (`chain_1.csv`, …).
pub fn chain_file_name(chain_id: usize) -> String {
    format!("chain_{chain_id}.csv")
}

/// File name of the JSON summary.
pub const SUMMARY_JSON_FILE: &str = "summary.json";

/// File name of the plain-text summary table.
pub const SUMMARY_TEXT_FILE: &str = "summary.txt";

/// Writes the files of `run` into `dir` and returns their paths:
/// [`chain_file_name`] for each chain ([`cmdstan_csv`]),
/// [`SUMMARY_JSON_FILE`] ([`summary_json`](super::summary_json), with
/// `charts`: the chart files written),
/// [`SUMMARY_TEXT_FILE`] ([`summary_table`](super::summary_table)) and,
/// unless `max_plotted_quantities` is 0, the SVG and PNG of each of
/// [`run_charts`](super::run_charts) for the `max_plotted_quantities`
/// slowest-mixing quantities and `lp__` ([`PlotSelection::Slowest`]; see
/// [`write_run_files_plotting`] for any other choice). Does not call
/// [`OutputDir::finish`]: the caller does once everything it writes is there.
///
/// ```
/// use qnmc_host::draws::{ChainDraws, RunDraws};
/// use qnmc_host::output::{OutputDir, write_run_files};
///
/// let folder = std::env::temp_dir().join(format!("qnmc-doc-run-files-{}", std::process::id()));
/// # let _ = std::fs::remove_dir_all(&folder);
/// let run = RunDraws {
///     names: vec!["x".into()],
///     chains: vec![ChainDraws { chain_id: 1, lp: vec![0.0; 2], values: vec![1.0, 2.0], ..ChainDraws::default() }],
///     ..RunDraws::default()
/// };
/// let dir = OutputDir::create(&folder, false).unwrap();
/// let written = write_run_files(&run, None, &dir, 0).unwrap();
/// assert_eq!(written.len(), 3); // chain_1.csv, summary.json, summary.txt
/// dir.finish().unwrap();
/// # std::fs::remove_dir_all(&folder).unwrap();
/// ```
pub fn write_run_files(
    run: &RunDraws,
    known: Option<&KnownPosterior>,
    dir: &OutputDir,
    max_plotted_quantities: usize,
) -> Result<Vec<PathBuf>, OutputError> {
    let plots = if max_plotted_quantities == 0 {
        PlotSelection::None
    } else {
        PlotSelection::Slowest(max_plotted_quantities)
    };
    write_run_files_plotting(run, known, dir, &plots)
}

/// [`write_run_files`] with the charts of the quantities `plots` selects.
///
/// The diagnostics ([`summarize_run`]) are computed once for both summaries
/// and the choice of charts.
pub fn write_run_files_plotting(
    run: &RunDraws,
    known: Option<&KnownPosterior>,
    dir: &OutputDir,
    plots: &PlotSelection,
) -> Result<Vec<PathBuf>, OutputError> {
    write_run_files_summarized(run, known, dir, plots, &summarize_run(run, known))
}

/// [`write_run_files_plotting`] from the run's already computed `summary`,
/// which must be [`summarize_run`]`(run, known)` (a caller that also prints
/// the summary or assesses the run computes it once for everything).
pub fn write_run_files_summarized(
    run: &RunDraws,
    known: Option<&KnownPosterior>,
    dir: &OutputDir,
    plots: &PlotSelection,
    summary: &RunSummary,
) -> Result<Vec<PathBuf>, OutputError> {
    let mut written = Vec::new();
    for (k, chain) in run.chains.iter().enumerate() {
        written.push(dir.write(
            &chain_file_name(chain.chain_id),
            cmdstan_csv(run, k).as_bytes(),
        )?);
    }
    written.extend(write_run_files_after_chains(
        run, known, dir, plots, summary,
    )?);
    Ok(written)
}

/// [`write_run_files_summarized`] without the chain files, for a run whose
/// chains wrote their own as they drew ([`ChainCsvFiles`](super::ChainCsvFiles)).
pub fn write_run_files_after_chains(
    run: &RunDraws,
    known: Option<&KnownPosterior>,
    dir: &OutputDir,
    plots: &PlotSelection,
    summary: &RunSummary,
) -> Result<Vec<PathBuf>, OutputError> {
    let mut written = Vec::new();
    let charts = run_charts_summarized(run, known, plots, summary);
    let chart_files: Vec<String> = charts.iter().flat_map(chart_file_names).collect();
    written.push(dir.write(
        SUMMARY_JSON_FILE,
        summary_json_in_folder(run, known, summary, &chart_files).as_bytes(),
    )?);
    written.push(dir.write(
        SUMMARY_TEXT_FILE,
        summary_table_with(run, known, summary).as_bytes(),
    )?);
    written.extend(write_charts(&charts, dir)?);
    Ok(written)
}

/// Draws `charts` as SVG and PNG ([`render_chart_files`]) and writes them
/// into `dir`; returns the files' paths, two per chart in the order of
/// `charts`. The charts are drawn in parallel (each is independent), then
/// written in order, so that the folder's manifest lists them in order.
pub fn write_charts(charts: &[Chart], dir: &OutputDir) -> Result<Vec<PathBuf>, OutputError> {
    let drawn: Vec<_> = charts
        .par_iter()
        .map(|chart| render_chart_files(chart, dir.path()))
        .collect();
    let mut written = Vec::with_capacity(2 * charts.len());
    for files in drawn {
        for (name, bytes) in files? {
            written.push(dir.write(&name, &bytes)?);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::read_cmdstan_csv;
    use crate::output::test_runs::{gaussian_run, known_standard_normal};

    #[test]
    fn every_file_is_written_and_reads_back() {
        let folder =
            std::env::temp_dir().join(format!("qnmc-run-files-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        let run = gaussian_run(2, 100, 3, 6);
        let dir = OutputDir::create(&folder, false).unwrap();
        let written = write_run_files(&run, Some(&known_standard_normal(3)), &dir, 1).unwrap();
        // 2 CSVs, 2 summaries, 4 charts × (SVG + PNG) for x[k] and lp__.
        assert_eq!(written.len(), 2 + 2 + 16);
        let csv = std::fs::read_to_string(folder.join("chain_2.csv")).unwrap();
        let back = read_cmdstan_csv(&csv).unwrap();
        assert_eq!(back.column("x.3").unwrap(), run.chains_of(2)[1]);
        let json = std::fs::read_to_string(folder.join(SUMMARY_JSON_FILE)).unwrap();
        assert!(json.contains("\"z_mean\""));
        assert!(folder.join("density_lp.png").exists() && folder.join("rank_lp.png").exists());
        // A second write into the same folder without force is refused.
        assert!(write_run_files(&run, None, &dir, 0).is_err());
        dir.finish().unwrap();
        std::fs::remove_dir_all(folder).unwrap();
    }
}
