//! The demo's table is computed from real runs: a short run must give four rows
//! whose numbers are internally consistent, and whose exact samplers land near
//! the truth.

use qnmc_cli::demo::{DemoSettings, run, table};

#[test]
fn short_demo_run_is_consistent() {
    let settings = DemoSettings {
        seed: 11,
        chains: 2,
        warmup: 300,
        draws: 600,
    };
    let rows = run(&settings);
    assert_eq!(rows.len(), 4);
    for r in &rows {
        assert!(r.acceptance > 0.3 && r.acceptance <= 1.0, "{r:?}");
        assert!(r.min_ess.is_finite() && r.min_ess > 10.0, "{r:?}");
        assert!(r.ess_ones.is_finite() && r.ess_ones > 10.0, "{r:?}");
        let cost = r.gradients_per_draw * (settings.chains * settings.draws) as f64;
        assert!((r.gradients_per_ess - cost / r.min_ess.min(r.ess_ones)).abs() < 1e-9 * cost);
        assert_eq!(r.divergences, 0, "{r:?}");
    }
    // HMC and the two frozen QNHMC variants are exact: with at least ~100
    // effective draws per coordinate, a mean error of 0.6 sd is > 6 MCSE.
    for r in rows.iter().filter(|r| r.exact) {
        assert!(r.max_mean_error < 0.6, "{r:?}");
        assert!(r.marginal_variance_error < 0.2, "{r:?}");
    }
    let md = table(&rows);
    assert_eq!(md.lines().count(), 2 + rows.len());
    assert!(md.lines().all(|l| l.matches('|').count() == 13), "{md}");
}
