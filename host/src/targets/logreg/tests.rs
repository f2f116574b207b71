//! Logistic regression: dimensions, preprocessing, labels, gradients,
//! minibatch unbiasedness and every error of the CSV path.

use super::*;
use crate::input::InputErrorKind;
use crate::model::{Model, ModelRng};
use crate::targets::testing::{gradient_error, random_point, shared_data};
use rand_core::SeedableRng;
use std::path::{Path, PathBuf};

/// `logreg/` of the shared data folder, or `None` (the test skips, saying so).
fn logreg_dir(test: &str) -> Option<PathBuf> {
    shared_data(test).map(|d| d.join("logreg"))
}

/// The data set: built in (German, Australian, Heart), else read from `dir`
/// (the shared `logreg/`); `None` when that is missing, so a test runs on the
/// built-in sets and skips the others (its [`logreg_dir`] call said so).
fn load(dataset: LogregDataset, dir: Option<&Path>) -> Option<LogisticRegressionModel> {
    if let Some(model) = LogisticRegressionModel::builtin(dataset) {
        return Some(model);
    }
    Some(LogisticRegressionModel::from_dataset(dataset, dir?).unwrap())
}

/// Writes `text` to a fresh file in the temporary directory.
fn temp_csv(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("qnmc-logreg-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn dimensions_and_sizes_match_the_papers() {
    // Zhang & Sutton (2011) Table 2 lists D and N for the five data sets.
    let dir = logreg_dir("dimensions_and_sizes_match_the_papers (Pima, Ripley)");
    for dataset in LogregDataset::ALL {
        let Some(model) = load(dataset, dir.as_deref()) else {
            continue;
        };
        assert_eq!(model.dimension(), dataset.dimension(), "{dataset}");
        assert_eq!(model.len(), dataset.observations(), "{dataset}");
        assert_eq!(model.name(), dataset.target_name());
        assert!(model.has_intercept());
        assert_eq!(model.output_names().len(), dataset.dimension());
        assert_eq!(builtin_or_none(dataset).is_some(), dataset.is_builtin());
    }
    assert_eq!(
        [25, 15, 14, 8, 7],
        [
            LogregDataset::German,
            LogregDataset::Australian,
            LogregDataset::Heart,
            LogregDataset::Pima,
            LogregDataset::Ripley
        ]
        .map(|d| d.dimension())
    );
}

fn builtin_or_none(dataset: LogregDataset) -> Option<LogisticRegressionModel> {
    LogisticRegressionModel::builtin(dataset)
}

#[test]
fn label_counts_match_the_data_sets_documentation() {
    // Class sizes as documented with the data: German 700 good / 300 bad,
    // Australian 383 / 307, Heart 150 absent / 120 present, Pima (tr + te)
    // 355 No / 177 Yes, Ripley's synth.tr 125 / 125.
    let expected = [
        (LogregDataset::German, 300),
        (LogregDataset::Australian, 307),
        (LogregDataset::Heart, 120),
        (LogregDataset::Pima, 177),
        (LogregDataset::Ripley, 125),
    ];
    let dir = logreg_dir("label_counts_match_the_data_sets_documentation (Pima, Ripley)");
    for (dataset, positives) in expected {
        if let Some(model) = load(dataset, dir.as_deref()) {
            assert_eq!(model.positives(), positives, "{dataset}");
        }
    }
    if let Some(pima) = load(LogregDataset::Pima, dir.as_deref()) {
        assert_eq!(
            (
                pima.label_mapping().zero.as_str(),
                pima.label_mapping().one.as_str()
            ),
            ("No", "Yes")
        );
    }
    let german = load(LogregDataset::German, None).expect("built in");
    assert_eq!(
        (
            german.label_mapping().zero.as_str(),
            german.label_mapping().one.as_str()
        ),
        ("1", "2")
    );
}

#[test]
fn covariates_are_standardised_with_n_minus_1() {
    let dir = logreg_dir("covariates_are_standardised_with_n_minus_1 (Pima, Ripley)");
    for dataset in LogregDataset::ALL {
        let Some(model) = load(dataset, dir.as_deref()) else {
            continue;
        };
        let n = model.len() as f64;
        for j in 0..model.dimension() {
            let column: Vec<f64> = (0..model.len()).map(|r| model.design_row(r)[j]).collect();
            let mean = column.iter().sum::<f64>() / n;
            if j == 0 {
                assert!(column.iter().all(|&x| x == 1.0), "{dataset}: intercept");
                continue;
            }
            let var = column.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
            assert!(mean.abs() < 1e-12, "{dataset} column {j}: mean {mean}");
            assert!((var - 1.0).abs() < 1e-12, "{dataset} column {j}: var {var}");
        }
    }
}

#[test]
fn ripley_is_expanded_then_standardised() {
    let test = "ripley_is_expanded_then_standardised";
    let Some(dir) = logreg_dir(test) else {
        return;
    };
    let model = LogisticRegressionModel::from_dataset(LogregDataset::Ripley, &dir).unwrap();
    assert_eq!(
        model.column_names(),
        ["(intercept)", "xs", "ys", "xs^2", "ys^2", "xs^3", "ys^3"]
    );
    // Column x₁² must be the standardised square of the raw xs, which is
    // not the square of the standardised xs.
    let table = crate::input::read_table(
        dir.join("synth.tr.csv"),
        crate::input::TableFormat::CSV_WITH_HEADER,
    )
    .unwrap();
    let xs = table
        .numeric_column(table.column_index("xs").unwrap())
        .unwrap();
    let squares: Vec<f64> = xs.iter().map(|x| x * x).collect();
    let n = squares.len() as f64;
    let mean = squares.iter().sum::<f64>() / n;
    let sd = (squares.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    for (r, s) in squares.iter().enumerate() {
        assert!((model.design_row(r)[3] - (s - mean) / sd).abs() < 1e-12);
    }
    let standardised_x = model.design_row(0)[1];
    assert!((standardised_x.powi(2) - model.design_row(0)[3]).abs() > 1e-3);
}

#[test]
fn runtime_and_const_generic_models_agree_on_german() {
    let runtime = LogisticRegressionModel::builtin(LogregDataset::German).unwrap();
    let fixed = crate::targets::LogisticRegression::<25, 1>::german_credit();
    for seed in 0..3 {
        let w = random_point(25, 0.3, seed);
        let mut g1 = vec![0.0; 25];
        let mut g2 = [0.0; 25];
        let u1 = runtime.potential_and_gradient(&w, &mut g1);
        let u2 = qnmc::Potential::potential_and_gradient(
            &fixed,
            &w.clone().try_into().unwrap(),
            &mut g2,
        );
        assert_eq!(u1, u2);
        assert_eq!(g1, g2);
    }
}

#[test]
fn gradient_matches_central_differences() {
    // h = 1e-5: truncation ~h²·|U‴| and rounding ~1e-16·|U|/h (|U| ≲ 1e4)
    // are both far below the bound 1e-6 relative to max(1, ‖∇U‖∞).
    let dir = logreg_dir("gradient_matches_central_differences (Pima, Ripley)");
    for dataset in LogregDataset::ALL {
        let Some(model) = load(dataset, dir.as_deref()) else {
            continue;
        };
        for seed in 0..4 {
            let w = random_point(model.dimension(), 0.5, 100 + seed);
            let err = gradient_error(&model, &w, 1e-5);
            assert!(err < 1e-6, "{dataset} seed {seed}: relative error {err}");
        }
    }
}

#[test]
fn minibatch_gradient_is_unbiased() {
    // K estimates with B = 10: each coordinate's average must lie within 5
    // Monte-Carlo standard errors (sd of the estimates / √K) of the full
    // gradient; 5 MCSE over 25 coordinates fails by chance with p < 2e-5.
    let model = LogisticRegressionModel::builtin(LogregDataset::German).unwrap();
    let d = model.dimension();
    let w = random_point(d, 0.2, 7);
    let mut full = vec![0.0; d];
    let _ = model.potential_and_gradient(&w, &mut full);
    let k = 4000;
    let mut rng = ModelRng::seed_from_u64(11);
    let mut sum = vec![0.0; d];
    let mut sum_sq = vec![0.0; d];
    let mut g = vec![0.0; d];
    for _ in 0..k {
        model.stochastic_gradient(&w, 10, &mut rng, &mut g);
        for i in 0..d {
            sum[i] += g[i];
            sum_sq[i] += g[i] * g[i];
        }
    }
    let kf = k as f64;
    for i in 0..d {
        let mean = sum[i] / kf;
        let var = (sum_sq[i] / kf - mean * mean) * kf / (kf - 1.0);
        let mcse = (var / kf).sqrt();
        assert!(mcse > 0.0);
        assert!(
            (mean - full[i]).abs() < 5.0 * mcse,
            "coordinate {i}: average {mean}, exact {}, mcse {mcse}",
            full[i]
        );
    }
    // Batch size 0 is the exact gradient.
    model.stochastic_gradient(&w, 0, &mut rng, &mut g);
    assert_eq!(g, full);
}

#[test]
fn csv_words_numbers_and_options() {
    let path = temp_csv(
        "words.csv",
        "rownames,a,b,flag\n1,1,10,true\n2,2,30,false\n3,4,20,true\n",
    );
    let model = LogisticRegressionModel::from_csv(&path, &CsvOptions::new("flag")).unwrap();
    assert_eq!(model.column_names(), ["(intercept)", "a", "b"]);
    assert_eq!(model.labels(), [1.0, 0.0, 1.0]);
    assert_eq!(
        model.label_mapping().to_string(),
        "\"false\" → 0, \"true\" → 1"
    );
    assert_eq!(model.name(), "logreg-csv");
    let raw = CsvOptions {
        standardize: false,
        intercept: false,
        prior_variance: 4.0,
        ..CsvOptions::new("flag")
    };
    let model = LogisticRegressionModel::from_csv(&path, &raw).unwrap();
    assert_eq!(model.dimension(), 2);
    assert_eq!(model.design_row(2), [4.0, 20.0]);
    assert_eq!(model.prior_variance(), 4.0);
    assert!(!model.has_intercept());

    let path = temp_csv("numbers.csv", "x,y\n0.5,-1\n1.5,3\n2.5,-1\n");
    let model = LogisticRegressionModel::from_csv(&path, &CsvOptions::new("y")).unwrap();
    assert_eq!(model.labels(), [0.0, 1.0, 0.0]);
    assert_eq!(model.label_mapping().to_string(), "\"-1\" → 0, \"3\" → 1");
}

#[test]
fn csv_with_only_zeros_is_accepted() {
    let path = temp_csv("zeros.csv", "x,y\n0.5,0\n1.5,0\n");
    let model = LogisticRegressionModel::from_csv(&path, &CsvOptions::new("y")).unwrap();
    assert_eq!(model.positives(), 0);
}

#[test]
fn more_than_two_labels_is_an_error_naming_file_and_column() {
    let path = temp_csv("three.csv", "x,kind\n1,a\n2,b\n3,a\n4,c\n");
    let e = LogisticRegressionModel::from_csv(&path, &CsvOptions::new("kind")).unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Label);
    assert_eq!(
        e.to_string(),
        format!(
            "{}:5:2: column \"kind\" has more than two distinct labels (\"a\", \"b\", \"c\", …); \
             logistic regression needs two classes",
            path.display()
        )
    );
    let path = temp_csv("three_numbers.csv", "x,k\n1,1\n2,2\n3,3\n");
    let e = LogisticRegressionModel::from_csv(&path, &CsvOptions::new("k")).unwrap_err();
    assert_eq!(e.line(), Some(4));
}

#[test]
fn single_or_empty_label_is_an_error() {
    let path = temp_csv("one.csv", "x,k\n1,yes\n2,yes\n");
    let e = LogisticRegressionModel::from_csv(&path, &CsvOptions::new("k")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: column \"k\" has a single label \"yes\": logistic regression needs two classes \
             (or 0/1 labels)",
            path.display()
        )
    );
    let path = temp_csv("empty_label.csv", "x,k\n1,yes\n2,\n");
    let e = LogisticRegressionModel::from_csv(&path, &CsvOptions::new("k")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3:2: empty label in column \"k\": a missing value (an empty cell); \
             --missing drop leaves such rows out",
            path.display()
        )
    );
}

