//! The report and the charts of `qnhmc-table2`.

use std::fmt::Write as _;

use super::chains::{JITTER, Kind, TARGET_ACCEPTANCE};
use super::gradient_descent::{self, LAMBDAS};
use super::summary::OverSeeds;
use super::{ENSEMBLE, LEAPFROG_STEPS, MEMORY, PAPER_STEP_SIZE, PAPER_TABLE, PROBE_DRAWS, Results};
use crate::ReproduceOptions;
use crate::report::{machine, number, quick_note, thin};
use qnmc_host::chart::{Chart, Scale, Series, SeriesStyle};

/// `mean [min, max]`, or the mean alone for one seed; "not reached" counts.
fn cell(v: &OverSeeds, seeds: usize) -> String {
    let mut s = if v.mean.is_nan() {
        "—".to_string()
    } else if seeds > 1 && v.missing + 1 < seeds {
        format!("{} [{}, {}]", number(v.mean), number(v.min), number(v.max))
    } else {
        number(v.mean)
    };
    if v.missing > 0 {
        let _ = write!(s, " ({}/{} not reached)", v.missing, seeds);
    }
    s
}

fn percent(v: &OverSeeds, seeds: usize) -> String {
    let scaled = OverSeeds {
        mean: 100.0 * v.mean,
        min: 100.0 * v.min,
        max: 100.0 * v.max,
        missing: v.missing,
    };
    format!("{} %", cell(&scaled, seeds))
}

fn paper(kind: Kind) -> Option<(&'static str, f64, f64, f64)> {
    match kind {
        Kind::Hmc => Some(PAPER_TABLE[0]),
        Kind::HmcBfgs => Some(PAPER_TABLE[1]),
        Kind::Qnhmc => Some(PAPER_TABLE[2]),
        Kind::QnhmcMassC => None,
    }
}

