//! Draws as CmdStan CSV files, one per chain, so Stan's tools (`stansummary`,
//! ArviZ's `from_cmdstan`, CmdStanPy, `posterior::read_cmdstan_csv`) read
//! qnmc's output like a CmdStan run.
//!
//! The layout is described at [`cmdstan_csv`];
//! [`read_cmdstan_csv`](super::read_cmdstan_csv) reads such a file (or any CmdStan file) back.

use std::fmt::Write as _;

use super::float_text;
use crate::draw_values::{DrawValues, InMemory, infallible};
use crate::draws::{AdaptedMetric, ChainDraws, MAX_WRITTEN_METRIC_DIMENSION, RunDraws};

/// CmdStan's NUTS sampler columns, in CmdStan's order. A file has these
/// before the quantities, without the ones its run does not record (see
/// [`sampler_columns`]).
pub const SAMPLER_COLUMNS: [&str; 7] = [
    "lp__",
    "accept_stat__",
    "stepsize__",
    "treedepth__",
    "n_leapfrog__",
    "divergent__",
    "energy__",
];

/// The sampler columns of `run`'s files: [`SAMPLER_COLUMNS`] in CmdStan's
/// order, with `treedepth__` only for NUTS (a run with a maximum tree depth,
/// or chains that recorded tree depths) and `energy__` only when the chains
/// recorded energies (the samplers with a Hamiltonian,
/// [`SamplerKind::has_hamiltonian`](crate::run::SamplerKind::has_hamiltonian)).
/// Every chain's file of a run has the same columns.
///
/// ```
/// use qnmc_host::draws::{ChainDraws, RunDraws};
/// use qnmc_host::output::sampler_columns;
///
/// let mut run = RunDraws { chains: vec![ChainDraws::default()], ..RunDraws::default() };
/// assert_eq!(
///     sampler_columns(&run),
///     ["lp__", "accept_stat__", "stepsize__", "n_leapfrog__", "divergent__"]
/// );
/// run.chains[0].energy = vec![3.5];
/// assert_eq!(sampler_columns(&run).last(), Some(&"energy__"));
/// ```
pub fn sampler_columns(run: &RunDraws) -> Vec<&'static str> {
    let depths =
        run.max_tree_depth.is_some() || run.chains.iter().any(|c| !c.tree_depth.is_empty());
    let energies = run.chains.iter().any(|c| !c.energy.is_empty());
    columns_with(depths, energies)
}

/// [`SAMPLER_COLUMNS`] with or without `treedepth__` and `energy__`.
pub(crate) fn columns_with(depths: bool, energies: bool) -> Vec<&'static str> {
    SAMPLER_COLUMNS
        .into_iter()
        .filter(|&c| match c {
            "treedepth__" => depths,
            "energy__" => energies,
            _ => true,
        })
        .collect()
}

