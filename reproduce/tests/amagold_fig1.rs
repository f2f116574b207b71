//! `amagold-fig1` quick run: a complete report and the paper's property.

use qnmc_reproduce::ReproduceOptions;
use qnmc_reproduce::amagold_fig1::{self, Method, STEP_SIZES};

/// The quick run's report has a row per step size with a finite number for
/// every method, says it was quick, and carries both charts.
///
/// The property: at the largest step size (0.25) the paper-form SGHMC's (the
/// core's position-first order) symmetric KL exceeds AMAGOLD's. Why this is a
/// safe threshold: with 10⁴ samples both carry the same histogram Monte-Carlo
/// floor (≈ 0.045 measured over seeds 1–3 and 2016, run-to-run spread
/// ≈ 0.005), and SGHMC adds its
/// step-size bias, ≈ 0.06 in the full run (0.067 vs AMAGOLD's 0.005 there) —
/// about ten spreads above the floor. AMAGOLD is exact, so its KL must also
/// stay below 0.2 for every ε ≥ 0.05 (4× the floor) and it must not diverge.
#[test]
fn quick_run_reports_every_sampler_and_amagold_beats_sghmc_at_large_steps() {
    let options = ReproduceOptions {
        seed: 2016,
        quick: true,
    };
    let r = amagold_fig1::run(&options);
    assert_eq!(r.name, "amagold-fig1");
    assert!(r.markdown.contains("Quick run"));
    for eps in STEP_SIZES {
        assert!(
            r.markdown.contains(&format!("\n| {eps} |")),
            "no row for ε = {eps}:\n{}",
            r.markdown
        );
    }
    assert_eq!(r.charts.len(), 2);
    assert_eq!(r.charts[0].series.len(), 3);

    let n = amagold_fig1::numbers(&options);
    assert_eq!(n.methods[0], Method::Amagold);
    assert_eq!(n.methods[1], Method::SghmcPositionFirst);
    assert_eq!(n.methods[2], Method::SghmcRecipeEuler);
    for cells in &n.cells {
        assert_eq!(cells.len(), STEP_SIZES.len());
        assert!(cells.iter().all(|c| c.kl.is_finite() && c.kl >= 0.0));
    }
    let last = STEP_SIZES.len() - 1;
    let (amagold, sghmc) = (n.cells[0][last].kl, n.cells[1][last].kl);
    println!("ε = 0.25: AMAGOLD {amagold:.4}, SGHMC {sghmc:.4}");
    assert!(sghmc > amagold, "SGHMC {sghmc} vs AMAGOLD {amagold}");
    for c in &n.cells[0][1..] {
        assert!(c.kl < 0.2 && c.outside == 0.0, "{c:?}");
    }
    assert!(
        n.cells[1]
            .iter()
            .all(|c| c.outside == 0.0 && c.failures == 0)
    );
    let (tuned, eps) = n.tuned;
    assert!((tuned.acceptance - 0.85).abs() < 0.05, "{tuned:?}");
    assert!(eps > 0.05 && eps < 0.25, "adapted ε = {eps}");
}
