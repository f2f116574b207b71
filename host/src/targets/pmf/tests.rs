//! The factorisation models: potentials against direct sums, gradients
//! against finite differences, unbiased minibatch and part gradients, and
//! the reported quantities.

use super::factors::{Likelihood, uniform_indices};
use super::*;
use crate::model::{Model, ModelRng};
use crate::targets::testing::{gradient_error, random_point};
use rand_core::SeedableRng;

/// 30 users × 20 items, 300 ratings (at least 5 a user), 30 held out.
fn small_ratings(seed: u64) -> Ratings {
    SyntheticRecipe::new(30, 20, 300, seed)
        .with_min_per_user(5)
        .build()
        .unwrap()
}

fn gaussian(rank: usize) -> GaussianPmf {
    GaussianPmf::new(small_ratings(1), rank)
        .unwrap()
        .with_sds(0.7, 1.3, 0.9)
        .unwrap()
        .with_offset(0.5)
}

fn bayesian(rank: usize) -> BayesianPmf {
    BayesianPmf::new(small_ratings(2), rank)
        .unwrap()
        .with_hyperprior(1.5, 4.0, 0.8)
        .unwrap()
}

/// log N(v; mean, 1/precision).
fn log_normal_density(v: f64, mean: f64, precision: f64) -> f64 {
    0.5 * (precision / std::f64::consts::TAU).ln() - 0.5 * precision * (v - mean).powi(2)
}

/// log Gamma(λ; shape, rate), by ln Γ from the recurrence and Stirling's
/// series (shape > 0).
fn log_gamma_density(lambda: f64, shape: f64, rate: f64) -> f64 {
    fn ln_gamma(mut a: f64) -> f64 {
        let mut shift = 0.0;
        while a < 10.0 {
            shift -= a.ln();
            a += 1.0;
        }
        shift + (a - 0.5) * a.ln() - a + 0.5 * std::f64::consts::TAU.ln() + 1.0 / (12.0 * a)
            - 1.0 / (360.0 * a.powi(3))
    }
    shape * rate.ln() - ln_gamma(shape) + (shape - 1.0) * lambda.ln() - rate * lambda
}

#[test]
fn gaussian_pmf_potential_is_eq_17_summed_directly() {
    let model = gaussian(3);
    let (i, j, k) = (30, 20, 3);
    let x = random_point(model.dimension(), 1.0, 5);
    // W as an I × K matrix and H as K × J, read through the documented layout.
    let w = |u: usize, d: usize| x[u * k + d];
    let h = |d: usize, item: usize| x[(i + item) * k + d];
    let mut expected = 0.0;
    for u in 0..i {
        for d in 0..k {
            expected += w(u, d).powi(2) / (2.0 * 0.49);
        }
    }
    for item in 0..j {
        for d in 0..k {
            expected += h(d, item).powi(2) / (2.0 * 1.69);
        }
    }
    let train = model.ratings().train();
    for n in 0..train.len() {
        let (u, item, r) = train.get(n);
        let product: f64 = (0..k).map(|d| w(u, d) * h(d, item)).sum();
        expected += (0.5 + product - r).powi(2) / (2.0 * 0.81);
    }
    let mut g = vec![0.0; model.dimension()];
    let u = model.potential_and_gradient(&x, &mut g);
    assert!((u - expected).abs() < 1e-10 * expected, "{u} vs {expected}");
}

#[test]
fn bayesian_pmf_potential_differences_are_log_density_differences() {
    // U is −log p(x) up to a constant, with p including the Jacobian of
    // λ = e^θ: U(x) − U(y) = log p(y) − log p(x).
    let model = bayesian(3);
    let (i, j, k) = (30, 20, 3);
    let (shape, rate) = (2.0, 0.5 / 0.8);
    let log_density = |x: &[f64]| {
        let hyper = (i + j) * k;
        let mut lp = 0.0;
        for (side, first, count) in [(0, 0, i), (1, i, j)] {
            for d in 0..k {
                let mu = x[hyper + side * k + d];
                let theta = x[hyper + (2 + side) * k + d];
                let lambda = theta.exp();
                lp += log_gamma_density(lambda, shape, rate) + theta;
                lp += log_normal_density(mu, 0.0, 1.5 * lambda);
                for row in first..first + count {
                    lp += log_normal_density(x[row * k + d], mu, lambda);
                }
            }
        }
        let train = model.ratings().train();
        let m = train.mean();
        for n in 0..train.len() {
            let (u, item, r) = train.get(n);
            let product: f64 = (0..k).map(|d| x[u * k + d] * x[(i + item) * k + d]).sum();
            lp += log_normal_density(r, m + product, 2.0);
        }
        lp
    };
    let x = random_point(model.dimension(), 1.0, 6);
    let y = random_point(model.dimension(), 1.0, 7);
    let mut g = vec![0.0; model.dimension()];
    let difference =
        model.potential_and_gradient(&x, &mut g) - model.potential_and_gradient(&y, &mut g);
    let expected = log_density(&y) - log_density(&x);
    assert!(
        (difference - expected).abs() < 1e-9 * (1.0 + expected.abs()),
        "{difference} vs {expected}"
    );
}