/// The CmdStan CSV file of chain `chain_index` (0-based index into
/// `run.chains`).
///
/// Layout of a file, as CmdStan writes it:
///
/// 1. `#` comment lines with the configuration, CmdStan's `key = value`
///    tree (`model`, `method = sample`, `num_samples`, `num_warmup`,
///    `save_warmup`, `thin`, `algorithm`, `id`, `seed`), then a `qnmc`
///    section with the run's own settings. `num_warmup` is the warm-up this
///    chain ran ([`ChainDraws::warmup_draws`](crate::draws::ChainDraws):
///    NUTS may end its warm-up early, each chain at its own time; the
///    requested length is the `qnmc` section's `num_warmup`); `adapt
///    engaged` is true when the warm-up adapted the step size (and NUTS's
///    metric;
///    [`StepSizeOrigin::Adapted`](crate::draws::StepSizeOrigin::Adapted)), with `delta` the target
///    acceptance; `thin` is the setting `thin`, else 1; `save_warmup` is
///    true when the chain saved its warm-up draws (`--save-warmup`); NUTS adds CmdStan's `max_depth`
///    and, when its warm-up adapted, `metric` (CmdStan's name, see 3). The
///    `qnmc` section writes the run's `metric` setting as `metric_kind`, as
///    readers take the last line containing `metric =` for CmdStan's. A
///    run stopped by Ctrl-C or SIGTERM
///    ([`RunDraws::interrupted`](crate::draws::RunDraws::interrupted)) adds
///    `interrupted = interrupted by SIGINT after N of M iterations; this
///    chain ran …`, and its `num_samples` is, as always, the draws the file
///    holds (CmdStanPy checks the rows against it);
/// 2. the header line: the sampler columns ([`sampler_columns`]) in
///    CmdStan's NUTS order `lp__`, `accept_stat__`, `stepsize__`,
///    `treedepth__`, `n_leapfrog__`, `divergent__`, `energy__`, then the
///    quantities with Stan's CSV names (`w.1` for `w[1]`, `a.2.3` for
///    `a[2,3]`). `treedepth__` (valid doublings of the trajectory) is
///    written for NUTS only and `energy__` (the Hamiltonian H = U + ½pᵀM⁻¹p
///    of the kept draw, with U = −`lp__`) for the samplers that integrate a
///    Hamiltonian (NUTS, HMC, QNHMC, HMC-BFGS); the other samplers build no
///    tree or have no such energy, so those columns are left out rather than
///    filled with made-up numbers (CmdStan's own static HMC and
///    fixed-parameter outputs omit columns the same way; readers take every
///    column ending in `__` as a sampler statistic). CmdStan's static HMC
///    also writes `int_time__` (ε × steps); qnmc does not, its
///    `n_leapfrog__` says the steps;
/// 3. for a NUTS chain whose warm-up adapted
///    ([`ChainDraws::adapted_metric`](crate::draws::ChainDraws)), CmdStan's
///    adaptation block: `Adaptation terminated`, `Step size = ε` and the
///    inverse metric M⁻¹ as CmdStan lists it for `unit_e` (nothing),
///    `diag_e` (its diagonal) or `dense_e` (its rows; the quasi-Newton
///    metric's M⁻¹ is dense and fixed after warm-up, written up to
///    [`MAX_WRITTEN_METRIC_DIMENSION`]; above, a line says it is not
///    written, and the header has no `metric`);
/// 4. one line per kept draw, each number in its shortest text that reads
///    back to the same `f64` (see [`float_text`]); with `--save-warmup`
///    the saved warm-up draws ([`ChainDraws::saved_warmup`](crate::draws::ChainDraws))
///    come first, between the header and the adaptation block, as in
///    CmdStan (ceil(`num_warmup` ÷ `thin`) lines: iterations 0, thin, 2·thin, …);
/// 5. the `Elapsed Time` trailer with warm-up, sampling and total seconds.
///
/// # Panics
///
/// If `chain_index` is out of range (a programming error, not user input).
///
/// ```
/// use qnmc_host::draws::{ChainDraws, RunDraws};
/// use qnmc_host::output::{cmdstan_csv, read_cmdstan_csv};
///
/// let run = RunDraws {
///     target: "demo".into(),
///     sampler: "hmc".into(),
///     names: vec!["w[1]".into(), "sigma".into()],
///     chains: vec![ChainDraws {
///         chain_id: 1,
///         seed: 7,
///         lp: vec![-1.5, -0.25],
///         accept_stat: vec![0.9, 1.0],
///         step_size: vec![0.1, 0.1],
///         n_leapfrog: vec![10, 10],
///         divergent: vec![false, true],
///         energy: vec![2.0, 1.5],
///         values: vec![0.5, 2.0, -0.125, 3.0],
///         ..ChainDraws::default()
///     }],
///     ..RunDraws::default()
/// };
/// let text = cmdstan_csv(&run, 0);
/// assert!(text.contains("\nlp__,accept_stat__,stepsize__,n_leapfrog__,divergent__,energy__,w.1,sigma\n"));
/// assert!(text.contains("\n-0.25,1,0.1,10,1,1.5,-0.125,3\n"));
/// let back = read_cmdstan_csv(&text).unwrap();
/// assert_eq!(back.column("w.1").unwrap(), vec![0.5, -0.125]);
/// ```
pub fn cmdstan_csv(run: &RunDraws, chain_index: usize) -> String {
    let mut out = String::new();
    let mut line = |text: &str| {
        out.push_str(text);
        out.push('\n');
    };
    infallible(write_chain_csv(&mut line, run, chain_index, &InMemory));
    out
}

