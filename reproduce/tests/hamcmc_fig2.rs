//! `hamcmc-fig2`: the quick run's curves and a property that must hold.

use qnmc_reproduce::{self as reproduce, ReproduceOptions, hamcmc_fig2};

fn quick() -> ReproduceOptions {
    ReproduceOptions {
        seed: 2016,
        quick: true,
    }
}

#[test]
fn quick_run_has_one_finite_curve_per_sampler_and_dimension() {
    let panels = hamcmc_fig2::panels(&quick());
    assert_eq!(
        panels.iter().map(|p| p.dimension).collect::<Vec<_>>(),
        [10, 100]
    );
    for p in &panels {
        assert_eq!(p.curves.len(), 5, "D = {}", p.dimension);
        assert!(p.curves[4].sampler.starts_with("SGRLD, dense Fisher"));
        for c in &p.curves {
            assert!(c.failure.is_none(), "{}: {:?}", c.sampler, c.failure);
            assert_eq!(c.iterations, hamcmc_fig2::QUICK_ITERATIONS);
            assert!(
                c.points
                    .iter()
                    .all(|&(t, s, e)| t >= 1.0 && s >= 0.0 && e.is_finite()),
                "{}",
                c.sampler
            );
        }
    }
}

/// HAMCMC's and SGRLD's estimates improve: the error of the weighted mean after the quick
/// run is below the error after its first draw. From θ₀ = 0 the first error is
/// ‖θ̄‖² (about D·Var(θ̄) for the simulated data), and the quick run's
/// weighted average has moved towards θ̄; a factor of 2 leaves room for the
/// Monte-Carlo noise of one run (fixed seed).
#[test]
fn hamcmc_error_at_the_end_is_below_its_error_at_the_start() {
    for p in hamcmc_fig2::panels(&quick()) {
        for c in p
            .curves
            .iter()
            .filter(|c| c.sampler.starts_with("HAMCMC") || c.sampler.starts_with("SGRLD"))
        {
            assert!(
                c.final_error() < 0.5 * c.first_error(),
                "D = {}, {}: {} → {}",
                p.dimension,
                c.sampler,
                c.first_error(),
                c.final_error()
            );
        }
    }
}

/// The rerun with tuned constant steps: SGLD, pSGLD, HAMCMC M = 2 and
/// M = 3 for both dimensions, each run to the end from θ = 0 with finite
/// errors, and each estimate better at the end than at its first window
/// (from θ = 0 the first error is about 9 posterior sds; a factor of 2
/// leaves room for one short run's noise).
#[test]
fn equal_effort_rerun_has_four_improving_curves_per_dimension() {
    let rerun = hamcmc_fig2::equal_effort_panels(&quick());
    assert_eq!(
        rerun.iter().map(|p| p.dimension).collect::<Vec<_>>(),
        [10, 100]
    );
    for p in &rerun {
        assert!(p.failure.is_none(), "{:?}", p.failure);
        let labels: Vec<&str> = p.curves.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["sgld", "psgld", "hamcmc M=2", "hamcmc M=3"]);
        for c in &p.curves {
            assert!(c.failure.is_none(), "{}: {:?}", c.label, c.failure);
            assert_eq!(c.iterations, hamcmc_fig2::QUICK_ITERATIONS);
            let first = c.points.first().unwrap().mean_error;
            let last = c.last().unwrap().mean_error;
            // HAMCMC at D = 100 needs far more than the quick run's 2000
            // iterations (9.9 → 4.4 and 5.7 sds, SGLD 9.1 → 0.47): only
            // "better than the start" is asked of it there.
            let factor = if p.dimension == 100 && c.label.starts_with("hamcmc") {
                1.0
            } else {
                0.5
            };
            assert!(
                last < factor * first,
                "D = {}, {}: {first} → {last}",
                p.dimension,
                c.label
            );
        }
    }
}

#[test]
fn report_has_four_log_log_charts_and_says_it_was_quick() {
    let rep = reproduce::run("hamcmc-fig2", &quick()).expect("a known name");
    assert!(rep.markdown.contains("Quick run"));
    assert!(!rep.markdown.contains("not built"));
    assert!(
        rep.markdown
            .contains("SGRLD with the dense inverse Fisher information")
    );
    assert!(rep.markdown.contains("Rerun with tuned constant steps"));
    assert_eq!(rep.charts.len(), 4);
}

/// The full run; prints the report (used to measure the numbers quoted in
/// the docs).
#[test]
#[ignore]
fn full_run_prints_report() {
    let rep = hamcmc_fig2::run(&ReproduceOptions::default());
    println!("{}", rep.markdown);
    assert!(!rep.markdown.is_empty());
}
