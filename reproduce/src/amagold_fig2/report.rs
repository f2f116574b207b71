//! The Markdown report and the charts of `amagold-fig2`.

use std::fmt::Write as _;

use qnmc::SghmcUpdate;

use super::super::amagold_common::{FRICTION, INNER_STEPS, Kind};
use super::super::report::{machine, quick_note};
use super::{
    BURN_IN, CELL_WIDTH, CURVE_STEP_SIZE, Cell, FINE_CELL_WIDTH, Fig2Numbers, KINDS,
    ReproduceOptions, TargetNumbers,
};
use qnmc_host::chart::{Chart, Scale, Series, SeriesStyle};

const SGHMC: Kind = Kind::Sghmc(SghmcUpdate::PositionFirst);

/// The samples at which a KL curve (samples, KL, …) first falls to `kl`, by
/// log-log interpolation between checkpoints; `None` if it never does.
pub(super) fn samples_to_reach(curve: &[(f64, f64, f64)], kl: f64) -> Option<f64> {
    if curve.first()?.1 <= kl {
        return Some(curve[0].0);
    }
    curve.windows(2).find_map(|w| {
        let ((n0, k0, _), (n1, k1, _)) = (w[0], w[1]);
        (k1 <= kl).then(|| {
            let f = (kl.ln() - k0.ln()) / (k1.ln() - k0.ln());
            (n0.ln() + f * (n1.ln() - n0.ln())).exp()
        })
    })
}

/// Least-squares slope of log KL against log samples over the checkpoints
/// with at least `from` samples.
pub(super) fn log_log_slope(curve: &[(f64, f64, f64)], from: f64) -> f64 {
    let pts: Vec<(f64, f64)> = curve
        .iter()
        .filter(|p| p.0 >= from && p.1 > 0.0)
        .map(|p| (p.0.ln(), p.1.ln()))
        .collect();
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    sxy / sxx
}

/// A KL value in scientific notation (they span 10⁻⁴ … 10⁻¹).
fn kl(x: f64) -> String {
    if x.is_nan() {
        "—".into()
    } else {
        format!("{x:.2e}")
    }
}

fn kl_cell(c: &Cell) -> String {
    let (m, lo, hi) = c.summary(|r| r.kl);
    if c.runs.len() > 1 {
        format!("{} [{}, {}]", kl(m), kl(lo), kl(hi))
    } else {
        kl(m)
    }
}

fn fig2_table(s: &mut String, t: &TargetNumbers) {
    let _ = write!(s, "| ε |");
    for k in KINDS {
        let _ = write!(s, " {} |", k.label());
    }
    let _ = writeln!(
        s,
        " iid draws (floor) | L2MC acc. | AMAGOLD acc. | SGHMC / AMAGOLD |"
    );
    let _ = writeln!(s, "|---|{}---|---|---|---|", "---|".repeat(KINDS.len()));
    let eps: Vec<f64> = t.cells[0].iter().map(|c| c.step_size).collect();
    for (i, e) in eps.iter().enumerate() {
        let _ = write!(s, "| {e} |");
        for cells in &t.cells {
            let c = &cells[i];
            let _ = write!(s, " {}", kl_cell(c));
            let (out, _, _) = c.summary(|r| r.outside);
            let failures: usize = c.runs.iter().map(|r| r.failures).sum();
            if out > 1e-2 || failures > 0 {
                let _ = write!(
                    s,
                    " ({:.1}% off the box, {failures} refused steps)",
                    100.0 * out
                );
            }
            let _ = write!(s, " |");
        }
        let acc = |k: Kind| t.cell(k, *e).map(|c| c.summary(|r| r.acceptance).0);
        let ratio = match (
            t.cell(SGHMC, *e).map(|c| c.summary(|r| r.kl).0),
            t.cell(Kind::Amagold, *e).map(|c| c.summary(|r| r.kl).0),
        ) {
            (Some(a), Some(b)) => format!("{:.2}×", a / b),
            _ => "—".into(),
        };
        let _ = writeln!(
            s,
            " {} | {:.3} | {:.3} | {ratio} |",
            kl(t.iid_kl()),
            acc(Kind::L2mc).unwrap_or(f64::NAN),
            acc(Kind::Amagold).unwrap_or(f64::NAN),
        );
    }
}