#[test]
fn gradients_match_central_differences() {
    // Central differences with h = 1e-5 on polynomials of degree ≤ 4 (and
    // e^θ) have error about h²·U‴ ≈ 1e-9 here; a wrong term is O(1).
    for seed in 1..=3 {
        let model = gaussian(3);
        let x = random_point(model.dimension(), 1.0, seed);
        let e = gradient_error(&model, &x, 1e-5);
        assert!(e < 1e-6, "gaussian pmf, seed {seed}: {e}");
        let model = bayesian(3);
        let x = random_point(model.dimension(), 1.0, seed);
        let e = gradient_error(&model, &x, 1e-5);
        assert!(e < 1e-6, "bayesian pmf, seed {seed}: {e}");
    }
}

/// The largest |z| over coordinates of the mean of `batches` gradient
/// estimates against `exact`, z = (mean − exact)/MCSE with MCSE = sd/√batches
/// (the estimates are independent). A coordinate whose estimates do not vary
/// must equal `exact` to rounding (z = ∞ otherwise). With 20 000 batches the
/// mean is close to normal, so for an unbiased estimator each |z| exceeds 5
/// with probability about 6e-7, and the largest of ~200 coordinates does so
/// with probability about 1e-4: the tests accept max |z| < 5.
fn largest_z(mut estimate: impl FnMut(&mut [f64]), exact: &[f64], batches: usize) -> f64 {
    let n = exact.len();
    let mut sum = vec![0.0; n];
    let mut sum_sq = vec![0.0; n];
    let mut g = vec![0.0; n];
    for _ in 0..batches {
        estimate(&mut g);
        for c in 0..n {
            // Centred on the exact value, so the sums stay small.
            let d = g[c] - exact[c];
            sum[c] += d;
            sum_sq[c] += d * d;
        }
    }
    let b = batches as f64;
    (0..n)
        .map(|c| {
            let bias = sum[c] / b;
            let variance = (sum_sq[c] / b - bias * bias) * b / (b - 1.0);
            if variance <= 1e-20 * (1.0 + exact[c] * exact[c]) {
                if bias.abs() <= 1e-9 * (1.0 + exact[c].abs()) {
                    0.0
                } else {
                    f64::INFINITY
                }
            } else {
                bias.abs() / (variance / b).sqrt()
            }
        })
        .fold(0.0, f64::max)
}

const BATCHES: usize = 20_000;
const BATCH_SIZE: usize = 10;

#[test]
fn minibatch_gradients_are_unbiased() {
    let model = gaussian(3);
    let x = random_point(model.dimension(), 1.0, 8);
    let mut exact = vec![0.0; model.dimension()];
    let _ = model.potential_and_gradient(&x, &mut exact);
    let mut rng = ModelRng::seed_from_u64(1);
    let z = largest_z(
        |g| model.stochastic_gradient(&x, BATCH_SIZE, &mut rng, g),
        &exact,
        BATCHES,
    );
    eprintln!("gaussian pmf minibatch gradient: max |z| {z:.2}");
    assert!(z < 5.0, "gaussian pmf: max |z| {z}");

    // The same check catches a biased estimator: the likelihood part
    // scaled by 0.9 instead of 1 (max |z| ≈ 9; a 5 % bias gave 4.5) ...
    let train = model.ratings().train();
    let likelihood = Likelihood {
        layout: super::factors::Layout {
            users: 30,
            items: 20,
            rank: 3,
        },
        data: train,
        offset: 0.5,
        precision: 1.0 / 0.81,
    };
    let weight = train.len() as f64 / BATCH_SIZE as f64;
    let z = largest_z(
        |g| {
            let _ = model.prior(&x, g);
            let _ = likelihood.add(
                &x,
                g,
                uniform_indices(train.len(), BATCH_SIZE, &mut rng),
                0.9 * weight,
            );
        },
        &exact,
        BATCHES,
    );
    eprintln!("likelihood scaled by 0.9: max |z| {z:.2}");
    assert!(z > 5.0, "a 10 % bias went unnoticed: max |z| {z}");
    // ... or ratings drawn from all but the last tenth.
    let z = largest_z(
        |g| {
            let _ = model.prior(&x, g);
            let most = train.len() * 9 / 10;
            let _ = likelihood.add(&x, g, uniform_indices(most, BATCH_SIZE, &mut rng), weight);
        },
        &exact,
        BATCHES,
    );
    eprintln!("last tenth never drawn: max |z| {z:.2}");
    assert!(z > 5.0, "a skipped tenth went unnoticed: max |z| {z}");

    let model = bayesian(3);
    let x = random_point(model.dimension(), 1.0, 9);
    let mut exact = vec![0.0; model.dimension()];
    let _ = model.potential_and_gradient(&x, &mut exact);
    let z = largest_z(
        |g| model.stochastic_gradient(&x, BATCH_SIZE, &mut rng, g),
        &exact,
        BATCHES,
    );
    eprintln!("bayesian pmf minibatch gradient: max |z| {z:.2}");
    assert!(z < 5.0, "bayesian pmf: max |z| {z}");

    // Batch size 0 is the exact gradient.
    let mut g = vec![0.0; model.dimension()];
    model.stochastic_gradient(&x, 0, &mut rng, &mut g);
    assert_eq!(g, exact);
}

