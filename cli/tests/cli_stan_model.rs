//! `qnmc run --model` / `qnmc check --model` on a library with BridgeStan's C
//! API, without Stan: `stan_mock/mock_model.c`, compiled here with the
//! system's C compiler (`$CC`, else `cc`), stands in for a compiled model
//! (mu ~ N(1, 2), sigma ~ lognormal(0, 0.5) sampled on log scale, transformed
//! parameter scale_sq = sigma²). Real Stan models are tested in
//! `cli_stan_models.rs`.
//!
//! Checked: Stan's names and the constrained scale in the CSV, moments within
//! Monte-Carlo error, and every error path (message naming the file, exit
//! code 2, no output folder).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

mod common;

use common::qnmc;
use qnmc_host::output::read_cmdstan_csv;

fn scratch(name: &str) -> PathBuf {
    common::scratch("cli-stan-model", name)
}

/// Compiles the mock (once per variant) into the test's temporary folder.
fn compile_mock(no_gradient: bool) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stan_mock");
    std::fs::create_dir_all(&dir).unwrap();
    let name = if no_gradient {
        "libmock_no_gradient.so"
    } else {
        "libmock.so"
    };
    let out = dir.join(format!("{}-{name}", std::process::id()));
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stan_mock/mock_model.c");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut cmd = Command::new(&cc);
    cmd.args([
        "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-o",
    ])
    .arg(&out)
    .arg(&source)
    .arg("-lm");
    if no_gradient {
        cmd.arg("-DQNMC_MOCK_NO_GRADIENT");
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e}"));
    assert!(status.success(), "{cc} failed on {}", source.display());
    out
}

fn mock() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| compile_mock(false))
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn assert_usage_error(result: (i32, String, String), expected: &[&str]) {
    let (code, out, err) = result;
    assert_eq!(code, 2, "stdout:\n{out}\nstderr:\n{err}");
    for e in expected {
        assert!(err.contains(e), "expected {e:?} in:\n{err}");
    }
}

/// Draws are written with the model's names on the constrained scale
/// (sigma = exp(s) > 0, scale_sq = sigma²), and their means match the
/// model's exact moments within 5 Monte-Carlo standard errors (the MCSE of
/// each mean is qnmc's own, from summary.json; 5 of them make a false alarm
/// about 1 in 10⁶ per check; 3 independent checks).
#[test]
fn a_model_library_runs_with_stan_names_on_the_constrained_scale() {
    let dir = scratch("run");
    let lib = mock().to_str().unwrap().to_string();
    let data = write(&dir, "data.json", "{\"N\": 3}");
    let (code, out, err) = qnmc(
        &[
            "run",
            "--model",
            &lib,
            "--data",
            data.to_str().unwrap(),
            "--seed",
            "7",
            "--output",
            "out",
            "--plot",
            "none",
            "--quiet",
        ],
        &dir,
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("target mock_model"), "{out}");
    for k in 1..=4 {
        let text = std::fs::read_to_string(dir.join(format!("out/chain_{k}.csv"))).unwrap();
        let draws = read_cmdstan_csv(&text).unwrap();
        let names: Vec<&str> = draws.column_names.iter().map(String::as_str).collect();
        assert_eq!(&names[names.len() - 3..], ["mu", "sigma", "scale_sq"]);
        let sigma = draws.column("sigma").unwrap();
        let sq = draws.column("scale_sq").unwrap();
        assert!(sigma.iter().all(|s| *s > 0.0), "sigma must be positive");
        for (s, q) in sigma.iter().zip(sq) {
            assert!(
                (s * s - q).abs() <= 1e-12 * q.max(1.0),
                "scale_sq = sigma^2"
            );
        }
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/summary.json")).unwrap())
            .unwrap();
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/model.json")).unwrap())
            .unwrap();
    assert_eq!(model["kind"], "stan");
    assert!(
        model["data"]["sha256"]
            .as_str()
            .is_some_and(|h| h.len() == 64)
    );
    // E[sigma] = exp(0.5²/2); E[sigma²] = exp(2·0.5²).
    let exact = [
        ("mu", 1.0),
        ("sigma", (0.125f64).exp()),
        ("scale_sq", (0.5f64).exp()),
    ];
    for (name, mean) in exact {
        let q = summary["quantities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing from summary.json"));
        let (m, mcse) = (
            q["mean"].as_f64().unwrap(),
            q["mcse_mean"].as_f64().unwrap(),
        );
        assert!(
            (m - mean).abs() < 5.0 * mcse,
            "{name}: mean {m} vs exact {mean}, MCSE {mcse}"
        );
    }
}

