//! Every command the README and the pages its sections moved to print
//! ([`PAGES`]: README.md, docs/CLI.md, docs/BENCHMARKS.md, …), classified,
//! and the ones that run in seconds run here, through the built `qnmc`
//! binary, with the numbers the pages quote from them compared with what
//! they print. So the documentation cannot drift from the code again (issue
//! 26: the README's demo table's QNHMC rows did, and its QNHMC example
//! printed R̂ and ESS warnings).
//!
//! **Which commands.** Every command line of a ```` ```sh ```` block of a
//! page of [`PAGES`], and every inline `` `cargo run …` ``, must be in
//! exactly one list below, keyed by the command exactly as the page prints
//! it (whitespace folded; one entry serves every page that prints it):
//!
//! - [`RUN`]: a test of this file runs it (`cargo run --release -p
//!   qnmc-cli --` becomes the `qnmc` binary) in a scratch folder, checks its
//!   exit code, that it prints no `warning:` where the page shows a clean
//!   run, and compares every number the pages quote from it;
//! - [`COVERED`]: another test runs it as printed (named in the list);
//! - [`SKIPPED`]: it cannot run in a test, with the reason.
//!
//! A command in no list fails [`every_readme_command_is_classified`] (so a
//! new or edited command must be classified here), naming the page and
//! line, and so does a list entry that no page prints any more.
//!
//! **Tolerance: none on the numbers computed from the draws.** The pages
//! quote them as the command prints them (the demo table cell for cell), or
//! rounded to fewer digits in prose; the test formats the command's output
//! to the page's digits and requires the same text, on every page that
//! makes the claim. This is exact because
//! the output is a deterministic function of the seed: every sampler is
//! seeded, chains run on their own threads but each is sequential, the
//! statistics are summed in a fixed order, the core uses `libm` and never a
//! fused multiply-add, and the AVX2 copies of the core's kernels (picked at
//! run time on x86-64) give the same bits as the portable ones, which
//! [`the_readme_numbers_do_not_depend_on_the_avx2_kernels`] checks on the
//! demo's samplers and its NUTS run. (The host's statistics call the
//! platform's `ln`/`exp`/`sqrt`; a last-ulp difference there could only move a
//! printed digit that sits within ~1e-13 of a rounding boundary.)
//! Wall-time numbers (the demo's `s` column, seconds per chain, ESS per
//! second) are not compared: they depend on the machine and its load.
//!
//! Cost: about 25 s of CPU, 35–40 s wall on the project's 2-core machine
//! while other builds ran (the test profile CI's `cargo test --workspace`
//! uses and `--release` alike).

mod common;

use std::path::Path;

use qnmc_cli::demo::{self, DemoSettings};
use qnmc_host::run::{Progress, RunSettings, SamplerKind};
use qnmc_host::targets::{LogisticRegressionModel, LogregDataset};

/// The pages whose commands and quoted numbers this file checks, relative to
/// the workspace: the README and the pages of `docs/` its sections moved to.
/// A command moved to another page must bring that page into this list.
const PAGES: &[&str] = &[
    "README.md",
    "docs/CLI.md",
    "docs/SAMPLERS.md",
    "docs/BENCHMARKS.md",
    "docs/REPRODUCTIONS.md",
    "docs/DATA.md",
    "docs/TESTING.md",
];

/// The README's main job: the demo (sampler table, then NUTS on German
/// credit; docs/BENCHMARKS.md quotes its numbers).
const DEMO: &str = "cargo run --release -p qnmc-cli -- demo --output qnmc-demo --force";
/// README and docs/CLI.md: the default sampler on Statlog heart.
const HEART_NUTS: &str =
    "cargo run --release -p qnmc-cli -- run --target logreg-heart --output heart-fit";
