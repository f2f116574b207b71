//! Fashion-MNIST: the loader on small IDX folders written here (good and
//! broken), the folder lookup, and — when Debian's `dataset-fashion-mnist` is
//! installed — the real files' counts and pixel range; the model's gradient
//! against central differences and the minibatch gradient's mean against the
//! full gradient, on both.

use super::*;
use crate::input::{InputErrorKind, gzip, idx_bytes};
use crate::model::{Model, ModelRng};
use crate::targets::testing::random_point;
use rand_core::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A fresh folder in the temporary directory for `test`.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("qnmc-fashion-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Images of 6 rows × 5 columns (not square, so a transposition shows) with
/// labels cycling through 0..5; pixel (0, 0) is 0 in every image (a
/// constant column), the others pseudo-random with about a third zeros.
struct Split {
    labels: Vec<u8>,
    pixels: Vec<u8>,
}

const ROWS: usize = 6;
const COLUMNS: usize = 5;

fn split(count: usize, seed: u64) -> Split {
    let mut rng = ModelRng::seed_from_u64(seed);
    let labels = (0..count).map(|n| (n % 5) as u8).collect();
    let pixels = (0..count * ROWS * COLUMNS)
        .map(|i| {
            let r = rng.next_u32();
            if i % (ROWS * COLUMNS) == 0 || r % 3 == 0 {
                0
            } else {
                (r >> 8) as u8
            }
        })
        .collect();
    Split { labels, pixels }
}

/// Writes a Fashion-MNIST-shaped folder: train (gzip-compressed) and test
/// (the image file raw and without `.gz`, to exercise that fallback).
fn write_folder(dir: &Path, train: &Split, test: &Split) {
    let images = |s: &Split| idx_bytes(&[s.labels.len(), ROWS, COLUMNS], &s.pixels);
    let labels = |s: &Split| idx_bytes(&[s.labels.len()], &s.labels);
    std::fs::write(dir.join("train-images-idx3-ubyte.gz"), gzip(&images(train))).unwrap();
    std::fs::write(dir.join("train-labels-idx1-ubyte.gz"), gzip(&labels(train))).unwrap();
    std::fs::write(dir.join("t10k-images-idx3-ubyte"), images(test)).unwrap();
    std::fs::write(dir.join("t10k-labels-idx1-ubyte.gz"), gzip(&labels(test))).unwrap();
}

/// A small folder, loaded with classes [3, 1] (3 → 0, 1 → 1).
fn small(test: &str) -> (PathBuf, Split, Split, FashionMnist) {
    let dir = scratch(test);
    let (train, held) = (split(200, 1), split(40, 2));
    write_folder(&dir, &train, &held);
    let data = FashionMnist::load(&dir, [3, 1]).unwrap();
    (dir, train, held, data)
}

#[test]
fn a_small_folder_becomes_a_model_and_a_held_out_set() {
    let (dir, train, held, data) = small("good");
    let model = &data.train;
    assert_eq!(model.name(), "fashion-mnist");
    assert_eq!(model.dimension(), ROWS * COLUMNS);
    assert!(!model.has_intercept());
    assert_eq!(model.prior_variance(), PAPER_PRIOR_VARIANCE);
    assert_eq!(data.classes(), [3, 1]);
    assert_eq!(data.folder(), dir);
    // Rows in file order, class 3 → 0 and class 1 → 1, pixels / 255.
    let kept: Vec<usize> = (0..200)
        .filter(|&n| [3, 1].contains(&train.labels[n]))
        .collect();
    assert_eq!(model.len(), kept.len());
    assert_eq!(model.len(), 80);
    for (row, &n) in kept.iter().enumerate() {
        let expected_label = if train.labels[n] == 3 { 0.0 } else { 1.0 };
        assert_eq!(model.labels()[row], expected_label);
        let pixels = &train.pixels[n * 30..(n + 1) * 30];
        let expected: Vec<f64> = pixels.iter().map(|&p| f64::from(p) / 255.0).collect();
        assert_eq!(model.design_row(row), expected.as_slice());
    }
    assert_eq!(model.positives(), 40);
    assert_eq!(model.label_mapping().zero, "3 (Dress)");
    assert_eq!(model.label_mapping().one, "1 (Trouser)");
    // Pixel names row by row: w[6] is row 2, column 1 of a 5-column image.
    assert_eq!(model.column_names()[0], "pixel[1,1]");
    assert_eq!(model.column_names()[5], "pixel[2,1]");
    assert_eq!(model.column_names()[29], "pixel[6,5]");
    assert_eq!(model.output_names()[29], "w[30]");
    // The held-out set: the 16 test images of the two classes.
    assert_eq!((data.test.len(), data.test.positives()), (16, 8));
    assert_eq!(data.test.dimension(), 30);
    let test_rows: Vec<usize> = (0..40)
        .filter(|&n| [3, 1].contains(&held.labels[n]))
        .collect();
    let w = random_point(30, 1.0, 5);
    let wrong = test_rows
        .iter()
        .filter(|&&n| {
            let f: f64 = (0..30)
                .map(|j| f64::from(held.pixels[n * 30 + j]) / 255.0 * w[j])
                .sum();
            (f > 0.0) != (held.labels[n] == 1)
        })
        .count();
    assert_eq!(data.test_error(&w), wrong as f64 / 16.0);
    // model.json: which rows, how labels were made, the file's hash.
    let json = model.description().unwrap();
    let selection = json["data"]["selection"].as_str().unwrap();
    assert!(
        selection.starts_with(
            "the 80 of 200 training images labelled 3 (Dress) (40) or 1 (Trouser) (40)"
        ),
        "{selection}"
    );
    assert!(
        selection.contains("not standardised, no intercept"),
        "{selection}"
    );
    assert_eq!(
        json["label"]["rule"],
        "class 3 (Dress) -> 0, class 1 (Trouser) -> 1 (the first class named is 0)"
    );
    assert_eq!(json["intercept"], false);
    assert_eq!(json["standardization"], serde_json::Value::Null);
    let bytes = std::fs::read(dir.join("train-images-idx3-ubyte.gz")).unwrap();
    let mut sha = crate::input::Sha256::new();
    sha.update(&bytes);
    assert_eq!(json["data"]["sha256"], sha.hex());
    assert_eq!(json["data"]["rows_in_file"], 200);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn broken_folders_are_refused_naming_the_file() {
    let dir = scratch("broken");
    let (train, held) = (split(50, 3), split(20, 4));
    // Two equal classes.
    write_folder(&dir, &train, &held);
    let err = FashionMnist::load(&dir, [2, 2]).unwrap_err();
    assert_eq!(err.kind(), InputErrorKind::Label);
    assert!(
        err.to_string()
            .ends_with("the two classes must differ, not 2 and 2"),
        "{err}"
    );
    // A class no image has.
    let err = FashionMnist::load(&dir, [2, 7]).unwrap_err().to_string();
    let labels = dir.join("train-labels-idx1-ubyte.gz");
    assert_eq!(
        err,
        format!(
            "{}: no image has label 7; the labels present are 0, 1, 2, 3, 4",
            labels.display()
        )
    );
    // Labels that do not match the images in number.
    std::fs::write(&labels, gzip(&idx_bytes(&[49], &train.labels[..49]))).unwrap();
    let err = FashionMnist::load(&dir, [2, 4]).unwrap_err();
    assert_eq!(err.kind(), InputErrorKind::Dimension);
    assert_eq!(
        err.to_string(),
        format!(
            "{}: 49 labels for 50 images: the image and label files do not belong together",
            labels.display()
        )
    );
    // Test images of another size.
    write_folder(&dir, &train, &held);
    let test_images = dir.join("t10k-images-idx3-ubyte");
    std::fs::write(&test_images, idx_bytes(&[1, 5, 6], &[0; 30])).unwrap();
    let err = FashionMnist::load(&dir, [2, 4]).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "{}: its images are 5 × 6 pixels",
            test_images.display()
        )),
        "{err}"
    );
    // A missing file is named as distributed (.gz).
    std::fs::remove_file(&test_images).unwrap();
    let err = FashionMnist::load(&dir, [2, 4]).unwrap_err();
    assert_eq!(err.kind(), InputErrorKind::Io);
    assert!(
        err.to_string()
            .contains(&dir.join("t10k-images-idx3-ubyte.gz").display().to_string()),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_folder_is_explicit_then_environment_then_default() {
    let root = scratch("locate");
    let (a, b, c) = (root.join("a"), root.join("b"), root.join("c"));
    for d in [&a, &b, &c] {
        std::fs::create_dir_all(d).unwrap();
    }
    let missing = root.join("missing");
    assert_eq!(
        FashionMnist::locate_in(Some(&a), Some(b.clone()), &c).unwrap(),
        a
    );
    assert_eq!(
        FashionMnist::locate_in(None, Some(b.clone()), &c).unwrap(),
        b
    );
    assert_eq!(FashionMnist::locate_in(None, None, &c).unwrap(), c);
    // A named folder that does not exist is an error, not a fallback.
    let err = FashionMnist::locate_in(Some(&missing), None, &c)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!("{} (--data", missing.display())),
        "{err}"
    );
    let err = FashionMnist::locate_in(None, Some(missing.clone()), &c)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("QNMC_FASHION_MNIST: not an existing folder"),
        "{err}"
    );
    let err = FashionMnist::locate_in(None, None, &missing)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("apt-get install dataset-fashion-mnist") && err.contains("docs/DATA.md"),
        "{err}"
    );
    assert!(!err.contains('\n'), "one line: {err}");
    std::fs::remove_dir_all(root).unwrap();
}