/// `qnmc check --model` compares with a long HMC reference run and passes.
#[test]
fn check_accepts_a_model_library() {
    let dir = scratch("check");
    let lib = mock().to_str().unwrap().to_string();
    let (code, out, err) = qnmc(
        &[
            "check",
            "--model",
            &lib,
            "--seed",
            "3",
            "--reference-draws",
            "2000",
            "--quiet",
        ],
        &dir,
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("PASS"), "{out}");
    assert!(out.contains("| scale_sq |"), "{out}");
}

/// A log density that throws far out (Stan's reject or a domain error) is a
/// rejected, counted transition and a note naming the library, not a crash.
#[test]
fn a_log_density_that_throws_sometimes_is_rejected_and_reported() {
    let dir = scratch("throw-far");
    let lib = mock().to_str().unwrap().to_string();
    let data = write(&dir, "data.json", "{\"mode\": \"throw_far\"}");
    let (code, out, err) = qnmc(
        &[
            "run",
            "--model",
            &lib,
            "--data",
            data.to_str().unwrap(),
            "--seed",
            "2",
            "--quiet",
        ],
        &dir,
    );
    assert!(code == 0 || code == 3, "{out}\n{err}");
    assert!(
        err.contains("threw in") && err.contains(&lib) && err.contains("normal_lpdf"),
        "{err}"
    );
    // mu ~ N(1, 2²) throws beyond |mu - 1| > 3, 13 % of the posterior: kept
    // transitions meet it, so it is a warning, reported with the health
    // checks (after the summary table), with advice about the model's
    // bounds rather than the integrator's.
    let warning = err
        .lines()
        .find(|l| l.starts_with("warning: the log density of"))
        .unwrap_or_else(|| panic!("no warning about the throws:\n{err}"));
    assert!(warning.contains("declare the bound"), "{warning}");
    assert!(!err.contains("raise --target-acceptance"), "{err}");
    assert!(
        !err.lines().any(|l| l.starts_with("note: the log density")),
        "{err}"
    );
}

#[test]
fn a_missing_or_unloadable_library_is_named() {
    let dir = scratch("bad-lib");
    assert_usage_error(
        qnmc(
            &["run", "--model", "nowhere/model.so", "--output", "out"],
            &dir,
        ),
        &["nowhere/model.so", "cannot read it"],
    );
    // Binary (NUL bytes) but not a library: the loader's message. A text
    // file is refused before the loader (below).
    let binary = dir.join("model.so");
    std::fs::write(&binary, b"\0\x01\x02not a library\0").unwrap();
    assert_usage_error(
        qnmc(
            &[
                "run",
                "--model",
                binary.to_str().unwrap(),
                "--output",
                "out",
            ],
            &dir,
        ),
        &["model.so", "cannot load it as a shared library"],
    );
    let no_gradient = compile_mock(true);
    assert_usage_error(
        qnmc(
            &[
                "run",
                "--model",
                no_gradient.to_str().unwrap(),
                "--output",
                "out",
            ],
            &dir,
        ),
        &[
            "libmock_no_gradient.so",
            "does not export bs_log_density_gradient",
        ],
    );
    assert!(!dir.join("out").exists(), "nothing is written on error");
}