/// … and its charts, drawn from the run's folder.
const HEART_PLOT: &str = "cargo run --release -p qnmc-cli -- plot heart-fit";
/// … `check` against posteriordb's reference draws (needs the shared data).
const CHECK_EIGHT_SCHOOLS: &str = "cargo run --release -p qnmc-cli -- check --target eight-schools";
/// … QNHMC on Statlog heart, with the trajectory length docs/CLI.md explains.
const HEART_QNHMC: &str = "cargo run --release -p qnmc-cli -- run --sampler qnhmc --leapfrog-steps 20 --target logreg-heart --output heart-fit-qnhmc";
/// Inline: "`… -- list` names every target and sampler".
const LIST: &str = "cargo run --release -p qnmc-cli -- list";
/// Inline: "`… -- run --help` lists them all".
const RUN_HELP: &str = "cargo run --release -p qnmc-cli -- run --help";

/// Commands a test of this file runs.
const RUN: &[&str] = &[
    DEMO,
    HEART_NUTS,
    HEART_PLOT,
    CHECK_EIGHT_SCHOOLS,
    HEART_QNHMC,
    LIST,
    RUN_HELP,
];

/// Commands another test runs as printed: (command, test).
const COVERED: &[(&str, &str)] = &[
    (
        "cat > trial.csv <<'EOF'",
        "cli/tests/readme_user_csv.rs writes the heredoc's CSV",
    ),
    (
        "cargo run --release -p qnmc-cli -- run --sampler qnhmc --target logreg-csv --data trial.csv --label-column recovered --output trial-fit",
        "cli/tests/readme_user_csv.rs runs it on that CSV",
    ),
    (
        "cargo run --release -p qnmc-cli -- plot trial-fit",
        "cli/tests/readme_user_csv.rs runs it after the run",
    ),
];

/// Commands no test runs: (command, why).
const SKIPPED: &[(&str, &str)] = &[
    (
        "cargo install --path cli",
        "installs `qnmc` into ~/.cargo/bin, outside the repository (a release build of \
         minutes); `cargo install --path cli --root DIR` was run by hand and its binary \
         answered --help",
    ),
    (
        "cargo test --workspace",
        "the test suite itself, which runs this file",
    ),
    (
        "cargo run --release -p qnmc-cli -- reproduce all --output reproductions",
        "the papers' full settings take about 9 minutes on 2 cores; CI runs `reproduce all --quick`, \
         and reproduce/tests/*.rs test each reproduction",
    ),
    (
        "qnmc run --model eight_schools_noncentered_model.so --data eight_schools.json --output es-fit",
        "needs a Stan model compiled to a shared library (BridgeStan or stan/build-model.py with the \
         httpstan wheel); cli/tests/cli_stan_models.rs runs `--model` on the models CI compiles",
    ),
    (
        "python3 stan/build-model.py path/to/model.stan",
        "a template (path/to/model.stan), needs the httpstan wheel and ~25 s of g++ per model; \
         CI runs stan/build-test-models.sh, which calls it",
    ),
    (
        "cargo build --release --manifest-path compare/Cargo.toml",
        "builds nuts-rs in its own workspace (minutes); CI checks that compare/ compiles",
    ),
    (
        "./compare/target/release/qnmc-compare --seeds 1,2,3 --samplers nuts-rs-lowrank,nuts-rs-diag,nuts,nuts-w300",
        "about 4 minutes, and needs the build above",
    ),
    (
        "cargo run --release -p qnmc-cli -- reproduce sg-conditioning --output reproductions",
        "2 × 10⁵ iterations per sampler, data set and step size: about 5 minutes",
    ),
    (
        "cargo bench -p qnmc-benches --bench step && python3 benches/median_table.py",
        "criterion timings: minutes, and they depend on the machine",
    ),
    (
        "cargo bench -p qnmc-benches --bench large_dimension",
        "criterion timings at 10^5 and 10^6 coordinates: minutes and up to 0.7 GB; CI compiles the \
         benches (`cargo bench --no-run`)",
    ),
    (
        "qnmc run --target pmf --data ml-1m/ratings.dat --sampler sgld --batch-size 1000 --output pmf-fit",
        "needs MovieLens's ratings.dat, whose licence forbids shipping it; the loader is tested on \
         files the tests write (host/src/targets/pmf/data_tests.rs)",
    ),
    (
        "apt-get install -y dataset-fashion-mnist",
        "a system install as root (docs/DATA.md); the tests that need its files skip without it, \
         and QNMC_REQUIRE_FASHION_MNIST=1 makes them fail",
    ),
    (
        "cargo run --release -p qnmc-cli -- run --target fashion-mnist --sampler qnhmc --draws 200 --warmup 200 --chains 2 --output fm-run",
        "needs Debian's dataset-fashion-mnist, and takes minutes (d = 784, 12 000 images; 3.5 min \
         measured, docs/DATA.md); host/src/targets/logreg/fashion_mnist_tests.rs tests the \
         target's model",
    ),
    (
        "cargo run --release -p qnmc-host --example fashion_mnist -- fm-run",
        "needs the run above",
    ),
];

