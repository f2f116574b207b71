//! Tests of `qnhmc-table2`: the byte-pixel potential against the project's
//! model (when the data are installed), the gradient, the burn-in band and
//! the seed summary on made-up traces, and the quick run's rows and charts.

use qnmc::Potential;

use super::chains::{Kind, Trace};
use super::data::{DIMENSION, Images};
use super::summary::{Band, OverSeeds};
use super::*;
use qnmc_host::model::Model;
use qnmc_host::targets::FashionMnist;

fn small_images() -> Images {
    // Four images: two bright in the first half (label 0), two in the
    // second (label 1).
    let mut pixels = vec![0u8; 4 * DIMENSION];
    for n in 0..4 {
        let half = if n < 2 {
            0..DIMENSION / 2
        } else {
            DIMENSION / 2..DIMENSION
        };
        for i in half.step_by(3 + n) {
            pixels[n * DIMENSION + i] = 200 + n as u8;
        }
    }
    Images::new(pixels, vec![0.0, 0.0, 1.0, 1.0], 0.01)
}

#[test]
fn gradient_matches_finite_differences() {
    let images = small_images();
    let w: [f64; DIMENSION] = core::array::from_fn(|i| 0.01 * ((i % 7) as f64 - 3.0));
    let mut g = [0.0; DIMENSION];
    images.potential_and_gradient(&w, &mut g);
    let mut scratch = [0.0; DIMENSION];
    for i in [0, 5, 391, 500, 783] {
        let h = 1e-6;
        let (mut plus, mut minus) = (w, w);
        plus[i] += h;
        minus[i] -= h;
        let numeric = (images.potential_and_gradient(&plus, &mut scratch)
            - images.potential_and_gradient(&minus, &mut scratch))
            / (2.0 * h);
        assert!(
            (numeric - g[i]).abs() < 1e-6 * (1.0 + g[i].abs()),
            "{i}: {numeric} vs {}",
            g[i]
        );
    }
}

#[test]
fn at_zero_every_image_is_label_one_and_half_are_wrong() {
    let images = small_images();
    assert_eq!(images.error(&[0.0; DIMENSION]), 0.5);
    let mut g = [0.0; DIMENSION];
    let u = images.potential_and_gradient(&[0.0; DIMENSION], &mut g);
    assert!((u - 4.0 * std::f64::consts::LN_2).abs() < 1e-12);
}

#[test]
fn byte_pixels_give_the_models_potential() {
    let Some(dir) = FashionMnist::for_test("byte_pixels_give_the_models_potential") else {
        return;
    };
    let data = FashionMnist::load(&dir, FashionMnist::MNIST_STAND_IN).unwrap();
    let ours = data::load(1, 1).unwrap();
    assert_eq!((ours.train.len(), ours.test.len()), (12_000, 2_000));
    let w: Vec<f64> = (0..DIMENSION)
        .map(|i| 0.003 * ((i % 11) as f64 - 5.0))
        .collect();
    let mut g_model = vec![0.0; DIMENSION];
    let u_model = data.train.potential_and_gradient(&w, &mut g_model);
    let mut g = [0.0; DIMENSION];
    let u = ours
        .train
        .potential_and_gradient(&w.clone().try_into().unwrap(), &mut g);
    assert!(
        (u - u_model).abs() < 1e-9 * u_model.abs(),
        "{u} vs {u_model}"
    );
    for (i, (a, b)) in g.iter().zip(&g_model).enumerate() {
        assert!((a - b).abs() < 1e-9 * (1.0 + b.abs()), "{i}");
    }
    // A byte's rounding may flip an image at probability ½ exactly: allow one.
    assert!((ours.test.error(&w) - data.test_error(&w)).abs() <= 1.0 / 2000.0);
}

fn trace(kind: Kind, potential: Vec<f64>) -> Trace {
    let n = potential.len();
    Trace {
        kind,
        seed: 0,
        step_size: 0.01,
        test_error: vec![0.1; n],
        gradients: (1..=n as u64).map(|k| 5 * k + 1).collect(),
        seconds: (1..=n).map(|k| k as f64).collect(),
        potential,
        kept_updates: n / 2,
        accepted: n / 4,
        divergences: 0,
        kept_draws: n / 2,
        predictive_error: 0.05,
        posterior_mean_error: 0.06,
        mean_draw_error: 0.07,
        ess: vec![10.0; DIMENSION],
        ess_potential: 5.0,
    }
}

