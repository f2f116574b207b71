//! The benchmark's report: tables and charts.

use std::fmt::Write as _;

use super::{
    DIMENSION, GRID, HAMCMC_FULL_MEMORY, HAMCMC_MEMORY, LINEAR_BATCH, LOGISTIC_BATCH,
    LOGISTIC_PRIOR_VARIANCE, LOGISTIC_SIGNAL_SD, PROPOSAL_DOF, Panel, START_RADIUS,
    lowest_final_error, sizes,
};
use crate::ReproduceOptions;
use crate::report::{machine, number, quick_note};
use qnmc_host::chart::{Chart, Scale, Series, SeriesStyle};

pub(super) fn condition_label(k: f64) -> String {
    format!("1e{}", k.log10().round())
}

pub(super) fn chart(panel: &Panel, covariance: bool, by_time: bool) -> Chart {
    let what = if covariance { "cov" } else { "mean" };
    let axis = if by_time { "time" } else { "iterations" };
    let y_label = if covariance {
        "covariance error (whitened, Frobenius / √D)"
    } else {
        "mean error (posterior sds, RMS)"
    };
    Chart {
        file_stem: format!(
            "sg-conditioning-{}-k{}-{what}-{axis}",
            panel.family.stem(),
            condition_label(panel.condition)
        ),
        title: format!(
            "{}, cond(cov x) = {}: {}",
            panel.family.name(),
            condition_label(panel.condition),
            if covariance {
                "covariance error"
            } else {
                "mean error"
            }
        ),
        x_label: if by_time {
            "wall-clock time (s)".into()
        } else {
            "iteration t".into()
        },
        y_label: y_label.into(),
        x_scale: Scale::Log10,
        y_scale: Scale::Log10,
        series: panel
            .curves
            .iter()
            .map(|c| Series {
                label: c.label.clone(),
                points: c
                    .points
                    .iter()
                    .map(|p| {
                        let x = if by_time {
                            p.seconds.max(1e-6)
                        } else {
                            p.iteration as f64
                        };
                        (x, p.error(covariance))
                    })
                    .filter(|(_, y)| y.is_finite() && *y > 0.0)
                    .collect(),
                style: SeriesStyle::Line,
            })
            .collect(),
        categories: Vec::new(),
    }
}

fn ratio_text(r: Option<f64>) -> String {
    match r {
        Some(r) => number(r),
        None => "never".into(),
    }
}