#[test]
fn part_gradients_average_to_the_full_gradient() {
    let model = GaussianPmf::new(SyntheticRecipe::new(90, 70, 3000, 4).build().unwrap(), 2)
        .unwrap()
        .with_offset(3.0);
    let partition = model.partition();
    assert_eq!(partition.blocks(), 4);
    let sizes = partition.sizes();
    let total: usize = sizes.iter().sum();
    assert_eq!(total, model.data_size().unwrap());
    let x = random_point(model.dimension(), 1.0, 10);
    let mut exact = vec![0.0; model.dimension()];
    let _ = model.potential_and_gradient(&x, &mut exact);
    // Exactly: Σ_p (|Ω_p|/N) · part gradient p = ∇U.
    let mut mixed = vec![0.0; model.dimension()];
    let mut g = vec![0.0; model.dimension()];
    for (p, &size) in sizes.iter().enumerate() {
        model.part_gradient(&x, p, &mut g);
        for (m, v) in mixed.iter_mut().zip(&g) {
            *m += size as f64 / total as f64 * v;
        }
    }
    let scale = exact.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let worst = mixed
        .iter()
        .zip(&exact)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-12 * scale, "{worst}");
    // And over parts drawn by `choose` (MCSE threshold as for minibatches).
    let mut rng = ModelRng::seed_from_u64(2);
    let z = largest_z(
        |g| {
            let p = partition.choose(&mut rng);
            model.part_gradient(&x, p, g);
        },
        &exact,
        BATCHES,
    );
    eprintln!("part gradient: max |z| {z:.2}, part sizes {sizes:?}");
    assert!(z < 5.0, "max |z| {z}");
    // A single part alone is not the gradient.
    model.part_gradient(&x, 0, &mut g);
    assert!(
        g.iter()
            .zip(&exact)
            .any(|(a, b)| (a - b).abs() > 1e-3 * scale)
    );
}

#[test]
fn reported_quantities_are_the_test_errors_and_named_coordinates() {
    let model = gaussian(3);
    let names = model.output_names();
    assert_eq!(names[..2], ["rmse_test", "rmse_train"]);
    assert!(names[2].starts_with("X[") && names[3].starts_with("X["));
    assert_eq!(names[4..], ["W[1,1]", "W[1,2]", "H[1,1]", "H[1,2]"]);
    let x = random_point(model.dimension(), 1.0, 11);
    let mut out = vec![f64::NAN; names.len()];
    model.constrain(&x, &mut out);
    let ratings = model.ratings();
    let mut predictions = vec![0.0; ratings.test().len()];
    model.test_predictions(&x, &mut predictions);
    let (u, j, _) = ratings.test().get(0);
    assert_eq!(names[2], format!("X[{},{}]", u + 1, j + 1));
    assert_eq!(out[2], predictions[0]);
    let clipped: Vec<f64> = predictions.iter().map(|&p| ratings.clip(p)).collect();
    assert!((out[0] - ratings.test_rmse(&clipped)).abs() < 1e-12);
    assert!(
        ratings.test_rmse(&predictions) > out[0],
        "nothing was clipped"
    );
    assert_eq!(out[4..], [x[0], x[1], x[30 * 3], x[31 * 3]]);
    assert!(out[1] > 0.0);

    let model = bayesian(3);
    let names = model.output_names();
    assert_eq!(names.len(), 4 + 4 + 6);
    assert_eq!(names[4..8], ["U[1,1]", "V[1,1]", "mu_u[1]", "mu_v[1]"]);
    assert_eq!(
        names[8..],
        [
            "lambda_u[1]",
            "lambda_u[2]",
            "lambda_u[3]",
            "lambda_v[1]",
            "lambda_v[2]",
            "lambda_v[3]"
        ]
    );
    let x = random_point(model.dimension(), 1.0, 12);
    let mut out = vec![f64::NAN; names.len()];
    model.constrain(&x, &mut out);
    let hyper = 50 * 3;
    assert_eq!(out[4..8], [x[0], x[30 * 3], x[hyper], x[hyper + 3]]);
    assert_eq!(out[8], x[model.hyper_index(Hyper::LogLambdaU, 0)].exp());
    assert_eq!(out[13], x[hyper + 11].exp());
    let mut predictions = vec![0.0; model.ratings().test().len()];
    model.test_predictions(&x, &mut predictions);
    let clipped: Vec<f64> = predictions
        .iter()
        .map(|&p| model.ratings().clip(p))
        .collect();
    assert!((out[0] - model.ratings().test_rmse(&clipped)).abs() < 1e-12);
    // The start is not the saddle at the origin, and its λ are the prior mean.
    let start = model.initial_point();
    assert!(start[..hyper].iter().any(|&v| v != 0.0));
    assert!((start[hyper + 6].exp() - 4.0 * 0.8).abs() < 1e-12);
}