/// [`cmdstan_csv`] line by line into `line`, the values of the kept draws
/// read from `values` one row at a time (an interrupted run's chain file,
/// rewritten from its spill without holding the chain's values).
pub fn write_chain_csv<V: DrawValues>(
    line: &mut impl FnMut(&str),
    run: &RunDraws,
    chain_index: usize,
    values: &V,
) -> Result<(), V::Error> {
    let Some(chain) = run.chains.get(chain_index) else {
        return Ok(());
    };
    let columns = sampler_columns(run);
    let quantities = run.names.len();
    csv_head(line, run, chain, chain.len(), run.chains.len(), &columns);
    let mut i = 0;
    values.for_each_row(run, chain_index, &mut |row| {
        let rows = Rows {
            values: row,
            first_value_row: i,
            ..kept_rows(chain)
        };
        write_rows(line, &columns, quantities, rows, i..i + 1);
        i += 1;
    })?;
    // Draws without values (none, unless the values are fewer than the
    // draws) are written with NaN, as before.
    write_rows(line, &columns, quantities, kept_rows(chain), i..chain.len());
    csv_trailer(line, chain);
    Ok(())
}

/// Everything of a chain's file before its kept draws: the comment lines
/// with the configuration (`num_samples` as given: the draws the file
/// holds), the header line with `columns` and the quantities, the saved
/// warm-up draws and the adaptation block. `num_chains` is the run's.
pub(crate) fn csv_head(
    line: &mut impl FnMut(&str),
    run: &RunDraws,
    chain: &ChainDraws,
    num_samples: usize,
    num_chains: usize,
    columns: &[&str],
) {
    let setting = |keys: &[&str]| {
        run.settings
            .iter()
            .find(|(k, _)| keys.contains(&k.as_str()))
            .map(|(_, v)| one_line(v))
    };
    let thin = setting(&["thin"])
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1);
    line(&format!(
        "# qnmc_version = {} (CmdStan CSV layout)",
        env!("CARGO_PKG_VERSION")
    ));
    line("# stan_version_major = 2");
    line("# stan_version_minor = 35");
    line("# stan_version_patch = 0");
    line(&format!("# model = {}", one_line(&run.target)));
    line("# method = sample (Default)");
    line("#   sample");
    line(&format!("#     num_samples = {num_samples}"));
    line(&format!("#     num_warmup = {}", chain.warmup_draws));
    line(&format!(
        "#     save_warmup = {}",
        !chain.saved_warmup.is_empty()
    ));
    line(&format!("#     thin = {thin}"));
    line("#     adapt");
    let adapted = run.step_size_origin.adapted();
    line(&format!("#       engaged = {adapted}"));
    if let Some(delta) = run.target_acceptance.filter(|_| adapted) {
        line(&format!("#       delta = {delta}"));
    }
    line(&format!("#     algorithm = {}", one_line(&run.sampler)));
    if let Some(depth) = run.max_tree_depth {
        line(&format!("#       max_depth = {depth}"));
    }
    if let Some(name) = chain.adapted_metric.as_ref().and_then(cmdstan_metric_name) {
        line(&format!("#       metric = {name}"));
    }
    line(&format!("#     num_chains = {num_chains}"));
    line(&format!("# id = {}", chain.chain_id));
    line("# random");
    line(&format!("#   seed = {}", chain.seed));
    line("# output");
    line("#   sig_figs = -1 (Default)");
    line("# qnmc");
    line(&format!("#   target = {}", one_line(&run.target)));
    line(&format!("#   sampler = {}", one_line(&run.sampler)));
    for (key, value) in &run.settings {
        // CmdStan's `metric` (above) names a metric of its own; readers
        // take the last line containing `metric =` (CmdStanPy), so qnmc's
        // says what it is under a key that does not end in `metric`.
        let key = if key == "metric" { "metric_kind" } else { key };
        line(&format!("#   {} = {}", one_line(key), one_line(value)));
    }
    if let Some(interruption) = &run.interrupted {
        line(&format!(
            "#   interrupted = {}; this chain ran {} iterations ({} warm-up) and kept {} draws",
            interruption.describe(),
            chain.iterations,
            chain.warmup_draws,
            chain.len()
        ));
    }

    let mut header: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
    header.extend(run.names.iter().map(|n| csv_column_name(n)));
    line(&header.join(","));
    let saved = &chain.saved_warmup;
    let saved_rows = Rows {
        lp: &saved.lp,
        accept_stat: &saved.accept_stat,
        step_size: &saved.step_size,
        tree_depth: &saved.tree_depth,
        n_leapfrog: &saved.n_leapfrog,
        divergent: &saved.divergent,
        energy: &saved.energy,
        values: &saved.values,
        first_value_row: 0,
    };
    write_rows(
        line,
        columns,
        run.names.len(),
        saved_rows,
        0..saved.lp.len(),
    );
    if let Some(metric) = &chain.adapted_metric {
        adaptation_block(line, chain.step_size.first().copied(), metric);
    }
}

