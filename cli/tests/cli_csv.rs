//! `qnmc run --target logreg-csv`: the CSV reader's options and errors
//! (message and exit code), and what a CSV fit writes: `model.json`, the
//! coefficient table on the original scale, column names as parameter names.

use std::path::PathBuf;

use qnmc_host::input::Sha256;
use qnmc_host::output::read_cmdstan_csv;

mod common;

use common::qnmc;

fn scratch(name: &str) -> PathBuf {
    common::scratch("cli-csv", name)
}

fn fit<'a>(file: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--target",
        "logreg-csv",
        "--data",
        file,
        "--label-column",
        "Recovered",
        "--sampler",
        "hmc",
        "--chains",
        "2",
        "--warmup",
        "200",
        "--draws",
        "200",
        "--quiet",
    ];
    args.extend_from_slice(more);
    args
}

const TRIAL: &str = "id;age;dose;Recovered\n\
1;30;1.5;Yes\n2;50;NA;no\n3;40;2.5;YES\n4;35;;No\n5;61;2.9;yes\n6;29;3.0;no\n\
7;45;2.4;No\n8;48;4.7;yes\n9;44;0.9;no\n10;53;4.4;Yes\n";

#[test]
fn reader_errors_say_where_and_exit_2() {
    let dir = scratch("errors");
    std::fs::write(dir.join("trial.csv"), TRIAL).unwrap();
    std::fs::write(
        dir.join("dup.csv"),
        "a,b,a,Recovered\n1,2,3,no\n4,5,6,yes\n",
    )
    .unwrap();
    std::fs::write(dir.join("inf.csv"), "a,Recovered\n1,no\n-inf,yes\n").unwrap();
    let cases: [(Vec<&str>, &str); 6] = [
        // Semicolons without --delimiter: one column named by the whole header.
        (
            fit("trial.csv", &[]),
            "error: trial.csv:1: no column named \"Recovered\"; the columns are \"id;age;dose;Recovered\"",
        ),
        // The id column is numeric too: the first problem is the NA.
        (
            fit("trial.csv", &["--delimiter", ";"]),
            "error: trial.csv:3:3: missing value",
        ),
        (
            fit("trial.csv", &["--delimiter", ";", "--drop-columns", "id"]),
            "error: trial.csv:3:3: missing value (\"NA\") in column \"dose\"; --missing drop leaves such rows out",
        ),
        (
            fit("dup.csv", &[]),
            "error: dup.csv:1:3: duplicate column name \"a\" (also column 1)",
        ),
        (
            fit("inf.csv", &[]),
            "error: inf.csv:3:1: cell \"-inf\" in column \"a\" is not a finite number",
        ),
        (
            fit("trial.csv", &["--delimiter", ";;"]),
            "invalid value ';;' for '--delimiter <CHAR>'",
        ),
    ];
    for (args, expected) in &cases {
        let (code, _, err) = qnmc(args, &dir);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains(expected),
            "{args:?}: expected {expected:?} in\n{err}"
        );
    }
    let (code, _, err) = qnmc(&fit("trial.csv", &["--missing", "sometimes"]), &dir);
    assert_eq!(code, 2);
    assert!(
        err.contains("expected `error` or `drop`, got `sometimes`"),
        "{err}"
    );
}

#[test]
fn a_csv_fit_writes_model_json_and_original_scale_coefficients() {
    let dir = scratch("fit");
    std::fs::write(dir.join("trial.csv"), TRIAL).unwrap();
    let args = fit(
        "trial.csv",
        &[
            "--delimiter",
            ";",
            "--drop-columns",
            "id",
            "--missing",
            "drop",
            "--output",
            "out",
            "--plot",
            "none",
        ],
    );
    let (code, out, err) = qnmc(&args, &dir);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("(8 rows, 5 with label 1; 2 rows with a missing value dropped (lines 3, 5))"),
        "{out}"
    );
    // Case-insensitive labels: Yes/yes/YES are one class.
    assert!(out.contains("labels \"no\" → 0, \"Yes\" → 1"), "{out}");
    // Parameters are named after the columns in the printed table...
    assert!(
        out.contains("\nage ") && out.contains("\n(intercept) "),
        "{out}"
    );

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/model.json")).unwrap())
            .unwrap();
    let mut hash = Sha256::new();
    hash.update(TRIAL.as_bytes());
    assert_eq!(json["data"]["sha256"], hash.hex());
    assert_eq!(json["data"]["file"], "trial.csv");
    assert_eq!(json["data"]["separator"], ";");
    assert_eq!(json["data"]["dropped_columns"], serde_json::json!(["id"]));
    assert_eq!(json["data"]["rows_dropped"], 2);
    assert_eq!(json["data"]["dropped_row_lines"], serde_json::json!([3, 5]));
    assert_eq!(json["label"]["column"], "Recovered");
    assert_eq!(json["label"]["one"], "Yes");
    assert_eq!(json["covariates"], serde_json::json!(["age", "dose"]));
    assert_eq!(json["prior"]["variance"], 100.0);
    assert_eq!(json["sampler"], "hmc");
    let ages = [30.0, 40.0, 61.0, 29.0, 45.0, 48.0, 44.0, 53.0];
    let mean_age = ages.iter().sum::<f64>() / 8.0;
    let m = json["standardization"]["mean"][0].as_f64().unwrap();
    assert!((m - mean_age).abs() < 1e-12, "{m}");
    assert_eq!(
        json["parameters"],
        serde_json::json!(["(intercept)", "age", "dose"])
    );

    // ...in the CmdStan CSVs and summary.json...
    let chain =
        read_cmdstan_csv(&std::fs::read_to_string(dir.join("out/chain_1.csv")).unwrap()).unwrap();
    assert!(chain.column("age").is_some(), "{:?}", chain.column_names);
    let summary = std::fs::read_to_string(dir.join("out/summary.json")).unwrap();
    assert!(summary.contains("\"age\""), "{summary}");

    // ...and the coefficient table holds both scales: β_age = w_age / sd(age).
    let table = std::fs::read_to_string(dir.join("out/coefficients.csv")).unwrap();
    let rows: Vec<Vec<&str>> = table.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows[0][..4], ["name", "scale", "mean", "sd"]);
    let find = |name: &str, scale: &str| -> f64 {
        rows.iter()
            .find(|r| r[0] == format!("\"{name}\"") && r[1] == scale)
            .unwrap_or_else(|| panic!("{name} {scale} in\n{table}"))[2]
            .parse()
            .unwrap()
    };
    let sd_age = json["standardization"]["sd"][0].as_f64().unwrap();
    let ratio = find("age", "original") / find("age", "sampled");
    assert!(
        (ratio - 1.0 / sd_age).abs() < 1e-9 / sd_age,
        "{ratio} vs {}",
        1.0 / sd_age
    );
    assert!(find("(intercept)", "original").is_finite());
}
