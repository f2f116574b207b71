//! The diagnostics after every `qnmc run` (issue 11, item 1): warnings
//! printed and written to `summary.json`, exit code 3 for an unusable run,
//! 4 for `--strict` with warnings, and the stochastic-gradient samplers'
//! note that R-hat and ESS do not see their step-size bias.

use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;

use common::qnmc;

fn scratch(name: &str) -> PathBuf {
    common::scratch("cli-diagnostics", name)
}

fn summary(dir: &Path, fit: &str) -> Value {
    let text = std::fs::read_to_string(dir.join(fit).join("summary.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The examples: QNHMC without warm-up on Statlog heart (every
/// transition divergent, the chains never leave their starts) and HMC with
/// ε = 1e10. Both used to print a normal table and exit 0.
#[test]
fn unusable_runs_exit_3_with_the_reasons() {
    let dir = scratch("unusable");
    let (code, _, err) = qnmc(
        &[
            "run",
            "--target",
            "logreg-heart",
            "--sampler",
            "qnhmc",
            "--warmup",
            "0",
            "--draws",
            "100",
            "--quiet",
            "--output",
            "stuck",
        ],
        &dir,
    );
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("unusable: chain 1: every one of its 100 kept transitions diverged"),
        "{err}"
    );
    assert!(err.contains("unusable: chain 1: never moved"), "{err}");
    assert!(err.contains("error: the run is unusable"), "{err}");
    // The files are complete and say so.
    assert!(!dir.join("stuck/INCOMPLETE").exists());
    let json = summary(&dir, "stuck");
    assert_eq!(json["diagnostics"]["usable"], false);
    assert!(
        json["diagnostics"]["unusable_reasons"]
            .as_array()
            .unwrap()
            .len()
            >= 4
    );

    let (code, _, err) = qnmc(
        &[
            "run",
            "--target",
            "logreg-heart",
            "--sampler",
            "hmc",
            "--step-size",
            "1e10",
            "--draws",
            "100",
            "--warmup",
            "100",
            "--quiet",
        ],
        &dir,
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("unusable: chain"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// A short random-walk run (`--thin 1` given: without it mh-bfgs is refused
/// in 14 dimensions): too few effective draws. Warnings are printed
/// and written; the run exits 0, or 4 with --strict.
#[test]
fn warnings_are_printed_and_strict_makes_them_fail() {
    let dir = scratch("warnings");
    let args = [
        "run",
        "--target",
        "logreg-heart",
        "--sampler",
        "mh-bfgs",
        "--thin",
        "1",
        "--warmup",
        "100",
        "--draws",
        "100",
        "--quiet",
    ];
    let mut with_output = args.to_vec();
    with_output.extend(["--output", "short"]);
    let (code, _, err) = qnmc(&with_output, &dir);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning: bulk ESS is"), "{err}");
    // The bulk ESS over all chains is compared with the floor for all
    // chains (it used to read "298 (…) < 100 per chain (400 for 4 chains)").
    assert!(
        err.contains("over 4 chains, below 400 (100 per chain)"),
        "{err}"
    );
    let json = summary(&dir, "short");
    let warnings = json["diagnostics"]["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().starts_with("bulk ESS is")),
        "{json}"
    );
    assert_eq!(json["diagnostics"]["usable"], true);
    let printed = err.lines().filter(|l| l.starts_with("warning: ")).count();
    assert_eq!(printed, warnings.len(), "{err}");

    let mut strict = args.to_vec();
    strict.push("--strict");
    let (code, _, err) = qnmc(&strict, &dir);
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains(&format!("error: --strict: the run has {printed} warning")),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// NUTS with the default settings on a 2-D Gaussian: nothing to warn about,
/// so --strict passes; summary.json carries E-BFMI per chain and the
/// tree-depth count. With --max-tree-depth 1 every transition hits it.
#[test]
fn a_clean_nuts_run_passes_strict_and_tree_depth_saturation_warns() {
    let dir = scratch("nuts");
    let (code, _, err) = qnmc(
        &[
            "run",
            "--target",
            "gaussian",
            "--dimension",
            "2",
            "--strict",
            "--quiet",
            "--output",
            "clean",
        ],
        &dir,
    );
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("warning:"), "{err}");
    let json = summary(&dir, "clean");
    let ebfmi = json["diagnostics"]["ebfmi_per_chain"].as_array().unwrap();
    assert_eq!(ebfmi.len(), 4);
    assert!(ebfmi.iter().all(|e| e.as_f64().unwrap() > 0.3), "{json}");
    assert_eq!(json["diagnostics"]["max_tree_depth_hits"], 0);

    let (code, _, err) = qnmc(
        &[
            "run",
            "--target",
            "logreg-german",
            "--max-tree-depth",
            "1",
            "--warmup",
            "100",
            "--draws",
            "100",
            "--quiet",
            "--output",
            "shallow",
        ],
        &dir,
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("transitions hit the maximum tree depth 1"),
        "{err}"
    );
    let json = summary(&dir, "shallow");
    assert!(
        json["diagnostics"]["max_tree_depth_hits"].as_u64().unwrap() > 0,
        "{json}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// SGLD's draws can look converged around the wrong answer: every SG run
/// says so, in the output and in summary.json; exact samplers do not.
#[test]
fn stochastic_gradient_runs_say_that_rhat_and_ess_miss_their_bias() {
    let dir = scratch("sg");
    let (code, _, err) = qnmc(
        &[
            "run",
            "--target",
            "gaussian",
            "--dimension",
            "2",
            "--sampler",
            "sgld",
            "--quiet",
            "--output",
            "sgld",
        ],
        &dir,
    );
    assert_ne!(code, 3, "{err}");
    assert!(
        err.contains("note: sgld has no Metropolis correction"),
        "{err}"
    );
    assert!(err.contains("R-hat and ESS cannot detect it"), "{err}");
    let json = summary(&dir, "sgld");
    assert!(
        json["diagnostics"]["notes"][0]
            .as_str()
            .unwrap()
            .contains("step size"),
        "{json}"
    );
    let (_, _, err) = qnmc(
        &[
            "run",
            "--target",
            "gaussian",
            "--dimension",
            "2",
            "--sampler",
            "hmc",
            "--quiet",
        ],
        &dir,
    );
    assert!(!err.contains("note:"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// QNHMC without warm-up on Statlog heart is unusable (exit 3): the summary
/// says the chains did not move (not "too few draws?"), the acceptance
/// warning names the unadapted default step size (no --step-size was
/// given), and the same command with a warm-up replaces the folder without
/// --force; a usable run's folder then needs --force again.
#[test]
fn an_unusable_run_says_why_and_the_fixed_command_replaces_it() {
    let dir = scratch("replace-unusable");
    let run = |warmup: &str| {
        qnmc(
            &[
                "run",
                "--target",
                "logreg-heart",
                "--sampler",
                "qnhmc",
                "--warmup",
                warmup,
                "--draws",
                "100",
                "--quiet",
                "--plot",
                "none",
                "--output",
                "fit",
            ],
            &dir,
        )
    };
    let (code, out, err) = run("0");
    assert_eq!(code, 3, "{err}");
    assert!(
        out.contains("no quantity has a finite bulk ESS (the chains did not move"),
        "{out}"
    );
    assert!(
        err.contains("with the default step size, not adapted (no warm-up to adapt it in)"),
        "{err}"
    );
    assert!(!err.contains("--step-size:"), "{err}");
    assert!(!err.contains("a fixed --step-size"), "{err}");
    let stuck = std::fs::read_to_string(dir.join("fit/chain_1.csv")).unwrap();
    assert!(stuck.contains("#     num_warmup = 0\n"), "{stuck}");

    let (code, _, err) = run("200");
    assert_eq!(code, 0, "{err}");
    let fixed = std::fs::read_to_string(dir.join("fit/chain_1.csv")).unwrap();
    assert!(fixed.contains("#     num_warmup = 200\n"), "{fixed}");
    assert_eq!(summary(&dir, "fit")["diagnostics"]["usable"], true);

    let (code, _, err) = run("200");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("pass --force"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Below the largest --max-tree-depth the warning says how far it can be
/// raised (a tiny fixed step size makes every trajectory hit depth 10), and
/// a depth beyond Stan's default 10 runs: with ε = 10⁻⁴ on a 2-D standard
/// Gaussian a trajectory turns after about π/ε ≈ 31 000 steps, depth 15.
#[test]
fn tree_depth_advice_and_depths_beyond_ten() {
    let dir = scratch("depth-10");
    let run = |depth: &str, output: &str| {
        qnmc(
            &[
                "run",
                "--target",
                "gaussian",
                "--dimension",
                "2",
                "--chains",
                "1",
                "--warmup",
                "0",
                "--draws",
                "4",
                "--step-size",
                "1e-4",
                "--max-tree-depth",
                depth,
                "--quiet",
                "--output",
                output,
            ],
            &dir,
        )
    };
    let (code, _, err) = run("10", "ten");
    assert_ne!(code, 2, "{err}");
    assert!(
        err.contains("4 of 4 transitions hit the maximum tree depth 10"),
        "{err}"
    );
    assert!(
        err.contains("raise --max-tree-depth (now 10, up to 30;"),
        "{err}"
    );

    let (code, _, err) = run("20", "twenty");
    assert_ne!(code, 2, "{err}");
    assert!(!err.contains("maximum tree depth"), "{err}");
    let csv = std::fs::read_to_string(dir.join("twenty/chain_1.csv")).unwrap();
    let mut lines = csv.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = header.iter().position(|h| *h == "treedepth__").unwrap();
    let depths: Vec<u32> = lines
        .map(|l| l.split(',').nth(column).unwrap().parse().unwrap())
        .collect();
    assert_eq!(depths.len(), 4, "{csv}");
    assert!(depths.iter().all(|d| (14..=16).contains(d)), "{depths:?}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn quiet_hides_the_pilot_line_and_help_says_so() {
    let dir = scratch("quiet");
    let (code, help, _) = qnmc(&["run", "--help"], &dir);
    assert_eq!(code, 0);
    assert!(
        help.contains("No progress bar, and no line saying what the stochastic-gradient"),
        "{help}"
    );
    for quiet in [true, false] {
        let mut args = vec![
            "run",
            "--target",
            "logreg-heart",
            "--sampler",
            "sgld",
            "--chains",
            "1",
            "--draws",
            "20",
            "--warmup",
            "20",
            "--thin",
            "1",
        ];
        if quiet {
            args.push("--quiet");
        }
        let (code, _, err) = qnmc(&args, &dir);
        assert_ne!(code, 2, "{err}");
        assert_eq!(err.contains("sgld: step size"), !quiet, "{err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}
