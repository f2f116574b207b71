//! `qnmc run` writes one CmdStan CSV per chain, summary.json and summary.txt,
//! and they parse back into the numbers of the run.

use std::path::PathBuf;
use std::process::Command;

use qnmc_host::output::{CmdStanDraws, read_cmdstan_csv, run_draws_from_cmdstan};
use serde_json::Value;

mod common;

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
        // Dimension 9 runs in the compile-time 10, QNHMC moving the model's
        // 9 coordinates only: the header says so and the tenth coordinate is
        // not in the output.
        assert!(
            text.contains("storage = compiled size 10; qnhmc moves the model's 9 coordinates only"),
            "{text}"
        );
        let draws = read_cmdstan_csv(&text).unwrap();
        assert_eq!(draws.rows(), 150);
        assert_eq!(
            draws.column_names[..6],
            [
                "lp__",
                "accept_stat__",
                "stepsize__",
                "n_leapfrog__",
                "divergent__",
                "energy__"
            ],
            "CmdStan's sampler columns without treedepth__ (QNHMC builds no tree; it has a Hamiltonian, so energy__)"
        );
        assert_eq!(
            draws.column_names.len(),
            6 + 9,
            "6 sampler columns, then 9 quantities: {:?}",
            draws.column_names
        );
        // energy__ = U + K ≥ U = −lp__.
        let lp = draws.column("lp__").unwrap();
        let energy = draws.column("energy__").unwrap();
        assert!(lp.iter().zip(&energy).all(|(l, h)| h + l >= -1e-9));
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
    // No charts unless asked; the last line says how to draw them, and
    // `qnmc plot` draws trace, autocorrelation, density and rank charts of
    // lp__ and of the slowest-mixing quantities: at least one theta.
    let charts_in = |folder: &std::path::Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".svg") || n.ends_with(".png"))
            .collect();
        names.sort();
        names
    };
    assert!(charts_in(&dir.join("out")).is_empty());
    assert_eq!(
        stderr.lines().last(),
        Some("draw the charts with: qnmc plot out"),
        "{stderr}"
    );
    assert_eq!(json["charts"], Value::Array(Vec::new()));
    let plotted = Command::new(env!("CARGO_BIN_EXE_qnmc"))
        .args(["plot", "out"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let plot_err = String::from_utf8_lossy(&plotted.stderr);
    assert_eq!(plotted.status.code(), Some(0), "{plot_err}");
    for kind in ["trace", "autocorrelation", "density", "rank"] {
        for ext in ["svg", "png"] {
            let path = dir.join(format!("out/{kind}_lp.{ext}"));
            assert!(path.exists(), "{} missing", path.display());
            let any_theta =
                (1..=9).any(|i| dir.join(format!("out/{kind}_theta_{i}.{ext}")).exists());
            assert!(any_theta, "no {kind} chart of a theta ({ext})");
        }
    }
    // summary.json and the manifest list exactly the charts drawn.
    let charts = charts_in(&dir.join("out"));
    assert_eq!(charts.len(), 2 * 4 * 5, "{charts:?}");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/summary.json")).unwrap())
            .unwrap();
    let mut listed: Vec<String> = json["charts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    listed.sort();
    assert_eq!(listed, charts);
    let manifest = std::fs::read_to_string(dir.join("out/qnmc-files.txt")).unwrap();
    assert!(manifest.contains("status: complete"), "{manifest}");
    for chart in &charts {
        assert!(manifest.contains(&format!("file: {chart}\n")), "{chart}");
    }
}

/// `qnmc plot` draws the same chart files `qnmc run --plot` draws, byte for
/// byte, and refuses a folder that is not a run's output or a name the run
/// does not have.
#[test]
fn plot_draws_the_charts_run_would_have_drawn() {
    let dir = scratch("plot");
    let qnmc = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_qnmc"))
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--target",
            "gaussian",
            "--dimension",
            "3",
            "--chains",
            "2",
            "--warmup",
            "100",
            "--draws",
            "200",
            "--quiet",
        ];
        args.extend_from_slice(extra);
        qnmc(&args)
    };
    let (code, err) = run(&["--output", "drawn", "--plot", "x[2],lp__"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("qnmc plot"), "{err}");
    let (code, err) = run(&["--output", "later"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, err) = qnmc(&["plot", "later", "--plot", "x[2],lp__"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("wrote 16 chart files into later"), "{err}");
    let mut compared = 0;
    for entry in std::fs::read_dir(dir.join("drawn")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".svg") || name.ends_with(".png") || name == "summary.json" {
            let drawn = std::fs::read(dir.join("drawn").join(&name)).unwrap();
            let later = std::fs::read(dir.join("later").join(&name)).unwrap();
            if name == "summary.json" {
                // The same run but for its timings: the charts' lists agree.
                let charts = |bytes: &[u8]| {
                    serde_json::from_slice::<Value>(bytes).unwrap()["charts"].clone()
                };
                assert_eq!(charts(&drawn), charts(&later));
            } else {
                assert!(drawn == later, "{name} differs");
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 16);

    // A folder without a run's files, one that does not exist, a name the
    // run does not have: exit code 2 and a message that says which.
    std::fs::create_dir_all(dir.join("mine")).unwrap();
    std::fs::write(dir.join("mine/notes.txt"), "mine").unwrap();
    let (code, err) = qnmc(&["plot", "mine"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "error: mine is not the output folder of a finished qnmc run: it has no qnmc-files.txt"
        ),
        "{err}"
    );
    let (code, err) = qnmc(&["plot", "nowhere"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("nowhere is not the output folder"), "{err}");
    let (code, err) = qnmc(&["plot", "later", "--plot", "y"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no quantity named `y`"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
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

/// Chain `k`'s CSV in `dir/fit`, parsed.
fn chain_csv(dir: &std::path::Path, fit: &str, k: usize) -> CmdStanDraws {
    let text = std::fs::read_to_string(dir.join(fit).join(format!("chain_{k}.csv"))).unwrap();
    read_cmdstan_csv(&text).unwrap()
}

/// Each chain's warm-up draws as `summary.json` reports them.
fn warmup_draws(dir: &std::path::Path, fit: &str) -> Vec<u64> {
    let text = std::fs::read_to_string(dir.join(fit).join("summary.json")).unwrap();
    let json: Value = serde_json::from_str(&text).unwrap();
    json["sampler_stats"]["per_chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["warmup_draws"].as_u64().unwrap())
        .collect()
}

/// The CmdStan header says what the warm-up did, chain by chain: a default
/// NUTS run adapts (`adapt engaged = true`) and, with `--early-end 1` (here
/// 175, 500 and 275 draws), ends its warm-up early, each chain after its own
/// number of draws (`num_warmup`, which used to be the
/// requested 500 with `engaged = false`); the terminal names the metric and
/// each chain's warm-up draws.
#[test]
fn the_csv_header_and_the_summary_say_how_each_chain_warmed_up() {
    let dir = scratch("warmup");
    let (code, out, err) = common::qnmc(
        &[
            "run",
            "--target",
            "gaussian",
            "--dimension",
            "5",
            "--early-end",
            "1",
            "--chains",
            "3",
            "--quiet",
            "--plot",
            "none",
            "--output",
            "nuts",
        ],
        &dir,
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("target gaussian, sampler nuts (metric lbfgs): 3 chains"),
        "{out}"
    );
    let warmups = warmup_draws(&dir, "nuts");
    assert_eq!(warmups.len(), 3);
    assert!(
        warmups.iter().any(|&w| w < 500),
        "the early end shortens the warm-up on this easy target: {warmups:?}"
    );
    for (k, &w) in (1..=3).zip(&warmups) {
        let csv = chain_csv(&dir, "nuts", k);
        assert_eq!(csv.metadata("num_warmup"), Some(w.to_string().as_str()));
        assert_eq!(csv.metadata("engaged"), Some("true"));
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("chain {k}: ")))
            .unwrap_or_else(|| panic!("no chain {k} line in\n{out}"));
        assert!(line.contains(&format!("s warm-up ({w} draws)")), "{line}");
    }

    // Fixed step sizes adapt nothing: NUTS then runs no warm-up at all,
    // HMC its --warmup as burn-in; with an adapted step size HMC's header
    // says so.
    for (fit, sampler, step, engaged, warmup) in [
        ("nuts-fixed", "nuts", Some("0.5"), "false", 0),
        ("hmc-fixed", "hmc", Some("0.5"), "false", 100),
        ("hmc-adapted", "hmc", None, "true", 100),
    ] {
        let mut args = vec![
            "run",
            "--target",
            "gaussian",
            "--dimension",
            "2",
            "--chains",
            "2",
            "--sampler",
            sampler,
            "--draws",
            "100",
            "--quiet",
            "--plot",
            "none",
            "--output",
            fit,
        ];
        if let Some(step) = step {
            args.extend(["--step-size", step]);
        }
        if sampler == "hmc" {
            args.extend(["--warmup", "100"]);
        }
        let (code, out, err) = common::qnmc(&args, &dir);
        assert_eq!(code, 0, "{fit}: {err}");
        assert_eq!(warmup_draws(&dir, fit), [warmup; 2], "{fit}");
        for k in 1..=2 {
            let csv = chain_csv(&dir, fit, k);
            assert_eq!(csv.metadata("engaged"), Some(engaged), "{fit}");
            assert_eq!(
                csv.metadata("num_warmup"),
                Some(warmup.to_string().as_str()),
                "{fit}"
            );
        }
        assert_eq!(
            out.contains("sampler nuts (metric lbfgs)"),
            sampler == "nuts",
            "{fit}: {out}"
        );
        assert!(
            out.contains(&format!("s warm-up ({warmup} draws)")),
            "{fit}: {out}"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// `--save-warmup` (with `--thin 2` and NUTS's early end, so the chains'
/// warm-ups differ): each CSV holds ceil(num_warmup ÷ 2) warm-up rows
/// before the adaptation block, then exactly the kept rows of the same run
/// without it; the run notes (on stderr, with the other diagnostics) that
/// Python's readers need one warm-up length;
/// `qnmc check --draws-files` reads the files as kept draws only.
#[test]
fn saved_warmup_rows_precede_the_same_kept_draws() {
    let dir = scratch("save-warmup");
    let fit = |name: &str, more: &[&str]| {
        let mut args = vec![
            "run",
            "--target",
            "gaussian",
            "--dimension",
            "5",
            "--early-end",
            "1",
            "--thin",
            "2",
            "--draws",
            "300",
            "--chains",
            "3",
            "--quiet",
            "--plot",
            "none",
            "--output",
            name,
        ];
        args.extend_from_slice(more);
        let (code, _, err) = common::qnmc(&args, &dir);
        assert_eq!(code, 0, "{name}: {err}");
        err
    };
    let diagnostics = fit("saved", &["--save-warmup"]);
    fit("plain", &[]);
    let warmups = warmup_draws(&dir, "saved");
    assert!(
        warmups.iter().any(|&w| w != warmups[0]),
        "the early end should make the warm-ups differ here: {warmups:?}"
    );
    assert!(
        diagnostics.contains("note: the chains' warm-ups ran"),
        "{diagnostics}"
    );
    for (k, &w) in (1..=3).zip(&warmups) {
        let saved = chain_csv(&dir, "saved", k);
        let plain = chain_csv(&dir, "plain", k);
        assert_eq!(saved.metadata("save_warmup"), Some("true"));
        assert_eq!(plain.metadata("save_warmup"), Some("false"));
        let rows = (w as usize).div_ceil(2);
        assert_eq!(saved.warmup_rows(), rows);
        assert_eq!(saved.rows(), rows + 300);
        let kept = saved.without_warmup();
        assert_eq!(kept.column_names, plain.column_names);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&kept.values), bits(&plain.values), "chain {k}");
        // The warm-up's step size moves; the rows come before the block.
        let steps = saved.column("stepsize__").unwrap();
        assert!(steps[..rows].iter().any(|&e| e != steps[0]), "chain {k}");
        let text =
            std::fs::read_to_string(dir.join("saved").join(format!("chain_{k}.csv"))).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let header = lines.iter().position(|l| !l.starts_with('#')).unwrap();
        assert_eq!(
            lines[header + rows + 1],
            "# Adaptation terminated",
            "chain {k}"
        );
    }
    let files: Vec<String> = (1..=3)
        .map(|k| {
            dir.join("saved")
                .join(format!("chain_{k}.csv"))
                .display()
                .to_string()
        })
        .collect();
    let mut args = vec![
        "check",
        "--target",
        "gaussian",
        "--dimension",
        "5",
        "--quiet",
        "--draws-files",
    ];
    args.extend(files.iter().map(String::as_str));
    let (code, out, err) = common::qnmc(&args, &dir);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("(3 chains x 300 draws)"),
        "the check reads the kept draws only:\n{out}"
    );
}