/// The real files, loaded once for every test here that needs them (7 vs 9),
/// or `None` after a `skipped` line (a failure with
/// `QNMC_REQUIRE_FASHION_MNIST=1`).
fn real(test: &str) -> Option<&'static FashionMnist> {
    static REAL: OnceLock<Option<FashionMnist>> = OnceLock::new();
    // Each test asks for itself, so each prints its own skip line.
    FashionMnist::for_test(test)?;
    REAL.get_or_init(|| {
        let dir = FashionMnist::locate(None).ok()?;
        Some(FashionMnist::load(&dir, FashionMnist::MNIST_STAND_IN).unwrap())
    })
    .as_ref()
}

#[test]
fn the_real_files_hold_6000_and_6000_training_and_1000_and_1000_test_images() {
    let Some(data) =
        real("the_real_files_hold_6000_and_6000_training_and_1000_and_1000_test_images")
    else {
        return;
    };
    let model = &data.train;
    assert_eq!(model.dimension(), 784);
    assert_eq!((model.len(), model.positives()), (12_000, 6_000));
    assert_eq!((data.test.len(), data.test.positives()), (2_000, 1_000));
    assert_eq!(model.data_description().rows_read, 60_000);
    assert_eq!(model.label_mapping().zero, "7 (Sneaker)");
    assert_eq!(model.label_mapping().one, "9 (Ankle boot)");
    // Pixels / 255: in [0, 1], with both ends reached.
    let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
    for n in 0..model.len() {
        for &x in model.design_row(n) {
            low = low.min(x);
            high = high.max(x);
        }
    }
    assert_eq!((low, high), (0.0, 1.0));
    for n in 0..data.test.len() {
        assert!(
            data.test
                .design_row(n)
                .iter()
                .all(|x| (0.0..=1.0).contains(x))
        );
    }
    // w = 0 predicts label 0 everywhere: exactly the 1000 ankle boots are wrong.
    assert_eq!(data.test_error(&[0.0; 784]), 0.5);
}

