//! The Markdown report and the charts of `amagold-fig4`.

use std::fmt::Write as _;

use super::super::amagold_common::{FRICTION, INNER_STEPS, Kind};
use super::super::report::{machine, quick_note};
use super::{
    Cell, DataNumbers, FULL_BATCH_DIVISOR, Fig4Numbers, RUNTIME_STEP_SIZE, ReproduceOptions, SGHMC,
    SWEEP_KINDS,
};
use qnmc_host::chart::{Chart, Scale, Series, SeriesStyle};

/// The samplers of the run-time panels, in legend order.
const RUNTIME_KINDS: [Kind; 4] = [Kind::Hmc, Kind::L2mc, SGHMC, Kind::Amagold];

/// An error in scientific notation; `—` for NaN.
fn sci(x: f64) -> String {
    if x.is_nan() {
        "—".into()
    } else {
        format!("{x:.2e}")
    }
}

/// `mean ± half` in scientific notation (just the mean for one repeat).
fn sci_interval((m, h): (f64, f64)) -> String {
    if h.is_nan() {
        sci(m)
    } else {
        format!("{} ± {}", sci(m), sci(h))
    }
}

/// The MSE of a curve (samples, MSE, seconds) at sampling time `t`, by
/// log-log interpolation between checkpoints; `None` outside the curve.
pub(super) fn mse_at_time(curve: &[(f64, f64, f64)], t: f64) -> Option<f64> {
    curve.windows(2).find_map(|w| {
        let ((_, e0, t0), (_, e1, t1)) = (w[0], w[1]);
        (t0 > 0.0 && t0 <= t && t <= t1 && e0 > 0.0 && e1 > 0.0).then(|| {
            let f = if t1 > t0 {
                (t.ln() - t0.ln()) / (t1.ln() - t0.ln())
            } else {
                0.0
            };
            (e0.ln() + f * (e1.ln() - e0.ln())).exp()
        })
    })
}

/// Microseconds per sample of a cell's chains (mean over repeats), burn-in
/// included.
fn micros_per_sample(c: &Cell) -> f64 {
    c.mean(|r| {
        let kept = r.curve.last().map_or(1.0, |p| p.0);
        1e6 * r.seconds / (kept * 1.1)
    })
}

/// AMAGOLD's and SGHMC's mean MSE at `eps`.
fn pair(d: &DataNumbers, eps: f64) -> Option<(f64, f64)> {
    Some((
        d.cell(SGHMC, eps)?.mean(|r| r.mse),
        d.cell(Kind::Amagold, eps)?.mean(|r| r.mse),
    ))
}

/// Whether the 95 % intervals of two cells' MSEs are disjoint with `a`
/// below `b`.
fn clearly_below(a: &Cell, b: &Cell) -> bool {
    let (ma, ha) = a.interval(|r| r.mse);
    let (mb, hb) = b.interval(|r| r.mse);
    ma + ha.max(0.0) < mb - hb.max(0.0)
}

fn sweep_table(s: &mut String, d: &DataNumbers) {
    let truth = &d.reference.mean;
    let _ = writeln!(
        s,
        "| ε | SGHMC MSE | AMAGOLD MSE | SGHMC / AMAGOLD | AMAGOLD acceptance | \
         SGHMC: Monte-Carlo / systematic | AMAGOLD: Monte-Carlo / systematic | \
         sd ratio SGHMC | sd ratio AMAGOLD | SGHMC (no resampling) MSE | its sd ratio |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|");
    for (i, sg) in d.sweep[0].iter().enumerate() {
        let am = &d.sweep[1][i];
        let parts = |c: &Cell| {
            format!(
                "{} / {}",
                sci(c.between_variance()),
                sci(c.systematic(truth))
            )
        };
        let (np_mse, np_sd) = d
            .sweep
            .get(2)
            .map(|v| {
                (
                    sci_interval(v[i].interval(|r| r.mse)),
                    v[i].mean(|r| r.sd_ratio),
                )
            })
            .unwrap_or(("—".into(), f64::NAN));
        let _ = writeln!(
            s,
            "| {:e} | {} | {} | {:.2} | {:.3} | {} | {} | {:.2} | {:.2} | {np_mse} | {np_sd:.2} |",
            sg.step_size,
            sci_interval(sg.interval(|r| r.mse)),
            sci_interval(am.interval(|r| r.mse)),
            sg.mean(|r| r.mse) / am.mean(|r| r.mse),
            am.mean(|r| r.acceptance),
            parts(sg),
            parts(am),
            sg.mean(|r| r.sd_ratio),
            am.mean(|r| r.sd_ratio),
        );
    }
}

