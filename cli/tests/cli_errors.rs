//! Every error path of `qnmc run`: the message (with FILE:LINE:COLUMN for bad
//! data files) and exit code 2; and the output folder's no-clobber rule.

use std::path::PathBuf;

mod common;

use common::qnmc;

fn scratch(name: &str) -> PathBuf {
    common::scratch("cli-errors", name)
}

fn assert_usage_error(result: (i32, String, String), expected: &str) {
    let (code, _, err) = result;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(expected), "expected {expected:?} in:\n{err}");
}

#[test]
fn bad_data_files_are_located_by_line_and_column() {
    let dir = scratch("data");
    std::fs::write(dir.join("nonnum.csv"), "a,b,y\n1,2,0\n3,x,1\n").unwrap();
    std::fs::write(dir.join("ragged.csv"), "a,b,y\n1,2,0\n3,4\n").unwrap();
    let logreg = |file: &str, label: &str| {
        qnmc(
            &[
                "run",
                "--target",
                "logreg-csv",
                "--data",
                file,
                "--label-column",
                label,
            ],
            &dir,
        )
    };
    assert_usage_error(
        logreg("missing.csv", "y"),
        "error: missing.csv: cannot read missing.csv:",
    );
    assert_usage_error(
        logreg("nonnum.csv", "label"),
        "error: nonnum.csv:1: no column named \"label\"",
    );
    assert_usage_error(
        logreg("nonnum.csv", "y"),
        "error: nonnum.csv:3:2: cell \"x\" in column \"b\" is not a number",
    );
    assert_usage_error(
        logreg("ragged.csv", "y"),
        "error: ragged.csv:3: ragged row: expected 3 fields",
    );
}

#[test]
fn covariance_errors_name_the_file_and_the_dimension() {
    let dir = scratch("cov");
    std::fs::write(dir.join("cov2.csv"), "1,0.5\n0.5,2\n").unwrap();
    std::fs::write(dir.join("ragged.csv"), "1,0.5,0\n0.5,2\n").unwrap();
    let cov = |file: &str, extra: &[&str]| {
        let mut args = vec!["run", "--target", "gaussian-cov", "--covariance", file];
        args.extend_from_slice(extra);
        qnmc(&args, &dir)
    };
    assert_usage_error(
        cov("cov2.csv", &["--dimension", "3"]),
        "error: --dimension 3 does not match the covariance in cov2.csv, which is 2 x 2",
    );
    assert_usage_error(cov("ragged.csv", &[]), "error: ragged.csv:2: ragged row");
    assert_usage_error(
        qnmc(&["run", "--target", "gaussian-cov"], &dir),
        "error: target `gaussian-cov` needs --covariance FILE.csv",
    );
    assert_usage_error(
        qnmc(
            &["run", "--target", "logreg-heart", "--dimension", "5"],
            &dir,
        ),
        "error: --dimension 5 does not match target `logreg-heart`, which has dimension 14",
    );
}

