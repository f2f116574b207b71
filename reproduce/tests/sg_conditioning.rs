//! `sg-conditioning`: the quick run's shape, the step rule's choice, and
//! that the preconditioned samplers improve on their start.

use std::sync::OnceLock;

use qnmc_reproduce::sg_conditioning::{self, CONDITIONS, GRID};
use qnmc_reproduce::{self as reproduce, ReproduceOptions};

fn quick() -> ReproduceOptions {
    ReproduceOptions {
        seed: 2016,
        quick: true,
    }
}

/// The quick run's panels, computed once for the tests of this file.
fn panels() -> &'static [sg_conditioning::Panel] {
    static PANELS: OnceLock<Vec<sg_conditioning::Panel>> = OnceLock::new();
    PANELS.get_or_init(|| sg_conditioning::panels(&quick()))
}

/// Every panel ran (six: two models × three condition numbers), with one
/// curve per sampler (five plus HAMCMC with M − 1 = D pairs); every chosen
/// run went the full length with finite errors, and the chosen multiplier is
/// the trial with the smallest score.
#[test]
fn quick_run_has_every_panel_and_curve_and_the_step_rule_picks_the_best_trial() {
    let panels = panels();
    let sizes = sg_conditioning::sizes(true);
    assert_eq!(panels.len(), 2 * CONDITIONS.len());
    for p in panels {
        assert!(p.posterior_condition.is_finite(), "{}", p.reference);
        assert_eq!(p.curves.len(), sg_conditioning::SAMPLERS.len() + 1);
        for c in &p.curves {
            assert!(c.failure.is_none(), "{}: {:?}", c.label, c.failure);
            assert_eq!(c.iterations, sizes.iterations, "{}", c.label);
            assert!(
                c.points
                    .iter()
                    .all(|q| q.mean_error.is_finite() && q.covariance_error.is_finite()),
                "{}",
                c.label
            );
            assert_eq!(c.grid_scores.len(), GRID.len());
            let best = c.grid_scores.iter().copied().fold(f64::INFINITY, f64::min);
            let chosen = GRID.iter().position(|&m| m == c.multiplier).unwrap();
            assert_eq!(c.grid_scores[chosen], best, "{}", c.label);
        }
    }
}

/// From the mode ± 2 Laplace sds the estimate of the mean must improve on
/// the start: the first window holds a couple of draws near the start
/// (mean error about 2/√3 ≈ 1.2 sds per coordinate, more in whitened units
/// along thin directions), and after the quick run every chosen sampler's
/// error is below half its first value. One seed; a factor of 2 leaves room
/// for the noise of a short run.
#[test]
fn every_sampler_improves_on_its_start() {
    for p in panels() {
        for c in &p.curves {
            let first = c.points.first().unwrap().mean_error;
            let last = c.last().unwrap().mean_error;
            assert!(
                last < 0.5 * first,
                "{} κ {}: {} → {} ({})",
                p.reference,
                p.condition,
                first,
                last,
                c.label
            );
        }
    }
}

#[test]
fn report_has_four_charts_per_panel_and_the_time_ratio_table() {
    let rep = reproduce::run("sg-conditioning", &quick()).expect("a known name");
    assert!(rep.markdown.contains("Quick run"));
    assert!(rep.markdown.contains("HAMCMC against SGLD in wall time"));
    assert_eq!(rep.charts.len(), 4 * 2 * CONDITIONS.len());
}