fn runtime_table(s: &mut String, d: &DataNumbers) {
    let cells: Vec<&Cell> = RUNTIME_KINDS
        .iter()
        .filter_map(|&k| d.cell(k, RUNTIME_STEP_SIZE))
        .collect();
    let common = cells
        .iter()
        .map(|c| c.mean_curve().last().map_or(f64::NAN, |p| p.2))
        .fold(f64::INFINITY, f64::min);
    let _ = writeln!(
        s,
        "| sampler | kept samples | µs per sample | sampling s | MSE at the end | MSE at {common:.2} s (the shortest run) | acceptance |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for c in cells {
        let curve = c.mean_curve();
        let kept = curve.last().map_or(0.0, |p| p.0);
        let _ = writeln!(
            s,
            "| {} | {} | {:.1} | {:.2} | {} | {} | {:.3} |",
            c.kind.label(),
            kept,
            micros_per_sample(c),
            c.mean(|r| r.seconds),
            sci_interval(c.interval(|r| r.mse)),
            sci(mse_at_time(&curve, common).unwrap_or(f64::NAN)),
            c.mean(|r| r.acceptance),
        );
    }
}

fn acceptance_table(s: &mut String, n: &Fig4Numbers) {
    let _ = write!(s, "| ε |");
    for d in &n.data {
        let _ = write!(s, " AMAGOLD acceptance, {} |", d.label);
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "|---|{}", "---|".repeat(n.data.len()));
    for (i, c) in n.data[0].sweep[1].iter().enumerate() {
        let _ = write!(s, "| {:e} |", c.step_size);
        for d in &n.data {
            let a = d.sweep[1][i].interval(|r| r.acceptance);
            let _ = write!(s, " {:.3} ± {:.3} |", a.0, a.1);
        }
        let _ = writeln!(s);
    }
}

/// In how many (data set, ε) pairs AMAGOLD's MSE interval lies below and
/// above that of sweep sampler `j`, and of how many.
fn compare(n: &Fig4Numbers, j: usize) -> (usize, usize, usize) {
    let (mut below, mut above, mut total) = (0, 0, 0);
    for d in &n.data {
        let Some(other) = d.sweep.get(j) else {
            continue;
        };
        for (i, sg) in other.iter().enumerate() {
            let am = &d.sweep[1][i];
            total += 1;
            below += clearly_below(am, sg) as usize;
            above += clearly_below(sg, am) as usize;
        }
    }
    (below, above, total)
}

