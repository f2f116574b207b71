//! The `qnmc` binary's error paths: message on stderr, exit code 2.

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

#[test]
fn unknown_command_and_bad_options_fail_with_a_message() {
    let (code, _, err) = qnmc(&["frobnicate"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown command `frobnicate`"), "{err}");

    let (code, _, err) = qnmc(&["demo", "--draws", "many"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--draws expects a non-negative integer, got `many`"),
        "{err}"
    );

    let (code, _, err) = qnmc(&["demo", "--seed"]);
    assert_eq!(code, 2);
    assert!(err.contains("--seed needs a value"), "{err}");

    let (code, _, err) = qnmc(&["demo", "--chains", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("--chains must be >= 1"), "{err}");

    let (code, _, err) = qnmc(&["demo", "--fast"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown option `--fast`"), "{err}");
}

#[test]
fn help_and_version_succeed() {
    let (code, out, _) = qnmc(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("qnmc demo"));
    let (code, out, _) = qnmc(&["--version"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("qnmc "));
}
