//! Real Stan models, compiled offline by `stan/build-model.py` (with the
//! httpstan wheel): `bash stan/build-test-models.sh` writes them to
//! `target/stan-models`, and these tests run when `QNMC_STAN_MODELS` names
//! that folder (`.ci/run` does both, and sets `QNMC_REQUIRE_STAN=1` so that
//! a skip fails). Without it every test here prints one `skipped …` line and
//! passes: a clone without Python's httpstan still builds and tests
//! everything else.
//!
//! - `correlated_gaussian` (D = 100, `stan/models/`): U and ∇U equal the
//!   hand-written `gaussian` target's up to a constant, and `qnmc run
//!   --model` draws match the exact moments;
//! - posteriordb's `eight_schools_noncentered` (hierarchical, τ > 0), `blr`
//!   (σ > 0) and `arK` (σ > 0), with the shared data folder: U and ∇U equal
//!   the hand-written posteriordb targets' up to a constant, `qnmc check
//!   --model` passes, and the eight-schools draws on the constrained scale
//!   match posteriordb's reference draws.

use std::io::Write;
use std::path::{Path, PathBuf};

mod common;

use common::qnmc;
use qnmc_host::model::Model;
use qnmc_host::targets::{GaussianModel, Posteriordb, PosteriordbPosterior};
use qnmc_stan::StanModel;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

/// The compiled model `stem`, or `None` after one `skipped …` line when
/// `QNMC_STAN_MODELS` is not set (a failure under `QNMC_REQUIRE_STAN=1`,
/// which CI sets). Set but without the model: a failure.
fn library(test: &str, stem: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("QNMC_STAN_MODELS") else {
        let required =
            std::env::var_os("QNMC_REQUIRE_STAN").is_some_and(|v| !v.is_empty() && v != "0");
        assert!(
            !required,
            "{test}: QNMC_STAN_MODELS is not set (QNMC_REQUIRE_STAN is)"
        );
        let _ = writeln!(
            std::io::stderr(),
            "skipped {test}: QNMC_STAN_MODELS is not set (build the models with \
             bash stan/build-test-models.sh, then QNMC_STAN_MODELS=target/stan-models)"
        );
        return None;
    };
    // A relative folder is taken from the workspace root (cargo runs tests
    // in host/).
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = root.join(dir).join(format!("{stem}_model.so"));
    assert!(path.is_file(), "{test}: {} was not built", path.display());
    Some(std::fs::canonicalize(path).unwrap())
}

fn posteriordb_root(test: &str) -> Option<PathBuf> {
    qnmc_host::shared_data::for_test(test).map(|d| d.join("posteriordb/posterior_database"))
}

/// U and ∇U of `stan` and `hand` at 20 points uniform on (−2, 2) (plus
/// `shift`): gradients equal to 1e-9 relative to their scale, U equal up to
/// one constant (Stan drops constant terms) to 1e-9 relative. Both are
/// exact up to rounding, so the bounds are rounding error with a wide margin.
fn assert_same_density(stan: &dyn Model, hand: &dyn Model, shift: &[f64]) {
    let n = hand.dimension();
    assert_eq!(stan.dimension(), n, "{} vs {}", stan.name(), hand.name());
    let mut rng = XorShiftRng::seed_from_u64(11);
    let (mut gs, mut gh) = (vec![0.0; n], vec![0.0; n]);
    let mut offset = None;
    for _ in 0..20 {
        let x: Vec<f64> = (0..n)
            .map(|i| {
                let u: f64 = qnmc::Real::uniform_open_closed(&mut rng);
                4.0 * u - 2.0 + shift[i]
            })
            .collect();
        let us = stan.potential_and_gradient(&x, &mut gs);
        let uh = hand.potential_and_gradient(&x, &mut gh);
        let scale = gh.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        for i in 0..n {
            assert!(
                (gs[i] - gh[i]).abs() <= 1e-9 * scale,
                "{}: dU/dx[{i}] Stan {} vs hand-written {}",
                stan.name(),
                gs[i],
                gh[i]
            );
        }
        let c = *offset.get_or_insert(us - uh);
        assert!(
            (us - uh - c).abs() <= 1e-9 * uh.abs().max(1.0),
            "{}: U Stan {us} vs hand-written {uh} + {c}",
            stan.name()
        );
    }
}

