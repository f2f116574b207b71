use super::write_up::first_reaching;
use super::*;

fn quick() -> ReproduceOptions {
    ReproduceOptions {
        quick: true,
        ..ReproduceOptions::default()
    }
}

/// The quick run (pmf-small's data, D = 9960): MAP lowers U from the
/// start and beats the training-mean baseline; every sampler runs every
/// update from it, spend at most L gradients per update, accept some updates at the paper's ε, and the
/// averaged RMSE is NaN exactly during warm-up (the probe's: never); the report and charts name
/// every method of Table 3.
#[test]
fn the_quick_run_completes_for_every_sampler() {
    let options = quick();
    let e = experiment(&options).unwrap();
    let (iterations, warmup) = QUICK;
    assert!(e.map.iterations > 0 && e.map.potential.is_finite());
    assert!(
        e.map_rmse < e.mean_baseline,
        "{} {}",
        e.map_rmse,
        e.mean_baseline
    );
    assert_eq!(e.runs.len(), Kind::ALL.len());
    for runs in &e.runs {
        let c = &runs.curves[0];
        let label = runs.kind.label();
        assert_eq!(c.failure, None, "{label}");
        assert_eq!(c.mean_rmse.len(), iterations, "{label}");
        assert!(c.mean_rmse[..warmup].iter().all(|r| r.is_nan()));
        assert!(
            c.mean_rmse[warmup..]
                .iter()
                .all(|r| r.is_finite() && *r > 0.0)
        );
        assert!(c.accepted > 0, "{label} accepted nothing at the paper's ε");
        // At most L per update (a trajectory that diverges stops early).
        let per = (c.gradients[iterations - 1] - runs.kind.starts()) as f64 / iterations as f64;
        assert!(
            per > 0.0 && per <= f64::from(LEAPFROG_STEPS),
            "{label} {per}"
        );
        assert!(c.seconds.windows(2).all(|w| w[0] <= w[1]));
        assert!(c.step_size > 0.0 && c.step_size.is_finite(), "{label}");
        // The probe: the paper's ε, every draw averaged.
        let p = &runs.probe;
        assert_eq!(p.failure, None, "{label}");
        assert_eq!(p.step_size, PAPER_STEP_SIZE);
        assert_eq!(p.updates(), PROBE_UPDATES / 3);
        assert!(p.mean_rmse.iter().all(|r| r.is_finite()), "{label}");
    }
    assert_eq!(e.sensitivity.len(), Variant::all().len());
    for (variant, c) in &e.sensitivity {
        assert_eq!(c.failure, None, "{}", variant.label());
        assert_eq!(c.mean_rmse.len(), iterations, "{}", variant.label());
        assert!(c.final_mean_rmse().is_finite(), "{}", variant.label());
    }
    let md = write_up::markdown(&e, &options);
    for (variant, _) in &e.sensitivity {
        assert!(md.contains(&variant.label()), "{}", variant.label());
    }
    for (label, rmse, _) in PAPER {
        assert!(
            md.contains(label) && md.contains(&rmse.to_string()),
            "{label}"
        );
    }
    assert!(md.contains("Quick run") && md.contains("## Verdict"));
    assert!(!md.contains('{'), "a placeholder was left unformatted");
    let charts = write_up::charts(&e);
    assert_eq!(charts.len(), 3);
    for chart in &charts {
        for label in ["HMC", "QNHMC", "HMC-BFGS", "MAP"] {
            assert!(chart.series.iter().any(|s| s.label == label), "{label}");
        }
    }
}

/// MAP on a small model with signal: U goes down from the start, the
/// hyperparameters' gradient vanishes at their conditional mode (to
/// round-off against the start's), and the fit predicts the test ratings
/// better than their training mean.
#[test]
fn map_estimate_fits_the_factors_and_sets_the_hyperparameters() {
    use qnmc_host::targets::{Hyper, SyntheticRecipe};
    let ratings = SyntheticRecipe::new(60, 40, 1200, 5)
        .with_min_per_user(5)
        .build()
        .unwrap();
    let model = BayesianPmf::new(ratings, 3).unwrap();
    let target = PaddedModel::<LARGE_DIMENSION>::new(&model)
        .unwrap()
        .frozen_padding();
    let start = model.initial_point();
    let n = start.len();
    let mut g0 = vec![0.0; n];
    let u0 = model.potential_and_gradient(&start, &mut g0);
    let fit = map_estimate(&model, &target, 500, 1e-12).unwrap();
    let mut g = vec![0.0; n];
    let u = model.potential_and_gradient(&fit.position, &mut g);
    assert_eq!(u, fit.potential);
    assert!(u < u0, "{u} {u0}");
    let hyper = model.hyper_index(Hyper::MuU, 0)..n;
    let largest = |v: &[f64]| v.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    assert!(
        largest(&g[hyper.clone()]) < 1e-9 * largest(&g0),
        "{} {}",
        largest(&g[hyper]),
        largest(&g0)
    );
    let mut predictions = vec![0.0; model.ratings().test().len()];
    let rmse = draw_rmse(&model, &fit.position, &mut predictions);
    let mean = model.ratings().train().mean();
    let baseline = model.ratings().test_rmse(&vec![mean; predictions.len()]);
    assert!(rmse < 0.95 * baseline, "{rmse} {baseline}");
}

/// The update from which on the averaged RMSE stays at or below the level,
/// 1-based: a dip that does not last does not count, burn-in (NaN) counts
/// as above, and a chain that ends above never reached it.
#[test]
fn first_reaching_is_one_based_and_must_last() {
    let curve = |r: &[f64]| Curve {
        mean_rmse: r.to_vec(),
        ..Curve::default()
    };
    assert_eq!(
        first_reaching(&curve(&[f64::NAN, 1.2, 0.9, 0.8]), 1.0),
        Some(3)
    );
    assert_eq!(
        first_reaching(&curve(&[f64::NAN, 0.9, 1.1, 0.8]), 1.0),
        Some(4)
    );
    assert_eq!(first_reaching(&curve(&[0.9, 0.8]), 1.0), Some(1));
    assert_eq!(first_reaching(&curve(&[f64::NAN, 0.9, 1.1]), 1.0), None);
    assert_eq!(first_reaching(&curve(&[f64::NAN, f64::NAN]), 1.0), None);
    assert_eq!(first_reaching(&curve(&[]), 1.0), None);
}
