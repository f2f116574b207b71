//! Reading a finished run back from its output folder and adding charts to
//! it (`qnmc plot FOLDER`): the chain CSVs give the draws bit for bit,
//! `summary.json` the target, the sampler, the quantities' names and the
//! known posterior the density charts draw.

use std::path::PathBuf;

use serde_json::Value;

use super::{
    OutputDir, OutputError, PlotSelection, SUMMARY_JSON_FILE, read_cmdstan_csv, run_charts,
    run_draws_from_cmdstan, summary_json::with_charts, write_charts,
};
use crate::draws::RunDraws;
use crate::model::KnownPosterior;

/// The run whose files `dir` (an [`OutputDir::reopen`]ed folder) holds: its
/// draws, from the chain CSVs its manifest lists (`chain_<k>.csv`, in the
/// order of k: the chains write their files side by side, so the manifest's
/// order is the order they opened them), with the target, sampler and quantity names of
/// its `summary.json`, and the known posterior `summary.json` records (the
/// true means and sds of the quantities, when the run had them).
pub fn read_run_folder(dir: &OutputDir) -> Result<(RunDraws, Option<KnownPosterior>), OutputError> {
    let not_run = |reason: String| OutputError::NotRunOutput {
        folder: dir.path().to_path_buf(),
        reason,
    };
    let summary_text = std::fs::read_to_string(dir.path().join(SUMMARY_JSON_FILE))
        .map_err(|e| not_run(format!("cannot read its {SUMMARY_JSON_FILE}: {e}")))?;
    let summary: Value = serde_json::from_str(&summary_text)
        .map_err(|e| not_run(format!("its {SUMMARY_JSON_FILE} is not JSON: {e}")))?;
    let mut chain_files: Vec<(u64, String)> = dir
        .listed_files()
        .into_iter()
        .filter_map(|name| chain_number(&name).map(|k| (k, name)))
        .collect();
    chain_files.sort();
    let chain_files: Vec<String> = chain_files.into_iter().map(|(_, name)| name).collect();
    if chain_files.is_empty() {
        return Err(not_run("its qnmc-files.txt lists no chain_<k>.csv".into()));
    }
    let mut parsed = Vec::with_capacity(chain_files.len());
    for name in &chain_files {
        let path = dir.path().join(name);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| OutputError::io(&path, "read the chain file", e))?;
        let draws = read_cmdstan_csv(&text)
            .map_err(|e| not_run(format!("{name}:{}: {}", e.line, e.message)))?;
        parsed.push(draws);
    }
    let mut run = run_draws_from_cmdstan(&parsed).map_err(not_run)?;
    let quantities = summary["quantities"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let names: Vec<String> = quantities
        .iter()
        .filter_map(|q| q["name"].as_str().map(str::to_string))
        .collect();
    if names.len() != run.names.len() {
        return Err(not_run(format!(
            "its {SUMMARY_JSON_FILE} names {} quantities, its chain files have {}",
            names.len(),
            run.names.len()
        )));
    }
    run.names = names;
    if let Some(target) = summary["target"].as_str() {
        run.target = target.to_string();
    }
    if let Some(sampler) = summary["sampler"].as_str() {
        run.sampler = sampler.to_string();
    }
    let known = summary["known_posterior"].as_object().and_then(|k| {
        let truth = |key: &str| -> Option<Vec<f64>> {
            quantities.iter().map(|q| q[key].as_f64()).collect()
        };
        Some(KnownPosterior {
            source: k.get("source")?.as_str()?.to_string(),
            gaussian_marginals: k.get("gaussian_marginals")?.as_bool()?,
            mean: truth("true_mean")?,
            sd: truth("true_sd")?,
            mean_mcse: None,
            sd_mcse: None,
        })
    });
    Ok((run, known))
}

/// Draws the charts `selection` picks of `run`, read from `dir` with
/// [`read_run_folder`] (which also gives `known`), writes them beside its
/// files (replacing charts an earlier call drew, never a file qnmc did not
/// write), adds them to the folder's manifest and to `summary.json`'s
/// `charts`, and returns the chart files written. The names of a
/// [`PlotSelection::Names`] are checked first by the caller
/// ([`PlotSelection::validate`]); a name the run does not have is skipped.
pub fn add_charts(
    dir: &OutputDir,
    run: &RunDraws,
    known: Option<&KnownPosterior>,
    selection: &PlotSelection,
) -> Result<Vec<PathBuf>, OutputError> {
    let charts = run_charts(run, known, selection);
    let written = write_charts(&charts, dir)?;
    let names: Vec<String> = written
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    let summary_path = dir.path().join(SUMMARY_JSON_FILE);
    let text = std::fs::read_to_string(&summary_path)
        .map_err(|e| OutputError::io(&summary_path, "read", e))?;
    let updated = with_charts(&text, &names).map_err(|reason| OutputError::NotRunOutput {
        folder: dir.path().to_path_buf(),
        reason,
    })?;
    dir.write(SUMMARY_JSON_FILE, updated.as_bytes())?;
    Ok(written)
}