#[test]
fn settings_are_checked() {
    assert!(GaussianPmf::new(small_ratings(1), 0).is_err());
    assert!(BayesianPmf::new(small_ratings(1), 0).is_err());
    let e = GaussianPmf::new(small_ratings(1), 2)
        .unwrap()
        .with_sds(1.0, 0.0, 1.0)
        .unwrap_err();
    assert!(e.to_string().contains("sigma_h"), "{e}");
    let e = BayesianPmf::new(small_ratings(1), 2)
        .unwrap()
        .with_observation_precision(f64::NAN)
        .unwrap_err();
    assert!(e.to_string().contains("alpha"), "{e}");
}

/// Times the full-size set and its gradients; run in release with
/// `cargo test --release -p qnmc-host --lib full_size_timings -- --ignored --nocapture`.
/// Fails when the synthetic set takes 2 s or more to build.
#[test]
#[ignore = "a timing, meaningful in release mode only"]
fn full_size_timings() {
    use std::time::{Duration, Instant};
    fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
        let mut fastest = Duration::MAX;
        let mut last = None;
        for _ in 0..runs {
            let start = Instant::now();
            last = Some(f());
            fastest = fastest.min(start.elapsed());
        }
        (fastest, last.unwrap())
    }
    let (build, ratings) = best(3, || {
        SyntheticRecipe::movielens_1m(SYNTHETIC_SEED)
            .build()
            .unwrap()
    });
    eprintln!(
        "build the 1 000 209-rating synthetic set: {:.3} s",
        build.as_secs_f64()
    );
    let model = GaussianPmf::new(ratings.clone(), GaussianPmf::PAPER_RANK).unwrap();
    let x = model.initial_point();
    let mut g = vec![0.0; model.dimension()];
    let (full, _) = best(5, || model.potential_and_gradient(&x, &mut g));
    let mut rng = ModelRng::seed_from_u64(1);
    let (batch, _) = best(5, || model.stochastic_gradient(&x, 1000, &mut rng, &mut g));
    let (part, _) = best(5, || model.part_gradient(&x, 0, &mut g));
    let mut out = vec![0.0; model.output_names().len()];
    let (report, _) = best(5, || model.constrain(&x, &mut out));
    eprintln!(
        "pmf K = 50, D = {}: U and full gradient {:.1} ms, minibatch of 1000 {:.2} ms, \
         part 0 ({} ratings) {:.1} ms, reported quantities {:.2} ms",
        model.dimension(),
        1e3 * full.as_secs_f64(),
        1e3 * batch.as_secs_f64(),
        model.partition().part(0).len(),
        1e3 * part.as_secs_f64(),
        1e3 * report.as_secs_f64(),
    );
    let model = BayesianPmf::new(ratings, BayesianPmf::PAPER_RANK).unwrap();
    let x = model.initial_point();
    let mut g = vec![0.0; model.dimension()];
    let (full, _) = best(5, || model.potential_and_gradient(&x, &mut g));
    eprintln!(
        "bpmf K = 10, D = {}: U and full gradient {:.1} ms",
        model.dimension(),
        1e3 * full.as_secs_f64()
    );
    assert!(build < Duration::from_secs(2), "{build:?}");
}
