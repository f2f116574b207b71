//! The run's summary as a plain-text table for the terminal, laid out like
//! CmdStan's `stansummary`.

use std::fmt::Write as _;

use super::run_summary::{RunSummary, summarize_run};
use crate::diagnostics::Summary;
use crate::draws::RunDraws;
use crate::model::KnownPosterior;
use crate::run::{LP_AUTO_MAX_DATA, sampler_label};

/// A `stansummary`-like table: one row for `lp__` and one per quantity with
/// mean, MCSE, sd, 5/50/95% quantiles, bulk and tail ESS and R̂; with `known`,
/// also the true mean and sd and the z-scores of the estimates. Below it, one
/// line per chain (acceptance, divergences, step size, gradients, times) and
/// the efficiency of the slowest quantity.
///
/// ```
/// use qnmc_host::draws::{ChainDraws, RunDraws};
/// use qnmc_host::output::summary_table;
///
/// let run = RunDraws {
///     target: "demo".into(),
///     sampler: "hmc".into(),
///     names: vec!["w[1]".into()],
///     chains: vec![ChainDraws {
///         chain_id: 1,
///         lp: vec![0.0; 3],
///         values: vec![1.0, 2.0, 3.0],
///         ..ChainDraws::default()
///     }],
///     ..RunDraws::default()
/// };
/// let table = summary_table(&run, None);
/// assert!(table.contains("ESS_bulk"));
/// assert!(table.lines().any(|l| l.starts_with("w[1]")));
/// ```
pub fn summary_table(run: &RunDraws, known: Option<&KnownPosterior>) -> String {
    summary_table_with(run, known, &summarize_run(run, known))
}

/// [`summary_table`] from the run's already computed `summary`, which must be
/// [`summarize_run`]`(run, known)`: the same text without computing the
/// diagnostics again.
pub fn summary_table_with(
    run: &RunDraws,
    known: Option<&KnownPosterior>,
    summary: &RunSummary,
) -> String {
    let with_truth = summary.quantities.iter().any(|q| q.truth.is_some());
    let name_width = summary
        .quantities
        .iter()
        .map(|q| q.name.chars().count())
        .chain([4])
        .max()
        .unwrap_or(4)
        + 2;

    let mut out = String::new();
    let draws: Vec<usize> = run.chains.iter().map(|c| c.len()).collect();
    let _ = writeln!(
        out,
        "target {}, sampler {}: {} chain{}, {} draws{}",
        run.target,
        sampler_label(&run.sampler, run.metric),
        run.chains.len(),
        if run.chains.len() == 1 { "" } else { "s" },
        draws.iter().sum::<usize>(),
        if draws.windows(2).all(|w| w[0] == w[1]) && !draws.is_empty() {
            format!(" ({} per chain)", draws[0])
        } else {
            String::new()
        }
    );
    if let Some(k) = known {
        let _ = writeln!(out, "known posterior: {}", k.source);
    }
    let _ = writeln!(out);

    let mut header = format!("{:name_width$}", "");
    for title in [
        "Mean", "MCSE", "StdDev", "5%", "50%", "95%", "ESS_bulk", "ESS_tail", "R_hat",
    ] {
        let _ = write!(header, "{title:>10}");
    }
    if with_truth {
        for title in ["True_mean", "z_mean", "True_sd", "z_sd"] {
            let _ = write!(header, "{title:>10}");
        }
    }
    let _ = writeln!(out, "{}", header.trim_end());
    let _ = writeln!(out);

    let kept: usize = draws.iter().sum();
    let _ = writeln!(out, "{}", lp_row(summary, kept, name_width));
    for q in &summary.quantities {
        let mut line = row(&q.name, &q.stats, name_width);
        if let Some(t) = &q.truth {
            for v in [t.mean, t.z_mean, t.sd, t.z_sd] {
                let _ = write!(line, "{:>10}", significant(v));
            }
        }
        let _ = writeln!(out, "{line}");
    }

    let _ = writeln!(out);
    write_chain_lines(&mut out, summary);
    if summary.lp_computed > 0 && summary.lp_computed < kept {
        let _ = writeln!(
            out,
            "lp__ is summarised over the {} of {kept} kept draws it was computed for (--lp every N)",
            summary.lp_computed
        );
    }
    match summary.slowest {
        Some(j) => {
            let _ = writeln!(
                out,
                "slowest quantity {}: bulk ESS {:.0}, {} ESS per second, {} ESS per gradient",
                summary.quantities[j].name,
                summary.min_ess_bulk,
                significant(summary.ess_per_second),
                significant(summary.ess_per_gradient)
            );
        }
        None => {
            let _ = writeln!(
                out,
                "no quantity has a finite bulk ESS {}",
                no_ess_reason(summary)
            );
        }
    }
    out
}

