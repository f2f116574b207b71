use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use super::measure::smoothed_kl;
use super::report::{log_log_slope, samples_to_reach};
use super::*;
use qnmc_host::targets::Histogram;

/// Mean and variance of one coordinate of `n` exact draws.
fn moments<T: Dist>(t: &T, n: usize, axis: usize, seed: u64) -> (f64, f64) {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let xs: Vec<f64> = (0..n).map(|_| t.exact_draw(&mut rng)[axis]).collect();
    let m = xs.iter().sum::<f64>() / n as f64;
    let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n as f64 - 1.0);
    (m, v)
}

/// The exact draws have the targets' moments: Dist1 E z₁ = E z₂²/4 = 1,
/// var z₁ = var(z₂²/4) + 1 = 3, var z₂ = 4; Dist2 mean 0 and variance 2 on
/// both axes. Thresholds: 5 Monte-Carlo standard errors (for the variances
/// of the Gaussian z₂ and the mixture's axes, sd(v̂) ≈ v·√(2/n), with the
/// heavier-tailed Dist2 marginal's kurtosis bounded by that of 3·N(0, 2)
/// mixtures, so ×√2 more).
#[test]
fn exact_draws_have_the_targets_moments() {
    let n = 20_000;
    let d1 = AmagoldDist1::paper();
    let (m1, v1) = moments(&d1, n, 0, 1);
    assert!((m1 - 1.0).abs() < 5.0 * (3.0 / n as f64).sqrt(), "{m1}");
    assert!((v1 - 3.0).abs() < 0.5, "{v1}");
    let (m2, v2) = moments(&d1, n, 1, 2);
    assert!(m2.abs() < 5.0 * (4.0 / n as f64).sqrt(), "{m2}");
    assert!(
        (v2 - 4.0).abs() < 5.0 * 4.0 * (2.0 / n as f64).sqrt(),
        "{v2}"
    );
    let d2 = AmagoldDist2::paper();
    for axis in 0..2 {
        let (m, v) = moments(&d2, n, axis, 3 + axis as u64);
        assert!(m.abs() < 5.0 * (2.0 / n as f64).sqrt(), "{m}");
        assert!((v - 2.0).abs() < 5.0 * 2.0 * (4.0 / n as f64).sqrt(), "{v}");
    }
}

/// Dist2's two components are equally likely: the sign of z₁z₂ is a fair
/// coin (|z₁z₂| > 0 almost surely and each component puts 0.85 of its mass
/// on its own diagonal). Checks the coin, not just the moments.
#[test]
fn dist2_draws_fill_both_diagonals() {
    let mut rng = XorShiftRng::seed_from_u64(9);
    let t = AmagoldDist2::paper();
    let n = 20_000;
    let positive = (0..n)
        .filter(|_| {
            let z = t.exact_draw(&mut rng);
            z[0] * z[1] > 0.0
        })
        .count() as f64
        / n as f64;
    assert!(
        (positive - 0.5).abs() < 5.0 * (0.25 / n as f64).sqrt(),
        "{positive}"
    );
}

/// The measure is 0 for a histogram equal to n·p, positive otherwise, and a
/// cell π never reaches costs nothing when the chain does not reach it either.
#[test]
fn smoothed_kl_is_zero_at_the_truth() {
    let p = [0.5, 0.25, 0.25, 0.0];
    let exact = Histogram {
        counts: p.iter().map(|x| 1000.0 * x).collect(),
        outside: 0.0,
    };
    assert!(smoothed_kl(&p, &exact).abs() < 1e-12);
    let off = Histogram {
        counts: vec![400.0, 350.0, 250.0, 0.0],
        outside: 0.0,
    };
    assert!(smoothed_kl(&p, &off) > 1e-3);
    // The raw measure charges the empty cell p = 0: infinite.
    assert!(
        qnmc_host::targets::symmetric_kl_divergence(&p, &exact.smoothed_probabilities())
            .is_infinite()
    );
}

#[test]
fn checkpoints_run_from_100_to_the_end() {
    let c = checkpoints(20_000);
    assert!((100..200).contains(&c[0]), "{c:?}");
    assert_eq!(c.last(), Some(&20_000));
    assert!(c.windows(2).all(|w| w[0] < w[1]));
    assert!(c.len() >= 10, "{c:?}");
}