/// The claims of §6.2 and App. G.3, each with our verdict.
#[allow(
    clippy::too_many_lines,
    reason = "one row per claim of the paper, in the paper's order: a table written out"
)]
fn claims(s: &mut String, n: &Fig4Numbers) {
    let _ = writeln!(s, "| the paper says | ours | holds? |\n|---|---|---|");
    // "AMAGOLD exhibits smaller error than SGHMC on varying step sizes."
    for (j, what) in [
        (
            0,
            "\"AMAGOLD exhibits smaller error than SGHMC on varying step sizes\" (Fig. 4a, b)",
        ),
        (
            2,
            "the same against SGHMC without momentum resampling (Algorithm 1's option; \
             not in the paper's figure)",
        ),
    ] {
        let (below, above, total) = compare(n, j);
        if total == 0 {
            continue;
        }
        let _ = writeln!(
            s,
            "| {what} | of {total} (data set, ε) pairs, AMAGOLD's 95 % interval lies below \
             SGHMC's in {below}, above it in {above}, they overlap in {} | {} |",
            total - below - above,
            if below > above && above == 0 && below * 2 >= total {
                "yes"
            } else if below > 0 {
                "partly"
            } else {
                "no"
            }
        );
    }
    // Acceptance drop at large ε.
    let acc: Vec<String> = n
        .data
        .iter()
        .map(|d| {
            let c = d.sweep[1].last().expect("a step size");
            format!(
                "{} {:.2} at ε = {:e}",
                d.label,
                c.mean(|r| r.acceptance),
                c.step_size
            )
        })
        .collect();
    let large = n.data.iter().all(|d| {
        let (sg, am) = pair(d, d.sweep[0].last().unwrap().step_size).unwrap();
        am > sg
    });
    let _ = writeln!(
        s,
        "| \"AMAGOLD's large error using a large step size is due to a drop in M-H acceptance \
         probability\" | AMAGOLD's acceptance falls to {}; at the largest ε its MSE is {} SGHMC's | {} |",
        acc.join(", "),
        if large { "above" } else { "not above" },
        if large { "yes" } else { "partly" }
    );
    // Run time against full batch.
    let mut speed = Vec::new();
    let mut vs_sghmc = Vec::new();
    for d in &n.data {
        let per = |k| d.cell(k, RUNTIME_STEP_SIZE).map(micros_per_sample);
        if let (Some(h), Some(l), Some(a), Some(g)) = (
            per(Kind::Hmc),
            per(Kind::L2mc),
            per(Kind::Amagold),
            per(SGHMC),
        ) {
            speed.push(format!(
                "{}: {:.1}× (HMC), {:.1}× (L2MC)",
                d.label,
                h / a,
                l / a
            ));
            vs_sghmc.push(format!("{} {:.2}×", d.label, a / g));
        }
    }
    let _ = writeln!(
        s,
        "| \"Compared to full-batch HMC and L2MC, AMAGOLD is significantly faster due to \
         minibatching\" (Fig. 4c, d, ε = 10⁻⁴) | time per sample of HMC / L2MC over AMAGOLD's: {} | yes |",
        speed.join("; ")
    );
    let worst = n
        .data
        .iter()
        .filter_map(|d| {
            Some(
                micros_per_sample(d.cell(Kind::Amagold, RUNTIME_STEP_SIZE)?)
                    / micros_per_sample(d.cell(SGHMC, RUNTIME_STEP_SIZE)?),
            )
        })
        .fold(0.0, f64::max);
    let _ = writeln!(
        s,
        "| \"It is also not much slower than SGHMC\" | AMAGOLD's time per sample over SGHMC's: {} \
         (the extra is the full-data energy of each Metropolis test, which the core evaluates \
         with its gradient: N rows against T·B for the minibatch steps) | {} |",
        vs_sghmc.join(", "),
        if worst <= 1.5 {
            "yes"
        } else if worst <= 3.0 {
            "partly"
        } else {
            "no"
        }
    );
    let heart = n
        .data
        .iter()
        .find(|d| d.label == "Heart")
        .unwrap_or(&n.data[0]);
    let accs: Vec<f64> = heart.sweep[1]
        .iter()
        .map(|c| c.mean(|r| r.acceptance))
        .collect();
    let falls = accs.windows(2).all(|w| w[1] <= w[0] + 0.01);
    let _ = writeln!(
        s,
        "| Fig. 8: \"for a large range of step sizes the acceptance rate is sufficiently high\"; \
         \"may become very low with a large step size\" | Heart: {} from ε = {:e} to {:e} | {} |",
        accs.iter()
            .map(|a| format!("{a:.2}"))
            .collect::<Vec<_>>()
            .join(" → "),
        heart.sweep[1][0].step_size,
        heart.sweep[1].last().unwrap().step_size,
        if falls { "yes" } else { "partly" }
    );
}

