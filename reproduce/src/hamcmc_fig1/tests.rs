use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use super::fit::{ellipse, exact_draws};
use super::*;

fn problem() -> Problem {
    Problem::simulate(2016).expect("the D = 2 posterior is positive definite")
}

/// Exact draws score as exact: with n = 20 000 independent draws the
/// fraction outside the 95 % ellipse has sd √(0.05·0.95/n) ≈ 0.0015 and the
/// spread tr(W)/2 has sd 1/√n ≈ 0.007 (each diagonal of W has variance 2/n);
/// thresholds are 5 of those. Samples pulled towards the mean by 0.3 have
/// spread 0.09 and none outside the ellipse.
#[test]
fn fit_scores_exact_and_shrunken_samples() {
    let p = problem();
    let n = 20_000;
    let draws = exact_draws(&p.posterior, n, 7);
    let fit = Fit::new(&draws, &p.posterior);
    assert!((fit.outside_95 - 0.05).abs() < 5.0 * 0.0015, "{fit:?}");
    assert!((fit.spread - 1.0).abs() < 5.0 * 0.007, "{fit:?}");
    assert!(fit.kl < 0.01 && fit.mean_error < 0.05, "{fit:?}");
    let mu = p.posterior.mean;
    let shrunk: Vec<[f64; 2]> = draws
        .iter()
        .map(|x| [mu[0] + 0.3 * (x[0] - mu[0]), mu[1] + 0.3 * (x[1] - mu[1])])
        .collect();
    let fit = Fit::new(&shrunk, &p.posterior);
    assert!((fit.spread - 0.09).abs() < 0.01, "{fit:?}");
    assert_eq!(fit.outside_95, 0.0);
    assert!(fit.kl > 1.0, "{fit:?}");
    // The radius-r ellipse is at Mahalanobis distance r.
    let l = DenseMetric::new(&p.posterior.covariance).unwrap();
    let f = l.covariance_factor();
    for (x, y) in ellipse(&p.posterior, 2.0, 12) {
        let u0 = (x - mu[0]) / f[0][0];
        let u1 = (y - mu[1] - f[1][0] * u0) / f[1][1];
        assert!(((u0 * u0 + u1 * u1).sqrt() - 2.0).abs() < 1e-9);
    }
}

/// The quick run yields every row and chart, the report links every chart,
/// and the chains are deterministic in the seed.
#[test]
fn quick_run_has_every_row_and_chart() {
    let options = ReproduceOptions {
        seed: 2016,
        quick: true,
    };
    let rep = run(&options);
    assert!(rep.skipped.is_empty());
    assert_eq!(rep.charts.len(), 2 * Method::ALL.len() + 1);
    for c in &rep.charts {
        assert!(
            rep.markdown.contains(&format!("({}.png)", c.file_stem)),
            "{} not linked",
            c.file_stem
        );
    }
    for m in Method::ALL {
        assert!(
            rep.markdown.contains(&format!("| {} |", m.label())),
            "{m:?}"
        );
    }
    let p = problem();
    let a = run_chain(&p, Method::Hamcmc, 1e-6, 5, 400);
    let b = run_chain(&p, Method::Hamcmc, 1e-6, 5, 400);
    assert_eq!(a, b);
    assert_eq!(a.samples.len(), 200);
}

/// The linear-Gaussian prediction of `noise` against a long SGLD chain at a
/// constant ε = 5·10⁻⁵ on the figure's data: the measured spread
/// tr(Σ⁻¹Ĉ)/2 of 10⁶ draws (after 10⁵ of burn-in) matches the predicted one
/// within 0.15. Its Monte-Carlo sd is about 0.03 (the slow direction has
/// ελ ≈ 5·10⁻³, an autocorrelation time of ~200 steps for squares, so
/// ~5000 effective draws and sd ≈ spread·√(2/5000)); 0.15 is 5 of them. The
/// prediction without the gradient noise is 1 within the Euler bias, and
/// the noise must matter here (predicted > 1.3), else the test shows nothing.
#[test]
fn gradient_noise_prediction_matches_a_long_sgld_chain() {
    use qnmc::{Sgld, SgldSettings};
    let p = problem();
    let eps = 5e-5;
    let identity = [[1.0, 0.0], [0.0, 1.0]];
    let quiet = noise::predicted_spread(&p, &identity, eps, false);
    let noisy = noise::predicted_spread(&p, &identity, eps, true);
    assert!((quiet - 1.0).abs() < 0.05, "{quiet}");
    assert!(noisy > 1.3, "{noisy}");
    let mut s = Sgld::<f64, 2>::new(SgldSettings::new(eps), p.posterior.mean).unwrap();
    let mut rng = XorShiftRng::seed_from_u64(99);
    for _ in 0..100_000 {
        s.step(&p.model, &mut rng).unwrap();
    }
    let draws: Vec<[f64; 2]> = (0..1_000_000)
        .map(|_| {
            s.step(&p.model, &mut rng).unwrap();
            *s.position()
        })
        .collect();
    let measured = Fit::new(&draws, &p.posterior).spread;
    assert!(
        (measured - noisy).abs() < 0.15,
        "measured {measured}, predicted {noisy}"
    );
}

/// SGRLD with G⁻¹ = Σ sees an isotropic target: its noise-free prediction
/// is 1/(1 − ε/2) exactly (the AR(1) chain θ ← (1 − ε)θ + √(2ε)·L z).
#[test]
fn sgrld_prediction_without_noise_is_the_ar1_variance() {
    let p = problem();
    let eps = 0.01;
    let spread = noise::predicted_spread(&p, &p.posterior.covariance, eps, false);
    assert!((spread - 1.0 / (1.0 - eps / 2.0)).abs() < 1e-9, "{spread}");
}