#[test]
fn curve_helpers_on_a_power_law() {
    let curve: Vec<(f64, f64, f64)> = [100.0, 1000.0, 10_000.0]
        .iter()
        .map(|&n| (n, 10.0 / n, 0.0))
        .collect();
    assert!((log_log_slope(&curve, 0.0) + 1.0).abs() < 1e-12);
    let n = samples_to_reach(&curve, 10.0 / 3000.0).unwrap();
    assert!((n - 3000.0).abs() < 1e-6, "{n}");
    assert_eq!(samples_to_reach(&curve, 1e-9), None);
}

/// A full-gradient chain with a Metropolis test is exact: L2MC on Dist2 at
/// ε = 0.15 comes within a small factor of the iid floor at the same n, and
/// the histogram measure separates it from an iid reference of 4× fewer
/// draws being worse (the measure sees sample size).
#[test]
fn l2mc_is_near_the_iid_floor() {
    let t = AmagoldDist2::paper();
    let w = (CELL_WIDTH, FINE_CELL_WIDTH);
    let chain = run_chain(&t, Kind::L2mc, 0.15, 20_000, w, 11);
    let iid = iid_reference(&t, 20_000, w, 12);
    let iid_small = iid_reference(&t, 5_000, w, 13);
    assert!(chain.acceptance > 0.9, "{}", chain.acceptance);
    assert!(chain.kl < 3.0 * iid.kl, "{} vs {}", chain.kl, iid.kl);
    assert!(
        iid_small.kl > 2.0 * iid.kl,
        "{} vs {}",
        iid_small.kl,
        iid.kl
    );
    assert_eq!(chain.curve.last().map(|p| p.0), Some(20_000.0));
}

/// A small sweep yields every table row and all six charts, with curves at
/// the checkpoints; a sampler's seeds do not depend on the other samplers.
#[test]
fn small_sweep_has_rows_and_charts() {
    let settings = Settings {
        samples: 1_000,
        repeats: 2,
        step_sizes: vec![0.05, CURVE_STEP_SIZE],
    };
    let n = numbers_with(&settings, 5);
    assert_eq!(n.targets.len(), 2);
    for t in &n.targets {
        assert_eq!(t.cells.len(), KINDS.len());
        assert!(t.cells.iter().all(|c| c.len() == 2 && c[0].runs.len() == 2));
        assert!(
            t.box_mass > 0.999 && t.box_mass <= 1.0 + 1e-9,
            "{}",
            t.box_mass
        );
        let c = t.cell(Kind::Amagold, CURVE_STEP_SIZE).unwrap();
        assert_eq!(c.mean_curve().len(), checkpoints(1_000).len());
    }
    let md = report::markdown(&n, &ReproduceOptions::default());
    for needle in [
        "## Fig. 2b",
        "## Fig. 2d",
        "## Fig. 3",
        "## Fig. 7",
        "## The paper",
    ] {
        assert!(md.contains(needle), "missing {needle}");
    }
    assert_eq!(md.matches("\n| 0.15 |").count(), 2);
    let charts = report::charts(&n);
    let stems: Vec<&str> = charts.iter().map(|c| c.file_stem.as_str()).collect();
    assert_eq!(
        stems,
        [
            "amagold-fig2-dist1-kl",
            "amagold-fig2-dist2-kl",
            "amagold-fig3-dist1-iterations",
            "amagold-fig3-dist2-iterations",
            "amagold-fig7-dist1-time",
            "amagold-fig7-dist2-time"
        ]
    );
    for c in &charts {
        assert!(
            md.contains(&format!("({}.png)", c.file_stem)),
            "{}",
            c.file_stem
        );
    }
}

/// The paper's Fig. 2 claim in small: on Dist2 at ε = 0.25, 5 × 10⁴ samples,
/// SGHMC's density error is more than twice AMAGOLD's (the full run: 48×;
/// the iid floor at this n is about 5 × 10⁻³, SGHMC's bias alone 0.044).
#[test]
fn sghmc_is_biased_where_amagold_is_not() {
    let t = AmagoldDist2::paper();
    let w = (CELL_WIDTH, FINE_CELL_WIDTH);
    let sg = run_chain(&t, KINDS[2], 0.25, 50_000, w, 21);
    let am = run_chain(&t, Kind::Amagold, 0.25, 50_000, w, 22);
    assert!(sg.kl > 2.0 * am.kl, "SGHMC {} vs AMAGOLD {}", sg.kl, am.kl);
    assert_eq!(sg.failures, 0);
}
