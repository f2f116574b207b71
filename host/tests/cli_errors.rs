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
                "hmc",
            ],
            &dir,
        ),
        "error: the target has dimension 2000; hmc is compiled for at most 1000 (nuts, the default sampler, for up to 16384)",
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