/// Stan source given to --model (a `.stan` file, or a text file without
/// the extension) is refused before the loader, with how to compile it, not
/// with the loader's "invalid ELF header".
#[test]
fn stan_source_is_refused_with_how_to_compile_it() {
    let dir = scratch("stan-source");
    let source = "data {\n  int<lower=0> N;\n  vector[N] y;\n}\nparameters {\n  real mu;\n}\nmodel {\n  y ~ normal(mu, 1);\n}\n";
    write(&dir, "normal.stan", source);
    write(&dir, "normal", source);
    let data = write(&dir, "normal.json", "{\"N\": 2, \"y\": [0.5, 1.5]}");
    let data = data.to_str().unwrap();
    for command in ["run", "check"] {
        assert_usage_error(
            qnmc(
                &[
                    command,
                    "--model",
                    "normal.stan",
                    "--data",
                    data,
                    "--output",
                    "out",
                ],
                &dir,
            ),
            &[
                "error: normal.stan: this is Stan source, not a compiled model library",
                "pip install httpstan==4.13.0",
                "`python3 stan/build-model.py normal.stan` (writes normal_model.so)",
                "docs/CLI.md, \"Your own Stan model\"",
            ],
        );
        assert_usage_error(
            qnmc(
                &[
                    command, "--model", "normal", "--data", data, "--output", "out",
                ],
                &dir,
            ),
            &[
                "error: normal: this is a text file (Stan source?), not a compiled model library",
                "`python3 stan/build-model.py normal.stan` (writes normal_model.so)",
            ],
        );
    }
    let (_, _, err) = qnmc(&["run", "--model", "normal.stan"], &dir);
    assert!(!err.contains("ELF"), "{err}");
    assert!(!dir.join("out").exists(), "nothing is written on error");
}

#[test]
fn data_errors_name_the_data_file() {
    let dir = scratch("bad-data");
    let lib = mock().to_str().unwrap().to_string();
    let bad_json = write(&dir, "bad.json", "{\n  \"N\": 3,\n  oops\n}\n");
    assert_usage_error(
        qnmc(
            &[
                "run",
                "--model",
                &lib,
                "--data",
                bad_json.to_str().unwrap(),
                "--output",
                "out",
            ],
            &dir,
        ),
        &["bad.json", "line 3", "invalid JSON"],
    );
    let rejected = write(&dir, "rejected.json", "{\"mode\": \"reject_data\"}");
    assert_usage_error(
        qnmc(
            &[
                "run",
                "--model",
                &lib,
                "--data",
                rejected.to_str().unwrap(),
                "--output",
                "out",
            ],
            &dir,
        ),
        &[
            "rejected.json",
            "does not accept these data",
            "variable name=N",
        ],
    );
    assert_usage_error(
        qnmc(
            &[
                "run",
                "--model",
                &lib,
                "--data",
                "missing.json",
                "--output",
                "out",
            ],
            &dir,
        ),
        &["missing.json", "cannot read it"],
    );
    assert!(!dir.join("out").exists(), "nothing is written on error");
}

#[test]
fn a_model_that_cannot_be_evaluated_is_refused_before_sampling() {
    let dir = scratch("bad-model");
    let lib = mock().to_str().unwrap().to_string();
    let always = write(&dir, "always.json", "{\"mode\": \"throw_always\"}");
    assert_usage_error(
        qnmc(
            &[
                "run",
                "--model",
                &lib,
                "--data",
                always.to_str().unwrap(),
                "--output",
                "out",
            ],
            &dir,
        ),
        &[
            &lib,
            "not finite at the origin nor at 100 points",
            "normal_lpdf",
        ],
    );
    let empty = write(&dir, "empty.json", "{\"mode\": \"no_parameters\"}");
    assert_usage_error(
        qnmc(
            &["check", "--model", &lib, "--data", empty.to_str().unwrap()],
            &dir,
        ),
        &[&lib, "no parameters"],
    );
    assert!(!dir.join("out").exists(), "nothing is written on error");
}

#[test]
fn target_options_do_not_apply_to_a_model() {
    let dir = scratch("options");
    let lib = mock().to_str().unwrap().to_string();
    assert_usage_error(
        qnmc(&["run", "--model", &lib, "--dimension", "3"], &dir),
        &["--dimension does not apply to --model"],
    );
    let (code, _, err) = qnmc(&["run", "--model", &lib, "--target", "gaussian"], &dir);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be used with"), "{err}");
    let (code, _, err) = qnmc(&["run"], &dir);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--target"), "{err}");
    let (code, out, _) = qnmc(&["list"], &dir);
    assert_eq!(code, 0);
    assert!(
        out.contains("--model LIB.so"),
        "qnmc list names --model:\n{out}"
    );
}