/// The kept draws of `chain` as rows to write.
pub(crate) fn kept_rows(chain: &ChainDraws) -> Rows<'_> {
    Rows {
        lp: &chain.lp,
        accept_stat: &chain.accept_stat,
        step_size: &chain.step_size,
        tree_depth: &chain.tree_depth,
        n_leapfrog: &chain.n_leapfrog,
        divergent: &chain.divergent,
        energy: &chain.energy,
        values: &chain.values,
        first_value_row: chain.values_from_row,
    }
}

/// The `Elapsed Time` lines that end a chain's file.
pub(crate) fn csv_trailer(line: &mut impl FnMut(&str), chain: &ChainDraws) {
    let warmup = chain.warmup_seconds;
    let sampling = chain.sampling_seconds;
    line("# ");
    line(&format!(
        "#  Elapsed Time: {} seconds (Warm-up)",
        seconds(warmup)
    ));
    line(&format!(
        "#                {} seconds (Sampling)",
        seconds(sampling)
    ));
    line(&format!(
        "#                {} seconds (Total)",
        seconds(warmup + sampling)
    ));
    line("# ");
}

/// The columns of some draws (the saved warm-up's or the kept ones).
pub(crate) struct Rows<'a> {
    lp: &'a [f64],
    accept_stat: &'a [f64],
    step_size: &'a [f64],
    tree_depth: &'a [u32],
    n_leapfrog: &'a [u32],
    divergent: &'a [bool],
    energy: &'a [f64],
    values: &'a [f64],
    /// The row `values` starts with ([`ChainDraws::values_from_row`]).
    first_value_row: usize,
}

