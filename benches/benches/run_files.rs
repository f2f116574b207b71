//! Criterion bench of what `qnmc run --output` spends after sampling:
//! writing the run's files without charts (what `qnmc run --output` writes
//! by default) against the same files with the default charts (what `qnmc
//! plot` or `qnmc run --plot default` adds), at the size of
//! `qnmc run --target logreg-german` (25 quantities × 4 chains × 1000
//! draws), and what each chart format costs.
//!
//! Run: `cargo bench -p qnmc-benches --bench run_files`.
//!
//! - `write_run_files/no_charts`: [`write_run_files_summarized`] writing the
//!   chain CSVs, `summary.json` and `summary.txt` into one folder
//!   (overwritten);
//! - `write_run_files/default_charts`: the same files and the default charts
//!   ([`PlotSelection::default`]: the 4 slowest-mixing quantities and
//!   `lp__`, trace, density, rank and autocorrelation each, as SVG and PNG,
//!   drawn on all cores);
//! - `draw_charts/svg` and `draw_charts/png`: the 20 default charts drawn
//!   in memory, one after the other on one thread, as SVG only
//!   ([`render_svg`]) and as PNG only ([`render_png`]).
//!
//! Set the differences beside the sampling time of the same run, which the
//! run's chain lines print. The draws are Gaussian AR(1) chains (φ = 0.3),
//! fixed by a seed, with an AR(1) `lp__`.

mod common;

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use qnmc_host::output::{
    OutputDir, PlotSelection, render_png, render_svg, run_charts, summarize_run,
    write_run_files_summarized,
};
use std::hint::black_box;
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
        ("no_charts", PlotSelection::None),
        ("default_charts", PlotSelection::default()),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| write_run_files_summarized(&run, None, &dir, &plots, &summary).unwrap())
        });
    }
    group.finish();
    drop(dir);
    let _ = std::fs::remove_dir_all(&folder);

    let charts = run_charts(&run, None, &PlotSelection::default());
    let mut group = c.benchmark_group("draw_charts");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("svg", |b| {
        b.iter(|| {
            for chart in &charts {
                black_box(render_svg(chart, true).unwrap());
            }
        })
    });
    group.bench_function("png", |b| {
        b.iter(|| {
            for chart in &charts {
                black_box(render_png(chart, true).unwrap());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, run_files);
criterion_main!(benches);