fn sensitivity_table(s: &mut String, n: &Fig2Numbers) {
    let _ = writeln!(
        s,
        "| target | ε | grid | {} | iid draws |",
        KINDS.map(|k| k.label()).join(" | ")
    );
    let _ = writeln!(s, "|---|---|---|{}---|", "---|".repeat(KINDS.len()));
    for t in &n.targets {
        for &e in &[CURVE_STEP_SIZE, 0.25] {
            for (fine, width) in [(false, CELL_WIDTH), (true, FINE_CELL_WIDTH)] {
                let _ = write!(s, "| {} | {e} | {width} |", t.label);
                for k in KINDS {
                    let v = t
                        .cell(k, e)
                        .map(|c| c.summary(|r| if fine { r.kl_fine } else { r.kl }).0);
                    let _ = write!(s, " {} |", kl(v.unwrap_or(f64::NAN)));
                }
                let iid = t
                    .iid
                    .iter()
                    .map(|r| if fine { r.kl_fine } else { r.kl })
                    .sum::<f64>()
                    / t.iid.len() as f64;
                let _ = writeln!(s, " {} |", kl(iid));
            }
        }
    }
}

/// Fig. 3's numbers on one target: final KL of L2MC and AMAGOLD, their
/// log-log slopes over the last two decades, and how many more samples
/// AMAGOLD needs to reach L2MC's final KL.
fn fig3_lines(s: &mut String, t: &TargetNumbers, samples: usize) {
    let (Some(l2), Some(am)) = (
        t.cell(Kind::L2mc, CURVE_STEP_SIZE),
        t.cell(Kind::Amagold, CURVE_STEP_SIZE),
    ) else {
        return;
    };
    let (cl, ca) = (l2.mean_curve(), am.mean_curve());
    let from = samples as f64 / 100.0;
    let iid: Vec<(f64, f64, f64)> = t.iid[0].curve.clone();
    let (kl_l, kl_a) = (cl.last().unwrap().1, ca.last().unwrap().1);
    let slowdown = if kl_a > kl_l {
        samples_to_reach(&cl, kl_a).map(|n_l| samples as f64 / n_l)
    } else {
        samples_to_reach(&ca, kl_l).map(|n_a| n_a / samples as f64)
    };
    let _ = writeln!(
        s,
        "| {} | {} | {} | {:.2} | {:.2} | {:.2} | {} |",
        t.label,
        kl(kl_l),
        kl(kl_a),
        log_log_slope(&cl, from),
        log_log_slope(&ca, from),
        log_log_slope(&iid, from),
        slowdown.map_or("—".into(), |f| format!("{f:.2}×")),
    );
}

