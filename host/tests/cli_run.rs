//! `qnmc run` writes one CmdStan CSV per chain, summary.json and summary.txt,
//! and they parse back into the numbers of the run.

use std::path::PathBuf;
use std::process::Command;

use qnmc_host::output::{read_cmdstan_csv, run_draws_from_cmdstan};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("qnmc-cli-run-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn run_writes_csvs_and_a_summary_that_parse() {
    let dir = scratch("files");
    let out = Command::new(env!("CARGO_BIN_EXE_qnmc"))
        .args([
            "run",
            "--sampler",
            "qnhmc",
            "--target",
            "linear-gaussian",
            "--dimension",
            "9",
            "--chains",
            "3",
            "--warmup",
            "200",
            "--draws",
            "150",
            "--thin",
            "2",
            "--quiet",
            "--output",
            "out",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("R_hat"),
        "the summary table is printed:\n{stdout}"
    );

    let mut chains = Vec::new();
    for k in 1..=3 {
        let text = std::fs::read_to_string(dir.join(format!("out/chain_{k}.csv"))).unwrap();
        // Dimension 9 runs padded to the compile-time 10: the header says so
        // and the auxiliary coordinate is not in the output.
        assert!(
            text.contains("padding = run in dimension 10: 1 auxiliary"),
            "{text}"
        );
        let draws = read_cmdstan_csv(&text).unwrap();
        assert_eq!(draws.rows(), 150);
        assert_eq!(
            draws.column_names.len(),
            5 + 9,
            "lp__ and 4 sampler columns, then 9 quantities: {:?}",
            draws.column_names
        );
        assert!(draws.column("lp__").unwrap().iter().all(|v| v.is_finite()));
        chains.push(draws);
    }
    assert!(!dir.join("out/chain_4.csv").exists());
    let run = run_draws_from_cmdstan(&chains).unwrap();
    assert_eq!(run.chains.len(), 3);
    assert_eq!(run.names.len(), 9);

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/summary.json")).unwrap())
            .unwrap();
    assert!(json.is_object(), "{json}");
    let text = json.to_string();
    assert!(
        text.contains("qnhmc") && text.contains("linear-gaussian"),
        "{text}"
    );
    assert!(dir.join("out/summary.txt").exists());
    // Trace, autocorrelation and density charts of the first quantities.
    for stem in [
        "trace_theta_1",
        "autocorrelation_theta_1",
        "density_theta_1",
    ] {
        for ext in ["svg", "png"] {
            let path = dir.join(format!("out/{stem}.{ext}"));
            assert!(path.exists(), "{} missing", path.display());
        }
    }
}

/// `--sghmc-update` reaches the run: the CSV header names the order, the
/// default being position-first.
#[test]
fn sghmc_update_order_is_in_the_csv_header() {
    let dir = scratch("sghmc-update");
    for (extra, expected) in [
        (None, "update = position-first"),
        (Some("recipe-euler"), "update = recipe-euler"),
    ] {
        let mut args = vec![
            "run",
            "--sampler",
            "sghmc",
            "--target",
            "gaussian",
            "--dimension",
            "2",
            "--chains",
            "1",
            "--warmup",
            "10",
            "--draws",
            "20",
            "--quiet",
            "--force",
            "--output",
            "out",
        ];
        if let Some(order) = extra {
            args.extend(["--sghmc-update", order]);
        }
        let out = Command::new(env!("CARGO_BIN_EXE_qnmc"))
            .args(&args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(dir.join("out/chain_1.csv")).unwrap();
        assert!(text.contains(expected), "{expected} not in:\n{text}");
    }
}

#[test]
fn reproduce_writes_the_report_and_its_charts() {
    let dir = scratch("reproduce");
    let out = Command::new(env!("CARGO_BIN_EXE_qnmc"))
        .args(["reproduce", "amagold-fig1", "--quick", "--output", "out"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = std::fs::read_to_string(dir.join("out/amagold-fig1.md")).unwrap();
    assert!(report.starts_with('#'), "{report}");
    let svgs = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "svg")
        })
        .count();
    assert!(svgs >= 1, "the reproduction's charts are drawn");
}
