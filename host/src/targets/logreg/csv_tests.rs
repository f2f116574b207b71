//! The CSV reader options of `logreg-csv` (separator, dropped columns,
//! missing values, label case, duplicate headers, non-finite cells) and what
//! a CSV fit records (`model.json` fields, the original-scale map).

use super::*;
use crate::input::{InputErrorKind, Separator};
use crate::model::Model;
use std::path::PathBuf;

fn temp_csv(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("qnmc-logreg-csv-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn message(path: &PathBuf, options: &CsvOptions) -> String {
    LogisticRegressionModel::from_csv(path, options)
        .unwrap_err()
        .to_string()
}

#[test]
fn other_separators_are_read() {
    let semicolon = temp_csv("semi.csv", "a;b;k\n1;\"2;5\";0\n3;4;1\n5;1;0\n");
    let mut options = CsvOptions::new("k");
    options.separator = Separator::Char(';');
    options.standardize = false;
    let model = LogisticRegressionModel::from_csv(&semicolon, &options).unwrap_err();
    // "2;5" is one quoted field, and not a number.
    assert_eq!(
        model.to_string(),
        format!(
            "{}:2:2: cell \"2;5\" in column \"b\" is not a number",
            semicolon.display()
        )
    );
    let tab = temp_csv("tab.tsv", "a\tb\tk\n1\t2\t0\n3\t 4 \t1\n5\t1\t0\n");
    options.separator = Separator::Char('\t');
    let model = LogisticRegressionModel::from_csv(&tab, &options).unwrap();
    assert_eq!(model.column_names(), ["(intercept)", "a", "b"]);
    assert_eq!(model.design_row(1), [1.0, 3.0, 4.0]);
    // With the default comma the whole line is one column.
    let e = message(&tab, &CsvOptions::new("k"));
    assert!(
        e.contains("no column named \"k\"; the columns are \"a\\tb\\tk\""),
        "{e}"
    );
}

#[test]
fn dropped_columns_are_left_out_and_must_exist() {
    let path = temp_csv("drop.csv", "id,a,note,k\n1,2,x,0\n2,5,y,1\n3,1,z,0\n");
    let mut options = CsvOptions::new("k");
    options.drop_columns = vec!["id".into(), "note".into()];
    let model = LogisticRegressionModel::from_csv(&path, &options).unwrap();
    assert_eq!(model.column_names(), ["(intercept)", "a"]);
    assert_eq!(model.data_description().dropped_columns, ["id", "note"]);
    // Without dropping, the text column is an error.
    assert!(
        message(&path, &CsvOptions::new("k"))
            .ends_with("drop.csv:2:3: cell \"x\" in column \"note\" is not a number")
    );
    options.drop_columns = vec!["ID".into()];
    assert!(message(&path, &options).ends_with(
        "drop.csv:1: no column named \"ID\"; the columns are \"id\", \"a\", \"note\", \"k\""
    ));
    options.drop_columns = vec!["k".into()];
    assert!(
        message(&path, &options)
            .ends_with("drop.csv:1:4: --drop-columns names the label column \"k\"")
    );
}

#[test]
fn missing_values_are_an_error_or_dropped() {
    let text = "a,b,k\n1,2,no\n2,NA,yes\n3,1,no\n4,,yes\n5,3,\n6,2,na\n7,5,yes\n8,1,No\n";
    let path = temp_csv("missing.csv", text);
    let e = LogisticRegressionModel::from_csv(&path, &CsvOptions::new("k")).unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::NotANumber);
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3:2: missing value (\"NA\") in column \"b\"; --missing drop leaves such rows out",
            path.display()
        )
    );
    let path_empty = temp_csv("missing_empty.csv", "a,b,k\n1,2,no\n2,,yes\n");
    assert!(message(&path_empty, &CsvOptions::new("k")).ends_with(
        ":3:2: missing value (an empty cell) in column \"b\"; --missing drop leaves such rows out"
    ));
    let mut options = CsvOptions::new("k");
    options.missing = Missing::Drop;
    options.standardize = false;
    let model = LogisticRegressionModel::from_csv(&path, &options).unwrap();
    // Lines 3 (NA), 5 (empty), 6 (empty label), 7 (NA label) are left out.
    assert_eq!(model.len(), 4);
    assert_eq!(model.data_description().dropped_rows, [3, 5, 6, 7]);
    assert_eq!(model.data_description().rows_read, 8);
    assert_eq!(model.labels(), [0.0, 0.0, 1.0, 0.0]);
    assert_eq!(model.design_row(2), [1.0, 7.0, 5.0]);
    // Every row missing: an error, not an empty model.
    let all = temp_csv("all_missing.csv", "a,k\nNA,0\n,1\n");
    assert!(
        message(&all, &options)
            .ends_with("every one of the 2 data rows has a missing value (--missing drop)")
    );
}