/// One CSV line per draw of `rows` in `range`: the sampler `columns`, then
/// the `quantities` values.
pub(crate) fn write_rows(
    line: &mut impl FnMut(&str),
    columns: &[&str],
    quantities: usize,
    rows: Rows<'_>,
    range: std::ops::Range<usize>,
) {
    let mut row = String::new();
    for i in range {
        row.clear();
        let stat = |v: Option<&f64>| float_text(v.copied().unwrap_or(f64::NAN));
        for (k, column) in columns.iter().enumerate() {
            if k > 0 {
                row.push(',');
            }
            match *column {
                "lp__" => row.push_str(&stat(rows.lp.get(i))),
                "accept_stat__" => row.push_str(&stat(rows.accept_stat.get(i))),
                "stepsize__" => row.push_str(&stat(rows.step_size.get(i))),
                // A chain that recorded no depth here (none does within one
                // NUTS run) writes 0, as for n_leapfrog__.
                "treedepth__" => {
                    let _ = write!(row, "{}", rows.tree_depth.get(i).copied().unwrap_or(0));
                }
                "n_leapfrog__" => {
                    let _ = write!(row, "{}", rows.n_leapfrog.get(i).copied().unwrap_or(0));
                }
                "divergent__" => {
                    let divergent = rows.divergent.get(i).copied().unwrap_or(false);
                    let _ = write!(row, "{}", u8::from(divergent));
                }
                // energy__, the last of SAMPLER_COLUMNS.
                _ => row.push_str(&stat(rows.energy.get(i))),
            }
        }
        let held = i.checked_sub(rows.first_value_row).map(|r| r * quantities);
        for j in 0..quantities {
            row.push(',');
            row.push_str(&float_text(
                held.and_then(|start| rows.values.get(start + j))
                    .copied()
                    .unwrap_or(f64::NAN),
            ));
        }
        line(&row);
    }
}

/// CmdStan's name of a NUTS metric (`None`: one CmdStan has no name for
/// whose inverse is not written).
fn cmdstan_metric_name(metric: &AdaptedMetric) -> Option<&'static str> {
    match metric {
        AdaptedMetric::Unit => Some("unit_e"),
        AdaptedMetric::Diagonal(_) => Some("diag_e"),
        AdaptedMetric::Dense(_) => Some("dense_e"),
        AdaptedMetric::NotWritten => None,
    }
}

/// CmdStan's adaptation block after the header: the step size the warm-up
/// ended with and the inverse metric (CmdStanPy and ArviZ read both).
fn adaptation_block(line: &mut impl FnMut(&str), step_size: Option<f64>, metric: &AdaptedMetric) {
    let numbers = |row: &[f64]| {
        row.iter()
            .map(|&v| float_text(v))
            .collect::<Vec<_>>()
            .join(", ")
    };
    line("# Adaptation terminated");
    line(&format!(
        "# Step size = {}",
        float_text(step_size.unwrap_or(f64::NAN))
    ));
    match metric {
        AdaptedMetric::Unit => line("# No free parameters for unit metric"),
        AdaptedMetric::Diagonal(diagonal) => {
            line("# Diagonal elements of inverse mass matrix:");
            line(&format!("# {}", numbers(diagonal)));
        }
        AdaptedMetric::Dense(inverse) => {
            line("# Elements of inverse mass matrix:");
            let n = (inverse.len() as f64).sqrt().round() as usize;
            for row in inverse.chunks(n.max(1)) {
                line(&format!("# {}", numbers(row)));
            }
        }
        AdaptedMetric::NotWritten => line(&format!(
            "# Quasi-Newton inverse metric: not written above dimension {MAX_WRITTEN_METRIC_DIMENSION}"
        )),
    }
}

/// Seconds as CmdStan prints them (three decimals; a non-finite or negative
/// time, which a clock cannot give, as 0).
fn seconds(s: f64) -> String {
    format!("{:.3}", if s.is_finite() && s > 0.0 { s } else { 0.0 })
}

/// `text` with line breaks turned into spaces, so it stays one comment line.
fn one_line(text: &str) -> String {
    text.replace(['\r', '\n'], " ")
}

