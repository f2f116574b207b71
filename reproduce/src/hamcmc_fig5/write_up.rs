//! The report and charts of `hamcmc-fig5`.

use std::fmt::Write as _;

use super::super::report::{machine, number, quick_note, thin};
use super::{Curve, Experiment, HAMCMC, PSGLD, RATINGS_VARIABLE, Runs, SEEDS, SGLD_STEP, Variant};
use qnmc_host::chart::{Chart, Scale, Series, SeriesStyle};

/// Points per chart series.
const CHART_POINTS: usize = 400;

/// Median, smallest and largest of `values` (NaN entries dropped); NaNs
/// when none is left.
fn spread(values: impl IntoIterator<Item = f64>) -> (f64, f64, f64) {
    let mut v: Vec<f64> = values.into_iter().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    let median = if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    };
    (median, v[0], v[v.len() - 1])
}

fn with_range((median, low, high): (f64, f64, f64)) -> String {
    if median.is_nan() {
        "—".into()
    } else if low == high {
        number(median)
    } else {
        format!("{} [{}, {}]", number(median), number(low), number(high))
    }
}

/// The first iteration (1-based) at which the averaged RMSE is at most
/// `level`; `None` if never.
fn first_reaching(curve: &Curve, level: f64) -> Option<usize> {
    curve
        .mean_rmse
        .iter()
        .position(|&r| r <= level)
        .map(|i| i + 1)
}

fn runs_of(e: &Experiment, variant: Variant) -> Option<&Runs> {
    e.runs.iter().find(|r| r.variant == variant)
}

/// The averaged RMSE at the checkpoints the table shows.
fn checkpoints(e: &Experiment) -> Vec<usize> {
    let mut points: Vec<usize> = [e.burn_in * 2, e.iterations / 2]
        .into_iter()
        .filter(|&t| t > e.burn_in && t < e.iterations)
        .collect();
    points.sort_unstable();
    points.dedup();
    points.push(e.iterations);
    points
}

/// The report.
pub(super) fn markdown(e: &Experiment, options: &super::super::ReproduceOptions) -> String {
    let mut md = String::new();
    md.push_str("# HAMCMC paper, Figure 5: matrix factorisation, test RMSE (one machine)\n\n");
    md.push_str(quick_note(options.quick));
    let (sgld, (p_eps, p_alpha, p_lambda), (h_eps, h_gamma, h_lambda)) = (SGLD_STEP, PSGLD, HAMCMC);
    let _ = writeln!(
        md,
        "Settings: the model of §4.3 (eq. 17), K = 50, σ_w² = σ_h² = σ_x² = 1, no offset, \
         on {}: {} training and {} test ratings, D = (I + J)·K = {} unknowns. The training \
         ratings are split into 4 parts of 4 blocks each (Fig. 4; part sizes {:?}); each \
         iteration draws one part with probability |Ω⁽ⁱ⁾|/N and uses its gradient scaled by \
         N/|Ω⁽ⁱ⁾| (plus the whole prior). Constant step sizes of Appendix B, Table 3: DSGLD \
         ε = {}, PSGLD ε = {}, α = {}, λ = {}, HAMCMC ε = {}, γ = {}, λ = {} with M = 2 (the \
         paper's) and M = 5, and, to show the sensitivity, HAMCMC at DSGLD's ε and a third \
         of it (every variant: the table's rows). Start: every coordinate N(0, 0.1²) from a fixed seed (the same \
         for every chain; the paper does not print its start). {} iterations, the first {} \
         draws discarded; the RMSE is that of the average of the later draws' test \
         predictions, clipped to [1, 5]. Chains: {} per sampler (seeds {}…).\n",
        e.data,
        e.sizes.0,
        e.sizes.1,
        e.dimension,
        e.parts,
        number(sgld),
        number(p_eps),
        p_alpha,
        p_lambda,
        number(h_eps),
        h_gamma,
        h_lambda,
        e.iterations,
        e.burn_in,
        e.runs.first().map_or(0, |r| r.curves.len()),
        options.seed,
    );
    md.push_str(
        "## The paper's result (Fig. 5 is a plot; no numbers are printed)\n\n\
         On MovieLens-1M over 4 machines: \"DSGLD converges slowly when compared with PSGLD. \
         On the other hand, HAMCMC converges even faster than PSGLD while having almost the \
         same computational requirements.\"\n\n",
    );
    md.push_str("## Ours\n\n");
    md.push_str(&table(e));
    md.push_str(&reaching(e));
    let _ = writeln!(
        md,
        "\nThe test RMSE of predicting every rating by the training mean is {}. Seconds count \
         the sampler's steps only (not scoring the test set), one thread: {}.\n",
        number(e.mean_baseline),
        machine()
    );
    md.push_str(&verdict(e));
    md.push_str(&differences());
    md.push_str(
        "\n## Charts\n\n\
         ![averaged test RMSE against iterations](hamcmc-fig5-iterations.png)\n\n\
         ![averaged test RMSE against time](hamcmc-fig5-time.png)\n\n\
         ![test RMSE of each draw against iterations](hamcmc-fig5-draws.png)\n\n\
         (the first seed's chain of each sampler)\n",
    );
    md
}