/// The report.
#[allow(
    clippy::too_many_lines,
    reason = "a report's Markdown in reading order, one paragraph or table after another with no logic between them; split, the text's order would be lost"
)]
pub fn markdown(r: &Results, options: &ReproduceOptions) -> String {
    let l = r.lengths;
    let mut md = String::new();
    md.push_str(
        "# QNHMC paper, Table 2: Bayesian logistic regression at d = 784 (Fashion-MNIST stand-in)\n\n",
    );
    md.push_str(quick_note(options.quick));
    let _ = writeln!(
        md,
        "**Data: a stand-in.** The paper classifies MNIST digits 7 vs 9 (6 265 + 5 949 training, \
         1 028 + 1 009 test images). MNIST cannot be fetched on this project's offline machines; \
         Fashion-MNIST has the same layout (28 × 28 grey levels, d = 784) and is packaged by \
         Debian (`dataset-fashion-mnist`), so its classes 7 (Sneaker, label 0) and 9 (Ankle boot, \
         label 1) stand in: {} training and {} test images here (read from `{}`; docs/DATA.md). \
         Covariates pixel / 255, no intercept, prior w ~ N(0, 100 I). The error rates are of a \
         different data set: compare orderings and sizes of effects, not the values.\n",
        r.train_images, r.test_images, r.folder
    );
    let _ = writeln!(
        md,
        "**Settings.** Every sampler: L = {LEAPFROG_STEPS} leapfrog steps (paper), start w = 0, \
         {} updates of which the first {} are warm-up, {} seed(s) (seeds {} + 1000·s). The paper's \
         ε = {PAPER_STEP_SIZE} is unstable on this posterior (below), so ε is tuned during warm-up \
         by dual averaging starting at {PAPER_STEP_SIZE} (Stan's settings, target acceptance \
         {TARGET_ACCEPTANCE}), then fixed at ε̄ with a ±{} % uniform jitter. QNHMC: m = {MEMORY} \
         (paper), M = I and γ = 1 (the paper's algorithm), pairs from accepted trajectories, the \
         memory frozen after {} updates (dual averaging restarts there) so that the kept draws \
         come from an exact chain; an extra row, not in the paper, runs QNHMC with M = C and γ of \
         the newest pair (the `qnmc` command line's default). HMC-BFGS: K = {ENSEMBLE} chains \
         (the paper's Table 1 value; Table 2 gives none), an update moves one chain, so its {} \
         updates are {} per chain. GD: full-batch gradient descent with ℓ2 regulariser λ ∈ {:?}, \
         step 1/(¼λ_max(XᵀX) + λ), {} steps each, λ with the lowest final test error kept.\n",
        l.iterations,
        l.warmup,
        l.seeds,
        options.seed,
        (100.0 * JITTER) as u32,
        l.warmup / 2,
        l.iterations,
        l.iterations / ENSEMBLE,
        LAMBDAS,
        l.descent_steps,
    );
    let _ = writeln!(
        md,
        "**Cost.** One full U and ∇U on the {} training images: {:.2} ms here (median of 5; the \
         pixels are stored as bytes, 9.4 MB per pass instead of the 75 MB of the f64 design the \
         `fashion-mnist` target uses, which docs/DATA.md measured at 10.1 ms). A run is {} updates \
         × {LEAPFROG_STEPS} gradients = {} gradients; the whole experiment took {:.0} s on {}.\n",
        r.train_images,
        1000.0 * r.gradient_seconds,
        l.iterations,
        l.iterations * LEAPFROG_STEPS as usize,
        r.seconds,
        machine()
    );

    md.push_str("## The paper's ε = 0.1\n\n");
    for (kind, accepted, probability) in &r.probe {
        let _ = writeln!(
            md,
            "- {} at fixed ε = {PAPER_STEP_SIZE}, L = {LEAPFROG_STEPS} from w = 0: {accepted} of \
             {PROBE_DRAWS} proposals accepted, mean acceptance probability {}.",
            kind.label(),
            number(*probability)
        );
    }
    if let Some(d) = r.descent.first() {
        // The step is 1/(¼λ_max + λ): the largest curvature of U_λ at w = 0.
        let curvature = 1.0 / d.step - d.lambda + 1.0 / super::data::PRIOR_VARIANCE;
        let _ = writeln!(
            md,
            "\nWhy: the largest eigenvalue of U's Hessian at w = 0 is ¼λ_max(XᵀX) + 1/100 = {} \
             (power iteration on the training images), so leapfrog with M = I is stable only for \
             ε < 2/√{} = {}; ε = 0.1 is {}× that. MNIST's pixels / 255 have the same range, and λ_max(XᵀX) is dominated by N·|x̄|² for \
             non-negative images, so we expect the same order there: the paper's ε = 0.1 would need \
             a scaling of the data or the likelihood it does not state.",
            number(curvature),
            number(curvature),
            number(2.0 / curvature.sqrt()),
            number(PAPER_STEP_SIZE * curvature.sqrt() / 2.0)
        );
    }
    md.push('\n');

    md.push_str("## The paper's Table 2 (MNIST 7 vs 9, as printed)\n\n");
    md.push_str("| method | burn-in time (s) | ESS per second | error |\n|---|---|---|---|\n");
    for (name, b, e, err) in PAPER_TABLE {
        let _ = writeln!(md, "| {name} | {} | {} | {err} |", number(b), number(e));
    }

    md.push_str("\n## Ours (Fashion-MNIST 7 vs 9)\n\n");
    let _ = writeln!(
        md,
        "Each cell: mean over seeds [min, max] (with {} seed(s) the bracket is the range of the \
         seeds, not a confidence interval). Burn-in: the first update at which U(w) (for HMC-BFGS: \
         every chain's) is at most {} = the lowest median U over the last quarter of any run ({}) \
         + 3√(d/2), three standard deviations of U − U_mode under a Gaussian approximation. ESS: \
         Stan's basic ESS of each coordinate over the kept draws (HMC-BFGS: per chain, summed), \
         per second of sampler time after warm-up. Test error: of the posterior predictive \
         (σ(xᵀw) averaged over the kept draws, thresholded at ½; the Bayesian classifier).\n",
        l.seeds,
        number(r.band.threshold),
        number(r.band.reference)
    );
    md.push_str(
        "| sampler | ε̄ | accept | burn-in (updates) | burn-in (gradients) | burn-in (s) | min ESS/s | median ESS/s | ESS(U)/s | median ESS per 1000 grad | test error (predictive) | test error (posterior mean) | per-draw test error | paper: burn-in s / ESS/s / error |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for row in &r.rows {
        let n = row.seeds;
        let paper_cell = paper(row.kind).map_or("not in the paper".to_string(), |p| {
            format!("{} / {} / {} %", p.1, p.2, number(100.0 * p.3))
        });
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            row.kind.label(),
            cell(&row.step_size, n),
            cell(&row.acceptance, n),
            cell(&row.burn_in_updates, n),
            cell(&row.burn_in_gradients, n),
            cell(&row.burn_in_seconds, n),
            cell(&row.min_ess_per_second, n),
            cell(&row.median_ess_per_second, n),
            cell(&row.potential_ess_per_second, n),
            cell(&row.median_ess_per_kilogradient, n),
            percent(&row.predictive_error, n),
            percent(&row.posterior_mean_error, n),
            percent(&row.mean_draw_error, n),
            paper_cell
        );
    }
    if let Some(best) = gradient_descent::best(&r.descent) {
        let _ = writeln!(
            md,
            "| GD (λ = {}, {} steps) | — | — | — | — | — | — | — | — | — | {} % | — | — | — / — / {} % |",
            best.lambda,
            best.test_error.len() - 1,
            number(100.0 * best.final_error()),
            number(100.0 * PAPER_TABLE[3].3)
        );
    }
    md.push_str("\nGradient descent, every λ tried (test error after the last step): ");
    for d in &r.descent {
        let _ = write!(
            md,
            "λ = {}: {} %; ",
            d.lambda,
            number(100.0 * d.final_error())
        );
    }
    md.push_str("\n\nDivergent updates over all seeds: ");
    for row in &r.rows {
        let _ = write!(md, "{} {}; ", row.kind.label(), row.divergences);
    }
    md.push_str("\n\n");
    md.push_str(
        "![test error against gradient evaluations](qnhmc-table2-test-error.png)\n\n\
         ![U against gradient evaluations](qnhmc-table2-potential.png)\n\n",
    );
    md.push_str(&super::write_discussion::discussion(r));
    md
}

