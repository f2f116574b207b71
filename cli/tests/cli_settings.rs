//! Settings errors and the output folder (issue 11, item 6): a refused
//! command creates and marks nothing, so the corrected command runs without
//! `--force`; negative numbers get a range error naming the option; options
//! that do not apply to the sampler or target are errors naming the option;
//! `check --draws-files` checks the quantities before any reference run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::qnmc;

fn scratch(name: &str) -> PathBuf {
    common::scratch("cli-settings", name)
}

fn assert_usage_error((code, _, err): (i32, String, String), expected: &str) {
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(expected), "expected {expected:?} in:\n{err}");
}

#[test]
fn a_refused_command_leaves_no_folder_and_the_fixed_one_runs_without_force() {
    let dir = scratch("retry");
    let quick = ["--chains", "2", "--warmup", "100", "--quiet"];
    let refused: [(&[&str], &str); 5] = [
        (&["--draws", "2"], "--draws"),
        (&["--step-size", "-1"], "--step-size"),
        (
            &["--sampler", "hmc", "--max-tree-depth", "3"],
            "--max-tree-depth",
        ),
        (&["--sampler", "hmc", "--early-end", "2"], "--early-end"),
        (&["--sampler", "qnhmc", "--memory", "50"], "--memory"),
    ];
    for (bad, option) in refused {
        let mut args = vec![
            "run",
            "--target",
            "gaussian",
            "--dimension",
            "2",
            "--output",
            "fit",
        ];
        args.extend_from_slice(&quick);
        args.extend_from_slice(bad);
        let (code, _, err) = qnmc(&args, &dir);
        assert_eq!(code, 2, "{bad:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(option),
            "{bad:?}: {err}"
        );
        assert!(
            !dir.join("fit").exists(),
            "{bad:?} created the output folder: {err}"
        );
    }
    // The same command with the setting fixed runs, no --force needed.
    let mut args = vec![
        "run",
        "--target",
        "gaussian",
        "--dimension",
        "2",
        "--output",
        "fit",
        "--draws",
        "200",
    ];
    args.extend_from_slice(&quick);
    let (code, _, err) = qnmc(&args, &dir);
    assert_eq!(code, 0, "{err}");
    assert!(dir.join("fit/summary.json").is_file());
    assert!(!dir.join("fit/INCOMPLETE").exists());
    // A finished folder still needs --force.
    let (code, _, err) = qnmc(&args, &dir);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--force"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn negative_numbers_get_a_range_error_naming_the_option() {
    let dir = scratch("negative");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--target", "gaussian", "--dimension", "2"];
        args.extend_from_slice(extra);
        qnmc(&args, &dir)
    };
    assert_usage_error(
        run(&["--draws", "-5"]),
        "'--draws <DRAWS>': must be at least 4, got -5",
    );
    assert_usage_error(
        run(&["--chains", "-1"]),
        "'--chains <CHAINS>': must be at least 1, got -1",
    );
    assert_usage_error(
        run(&["--seed", "-3"]),
        "'--seed <SEED>': must be at least 0, got -3",
    );
    assert_usage_error(
        run(&["--warmup", "-10"]),
        "'--warmup <WARMUP>': must be at least 0, got -10",
    );
    assert_usage_error(
        run(&["--step-size", "-0.5"]),
        "--step-size must be a positive number, got -0.5",
    );
    assert_usage_error(
        run(&["--init-radius", "-2"]),
        "--init-radius must be a number >= 0, got -2",
    );
    assert_usage_error(
        run(&["--sampler", "hmc", "--leapfrog-steps", "-4"]),
        "'--leapfrog-steps <LEAPFROG_STEPS>': must be at least 1, got -4",
    );
    assert_usage_error(
        run(&["--max-tree-depth", "31"]),
        "'--max-tree-depth <MAX_TREE_DEPTH>': must be at most 30, got 31",
    );
    for (code, _, err) in [run(&["--draws", "-5"]), run(&["--seed", "-3"])] {
        assert!(!err.contains("unexpected argument"), "{code}: {err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn options_that_do_not_apply_are_errors_naming_the_option() {
    let dir = scratch("applies");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--quiet"];
        args.extend_from_slice(extra);
        qnmc(&args, &dir)
    };
    assert_usage_error(
        run(&["--target", "gaussian", "--leapfrog-steps", "5"]),
        "error: --leapfrog-steps does not apply to --sampler nuts",
    );
    assert_usage_error(
        run(&[
            "--target",
            "gaussian",
            "--sampler",
            "hmc",
            "--metric",
            "diag",
        ]),
        "error: --metric does not apply to --sampler hmc",
    );
    assert_usage_error(
        run(&[
            "--target",
            "logreg-heart",
            "--sampler",
            "hmc",
            "--batch-size",
            "10",
        ]),
        "error: --batch-size does not apply to --sampler hmc",
    );
    assert_usage_error(
        run(&[
            "--target",
            "gaussian",
            "--sampler",
            "sgld",
            "--batch-size",
            "10",
        ]),
        "error: --batch-size does not apply to --sampler sgld: the target has no data points",
    );
    assert_usage_error(
        run(&[
            "--target",
            "logreg-heart",
            "--sampler",
            "hmc",
            "--mass",
            "identity",
        ]),
        "error: --mass does not apply to --sampler hmc",
    );
    assert_usage_error(
        run(&[
            "--target",
            "logreg-heart",
            "--sampler",
            "sghmc",
            "--sghmc-update",
            "recipe-euler",
            "--target-acceptance",
            "0.9",
        ]),
        "error: --target-acceptance does not apply to --sampler sghmc",
    );
    assert_usage_error(
        run(&[
            "--target",
            "logreg-heart",
            "--sampler",
            "hmc",
            "--step-size",
            "0.1",
            "--target-acceptance",
            "0.9",
        ]),
        "error: --target-acceptance does not apply to --sampler hmc: a fixed --step-size",
    );
    assert_usage_error(
        run(&["--target", "logreg-heart", "--no-intercept"]),
        "error: --no-intercept does not apply to --target logreg-heart",
    );
    assert_usage_error(
        run(&["--target", "gaussian", "--covariance", "c.csv"]),
        "error: --covariance does not apply to --target gaussian",
    );
    assert_usage_error(
        run(&["--target", "gaussian", "--shared-data", "."]),
        "error: --shared-data does not apply to --target gaussian",
    );
    // Options that do apply are accepted (a short run to prove it).
    let (code, _, err) = run(&[
        "--target",
        "logreg-heart",
        "--sampler",
        "sgld",
        "--batch-size",
        "27",
        "--warmup",
        "50",
        "--draws",
        "50",
        "--chains",
        "1",
    ]);
    assert_ne!(code, 2, "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Runs `check` with a time limit: a reference run of 10⁸ draws would take
/// hours, so a prompt exit proves nothing was run before the refusal.
fn check_within(args: &[&str], dir: &Path, limit: Duration) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_qnmc"))
        .arg("check")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            return (status.code().unwrap_or(-1), err);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("check {args:?} still running after {limit:?}: it started the reference run");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn check_refuses_draws_of_the_wrong_dimension_before_any_reference_run() {
    let dir = scratch("draws-files");
    let (code, _, err) = qnmc(
        &[
            "run",
            "--target",
            "gaussian",
            "--dimension",
            "2",
            "--draws",
            "100",
            "--warmup",
            "100",
            "--quiet",
            "--output",
            "g2",
        ],
        &dir,
    );
    assert_eq!(code, 0, "{err}");
    let files: Vec<String> = (1..=4).map(|k| format!("g2/chain_{k}.csv")).collect();
    let mut args = vec![
        "--target",
        "logreg-heart",
        "--quiet",
        "--reference-draws",
        "100000000",
        "--draws-files",
    ];
    args.extend(files.iter().map(String::as_str));
    let (code, err) = check_within(&args, &dir, Duration::from_secs(60));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("the draws have 2 quantities (x[1], x[2]) but target `logreg-heart` has 14"),
        "{err}"
    );
    // Sampler options make no sense with --draws-files.
    let mut args = vec![
        "--target",
        "gaussian",
        "--dimension",
        "2",
        "--sampler",
        "hmc",
        "--draws-files",
    ];
    args.extend(files.iter().map(String::as_str));
    let (code, err) = check_within(&args, &dir, Duration::from_secs(60));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--sampler does not apply with --draws-files"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// `--early-end 0` runs every chain's whole warm-up; by default (2 quiet
/// kept windows) German credit's warm-up ends early in some chain (it did in
/// 79 of 80 chains over seeds 1-20, `early_end_funnels`), and summary.json
/// says where each chain's ended.
#[test]
fn the_early_end_can_be_switched_off() {
    let dir = scratch("early-end");
    let warmups = |extra: &[&str], fit: &str| -> Vec<u64> {
        let mut args = vec![
            "run",
            "--target",
            "logreg-german",
            "--draws",
            "100",
            "--quiet",
            "--plot",
            "none",
            "--output",
            fit,
        ];
        args.extend_from_slice(extra);
        let (code, _, err) = qnmc(&args, &dir);
        assert!(code == 0 || code == 4, "{err}");
        let text = std::fs::read_to_string(dir.join(fit).join("summary.json")).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        json["sampler_stats"]["per_chain"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["warmup_draws"].as_u64().unwrap())
            .collect()
    };
    let off = warmups(&["--early-end", "0"], "off");
    assert_eq!(off, [500; 4]);
    let default = warmups(&[], "default");
    assert!(default.iter().any(|&w| w < 500), "{default:?}");
    assert!(default.iter().all(|&w| w <= 500), "{default:?}");
}

/// `run --help` and `check --help` group their options by topic, the
/// posterior's first, and say what the warm-up really does (a NUTS chain
/// can run 75 draws past --warmup).
#[test]
fn help_groups_the_options_by_topic() {
    let dir = std::env::temp_dir();
    for command in ["run", "check"] {
        let (code, help, err) = qnmc(&[command, "--help"], &dir);
        assert_eq!(code, 0, "{err}");
        let headings = [
            "Posterior:",
            "Built-in targets' options:",
            "Sampling:",
            "NUTS (the default sampler):",
            "HMC, QNHMC, HAMCMC, HMC-BFGS:",
            "Stochastic-gradient samplers and AMAGOLD:",
            "Output:",
        ];
        let at: Vec<usize> = headings
            .iter()
            .map(|h| {
                help.lines()
                    .position(|l| l == *h)
                    .unwrap_or_else(|| panic!("{command} --help has no heading {h}:\n{help}"))
            })
            .collect();
        assert!(
            at.windows(2).all(|w| w[0] < w[1]),
            "{command}: {at:?}\n{help}"
        );
        // Each option sits under its heading: the nearest heading above it.
        let under = |option: &str| {
            let line = help
                .lines()
                .position(|l| l.trim_start().starts_with(option))
                .unwrap_or_else(|| panic!("{command} --help has no {option}:\n{help}"));
            headings[at.iter().rposition(|&h| h < line).unwrap()]
        };
        assert_eq!(under("--target <"), "Posterior:");
        assert_eq!(under("--model <"), "Posterior:");
        assert_eq!(under("--warmup <"), "Sampling:");
        assert_eq!(under("--max-tree-depth <"), "NUTS (the default sampler):");
        assert_eq!(under("--memory <"), "HMC, QNHMC, HAMCMC, HMC-BFGS:");
        assert_eq!(
            under("--batch-size <"),
            "Stochastic-gradient samplers and AMAGOLD:"
        );
        assert_eq!(under("--output <"), "Output:");
        assert!(
            help.contains("terminal buffer once more (75 draws"),
            "{help}"
        );
        assert!(!help.contains("target_for"), "{help}");
    }
}