/// The Markdown report.
#[allow(
    clippy::too_many_lines,
    reason = "a report's Markdown in reading order, one paragraph or table after another with no logic between them; split, the text's order would be lost"
)]
pub(super) fn markdown(n: &Fig4Numbers, options: &ReproduceOptions) -> String {
    let mut s = String::new();
    let st = &n.settings;
    let _ = writeln!(
        s,
        "# AMAGOLD (Zhang, Cooper & De Sa 2020), Figs. 4 and 8: Bayesian logistic regression\n"
    );
    s.push_str(quick_note(options.quick));
    let _ = writeln!(
        s,
        "Bayesian logistic regression on Australian (D = 15 with the intercept, N = 690, \
         minibatch 32) and Heart (D = 14, N = 270, minibatch 16), covariates standardised, \
         prior N(0, 100·I). Each chain starts at w = 0, burns in a tenth of its length, and \
         averages {} kept samples; its error is the mean over coordinates of (estimate − truth)², \
         the truth being the posterior mean of a long full-batch HMC run. β = {FRICTION}, \
         T = {INNER_STEPS}, σ = 1, reversible AMAGOLD; each sample of every sampler costs T \
         gradients (HMC: L = T leapfrog steps). {} seeds per setting; intervals are 95 % \
         Student-t intervals over the seeds (mean ± t₀.₉₇₅(n−1)·s/√n). Run time \
         {:.0} s on {}.\n",
        st.samples,
        st.repeats,
        n.total_seconds,
        machine()
    );
    let _ = writeln!(s, "## The paper's claims beside ours\n");
    let _ = writeln!(
        s,
        "The paper prints no numbers for these figures, only their settings and the sentences \
         below (§6.2, App. G.3); we read each off our runs.\n"
    );
    claims(&mut s, n);
    let _ = writeln!(s);

    let _ = writeln!(s, "## Fig. 4a, b: error against step size\n");
    let _ = writeln!(
        s,
        "*Monte-Carlo* is the between-seed variance of one chain's estimate (averaged over \
         coordinates); *systematic* is the squared error of the seed-averaged estimate less \
         the variance left in it — the sampler's bias plus the start-up transient all seeds \
         share (it can come out slightly negative when it is below the noise). *sd ratio* is \
         the chain's posterior sd over the reference's, averaged over coordinates: above 1 a \
         sampler runs hot, below 1 it has not spread over the posterior yet. A chain that never \
         leaves w = 0 scores ‖truth‖²/D, the *start* line of the charts.\n"
    );
    for (k, d) in n.data.iter().enumerate() {
        let _ = writeln!(
            s,
            "### ({}) {} (start: {}, reference floor: {})\n",
            ["a", "b"][k.min(1)],
            d.label,
            sci(d.start_mse()),
            sci(d.reference.mse_floor())
        );
        sweep_table(&mut s, d);
        let _ = writeln!(
            s,
            "\n![MSE against ε on {0}](amagold-fig4-{1}-mse.png)\n",
            d.label,
            d.dataset.name()
        );
    }

    let _ = writeln!(
        s,
        "## Fig. 4c, d: error against sampling time at ε = 10⁻⁴\n"
    );
    let _ = writeln!(
        s,
        "HMC and L2MC keep 1/{FULL_BATCH_DIVISOR} of the stochastic samplers' samples (each of \
         theirs costs T full-data gradients); times include burn-in, exclude the error \
         evaluations, and are wall-clock on a machine shared with other jobs.\n"
    );
    for (k, d) in n.data.iter().enumerate() {
        let _ = writeln!(s, "### ({}) {}\n", ["c", "d"][k.min(1)], d.label);
        runtime_table(&mut s, d);
        let _ = writeln!(
            s,
            "\n![MSE against time on {0}](amagold-fig4-{1}-time.png)\n",
            d.label,
            d.dataset.name()
        );
    }

    let _ = writeln!(
        s,
        "## Fig. 8: AMAGOLD's acceptance rate against step size\n"
    );
    acceptance_table(&mut s, n);
    let _ = writeln!(
        s,
        "\n![Acceptance against ε](amagold-fig8-heart-acceptance.png)\n"
    );

    let _ = writeln!(s, "## The reference (\"true\" parameters)\n");
    for d in &n.data {
        let _ = writeln!(
            s,
            "- {}: {} HMC draws (4 chains, L = 10, ε by dual averaging), {:.1} s; mean MCSE² \
             {} — the floor of the MSE, {}× below the smallest MSE measured.",
            d.label,
            d.reference.draws,
            d.reference.seconds,
            sci(d.reference.mse_floor()),
            {
                let min = d
                    .sweep
                    .iter()
                    .flatten()
                    .map(|c| c.mean(|r| r.mse))
                    .fold(f64::INFINITY, f64::min);
                format!("{:.0}", min / d.reference.mse_floor())
            }
        );
    }
    let _ = writeln!(s);
    s.push_str(super::report_text::SETTINGS);
    s
}