/// Test error of the current draw, and U, against gradient evaluations
/// (first seed of each sampler), with gradient descent's test error.
pub fn charts(r: &Results) -> Vec<Chart> {
    let first_seed: Vec<_> = Kind::ALL
        .iter()
        .filter_map(|&k| r.traces.iter().find(|t| t.kind == k))
        .collect();
    let curve = |xs: &[u64], ys: &[f64]| -> Vec<(f64, f64)> {
        let pts: Vec<(f64, f64)> = xs.iter().zip(ys).map(|(&x, &y)| (x as f64, y)).collect();
        thin(&pts, 1500)
    };
    let mut error_series: Vec<Series> = first_seed
        .iter()
        .map(|t| Series {
            label: t.kind.label().to_string(),
            points: curve(&t.gradients, &t.test_error),
            style: SeriesStyle::Line,
        })
        .collect();
    if let Some(best) = gradient_descent::best(&r.descent) {
        error_series.push(Series {
            label: format!("GD, λ = {}", best.lambda),
            points: curve(&best.gradients, &best.test_error),
            style: SeriesStyle::Line,
        });
    }
    let error = Chart {
        file_stem: "qnhmc-table2-test-error".to_string(),
        title: "Test error of the current draw (Fashion-MNIST 7 vs 9, d = 784)".to_string(),
        x_label: "gradient evaluations".to_string(),
        y_label: "test error".to_string(),
        x_scale: Scale::Log10,
        y_scale: Scale::Log10,
        series: error_series,
        categories: Vec::new(),
    };
    let mut potential_series: Vec<Series> = first_seed
        .iter()
        .map(|t| Series {
            label: t.kind.label().to_string(),
            points: curve(
                &t.gradients,
                &t.potential
                    .iter()
                    .map(|u| (u - r.band.reference).max(1.0))
                    .collect::<Vec<_>>(),
            ),
            style: SeriesStyle::Line,
        })
        .collect();
    let last = first_seed
        .iter()
        .filter_map(|t| t.gradients.last())
        .max()
        .copied()
        .unwrap_or(1) as f64;
    let band = r.band.threshold - r.band.reference;
    potential_series.push(Series {
        label: "burn-in band".to_string(),
        points: vec![(1.0, band), (last, band)],
        style: SeriesStyle::Line,
    });
    let potential = Chart {
        file_stem: "qnhmc-table2-potential".to_string(),
        title: "U(w) − reference (HMC-BFGS: largest over its chains)".to_string(),
        x_label: "gradient evaluations".to_string(),
        y_label: "U − reference (floored at 1)".to_string(),
        x_scale: Scale::Log10,
        y_scale: Scale::Log10,
        series: potential_series,
        categories: Vec::new(),
    };
    vec![error, potential]
}