/// Fig. 7's numbers on one target.
fn fig7_lines(s: &mut String, t: &TargetNumbers) {
    let (Some(sg), Some(am)) = (
        t.cell(SGHMC, CURVE_STEP_SIZE),
        t.cell(Kind::Amagold, CURVE_STEP_SIZE),
    ) else {
        return;
    };
    let per = |c: &Cell| {
        let v: Vec<f64> = c
            .runs
            .iter()
            .map(|r| 1e6 * r.seconds / r.curve.last().map_or(1.0, |p| p.0))
            .collect();
        super::super::amagold_common::mean_sd(&v)
    };
    let (ps, ps_sd) = per(sg);
    let (pa, pa_sd) = per(am);
    let (cs, ca) = (sg.mean_curve(), am.mean_curve());
    // The first AMAGOLD checkpoint from which on its KL is below SGHMC's KL at
    // the same sampling time (SGHMC's curve interpolated in log time).
    let sghmc_at = |time: f64| -> Option<f64> {
        cs.windows(2).find_map(|w| {
            let ((_, k0, t0), (_, k1, t1)) = (w[0], w[1]);
            (t0 <= time && time <= t1 && t0 > 0.0).then(|| {
                let f = (time.ln() - t0.ln()) / (t1.ln() - t0.ln());
                (k0.ln() + f * (k1.ln() - k0.ln())).exp()
            })
        })
    };
    let compared: Vec<(f64, bool)> = ca
        .iter()
        .filter_map(|&(_, k, time)| sghmc_at(time).map(|ks| (time, k < ks)))
        .collect();
    let overtakes = match compared.iter().rposition(|c| !c.1) {
        None => compared
            .first()
            .map(|c| format!("the start ({:.3} s)", c.0)),
        Some(j) => compared.get(j + 1).map(|c| {
            format!(
                "{:.3} s (SGHMC lower up to checkpoint {} of the {} compared)",
                c.0,
                j + 1,
                compared.len()
            )
        }),
    }
    .unwrap_or_else(|| "not within the run".into());
    let _ = writeln!(
        s,
        "| {} | {:.2} ± {:.2} | {:.2} ± {:.2} | {:.2}× | {} | {} | {} |",
        t.label,
        ps,
        ps_sd,
        pa,
        pa_sd,
        pa / ps,
        kl(cs.last().unwrap().1),
        kl(ca.last().unwrap().1),
        overtakes
    );
}

