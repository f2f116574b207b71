//! `qnmc run` stopped by SIGINT or SIGTERM: every chain ends at its next
//! iteration, the kept draws are written as valid CmdStan CSV, the folder
//! stays marked INCOMPLETE with the reason, the exit code is the signal's,
//! and the same command does not delete the chain files without --force.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::Duration;

use qnmc_host::output::{SAMPLER_COLUMNS, read_cmdstan_csv};

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("qnmc-cli-interrupt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn qnmc(args: &[&str]) -> Command {
    common::command(args)
}

/// Sends `signal` (`INT`, `TERM`) to `child` after `after`, and waits for
/// it to end. The run's settings make it far longer than `after`, so the
/// signal finds it in the phase the test wants (its warm-up of D = 10 HMC
/// takes milliseconds; a shell-free `kill` delivers the signal).
fn signal_after(mut child: Child, signal: &str, after: Duration) -> Output {
    std::thread::sleep(after);
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run ended before the signal"
    );
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let waited = std::thread::spawn(move || child.wait_with_output().unwrap());
    waited.join().unwrap()
}

/// The CmdStan CSV of `chain` in `folder`, parsed, with its `num_samples`.
fn chain_file(folder: &Path, chain: usize) -> (qnmc_host::output::CmdStanDraws, usize) {
    let text = std::fs::read_to_string(folder.join(format!("chain_{chain}.csv"))).unwrap();
    let file = read_cmdstan_csv(&text).unwrap();
    let num_samples = file.metadata("num_samples").unwrap().parse().unwrap();
    assert_eq!(file.rows(), num_samples, "num_samples is the rows written");
    (file, num_samples)
}

const RUN: [&str; 12] = [
    "run",
    "--sampler",
    "hmc",
    "--target",
    "gaussian",
    "--dimension",
    "10",
    "--chains",
    "2",
    "--quiet",
    "--seed",
    "3",
];

#[test]
fn sigint_while_sampling_keeps_the_draws_and_the_folder() {
    let dir = scratch("sampling");
    let out = dir.join("out");
    let mut args = RUN.to_vec();
    let out_text = out.to_str().unwrap();
    args.extend([
        "--warmup", "100", "--draws", "2000000", "--output", out_text,
    ]);
    let child = qnmc(&args).spawn().unwrap();
    let output = signal_after(child, "INT", Duration::from_secs(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains(
            "interrupted: ending every chain at its next draw; press Ctrl-C again to quit at once"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("error: interrupted by SIGINT: ") && stderr.contains(out_text),
        "{stderr}"
    );
    // The summary of the draws so far was printed and written.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("x[10]"), "{stdout}");
    assert!(out.join("summary.json").exists() && out.join("summary.txt").exists());
    for chain in 1..=2 {
        let (file, rows) = chain_file(&out, chain);
        assert!(rows >= 1, "chain {chain} kept a draw");
        assert!(rows < 2_000_000);
        // Every sampler column HMC writes (no tree depth), then x.1 … x.10.
        let expected = SAMPLER_COLUMNS.len() - 1 + 10;
        assert_eq!(file.column_names.len(), expected, "{:?}", file.column_names);
        assert!(file.column("x.10").unwrap().iter().all(|v| v.is_finite()));
        assert!(
            file.comments
                .iter()
                .any(|c| c.contains("interrupted = interrupted by SIGINT after ")),
            "{:?}",
            file.comments
        );
    }
    let marker = std::fs::read_to_string(out.join("INCOMPLETE")).unwrap();
    assert!(
        marker.contains("\nreason: interrupted by SIGINT after ") && marker.contains("\nstopped: "),
        "{marker}"
    );
    // The same command again: refused, naming the folder and --force; the
    // chain files stay as they were.
    let before = std::fs::read(out.join("chain_1.csv")).unwrap();
    let again = qnmc(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(out_text) && stderr.contains("--force") && stderr.contains("chain_1.csv"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(out.join("chain_1.csv")).unwrap(), before);
    assert!(out.join("INCOMPLETE").exists());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn sigint_in_warmup_writes_files_without_rows() {
    let dir = scratch("warmup");
    let out = dir.join("out");
    let mut args = RUN.to_vec();
    args.extend([
        "--warmup",
        "100000000",
        "--draws",
        "10",
        "--output",
        out.to_str().unwrap(),
    ]);
    let child = qnmc(&args).spawn().unwrap();
    let output = signal_after(child, "INT", Duration::from_secs(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("before any chain kept a draw: no summary or diagnostics"),
        "{stderr}"
    );
    for chain in 1..=2 {
        let (file, rows) = chain_file(&out, chain);
        assert_eq!(rows, 0);
        assert_eq!(file.column_names[0], "lp__");
        let warmup: u64 = file.metadata("num_warmup").unwrap().parse().unwrap();
        assert!(warmup > 0 && warmup < 100_000_000, "{warmup}");
    }
    assert!(!out.join("summary.json").exists());
    let marker = std::fs::read_to_string(out.join("INCOMPLETE")).unwrap();
    assert!(marker.contains("\nreason: interrupted by SIGINT after "));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn sigterm_exits_with_143() {
    let mut args = RUN.to_vec();
    args.extend(["--warmup", "100", "--draws", "2000000"]);
    let child = qnmc(&args).spawn().unwrap();
    let output = signal_after(child, "TERM", Duration::from_secs(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(143), "{stderr}");
    assert!(
        stderr.contains("terminated: ending every chain at its next draw")
            && stderr.contains("error: interrupted by SIGTERM: ")
            && stderr.contains("the draws so far were not written (no --output)"),
        "{stderr}"
    );
}

/// A run killed outright (SIGKILL: no handler runs) leaves the draws its
/// chains had written: each chain's file grows while the chain draws, and
/// reads as CmdStan CSV up to its last whole line. The folder
/// stays marked INCOMPLETE, and the next run into it without --force is
/// refused, naming the chain files.
#[test]
fn a_killed_run_leaves_the_draws_written_so_far() {
    let dir = scratch("killed");
    let out = dir.join("out");
    let mut args = RUN.to_vec();
    let out_text = out.to_str().unwrap();
    args.extend([
        "--warmup", "100", "--draws", "2000000", "--output", out_text,
    ]);
    let child = qnmc(&args).spawn().unwrap();
    let output = signal_after(child, "KILL", Duration::from_secs(2));
    assert_eq!(output.status.code(), None, "killed by a signal");
    for chain in 1..=2 {
        let text = std::fs::read_to_string(out.join(format!("chain_{chain}.csv"))).unwrap();
        // A kill inside a write may cut its last line short (Linux stops
        // copying a write at a page boundary once the process has a fatal
        // signal); every line before is whole.
        let whole = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
        assert!(
            text.len() - whole.len() < 4096,
            "chain {chain}: one cut line at most"
        );
        let file = read_cmdstan_csv(whole).unwrap();
        assert!(file.rows() >= 1, "chain {chain} wrote its first draws");
        assert!(file.rows() < 2_000_000);
        assert!(file.column("x.10").unwrap().iter().all(|v| v.is_finite()));
        assert_eq!(file.metadata("num_samples"), Some("2000000"));
    }
    assert!(out.join("INCOMPLETE").exists());
    let again = qnmc(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("chain_1.csv"), "{stderr}");
    std::fs::remove_dir_all(dir).unwrap();
}
