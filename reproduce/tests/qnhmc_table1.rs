//! `qnhmc-table1`: the quick run's table and a property that must hold.

use qnmc_reproduce::{self as reproduce, ReproduceOptions, qnhmc_table1};

fn quick() -> ReproduceOptions {
    ReproduceOptions {
        seed: 2016,
        quick: true,
    }
}

#[test]
fn quick_run_has_one_finite_row_per_sampler() {
    let rows = qnhmc_table1::rows(&quick());
    assert_eq!(rows.len(), 4);
    for r in &rows {
        assert!(r.sum_autocorrelation.is_finite(), "{}", r.sampler);
        assert!(r.ess.is_finite() && r.ess_bulk.is_finite(), "{}", r.sampler);
        assert!(
            r.seconds > 0.0 && r.ess_per_second.is_finite(),
            "{}",
            r.sampler
        );
        assert!((0.0..=1.0).contains(&r.acceptance), "{}", r.sampler);
    }
}

#[test]
fn report_cites_the_paper_and_says_it_was_quick() {
    let rep = reproduce::run("qnhmc-table1", &quick()).expect("a known name");
    assert_eq!(rep.name, "qnhmc-table1");
    assert!(rep.markdown.contains("Quick run"));
    // The paper's printed values sit beside ours.
    assert!(rep.markdown.contains("98.27") && rep.markdown.contains("7936"));
    assert_eq!(rep.charts.len(), 2);
    assert!(rep.charts.iter().all(|c| c.series.len() == 4));
}

/// The full run at the paper's settings; prints the report (used to measure
/// the numbers quoted in the docs). Takes tens of seconds in release mode.
#[test]
#[ignore]
fn full_run_prints_report() {
    let rep = qnhmc_table1::run(&ReproduceOptions::default());
    println!("{}", rep.markdown);
    assert!(!rep.markdown.is_empty());
}

/// At the paper's ε = 0.01 and L = 10, HMC is a slow random walk along the
/// all-ones direction (the report's explanation of why its Σρ_k is far above
/// the paper's): a draw rotates that component by εL/√104 ≈ 0.01 rad, so the
/// lag-1 autocorrelation is cos(0.01) ≈ 0.99995 in theory. The estimator is
/// biased down by O(1/n) relative to the chain's spread (n = 2000 draws
/// here), far less than the 0.05 margin used.
#[test]
fn hmc_at_the_papers_settings_is_a_slow_random_walk_along_ones() {
    let rows = qnhmc_table1::rows(&quick());
    let hmc = &rows[0];
    assert!(hmc.sampler.starts_with("HMC ("), "{}", hmc.sampler);
    assert!(
        hmc.autocorrelation[1] > 0.95,
        "lag-1 autocorrelation {}",
        hmc.autocorrelation[1]
    );
}
