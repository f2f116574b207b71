//! Reading CmdStan CSV files back: qnmc's own (see
//! [`cmdstan_csv`](super::cmdstan_csv())) or any CmdStan run's.

use std::fmt;

use crate::draws::{ChainDraws, RunDraws};
use crate::input::quantity_name;

/// The contents of one CmdStan CSV file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CmdStanDraws {
    /// Every `#` comment line, without the `#`, in file order.
    pub comments: Vec<String>,
    /// Column names as written in the header (`lp__`, `w.1`, …).
    pub column_names: Vec<String>,
    /// The draws, row-major: row `i`, column `j` at
    /// `i * column_names.len() + j`.
    pub values: Vec<f64>,
}

impl CmdStanDraws {
    /// Number of draws (data lines).
    pub fn rows(&self) -> usize {
        self.values.len() / self.column_names.len().max(1)
    }

    /// Index of column `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.column_names.iter().position(|c| c == name)
    }

    /// The draws of column `name`.
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let j = self.column_index(name)?;
        let width = self.column_names.len();
        Some(self.values.iter().skip(j).step_by(width).copied().collect())
    }

    /// The value of a configuration line `key = value` among the comments
    /// (first match, CmdStan's ` (Default)` suffix removed).
    pub fn metadata(&self, key: &str) -> Option<&str> {
        self.comments.iter().find_map(|line| {
            let (k, v) = line.split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_end_matches("(Default)").trim_end())
        })
    }

    /// How many of the first rows are warm-up draws: none unless the file
    /// says `save_warmup = true` (or `1`); then CmdStan's count,
    /// ceil(`num_warmup` ÷ `thin`), at most the rows there are. (ArviZ's
    /// `from_cmdstan` takes `num_warmup` ÷ `thin` rounded down, the same
    /// unless `thin` does not divide `num_warmup`.)
    pub fn warmup_rows(&self) -> usize {
        let saved = matches!(self.metadata("save_warmup"), Some("true" | "1"));
        if !saved {
            return 0;
        }
        let number = |key: &str| self.metadata(key).and_then(|v| v.parse::<usize>().ok());
        let warmup = number("num_warmup").unwrap_or(0);
        let thin = number("thin").unwrap_or(1).max(1);
        warmup.div_ceil(thin).min(self.rows())
    }

    /// The file without its warm-up rows ([`warmup_rows`](Self::warmup_rows)).
    pub fn without_warmup(&self) -> CmdStanDraws {
        let skip = self.warmup_rows() * self.column_names.len();
        CmdStanDraws {
            comments: self.comments.clone(),
            column_names: self.column_names.clone(),
            values: self.values[skip..].to_vec(),
        }
    }

    /// Warm-up and sampling seconds from the `Elapsed Time` trailer.
    pub fn elapsed_seconds(&self) -> Option<(f64, f64)> {
        let start = self
            .comments
            .iter()
            .position(|c| c.contains("Elapsed Time:"))?;
        let number = |line: &str| -> Option<f64> {
            let before = line.split("seconds").next()?.trim_end();
            before.rsplit([' ', ':']).next()?.trim().parse().ok()
        };
        let warmup = number(&self.comments[start])?;
        let sampling = number(self.comments.get(start + 1)?)?;
        Some((warmup, sampling))
    }
}

/// Why a CmdStan CSV text could not be read: a line (1-based) and, for a bad
/// number, its column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmdStanCsvError {
    /// 1-based line number.
    pub line: usize,
    /// 1-based field number on that line, when one field is at fault.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for CmdStanCsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.column {
            Some(c) => write!(f, "line {}, column {c}: {}", self.line, self.message),
            None => write!(f, "line {}: {}", self.line, self.message),
        }
    }
}

impl std::error::Error for CmdStanCsvError {}