#[allow(
    clippy::too_many_lines,
    reason = "a report's Markdown in reading order, one paragraph or table after another with no logic between them; split, the text's order would be lost"
)]
pub(super) fn markdown(n: &Fig2Numbers, options: &ReproduceOptions) -> String {
    let mut s = String::new();
    let set = &n.settings;
    let _ = writeln!(
        s,
        "# AMAGOLD Figs. 2, 3 and 7: Dist1 and Dist2, density error vs step size, \
         iterations and time\n"
    );
    let _ = write!(s, "{}", quick_note(options.quick));
    let _ = writeln!(
        s,
        "Targets (paper App. G.2.1): Dist1 = N(z₁; z₂²/4, 1)·N(z₂; 0, 4), Dist2 = \
         ½N(0, [[2, 1.8], [1.8, 2]]) + ½N(0, [[2, −1.8], [−1.8, 2]]); SGHMC and AMAGOLD see \
         ∇Ũ = ∇U + N(0, I), HMC and L2MC the exact ∇U (§6.1). β = {FRICTION}, T = {INNER_STEPS}, \
         σ² = 1, reversible AMAGOLD and L2MC (momentum resampled), HMC with L = T leapfrog \
         steps, SGHMC with friction 2β and its momentum resampled every T steps: one sample \
         of every sampler costs T gradients. {} samples per chain after {BURN_IN} burn-in, \
         from the origin; {} chain(s) per setting (seed {}). Whole run: {:.0} s on {}.\n",
        set.samples,
        set.repeats,
        options.seed,
        n.total_seconds,
        machine()
    );
    let _ = writeln!(
        s,
        "**Density error.** Symmetric KL between an add-½ smoothed histogram of the samples \
         on square cells of width {CELL_WIDTH} and the exact cell probabilities (midpoint rule, \
         8 × 8 points per cell) smoothed the same way at the same n, (n·p + ½)/(n + ½·cells). \
         {} Entries are the mean over the chains and, in brackets, the smallest and largest \
         chain (the interval is the range of the {} seeds). \"iid draws\" is the same measure \
         on exact independent draws of the same number: the Monte-Carlo floor no chain can \
         beat.\n",
        n.targets
            .iter()
            .map(|t| format!(
                "{}: box [{}, {}] × [{}, {}], {} cells (fine grid {}), holding {:.4} of π.",
                t.label,
                t.kl_box.0[0],
                t.kl_box.1[0],
                t.kl_box.0[1],
                t.kl_box.1[1],
                t.grid_cells.0,
                t.grid_cells.1,
                t.box_mass
            ))
            .collect::<Vec<_>>()
            .join(" "),
        set.repeats
    );
    for t in &n.targets {
        let _ = writeln!(
            s,
            "## Fig. 2{}: {}, symmetric KL against ε\n",
            if t.label == "Dist1" { "b" } else { "d" },
            t.label
        );
        fig2_table(&mut s, t);
        let _ = writeln!(s);
    }
    let _ = writeln!(
        s,
        "Charts: [Dist1](amagold-fig2-dist1-kl.png), [Dist2](amagold-fig2-dist2-kl.png).\n"
    );
    let _ = writeln!(
        s,
        "## Fig. 3: symmetric KL against iterations, L2MC vs AMAGOLD at ε = {CURVE_STEP_SIZE}\n"
    );
    let _ = writeln!(
        s,
        "Curves: mean over the chains at about 5 checkpoints per decade. Slopes: least \
         squares of log KL on log samples over the last two decades (a chain whose error is \
         Monte-Carlo noise falls like 1/n_eff, slope −1; bias shows as a flattening). \
         \"AMAGOLD's cost\": how many times L2MC's samples AMAGOLD needs for the same KL \
         (L2MC's curve interpolated log-log at AMAGOLD's final KL; below 1: AMAGOLD is \
         ahead).\n"
    );
    let _ = writeln!(
        s,
        "| target | L2MC final KL | AMAGOLD final KL | L2MC slope | AMAGOLD slope | iid slope | AMAGOLD's cost |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for t in &n.targets {
        fig3_lines(&mut s, t, set.samples);
    }
    let _ = writeln!(
        s,
        "\nCharts: [Dist1 (the paper's Fig. 3)](amagold-fig3-dist1-iterations.png), \
         [Dist2](amagold-fig3-dist2-iterations.png).\n"
    );
    let _ = writeln!(
        s,
        "## Fig. 7: symmetric KL against sampling time, SGHMC vs AMAGOLD at ε = {CURVE_STEP_SIZE}\n"
    );
    let _ = writeln!(
        s,
        "Sampling time per chain, histogram counting included, KL evaluations excluded; \
         mean ± sd over the chains. \"AMAGOLD ahead from\": the sampling time after which \
         AMAGOLD's mean KL stays below SGHMC's mean KL at the same time (log-log \
         interpolation). Wall-clock figures depend on the machine and its load.\n"
    );
    let _ = writeln!(
        s,
        "| target | SGHMC µs / sample | AMAGOLD µs / sample | AMAGOLD / SGHMC | SGHMC final KL | AMAGOLD final KL | AMAGOLD ahead from |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for t in &n.targets {
        fig7_lines(&mut s, t);
    }
    let _ = writeln!(
        s,
        "\nCharts: [Dist1](amagold-fig7-dist1-time.png), [Dist2](amagold-fig7-dist2-time.png).\n"
    );
    paper_section(&mut s);
    comparison_section(&mut s, n);
    let _ = writeln!(s, "## Sensitivity to the cell width\n");
    sensitivity_table(&mut s, n);
    let _ = writeln!(s);
    s
}

fn paper_section(s: &mut String) {
    let _ = writeln!(s, "## The paper\n");
    let _ = writeln!(
        s,
        "Figs. 2, 3 and 7 are plots; the paper prints no KL values, run times or \
         acceptance rates for them. Its settings: ∇Ũ = ∇U + N(0, I), 5 × 10⁶ samples, step \
         sizes \"from 0.01 to 0.25\" (Fig. 2), ε = 0.15 (Figs. 3 and 7), and the §6 defaults \
         β = 0.25, T = 10, reversible AMAGOLD. Its claims, quoted: Fig. 2, \"On both \
         distributions, AMAGOLD's symmetric KL divergence is close to full-batch methods and \
         is much lower than SGHMC's, especially when the step size is large\", with App. \
         G.2.3: \"AMAGOLD's KL divergence grows when the step size is large compared to \
         full-batch methods … because the M-H acceptance probability decreases\"; Fig. 3, \
         \"AMAGOLD's convergence rate is the same as L2MC's (up to a constant factor slowdown \
         of about 10⁻³)\"; Fig. 7, \"At the beginning, SGHMC converges faster due to the \
         lack of M-H step, but eventually it converges to a biased distribution. AMAGOLD is \
         not much slower than SGHMC\".\n\n\
         Not printed, and chosen here: the burn-in ({BURN_IN}, the double-well figure's), the \
         starting point (the origin), the step-size grid (the double-well figure's six \
         values), how the density is estimated for the KL (histograms, rule above), HMC's \
         trajectory length (L = T, so every sampler spends T gradients per sample), SGHMC's \
         momentum handling (resampled every T steps, as in `amagold-fig1`), and the number \
         of chains. We run 10⁶ samples per chain instead of 5 × 10⁶ to keep the full run to \
         minutes; the floor column shows what that costs.\n"
    );
}

