use super::report::mse_at_time;
use super::*;

/// A reference good enough for the sampler tests: the long-run posterior mean
/// on Heart (HMC, 4 × 1000 draws), cheap in debug.
fn heart_reference() -> Reference {
    reference(LogregDataset::Heart, 1000, 7)
}

/// The built-in models have the paper's sizes, and the reference's own error
/// is far below the start-line error every chain begins at.
#[test]
fn models_and_reference_have_the_papers_sizes() {
    let a = model::<15, 32>(LogregDataset::Australian);
    let h = model::<14, 16>(LogregDataset::Heart);
    assert_eq!((a.len(), h.len()), (690, 270));
    let r = heart_reference();
    assert_eq!(r.mean.len(), 14);
    let start = mse(&[0.0; 14], &r.mean);
    assert!(start > 0.1, "{start}");
    assert!(r.mse_floor() < 1e-3 * start, "{} vs {start}", r.mse_floor());
}

/// Fig. 8's property: AMAGOLD's acceptance falls with ε on Heart — near 1
/// at 10⁻⁴, well below at 5·10⁻³ (full run: 0.99 against about 0.5). With
/// 2000 tests the standard error of a rate is at most 0.011, so a gap of 0.2
/// is more than 15 of them.
#[test]
fn acceptance_falls_with_the_step_size() {
    let r = heart_reference();
    let t = model::<14, 16>(LogregDataset::Heart);
    let small = run_chain(&t, &r, Kind::Amagold, 1e-4, 200, 2000, 31);
    let large = run_chain(&t, &r, Kind::Amagold, 5e-3, 200, 2000, 32);
    assert!(small.acceptance > 0.95, "{}", small.acceptance);
    assert!(
        large.acceptance < small.acceptance - 0.2,
        "{} vs {}",
        large.acceptance,
        small.acceptance
    );
    assert!(large.acceptance > 0.1, "{}", large.acceptance);
}

/// The bias AMAGOLD removes: on Heart at ε = 5·10⁻³ the minibatch noise
/// heats SGHMC without momentum resampling (its posterior sd comes out
/// inflated), while AMAGOLD's Metropolis test keeps the sd at the
/// reference's. Thresholds: with 5000
/// samples the sd ratio of a mixed exact chain is 1 within a few per cent
/// (its MSE shows the chain mixed: far below the start line).
#[test]
fn sghmc_runs_hot_where_amagold_does_not() {
    let r = heart_reference();
    let t = model::<14, 16>(LogregDataset::Heart);
    let sg = run_chain(&t, &r, Kind::SghmcPersistent, 5e-3, 500, 5000, 41);
    let am = run_chain(&t, &r, Kind::Amagold, 5e-3, 500, 5000, 42);
    let start = mse(&[0.0; 14], &r.mean);
    assert!(am.mse < 0.05 * start, "AMAGOLD did not mix: {}", am.mse);
    assert!(
        (0.8..1.15).contains(&am.sd_ratio),
        "AMAGOLD sd ratio {}",
        am.sd_ratio
    );
    assert!(
        sg.sd_ratio > am.sd_ratio + 0.25,
        "SGHMC {} vs AMAGOLD {}",
        sg.sd_ratio,
        am.sd_ratio
    );
    assert_eq!(sg.failures, 0);
}

/// At tiny ε no sampler leaves w = 0: the MSE stays at the start line.
#[test]
fn tiny_steps_stay_at_the_start() {
    let r = heart_reference();
    let t = model::<14, 16>(LogregDataset::Heart);
    let run = run_chain(&t, &r, Kind::Amagold, 1e-6, 100, 1000, 51);
    let start = mse(&[0.0; 14], &r.mean);
    assert!(
        (run.mse / start - 1.0).abs() < 0.01,
        "{} vs {start}",
        run.mse
    );
}

#[test]
fn mse_at_time_interpolates_on_log_scales() {
    let curve = [(1.0, 1.0, 0.1), (10.0, 0.01, 10.0), (100.0, 0.001, 100.0)];
    let e = mse_at_time(&curve, 1.0).unwrap();
    assert!((e - 0.1).abs() < 1e-12, "{e}");
    assert_eq!(mse_at_time(&curve, 0.01), None);
    assert_eq!(mse_at_time(&curve, 1000.0), None);
}

/// A small run yields every table row and all five charts, each linked from
/// the report; seeds give distinct chains.
#[test]
fn small_run_has_rows_and_charts() {
    let settings = Settings {
        samples: 300,
        repeats: 2,
        step_sizes: vec![RUNTIME_STEP_SIZE, 5e-3],
        reference_draws: 100,
    };
    let n = numbers_with(&settings, 5);
    assert_eq!(n.data.len(), 2);
    for d in &n.data {
        assert_eq!(d.sweep.len(), SWEEP_KINDS.len());
        assert!(d.sweep.iter().all(|c| c.len() == 2 && c[0].runs.len() == 2));
        assert!(d.cell(Kind::SghmcPersistent, 5e-3).is_some());
        assert_eq!(d.full_batch.len(), 2);
        for k in [Kind::Hmc, Kind::L2mc, SGHMC, Kind::Amagold] {
            assert!(d.cell(k, RUNTIME_STEP_SIZE).is_some(), "{}", k.label());
        }
        let c = d.cell(Kind::Amagold, 5e-3).unwrap();
        assert_ne!(c.runs[0].estimate, c.runs[1].estimate);
        assert!(c.between_variance() > 0.0);
    }
    let md = report::markdown(&n, &ReproduceOptions::default());
    for needle in [
        "## The paper's claims",
        "### (a) Australian",
        "### (b) Heart",
        "### (c) Australian",
        "### (d) Heart",
        "## Fig. 8",
        "## Settings the paper leaves open",
    ] {
        assert!(md.contains(needle), "missing {needle}");
    }
    assert_eq!(md.matches("\n| 5e-3 |").count(), 3);
    let charts = report::charts(&n);
    let stems: Vec<&str> = charts.iter().map(|c| c.file_stem.as_str()).collect();
    assert_eq!(
        stems,
        [
            "amagold-fig4-australian-mse",
            "amagold-fig4-heart-mse",
            "amagold-fig4-australian-time",
            "amagold-fig4-heart-time",
            "amagold-fig8-heart-acceptance"
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