#[allow(
    clippy::too_many_lines,
    reason = "a report's Markdown in reading order, one paragraph or table after another with no logic between them; split, the text's order would be lost"
)]
pub(super) fn markdown(panels: &[Panel], options: &ReproduceOptions) -> String {
    let s = sizes(options.quick);
    let mut md = String::new();
    md.push_str("# Stochastic-gradient samplers where preconditioning matters\n\n");
    md.push_str(quick_note(options.quick));
    let _ = writeln!(
        md,
        "Command: `qnmc reproduce sg-conditioning{}` (seed {}). \
         D = {DIMENSION}; covariates x = Q diag(s) z with Q a random rotation and \
         cond(cov x) = κ ∈ {{10, 10³, 10⁵}}. **Linear Gaussian**: θ ~ N(0, I), y ~ N(xᵀθ, 1), \
         N = {} rows, minibatch b = {LINEAR_BATCH}, exact posterior. **Logistic regression**: \
         prior N(0, {LOGISTIC_PRIOR_VARIANCE} I), true xᵀw with sd {LOGISTIC_SIGNAL_SD}, N = {} rows, \
         b = {LOGISTIC_BATCH}, reference by importance sampling ({} draws, Student-t({PROPOSAL_DOF}) \
         proposal at the Laplace approximation).\n",
        if options.quick { " --quick" } else { "" },
        options.seed,
        s.linear_rows,
        s.logistic_rows,
        s.reference_draws
    );
    let _ = writeln!(
        md,
        "**Step rule (equal effort)**: every sampler's own pilot step ε₀ (`qnmc run`'s default: \
         mode and Hessian A, variance budget β = 0.1, minibatch noise ν = N/b − 1; docs/DEFAULTS.md) \
         times each of 0.01, 0.03, …, 100 (9 tries of {} iterations, same seed); the try with the \
         smallest mean + covariance error wins. SGRLD uses G = diag(A), SGHMC friction √λ_max(A), \
         HAMCMC M = {HAMCMC_MEMORY} (the default, M − 1 = 4 pairs) and M = {HAMCMC_FULL_MEMORY} \
         (M − 1 = D pairs), γ = 1/λ_max(A), constant step. **Runs**: from the mode ± \
         uniform(−{START_RADIUS}, {START_RADIUS}) Laplace marginal sds per coordinate (as `qnmc run` \
         starts them; the same point for every sampler), {} iterations, fresh seed, one run each. Estimates at iteration t use the draws in (t/2, t]. \
         **Errors**, in posterior units (Σ = LLᵀ the reference covariance): mean error \
         ‖L⁻¹(θ̄ − μ)‖/√D, covariance error ‖L⁻¹ĈL⁻ᵀ − I‖_F/√D (0.1 = 10 % of a posterior sd).\n",
        s.grid_iterations, s.iterations
    );
    md.push_str("## Final errors\n\n");
    md.push_str(
        "| model | κ (x) | κ (posterior) | sampler | ε₀ | chosen × ε₀ | mean error | cov error | seconds | note |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for p in panels {
        if p.curves.is_empty() {
            let _ = writeln!(
                md,
                "| {} | {} | — | — | — | — | — | — | — | not run: {} |",
                p.family.name(),
                condition_label(p.condition),
                p.reference
            );
        }
        for c in &p.curves {
            let (m, cv) = c
                .last()
                .map_or((f64::NAN, f64::NAN), |q| (q.mean_error, q.covariance_error));
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {:.2} | {} |",
                p.family.name(),
                condition_label(p.condition),
                number(p.posterior_condition),
                c.label,
                number(c.pilot_step),
                number(c.multiplier),
                number(m),
                number(cv),
                c.seconds(),
                c.failure.as_deref().unwrap_or("")
            );
        }
    }
    let _ = writeln!(md, "\nSeconds: {}.\n", machine());
    md.push_str("## HAMCMC against SGLD in wall time\n\n");
    let labels = [
        format!("hamcmc M={HAMCMC_MEMORY}"),
        format!("hamcmc M={HAMCMC_FULL_MEMORY}"),
    ];
    let _ = writeln!(
        md,
        "Wall time HAMCMC needed to first reach SGLD's final error, divided by SGLD's whole run \
         (the acceptance asks ≤ 0.2 at κ ≥ 10³; `never`: HAMCMC's error never got that low).\n\n\
         | model | κ (x) | mean: {0} | mean: {1} | cov: {0} | cov: {1} | best final mean error | best final cov error |\n\
         |---|---|---|---|---|---|---|---|",
        labels[0], labels[1]
    );
    for p in panels.iter().filter(|p| !p.curves.is_empty()) {
        let best = |covariance: bool| {
            lowest_final_error(&p.curves, covariance)
                .map_or("—".to_string(), |(e, n)| format!("{n} {}", number(e)))
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            p.family.name(),
            condition_label(p.condition),
            ratio_text(p.time_ratio_to_sgld(&labels[0], false)),
            ratio_text(p.time_ratio_to_sgld(&labels[1], false)),
            ratio_text(p.time_ratio_to_sgld(&labels[0], true)),
            ratio_text(p.time_ratio_to_sgld(&labels[1], true)),
            best(false),
            best(true)
        );
    }
    md.push_str("\n## Step-size trials (score = mean + cov error after the trial; ∞ = failed)\n\n");
    md.push_str("| model | κ (x) | sampler |");
    for m in GRID {
        let _ = write!(md, " ×{} |", number(m));
    }
    md.push_str("\n|---|---|---|");
    for _ in GRID {
        md.push_str("---|");
    }
    md.push('\n');
    for p in panels {
        for c in &p.curves {
            let _ = write!(
                md,
                "| {} | {} | {} |",
                p.family.name(),
                condition_label(p.condition),
                c.label
            );
            for v in &c.grid_scores {
                let cell = if v.is_finite() {
                    number(*v)
                } else {
                    "∞".into()
                };
                let _ = write!(md, " {cell} |");
            }
            md.push('\n');
        }
    }
    md.push_str("\nReferences: ");
    for p in panels {
        let _ = write!(
            md,
            "{} κ {}: {}; ",
            p.family.name(),
            condition_label(p.condition),
            p.reference
        );
    }
    md.push_str("\n\n");
    md
}
