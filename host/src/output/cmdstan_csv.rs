//! Draws as CmdStan CSV files, one per chain, so Stan's tools (`stansummary`,
//! ArviZ's `from_cmdstan`, CmdStanPy, `posterior::read_cmdstan_csv`) read
//! qnmc's output like a CmdStan run.
//!
//! The layout is described at [`cmdstan_csv`];
//! [`read_cmdstan_csv`](super::read_cmdstan_csv) reads such a file (or any CmdStan file) back.

use std::fmt::Write as _;

use super::float_text;
use crate::draws::RunDraws;

/// The sampler columns qnmc writes before the quantities, in order.
pub const SAMPLER_COLUMNS: [&str; 5] = [
    "lp__",
    "accept_stat__",
    "stepsize__",
    "n_leapfrog__",
    "divergent__",
];

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
///    false (only kept draws are written);
/// 2. the header line: the sampler columns `lp__`, `accept_stat__`,
///    `stepsize__`, `n_leapfrog__`, `divergent__`, then the quantities with
///    Stan's CSV names (`w.1` for `w[1]`, `a.2.3` for `a[2,3]`).
///    CmdStan's NUTS also writes `treedepth__` and `energy__`; qnmc's samplers
///    build no tree and do not record the Hamiltonian, so those columns are
///    left out rather than filled with made-up numbers (CmdStan's own static
///    HMC and fixed-parameter outputs omit columns the same way; readers take
///    every column ending in `__` as a sampler statistic);
/// 3. one line per kept draw, each number in its shortest text that reads
///    back to the same `f64` (see [`float_text`]);
/// 4. the `Elapsed Time` trailer with warm-up, sampling and total seconds.
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
///         values: vec![0.5, 2.0, -0.125, 3.0],
///         ..ChainDraws::default()
///     }],
///     ..RunDraws::default()
/// };
/// let text = cmdstan_csv(&run, 0);
/// assert!(text.contains("\nlp__,accept_stat__,stepsize__,n_leapfrog__,divergent__,w.1,sigma\n"));
/// assert!(text.contains("\n-0.25,1,0.1,10,1,-0.125,3\n"));
/// let back = read_cmdstan_csv(&text).unwrap();
/// assert_eq!(back.column("w.1").unwrap(), vec![0.5, -0.125]);
/// ```
pub fn cmdstan_csv(run: &RunDraws, chain_index: usize) -> String {
    let chain = &run.chains[chain_index];
    let setting = |keys: &[&str]| {
        run.settings
            .iter()
            .find(|(k, _)| keys.contains(&k.as_str()))
            .map(|(_, v)| one_line(v))
    };
    let thin = setting(&["thin"])
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1);

    let mut out = String::new();
    let mut line = |text: &str| {
        out.push_str(text);
        out.push('\n');
    };
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
    line(&format!("#     num_samples = {}", chain.len()));
    line(&format!("#     num_warmup = {}", chain.warmup_draws));
    line("#     save_warmup = false");
    line(&format!("#     thin = {thin}"));
    line("#     adapt");
    let adapted = run.step_size_origin.adapted();
    line(&format!("#       engaged = {adapted}"));
    if let Some(delta) = run.target_acceptance.filter(|_| adapted) {
        line(&format!("#       delta = {delta}"));
    }
    line(&format!("#     algorithm = {}", one_line(&run.sampler)));
    line(&format!("#     num_chains = {}", run.chains.len()));
    line(&format!("# id = {}", chain.chain_id));
    line("# random");
    line(&format!("#   seed = {}", chain.seed));
    line("# output");
    line("#   sig_figs = -1 (Default)");
    line("# qnmc");
    line(&format!("#   target = {}", one_line(&run.target)));
    line(&format!("#   sampler = {}", one_line(&run.sampler)));
    for (key, value) in &run.settings {
        line(&format!("#   {} = {}", one_line(key), one_line(value)));
    }

    let mut header: Vec<String> = SAMPLER_COLUMNS.iter().map(|c| c.to_string()).collect();
    header.extend(run.names.iter().map(|n| csv_column_name(n)));
    line(&header.join(","));

    let quantities = run.names.len();
    let mut row = String::new();
    for i in 0..chain.len() {
        row.clear();
        let stat = |v: Option<&f64>| float_text(v.copied().unwrap_or(f64::NAN));
        let _ = write!(
            row,
            "{},{},{},{},{}",
            stat(chain.lp.get(i)),
            stat(chain.accept_stat.get(i)),
            stat(chain.step_size.get(i)),
            chain.n_leapfrog.get(i).copied().unwrap_or(0),
            u8::from(chain.divergent.get(i).copied().unwrap_or(false)),
        );
        for j in 0..quantities {
            row.push(',');
            row.push_str(&float_text(
                chain
                    .values
                    .get(i * quantities + j)
                    .copied()
                    .unwrap_or(f64::NAN),
            ));
        }
        line(&row);
    }

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
    out
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

/// The quantity name of a Stan CSV column: `w.1` → `w[1]`, `a.2.3` →
/// `a[2,3]`; a column whose dotted parts are not all numbers is unchanged.
///
/// ```
/// use qnmc_host::output::quantity_name;
/// assert_eq!(quantity_name("w.1"), "w[1]");
/// assert_eq!(quantity_name("a.2.3"), "a[2,3]");
/// assert_eq!(quantity_name("lp__"), "lp__");
/// assert_eq!(quantity_name("x.y"), "x.y");
/// ```
pub fn quantity_name(column: &str) -> String {
    match column.split_once('.') {
        Some((base, indices))
            if !base.is_empty()
                && indices
                    .split('.')
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) =>
        {
            format!("{base}[{}]", indices.replace('.', ","))
        }
        _ => column.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draws::{ChainDraws, StepSizeOrigin};
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
                    warmup_draws: 500,
                    warmup_seconds: 1.23456,
                    lp_seconds: 0.0,
                    sampling_seconds: 2.0,
                    gradient_evaluations: 5027,
                    tree_depth: Vec::new(),
                    energy: Vec::new(),
                    restart: None,
                },
                ChainDraws::default(),
            ],
            target_acceptance: None,
            max_tree_depth: None,
            step_size_origin: StepSizeOrigin::Given,
            metric: None,
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