/// One line per chain: acceptance, divergences, step size, gradients and
/// the warm-up's and sampling's wall times.
fn write_chain_lines(out: &mut String, summary: &RunSummary) {
    for c in &summary.chains {
        let lp = if c.lp_seconds > 0.0 {
            format!(" (+ {:.3} s for lp__, not counted)", c.lp_seconds)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "chain {}: acceptance {}, {} divergent, step size {}, {} gradients, \
             {:.3} s warm-up ({} draws) + {:.3} s sampling{lp}",
            c.chain_id,
            significant(c.acceptance_mean),
            c.divergences,
            significant(c.step_size_mean),
            c.gradient_evaluations,
            c.warmup_seconds,
            c.warmup_draws,
            c.sampling_seconds
        );
    }
}

/// The `lp__` row: its statistics, or why there are none when no draw has
/// `lp__` (a minibatch sampler under `--lp none`).
fn lp_row(summary: &RunSummary, kept: usize, name_width: usize) -> String {
    if summary.lp_computed == 0 && kept > 0 {
        format!(
            "{:name_width$}not computed (--lp none, the default above {LP_AUTO_MAX_DATA} data \
             points: each costs a full-data pass; --lp every N computes some)",
            "lp__"
        )
    } else {
        row("lp__", &summary.lp, name_width)
    }
}

/// Why no quantity has a finite bulk ESS, in parentheses.
fn no_ess_reason(summary: &RunSummary) -> String {
    let stuck = summary.chains.iter().filter(|c| c.rows.never_moved).count();
    if stuck > 0 && stuck == summary.chains.len() {
        "(the chains did not move: each kept one draw throughout)".into()
    } else if stuck > 0 {
        format!("({stuck} of {} chains did not move)", summary.chains.len())
    } else {
        "(too few draws?)".into()
    }
}

fn row(name: &str, s: &Summary, name_width: usize) -> String {
    let mut line = format!("{name:name_width$}");
    for v in [s.mean, s.mcse_mean, s.sd, s.q5, s.q50, s.q95] {
        let _ = write!(line, "{:>10}", significant(v));
    }
    for v in [s.ess_bulk, s.ess_tail] {
        let text = if v.is_finite() {
            format!("{v:.0}")
        } else {
            "nan".into()
        };
        let _ = write!(line, "{text:>10}");
    }
    let rhat = if s.rhat.is_finite() {
        format!("{:.3}", s.rhat)
    } else {
        "nan".into()
    };
    let _ = write!(line, "{rhat:>10}");
    line
}

/// About four significant digits in at most nine characters.
fn significant(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}").to_lowercase();
    }
    let magnitude = x.abs();
    if magnitude == 0.0 {
        "0".into()
    } else if !(1e-3..1e6).contains(&magnitude) {
        format!("{x:.2e}")
    } else {
        let digits = (3 - magnitude.log10().floor() as i32).clamp(0, 6) as usize;
        format!("{x:.digits$}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::test_runs::{gaussian_run, known_standard_normal};

    #[test]
    fn rows_columns_and_chain_lines() {
        let run = gaussian_run(2, 300, 2, 4);
        let table = summary_table(&run, Some(&known_standard_normal(2)));
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[0].contains("2 chains, 600 draws (300 per chain)"),
            "{table}"
        );
        let header = lines.iter().find(|l| l.contains("ESS_bulk")).unwrap();
        assert!(
            header.contains("True_mean") && header.contains("z_sd"),
            "{header}"
        );
        let x1 = lines.iter().find(|l| l.starts_with("x[1]")).unwrap();
        // name + 9 statistics + 4 truth columns.
        assert_eq!(x1.split_whitespace().count(), 14, "{x1}");
        let chains = run.chains_of(0);
        let slices: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
        let s = crate::diagnostics::summarize(&slices);
        let printed_ess: f64 = x1.split_whitespace().nth(7).unwrap().parse().unwrap();
        assert_eq!(printed_ess, s.ess_bulk.round());
        assert!(lines.iter().any(|l| l.starts_with("lp__")));
        assert!(
            table.contains("chain 1: acceptance 0.9000, 1 divergent"),
            "{table}"
        );
        assert!(table.contains("slowest quantity x["), "{table}");
    }

    #[test]
    fn significant_digits() {
        assert_eq!(significant(1234.5678), "1235");
        assert_eq!(significant(0.0123456), "0.01235");
        assert_eq!(significant(-2.5), "-2.500");
        assert_eq!(significant(1.5e7), "1.50e7");
        assert_eq!(significant(f64::NAN), "nan");
        assert_eq!(significant(f64::NEG_INFINITY), "-inf");
    }
}