#[test]
fn constant_covariate_cannot_be_standardised() {
    let path = temp_csv("constant.csv", "x,c,k\n1,5,0\n2,5,1\n");
    let e = LogisticRegressionModel::from_csv(&path, &CsvOptions::new("k")).unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Format);
    assert!(
        e.to_string()
            .contains("covariate \"c\" has standard deviation 0"),
        "{e}"
    );
    let mut options = CsvOptions::new("k");
    options.standardize = false;
    assert!(LogisticRegressionModel::from_csv(&path, &options).is_ok());
}

#[test]
fn non_numeric_covariate_and_bad_prior() {
    let path = temp_csv("text.csv", "x,k\n1,0\nabc,1\n");
    let e = LogisticRegressionModel::from_csv(&path, &CsvOptions::new("k")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3:1: cell \"abc\" in column \"x\" is not a number",
            path.display()
        )
    );
    let path = temp_csv("prior.csv", "x,k\n1,0\n2,1\n");
    let mut options = CsvOptions::new("k");
    options.prior_variance = -1.0;
    let e = LogisticRegressionModel::from_csv(&path, &options).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("the prior variance must be positive and finite, not -1")
    );
    let path = temp_csv("nothing.csv", "k\n0\n1\n");
    let mut options = CsvOptions::new("k");
    options.intercept = false;
    let e = LogisticRegressionModel::from_csv(&path, &options).unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Dimension);
}

#[test]
fn missing_data_directory_names_the_file() {
    let dir = std::env::temp_dir().join("qnmc-no-such-dir");
    let e = LogisticRegressionModel::from_dataset(LogregDataset::Pima, &dir).unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Io);
    assert!(e.to_string().contains("Pima.tr.csv"), "{e}");
    let e = LogisticRegressionModel::from_dataset(LogregDataset::Ripley, &dir).unwrap_err();
    assert!(e.to_string().contains("synth.tr.csv"), "{e}");
    // The built-in ones never look at the directory.
    assert!(LogisticRegressionModel::from_dataset(LogregDataset::Heart, &dir).is_ok());
}

#[test]
fn dataset_names_round_trip() {
    for d in LogregDataset::ALL {
        assert_eq!(d.name().parse::<LogregDataset>().unwrap(), d);
        assert_eq!(d.target_name().parse::<LogregDataset>().unwrap(), d);
    }
    let e = "iris".parse::<LogregDataset>().unwrap_err();
    assert!(
        e.to_string()
            .contains("unknown logistic-regression data set \"iris\"")
    );
}