/// k of a chain's CSV `chain_<k>.csv` as [`chain_file_name`](super::chain_file_name)
/// names it; `None` for another name.
fn chain_number(name: &str) -> Option<u64> {
    name.strip_prefix("chain_")
        .and_then(|rest| rest.strip_suffix(".csv"))
        .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|id| id.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::test_runs::{gaussian_run, known_standard_normal};
    use crate::output::write_run_files_plotting;

    fn scratch(name: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!(
            "qnmc-run-folder-test-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&path);
        path
    }

    /// The chart files (SVG and PNG) in `folder`, sorted.
    fn charts_in(folder: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".svg") || n.ends_with(".png"))
            .collect();
        names.sort();
        names
    }

    /// Charts drawn later from the folder are the bytes the run would have
    /// drawn, and the folder's summary.json and manifest end up the same.
    #[test]
    fn charts_drawn_from_the_folder_are_those_of_the_run() {
        let run = gaussian_run(3, 200, 3, 4);
        let known = known_standard_normal(3);
        let selection = PlotSelection::Slowest(1);
        let (drawn, later) = (scratch("drawn"), scratch("later"));
        let dir = OutputDir::create(&drawn, false).unwrap();
        write_run_files_plotting(&run, Some(&known), &dir, &selection).unwrap();
        dir.finish().unwrap();
        let dir = OutputDir::create(&later, false).unwrap();
        write_run_files_plotting(&run, Some(&known), &dir, &PlotSelection::None).unwrap();
        dir.finish().unwrap();
        assert!(charts_in(&later).is_empty());
        let json: Value =
            serde_json::from_str(&std::fs::read_to_string(later.join(SUMMARY_JSON_FILE)).unwrap())
                .unwrap();
        assert_eq!(json["charts"], Value::Array(Vec::new()));

        let dir = OutputDir::reopen(&later).unwrap();
        let (back, back_known) = read_run_folder(&dir).unwrap();
        assert_eq!(back.names, run.names);
        assert_eq!(back.target, run.target);
        assert_eq!(back_known.as_ref().map(|k| &k.mean), Some(&known.mean));
        let written = add_charts(&dir, &back, back_known.as_ref(), &selection).unwrap();
        // x[k] and lp__, 4 charts each, SVG and PNG.
        assert_eq!(written.len(), 16);
        let charts = charts_in(&drawn);
        assert_eq!(charts_in(&later), charts);
        assert_eq!(charts.len(), 16);
        for name in &charts {
            let (a, b) = (
                std::fs::read(drawn.join(name)).unwrap(),
                std::fs::read(later.join(name)).unwrap(),
            );
            assert!(a == b, "{name} differs");
        }
        for file in [SUMMARY_JSON_FILE, super::super::MANIFEST] {
            assert_eq!(
                std::fs::read_to_string(drawn.join(file)).unwrap(),
                std::fs::read_to_string(later.join(file)).unwrap(),
                "{file}"
            );
        }
        // Drawing them again replaces them; other charts are added.
        let again = add_charts(
            &dir,
            &back,
            None,
            &PlotSelection::Names(vec!["x[2]".into()]),
        );
        assert_eq!(again.unwrap().len(), 8);
        let json: Value =
            serde_json::from_str(&std::fs::read_to_string(later.join(SUMMARY_JSON_FILE)).unwrap())
                .unwrap();
        let listed = json["charts"].as_array().unwrap();
        let unique: std::collections::HashSet<_> = listed.iter().collect();
        assert_eq!(unique.len(), listed.len());
        assert!(listed.len() >= 16 && listed.contains(&Value::from("rank_x_2.png")));
        std::fs::remove_dir_all(drawn).unwrap();
        std::fs::remove_dir_all(later).unwrap();
    }

    #[test]
    fn a_folder_that_is_not_a_finished_run_is_refused() {
        let folder = scratch("not-a-run");
        let reason = |folder: &std::path::Path| match OutputDir::reopen(folder) {
            Err(OutputError::NotRunOutput { reason, .. }) => reason,
            other => panic!("{other:?}"),
        };
        assert_eq!(reason(&folder), "there is no such folder");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("notes.txt"), "mine").unwrap();
        assert!(reason(&folder).contains("no qnmc-files.txt"));
        // A run still writing (or stopped): its marker is there.
        let dir = OutputDir::create(&folder, true).unwrap();
        assert!(reason(&folder).contains("INCOMPLETE"));
        dir.finish().unwrap();
        // Finished, but without a chain file.
        let dir = OutputDir::reopen(&folder).unwrap();
        let err = read_run_folder(&dir).unwrap_err().to_string();
        assert!(err.contains("summary.json"), "{err}");
        std::fs::remove_dir_all(folder).unwrap();
    }
}
