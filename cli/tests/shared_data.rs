//! The shared data folder (issue 11, item 3): found beside the repository
//! whatever the current directory; a named folder that does not exist is an
//! error saying where it looked; tests that need the data skip with one line
//! unless `QNMC_REQUIRE_SHARED_DATA` is set; `reproduce` says what it skipped
//! and exits with code 5.

use std::path::{Path, PathBuf};
use std::process::Command;

use qnmc_host::shared_data::{DATA_ENV, REQUIRE_ENV, for_test};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("qnmc-shared-data-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn qnmc(args: &[&str], dir: &Path, data: Option<&str>) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_qnmc"));
    command.args(args).current_dir(dir);
    if let Some(d) = data {
        command.env(DATA_ENV, d);
    }
    let out = command.output().expect("the qnmc binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The test the two below run in a child process.
#[test]
fn probe_needs_the_shared_data() {
    if let Some(dir) = for_test("probe_needs_the_shared_data") {
        assert!(dir.join("logreg").is_dir(), "{}", dir.display());
    }
}

fn run_probe(required: bool) -> (bool, String) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "probe_needs_the_shared_data",
            "--test-threads",
            "1",
        ])
        .env(DATA_ENV, "/nonexistent/qnmc-shared-data");
    if required {
        command.env(REQUIRE_ENV, "1");
    } else {
        command.env_remove(REQUIRE_ENV);
    }
    let out = command.output().unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn a_missing_folder_skips_with_one_line_or_fails_when_required() {
    let (passed, text) = run_probe(false);
    assert!(passed, "{text}");
    let skips: Vec<&str> = text.lines().filter(|l| l.starts_with("skipped ")).collect();
    assert_eq!(skips.len(), 1, "{text}");
    assert!(
        skips[0].contains("skipped probe_needs_the_shared_data: "),
        "{text}"
    );
    assert!(skips[0].contains("/nonexistent/qnmc-shared-data"), "{text}");
    assert!(skips[0].contains("DATA.md"), "{text}");
    let (passed, text) = run_probe(true);
    assert!(
        !passed,
        "a required folder that is missing must fail:\n{text}"
    );
    assert!(text.contains(REQUIRE_ENV), "{text}");
}

#[test]
fn the_cli_finds_the_data_from_any_directory_and_names_where_it_looked() {
    let dir = scratch("cwd");
    let (code, _, err) = qnmc(
        &["run", "--target", "eight-schools", "--quiet"],
        &dir,
        Some("/nonexistent/qnmc-shared-data"),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("target `eight-schools` reads the shared data folder"),
        "{err}"
    );
    assert!(
        err.contains("/nonexistent/qnmc-shared-data (QNMC_SHARED_DATA: not an existing folder)"),
        "{err}"
    );
    let (code, _, err) = qnmc(
        &[
            "run",
            "--target",
            "logreg-pima",
            "--shared-data",
            "/nonexistent/x",
            "--quiet",
        ],
        &dir,
        None,
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("/nonexistent/x (--shared-data: not an existing folder)"),
        "{err}"
    );
    // From a directory far from the repository, the default place is used.
    if for_test("the_cli_finds_the_data_from_any_directory (default place)").is_some() {
        let (code, _, err) = qnmc(
            &[
                "run",
                "--target",
                "eight-schools",
                "--warmup",
                "100",
                "--draws",
                "100",
                "--quiet",
            ],
            &dir,
            None,
        );
        assert!(code == 0 || code == 3, "{err}");
        assert!(!err.contains("shared data folder"), "{err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn reproduce_says_what_it_skipped_and_exits_5() {
    let dir = scratch("reproduce");
    let (code, stdout, err) = qnmc(
        &[
            "reproduce",
            "zhang-sutton-table2",
            "--quick",
            "--output",
            "out",
        ],
        &dir,
        Some("/nonexistent/qnmc-shared-data"),
    );
    assert_eq!(code, 5, "{stdout}{err}");
    assert!(
        err.contains(
            "skipped in zhang-sutton-table2: Pima: skipped: the shared data folder was not found"
        ),
        "{err}"
    );
    assert!(
        err.contains("skipped in zhang-sutton-table2: Ripley"),
        "{err}"
    );
    assert!(err.contains("error: 2 parts were skipped"), "{err}");
    let report = std::fs::read_to_string(dir.join("out/zhang-sutton-table2.md")).unwrap();
    assert!(
        report.contains("skipped: the shared data folder was not found"),
        "{report}"
    );
    assert!(!dir.join("out/INCOMPLETE").exists());
    std::fs::remove_dir_all(dir).unwrap();
}
