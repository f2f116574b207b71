//! The toy targets of the AMAGOLD and recipe papers: gradients, normalised
//! densities, gradient noise and the recipe metric.

use qnmc::samplers::recipe::DiagonalRiemannianMetric;
use qnmc::{MinibatchPotential, Potential};
use qnmc_host::model::{Model, ModelRng};
use qnmc_host::targets::{
    AmagoldDist1, AmagoldDist2, AnalyticToy, DoubleWell, RecipeCorrelated2d, RecipeMetric,
    RecipeQuadratic, RecipeQuartic,
};
use rand_core::SeedableRng;

/// A toy as a run-time model, with a few probe points.
type ToyWithPoints = (Box<dyn Model>, Vec<Vec<f64>>);

/// Every toy as a run-time model, with a few probe points.
fn toys() -> Vec<ToyWithPoints> {
    let one = vec![vec![-2.3], vec![-0.4], vec![0.7], vec![1.9]];
    let two = vec![
        vec![0.3, -1.1],
        vec![1.7, 0.4],
        vec![-2.2, 0.9],
        vec![0.05, 2.5],
    ];
    vec![
        (Box::new(DoubleWell::paper()), one.clone()),
        (Box::new(RecipeQuadratic::paper()), one.clone()),
        (Box::new(RecipeQuartic::paper()), one),
        (Box::new(AmagoldDist1::paper()), two.clone()),
        (Box::new(AmagoldDist2::paper()), two.clone()),
        (Box::new(RecipeCorrelated2d::paper()), two),
    ]
}

/// ∇U against central differences with h = 1e-5: the truncation error is
/// h²/6·|U‴| ≲ 1e-9 for these polynomials/Gaussians at the probe points and
/// rounding ≈ 1e-16·|U|/h ≲ 1e-10, so a bound of 1e-6·max(1, |∂U|) is loose
/// yet fails on any wrong term.
#[test]
fn gradients_match_central_differences() {
    let h = 1e-5;
    for (model, points) in toys() {
        let n = model.dimension();
        for x in points {
            let mut g = vec![0.0; n];
            let _ = model.potential_and_gradient(&x, &mut g);
            for i in 0..n {
                let (mut xp, mut xm) = (x.clone(), x.clone());
                xp[i] += h;
                xm[i] -= h;
                let mut t = vec![0.0; n];
                let fd = (model.potential_and_gradient(&xp, &mut t)
                    - model.potential_and_gradient(&xm, &mut t))
                    / (2.0 * h);
                assert!(
                    (fd - g[i]).abs() < 1e-6 * g[i].abs().max(1.0),
                    "{} at {x:?}, coordinate {i}: finite difference {fd} vs {}",
                    model.name(),
                    g[i]
                );
            }
        }
    }
}

/// The normalised densities integrate to 1 over their boxes: midpoint rule
/// on a grid finer than the one each normaliser was computed on (quadrature
/// error ≲ 1e-6 on these smooth densities; the boxes leave out < 1e-9).
fn integrates_to_one<const D: usize>(toy: &impl AnalyticToy<D>, bins: usize, name: &str) {
    let grid = toy.grid(bins);
    let total: f64 = grid.cell_probabilities(|x| toy.density(x), 2).iter().sum();
    assert!((total - 1.0).abs() < 1e-5, "{name}: ∫π = {total}");
}

#[test]
fn densities_integrate_to_one() {
    integrates_to_one(&DoubleWell::paper(), 5000, "double-well");
    integrates_to_one(&RecipeQuadratic::paper(), 5000, "recipe-quadratic");
    integrates_to_one(&RecipeQuartic::paper(), 5000, "recipe-quartic");
    integrates_to_one(&AmagoldDist1::paper(), 700, "amagold-dist1");
    integrates_to_one(&AmagoldDist2::paper(), 700, "amagold-dist2");
    integrates_to_one(&RecipeCorrelated2d::paper(), 700, "recipe-2d");
}