#[test]
fn label_words_ignore_case() {
    let path = temp_csv("case.csv", "a,k\n1,Yes\n2,no\n3,YES\n4,No\n5,yes\n");
    let model = LogisticRegressionModel::from_csv(&path, &CsvOptions::new("k")).unwrap();
    assert_eq!(model.labels(), [1.0, 0.0, 1.0, 0.0, 1.0]);
    assert_eq!(model.label_mapping().to_string(), "\"no\" → 0, \"Yes\" → 1");
    // A third word is still a third class.
    let path = temp_csv("case3.csv", "a,k\n1,Yes\n2,no\n3,maybe\n");
    assert!(message(&path, &CsvOptions::new("k")).ends_with(
        ":4:2: column \"k\" has more than two distinct labels (\"Yes\", \"no\", \"maybe\", …); \
         logistic regression needs two classes"
    ));
}

#[test]
fn duplicate_headers_are_refused() {
    let path = temp_csv("dup.csv", "a,b,a,k\n1,2,3,0\n4,5,6,1\n");
    let e = LogisticRegressionModel::from_csv(&path, &CsvOptions::new("k")).unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Format);
    assert_eq!(
        e.to_string(),
        format!(
            "{}:1:3: duplicate column name \"a\" (also column 1): every column needs its own name",
            path.display()
        )
    );
}

#[test]
fn non_finite_cells_are_located() {
    for (cell, column) in [("inf", 1), ("NaN", 1), ("-Infinity", 1), ("1e999", 1)] {
        let path = temp_csv("nonfinite.csv", &format!("x,k\n1,0\n{cell},1\n3,0\n"));
        assert_eq!(
            message(&path, &CsvOptions::new("k")),
            format!(
                "{}:3:{column}: cell \"{cell}\" in column \"x\" is not a finite number",
                path.display()
            )
        );
    }
    let path = temp_csv("nonfinite_label.csv", "x,k\n1,0\n2,inf\n");
    assert_eq!(
        message(&path, &CsvOptions::new("k")),
        format!(
            "{}:3:2: label \"inf\" in column \"k\" is not finite",
            path.display()
        )
    );
}

#[test]
fn a_fit_records_its_data_and_maps_back_to_the_original_scale() {
    let text = "x;y\n1;a\n2;b\n";
    let path = temp_csv("hash.csv", text);
    let mut options = CsvOptions::new("y");
    options.separator = Separator::Char(';');
    let model = LogisticRegressionModel::from_csv(&path, &options).unwrap();
    // `printf 'x;y\n1;a\n2;b\n' | sha256sum`
    assert_eq!(
        model.data_description().sha256.as_deref(),
        Some("6c041d43a5be8f3fb474863c5712045138bcffcfcf65304f9523264b49d9307a")
    );
    assert_eq!(model.output_names(), ["(intercept)", "x"]);

    let path = temp_csv(
        "scale.csv",
        "age,dose,k\n30,1.5,1\n50,2.0,0\n40,2.5,1\n36,4.2,1\n29,3.0,0\n",
    );
    let model = LogisticRegressionModel::from_csv(&path, &CsvOptions::new("k")).unwrap();
    let json = model.description().unwrap();
    let sd = json["standardization"]["sd"].as_array().unwrap();
    let mean = json["standardization"]["mean"].as_array().unwrap();
    assert_eq!(mean[0].as_f64().unwrap(), 37.0);
    // Deviations -7, 13, 3, -1, -8: sum of squares 292, / (5 − 1) = 73.
    assert!((sd[0].as_f64().unwrap() - 73.0f64.sqrt()).abs() < 1e-12);
    assert_eq!(json["covariates"], serde_json::json!(["age", "dose"]));
    assert_eq!(json["label"]["column"], "k");
    assert_eq!(json["prior"]["variance"], 100.0);
    // β = A·w gives the same linear predictor on the raw covariates as w on
    // the standardised ones, for every row.
    let scale = model.original_scale().unwrap();
    assert_eq!(scale.names, ["(intercept)", "age", "dose"]);
    let raw = [
        [30.0, 1.5],
        [50.0, 2.0],
        [40.0, 2.5],
        [36.0, 4.2],
        [29.0, 3.0],
    ];
    let w = [0.3, -1.2, 0.7];
    let beta = scale.apply(&w);
    for (n, x) in raw.iter().enumerate() {
        let standardised: f64 = model.design_row(n).iter().zip(&w).map(|(a, b)| a * b).sum();
        let original = beta[0] + beta[1] * x[0] + beta[2] * x[1];
        assert!((standardised - original).abs() < 1e-12, "row {n}");
    }
    // Without standardisation there is nothing to map back.
    let mut options = CsvOptions::new("k");
    options.standardize = false;
    let model = LogisticRegressionModel::from_csv(&path, &options).unwrap();
    assert!(model.original_scale().is_none());
}