#[test]
fn unknown_sampler_and_target_list_the_valid_names() {
    let dir = scratch("names");
    assert_usage_error(
        qnmc(&["run", "--sampler", "stan", "--target", "gaussian"], &dir),
        "unknown sampler `stan`; valid samplers: nuts, hmc, qnhmc, hamcmc, hmc-bfgs, mh-bfgs, amagold, l2mc, sgld, psgld, sgrld, sghmc, sgnht, sgrhmc",
    );
    assert_usage_error(
        qnmc(&["run", "--target", "normal"], &dir),
        "error: unknown target `normal`; valid targets: gaussian, gaussian-cov,",
    );
    assert_usage_error(
        qnmc(
            &["run", "--target", "gaussian", "--dimension", "20000"],
            &dir,
        ),
        "error: the target has dimension 20000; the samplers are compiled for at most 16384",
    );
    assert_usage_error(
        qnmc(
            &[
                "run",
                "--target",
                "gaussian",
                "--dimension",
                "2000",
                "--sampler",
                "mh-bfgs",
                "--thin",
                "2",
            ],
            &dir,
        ),
        "error: the target has dimension 2000; mh-bfgs is compiled for at most 1000 (nuts, the default sampler, for up to 16384; hmc, qnhmc, hamcmc, hmc-bfgs, amagold, l2mc, sgld, psgld, sgrld, sghmc, sgnht, sgrhmc for up to 1048576)",
    );
    assert_usage_error(
        qnmc(
            &[
                "run",
                "--target",
                "gaussian",
                "--sampler",
                "hamcmc",
                "--memory",
                "7",
            ],
            &dir,
        ),
        "error: --memory for hamcmc must be one of [5, 10, 20], got 7",
    );
    assert_usage_error(
        qnmc(
            &[
                "run",
                "--target",
                "gaussian",
                "--sampler",
                "hamcmc",
                "--gamma",
                "newest",
            ],
            &dir,
        ),
        "error: --gamma newest is for qnhmc; hamcmc takes a number",
    );
    assert_usage_error(
        qnmc(&["run", "--target", "gaussian", "--gamma=-1"], &dir),
        "expected a positive number or `newest`, got `-1`",
    );
    assert_usage_error(
        qnmc(&["run", "--target", "gaussian", "--mass", "unit"], &dir),
        "expected `inverse-hessian` (M = C) or `identity` (the paper's M = I), got `unit`",
    );
    assert_usage_error(
        qnmc(
            &["run", "--target", "gaussian", "--sghmc-update", "leapfrog"],
            &dir,
        ),
        "expected `position-first` (Chen et al.'s Algorithm 2) or `recipe-euler` \
         (the complete recipe's eq. 18), got `leapfrog`",
    );
    assert_usage_error(
        qnmc(&["reproduce", "table9", "--output", "out"], &dir),
        "error: unknown reproduction `table9`; valid: qnhmc-table1,",
    );
}

#[test]
fn an_existing_output_needs_force_and_force_overwrites() {
    let dir = scratch("force");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--target",
            "gaussian",
            "--dimension",
            "2",
            "--chains",
            "2",
            "--warmup",
            "100",
            "--draws",
            "50",
            "--quiet",
            "--output",
            "out",
        ];
        args.extend_from_slice(extra);
        qnmc(&args, &dir)
    };
    let (code, _, err) = run(&[]);
    assert_eq!(code, 0, "{err}");
    let first = std::fs::read_to_string(dir.join("out/chain_1.csv")).unwrap();

    let (code, _, err) = run(&["--seed", "5"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("error: output folder out is not empty"),
        "{err}"
    );
    assert!(err.contains("pass --force"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("out/chain_1.csv")).unwrap(),
        first
    );

    let (code, _, err) = run(&["--seed", "5", "--force"]);
    assert_eq!(code, 0, "{err}");
    let second = std::fs::read_to_string(dir.join("out/chain_1.csv")).unwrap();
    assert_ne!(first, second, "--force must overwrite with the new run");
}

#[test]
fn bad_draws_files_are_located_by_line_and_column() {
    let dir = scratch("draws");
    std::fs::write(dir.join("bad.csv"), "# id = 1\nlp__,x\n-1.5,0.25\n-2,abc\n").unwrap();
    assert_usage_error(
        qnmc(
            &[
                "check",
                "--target",
                "recipe-quadratic",
                "--draws-files",
                "bad.csv",
            ],
            &dir,
        ),
        "error: bad.csv:4:2: \"abc\" is not a number",
    );
    assert_usage_error(
        qnmc(
            &[
                "check",
                "--target",
                "recipe-quadratic",
                "--draws-files",
                "none.csv",
            ],
            &dir,
        ),
        "error: cannot read none.csv:",
    );
}