/// The largest error of `model`'s gradient at `w` on `coordinates` against
/// central differences with step `h`, relative to max(1, ‖∇U‖∞).
fn gradient_error_on(model: &dyn Model, w: &[f64], coordinates: &[usize], h: f64) -> f64 {
    let mut g = vec![0.0; w.len()];
    let _ = model.potential_and_gradient(w, &mut g);
    let scale = g.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let mut scratch = vec![0.0; w.len()];
    coordinates
        .iter()
        .map(|&i| {
            let (mut plus, mut minus) = (w.to_vec(), w.to_vec());
            plus[i] += h;
            minus[i] -= h;
            let up = model.potential_and_gradient(&plus, &mut scratch);
            let down = model.potential_and_gradient(&minus, &mut scratch);
            ((up - down) / (2.0 * h) - g[i]).abs() / scale
        })
        .fold(0.0, f64::max)
}

#[test]
fn gradient_matches_central_differences_on_a_few_coordinates() {
    // h = 1e-5. Truncation is h²·|∂³U|/6 ≤ 1e-10 · N·max x³ / 6 < 1e-6 for
    // N ≤ 12 000 rows of pixels in [0, 1]; rounding is ~1e-16·|U|/h with
    // |U| ≲ 1e5, so ≲ 1e-6 in absolute terms and far less relative to
    // ‖∇U‖∞ (hundreds at these w). Bound: 1e-6 relative to max(1, ‖∇U‖∞).
    let (dir, _, _, data) = small("gradient");
    for seed in 0..3 {
        let w = random_point(30, 0.5, 20 + seed);
        let all: Vec<usize> = (0..30).collect();
        let err = gradient_error_on(&data.train, &w, &all, 1e-5);
        assert!(
            err < 1e-6,
            "small folder, seed {seed}: relative error {err}"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
    let Some(data) = real("gradient_matches_central_differences_on_a_few_coordinates (real files)")
    else {
        return;
    };
    // A corner pixel (blank in most images), pixels of the shoe's body, and
    // the last one.
    let coordinates = [0, 14 * 28 + 13, 20 * 28 + 5, 17 * 28 + 22, 783];
    let w = random_point(784, 0.05, 31);
    let err = gradient_error_on(&data.train, &w, &coordinates, 1e-5);
    assert!(err < 1e-6, "real files: relative error {err}");
}

/// Checks that the average of `k` minibatch gradients of size `batch` at `w`
/// is the full gradient: in each coordinate, and along the full gradient's
/// likelihood part, within 5 standard errors.
///
/// The standard errors are exact, derived from the data rather than from the
/// estimates: a minibatch estimate is w/v + (N/B) Σ_b gₙ_b with the B indices
/// nᵦ uniform on the N rows and gₙ = (σ(xₙᵀw) − tₙ) xₙ, so along any
/// direction u its variance is (N²/B) Var_n(uᵀgₙ) and the Monte-Carlo
/// standard error of the average of K estimates is N·sd_n(uᵀgₙ)/√(B·K). An
/// average of K ≥ 2000 estimates is close to Gaussian, which exceeds 5 such
/// errors with probability 6e-7 (5e-4 over 784 coordinates). A coordinate
/// whose pixel is 0 in every row has standard error 0: its estimate must
/// equal the exact one (up to rounding).
///
/// A bias shared by many coordinates (a wrong N/B weight: the average is c
/// times the likelihood part) can stay under 5 standard errors in each; along
/// the likelihood part u = Σₙ gₙ itself it adds (c − 1)·‖u‖². Measured by
/// scaling N/B in the model: c = 1.05 fails a coordinate of the small folder,
/// c = 1.01 gives z = 4.4 along u there (K = 200 000) and fails a coordinate
/// of the real files. (The coordinates' z-scores cannot be pooled into a
/// chi-square: the rows' pixels are positively correlated, so the
/// coordinates' errors are too; a chi-square bound failed the correct code.)
///
/// The summed variance of the estimates must also be within 10 % of the
/// exact Σᵢ (N²/B) Var_n(gₙᵢ) (a deterministic or mis-weighted estimate
/// fails here even when its mean is right).
fn check_minibatch_mean(model: &LogisticRegressionModel, w: &[f64], batch: usize, k: usize) {
    let d = model.dimension();
    let n = model.len() as f64;
    let mut full = vec![0.0; d];
    let _ = model.potential_and_gradient(w, &mut full);
    let prior: Vec<f64> = w.iter().map(|wi| wi / model.prior_variance()).collect();
    let u: Vec<f64> = full.iter().zip(&prior).map(|(g, p)| g - p).collect();
    // The rows' gradients: mean and variance in each coordinate and along u.
    let (mut row_sum, mut row_sq) = (vec![0.0; d], vec![0.0; d]);
    let (mut along_sum, mut along_sq) = (0.0, 0.0);
    for (row, &t) in model.labels().iter().enumerate() {
        let x = model.design_row(row);
        let f: f64 = x.iter().zip(w).map(|(a, b)| a * b).sum();
        let r = 1.0 / (1.0 + (-f).exp()) - t;
        for i in 0..d {
            row_sum[i] += r * x[i];
            row_sq[i] += (r * x[i]).powi(2);
        }
        let along = r * x.iter().zip(&u).map(|(a, b)| a * b).sum::<f64>();
        along_sum += along;
        along_sq += along * along;
    }
    let variance = |sum: f64, sq: f64| (sq / n - (sum / n).powi(2)).max(0.0);
    let row_var: Vec<f64> = (0..d).map(|i| variance(row_sum[i], row_sq[i])).collect();
    let mut rng = ModelRng::seed_from_u64(11);
    let (mut sum, mut sum_sq) = (vec![0.0; d], vec![0.0; d]);
    let mut along_estimates = 0.0;
    let mut g = vec![0.0; d];
    for _ in 0..k {
        model.stochastic_gradient(w, batch, &mut rng, &mut g);
        for i in 0..d {
            sum[i] += g[i];
            sum_sq[i] += g[i] * g[i];
            along_estimates += (g[i] - prior[i]) * u[i];
        }
    }
    let (kf, bf) = (k as f64, batch as f64);
    let scale = full.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let (mut exact_total, mut seen_total) = (0.0, 0.0);
    for i in 0..d {
        let mean = sum[i] / kf;
        let se = n * (row_var[i] / (bf * kf)).sqrt();
        let tolerance = if se > 0.0 { 5.0 * se } else { 1e-12 * scale };
        assert!(
            (mean - full[i]).abs() <= tolerance,
            "coordinate {i}: average {mean}, exact {}, standard error {se}",
            full[i]
        );
        exact_total += n * n / bf * row_var[i];
        seen_total += (sum_sq[i] / kf - mean * mean) * kf / (kf - 1.0);
    }
    let along_mean = along_estimates / kf;
    let along_exact: f64 = u.iter().map(|v| v * v).sum();
    let along_se = n * (variance(along_sum, along_sq) / (bf * kf)).sqrt();
    assert!(
        (along_mean - along_exact).abs() <= 5.0 * along_se,
        "along the likelihood gradient: average {along_mean}, exact {along_exact}, standard \
         error {along_se}"
    );
    assert!(
        (seen_total / exact_total - 1.0).abs() < 0.1,
        "summed variance of the estimates {seen_total}, exact {exact_total}"
    );
}

#[test]
fn minibatch_gradient_mean_is_the_full_gradient() {
    let (dir, _, _, data) = small("minibatch");
    check_minibatch_mean(&data.train, &random_point(30, 0.5, 40), 5, 200_000);
    std::fs::remove_dir_all(dir).unwrap();
    let Some(data) = real("minibatch_gradient_mean_is_the_full_gradient (real files)") else {
        return;
    };
    check_minibatch_mean(&data.train, &random_point(784, 0.05, 41), 50, 2000);
}