/// Mean KL of `kind` at `eps` on `t` (NaN if not measured).
fn mean_kl(t: &TargetNumbers, kind: Kind, eps: f64) -> f64 {
    t.cell(kind, eps)
        .map_or(f64::NAN, |c| c.summary(|r| r.kl).0)
}

fn comparison_section(s: &mut String, n: &Fig2Numbers) {
    let _ = writeln!(s, "## Comparison\n");
    for t in &n.targets {
        let eps: Vec<f64> = t.cells[0].iter().map(|c| c.step_size).collect();
        let large = *eps.last().unwrap_or(&f64::NAN);
        let (Some(sg), Some(am)) = (t.cell(SGHMC, large), t.cell(Kind::Amagold, large)) else {
            continue;
        };
        let (sg_mean, sg_min, _) = sg.summary(|r| r.kl);
        let (am_mean, _, am_max) = am.summary(|r| r.kl);
        let lower_at = eps
            .iter()
            .filter(|&&e| mean_kl(t, Kind::Amagold, e) < mean_kl(t, SGHMC, e))
            .count();
        let separated = sg_min > am_max;
        let full = |e: f64| mean_kl(t, Kind::Hmc, e).min(mean_kl(t, Kind::L2mc, e));
        let closeness: Vec<String> = eps
            .iter()
            .map(|&e| format!("{:.2}", mean_kl(t, Kind::Amagold, e) / full(e)))
            .collect();
        let _ = writeln!(
            s,
            "- **{} (Fig. 2).** AMAGOLD's mean KL is below SGHMC's at {lower_at} of {} step \
             sizes; at ε = {large} SGHMC's is {:.2}× AMAGOLD's ({} against {}), and {} — \
             {}. AMAGOLD / best full-gradient sampler (HMC or L2MC) per ε: {} (iid \
             floor {}); AMAGOLD's excess over the full-gradient samplers grows with ε as its \
             acceptance falls ({}), as App. G.2.3 says, but stays a factor of about 2, not \
             SGHMC's growing bias. At ε = 0.01 every sampler is far above the floor: 10⁶ \
             samples of 10 steps of 0.01 do not explore the target.",
            t.label,
            eps.len(),
            sg_mean / am_mean,
            kl(sg_mean),
            kl(am_mean),
            if separated {
                "every SGHMC chain is worse than every AMAGOLD chain"
            } else {
                "the chains' ranges overlap"
            },
            if separated && sg_mean > 1.5 * am_mean {
                "the paper's ordering holds"
            } else if sg_mean > am_mean {
                "the paper's ordering holds only weakly (\"much lower\" does not)"
            } else {
                "the paper's claim does NOT hold here"
            },
            closeness.join(", "),
            kl(t.iid_kl()),
            eps.iter()
                .map(|&e| format!(
                    "{:.2}",
                    t.cell(Kind::Amagold, e)
                        .map_or(f64::NAN, |c| c.summary(|r| r.acceptance).0)
                ))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    let _ = writeln!(
        s,
        "- **Fig. 3.** The slopes and AMAGOLD's cost factor are in the table above: a cost \
         factor near 1 and equal slopes mean AMAGOLD converges as fast as L2MC per sample \
         (the paper's \"same rate up to a constant\"); its acceptance at ε = {CURVE_STEP_SIZE} is \
         below L2MC's (Fig. 2 tables), which is where a constant would come from. The \
         paper's \"constant factor slowdown of about 10⁻³\" cannot be read as a ratio of \
         rates (a slowdown of 1000×, or of 0.1 %?); the figure's curves are not printed.\n\
         - **Fig. 7.** AMAGOLD's one full-data U per T = 10 steps (here an analytic U, as \
         the paper notes, so minibatching saves nothing) makes an AMAGOLD sample cost the \
         table's AMAGOLD / SGHMC ratio times an SGHMC sample; once SGHMC's KL levels off \
         at its bias, AMAGOLD overtakes it in time, from the time in the table's last \
         column (\"not within the run\" if it never does).\n"
    );
}

fn curve_series(label: &str, curve: &[(f64, f64, f64)], time: bool, style: SeriesStyle) -> Series {
    Series {
        label: label.into(),
        points: curve
            .iter()
            .map(|&(n, kl, t)| (if time { t } else { n }, kl))
            .collect(),
        style,
    }
}

pub(super) fn charts(n: &Fig2Numbers) -> Vec<Chart> {
    let mut charts = Vec::new();
    for t in &n.targets {
        let stem = t.label.to_lowercase();
        let mut series: Vec<Series> = t
            .cells
            .iter()
            .map(|cells| Series {
                label: cells[0].kind.label().into(),
                points: cells
                    .iter()
                    .map(|c| (c.step_size, c.summary(|r| r.kl).0))
                    .collect(),
                style: SeriesStyle::Line,
            })
            .collect();
        let eps: Vec<f64> = t.cells[0].iter().map(|c| c.step_size).collect();
        series.push(Series {
            label: "iid draws (Monte-Carlo floor)".into(),
            points: eps.iter().map(|&e| (e, t.iid_kl())).collect(),
            style: SeriesStyle::Dashed,
        });
        charts.push(Chart {
            file_stem: format!("amagold-fig2-{stem}-kl"),
            title: format!("{}: symmetric KL vs step size (AMAGOLD Fig. 2)", t.label),
            x_label: "step size ε".into(),
            y_label: "symmetric KL (mean over chains)".into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Log10,
            series,
            categories: Vec::new(),
        });
    }
    for t in &n.targets {
        let stem = t.label.to_lowercase();
        let mut series = Vec::new();
        for k in [Kind::L2mc, Kind::Amagold] {
            if let Some(c) = t.cell(k, CURVE_STEP_SIZE) {
                series.push(curve_series(
                    k.label(),
                    &c.mean_curve(),
                    false,
                    SeriesStyle::Line,
                ));
            }
        }
        series.push(curve_series(
            "iid draws",
            &t.iid[0].curve,
            false,
            SeriesStyle::Dashed,
        ));
        charts.push(Chart {
            file_stem: format!("amagold-fig3-{stem}-iterations"),
            title: format!(
                "{}: symmetric KL vs iterations, ε = {CURVE_STEP_SIZE} (AMAGOLD Fig. 3)",
                t.label
            ),
            x_label: "samples (T = 10 gradients each)".into(),
            y_label: "symmetric KL (mean over chains)".into(),
            x_scale: Scale::Log10,
            y_scale: Scale::Log10,
            series,
            categories: Vec::new(),
        });
    }
    for t in &n.targets {
        let stem = t.label.to_lowercase();
        let series = [SGHMC, Kind::Amagold]
            .iter()
            .filter_map(|&k| t.cell(k, CURVE_STEP_SIZE))
            .map(|c| curve_series(c.kind.label(), &c.mean_curve(), true, SeriesStyle::Line))
            .collect();
        charts.push(Chart {
            file_stem: format!("amagold-fig7-{stem}-time"),
            title: format!(
                "{}: symmetric KL vs sampling time, ε = {CURVE_STEP_SIZE} (AMAGOLD Fig. 7)",
                t.label
            ),
            x_label: "sampling time (s)".into(),
            y_label: "symmetric KL (mean over chains)".into(),
            x_scale: Scale::Log10,
            y_scale: Scale::Log10,
            series,
            categories: Vec::new(),
        });
    }
    charts
}