/// The files in `dir` whose names end in `.svg` or `.png`, sorted.
fn charts(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".svg") || n.ends_with(".png"))
        .collect();
    names.sort();
    names
}

/// `--force` replaces the earlier run: its charts and the chain it had
/// and the new run has not are deleted (they used to stay beside the new
/// CSVs, titled with the old sampler); files qnmc did not write stay.
#[test]
fn force_deletes_the_earlier_runs_files_and_keeps_the_users() {
    let dir = scratch("force-stale");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--target",
            "gaussian",
            "--dimension",
            "2",
            "--warmup",
            "100",
            "--draws",
            "50",
            "--quiet",
            "--output",
            "out",
        ];
        args.extend_from_slice(extra);
        qnmc(&args, &dir)
    };
    let (code, _, err) = run(&["--sampler", "hmc", "--chains", "3", "--plot", "all"]);
    assert_eq!(code, 0, "{err}");
    let old_charts = charts(&dir.join("out"));
    assert!(old_charts.len() >= 8, "{old_charts:?}");
    std::fs::write(dir.join("out/notes.txt"), "my notes").unwrap();
    std::fs::write(dir.join("out/my_figure.svg"), "<svg/>").unwrap();

    let (code, _, err) = run(&["--chains", "2", "--plot", "none", "--force"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(charts(&dir.join("out")), ["my_figure.svg"]);
    assert!(!dir.join("out/chain_3.csv").exists());
    assert!(dir.join("out/chain_2.csv").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("out/notes.txt")).unwrap(),
        "my notes"
    );
    let summary = std::fs::read_to_string(dir.join("out/summary.txt")).unwrap();
    assert!(summary.contains("sampler nuts"), "{summary}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// `check --strict` used to be answered with clap's "a similar argument
/// exists: '--metric'"; --strict is `run`'s option, and the message says so.
#[test]
fn check_strict_is_refused_with_the_reason() {
    let dir = scratch("check-strict");
    let (code, _, err) = qnmc(&["check", "--target", "gaussian", "--strict"], &dir);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("error: --strict is an option of `qnmc run`"),
        "{err}"
    );
    assert!(!err.contains("--metric"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// A semicolon-separated file read as CSV has one column: the error
/// suggests --delimiter. A covariate too large to use unstandardised is
/// refused at its file:line:column (it used to make an unusable run).
#[test]
fn a_wrong_delimiter_and_a_huge_cell_are_explained() {
    let dir = scratch("delimiter");
    std::fs::write(dir.join("semi.csv"), "a;b;y\n1;2;0\n3;4;1\n5;6;0\n2;1;1\n").unwrap();
    let semi = [
        "run",
        "--target",
        "logreg-csv",
        "--data",
        "semi.csv",
        "--label-column",
        "y",
        "--warmup",
        "50",
        "--draws",
        "20",
        "--quiet",
    ];
    assert_usage_error(
        qnmc(&semi, &dir),
        "error: semi.csv:1: no column named \"y\"; the columns are \"a;b;y\" \
         (one column: the header holds \";\"; if the file is separated by it, pass \
         --delimiter semicolon)",
    );
    let mut fixed = semi.to_vec();
    fixed.extend(["--delimiter", "semicolon"]);
    let (code, _, err) = qnmc(&fixed, &dir);
    assert_ne!(code, 2, "{err}");

    std::fs::write(
        dir.join("big.csv"),
        "a,b,y\n1,2,0\n1e308,4,1\n5,6,0\n2,1,1\n",
    )
    .unwrap();
    assert_usage_error(
        qnmc(
            &[
                "run",
                "--target",
                "logreg-csv",
                "--data",
                "big.csv",
                "--label-column",
                "y",
                "--no-standardize",
                "--quiet",
            ],
            &dir,
        ),
        "error: big.csv:3:1: cell \"1e308\" in column \"a\" is too large to use as it is",
    );
    std::fs::remove_dir_all(dir).unwrap();
}