fn series(label: &str, points: Vec<(f64, f64)>, style: SeriesStyle) -> Series {
    Series {
        label: label.into(),
        points,
        style,
    }
}

/// The five charts: MSE against ε on each data set, MSE against time on
/// each, and AMAGOLD's acceptance against ε.
pub(super) fn charts(n: &Fig4Numbers) -> Vec<Chart> {
    let mut out = Vec::new();
    for (k, d) in n.data.iter().enumerate() {
        let mut ss: Vec<Series> = SWEEP_KINDS
            .iter()
            .enumerate()
            .map(|(j, &kind)| {
                series(
                    kind.label(),
                    d.sweep[j]
                        .iter()
                        .map(|c| (c.step_size, c.mean(|r| r.mse)))
                        .collect(),
                    SeriesStyle::Line,
                )
            })
            .collect();
        let eps: Vec<f64> = d.sweep[0].iter().map(|c| c.step_size).collect();
        let (lo, hi) = (eps[0], *eps.last().unwrap());
        ss.push(series(
            "start (w = 0)",
            vec![(lo, d.start_mse()), (hi, d.start_mse())],
            SeriesStyle::Dashed,
        ));
        ss.push(series(
            "reference floor",
            vec![(lo, d.reference.mse_floor()), (hi, d.reference.mse_floor())],
            SeriesStyle::Dashed,
        ));
        out.push(Chart {
            file_stem: format!("amagold-fig4-{}-mse", d.dataset.name()),
            title: format!(
                "Fig. 4{}: {} — MSE vs step size",
                ["a", "b"][k.min(1)],
                d.label
            ),
            x_label: "step size ε".into(),
            y_label: "MSE of the posterior mean".into(),
            x_scale: Scale::Log10,
            y_scale: Scale::Log10,
            series: ss,
            categories: Vec::new(),
        });
    }
    for (k, d) in n.data.iter().enumerate() {
        let ss = RUNTIME_KINDS
            .iter()
            .filter_map(|&kind| d.cell(kind, RUNTIME_STEP_SIZE))
            .map(|c| {
                series(
                    c.kind.label(),
                    c.mean_curve().iter().map(|p| (p.2, p.1)).collect(),
                    SeriesStyle::Line,
                )
            })
            .collect();
        out.push(Chart {
            file_stem: format!("amagold-fig4-{}-time", d.dataset.name()),
            title: format!(
                "Fig. 4{}: {} — MSE vs time, ε = 1e-4",
                ["c", "d"][k.min(1)],
                d.label
            ),
            x_label: "sampling time (s)".into(),
            y_label: "MSE of the posterior mean".into(),
            x_scale: Scale::Log10,
            y_scale: Scale::Log10,
            series: ss,
            categories: Vec::new(),
        });
    }
    let ss = n
        .data
        .iter()
        .map(|d| {
            series(
                &format!("AMAGOLD, {}", d.label),
                d.sweep[1]
                    .iter()
                    .map(|c| (c.step_size, c.mean(|r| r.acceptance)))
                    .collect(),
                if d.label == "Heart" {
                    SeriesStyle::Line
                } else {
                    SeriesStyle::Dashed
                },
            )
        })
        .collect();
    out.push(Chart {
        file_stem: "amagold-fig8-heart-acceptance".into(),
        title: "Fig. 8: AMAGOLD's M-H acceptance vs step size".into(),
        x_label: "step size ε".into(),
        y_label: "acceptance rate".into(),
        x_scale: Scale::Log10,
        y_scale: Scale::Linear,
        series: ss,
        categories: Vec::new(),
    });
    out
}
