//! The end of a `qnmc run` stopped by Ctrl-C or SIGTERM: the summary and the
//! diagnostics of the draws kept so far, the files of every kept draw with
//! `--output`, and the exit code of the signal ([`CliError::Interrupted`]).

use super::CliError;
use super::plot_command::shell_word;
use super::run_command::report_health;
use qnmc_host::draws::{Interruption, RunDraws};
use qnmc_host::model::KnownPosterior;
use qnmc_host::output::{
    OutputDir, RunValues, SUMMARY_JSON_FILE, SUMMARY_TEXT_FILE, chain_file_name,
    summarize_run_from, summary_json_with, summary_table_with, write_chain_csv,
};

/// Writes, with `output`, every chain's CmdStan CSV (all its kept draws; a
/// chain stopped before its first kept draw has the header and no rows).
/// Then prints the summary table and the diagnostics of the chains that
/// kept a draw, cut to the shortest one's number of draws (the diagnostics
/// need chains of equal length; the health report's note says what was
/// left out), or a note when no chain kept one; with `output` also writes
/// them as `summary.json` and `summary.txt` and leaves the folder marked
/// INCOMPLETE with the reason ([`OutputDir::finish_interrupted`]). Returns
/// the error that ends the command: [`CliError::Interrupted`], or the
/// output's error.
pub(crate) fn conclude(
    draws: RunDraws,
    interruption: &Interruption,
    known: Option<&KnownPosterior>,
    output: Option<OutputDir>,
    values: &RunValues<'_>,
    resumable: bool,
) -> CliError {
    let folder = output.as_ref().map(|dir| dir.path().to_path_buf());
    match report_and_write(draws, interruption, known, output, values, resumable) {
        Ok(()) => CliError::Interrupted {
            interruption: interruption.clone(),
            folder,
        },
        Err(e) => e,
    }
}

fn report_and_write(
    mut draws: RunDraws,
    interruption: &Interruption,
    known: Option<&KnownPosterior>,
    dir: Option<OutputDir>,
    values: &RunValues<'_>,
    resumable: bool,
) -> Result<(), CliError> {
    // Each chain's file, streamed as it drew, is rewritten whole: its
    // header says how many draws it holds and why it stopped. The values
    // come from the spill a row at a time.
    if let Some(dir) = &dir {
        for (k, chain) in draws.chains.iter().enumerate() {
            dir.rewrite_streamed_lines(&chain_file_name(chain.chain_id), |line| {
                let mut line = line;
                write_chain_csv(&mut line, &draws, k, values)
            })?;
        }
    }
    // The draws as the diagnostics can take them (in place: they may be
    // large).
    draws.chains.retain(|c| !c.is_empty());
    let shortest = draws.shortest_chain();
    draws.truncate(shortest);
    if draws.chains.is_empty() {
        eprintln!(
            "note: the run was {} before any chain kept a draw: no summary or diagnostics",
            interruption.describe()
        );
    } else {
        let summary = summarize_run_from(&draws, values, known)?;
        let table = summary_table_with(&draws, known, &summary);
        print!("{table}");
        report_health(&draws, &summary);
        if let Some(dir) = &dir {
            dir.write(
                SUMMARY_JSON_FILE,
                summary_json_with(&draws, known, &summary).as_bytes(),
            )?;
            dir.write(SUMMARY_TEXT_FILE, table.as_bytes())?;
        }
    }
    if let Some(dir) = dir {
        let path = dir.path().to_path_buf();
        dir.finish_interrupted(&interruption.describe())?;
        if resumable {
            eprintln!(
                "wrote {} (its INCOMPLETE file says the run was interrupted); continue it with: \
                 qnmc run --resume {}",
                path.display(),
                shell_word(&path.to_string_lossy())
            );
        } else {
            eprintln!(
                "wrote {} (its INCOMPLETE file says the run was interrupted; a new run into it needs --force)",
                path.display()
            );
        }
    }
    Ok(())
}
