//! The `qnmc` binary's command-line surface: help, version, list, and the
//! usage errors of the argument parser (exit code 2 with a message).

use std::process::Command;

fn qnmc(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_qnmc"))
        .args(args)
        .output()
        .expect("the qnmc binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `run` and `check` without a posterior name both ways to give one
/// (`--target` and `--model` with `--data`), not only `--target`.
#[test]
fn run_and_check_without_a_posterior_name_target_and_model() {
    for command in ["run", "check"] {
        let (code, out, err) = qnmc(&[command]);
        assert_eq!(code, 2, "{command}: {err}");
        assert!(out.is_empty(), "{command}: {out}");
        for expected in [
            "error: no posterior given",
            "--target NAME",
            "`qnmc list`",
            "--model LIB.so --data DATA.json",
        ] {
            assert!(
                err.contains(expected),
                "{command}: expected {expected:?} in:\n{err}"
            );
        }
    }
}

#[test]
fn unknown_command_and_bad_options_fail_with_a_message() {
    let (code, _, err) = qnmc(&["frobnicate"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("unrecognized subcommand 'frobnicate'"),
        "{err}"
    );

    let (code, _, err) = qnmc(&["demo", "--draws", "many"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("invalid value 'many' for '--draws <DRAWS>'"),
        "{err}"
    );

    let (code, _, err) = qnmc(&["demo", "--seed"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("a value is required for '--seed <SEED>'"),
        "{err}"
    );

    let (code, _, err) = qnmc(&["demo", "--chains", "0"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("'--chains <CHAINS>': must be at least 1, got 0"),
        "{err}"
    );

    let (code, _, err) = qnmc(&["demo", "--fast"]);
    assert_eq!(code, 2);
    assert!(err.contains("unexpected argument '--fast'"), "{err}");

    let (code, _, err) = qnmc(&["run", "--target", "gaussian", "--chains", "0"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("'--chains <CHAINS>': must be at least 1, got 0"),
        "{err}"
    );
}

#[test]
fn help_version_and_list_succeed() {
    let (code, out, _) = qnmc(&["--help"]);
    assert_eq!(code, 0);
    for command in ["run", "check", "reproduce", "demo", "list"] {
        assert!(out.contains(command), "{out}");
    }
    let (code, out, _) = qnmc(&["--version"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("qnmc "));

    let (code, out, _) = qnmc(&["list"]);
    assert_eq!(code, 0);
    for name in [
        "gaussian",
        "gaussian-cov",
        "linear-gaussian",
        "logreg-german",
        "logreg-csv",
        "double-well",
        "recipe-2d",
        "eight-schools",
        "sblrc-blr",
        "ark",
        "pmf",
        "pmf-small",
        "bpmf",
        "bpmf-small",
    ] {
        assert!(
            out.contains(&format!("\n  {name} ")),
            "target {name} missing:\n{out}"
        );
    }
    for name in [
        "hmc", "qnhmc", "hamcmc", "hmc-bfgs", "mh-bfgs", "amagold", "l2mc", "sgld", "psgld",
        "sgrld", "sghmc", "sgnht", "sgrhmc",
    ] {
        assert!(
            out.contains(&format!("\n  {name} ")),
            "sampler {name} missing:\n{out}"
        );
    }
    assert!(out.contains("qnhmc-table1"), "{out}");
}