// ---------------------------------------------------------------------------
// Reading the pages

/// A page of [`PAGES`]: its path relative to the workspace, and its text.
struct Page {
    name: &'static str,
    text: String,
}

/// Every page of [`PAGES`], read.
fn pages() -> Vec<Page> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    PAGES
        .iter()
        .map(|name| Page {
            name,
            text: std::fs::read_to_string(root.join(name))
                .unwrap_or_else(|e| panic!("{name} (listed in PAGES): {e}")),
        })
        .collect()
}

/// Text with every run of whitespace (line breaks included) folded to one
/// space, so that prose can be searched across line breaks.
fn folded(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every command of every page: (page, line number, command with
/// whitespace folded).
fn all_commands(pages: &[Page]) -> Vec<(&'static str, usize, String)> {
    pages
        .iter()
        .flat_map(|page| {
            page_commands(page.name, &page.text)
                .into_iter()
                .map(|(line, command)| (page.name, line, command))
        })
        .collect()
}

/// Every command one page prints: (line number, command with whitespace
/// folded). Shell blocks: one command per line, `\` continuations joined,
/// `# comments` dropped, a heredoc's body skipped (its `cat > F <<'EOF'` line
/// is the command). Prose: every inline code span starting with `cargo run`.
fn page_commands(name: &str, text: &str) -> Vec<(usize, String)> {
    let mut commands = Vec::new();
    let mut prose = String::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let fence = line.trim_start();
        if !fence.starts_with("```") {
            prose.push_str(line);
            prose.push('\n');
            continue;
        }
        let shell = matches!(fence, "```sh" | "```bash" | "```shell" | "```console");
        let mut pending: Option<(usize, String)> = None;
        let mut heredoc_end: Option<String> = None;
        let mut closed = false;
        for (j, line) in lines.by_ref() {
            let text = line.trim();
            if text.starts_with("```") {
                // A fence with a language opens a block: the one of line
                // i + 1 was left open, and the rest would be misread.
                assert!(
                    text.trim_end_matches('`').is_empty(),
                    "{name}:{}: the block opened at line {} is not closed before this fence",
                    j + 1,
                    i + 1
                );
                closed = true;
                break;
            }
            if !shell {
                continue;
            }
            if let Some(end) = &heredoc_end {
                if text == end {
                    heredoc_end = None;
                }
                continue;
            }
            let code = match text.find(" #") {
                Some(k) => text[..k].trim_end(),
                None if text.starts_with('#') => "",
                None => text,
            };
            let (start, mut command) = pending.take().unwrap_or((j + 1, String::new()));
            command.push(' ');
            command.push_str(code.trim_end_matches('\\'));
            if code.ends_with('\\') {
                pending = Some((start, command));
                continue;
            }
            let command = folded(&command);
            if command.is_empty() {
                continue;
            }
            if let Some(k) = command.find("<<") {
                let word = command[k + 2..].trim_start_matches('-');
                heredoc_end = Some(
                    word.split_whitespace()
                        .next()
                        .unwrap_or("")
                        .trim_matches(['\'', '"'])
                        .to_string(),
                );
            }
            commands.push((start, command));
        }
        assert!(closed, "{name}:{}: a block never closed", i + 1);
        assert!(
            pending.is_none(),
            "{name}:{}: a `\\` at a block's end",
            i + 1
        );
        prose.push('\n');
    }
    // Inline code spans alternate with text between backticks.
    for span in prose.split('`').skip(1).step_by(2) {
        let span = folded(span);
        if span.starts_with("cargo run ") {
            let line = text.find(&span).map_or(0, |k| text[..k].lines().count());
            commands.push((line, span));
        }
    }
    commands
}

/// The arguments of `cargo run --release -p qnmc-cli -- ARGS` or `qnmc ARGS`.
fn qnmc_args(command: &str) -> Vec<&str> {
    let args = command
        .strip_prefix("cargo run --release -p qnmc-cli -- ")
        .or_else(|| command.strip_prefix("qnmc "))
        .unwrap_or_else(|| panic!("not a qnmc command: {command}"));
    assert!(!args.contains(['\'', '"', '$', '\\']), "quoting: {command}");
    args.split_whitespace().collect()
}

/// Panics unless a page of [`PAGES`] prints `command` (in a shell block or
/// inline).
fn assert_printed(command: &str) {
    let pages = pages();
    let printed = all_commands(&pages).iter().any(|(_, _, c)| c == command)
        || pages
            .iter()
            .any(|p| folded(&p.text).contains(&format!("`{command}`")));
    assert!(
        printed,
        "no page of {PAGES:?} prints `{command}` any more: update cli/tests/readme_commands.rs"
    );
}

/// Every page of `pages` that says `anchor` says it followed by `expected`
/// (whitespace folded), and at least one does. On failure, names the page and
/// shows what it says after `anchor` instead.
fn assert_pages_say(pages: &[Page], anchor: &str, expected: &str) {
    let claim = format!("{anchor}{expected}");
    let mut found = false;
    for page in pages {
        let text = folded(&page.text);
        let Some(k) = text.find(anchor) else {
            continue;
        };
        found = true;
        if text.contains(&claim) {
            continue;
        }
        let says: String = text[k + anchor.len()..]
            .chars()
            .take(expected.chars().count() + 12)
            .collect();
        panic!(
            "{} drifted: after «{anchor}» it says «{says}…», \
             the command's output gives «{expected}»",
            page.name
        )
    }
    assert!(
        found,
        "no page of {PAGES:?} says «{anchor}» any more: update cli/tests/readme_commands.rs \
         (expected «{claim}»)"
    );
}

// ---------------------------------------------------------------------------
// Running commands and reading their output

/// The line `run` ends with: "slowest quantity w[4]: bulk ESS 6256, 1268 ESS
/// per second, 0.1816 ESS per gradient".
const SLOWEST: &str = "slowest quantity ";

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Output {
    fn both(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    fn warnings(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .chain(self.stdout.lines())
            .filter(|l| l.starts_with("warning:"))
            .collect()
    }

    /// The number after `key` in the first line that starts with `line_start`
    /// and contains `key`, as printed.
    fn number_after(&self, line_start: &str, key: &str) -> &str {
        let text = [self.stdout.as_str(), self.stderr.as_str()];
        let line = text
            .iter()
            .flat_map(|t| t.lines())
            .find(|l| l.starts_with(line_start) && l.contains(key))
            .unwrap_or_else(|| panic!("no «{line_start}…{key}» in the output:\n{}", self.both()));
        let rest = &line[line.find(key).unwrap() + key.len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
            .unwrap_or(rest.len());
        &rest[..end]
    }
}

/// Runs a command (already checked to be on a page) in `dir`.
fn run_in(dir: &Path, command: &str) -> Output {
    let (code, stdout, stderr) = common::qnmc(&qnmc_args(command), dir);
    Output {
        code,
        stdout,
        stderr,
    }
}

/// Runs `command` as printed and requires exit code 0 and, with `--output
/// DIR`, a complete output folder.
fn run_ok(group: &str, command: &str) -> Output {
    let dir = common::scratch("readme", group);
    let out = run_ok_in(&dir, command);
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// [`run_ok`] in `dir`, which is kept.
fn run_ok_in(dir: &Path, command: &str) -> Output {
    assert_printed(command);
    let out = run_in(dir, command);
    assert_eq!(out.code, 0, "`{command}` failed:\n{}", out.both());
    let args = qnmc_args(command);
    if let Some(k) = args.iter().position(|a| *a == "--output") {
        let output = dir.join(args[k + 1]);
        assert!(
            output.join("summary.json").is_file(),
            "{command}: no summary.json"
        );
        assert!(!output.join("INCOMPLETE").exists(), "{command}: INCOMPLETE");
    }
    out
}

/// `x` (as printed) rounded to `decimals` decimals.
fn rounded(x: &str, decimals: usize) -> String {
    let v: f64 = x.parse().unwrap_or_else(|_| panic!("not a number: {x}"));
    format!("{v:.decimals$}")
}

/// An integer rounded to hundreds, with a space before the thousands: `8 300`.
fn hundreds(x: u64) -> String {
    let r = (x + 50) / 100 * 100;
    format!("{} {:03}", r / 1000, r % 1000)
}

// ---------------------------------------------------------------------------
// The tests

#[test]
fn every_readme_command_is_classified() {
    let pages = pages();
    let commands = all_commands(&pages);
    assert!(commands.len() > 10, "the parser finds the pages' commands");
    // Every page of `docs/` checked here is reachable from the README.
    let readme = &pages.iter().find(|p| p.name == "README.md").unwrap().text;
    for page in PAGES.iter().filter(|p| **p != "README.md") {
        assert!(
            readme.contains(&format!("]({page})")),
            "README.md does not link {page}, whose commands this file checks"
        );
    }
    let listed = |c: &str| {
        RUN.iter().filter(|r| **r == c).count()
            + COVERED.iter().filter(|(r, _)| *r == c).count()
            + SKIPPED.iter().filter(|(r, _)| *r == c).count()
    };
    let unclassified: Vec<String> = commands
        .iter()
        .filter(|(_, _, c)| listed(c) != 1)
        .map(|(page, line, c)| format!("{page}:{line}: {c}"))
        .collect();
    assert!(
        unclassified.is_empty(),
        "commands in no list (or in several) of cli/tests/readme_commands.rs; \
         run each in a test (RUN) or list it in COVERED or SKIPPED with the reason:\n{}",
        unclassified.join("\n")
    );
    let all = RUN
        .iter()
        .copied()
        .chain(COVERED.iter().map(|(c, _)| *c))
        .chain(SKIPPED.iter().map(|(c, _)| *c));
    let stale: Vec<&str> = all
        .filter(|c| !commands.iter().any(|(_, _, r)| r == c))
        .collect();
    assert!(
        stale.is_empty(),
        "listed in cli/tests/readme_commands.rs but printed by none of {PAGES:?}:\n{}",
        stale.join("\n")
    );
    for (_, why) in SKIPPED.iter().chain(COVERED) {
        assert!(!why.is_empty());
    }
    let covered_by = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/readme_user_csv.rs");
    assert!(covered_by.is_file(), "{}", covered_by.display());
}

/// The demo's table, cell for cell (wall time apart), and the numbers "What
/// the demo shows" (docs/BENCHMARKS.md) quotes from its NUTS run on German
/// credit. On the README of issue 26 this failed on the QNHMC rows
/// (acceptance 0.88, min ESS 6734 where the demo printed 0.80 and 6036).
#[test]
fn the_demo_prints_the_readme_numbers() {
    let out = run_ok("demo", DEMO);
    let pages = pages();

    // The table: each page's copy starts at the demo's header line.
    let printed: Vec<&str> = out
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("| sampler |"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert_eq!(printed.len(), 2 + 4, "{}", out.stdout);
    let copies: Vec<(&str, Vec<&str>)> = pages
        .iter()
        .map(|page| {
            let rows = page
                .text
                .lines()
                .skip_while(|l| *l != printed[0])
                .take_while(|l| l.starts_with('|'))
                .collect::<Vec<_>>();
            (page.name, rows)
        })
        .filter(|(_, rows)| !rows.is_empty())
        .collect();
    assert!(
        !copies.is_empty(),
        "no page of {PAGES:?} has a table headed «{}»",
        printed[0]
    );
    let cells = |row: &str| -> Vec<String> {
        row.trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let header = cells(printed[0]);
    let wall_time = header.iter().position(|h| h == "s").expect("an `s` column");
    for (page, ours) in &copies {
        assert_eq!(
            ours.len(),
            printed.len(),
            "the table of {page}:\n{}",
            ours.join("\n")
        );
        let mut drift = Vec::new();
        for (r, p) in ours.iter().zip(&printed).skip(2) {
            let (r, p) = (cells(r), cells(p));
            assert_eq!(r.len(), p.len(), "{page}: {r:?}");
            for (k, (a, b)) in r.iter().zip(&p).enumerate() {
                if k != wall_time && a != b {
                    drift.push(format!(
                        "{}: {} is {a} in {page}, {b} printed",
                        p[0], header[k]
                    ));
                }
            }
        }
        assert!(
            drift.is_empty(),
            "the demo table of {page} drifted from `{DEMO}`:\n{}\nthe demo printed:\n{}",
            drift.join("\n"),
            printed.join("\n")
        );
    }
    // Its settings line: "… 4 chains x (1000 warm-up + 5000 kept draws), seed 2016".
    let settings = DemoSettings::default();
    assert!(out.stdout.contains(&format!(
        "{} chains x ({} warm-up + {} kept draws), seed {}",
        settings.chains, settings.warmup, settings.draws, settings.seed
    )));
    assert_pages_say(
        &pages,
        "first compares the samplers (",
        &format!(
            "seed {}, {} chains × {} warm-up + {} kept draws;",
            settings.seed, settings.chains, settings.warmup, settings.draws
        ),
    );
    // The paper's M = I against M = C, gradients per effective draw (column 7).
    let grads_per_ess = |row: usize| -> f64 { cells(printed[row])[6].parse().unwrap() };
    assert_pages_say(
        &pages,
        "The paper's M = I costs ~",
        &format!(
            "{:.0}× the gradients per effective draw of M = C",
            grads_per_ess(3) / grads_per_ess(4)
        ),
    );

    // The NUTS run on German credit.
    let chain_lines: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("chain ") && l.contains(": acceptance "))
        .collect();
    assert_eq!(chain_lines.len(), settings.chains, "{}", out.stdout);
    let field = |line: &str, before: &str, after: &str| -> String {
        let start = line.find(before).map(|k| k + before.len()).unwrap_or(0);
        let rest = &line[start..];
        rest[..rest.find(after).unwrap()].trim().to_string()
    };
    let acceptance: Vec<f64> = chain_lines
        .iter()
        .map(|l| field(l, ": acceptance ", ",").parse().unwrap())
        .collect();
    let divergent: u64 = chain_lines
        .iter()
        .map(|l| field(l, ", ", " divergent").parse::<u64>().unwrap())
        .sum();
    let gradients: Vec<u64> = chain_lines
        .iter()
        .map(|l| {
            let before = &l[..l.find(" gradients").unwrap()];
            before.rsplit(' ').next().unwrap().parse().unwrap()
        })
        .collect();
    // The summary table: name, mean, MCSE, sd, 5 %, 50 %, 95 %, bulk, tail, R̂.
    let rows: Vec<Vec<&str>> = out
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|t| t.len() == 10 && (t[0] == "lp__" || t[0].starts_with("w[")))
        .collect();
    assert_eq!(rows.len(), 26, "lp__ and 25 coefficients:\n{}", out.stdout);
    let max_rhat = rows
        .iter()
        .map(|t| t[9].parse::<f64>().unwrap())
        .fold(0.0, f64::max);
    let lp_ess = rows.iter().find(|t| t[0] == "lp__").unwrap()[7];
    let slowest = out.number_after("slowest quantity", "slowest quantity w[");
    assert!(!slowest.is_empty(), "the slowest quantity is a coefficient");
    let slowest_ess = out.number_after(SLOWEST, ": bulk ESS ");
    let ess_per_gradient = out.number_after(SLOWEST, "ESS per second, ");
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    assert_pages_say(
        &pages,
        "lp__ (acceptance ",
        &format!(
            "{:.2}–{:.2} per chain, {}, R̂ ≤ {max_rhat:.3}, slowest coefficient bulk ESS \
             {slowest_ess} and lp__ {lp_ess} of {} draws, {}–{} gradients",
            min(&acceptance),
            max(&acceptance),
            if divergent == 0 {
                "no divergence".to_string()
            } else {
                format!("{divergent} divergences")
            },
            settings.chains * 1000,
            hundreds(*gradients.iter().min().unwrap()),
            hundreds(*gradients.iter().max().unwrap()),
        ),
    );
    assert_pages_say(
        &pages,
        "The slowest coefficient gets ",
        &format!("{} ESS per gradient", rounded(ess_per_gradient, 2)),
    );
    assert!(out.warnings().is_empty(), "{}", out.both());
}

/// The demo's prose (docs/BENCHMARKS.md) compares German credit's NUTS with
/// QNHMC and HMC, by the commands it names inline.
#[test]
fn the_readme_german_credit_comparison_holds() {
    let pages = pages();
    let qnhmc = "qnmc run --sampler qnhmc --target logreg-german --warmup 500 --draws 500 --leapfrog-steps 20";
    assert_printed(qnhmc);
    let hmc = qnhmc.replace("qnhmc", "hmc");
    let dir = common::scratch("readme", "german");
    for (command, anchor, after) in [
        (
            qnhmc,
            "QNHMC with a frozen memory got ",
            " on the same target",
        ),
        (
            hmc.as_str(),
            "--leapfrog-steps 20`), HMC ",
            " (the same with `--sampler hmc`;",
        ),
    ] {
        let out = run_in(&dir, command);
        assert_eq!(out.code, 0, "{command}:\n{}", out.both());
        // "500 draws per chain are too few for either, and both warn".
        assert!(
            out.warnings().iter().any(|w| w.contains("R-hat"))
                && out.warnings().iter().any(|w| w.contains("bulk ESS")),
            "docs/BENCHMARKS.md says both warn about R̂ and bulk ESS:\n{}",
            out.both()
        );
        let ess_per_gradient = out.number_after(SLOWEST, "ESS per second, ");
        assert_pages_say(
            &pages,
            anchor,
            &format!("{}{after}", rounded(ess_per_gradient, 4)),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_readme_heart_example_runs_clean() {
    let dir = common::scratch("readme", "heart-nuts");
    let out = run_ok_in(&dir, HEART_NUTS);
    assert!(out.warnings().is_empty(), "{}", out.both());
    // The run draws no chart; its last line is the command that does.
    assert!(!dir.join("heart-fit/rank_lp.png").exists());
    assert_eq!(
        out.stderr.lines().last(),
        Some("draw the charts with: qnmc plot heart-fit"),
        "{}",
        out.both()
    );
    run_ok_in(&dir, HEART_PLOT);
    for chart in ["trace", "autocorrelation", "density", "rank"] {
        for ext in ["svg", "png"] {
            let file = dir.join(format!("heart-fit/{chart}_lp.{ext}"));
            assert!(file.is_file(), "{} missing", file.display());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The QNHMC example (docs/CLI.md) runs without a warning; docs/CLI.md
/// explains why it sets `--leapfrog-steps 20` with what the default 10 gives.
#[test]
fn the_readme_qnhmc_example_runs_clean() {
    let pages = pages();
    let out = run_ok("heart-qnhmc", HEART_QNHMC);
    assert!(out.warnings().is_empty(), "{}", out.both());
    let dir = common::scratch("readme", "heart-qnhmc-l10");
    let short = run_in(&dir, &HEART_QNHMC.replace(" --leapfrog-steps 20", ""));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(short.code, 0, "{}", short.both());
    assert!(
        short.warnings().iter().any(|w| w.contains("R-hat"))
            && short.warnings().iter().any(|w| w.contains("bulk ESS")),
        "docs/CLI.md says 10 leapfrog steps warn about R̂ and ESS:\n{}",
        short.both()
    );
    assert_pages_say(
        &pages,
        "the same command's slowest coefficient gets bulk ESS ",
        &format!(
            "{} of 4000 draws ({} per gradient) and max R̂ {}, and `run` warns about both; \
             with 20 steps it gets {} ({} per gradient) and no warning",
            short.number_after(SLOWEST, ": bulk ESS "),
            rounded(short.number_after(SLOWEST, "ESS per second, "), 4),
            short.number_after("warning: max R-hat", "max R-hat is "),
            out.number_after(SLOWEST, ": bulk ESS "),
            rounded(out.number_after(SLOWEST, "ESS per second, "), 4),
        ),
    );
}

#[test]
fn the_readme_check_example_passes() {
    if qnmc_host::shared_data::for_test("the_readme_check_example_passes").is_none() {
        return;
    }
    let out = run_ok("check", CHECK_EIGHT_SCHOOLS);
    assert!(out.stdout.contains("PASS"), "{}", out.both());
}

#[test]
fn the_readme_list_and_help_commands_run() {
    let list = run_ok("list", LIST);
    // "names every target and sampler": those the pages run at least.
    for name in [
        "logreg-heart",
        "logreg-german",
        "eight-schools",
        "qnhmc",
        "nuts",
        "hmc",
    ] {
        assert!(list.stdout.contains(name), "{name}:\n{}", list.stdout);
    }
    let help = run_ok("run-help", RUN_HELP);
    for option in ["--leapfrog-steps", "--memory", "--mass", "--seed"] {
        assert!(help.stdout.contains(option), "{option}:\n{}", help.stdout);
    }
}

/// The exact comparisons above hold on every x86-64 processor: with the AVX2
/// kernels forbidden, the demo's samplers and its NUTS run give the same bits.
/// (The AVX2 choice is global to the process; this is the only test here that
/// samples in-process, the others run the binary.)
#[test]
fn the_readme_numbers_do_not_depend_on_the_avx2_kernels() {
    use qnmc::kernels::{RUNTIME_DISPATCH, kernels_in_use, set_avx2_allowed};
    let demo_settings = DemoSettings {
        draws: 1000,
        ..DemoSettings::default()
    };
    let model = LogisticRegressionModel::builtin(LogregDataset::German).unwrap();
    let run_settings = RunSettings {
        warmup: 500,
        draws: 1000,
        ..RunSettings::default()
    };
    let sample = || {
        let rows: Vec<Vec<u64>> = demo::run(&demo_settings)
            .iter()
            .map(|r| {
                [
                    r.acceptance,
                    r.gradients_per_draw,
                    r.min_ess,
                    r.ess_ones,
                    r.max_mean_error,
                    r.ones_variance_error,
                    r.marginal_variance_error,
                    r.divergences as f64,
                ]
                .map(f64::to_bits)
                .to_vec()
            })
            .collect();
        let progress = Progress::new(0, "", true);
        let draws = qnmc_host::run::run(&model, SamplerKind::Nuts, &run_settings, &progress)
            .expect("the demo's NUTS run");
        let nuts: Vec<Vec<u64>> = draws
            .chains
            .iter()
            .map(|c| {
                c.values
                    .iter()
                    .chain(&c.lp)
                    .chain(&c.accept_stat)
                    .chain(&c.step_size)
                    .map(|v| v.to_bits())
                    .chain(c.n_leapfrog.iter().map(|&n| n.into()))
                    .collect()
            })
            .collect();
        (rows, nuts)
    };
    set_avx2_allowed(false);
    let portable = sample();
    let avx2 = set_avx2_allowed(true);
    eprintln!(
        "kernels: {} (run-time dispatch {RUNTIME_DISPATCH}, AVX2 available {avx2})",
        kernels_in_use()
    );
    let vector = sample();
    assert!(
        portable.0 == vector.0,
        "the demo's rows differ without AVX2"
    );
    assert!(portable.1 == vector.1, "the NUTS draws differ without AVX2");
}
