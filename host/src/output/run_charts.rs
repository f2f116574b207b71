//! The charts that describe a run: trace, autocorrelation, marginal density
//! and rank histogram of each plotted quantity, `lp__` included.

use std::collections::HashSet;

use super::run_summary::RunSummary;
use crate::chart::{Chart, Scale, Series, SeriesStyle};
use crate::diagnostics::{autocorrelation, available_threads, ess_bulk, parallel_map};
use crate::draws::RunDraws;
use crate::model::KnownPosterior;

/// Largest lag of the autocorrelation charts.
pub const MAX_LAG: usize = 50;

/// Most points per chain a trace chart draws; longer chains are thinned
/// evenly (every k-th draw) so the SVG stays small.
pub const MAX_TRACE_POINTS: usize = 2000;

/// How many quantities `--plot slowest` plots (the slowest-mixing ones),
/// what `qnmc plot` draws by default.
pub const DEFAULT_PLOTTED: usize = 4;

/// The name the log density is plotted under, as in CmdStan's CSV files.
pub const LP_NAME: &str = "lp__";

/// Which quantities get charts (`qnmc run --plot`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlotSelection {
    /// No charts (`--plot none`).
    None,
    /// The `n` quantities with the smallest bulk ESS (the slowest mixing,
    /// slowest first; a quantity whose ESS cannot be computed, e.g. a chain
    /// that never moved, counts as slowest), then `lp__` (the default, with
    /// [`DEFAULT_PLOTTED`]: `--plot slowest`, and what `qnmc plot` draws
    /// unless told).
    Slowest(usize),
    /// Every quantity, then `lp__` (`--plot all`).
    All,
    /// These quantities, by name (`lp__` for the log density), in this order.
    Names(Vec<String>),
}

impl Default for PlotSelection {
    fn default() -> Self {
        PlotSelection::Slowest(DEFAULT_PLOTTED)
    }
}

impl PlotSelection {
    /// The selection the words of `--plot` ask for: `slowest` (the
    /// default), `all`, `none`, or names (duplicates dropped). No words: the
    /// default.
    pub fn from_words(words: &[String]) -> Self {
        match words {
            [] => PlotSelection::default(),
            [w] if w == "slowest" => PlotSelection::default(),
            [w] if w == "all" => PlotSelection::All,
            [w] if w == "none" => PlotSelection::None,
            _ => {
                let mut names: Vec<String> = Vec::new();
                for w in words {
                    if !names.contains(w) {
                        names.push(w.clone());
                    }
                }
                PlotSelection::Names(names)
            }
        }
    }