/// `--init FILE.json` (Stan's init format, constrained values by name)
/// starts every chain exactly there: with a step of 1e-12 and no warm-up the
/// draws cannot move more than ~1e-10 from it, so every kept draw reads the
/// init back on the constrained scale (sigma = 2 went in as log 2). Without
/// it the chains start spread over (−2, 2) around the model's point, far
/// from mu = 4.
#[test]
fn an_init_file_starts_every_chain_at_its_values() {
    let dir = scratch("init");
    let lib = mock().to_str().unwrap().to_string();
    let init = write(&dir, "init.json", "{\"mu\": 4.0, \"sigma\": 2.0}");
    let args = |extra: &[&str], out: &str| -> Vec<String> {
        let mut a: Vec<String> = [
            "run",
            "--model",
            &lib,
            "--sampler",
            "hmc",
            "--step-size",
            "1e-12",
            "--warmup",
            "0",
            "--draws",
            "5",
            "--chains",
            "3",
            "--output",
            out,
            "--quiet",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let first_draws = |out: &str| -> Vec<(f64, f64)> {
        (1..=3)
            .map(|k| {
                let text =
                    std::fs::read_to_string(dir.join(format!("{out}/chain_{k}.csv"))).unwrap();
                let draws = read_cmdstan_csv(&text).unwrap();
                (
                    draws.column("mu").unwrap()[0],
                    draws.column("sigma").unwrap()[0],
                )
            })
            .collect()
    };
    let given: Vec<String> = args(&["--init", init.to_str().unwrap()], "at-init");
    let given: Vec<&str> = given.iter().map(String::as_str).collect();
    let (code, out, err) = qnmc(&given, &dir);
    // The chains cannot mix in 5 draws of 1e-12: exit 0 with warnings.
    assert_eq!(code, 0, "{out}\n{err}");
    for (mu, sigma) in first_draws("at-init") {
        assert!(
            (mu - 4.0).abs() < 1e-9 && (sigma - 2.0).abs() < 1e-9,
            "{mu} {sigma}"
        );
    }
    let spread: Vec<String> = args(&[], "spread");
    let spread: Vec<&str> = spread.iter().map(String::as_str).collect();
    let (code, out, err) = qnmc(&spread, &dir);
    assert_eq!(code, 0, "{out}\n{err}");
    // mu starts at most 2 from the model's own point, 0 here (the mock's
    // density is finite at the origin).
    for (mu, _) in first_draws("spread") {
        assert!(mu.abs() < 2.0 + 1e-9, "{mu}");
    }
}

/// An init the model refuses is a usage error naming the file and the
/// model's reason, before anything is created; `--init` with a built-in
/// target says it is for `--model`.
#[test]
fn a_bad_init_file_is_named_with_the_reason() {
    let dir = scratch("bad-init");
    let lib = mock().to_str().unwrap().to_string();
    let negative = write(&dir, "negative.json", "{\"mu\": 4.0, \"sigma\": -1}");
    let missing = write(&dir, "missing.json", "{\"sigma\": 1}");
    for (file, reason) in [
        (&negative, "Lower bounded variable is -1"),
        (&missing, "the init needs mu and sigma"),
    ] {
        assert_usage_error(
            qnmc(
                &[
                    "run",
                    "--model",
                    &lib,
                    "--init",
                    file.to_str().unwrap(),
                    "--output",
                    "never",
                    "--quiet",
                ],
                &dir,
            ),
            &[file.file_name().unwrap().to_str().unwrap(), reason],
        );
        assert!(!dir.join("never").exists());
    }
    assert_usage_error(
        qnmc(
            &["run", "--model", &lib, "--init", "absent.json", "--quiet"],
            &dir,
        ),
        &["cannot read the init file absent.json"],
    );
    assert_usage_error(
        qnmc(
            &[
                "run",
                "--target",
                "gaussian",
                "--init",
                negative.to_str().unwrap(),
                "--quiet",
            ],
            &dir,
        ),
        &["--init does not apply to --target gaussian", "--model"],
    );
}