/// Known closed forms: Dist1's z₂ marginal is N(0, 4) and E z₁ = E z₂²/4 = 1;
/// Dist2 has mean 0 and variance 2 per coordinate; the quadratic is N(0, 1);
/// the quartic's E[θ⁴] − E[θ²] = ¼ (integration by parts: E[θ·U′] = 1).
#[test]
fn known_posteriors_match_closed_forms() {
    let d1 = AmagoldDist1::paper().known_posterior().unwrap();
    assert!((d1.mean[0] - 1.0).abs() < 1e-3, "{d1:?}");
    assert!((d1.sd[1] - 2.0).abs() < 1e-3, "{d1:?}");
    let d2 = AmagoldDist2::paper().known_posterior().unwrap();
    assert!(d2.mean.iter().all(|m| m.abs() < 1e-9), "{d2:?}");
    assert!(
        d2.sd.iter().all(|s| (s - 2f64.sqrt()).abs() < 1e-3),
        "{d2:?}"
    );
    let q = RecipeQuadratic::paper().known_posterior().unwrap();
    assert!(
        q.mean[0].abs() < 1e-9 && (q.sd[0] - 1.0).abs() < 1e-4,
        "{q:?}"
    );
    let quartic = RecipeQuartic::paper();
    let grid = quartic.grid(20_000);
    let p = quartic.cell_probabilities(&grid);
    let (mut m2, mut m4) = (0.0, 0.0);
    for (c, pc) in p.iter().enumerate() {
        let x = grid.cell_center(c)[0];
        m2 += pc * x * x;
        m4 += pc * x.powi(4);
    }
    assert!((m4 - m2 - 0.25).abs() < 1e-6, "E θ⁴ − E θ² = {}", m4 - m2);
}

/// The stochastic gradient is unbiased and has the stated noise: over 40 000
/// draws the mean is within 5 Monte-Carlo standard errors (σ/√n) of ∇U
/// (P(false alarm) ≈ 6e-7 per coordinate) and the sample sd within 5% of σ
/// (its relative standard error is 1/√(2n) ≈ 0.35%). Checked through both the
/// run-time `Model` and the core `MinibatchPotential` faces.
#[test]
fn stochastic_gradients_are_unbiased_with_the_stated_noise() {
    let reps = 40_000;
    let expected_sd = [1.0, 2.0, 2.0, 1.0, 1.0, 2.0];
    for ((model, points), sd) in toys().into_iter().zip(expected_sd) {
        let n = model.dimension();
        let x = &points[1];
        let mut exact = vec![0.0; n];
        let _ = model.potential_and_gradient(x, &mut exact);
        let mut rng = ModelRng::seed_from_u64(17);
        let (mut s1, mut s2) = (vec![0.0; n], vec![0.0; n]);
        for _ in 0..reps {
            let mut g = vec![0.0; n];
            model.stochastic_gradient(x, 1, &mut rng, &mut g);
            for i in 0..n {
                let d = g[i] - exact[i];
                s1[i] += d;
                s2[i] += d * d;
            }
        }
        for i in 0..n {
            let bias = s1[i] / reps as f64;
            let sample_sd = (s2[i] / reps as f64 - bias * bias).sqrt();
            assert!(
                bias.abs() < 5.0 * sd / (reps as f64).sqrt(),
                "{}: bias {bias}",
                model.name()
            );
            assert!(
                (sample_sd / sd - 1.0).abs() < 0.05,
                "{}: noise sd {sample_sd} vs {sd}",
                model.name()
            );
        }
    }
    // The core face: same noise model.
    let t = RecipeQuartic::paper();
    let mut rng = ModelRng::seed_from_u64(5);
    let mut s1 = 0.0;
    for _ in 0..reps {
        let b = t.draw_batch(&mut rng);
        let mut g = [0.0];
        t.minibatch_gradient(&b, &[0.7], &mut g);
        s1 += g[0];
    }
    let mut exact = [0.0];
    let _ = Potential::potential_and_gradient(&t, &[0.7], &mut exact);
    assert!((s1 / reps as f64 - exact[0]).abs() < 5.0 * 2.0 / (reps as f64).sqrt());
}