fn table(e: &Experiment) -> String {
    let points = checkpoints(e);
    let mut md = String::from("| sampler | part gradients per iteration | ms per iteration |");
    for t in &points {
        let _ = write!(md, " averaged RMSE at t = {t} |");
    }
    md.push_str(" RMSE of the last draw | stopped early |\n|---|---|---|");
    for _ in &points {
        md.push_str("---|");
    }
    md.push_str("---|---|\n");
    for runs in &e.runs {
        let c = &runs.curves;
        let per_iteration = spread(
            c.iter()
                .map(|c| c.gradients as f64 / c.draw_rmse.len().max(1) as f64),
        );
        let ms = spread(c.iter().map(|c| 1e3 * c.seconds_per_iteration()));
        let _ = write!(
            md,
            "| {} | {} | {} |",
            runs.variant.label(),
            number(per_iteration.0),
            with_range(ms)
        );
        for &t in &points {
            let values: Vec<f64> = c.iter().map(|c| c.mean_rmse_at(t)).collect();
            let reached = values.iter().filter(|v| !v.is_nan()).count();
            let _ = write!(md, " {}", with_range(spread(values)));
            if reached > 0 && reached < c.len() {
                let _ = write!(md, " ({reached} of {} chains)", c.len());
            }
            md.push_str(" |");
        }
        let last = spread(
            c.iter()
                .map(|c| c.draw_rmse.last().copied().unwrap_or(f64::NAN)),
        );
        let failures: Vec<&str> = c.iter().filter_map(|c| c.failure.as_deref()).collect();
        let _ = writeln!(
            md,
            " {} | {} |",
            with_range(last),
            if failures.is_empty() {
                "no".to_string()
            } else {
                failures.join("; ")
            }
        );
    }
    md.push_str(
        "\nEach cell: median [smallest, largest] over the chains that got there (a plain \
         number when they agree to the digits shown or there is one); a chain that stopped \
         early has no averaged RMSE after it stopped, and its last draw is its last finite \
         one.\n",
    );
    md
}

/// Iterations each sampler needs to reach PSGLD's final averaged RMSE (its
/// median over seeds): the paper's "converges faster" as a number.
fn reaching(e: &Experiment) -> String {
    let Some(psgld) = runs_of(e, Variant::Psgld) else {
        return String::new();
    };
    let level = spread(psgld.curves.iter().map(Curve::final_mean_rmse)).0;
    if level.is_nan() {
        return String::new();
    }
    let mut md = format!(
        "\nIterations until the averaged RMSE first reaches PSGLD's final {} (median over its \
         seeds), and the seconds that took:\n\n| sampler | iterations | seconds |\n|---|---|---|\n",
        number(level)
    );
    for runs in &e.runs {
        let hits: Vec<Option<usize>> = runs
            .curves
            .iter()
            .map(|c| first_reaching(c, level))
            .collect();
        let iterations = spread(hits.iter().map(|h| h.map_or(f64::NAN, |t| t as f64)));
        let seconds = spread(
            runs.curves
                .iter()
                .zip(&hits)
                .map(|(c, h)| h.map_or(f64::NAN, |t| c.seconds[t - 1])),
        );
        let missed = hits.iter().filter(|h| h.is_none()).count();
        let _ = writeln!(
            md,
            "| {} | {}{} | {} |",
            runs.variant.label(),
            with_range(iterations),
            if missed > 0 {
                format!(" ({missed} of {} never)", hits.len())
            } else {
                String::new()
            },
            with_range(seconds)
        );
    }
    md
}

/// What the numbers say about the paper's two claims, computed from the
/// runs (never written by hand).
fn verdict(e: &Experiment) -> String {
    let final_of = |v: Variant| {
        runs_of(e, v).map_or(f64::NAN, |r| {
            spread(r.curves.iter().map(Curve::final_mean_rmse)).0
        })
    };
    let time_of = |v: Variant| {
        runs_of(e, v).map_or(f64::NAN, |r| {
            spread(r.curves.iter().map(Curve::seconds_per_iteration)).0
        })
    };
    let stopped = |v: Variant| {
        runs_of(e, v).map_or(0, |r| {
            r.curves.iter().filter(|c| c.failure.is_some()).count()
        })
    };
    let (dsgld, psgld) = (final_of(Variant::Dsgld), final_of(Variant::Psgld));
    let claim = |holds: bool| if holds { "holds" } else { "does not hold" };
    let mut md = String::from("\n## Verdict\n\n");
    let _ = writeln!(
        md,
        "- \"DSGLD converges slowly when compared with PSGLD\": {} here (final averaged RMSE \
         {} against {}).",
        claim(dsgld > psgld),
        number(dsgld),
        number(psgld)
    );
    for v in Variant::ALL {
        let Variant::Hamcmc { .. } = v else {
            continue;
        };
        let hamcmc = final_of(v);
        let runs = runs_of(e, v).map_or(0, |r| r.curves.len());
        let failed = stopped(v);
        let paper = if v == Variant::PAPER_HAMCMC {
            " (the paper's setting)"
        } else {
            ""
        };
        if failed > 0 {
            let _ = writeln!(
                md,
                "- {}{paper}: {failed} of {runs} chains diverged (see the table): \"HAMCMC \
                 converges even faster than PSGLD\" does not hold at this setting.",
                v.label()
            );
        } else {
            let _ = writeln!(
                md,
                "- {}{paper}: \"HAMCMC converges even faster than PSGLD\" {} (final averaged \
                 RMSE {} against PSGLD's {} and DSGLD's {}), at {:.1}× PSGLD's time per \
                 iteration.",
                v.label(),
                claim(hamcmc < psgld),
                number(hamcmc),
                number(psgld),
                number(dsgld),
                time_of(v) / time_of(Variant::Psgld)
            );
        }
    }
    md
}

