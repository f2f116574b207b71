//! `qnmc run --resume`: a run stopped at random points — SIGINT, SIGTERM or
//! SIGKILL, in warm-up or sampling, its continuation stopped again — leaves
//! valid CmdStan CSV of its draws in a folder marked INCOMPLETE, and
//! continued from its checkpoints ends with the chain files of the run that
//! was never stopped, byte for byte but the elapsed times, and with the
//! same summary.
#![cfg(unix)]

mod common;

use qnmc_host::output::read_cmdstan_csv;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> std::path::PathBuf {
    common::scratch("cli-resume", name)
}

fn qnmc(args: &[&str]) -> Command {
    common::command(args)
}

/// Runs `args`, sends `signal` after `after` unless the run ended first;
/// returns its output and whether the signal was sent.
fn stop_after(args: &[&str], signal: &str, after: Duration) -> (Output, bool) {
    let mut child = qnmc(args).spawn().unwrap();
    let clock = Instant::now();
    while clock.elapsed() < after {
        if child.try_wait().unwrap().is_some() {
            return (child.wait_with_output().unwrap(), false);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    (child.wait_with_output().unwrap(), sent)
}

/// A chain file without its elapsed times (the only lines a stop may
/// change).
fn without_times(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.contains(" seconds ("))
        .collect::<Vec<_>>()
        .join("\n")
}

/// summary.txt without its times and rates per second.
fn summary_without_times(folder: &Path) -> String {
    std::fs::read_to_string(folder.join("summary.txt"))
        .unwrap()
        .lines()
        .map(|l| {
            l.split(", ")
                .filter(|part| !part.contains(" s ") && !part.contains("per second"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a stop leaves, before any resume: the exit code of the signal, the
/// folder marked INCOMPLETE (with the reason, after SIGINT or SIGTERM),
/// and every chain file written so far valid CmdStan CSV — whole, with
/// `num_samples` its rows, after SIGINT or SIGTERM; up to its last whole
/// line after SIGKILL (a kill inside a write may cut that write).
fn check_stopped_folder(folder: &Path, signal: &str, out: &Output, what: &str) {
    let marker = std::fs::read_to_string(folder.join("INCOMPLETE"))
        .unwrap_or_else(|e| panic!("{what}: no INCOMPLETE marker: {e}"));
    let expected = match signal {
        "INT" => Some(130),
        "TERM" => Some(143),
        _ => None,
    };
    assert_eq!(out.status.code(), expected, "{what}: exit status");
    if expected.is_some() {
        assert!(
            marker.contains("reason: interrupted by SIG"),
            "{what}: {marker}"
        );
    }
    let mut files = 0;
    for entry in std::fs::read_dir(folder).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !(name.starts_with("chain_") && name.ends_with(".csv")) {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(folder.join(&name)).unwrap();
        let text = if expected.is_some() {
            &text[..]
        } else {
            &text[..text.rfind('\n').map_or(0, |i| i + 1)]
        };
        // A chain's head is written with its first kept draw: killed in its
        // warm-up (a loaded machine makes the run slower than the
        // uninterrupted one the delays were drawn from), its file is empty.
        if expected.is_none() && text.is_empty() {
            continue;
        }
        let file = read_cmdstan_csv(text)
            .unwrap_or_else(|e| panic!("{what}: {name} is not valid CmdStan CSV: {e}"));
        if expected.is_some() {
            let num_samples: usize = file.metadata("num_samples").unwrap().parse().unwrap();
            assert_eq!(
                file.rows() - file.warmup_rows(),
                num_samples,
                "{what}: {name}"
            );
        }
    }
    if expected.is_some() {
        assert!(files > 0, "{what}: no chain file");
    }
}

/// Deterministic "random" delays of at least 0.05 s (a fixed xorshift): the points where the
/// runs are stopped vary with the machine's speed, not with the seed.
fn delays(n: usize, longest: f64, mut state: u64) -> Vec<Duration> {
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            Duration::from_secs_f64(0.05 + u * longest)
        })
        .collect()
}

/// Stops `run` (with `--output FOLDER` appended) at random points with each
/// signal, continues it with `--resume` (stopping the continuation too,
/// every other time), and compares the chain files and summary with those
/// of the run never stopped.
fn stopped_runs_resume_bit_for_bit(name: &str, run: &[&str], chains: usize, seed: u64) {
    let dir = scratch(name);
    let whole = dir.join("whole");
    let mut args = run.to_vec();
    args.extend(["--output", whole.to_str().unwrap()]);
    let clock = Instant::now();
    let out = qnmc(&args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let length = clock.elapsed().as_secs_f64();
    let signals = ["INT", "KILL", "TERM", "KILL", "INT", "KILL"];
    let mut stopped = 0;
    for (case, (signal, delay)) in signals
        .iter()
        .zip(delays(signals.len(), (0.9 * length - 0.05).max(0.0), seed))
        .enumerate()
    {
        let folder = dir.join(format!("case{case}"));
        let folder_text = folder.to_str().unwrap();
        let mut args = run.to_vec();
        args.extend(["--output", folder_text, "--checkpoint-seconds", "0.05"]);
        let (out, sent) = stop_after(&args, signal, delay);
        let what = format!("{name} case {case}: {signal} after {delay:?}");
        if !sent || out.status.success() {
            // The run ended before the signal: nothing to continue.
            assert!(
                out.status.success(),
                "{what}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        } else if !folder.join(".qnmc-resume").join("command.json").exists() {
            // Killed before the run began to write (a loaded machine can
            // take that long to start it): run it again.
            args.push("--force");
            let out = qnmc(&args).output().unwrap();
            assert!(
                out.status.success(),
                "{what}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        } else {
            stopped += 1;
            check_stopped_folder(&folder, signal, &out, &what);
            let resume = ["run", "--resume", folder_text, "--quiet"];
            if case % 2 == 1 {
                // The continuation is stopped too, then continued.
                let (out, sent) = stop_after(&resume, "KILL", delay / 2);
                if !sent {
                    assert!(
                        out.status.success(),
                        "{what}: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            }
            if folder.join("INCOMPLETE").exists() {
                let out = qnmc(&resume).output().unwrap();
                assert!(
                    out.status.success(),
                    "{what}: the resume failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
        for k in 1..=chains {
            let file = format!("chain_{k}.csv");
            assert_eq!(
                without_times(&folder.join(&file)),
                without_times(&whole.join(&file)),
                "{what}: {file}"
            );
        }
        assert_eq!(
            summary_without_times(&folder),
            summary_without_times(&whole),
            "{what}"
        );
        assert!(
            !folder.join(".qnmc-resume").exists(),
            "{what}: checkpoints left"
        );
        assert!(!folder.join("INCOMPLETE").exists(), "{what}");
    }
    eprintln!("{name}: {stopped} of {} runs stopped", signals.len());
    // The runs take seconds and the delays are within 90 % of that: most
    // stops land.
    assert!(
        stopped >= signals.len() / 2,
        "{name}: only {stopped} runs were stopped"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn nuts_stopped_anywhere_resumes_bit_for_bit() {
    stopped_runs_resume_bit_for_bit(
        "nuts",
        &[
            "run",
            "--target",
            "logreg-heart",
            "--draws",
            "15000",
            "--seed",
            "9",
            "--quiet",
        ],
        4,
        0x9E37_79B9_7F4A_7C15,
    );
}

#[test]
fn hmc_with_saved_warmup_and_thinning_resumes_bit_for_bit() {
    stopped_runs_resume_bit_for_bit(
        "hmc",
        &[
            "run",
            "--sampler",
            "hmc",
            "--target",
            "gaussian",
            "--dimension",
            "10",
            "--draws",
            "20000",
            "--save-warmup",
            "--leapfrog-steps",
            "40",
            "--thin",
            "2",
            "--chains",
            "3",
            "--seed",
            "5",
            "--quiet",
        ],
        3,
        0xD1B5_4A32_D192_ED03,
    );
}

/// `--resume` takes only --quiet and --checkpoint-seconds, and refuses a
/// folder without checkpoints, or one whose run finished, in words.
#[test]
fn resume_refusals_say_why() {
    let dir = scratch("refusals");
    let folder = dir.join("out");
    let text = folder.to_str().unwrap();
    // The exit code and stderr of `qnmc args…`, which must be a usage
    // error saying `expected`.
    let refused = |args: &[&str], expected: &str| {
        let (code, _, err) = common::qnmc(args, &dir);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    };
    refused(
        &["run", "--resume", text, "--seed", "3"],
        "--seed cannot be given with it",
    );
    refused(&["run", "--resume", text], "cannot open");
    let run = [
        "run",
        "--sampler",
        "hmc",
        "--target",
        "gaussian",
        "--dimension",
        "3",
        "--draws",
        "50",
        "--quiet",
    ];
    refused(
        &[&run[..], &["--checkpoint-seconds", "5"]].concat(),
        "--checkpoint-seconds applies with --output",
    );
    refused(
        &[&run[..], &["--output", text, "--checkpoint-seconds", "-1"]].concat(),
        "--checkpoint-seconds must be",
    );
    assert!(!folder.exists(), "a refused run leaves no folder");
    let (code, _, err) = common::qnmc(&[&run[..], &["--output", text]].concat(), &dir);
    assert_eq!(code, 0, "{err}");
    refused(
        &["run", "--resume", text],
        "holds no checkpoints to continue from",
    );
    std::fs::remove_dir_all(dir).unwrap();
}