    /// Checks that every name of a [`Names`](Self::Names) selection is one of
    /// `quantities` or `lp__`; the error lists the names that exist.
    pub fn validate(&self, quantities: &[String]) -> Result<(), String> {
        let PlotSelection::Names(names) = self else {
            return Ok(());
        };
        for name in names {
            if name != LP_NAME && !quantities.contains(name) {
                return Err(format!(
                    "--plot: no quantity named `{name}`; the quantities are {}, {LP_NAME} \
                     (or `slowest`, `all`, `none`)",
                    quantities.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// What to plot for `run`, in order; `summary`, when given, is
    /// [`summarize_run`](super::summarize_run) of `run`, whose bulk ESS are
    /// then not computed again.
    fn resolve(&self, run: &RunDraws, summary: Option<&RunSummary>) -> Vec<Plotted> {
        let lp_drawn = run
            .chains
            .iter()
            .any(|c| c.lp.iter().any(|v| v.is_finite()));
        let with_lp = |mut v: Vec<Plotted>| {
            if lp_drawn {
                v.push(Plotted::Lp);
            }
            v
        };
        match self {
            PlotSelection::None => Vec::new(),
            PlotSelection::All => with_lp((0..run.names.len()).map(Plotted::Quantity).collect()),
            PlotSelection::Slowest(n) => {
                let ess: Vec<f64> = match summary {
                    Some(s) => s.quantities.iter().map(|q| q.stats.ess_bulk).collect(),
                    None => parallel_map(run.names.len(), available_threads(), |j| {
                        let chains = run.chains_of(j);
                        let slices: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
                        ess_bulk(&slices)
                    }),
                };
                let mut by_ess: Vec<(usize, f64)> = ess
                    .into_iter()
                    .map(|e| if e.is_nan() { f64::NEG_INFINITY } else { e })
                    .enumerate()
                    .collect();
                by_ess.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
                with_lp(
                    by_ess
                        .into_iter()
                        .take(*n)
                        .map(|(j, _)| Plotted::Quantity(j))
                        .collect(),
                )
            }
            PlotSelection::Names(names) => names
                .iter()
                .filter_map(|name| {
                    if name == LP_NAME {
                        Some(Plotted::Lp)
                    } else {
                        run.names
                            .iter()
                            .position(|n| n == name)
                            .map(Plotted::Quantity)
                    }
                })
                .collect(),
        }
    }
}

/// One plotted quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plotted {
    Quantity(usize),
    Lp,
}

/// Four charts for each quantity `selection` picks (see [`PlotSelection`]):
///
/// * `trace_<name>`: the draws against their index, one line per chain;
/// * `autocorrelation_<name>`: [`autocorrelation`] at lags 0..=[`MAX_LAG`],
///   one line per chain;
/// * `density_<name>`: a histogram of all chains' draws, scaled to a
///   density, and, when `known` says the marginals are Gaussian, the true
///   N(mean, sd²) density as a dashed line;
/// * `rank_<name>`: the rank plot of Vehtari et al. (2021): every draw ranked
///   among all chains' draws, one histogram of ranks per chain (a line through
///   the bin counts) and the count every bin has on average when the chains
///   mix (dashed). Chains that sample the same distribution give flat lines.
///
/// `lp__` gets the same four charts (without a true density).
/// File stems use the name with every character other than letters, digits,
/// `-` and `_` replaced by `_` (`w[1]` → `trace_w_1`, `lp__` → `trace_lp`).
///
/// ```
/// use qnmc_host::draws::{ChainDraws, RunDraws};
/// use qnmc_host::output::{PlotSelection, run_charts};
///
/// let run = RunDraws {
///     names: vec!["w[1]".into(), "w[2]".into()],
///     chains: vec![ChainDraws {
///         lp: vec![0.0; 3],
///         values: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
///         ..ChainDraws::default()
///     }],
///     ..RunDraws::default()
/// };
/// let charts = run_charts(&run, None, &PlotSelection::Names(vec!["w[2]".into()]));
/// let stems: Vec<&str> = charts.iter().map(|c| c.file_stem.as_str()).collect();
/// assert_eq!(stems, ["trace_w_2", "autocorrelation_w_2", "density_w_2", "rank_w_2"]);
/// ```
pub fn run_charts(
    run: &RunDraws,
    known: Option<&KnownPosterior>,
    selection: &PlotSelection,
) -> Vec<Chart> {
    charts_of(run, known, selection, None)
}

/// [`run_charts`] given the run's `summary` ([`summarize_run`](super::summarize_run)
/// of `run`), so that [`PlotSelection::Slowest`] takes its bulk ESS from it.
pub(crate) fn run_charts_summarized(
    run: &RunDraws,
    known: Option<&KnownPosterior>,
    selection: &PlotSelection,
    summary: &RunSummary,
) -> Vec<Chart> {
    charts_of(run, known, selection, Some(summary))
}

fn charts_of(
    run: &RunDraws,
    known: Option<&KnownPosterior>,
    selection: &PlotSelection,
    summary: Option<&RunSummary>,
) -> Vec<Chart> {
    let mut charts = Vec::new();
    let mut stems = HashSet::new();
    for plotted in selection.resolve(run, summary) {
        let (name, chains, truth) = match plotted {
            Plotted::Quantity(j) => {
                let truth = known
                    .filter(|k| k.gaussian_marginals)
                    .and_then(|k| Some((*k.mean.get(j)?, *k.sd.get(j)?)));
                (run.names[j].as_str(), run.chains_of(j), truth)
            }
            Plotted::Lp => (
                LP_NAME,
                run.chains.iter().map(|c| c.lp.clone()).collect(),
                None,
            ),
        };
        let mut stem = file_safe(name);
        if !stems.insert(stem.clone()) {
            let mut k = 2;
            while !stems.insert(format!("{stem}_{k}")) {
                k += 1;
            }
            stem = format!("{stem}_{k}");
        }
        charts.push(trace_chart(name, &stem, &chains, run));
        charts.push(autocorrelation_chart(name, &stem, &chains, run));
        charts.push(density_chart(name, &stem, &chains, truth));
        charts.push(rank_chart(name, &stem, &chains, run));
    }
    charts
}

fn chain_label(run: &RunDraws, k: usize) -> String {
    let id = run.chains.get(k).map_or(k + 1, |c| c.chain_id);
    format!("chain {id}")
}

fn trace_chart(name: &str, stem: &str, chains: &[Vec<f64>], run: &RunDraws) -> Chart {
    let series = chains
        .iter()
        .enumerate()
        .map(|(k, draws)| {
            let every = draws.len().div_ceil(MAX_TRACE_POINTS).max(1);
            Series {
                label: chain_label(run, k),
                points: draws
                    .iter()
                    .enumerate()
                    .step_by(every)
                    .map(|(i, &v)| ((i + 1) as f64, v))
                    .collect(),
                style: SeriesStyle::Line,
            }
        })
        .collect();
    Chart {
        file_stem: format!("trace_{stem}"),
        title: format!("Trace of {name} ({} on {})", run.sampler, run.target),
        x_label: "draw".into(),
        y_label: name.into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series,
        categories: Vec::new(),
    }
}

fn autocorrelation_chart(name: &str, stem: &str, chains: &[Vec<f64>], run: &RunDraws) -> Chart {
    let series = chains
        .iter()
        .enumerate()
        .map(|(k, draws)| {
            let max_lag = MAX_LAG.min(draws.len().saturating_sub(1));
            Series {
                label: chain_label(run, k),
                points: autocorrelation(draws, max_lag)
                    .into_iter()
                    .enumerate()
                    .map(|(lag, r)| (lag as f64, r))
                    .collect(),
                style: SeriesStyle::Line,
            }
        })
        .collect();
    Chart {
        file_stem: format!("autocorrelation_{stem}"),
        title: format!("Autocorrelation of {name} ({})", run.sampler),
        x_label: "lag".into(),
        y_label: "autocorrelation".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series,
        categories: Vec::new(),
    }
}

fn density_chart(name: &str, stem: &str, chains: &[Vec<f64>], truth: Option<(f64, f64)>) -> Chart {
    let draws: Vec<f64> = chains
        .iter()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let mut series = vec![Series {
        label: "draws".into(),
        points: histogram_density(&draws),
        style: SeriesStyle::Bars,
    }];
    if let Some((mean, sd)) = truth.filter(|(m, s)| m.is_finite() && *s > 0.0) {
        let (lo, hi) = draws
            .iter()
            .fold((mean - 4.0 * sd, mean + 4.0 * sd), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        let points = (0..=200)
            .map(|i| {
                let x = lo + (hi - lo) * i as f64 / 200.0;
                let z = (x - mean) / sd;
                (
                    x,
                    (-0.5 * z * z).exp() / (sd * (std::f64::consts::TAU).sqrt()),
                )
            })
            .collect();
        series.push(Series {
            label: format!("true N({mean:.3}, {sd:.3}²)"),
            points,
            style: SeriesStyle::Dashed,
        });
    }
    Chart {
        file_stem: format!("density_{stem}"),
        title: format!("Marginal density of {name}"),
        x_label: name.into(),
        y_label: "density".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series,
        categories: Vec::new(),
    }
}

/// Number of rank bins of a rank chart with `per_chain` draws in each chain:
/// 20, fewer for short chains (about 5 draws per bin at least).
fn rank_bins(per_chain: usize) -> usize {
    (per_chain / 5).clamp(1, 20)
}

fn rank_chart(name: &str, stem: &str, chains: &[Vec<f64>], run: &RunDraws) -> Chart {
    // Rank every draw among all draws (ties by chain and position, which
    // keeps ranks distinct); non-finite draws are left out.
    let mut pooled: Vec<(f64, usize)> = chains
        .iter()
        .enumerate()
        .flat_map(|(k, c)| c.iter().filter(|v| v.is_finite()).map(move |&v| (v, k)))
        .collect();
    pooled.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total = pooled.len();
    let per_chain = chains.iter().map(Vec::len).max().unwrap_or(0);
    let bins = rank_bins(per_chain);
    let mut counts = vec![vec![0usize; bins]; chains.len()];
    for (rank, &(_, k)) in pooled.iter().enumerate() {
        let b = (rank * bins / total.max(1)).min(bins - 1);
        counts[k][b] += 1;
    }
    let centre = |b: usize| (b as f64 + 0.5) * total as f64 / bins as f64;
    let mut series: Vec<Series> = counts
        .iter()
        .enumerate()
        .map(|(k, c)| Series {
            label: chain_label(run, k),
            points: c
                .iter()
                .enumerate()
                .map(|(b, &n)| (centre(b), n as f64))
                .collect(),
            style: SeriesStyle::Line,
        })
        .collect();
    if total > 0 && !chains.is_empty() {
        let expected = total as f64 / chains.len() as f64 / bins as f64;
        series.push(Series {
            label: "uniform (chains agree)".into(),
            points: vec![(0.0, expected), (total as f64, expected)],
            style: SeriesStyle::Dashed,
        });
    }
    Chart {
        file_stem: format!("rank_{stem}"),
        title: format!("Rank plot of {name} ({}): {bins} bins", run.sampler),
        x_label: "rank among all chains' draws".into(),
        y_label: "draws per bin".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series,
        categories: Vec::new(),
    }
}

/// Histogram of `draws` as (bin centre, density) with Rice's rule for the
/// number of bins (2·n^⅓, between 10 and 60); the bars' areas sum to 1.
fn histogram_density(draws: &[f64]) -> Vec<(f64, f64)> {
    let n = draws.len();
    if n == 0 {
        return Vec::new();
    }
    let lo = draws.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = draws.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if hi <= lo {
        // All draws equal: one bar of unit width and height.
        return vec![(lo, 1.0)];
    }
    let bins = ((2.0 * (n as f64).cbrt()).ceil() as usize).clamp(10, 60);
    let width = (hi - lo) / bins as f64;
    let mut counts = vec![0usize; bins];
    for &v in draws {
        let b = (((v - lo) / width) as usize).min(bins - 1);
        counts[b] += 1;
    }
    counts
        .iter()
        .enumerate()
        .map(|(b, &c)| (lo + (b as f64 + 0.5) * width, c as f64 / (n as f64 * width)))
        .collect()
}

/// `name` with everything but ASCII letters, digits, `-` and `_` turned into
/// `_`, runs of `_` collapsed and trailing ones dropped (`w[1]` → `w_1`).
fn file_safe(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    }
    let out = out.trim_end_matches('_').to_string();
    if out.is_empty() {
        "quantity".into()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::test_runs::{gaussian_run, known_standard_normal};

    #[test]
    fn four_charts_per_quantity_with_one_series_per_chain() {
        let run = gaussian_run(3, 400, 4, 5);
        let first_two = PlotSelection::Names(vec!["x[1]".into(), "x[2]".into()]);
        let charts = run_charts(&run, Some(&known_standard_normal(4)), &first_two);
        assert_eq!(charts.len(), 8);
        let trace = &charts[0];
        assert_eq!(trace.file_stem, "trace_x_1");
        assert_eq!(trace.series.len(), 3);
        assert_eq!(trace.series[1].points[4], (5.0, run.chains_of(0)[1][4]));
        let acf = &charts[1];
        assert_eq!(acf.series[0].points.len(), MAX_LAG + 1);
        assert_eq!(acf.series[0].points[0], (0.0, 1.0));
        let density = &charts[2];
        assert_eq!(density.series.len(), 2);
        assert_eq!(density.series[1].style, SeriesStyle::Dashed);
        // The true density peaks at 1/√(2π) at the mean.
        let peak = density.series[1]
            .points
            .iter()
            .map(|p| p.1)
            .fold(0.0, f64::max);
        assert!(
            (peak - 1.0 / std::f64::consts::TAU.sqrt()).abs() < 1e-3,
            "{peak}"
        );
        // Without a known posterior there is no dashed line.
        assert_eq!(run_charts(&run, None, &first_two)[2].series.len(), 1);
    }

    #[test]
    fn the_default_plots_the_slowest_mixing_quantities_and_lp() {
        // x[3] of every chain becomes a slow random walk, x[5] is frozen in
        // chain 2: by bulk ESS they are the slowest two, x[5] (no ESS) first.
        let mut run = gaussian_run(4, 400, 6, 3);
        for (c, chain) in run.chains.iter_mut().enumerate() {
            let mut walk = 0.0;
            for i in 0..400 {
                walk += 0.05 * chain.values[i * 6 + 2];
                chain.values[i * 6 + 2] = walk;
                if c == 1 {
                    chain.values[i * 6 + 4] = 1.0;
                }
            }
        }
        let stems_of = |run: &RunDraws, sel: &PlotSelection| -> Vec<String> {
            run_charts(run, None, sel)
                .into_iter()
                .filter(|c| c.file_stem.starts_with("trace_"))
                .map(|c| c.file_stem)
                .collect()
        };
        let stems = |sel: &PlotSelection| stems_of(&run, sel);
        assert_eq!(
            stems(&PlotSelection::Slowest(2)),
            ["trace_x_5", "trace_x_3", "trace_lp"]
        );
        assert_eq!(stems(&PlotSelection::default()).len(), DEFAULT_PLOTTED + 1);
        assert_eq!(stems(&PlotSelection::All).len(), 7);
        assert!(stems(&PlotSelection::None).is_empty());
        let chosen = PlotSelection::from_words(&["lp__".into(), "x[6]".into(), "lp__".into()]);
        assert_eq!(stems(&chosen), ["trace_lp", "trace_x_6"]);
        // Without a finite lp__ (not computed) there is no lp__ chart.
        for chain in &mut run.chains {
            chain.lp.iter_mut().for_each(|v| *v = f64::NAN);
        }
        assert_eq!(stems_of(&run, &PlotSelection::Slowest(1)), ["trace_x_5"]);
    }

    #[test]
    fn plot_words_and_names_are_checked() {
        assert_eq!(PlotSelection::from_words(&[]), PlotSelection::default());
        assert_eq!(
            PlotSelection::from_words(&["all".into()]),
            PlotSelection::All
        );
        assert_eq!(
            PlotSelection::from_words(&["none".into()]),
            PlotSelection::None
        );
        assert_eq!(
            PlotSelection::from_words(&["slowest".into()]),
            PlotSelection::Slowest(DEFAULT_PLOTTED)
        );
        let names: Vec<String> = vec!["a".into(), "b".into()];
        let sel = PlotSelection::from_words(&["b".into(), "lp__".into()]);
        assert!(sel.validate(&names).is_ok());
        let err = PlotSelection::from_words(&["c".into()])
            .validate(&names)
            .unwrap_err();
        assert_eq!(
            err,
            "--plot: no quantity named `c`; the quantities are a, b, lp__ (or `slowest`, `all`, \
             `none`)"
        );
    }

    #[test]
    fn rank_plots_are_flat_for_mixed_chains_and_split_for_stuck_ones() {
        let run = gaussian_run(4, 1000, 1, 11);
        let sel = PlotSelection::Names(vec!["x[1]".into()]);
        let rank = run_charts(&run, None, &sel).pop().unwrap();
        assert_eq!(rank.file_stem, "rank_x_1");
        assert_eq!(rank.series.len(), 5);
        let expected = rank.series[4].points[0].1;
        assert_eq!(expected, 1000.0 / 20.0);
        let total: f64 = rank.series[..4]
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .sum();
        assert_eq!(total, 4000.0);
        // Mixed: every bin count within 5 binomial sd (sd ≈ 6.9) of 50.
        for s in &rank.series[..4] {
            for p in &s.points {
                assert!((p.1 - expected).abs() < 35.0, "{p:?}");
            }
        }
        // Chain 1 shifted up by 10: it holds every top rank, none below.
        let mut shifted = run.clone();
        shifted.chains[0].values.iter_mut().for_each(|v| *v += 10.0);
        let rank = run_charts(&shifted, None, &sel).pop().unwrap();
        let chain1: Vec<f64> = rank.series[0].points.iter().map(|p| p.1).collect();
        assert!(chain1[..15].iter().all(|&n| n == 0.0), "{chain1:?}");
        assert!(chain1[15..].iter().all(|&n| n == 200.0), "{chain1:?}");
    }

    #[test]
    fn histogram_is_a_density_close_to_the_truth() {
        let run = gaussian_run(1, 20000, 1, 8);
        let draws = &run.chains_of(0)[0];
        let bars = histogram_density(draws);
        let width = bars[1].0 - bars[0].0;
        let area: f64 = bars.iter().map(|b| b.1 * width).sum();
        assert!((area - 1.0).abs() < 1e-12, "{area}");
        // The bar at the mode estimates φ(0) ≈ 0.399: with ~1,500 draws in a
        // bin of width ~0.19, its standard error is ≈ 0.01, so 0.05 is 5 SE.
        let centre = bars
            .iter()
            .min_by(|a, b| a.0.abs().total_cmp(&b.0.abs()))
            .unwrap();
        assert!((centre.1 - 0.3989).abs() < 0.05, "{centre:?}");
    }

    #[test]
    fn long_traces_are_thinned_and_degenerate_input_is_fine() {
        let run = gaussian_run(1, 5000, 1, 2);
        let charts = run_charts(&run, None, &PlotSelection::Slowest(10));
        // x[1] and lp__.
        assert_eq!(charts.len(), 8);
        assert!(charts[0].series[0].points.len() <= MAX_TRACE_POINTS);
        assert_eq!(histogram_density(&[]), vec![]);
        assert_eq!(histogram_density(&[2.0, 2.0]), vec![(2.0, 1.0)]);
    }

    #[test]
    fn file_stems_are_safe_and_unique() {
        assert_eq!(file_safe("w[1]"), "w_1");
        assert_eq!(file_safe("a[2, 3]"), "a_2_3");
        assert_eq!(file_safe("../x"), "_x");
        assert_eq!(file_safe("[]"), "quantity");
        let mut run = gaussian_run(1, 20, 2, 1);
        run.names = vec!["w[1]".into(), "w_1".into()];
        let charts = run_charts(&run, None, &PlotSelection::All);
        assert_eq!(charts[4].file_stem, "trace_w_1_2");
    }
}
