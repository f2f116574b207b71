//! Criterion bench of what `qnmc run --output` spends after sampling:
//! writing the run's files with the default charts against the same files
//! with `--plot none`, at the size of `qnmc run --target logreg-german`
//! (25 quantities × 4 chains × 1000 draws).
//!
//! Run: `cargo bench -p qnmc-benches --bench run_files`. Each iteration
//! calls [`write_run_files_summarized`] into one folder (overwritten):
//!
//! - `write_run_files/default_charts`: the chain CSVs, `summary.json`,
//!   `summary.txt` and the default charts ([`PlotSelection::default`]: the 4
//!   slowest-mixing quantities and `lp__`, trace, density, rank and
//!   autocorrelation each, as SVG and PNG, drawn on all cores);
//! - `write_run_files/no_charts`: the same files without charts
//!   (`--plot none`).
//!
//! The difference is the charts' cost; set it beside the sampling time of
//! the same run, which the run's chain lines print. The draws are Gaussian
//! AR(1) chains (φ = 0.3), fixed by a seed, with an AR(1) `lp__`.

mod common;

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use qnmc_host::output::{OutputDir, PlotSelection, summarize_run, write_run_files_summarized};
use std::time::Duration;

const QUANTITIES: usize = 25;
const CHAINS: usize = 4;
const DRAWS: usize = 1000;

fn run_files(c: &mut Criterion) {
    let run = common::ar1_run(QUANTITIES, CHAINS, DRAWS, 25);
    let summary = summarize_run(&run, None);
    let folder = std::env::temp_dir().join(format!("qnmc-bench-run-files-{}", std::process::id()));
    let dir = OutputDir::create(&folder, true).expect("a temporary folder");
    let mut group = c.benchmark_group("write_run_files");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for (name, plots) in [
        ("default_charts", PlotSelection::default()),
        (
            "no_charts",
            PlotSelection::from_words(&["none".to_string()]),
        ),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| write_run_files_summarized(&run, None, &dir, &plots, &summary).unwrap())
        });
    }
    group.finish();
    drop(dir);
    let _ = std::fs::remove_dir_all(&folder);
}

criterion_group!(benches, run_files);
criterion_main!(benches);