#[test]
fn correlated_gaussian_matches_the_hand_written_target_and_its_moments() {
    let Some(lib) = library(
        "correlated_gaussian_matches_the_hand_written_target_and_its_moments",
        "correlated_gaussian",
    ) else {
        return;
    };
    let data =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../stan/models/correlated_gaussian.json");
    let stan = StanModel::load(&lib, Some(&data)).unwrap();
    let hand = GaussianModel::paper(100).unwrap();
    assert_same_density(&stan, &hand, &[0.0; 100]);

    // Sampling: every mean 0 and sd √5 within 5 Monte-Carlo standard
    // errors (qnmc's own MCSEs; 200 checks, so a false alarm has
    // probability about 200 · 5.7e-7 ≈ 1e-4).
    let dir = common::scratch("stan-models", "gaussian");
    let (code, out, err) = qnmc(
        &[
            "run",
            "--model",
            lib.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
            "--seed",
            "5",
            "--output",
            "out",
            "--plot",
            "none",
            "--quiet",
        ],
        &dir,
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/summary.json")).unwrap())
            .unwrap();
    let quantities = summary["quantities"].as_array().unwrap();
    assert_eq!(quantities.len(), 100);
    let header = std::fs::read_to_string(dir.join("out/chain_1.csv")).unwrap();
    assert!(header.contains(",x.1,x.2,"), "Stan's CSV names");
    for q in quantities {
        let f = |k: &str| q[k].as_f64().unwrap();
        assert!(f("mean").abs() < 5.0 * f("mcse_mean"), "{q}");
        assert!((f("sd") - 5f64.sqrt()).abs() < 5.0 * f("mcse_sd"), "{q}");
    }
}

/// Run with data that lack a field the model reads: the error says so in
/// words and keeps Stan's message on the next line (exit code 2); a field
/// that is present with the wrong dimensions is not called missing.
#[test]
fn a_missing_data_field_is_named() {
    let test = "a_missing_data_field_is_named";
    let Some(gaussian) = library(test, "correlated_gaussian") else {
        return;
    };
    let dir = common::scratch("stan-models", "missing-field");
    let run = |lib: &Path, data: &str| {
        std::fs::write(dir.join("data.json"), data).unwrap();
        let (code, out, err) = qnmc(
            &[
                "run",
                "--model",
                lib.to_str().unwrap(),
                "--data",
                "data.json",
                "--quiet",
            ],
            &dir,
        );
        assert_eq!(code, 2, "{out}\n{err}");
        err
    };
    // A scalar: Stan's "variable does not exist".
    let err = run(&gaussian, "{}");
    assert!(
        err.contains(
            "error: data.json: data field `D` is missing from data.json \
             (the model declares it as a scalar int)\nmodel "
        ),
        "{err}"
    );
    assert!(err.contains("variable does not exist"), "{err}");
    // An array (the shared data folder's eight schools model): Stan's
    // "dims found=()".
    if posteriordb_root(test).is_none() {
        return;
    }
    let schools = library(test, "eight_schools_noncentered").unwrap();
    let sigma = "\"sigma\": [15, 10, 16, 11, 9, 11, 10, 18]";
    let err = run(&schools, &format!("{{\"J\": 8, {sigma}}}"));
    assert!(
        err.contains(
            "error: data.json: data field `y` is missing from data.json \
             (the model declares it with dimensions (8))\nmodel "
        ),
        "{err}"
    );
    assert!(err.contains("dims found=()"), "{err}");
    // Present but a number where the model declares 8: Stan's message alone.
    let err = run(&schools, &format!("{{\"J\": 8, \"y\": 28, {sigma}}}"));
    assert!(!err.contains("missing"), "{err}");
    assert!(
        err.contains("does not accept these data") && err.contains("dims found=()"),
        "{err}"
    );
}

#[test]
fn posteriordb_models_match_the_hand_written_targets() {
    let test = "posteriordb_models_match_the_hand_written_targets";
    let Some(root) = posteriordb_root(test) else {
        return;
    };
    for (posterior, stem) in [
        (
            PosteriordbPosterior::EightSchoolsNoncentered,
            "eight_schools_noncentered",
        ),
        (PosteriordbPosterior::SblrcBlr, "blr"),
        (PosteriordbPosterior::ArK, "arK"),
    ] {
        let Some(lib) = library(test, stem) else {
            return;
        };
        let stan = StanModel::load(&lib, Some(&posterior.data_path(&root))).unwrap();
        let hand = Posteriordb::load(posterior, &root).unwrap();
        // Near the posterior's bulk: the hand-written initial point (or the
        // origin) shifted by uniform(−2, 2).
        assert_same_density(&stan, &hand, &hand.initial_point());
    }
}

/// `qnmc check --model` (against a long HMC run) passes on each posteriordb
/// model, and eight schools' draws of θ, μ and τ (constrained scale) match
/// posteriordb's reference draws: |z| < 4.3 with both MCSEs (Bonferroni over
/// 20 z-scores at family-wise level 0.0003), as `qnmc check` computes it.
#[test]
fn posteriordb_models_pass_check_and_match_the_reference_draws() {
    let test = "posteriordb_models_pass_check_and_match_the_reference_draws";
    let Some(root) = posteriordb_root(test) else {
        return;
    };
    let dir = common::scratch("stan-models", "check");
    for (posterior, stem) in [
        (
            PosteriordbPosterior::EightSchoolsNoncentered,
            "eight_schools_noncentered",
        ),
        (PosteriordbPosterior::SblrcBlr, "blr"),
        (PosteriordbPosterior::ArK, "arK"),
    ] {
        let Some(lib) = library(test, stem) else {
            return;
        };
        let data = posterior.data_path(&root);
        let (code, out, err) = qnmc(
            &[
                "check",
                "--model",
                lib.to_str().unwrap(),
                "--data",
                data.to_str().unwrap(),
                "--seed",
                "9",
                "--quiet",
            ],
            &dir,
        );
        assert_eq!(code, 0, "{stem}:\n{out}\n{err}");
        assert!(out.contains("PASS"), "{stem}:\n{out}");
    }

    let lib = library(test, "eight_schools_noncentered").unwrap();
    let posterior = PosteriordbPosterior::EightSchoolsNoncentered;
    let (code, out, err) = qnmc(
        &[
            "run",
            "--model",
            lib.to_str().unwrap(),
            "--data",
            posterior.data_path(&root).to_str().unwrap(),
            "--seed",
            "4",
            "--output",
            "es",
            "--plot",
            "none",
            "--quiet",
        ],
        &dir,
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("es/summary.json")).unwrap())
            .unwrap();
    let hand = Posteriordb::load(posterior, &root).unwrap();
    let known = hand.known_posterior().unwrap();
    let (ref_mcse, ref_sd_mcse) = (known.mean_mcse.unwrap(), known.sd_mcse.unwrap());
    let mut checked = 0;
    for (i, name) in hand.output_names().iter().enumerate() {
        let q = summary["quantities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["name"] == name.as_str())
            .unwrap_or_else(|| panic!("{name} not reported by the Stan model"));
        let f = |k: &str| q[k].as_f64().unwrap();
        let z_mean = (f("mean") - known.mean[i]) / f("mcse_mean").hypot(ref_mcse[i]);
        let z_sd = (f("sd") - known.sd[i]) / f("mcse_sd").hypot(ref_sd_mcse[i]);
        assert!(
            z_mean.abs() < 4.3 && z_sd.abs() < 4.3,
            "{name}: z {z_mean:.2}, {z_sd:.2}"
        );
        checked += 2;
    }
    assert_eq!(checked, 20);
}

/// `StanModel::unconstrain_json` (what `qnmc run --init` uses) on a real
/// model with a constraint: eight schools' τ > 0 goes in as τ = 2 and comes
/// out as log 2, the rest unchanged in Stan's order (θ̃, μ, τ); the model's
/// own `constrain` gives the values back, and θ = θ̃τ + μ. A τ below its
/// bound is refused with Stan's message, and so is a missing parameter.
#[test]
fn stan_inits_are_unconstrained_by_the_model() {
    let test = "stan_inits_are_unconstrained_by_the_model";
    let Some(root) = posteriordb_root(test) else {
        return;
    };
    let Some(lib) = library(test, "eight_schools_noncentered") else {
        return;
    };
    let posterior = PosteriordbPosterior::EightSchoolsNoncentered;
    let stan = StanModel::load(&lib, Some(&posterior.data_path(&root))).unwrap();
    let theta_trans = [0.5, -1.0, 0.25, 2.0, -0.75, 0.0, 1.5, -2.0];
    let init = format!("{{\"theta_trans\": {theta_trans:?}, \"mu\": 1.5, \"tau\": 2.0}}");
    let point = stan.unconstrain_json(&init).unwrap();
    let mut expected = theta_trans.to_vec();
    expected.extend([1.5, 2.0f64.ln()]);
    assert_eq!(point.len(), expected.len());
    for (a, b) in point.iter().zip(&expected) {
        assert!((a - b).abs() <= 1e-14, "{point:?} against {expected:?}");
    }
    let mut out = vec![0.0; stan.output_names().len()];
    stan.constrain(&point, &mut out);
    let names = stan.output_names();
    let value = |name: &str| out[names.iter().position(|n| n == name).unwrap()];
    assert!((value("tau") - 2.0).abs() <= 1e-14);
    for (j, t) in theta_trans.iter().enumerate() {
        let theta = value(&format!("theta[{}]", j + 1));
        assert!((theta - (t * 2.0 + 1.5)).abs() <= 1e-13, "theta[{}]", j + 1);
    }
    let below = stan
        .unconstrain_json(&format!(
            "{{\"theta_trans\": {theta_trans:?}, \"mu\": 1.5, \"tau\": -1.0}}"
        ))
        .unwrap_err();
    assert!(below.contains("Lower bounded variable is -1"), "{below}");
    let missing = stan
        .unconstrain_json("{\"mu\": 1.5, \"tau\": 2.0}")
        .unwrap_err();
    assert!(
        missing.contains(
            "parameter `theta_trans` is missing from the init (the model declares it with \
             dimensions (8))"
        ),
        "{missing}"
    );
    // The chains start there.
    let started = stan.start_at(point.clone()).unwrap();
    assert_eq!(started.initial_point(), point);
}