/// Reads a CmdStan CSV text: comment lines (`#`) anywhere are kept in
/// [`CmdStanDraws::comments`], blank lines are skipped, the first other line
/// is the header and every later line a draw with one number per column
/// (`nan`, `inf`, `-inf` accepted).
///
/// ```
/// use qnmc_host::output::read_cmdstan_csv;
///
/// let d = read_cmdstan_csv("# id = 2\nlp__,theta\n-1.5,0.25\n-2,0.5\n").unwrap();
/// assert_eq!(d.column("theta").unwrap(), vec![0.25, 0.5]);
/// assert_eq!(d.metadata("id"), Some("2"));
/// let err = read_cmdstan_csv("lp__,theta\n-1.5,abc\n").unwrap_err();
/// assert_eq!(err.to_string(), "line 2, column 2: \"abc\" is not a number (column theta)");
/// ```
pub fn read_cmdstan_csv(text: &str) -> Result<CmdStanDraws, CmdStanCsvError> {
    let mut draws = CmdStanDraws::default();
    let mut have_header = false;
    for (index, raw) in text.lines().enumerate() {
        let line_number = index + 1;
        let line = raw.trim_end_matches('\r');
        if let Some(comment) = line.strip_prefix('#') {
            draws.comments.push(comment.to_string());
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let error = |column: Option<usize>, message: String| CmdStanCsvError {
            line: line_number,
            column,
            message,
        };
        if !have_header {
            for (j, name) in line.split(',').enumerate() {
                let name = name.trim();
                if name.is_empty() {
                    return Err(error(Some(j + 1), "empty column name in the header".into()));
                }
                if draws.column_names.iter().any(|c| c == name) {
                    return Err(error(
                        Some(j + 1),
                        format!("column name {name} appears twice in the header"),
                    ));
                }
                draws.column_names.push(name.to_string());
            }
            have_header = true;
            continue;
        }
        let width = draws.column_names.len();
        let start = draws.values.len();
        for (j, field) in line.split(',').enumerate() {
            if j >= width {
                draws.values.truncate(start);
                return Err(error(
                    None,
                    format!(
                        "{} fields, but the header has {width} columns",
                        line.split(',').count()
                    ),
                ));
            }
            let field = field.trim();
            let value: f64 = field.parse().map_err(|_| {
                error(
                    Some(j + 1),
                    format!(
                        "{field:?} is not a number (column {})",
                        draws.column_names[j]
                    ),
                )
            })?;
            draws.values.push(value);
        }
        let got = draws.values.len() - start;
        if got != width {
            return Err(error(
                None,
                format!("{got} fields, but the header has {width} columns"),
            ));
        }
    }
    if !have_header {
        return Err(CmdStanCsvError {
            line: text.lines().count().max(1),
            column: None,
            message: "no header line (every line is a comment or blank)".into(),
        });
    }
    Ok(draws)
}

/// Puts CmdStan files, one per chain, back together as a [`RunDraws`]: the
/// quantities are the columns not ending in `__` (renamed `w.1` → `w[1]`),
/// the sampler columns fill the chain statistics (a missing one is NaN, 0 or
/// `false`), `id`, `seed`, `model`, `algorithm` and the elapsed times come
/// from the comments; saved warm-up rows ([`CmdStanDraws::warmup_rows`]) are
/// left out. Fails when the files do not have the same columns.
pub fn run_draws_from_cmdstan(files: &[CmdStanDraws]) -> Result<RunDraws, String> {
    let Some(first) = files.first() else {
        return Err("no CmdStan files to read".into());
    };
    let quantity_columns: Vec<usize> = (0..first.column_names.len())
        .filter(|&j| !first.column_names[j].ends_with("__"))
        .collect();
    let mut run = RunDraws {
        target: first.metadata("model").unwrap_or("").to_string(),
        sampler: first.metadata("algorithm").unwrap_or("").to_string(),
        names: quantity_columns
            .iter()
            .map(|&j| quantity_name(&first.column_names[j]))
            .collect(),
        ..RunDraws::default()
    };
    for (k, file) in files.iter().enumerate() {
        let file = &file.without_warmup();
        if file.column_names != first.column_names {
            return Err(format!(
                "file {} has columns different from file 1 ({} vs {})",
                k + 1,
                file.column_names.join(","),
                first.column_names.join(",")
            ));
        }
        let rows = file.rows();
        let column_or =
            |name: &str, fill: f64| file.column(name).unwrap_or_else(|| vec![fill; rows]);
        let width = file.column_names.len();
        let mut values = Vec::with_capacity(rows * quantity_columns.len());
        for i in 0..rows {
            values.extend(quantity_columns.iter().map(|&j| file.values[i * width + j]));
        }
        let (warmup_seconds, sampling_seconds) = file.elapsed_seconds().unwrap_or((0.0, 0.0));
        let n_leapfrog: Vec<u32> = column_or("n_leapfrog__", 0.0)
            .iter()
            .map(|&v| {
                if v.is_finite() && v >= 0.0 {
                    v as u32
                } else {
                    0
                }
            })
            .collect();
        run.chains.push(ChainDraws {
            chain_id: file
                .metadata("id")
                .and_then(|v| v.parse().ok())
                .unwrap_or(k + 1),
            seed: file
                .metadata("seed")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            lp: column_or("lp__", f64::NAN),
            accept_stat: column_or("accept_stat__", f64::NAN),
            step_size: column_or("stepsize__", f64::NAN),
            gradient_evaluations: n_leapfrog.iter().map(|&n| u64::from(n)).sum(),
            n_leapfrog,
            divergent: column_or("divergent__", 0.0)
                .iter()
                .map(|&v| v != 0.0)
                .collect(),
            values,
            values_from_row: 0,
            warmup_draws: file
                .metadata("num_warmup")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            lp_seconds: 0.0,
            warmup_seconds,
            sampling_seconds,
            tree_depth: file
                .column("treedepth__")
                .map(|c| c.iter().map(|&v| v as u32).collect())
                .unwrap_or_default(),
            energy: file.column("energy__").unwrap_or_default(),
            // The adaptation block's metric is not read back.
            adapted_metric: None,
            // A CmdStan CSV does not say.
            restart: None,
            // Left out above (their statistics are not read back).
            saved_warmup: Default::default(),
            // Not read back: a file says how many draws it holds, not how
            // many its run was asked for.
            iterations: 0,
            interrupted: false,
        });
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stan's `bern` output files, vendored beside the diagnostics' golden
    /// tests (`diagnostics/tests/data/stan-bern/`).
    fn golden_dir() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../diagnostics/tests/data/stan-bern")
    }

    fn golden(dir: &std::path::Path, name: &str) -> String {
        let path = dir.join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn reads_a_real_cmdstan_file() {
        let dir = golden_dir();
        let d = read_cmdstan_csv(&golden(&dir, "bern1.csv")).unwrap();
        assert_eq!(
            d.column_names,
            [
                "lp__",
                "accept_stat__",
                "stepsize__",
                "treedepth__",
                "n_leapfrog__",
                "divergent__",
                "energy__",
                "theta"
            ]
        );
        assert_eq!(d.rows(), 1000);
        let theta = d.column("theta").unwrap();
        assert_eq!(theta[0], 0.208532);
        assert_eq!(d.column("lp__").unwrap()[2], -11.053);
        assert_eq!(d.metadata("model"), Some("bernoulli_model"));
        assert_eq!(d.metadata("num_samples"), Some("1000"));
        assert_eq!(d.metadata("seed"), Some("86520"));
        assert_eq!(d.elapsed_seconds(), Some((0.003, 0.009)));
        // The adaptation comments after the header are kept too.
        assert!(
            d.comments
                .iter()
                .any(|c| c.contains("Step size = 0.883328"))
        );
    }

    #[test]
    fn golden_files_reassemble_and_match_stans_bulk_ess() {
        let dir = golden_dir();
        let files: Vec<CmdStanDraws> = (1..=4)
            .map(|k| read_cmdstan_csv(&golden(&dir, &format!("bern{k}.csv"))).unwrap())
            .collect();
        let run = run_draws_from_cmdstan(&files).unwrap();
        assert_eq!(run.names, ["theta"]);
        assert_eq!(run.target, "bernoulli_model");
        assert_eq!(run.chains.len(), 4);
        let chains = run.chains_of(0);
        let slices: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
        // Stan's unit-test value for theta (shared/data/README.md), tolerance 1e-4.
        let ess = crate::diagnostics::ess_bulk(&slices);
        assert!((ess - 1407.5124).abs() < 1e-4, "{ess}");
    }

    #[test]
    fn a_real_run_survives_our_writer_unchanged() {
        let dir = golden_dir();
        let files: Vec<CmdStanDraws> = (1..=2)
            .map(|k| read_cmdstan_csv(&golden(&dir, &format!("bern{k}.csv"))).unwrap())
            .collect();
        let run = run_draws_from_cmdstan(&files).unwrap();
        for (k, file) in files.iter().enumerate() {
            let again = read_cmdstan_csv(&crate::output::cmdstan_csv(&run, k)).unwrap();
            for name in [
                "lp__",
                "accept_stat__",
                "stepsize__",
                "divergent__",
                "theta",
            ] {
                assert_eq!(again.column(name), file.column(name), "{name}");
            }
            assert_eq!(again.metadata("id"), file.metadata("id"));
            assert_eq!(again.metadata("seed"), file.metadata("seed"));
        }
    }

    #[test]
    fn windows_line_ends_and_blank_lines_are_accepted() {
        let d = read_cmdstan_csv("# id = 1\r\nlp__,x.1\r\n\r\n-1,2.5\r\n").unwrap();
        assert_eq!(d.column_names, ["lp__", "x.1"]);
        assert_eq!(d.column("x.1").unwrap(), vec![2.5]);
        assert_eq!(d.metadata("id"), Some("1"));
    }

    #[test]
    fn errors_name_line_and_column() {
        let err = read_cmdstan_csv("# c\na,b\n1,2\n3\n").unwrap_err();
        assert_eq!(err.line, 4);
        assert!(
            err.to_string().contains("1 fields, but the header has 2"),
            "{err}"
        );
        let err = read_cmdstan_csv("a,b\n1,2,3\n").unwrap_err();
        assert_eq!((err.line, err.column), (2, None));
        let err = read_cmdstan_csv("a,,b\n").unwrap_err();
        assert_eq!((err.line, err.column), (1, Some(2)));
        let err = read_cmdstan_csv("a,a\n").unwrap_err();
        assert!(err.to_string().contains("appears twice"), "{err}");
        let err = read_cmdstan_csv("# only\n\n").unwrap_err();
        assert!(err.to_string().contains("no header"), "{err}");
    }

    #[test]
    fn files_with_different_columns_are_refused() {
        let a = read_cmdstan_csv("lp__,x\n1,2\n").unwrap();
        let b = read_cmdstan_csv("lp__,y\n1,2\n").unwrap();
        assert!(
            run_draws_from_cmdstan(&[a, b])
                .unwrap_err()
                .contains("file 2")
        );
        assert!(run_draws_from_cmdstan(&[]).is_err());
    }
}