/// Stan's CSV column name of a quantity: `w[1]` → `w.1`, `a[2,3]` → `a.2.3`;
/// a name without brackets is unchanged. Commas and spaces elsewhere (which
/// would break the CSV header) become `_`.
///
/// ```
/// use qnmc_host::output::csv_column_name;
/// assert_eq!(csv_column_name("w[1]"), "w.1");
/// assert_eq!(csv_column_name("Sigma[2, 3]"), "Sigma.2.3");
/// assert_eq!(csv_column_name("tau"), "tau");
/// ```
pub fn csv_column_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_brackets = false;
    for c in name.chars() {
        match c {
            '[' => {
                in_brackets = true;
                out.push('.');
            }
            ']' => in_brackets = false,
            ',' if in_brackets => out.push('.'),
            ' ' if in_brackets => {}
            ',' | ' ' | '\t' | '\r' | '\n' | '"' => out.push('_'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draws::{ChainDraws, StepSizeOrigin};
    use crate::input::quantity_name;
    use crate::output::read_cmdstan_csv;

    fn tricky_run() -> RunDraws {
        let values = vec![
            0.1,
            -0.0,
            1.0 / 3.0,
            1e-300,
            6.02214076e23,
            f64::MAX,
            -5e-324,
            2.0_f64.sqrt(),
            f64::INFINITY,
        ];
        RunDraws {
            target: "gaussian".into(),
            sampler: "qnhmc".into(),
            settings: vec![
                ("warmup".into(), "500".into()),
                ("step_size".into(), "0.25".into()),
                ("note".into(), "two\nlines".into()),
            ],
            names: vec!["w[1]".into(), "w[2]".into(), "sigma".into()],
            chains: vec![
                ChainDraws {
                    chain_id: 3,
                    seed: 12345,
                    lp: vec![-1.0 / 7.0, -2.5, f64::NEG_INFINITY],
                    accept_stat: vec![0.123456789012345, 1.0, 0.0],
                    step_size: vec![0.25; 3],
                    n_leapfrog: vec![10, 10, 7],
                    divergent: vec![false, false, true],
                    values,
                    values_from_row: 0,
                    warmup_draws: 500,
                    warmup_seconds: 1.23456,
                    lp_seconds: 0.0,
                    sampling_seconds: 2.0,
                    gradient_evaluations: 5027,
                    tree_depth: Vec::new(),
                    energy: Vec::new(),
                    adapted_metric: None,
                    restart: None,
                    saved_warmup: Default::default(),
                    iterations: 503,
                    interrupted: false,
                },
                ChainDraws::default(),
            ],
            target_acceptance: None,
            max_tree_depth: None,
            step_size_origin: StepSizeOrigin::Given,
            metric: None,
            evaluation_failures: None,
            interrupted: None,
        }
    }

    #[test]
    fn header_comments_and_trailer_follow_cmdstan() {
        let text = cmdstan_csv(&tricky_run(), 0);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.contains(&"# model = gaussian"));
        assert!(lines.contains(&"#     num_samples = 3"));
        assert!(lines.contains(&"#     num_warmup = 500"));
        assert!(lines.contains(&"#     save_warmup = false"));
        assert!(lines.contains(&"#     algorithm = qnhmc"));
        assert!(lines.contains(&"# id = 3"));
        assert!(lines.contains(&"#   seed = 12345"));
        assert!(lines.contains(&"#   step_size = 0.25"));
        // A setting with a line break stays one comment line.
        assert!(lines.contains(&"#   note = two lines"));
        let header = lines.iter().position(|l| !l.starts_with('#')).unwrap();
        assert_eq!(
            lines[header],
            "lp__,accept_stat__,stepsize__,n_leapfrog__,divergent__,w.1,w.2,sigma"
        );
        assert_eq!(
            lines[header + 3],
            "-inf,0,0.25,7,1,-5e-324,1.4142135623730951,inf"
        );
        assert!(lines.contains(&"#  Elapsed Time: 1.235 seconds (Warm-up)"));
        assert!(lines.contains(&"#                2.000 seconds (Sampling)"));
        assert!(lines.contains(&"#                3.235 seconds (Total)"));
        // Every data line has as many fields as the header.
        for l in &lines[header + 1..header + 4] {
            assert_eq!(l.split(',').count(), 8, "{l}");
        }
    }

    /// A NUTS run's file has CmdStan's NUTS columns in CmdStan's order, and
    /// treedepth__ and energy__ read back as written.
    #[test]
    fn nuts_files_have_cmdstans_columns_in_cmdstans_order() {
        let mut run = tricky_run();
        run.sampler = "nuts".into();
        run.max_tree_depth = Some(10);
        run.chains[0].tree_depth = vec![3, 4, 0];
        run.chains[0].energy = vec![1.25, 2.5, f64::INFINITY];
        let text = cmdstan_csv(&run, 0);
        let lines: Vec<&str> = text.lines().collect();
        let header = lines.iter().position(|l| !l.starts_with('#')).unwrap();
        assert_eq!(
            lines[header],
            "lp__,accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,energy__,w.1,w.2,sigma"
        );
        assert_eq!(
            lines[header + 3],
            "-inf,0,0.25,0,7,1,inf,-5e-324,1.4142135623730951,inf"
        );
        let back = read_cmdstan_csv(&text).unwrap();
        assert_eq!(back.column("treedepth__").unwrap(), vec![3.0, 4.0, 0.0]);
        assert_eq!(
            back.column("energy__").unwrap(),
            vec![1.25, 2.5, f64::INFINITY]
        );
        // The chain without draws has the same header.
        let empty = read_cmdstan_csv(&cmdstan_csv(&run, 1)).unwrap();
        assert_eq!(empty.column_names, back.column_names);
        // Reassembled, the run keeps both statistics.
        let again = crate::output::run_draws_from_cmdstan(&[back]).unwrap();
        assert_eq!(again.chains[0].tree_depth, vec![3, 4, 0]);
        assert_eq!(again.chains[0].energy, run.chains[0].energy);
    }

    /// A sampler with a Hamiltonian but no tree (HMC) writes energy__, not
    /// treedepth__.
    #[test]
    fn hmc_files_have_energy_but_no_tree_depth() {
        let mut run = tricky_run();
        run.chains[0].energy = vec![1.0, 2.0, 3.0];
        let columns = sampler_columns(&run);
        assert_eq!(
            columns,
            [
                "lp__",
                "accept_stat__",
                "stepsize__",
                "n_leapfrog__",
                "divergent__",
                "energy__"
            ]
        );
    }

    #[test]
    fn the_warm_up_is_the_one_each_chain_ran() {
        let mut run = tricky_run();
        let lines = |run: &RunDraws, k: usize| -> Vec<String> {
            cmdstan_csv(run, k).lines().map(str::to_string).collect()
        };
        // A fixed step size: nothing adapted.
        assert!(lines(&run, 0).contains(&"#       engaged = false".to_string()));
        assert!(!lines(&run, 0).iter().any(|l| l.contains("delta")));
        // An adapted run whose chains ended their warm-ups at different
        // times (the setting asked for 500).
        run.step_size_origin = StepSizeOrigin::Adapted;
        run.target_acceptance = Some(0.8);
        run.chains[0].warmup_draws = 175;
        run.chains[1].warmup_draws = 250;
        for (k, warmup) in [(0, "175"), (1, "250")] {
            let text = lines(&run, k);
            assert!(
                text.contains(&format!("#     num_warmup = {warmup}")),
                "{text:?}"
            );
            assert!(
                text.contains(&"#       engaged = true".to_string()),
                "{text:?}"
            );
            assert!(
                text.contains(&"#       delta = 0.8".to_string()),
                "{text:?}"
            );
            let back = read_cmdstan_csv(&text.join("\n")).unwrap();
            assert_eq!(back.metadata("num_warmup"), Some(warmup));
        }
    }

    /// `--save-warmup`: the warm-up's rows come between the header and the
    /// adaptation block, the configuration says `save_warmup = true`, and a
    /// reader that follows CmdStan's count (ceil(num_warmup ÷ thin) rows)
    /// gets back exactly the kept draws.
    #[test]
    fn saved_warmup_rows_come_before_the_adaptation_block() {
        use crate::draws::{AdaptedMetric, WarmupDraws};
        let mut run = tricky_run();
        run.settings.push(("thin".into(), "2".into()));
        let chain = &mut run.chains[0];
        chain.warmup_draws = 3;
        chain.adapted_metric = Some(AdaptedMetric::Diagonal(vec![1.0, 2.0, 3.0]));
        chain.saved_warmup = WarmupDraws {
            lp: vec![-40.0, -3.5],
            accept_stat: vec![0.0, 0.5],
            step_size: vec![1.0, 0.0625],
            n_leapfrog: vec![3, 31],
            divergent: vec![true, false],
            tree_depth: Vec::new(),
            energy: Vec::new(),
            values: vec![9.0, 8.0, 7.0, 0.5, 0.25, 0.125],
        };
        let text = cmdstan_csv(&run, 0);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.contains(&"#     save_warmup = true"), "{text}");
        let header = lines.iter().position(|l| !l.starts_with('#')).unwrap();
        assert_eq!(lines[header + 1], "-40,0,1,3,1,9,8,7");
        assert_eq!(lines[header + 2], "-3.5,0.5,0.0625,31,0,0.5,0.25,0.125");
        assert_eq!(lines[header + 3], "# Adaptation terminated");
        let back = read_cmdstan_csv(&text).unwrap();
        assert_eq!(back.rows(), 5);
        assert_eq!(back.warmup_rows(), 2);
        let again = crate::output::run_draws_from_cmdstan(&[back]).unwrap();
        let kept = &again.chains[0];
        assert_eq!(kept.len(), 3);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&kept.lp), bits(&run.chains[0].lp));
        assert_eq!(bits(&kept.values), bits(&run.chains[0].values));
        // Without saved rows the file says so and nothing is skipped.
        let plain = read_cmdstan_csv(&cmdstan_csv(&tricky_run(), 0)).unwrap();
        assert_eq!(plain.metadata("save_warmup"), Some("false"));
        assert_eq!(plain.warmup_rows(), 0);
    }

    #[test]
    fn draws_read_back_bit_for_bit() {
        let run = tricky_run();
        let back = read_cmdstan_csv(&cmdstan_csv(&run, 0)).unwrap();
        assert_eq!(back.rows(), 3);
        let chain = &run.chains[0];
        let expect = |name: &str, want: &[f64]| {
            let got = back.column(name).unwrap();
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(want) {
                assert_eq!(g.to_bits(), w.to_bits(), "{name}: {g:e} vs {w:e}");
            }
        };
        expect("lp__", &chain.lp);
        expect("accept_stat__", &chain.accept_stat);
        expect("stepsize__", &chain.step_size);
        for (j, name) in run.names.iter().enumerate() {
            expect(&csv_column_name(name), &chain.column(j, 3));
        }
        assert_eq!(back.column("divergent__").unwrap(), vec![0.0, 0.0, 1.0]);
        assert_eq!(back.column("n_leapfrog__").unwrap(), vec![10.0, 10.0, 7.0]);
        assert_eq!(back.metadata("seed"), Some("12345"));
        assert_eq!(back.elapsed_seconds(), Some((1.235, 2.0)));
    }

    #[test]
    fn an_empty_chain_still_has_a_header() {
        let run = tricky_run();
        let back = read_cmdstan_csv(&cmdstan_csv(&run, 1)).unwrap();
        assert_eq!(back.rows(), 0);
        assert_eq!(back.column_names.len(), 8);
    }

    #[test]
    fn names_convert_both_ways() {
        for name in ["w[1]", "beta[12]", "a[2,3]", "tau", "lp__"] {
            assert_eq!(quantity_name(&csv_column_name(name)), name);
        }
        assert_eq!(csv_column_name("bad,name"), "bad_name");
    }
}
