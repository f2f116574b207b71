//! posteriordb targets: dimensions and names, gradients, Jacobians against
//! the constrained density, reference moments against posteriordb's own, and
//! the file errors.

use super::*;
use crate::input::InputErrorKind;
use crate::targets::testing::{gradient_error, random_point, shared_data};
use std::f64::consts::PI;
use std::io::Write;
use std::path::{Path, PathBuf};

/// posteriordb in the shared data folder, or `None` (the test skips, saying so).
fn root(test: &str) -> Option<PathBuf> {
    shared_data(test).map(|d| d.join("posteriordb/posterior_database"))
}

fn load(posterior: PosteriordbPosterior, root: &Path) -> Posteriordb {
    Posteriordb::load(posterior, root).unwrap()
}

fn normal_lpdf(x: f64, mu: f64, sigma: f64) -> f64 {
    -0.5 * ((x - mu) / sigma).powi(2) - sigma.ln() - 0.5 * (2.0 * PI).ln()
}

fn cauchy_lpdf(x: f64, scale: f64) -> f64 {
    -(PI * scale * (1.0 + (x / scale).powi(2))).ln()
}

/// log |dσ/ds| of the positivity transform, by central differences of the
/// model's own `constrain` (coordinate `index` of both scales).
fn log_jacobian(model: &Posteriordb, x: &[f64], index: usize, output: usize) -> f64 {
    let h = 1e-6;
    let n = model.output_names().len();
    let (mut up, mut down) = (vec![0.0; n], vec![0.0; n]);
    let mut plus = x.to_vec();
    let mut minus = x.to_vec();
    plus[index] += h;
    minus[index] -= h;
    model.constrain(&plus, &mut up);
    model.constrain(&minus, &mut down);
    ((up[output] - down[output]) / (2.0 * h)).ln()
}

/// The data of a posterior, read directly.
fn data(posterior: PosteriordbPosterior, root: &Path) -> serde_json::Value {
    crate::input::read_zipped_json(&posterior.data_path(root)).unwrap()
}

fn list(value: &serde_json::Value, key: &str) -> Vec<f64> {
    value[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

/// The Stan model's log density on the constrained scale, written out from
/// the `.stan` files with every normalising constant (they cancel in
/// differences), at the constrained values `c` (in output order).
fn stan_log_density(posterior: PosteriordbPosterior, root: &Path, c: &[f64], x: &[f64]) -> f64 {
    let d = data(posterior, root);
    match posterior {
        PosteriordbPosterior::EightSchoolsNoncentered => {
            let (y, sigma) = (list(&d, "y"), list(&d, "sigma"));
            let (mu, tau) = (c[8], c[9]);
            let mut lp = normal_lpdf(mu, 0.0, 5.0) + cauchy_lpdf(tau, 5.0);
            for j in 0..8 {
                // theta_trans from the unconstrained point itself.
                lp += normal_lpdf(x[j], 0.0, 1.0) + normal_lpdf(y[j], c[j], sigma[j]);
            }
            lp
        }
        PosteriordbPosterior::SblrcBlr => {
            let y = list(&d, "y");
            let rows: Vec<Vec<f64>> = d["X"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    r.as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_f64().unwrap())
                        .collect()
                })
                .collect();
            let sigma = c[5];
            let mut lp = normal_lpdf(sigma, 0.0, 10.0);
            for k in 0..5 {
                lp += normal_lpdf(c[k], 0.0, 10.0);
            }
            for (row, y) in rows.iter().zip(&y) {
                let mean: f64 = row.iter().zip(c).map(|(a, b)| a * b).sum();
                lp += normal_lpdf(*y, mean, sigma);
            }
            lp
        }
        PosteriordbPosterior::ArK => {
            let y = list(&d, "y");
            let (alpha, beta, sigma) = (c[0], &c[1..6], c[6]);
            let mut lp = normal_lpdf(alpha, 0.0, 10.0) + cauchy_lpdf(sigma, 2.5);
            for b in beta {
                lp += normal_lpdf(*b, 0.0, 10.0);
            }
            for t in 5..y.len() {
                let mut mu = alpha;
                for k in 0..5 {
                    mu += beta[k] * y[t - k - 1];
                }
                lp += normal_lpdf(y[t], mu, sigma);
            }
            lp
        }
    }
}