fn differences() -> String {
    format!(
        "\n## Where we differ from the paper, and why\n\n\
         - **Data.** MovieLens-1M's licence forbids shipping it, so the run uses the \
         synthetic set of the `pmf` target: the same shape (6040 × 3883, 1 000 209 ratings, \
         heavy-tailed counts, at least 20 per user), ratings 1–5 from a rank-10 model plus \
         noise. Set `{RATINGS_VARIABLE}` to a `ratings.dat` to run on the real data. RMSE \
         levels are not comparable with the paper's: they depend on the data.\n\
         - **One machine.** The paper ran C on OpenMPI over 4 machines. The chain depends \
         only on which part each iteration draws, not on where the blocks live, so one \
         process gives the same iterations; the time axis is one thread's, not a cluster's.\n\
         - **Iterations and seeds** are not printed in the paper; we run {} chains per \
         sampler and show the spread.\n\
         - **Average.** The paper discards 100 samples and plots the test RMSE; it does not \
         say whether of each draw or of the averaged prediction. We report both (the table's \
         last RMSE column is of the last draw alone).\n",
        SEEDS
    )
}

/// The charts: averaged RMSE against iterations and seconds, and each
/// draw's RMSE against iterations (the first seed of every sampler).
pub(super) fn charts(e: &Experiment) -> Vec<Chart> {
    let series = |pick: &dyn Fn(&Curve) -> Vec<(f64, f64)>| -> Vec<Series> {
        e.runs
            .iter()
            .filter_map(|r| {
                let c = r.curves.first()?;
                Some(Series {
                    label: r.variant.label(),
                    points: thin(&pick(c), CHART_POINTS),
                    style: SeriesStyle::Line,
                })
            })
            .collect()
    };
    let averaged = |c: &Curve, by_time: bool| -> Vec<(f64, f64)> {
        c.mean_rmse
            .iter()
            .enumerate()
            .filter(|(_, r)| r.is_finite())
            .map(|(i, &r)| {
                (
                    if by_time {
                        c.seconds[i]
                    } else {
                        (i + 1) as f64
                    },
                    r,
                )
            })
            .collect()
    };
    let chart = |stem: &str, title: &str, x_label: &str, series: Vec<Series>| Chart {
        file_stem: format!("hamcmc-fig5-{stem}"),
        title: title.to_string(),
        x_label: x_label.to_string(),
        y_label: "test RMSE".to_string(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series,
        categories: Vec::new(),
    };
    vec![
        chart(
            "iterations",
            "Matrix factorisation: averaged test RMSE",
            "iteration",
            series(&|c| averaged(c, false)),
        ),
        chart(
            "time",
            "Matrix factorisation: averaged test RMSE",
            "seconds in the sampler",
            series(&|c| averaged(c, true)),
        ),
        chart(
            "draws",
            "Matrix factorisation: test RMSE of each draw",
            "iteration",
            series(&|c| {
                c.draw_rmse
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.is_finite())
                    .map(|(i, &r)| ((i + 1) as f64, r))
                    .collect()
            }),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_median_and_range_without_nans() {
        assert_eq!(spread([3.0, f64::NAN, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(spread([4.0, 1.0]), (2.5, 1.0, 4.0));
        assert!(spread([f64::NAN]).0.is_nan());
        assert_eq!(with_range((1.0, 1.0, 1.0)), "1.00");
        assert_eq!(with_range((2.0, 1.0, 3.0)), "2.00 [1.00, 3.00]");
    }

    #[test]
    fn first_reaching_is_one_based_and_skips_burn_in() {
        let curve = Curve {
            mean_rmse: vec![f64::NAN, 1.2, 1.0, 0.9],
            ..Curve::default()
        };
        assert_eq!(first_reaching(&curve, 1.0), Some(3));
        assert_eq!(first_reaching(&curve, 0.5), None);
    }
}
