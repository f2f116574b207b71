//! The charts that describe a run: trace, autocorrelation and marginal
//! density of each reported quantity.

use std::collections::HashSet;

use crate::chart::{Chart, Scale, Series, SeriesStyle};
use crate::diagnostics::autocorrelation;
use crate::draws::RunDraws;
use crate::model::KnownPosterior;

/// Largest lag of the autocorrelation charts.
pub const MAX_LAG: usize = 50;

/// Most points per chain a trace chart draws; longer chains are thinned
/// evenly (every k-th draw) so the SVG stays small.
pub const MAX_TRACE_POINTS: usize = 2000;

/// Three charts for each of the first `max_quantities` quantities of `run`:
///
/// * `trace_<name>`: the draws against their index, one line per chain;
/// * `autocorrelation_<name>`: [`autocorrelation`] at lags 0..=[`MAX_LAG`],
///   one line per chain;
/// * `density_<name>`: a histogram of all chains' draws, scaled to a
///   density, and, when `known` says the marginals are Gaussian, the true
///   N(mean, sd²) density as a dashed line.
///
/// File stems use the name with every character other than letters, digits,
/// `-` and `_` replaced by `_` (`w[1]` → `trace_w_1`).
///
/// ```
/// use qnmc_host::draws::{ChainDraws, RunDraws};
/// use qnmc_host::output::run_charts;
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
/// let charts = run_charts(&run, None, 1);
/// let stems: Vec<&str> = charts.iter().map(|c| c.file_stem.as_str()).collect();
/// assert_eq!(stems, ["trace_w_1", "autocorrelation_w_1", "density_w_1"]);
/// ```
pub fn run_charts(
    run: &RunDraws,
    known: Option<&KnownPosterior>,
    max_quantities: usize,
) -> Vec<Chart> {
    let mut charts = Vec::new();
    let mut stems = HashSet::new();
    for (j, name) in run.names.iter().enumerate().take(max_quantities) {
        let mut stem = file_safe(name);
        if !stems.insert(stem.clone()) {
            stem = format!("{stem}_{}", j + 1);
            stems.insert(stem.clone());
        }
        let chains = run.chains_of(j);
        charts.push(trace_chart(name, &stem, &chains, run));
        charts.push(autocorrelation_chart(name, &stem, &chains, run));
        let truth = known
            .filter(|k| k.gaussian_marginals)
            .and_then(|k| Some((*k.mean.get(j)?, *k.sd.get(j)?)));
        charts.push(density_chart(name, &stem, &chains, truth));
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
    fn three_charts_per_quantity_with_one_series_per_chain() {
        let run = gaussian_run(3, 400, 4, 5);
        let charts = run_charts(&run, Some(&known_standard_normal(4)), 2);
        assert_eq!(charts.len(), 6);
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
        assert_eq!(run_charts(&run, None, 1)[2].series.len(), 1);
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
        let charts = run_charts(&run, None, 10);
        assert_eq!(charts.len(), 3);
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
        let charts = run_charts(&run, None, 2);
        assert_eq!(charts[3].file_stem, "trace_w_1_2");
    }
}
