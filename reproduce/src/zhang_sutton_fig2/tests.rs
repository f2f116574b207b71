use super::summary::{charts, claim_holds, markdown, mean_acf};
use super::*;

const SMALL: Lengths = Lengths {
    burn_in: 100,
    kept: 400,
    runs: 2,
    sensitivity_runs: 1,
};

#[test]
fn ones_over_root_d_is_the_leading_eigenvector_with_eigenvalue_d_plus_4() {
    const D: usize = 50;
    let target = CorrelatedGaussian::<D>::paper();
    let u = 1.0 / (D as f64).sqrt();
    for i in 0..D {
        let su: f64 = (0..D).map(|j| target.covariance(i, j) * u).sum();
        assert!((su - (D as f64 + 4.0) * u).abs() < 1e-12);
    }
    // Any vector orthogonal to 1 has eigenvalue 4 < D + 4.
    let v: Vec<f64> = (0..D)
        .map(|i| {
            if i == 0 {
                1.0
            } else if i == 1 {
                -1.0
            } else {
                0.0
            }
        })
        .collect();
    let sv0: f64 = (0..D).map(|j| target.covariance(0, j) * v[j]).sum();
    assert!((sv0 - 4.0).abs() < 1e-12);
}

#[test]
fn tuned_runs_reach_the_target_acceptance_and_give_full_acf_curves() {
    let r = run_setting::<50>(TUNED, SMALL, 2, 7);
    assert_eq!((r.hmc.len(), r.bfgs.len()), (2, 2));
    for run in r.hmc.iter().chain(&r.bfgs) {
        assert_eq!(run.autocorrelation.len(), MAX_LAG + 1);
        assert!((run.autocorrelation[0] - 1.0).abs() < 1e-12);
        // Dual averaging aims at 0.8; 400 kept draws leave a wide margin.
        assert!((0.55..0.97).contains(&run.acceptance), "{}", run.acceptance);
        assert!(run.ess_per_chain > 0.0 && run.ess_per_chain.is_finite());
    }
    // Gradients: HMC L = 40 per draw; HMC-BFGS K·L = 100 per sweep.
    assert_eq!(r.hmc[0].gradients, (500 * 40) as f64);
    assert_eq!(r.bfgs[0].gradients, (500 * 5 * 20) as f64);
    assert!(r.hmc[0].learned_variance.is_nan());
    let learned = r.bfgs[0].learned_variance;
    assert!(learned > 0.0 && learned <= 2.0 * 54.0, "{learned}");
    assert!((r.bfgs[0].ess_total - 5.0 * r.bfgs[0].ess_per_chain).abs() < 1e-9);
}

#[test]
fn at_the_crf_setting_hmc_barely_moves_along_u() {
    // ε = 0.02, L = 10 turns uᵀx by 0.2/√54 ≈ 0.03 rad per draw.
    let r = hmc_run::<50>(CRF, SMALL, 3);
    assert!(r.autocorrelation[1] > 0.95, "{}", r.autocorrelation[1]);
    assert_eq!(r.max_step_size, 0.02);
}

#[test]
fn report_and_charts_have_every_setting_and_sampler() {
    let results = vec![
        run_setting::<20>(TUNED, SMALL, 2, 1),
        run_setting::<20>(CRF, SMALL, 1, 1),
    ];
    let md = markdown(&results, 20, SMALL, &ReproduceOptions::default(), 1.0);
    assert!(md.contains("### tuned"));
    assert!(md.contains("### crf"));
    assert_eq!(md.matches("| HMC-BFGS (K 5) |").count(), 2);
    assert!(md.contains("(true 24)"));
    let c = charts(&results);
    let stems: Vec<&str> = c.iter().map(|c| c.file_stem.as_str()).collect();
    assert_eq!(
        stems,
        [
            "zhang-sutton-fig2-acf-tuned",
            "zhang-sutton-fig2-acf-tuned-gradients",
            "zhang-sutton-fig2-acf-crf"
        ]
    );
    for chart in &c {
        assert!(md.contains(&format!("({}.png)", chart.file_stem)));
        assert_eq!(chart.series.len(), 2);
        assert_eq!(chart.series[0].points.len(), MAX_LAG + 1);
    }
    assert_eq!(mean_acf(&results[0].hmc)[0], 1.0);
}

fn fake(ess: f64) -> Run {
    Run {
        max_step_size: 1.0,
        acceptance: 0.8,
        autocorrelation: vec![1.0; MAX_LAG + 1],
        ess_per_chain: ess,
        ess_total: ess,
        gradients: 1000.0,
        seconds: 1.0,
        variance: 1.0,
        learned_variance: f64::NAN,
    }
}

#[test]
fn the_verdict_needs_intervals_apart() {
    let mut r = SettingResult {
        setting: TUNED,
        hmc: vec![fake(100.0), fake(110.0), fake(90.0)],
        bfgs: vec![fake(300.0), fake(310.0), fake(290.0)],
    };
    assert_eq!(claim_holds(&r, false), Some(true));
    r.bfgs = vec![fake(100.0), fake(130.0), fake(80.0)];
    assert_eq!(claim_holds(&r, false), None);
    r.bfgs = vec![fake(10.0), fake(11.0), fake(9.0)];
    assert_eq!(claim_holds(&r, true), Some(false));
}
