//! `qnmc plot FOLDER`: draws the charts of a finished run from its output
//! folder. `qnmc run --output` draws none unless `--plot` asks, because
//! drawing them took longer than sampling a small model; this command
//! draws the same charts from the files the run wrote.

use super::CliError;
use super::args::PlotArgs;
use qnmc_host::output::{OutputDir, PlotSelection, add_charts, read_run_folder};

/// `qnmc plot`.
pub fn plot(args: &PlotArgs) -> Result<(), CliError> {
    let selection = PlotSelection::from_words(&args.plot);
    if selection == PlotSelection::None {
        return Err(CliError::Usage(
            "--plot none: nothing to draw (name quantities, `slowest` or `all`)".into(),
        ));
    }
    let dir = OutputDir::reopen(&args.folder)?;
    let (run, known) = read_run_folder(&dir)?;
    selection.validate(&run.names).map_err(CliError::Usage)?;
    let written = add_charts(&dir, &run, known.as_ref(), &selection)?;
    eprintln!(
        "wrote {} chart files into {}",
        written.len(),
        args.folder.display()
    );
    Ok(())
}

/// `word` as one shell word: as it is when it holds only characters no
/// shell treats specially, else in single quotes.
pub(crate) fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./,:+=@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn folder_names_are_quoted_for_the_shell_when_needed() {
        assert_eq!(shell_word("heart-fit"), "heart-fit");
        assert_eq!(shell_word("runs/a_1.b"), "runs/a_1.b");
        assert_eq!(shell_word("my runs"), "'my runs'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