/// ∂(G⁻¹)ᵢᵢ/∂θᵢ against central differences (h = 1e-6, away from the zeros
/// of U + C where it diverges), on the 1-D quartic and the 2-D target.
#[test]
fn metric_derivative_matches_central_differences() {
    let h = 1e-6;
    let quartic = RecipeMetric::paper(RecipeQuartic::paper());
    for x in [-1.8, -0.2, 0.3, 1.1, 2.0] {
        let (mut inv, mut der) = ([0.0], [0.0]);
        quartic.inverse_metric(&[x], &mut inv, &mut der);
        let (mut ip, mut im, mut d) = ([0.0], [0.0], [0.0]);
        quartic.inverse_metric(&[x + h], &mut ip, &mut d);
        quartic.inverse_metric(&[x - h], &mut im, &mut d);
        let fd = (ip[0] - im[0]) / (2.0 * h);
        assert!(inv[0] > 0.0);
        assert!(
            (fd - der[0]).abs() < 1e-5 * der[0].abs().max(1.0),
            "{x}: {fd} vs {der:?}"
        );
    }
    let two = RecipeMetric::paper(RecipeCorrelated2d::paper());
    let x = [0.8, -0.5];
    let (mut inv, mut der) = ([0.0; 2], [0.0; 2]);
    two.inverse_metric(&x, &mut inv, &mut der);
    assert_eq!(inv[0], inv[1]);
    for i in 0..2 {
        let (mut xp, mut xm) = (x, x);
        xp[i] += h;
        xm[i] -= h;
        let (mut ip, mut im, mut d) = ([0.0; 2], [0.0; 2], [0.0; 2]);
        two.inverse_metric(&xp, &mut ip, &mut d);
        two.inverse_metric(&xm, &mut im, &mut d);
        let fd = (ip[i] - im[i]) / (2.0 * h);
        assert!(
            (fd - der[i]).abs() < 1e-5 * der[i].abs().max(1.0),
            "{i}: {fd} vs {der:?}"
        );
    }
}

#[test]
fn bad_noise_levels_are_errors() {
    assert!(DoubleWell::with_gradient_noise_sd(-1.0).is_err());
    assert!(AmagoldDist1::with_gradient_noise_sd(f64::NAN).is_err());
    assert!(AmagoldDist2::with_gradient_noise_sd(f64::INFINITY).is_err());
    let e = RecipeQuartic::with_gradient_noise_sd(-0.5).unwrap_err();
    assert!(e.to_string().contains("-0.5"));
    assert!(RecipeQuadratic::with_gradient_noise_sd(0.0).is_ok());
    assert!(RecipeCorrelated2d::with_gradient_noise_sd(-2.0).is_err());
}

/// The toys run through the CLI's path: `PaddedModel<D>` around the run-time
/// model, sampled by the core HMC (exact). Means and second moments of each
/// coordinate must match the quadrature `known_posterior` with
/// |z| = |estimate − truth|/MCSE < 4.5 (MCSE from the ESS of the statistic's
/// chain; 16 statistics over five targets, P(false alarm) ≈ 16 × 6.8e-6).
/// A wrong normaliser would not show here, but a U that disagrees with
/// `density` (which `known_posterior` integrates) would.
#[test]
fn hmc_through_padded_model_matches_the_known_posteriors() {
    use qnmc::{Hmc, HmcSettings};
    use qnmc_host::diagnostics::mcse_mean;
    use qnmc_host::model::PaddedModel;

    fn check<const D: usize>(model: &dyn Model, step: f64, leapfrog: u32, seed: u64) {
        let padded = PaddedModel::<D>::new(model).unwrap();
        let mut sampler = Hmc::new(
            HmcSettings::new(step, leapfrog),
            padded.initial_point(),
            &padded,
        )
        .unwrap();
        let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(seed);
        let n = model.dimension();
        let (burn, draws) = (1000, 20_000);
        let mut first = vec![Vec::with_capacity(draws); n];
        let mut second = vec![Vec::with_capacity(draws); n];
        for k in 0..burn + draws {
            let _ = sampler.step(&padded, &mut rng);
            if k >= burn {
                for i in 0..n {
                    let x = sampler.position()[i];
                    first[i].push(x);
                    second[i].push(x * x);
                }
            }
        }
        let known = model.known_posterior().unwrap();
        for i in 0..n {
            let truth = [
                known.mean[i],
                known.sd[i] * known.sd[i] + known.mean[i] * known.mean[i],
            ];
            for (stat, t) in [&first[i], &second[i]].into_iter().zip(truth) {
                let m = stat.iter().sum::<f64>() / stat.len() as f64;
                let z = (m - t) / mcse_mean(&[stat]);
                println!(
                    "{} coordinate {i}: {m:.4} vs {t:.4}, z = {z:.2}",
                    model.name()
                );
                assert!(z.abs() < 4.5, "{} coordinate {i}: z = {z}", model.name());
            }
        }
    }
    check::<2>(&AmagoldDist1::paper(), 0.3, 10, 1);
    check::<2>(&AmagoldDist2::paper(), 0.2, 15, 2);
    check::<3>(&RecipeCorrelated2d::paper(), 0.03, 30, 3);
    check::<1>(&RecipeQuadratic::paper(), 0.3, 8, 4);
    check::<1>(&RecipeQuartic::paper(), 0.05, 20, 5);
}