#[test]
fn dimensions_and_names_match_posteriordb() {
    let Some(root) = root("dimensions_and_names_match_posteriordb") else {
        return;
    };
    let expected: [(PosteriordbPosterior, &[&str]); 3] = [
        (
            PosteriordbPosterior::EightSchoolsNoncentered,
            &[
                "theta[1]", "theta[2]", "theta[3]", "theta[4]", "theta[5]", "theta[6]", "theta[7]",
                "theta[8]", "mu", "tau",
            ],
        ),
        (
            PosteriordbPosterior::SblrcBlr,
            &[
                "beta[1]", "beta[2]", "beta[3]", "beta[4]", "beta[5]", "sigma",
            ],
        ),
        (
            PosteriordbPosterior::ArK,
            &[
                "alpha", "beta[1]", "beta[2]", "beta[3]", "beta[4]", "beta[5]", "sigma",
            ],
        ),
    ];
    for (posterior, names) in expected {
        let model = load(posterior, &root);
        assert_eq!(model.dimension(), posterior.dimension());
        assert_eq!(model.output_names(), names);
        assert_eq!(model.name(), posterior.target_name());
        // posteriordb's own summary lists the same quantities.
        let summary = ReferenceSummary::read(&posterior.mean_value_path(&root)).unwrap();
        for name in names {
            assert!(summary.get(name).is_some(), "{posterior}: {name}");
        }
    }
    let names: Vec<&str> = PosteriordbPosterior::ALL
        .iter()
        .map(|p| p.target_name())
        .collect();
    assert_eq!(names, ["eight-schools", "sblrc-blr", "ark"]);
}

#[test]
fn gradient_matches_central_differences() {
    let Some(root) = root("gradient_matches_central_differences") else {
        return;
    };
    // h = 1e-6 with U up to ~1e6 (sblrc-blr at σ far from its posterior):
    // rounding ~1e-16·1e6/1e-6 = 1e-4 against gradients of the same order
    // of magnitude as U; the bound 1e-6 is relative to max(1, ‖∇U‖∞).
    for posterior in PosteriordbPosterior::ALL {
        let model = load(posterior, &root);
        for seed in 0..5 {
            let x = random_point(model.dimension(), 1.0, 200 + seed);
            let err = gradient_error(&model, &x, 1e-6);
            assert!(err < 1e-6, "{posterior} seed {seed}: relative error {err}");
        }
    }
}

#[test]
fn potential_is_the_constrained_density_times_the_jacobian() {
    let Some(root) = root("potential_is_the_constrained_density_times_the_jacobian") else {
        return;
    };
    // U(x₁) − U(x₂) must equal −[log p(c(x₁)) + log|J(x₁)|] + [same at x₂],
    // with log p the Stan model written out independently above and
    // log|J| = log dσ/ds measured by differencing `constrain`. Leaving the
    // Jacobian out would change the difference by s₁ − s₂ (≈ 1 here).
    let positive = [
        (PosteriordbPosterior::EightSchoolsNoncentered, 9, 9),
        (PosteriordbPosterior::SblrcBlr, 5, 5),
        (PosteriordbPosterior::ArK, 6, 6),
    ];
    for (posterior, index, output) in positive {
        let model = load(posterior, &root);
        let n = model.dimension();
        let mut scratch = vec![0.0; n];
        let mut c = vec![0.0; model.output_names().len()];
        let mut minus_log_target = |x: &[f64]| {
            model.constrain(x, &mut c);
            -(stan_log_density(posterior, &root, &c, x) + log_jacobian(&model, x, index, output))
        };
        let x1 = random_point(n, 0.5, 300);
        let mut x2 = random_point(n, 0.5, 301);
        x2[index] = x1[index] + 1.0;
        let expected = minus_log_target(&x1) - minus_log_target(&x2);
        let found = model.potential_and_gradient(&x1, &mut scratch)
            - model.potential_and_gradient(&x2, &mut scratch);
        let tolerance = 1e-6 * (1.0 + expected.abs());
        assert!(
            (found - expected).abs() < tolerance,
            "{posterior}: U difference {found}, constrained density says {expected}"
        );
    }
}

#[test]
fn reference_moments_agree_with_posteriordb_summary() {
    let Some(root) = root("reference_moments_agree_with_posteriordb_summary") else {
        return;
    };
    // Same draws: our means must equal posteriordb's to rounding, and our
    // mcse_mean (split-chain basic ESS, the R package posterior's `mcse_mean`,
    // which posteriordb used) must reproduce theirs to 0.1 %.
    for posterior in PosteriordbPosterior::ALL {
        let model = load(posterior, &root);
        let known = model.known_posterior().unwrap();
        let summary = ReferenceSummary::read(&posterior.mean_value_path(&root)).unwrap();
        let mcse = known.mean_mcse.as_ref().unwrap();
        let sd_mcse = known.sd_mcse.as_ref().unwrap();
        for (i, name) in model.output_names().iter().enumerate() {
            let (mean, their_mcse) = summary.get(name).unwrap();
            assert!(
                (known.mean[i] - mean).abs() < 1e-9 * (1.0 + mean.abs()),
                "{posterior} {name}: mean {} vs {mean}",
                known.mean[i]
            );
            let ratio = mcse[i] / their_mcse;
            assert!(
                (0.8..1.25).contains(&ratio),
                "{posterior} {name}: mcse ratio {ratio}"
            );
            // About 10 000 nearly independent draws: MCSE(mean) ≈ sd/100.
            assert!(
                (0.5..2.0).contains(&(mcse[i] * 100.0 / known.sd[i])),
                "{posterior} {name}"
            );
            assert!(
                sd_mcse[i] > 0.0 && sd_mcse[i] < known.sd[i] / 20.0,
                "{posterior} {name}"
            );
        }
        assert!(!known.gaussian_marginals);
        assert!(
            known.source.contains("10 chains × 1000 draws"),
            "{}",
            known.source
        );
    }
}