#[test]
fn burn_in_is_the_first_update_inside_the_band() {
    // A run settling at U = 1000 and one stuck at 2000.
    let settled: Vec<f64> = (0..100)
        .map(|k| {
            if k < 30 {
                5000.0 - 100.0 * k as f64
            } else {
                1000.0
            }
        })
        .collect();
    let stuck = vec![2000.0; 100];
    let traces = vec![trace(Kind::Hmc, settled), trace(Kind::Qnhmc, stuck)];
    let band = Band::of(&traces);
    assert_eq!(band.reference, 1000.0);
    assert!((band.threshold - 1000.0 - 3.0 * 392f64.sqrt()).abs() < 1e-9);
    assert_eq!(band.burn_in(&traces[0]), Some(30));
    assert_eq!(band.burn_in(&traces[1]), None);
    let rows = summary::rows(&traces, &band, 50);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].burn_in_updates.mean, 31.0);
    assert_eq!(rows[0].burn_in_gradients.mean, 156.0);
    assert_eq!(rows[1].burn_in_updates.missing, 1);
    // Median ESS 10 over 50 s and 250 gradients of the kept phase.
    assert!((rows[0].median_ess_per_second.mean - 0.2).abs() < 1e-12);
    assert!((rows[0].median_ess_per_kilogradient.mean - 40.0).abs() < 1e-9);
}

#[test]
fn over_seeds_leaves_out_nan() {
    let v = OverSeeds::of(&[1.0, f64::NAN, 3.0]);
    assert_eq!((v.mean, v.min, v.max, v.missing), (2.0, 1.0, 3.0, 1));
}

/// Lengths small enough for a debug build: 120 training and 100 test
/// images, 40 updates.
fn tiny() -> Lengths {
    Lengths {
        iterations: 40,
        warmup: 20,
        seeds: 1,
        train_stride: 100,
        test_stride: 20,
        descent_steps: 20,
    }
}

#[test]
fn a_short_run_has_every_row_and_chart() {
    let Some(_) = FashionMnist::for_test("a_short_run_has_every_row_and_chart") else {
        return;
    };
    let lengths = tiny();
    let data = data::load(lengths.train_stride, lengths.test_stride).unwrap();
    assert_eq!((data.train.len(), data.test.len()), (120, 100));
    let results = results(&data, lengths, 7);
    assert_eq!(results.traces.len(), 4);
    for t in &results.traces {
        assert_eq!(t.potential.len(), 40);
        assert_eq!(t.kept_draws, 20);
        assert!(
            t.predictive_error <= 0.5,
            "{:?} {}",
            t.kind,
            t.predictive_error
        );
    }
    let options = ReproduceOptions {
        seed: 7,
        quick: true,
    };
    let md = write::markdown(&results, &options);
    for label in [
        "| HMC |",
        "| HMC-BFGS |",
        "| QNHMC |",
        "| QNHMC, M = C |",
        "| GD (λ",
    ] {
        assert!(md.contains(label), "{label}");
    }
    let charts = write::charts(&results);
    let stems: Vec<&str> = charts.iter().map(|c| c.file_stem.as_str()).collect();
    assert_eq!(stems, ["qnhmc-table2-test-error", "qnhmc-table2-potential"]);
    assert_eq!(charts[0].series.len(), 5);
    // The paper's ε = 0.1 accepts nothing on this posterior.
    for (_, accepted, probability) in &results.probe {
        assert_eq!(*accepted, 0);
        assert!(*probability < 1e-6, "{probability}");
    }
}

#[test]
fn without_data_the_run_is_skipped_with_why() {
    if FashionMnist::locate(None).is_ok() {
        return;
    }
    let r = run(&ReproduceOptions::default());
    assert_eq!(r.skipped.len(), 1);
    assert!(r.markdown.contains("not run"));
}

/// Tuned HMC classifies far better than chance after a short warm-up (120
/// training images, 60 updates).
#[test]
fn tuned_hmc_learns() {
    let Some(_) = FashionMnist::for_test("tuned_hmc_learns") else {
        return;
    };
    let lengths = Lengths {
        iterations: 60,
        warmup: 30,
        ..tiny()
    };
    let data = data::load(lengths.train_stride, lengths.test_stride).unwrap();
    let t = chains::run(Kind::Hmc, 3, &data, lengths);
    assert!(t.predictive_error < 0.2, "{}", t.predictive_error);
    assert_eq!(*t.gradients.last().unwrap(), 1 + 60 * 5);
}
