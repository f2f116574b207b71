//! `hamcmc-fig2`: the quick run's curves and a property that must hold.

use qnmc_host::reproduce::{self, ReproduceOptions, hamcmc_fig2};

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
        assert_eq!(p.curves.len(), 4, "D = {}", p.dimension);
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

/// HAMCMC's estimate improves: the error of the weighted mean after the quick
/// run is below the error after its first draw. From θ₀ = 0 the first error is
/// ‖θ̄‖² (about D·Var(θ̄) for the simulated data), and the quick run's
/// weighted average has moved towards θ̄; a factor of 2 leaves room for the
/// Monte-Carlo noise of one run (fixed seed).
#[test]
fn hamcmc_error_at_the_end_is_below_its_error_at_the_start() {
    for p in hamcmc_fig2::panels(&quick()) {
        for c in p.curves.iter().filter(|c| c.sampler.starts_with("HAMCMC")) {
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

#[test]
fn report_has_four_log_log_charts_and_says_it_was_quick() {
    let rep = reproduce::run("hamcmc-fig2", &quick()).expect("a known name");
    assert!(rep.markdown.contains("Quick run"));
    assert!(rep.markdown.contains("not built"));
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
