//! `qnhmc-table1`: the quick run's table and a property that must hold.

use qnmc_host::reproduce::{self, ReproduceOptions, qnhmc_table1};

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
