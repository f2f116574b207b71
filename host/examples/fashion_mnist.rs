//! The `fashion-mnist` target's costs, and the test error of runs on it.
//!
//! Prints the time to load the two classes from the IDX files, the time of
//! one full-data U and ∇U (12 000 images × 784 pixels) and of one minibatch
//! gradient, then, for each `qnmc run --output` folder given, the test error
//! on the 2 000 held-out images of its kept draws:
//!
//! - `posterior mean`: the error of w̄, the mean of every kept draw;
//! - `per draw`: the error of each draw, averaged over the draws;
//! - `predictive`: the error of the posterior predictive, σ(xᵀw) averaged
//!   over the draws, predicting label 1 above ½ (the Bayesian classifier;
//!   the QNHMC paper's Table 2 reports a test error of this kind: 0.0496
//!   for QNHMC on MNIST 7 vs 9).
//!
//! ```sh
//! cargo run --release -p qnmc-cli -- run --target fashion-mnist --sampler qnhmc \
//!     --draws 200 --warmup 200 --chains 2 --output /tmp/fm-run --force
//! cargo run --release -p qnmc-host --example fashion_mnist -- /tmp/fm-run
//! ```
//!
//! (QNHMC's fixed 10 leapfrog steps make that a few minutes; the same run
//! with NUTS did not finish in 84 minutes, docs/DATA.md.)
//!
//! The data folder is found as for `--target fashion-mnist` without
//! `--data`: `$QNMC_FASHION_MNIST`, else /usr/share/datasets/fashion-mnist.
use qnmc_host::model::{Model, ModelRng};
use qnmc_host::output::{csv_column_name, read_cmdstan_csv};
use qnmc_host::targets::FashionMnist;
use rand_core::SeedableRng;
use std::path::Path;
use std::time::Instant;

/// The median of `samples` (sorted in place).
fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Milliseconds of `f`, the median of `repeats` calls.
fn time_ms(repeats: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..repeats)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    median(&mut times)
}

/// Every kept draw of the run in `folder` (`chain_*.csv`), each a w of
/// length `dimension`.
fn draws(folder: &Path, dimension: usize) -> Result<Vec<Vec<f64>>, String> {
    let mut files: Vec<_> = std::fs::read_dir(folder)
        .map_err(|e| format!("{}: {e}", folder.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("chain_") && n.ends_with(".csv"))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("{}: no chain_*.csv", folder.display()));
    }
    let mut all = Vec::new();
    for file in files {
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let csv = read_cmdstan_csv(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let columns: Vec<usize> = (1..=dimension)
            .map(|k| {
                let name = csv_column_name(&format!("w[{k}]"));
                csv.column_index(&name)
                    .ok_or_else(|| format!("{}: no column {name}", file.display()))
            })
            .collect::<Result<_, _>>()?;
        let width = csv.column_names.len();
        for row in 0..csv.rows() {
            let values = &csv.values[row * width..(row + 1) * width];
            all.push(columns.iter().map(|&j| values[j]).collect());
        }
    }
    Ok(all)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = FashionMnist::locate(None)?;
    let start = Instant::now();
    let data = FashionMnist::load(&dir, FashionMnist::MNIST_STAND_IN)?;
    let load = start.elapsed().as_secs_f64();
    let model = &data.train;
    let d = model.dimension();
    println!(
        "{}: loaded in {load:.2} s: {} training images ({} label 1), {} test images, d = {d}",
        dir.display(),
        model.len(),
        model.positives(),
        data.test.len()
    );
    let w: Vec<f64> = (0..d).map(|i| 0.01 * ((i % 7) as f64 - 3.0)).collect();
    let mut g = vec![0.0; d];
    let full = time_ms(21, || {
        let _ = model.potential_and_gradient(&w, &mut g);
    });
    let mut rng = ModelRng::seed_from_u64(1);
    let minibatch = time_ms(201, || model.stochastic_gradient(&w, 100, &mut rng, &mut g));
    println!(
        "one full U and gradient: {full:.2} ms (median of 21); one minibatch gradient of 100 \
         images: {minibatch:.3} ms (median of 201)"
    );
    for folder in std::env::args().skip(1) {
        let draws = draws(Path::new(&folder), d)?;
        let count = draws.len() as f64;
        let mut mean = vec![0.0; d];
        for w in &draws {
            for (m, x) in mean.iter_mut().zip(w) {
                *m += x / count;
            }
        }
        let slices = || draws.iter().map(Vec::as_slice);
        println!(
            "{folder}: {} kept draws; test error: posterior mean {:.4}, per draw {:.4}, \
             predictive {:.4}; training error of the posterior mean {:.4}",
            draws.len(),
            data.test.test_error(&mean),
            data.test.mean_test_error(slices()),
            data.test.predictive_test_error(slices()),
            training_error(model, &mean),
        );
    }
    Ok(())
}

/// The fraction of training images the posterior mean misclassifies.
fn training_error(model: &qnmc_host::targets::LogisticRegressionModel, w: &[f64]) -> f64 {
    let wrong = (0..model.len())
        .filter(|&n| {
            let f: f64 = model.design_row(n).iter().zip(w).map(|(x, w)| x * w).sum();
            (f > 0.0) != (model.labels()[n] == 1.0)
        })
        .count();
    wrong as f64 / model.len() as f64
}