#[test]
fn constrain_maps_to_the_reported_scale() {
    let Some(root) = root("constrain_maps_to_the_reported_scale") else {
        return;
    };
    let model = load(PosteriordbPosterior::EightSchoolsNoncentered, &root);
    let x = random_point(10, 1.0, 5);
    let mut out = vec![0.0; 10];
    model.constrain(&x, &mut out);
    let (mu, tau) = (x[8], x[9].exp());
    assert_eq!(out[8], mu);
    assert_eq!(out[9], tau);
    for j in 0..8 {
        assert!((out[j] - (mu + tau * x[j])).abs() < 1e-12);
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("qnmc-pdb-tests-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A stored (uncompressed) zip holding `name` with `text`.
fn write_zip(path: &Path, name: &str, text: &str) {
    let file = std::fs::File::create(path).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file(name, options).unwrap();
    zip.write_all(text.as_bytes()).unwrap();
    zip.finish().unwrap();
}

#[test]
fn missing_database_names_the_file() {
    let e = Posteriordb::eight_schools(Path::new("/nonexistent/pdb")).unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Io);
    assert!(
        e.to_string()
            .contains("cannot read /nonexistent/pdb/data/data/eight_schools.json.zip"),
        "{e}"
    );
}

#[test]
fn broken_archives_and_json() {
    let dir = temp_dir("broken");
    let not_zip = dir.join("not.json.zip");
    std::fs::write(&not_zip, "plain text").unwrap();
    let e = crate::input::read_zipped_json(&not_zip).unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Format);
    assert!(e.to_string().contains("not a readable zip archive"), "{e}");

    let bad_json = dir.join("bad.json.zip");
    write_zip(
        &bad_json,
        "bad.json",
        "{\n  \"J\": 8,\n  \"y\": [1, 2,, 3]\n}",
    );
    let e = crate::input::read_zipped_json(&bad_json).unwrap_err();
    assert_eq!((e.line(), e.column()), (Some(3), Some(14)), "{e}");
    assert!(
        e.to_string()
            .contains("bad.json in the archive: invalid JSON"),
        "{e}"
    );

    let plain = dir.join("summary.json");
    std::fs::write(&plain, "{\"names\": [\"mu\"], \"mean_value\": [1]}").unwrap();
    let e = ReferenceSummary::read(&plain).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: no entry \"mcse_mean\" in the JSON object",
            plain.display()
        )
    );
}

#[test]
fn malformed_data_entries() {
    let dir = temp_dir("data");
    let root = dir.join("posterior_database");
    let data_dir = root.join("data/data");
    std::fs::create_dir_all(&data_dir).unwrap();
    let path = data_dir.join("eight_schools.json.zip");
    let cases = [
        (
            "{\"J\": 2, \"y\": [1, 2]}",
            "no entry \"sigma\" in the JSON object",
        ),
        (
            "{\"J\": 2, \"y\": [1, 2, 3], \"sigma\": [1, 1]}",
            "entry \"y\" has 3 elements, expected 2",
        ),
        (
            "{\"J\": 2, \"y\": [1, \"a\"], \"sigma\": [1, 1]}",
            "entry \"y\"[2] = \"a\" is not a number",
        ),
        (
            "{\"J\": 2, \"y\": [1, 2], \"sigma\": [1, 0]}",
            "entry \"sigma\" must be positive, found 0",
        ),
    ];
    for (text, message) in cases {
        write_zip(&path, "eight_schools.json", text);
        let e = Posteriordb::eight_schools(&root).unwrap_err();
        assert_eq!(e.to_string(), format!("{}: {message}", path.display()));
    }
    // Valid data, but no reference draws beside it.
    write_zip(
        &path,
        "eight_schools.json",
        "{\"J\": 2, \"y\": [1, 2], \"sigma\": [1, 1]}",
    );
    let e = Posteriordb::eight_schools(&root).unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Io);
    assert!(
        e.to_string()
            .contains("eight_schools-eight_schools_noncentered.json.zip"),
        "{e}"
    );
}

#[test]
fn posterior_names_parse() {
    for p in PosteriordbPosterior::ALL {
        assert_eq!(p.target_name().parse::<PosteriordbPosterior>().unwrap(), p);
        assert_eq!(
            p.posterior_name().parse::<PosteriordbPosterior>().unwrap(),
            p
        );
    }
    assert!(
        "radon"
            .parse::<PosteriordbPosterior>()
            .unwrap_err()
            .to_string()
            .contains("radon")
    );
}
