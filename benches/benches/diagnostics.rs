//! Criterion benches of the per-quantity diagnostics at the size of
//! `qnmc run --target gaussian --dimension 1000`: 1000 quantities × 4 chains ×
//! 1000 draws.
//!
//! Run: `cargo bench -p qnmc-benches --bench diagnostics`. Each iteration
//! computes, for all quantities,
//!
//! - `bulk_tail_ess/all_cores`: bulk and tail ESS
//!   ([`ess_bulk`], [`ess_tail`]), spread over the cores with
//!   [`parallel_map`] as `qnmc run` does;
//! - `bulk_tail_ess/one_thread`: the same on one thread;
//! - `rank_rhat/all_cores`: the rank-normalised split R̂
//!   ([`rank_normalized_rhat`]);
//! - `summarize/all_cores`: the whole [`summarize`] row (moments, quantiles,
//!   both ESS, R̂, both MCSE), which shares the rank normalisation between
//!   the bulk ESS and R̂;
//! - `summarize_run/all_cores`: the whole post-processing of `qnmc run`,
//!   [`summarize_run`] of the run (every quantity's [`summarize`] row and
//!   its bulk ESS in each chain alone, and `lp__`'s row), on all cores as
//!   `qnmc run` computes it (once) before printing and writing its
//!   summaries; set its median beside the sampling time of the same run,
//!   which the run's chain lines print (`cargo bench -p qnmc-benches --bench
//!   diagnostics -- summarize_run` runs this group alone).
//!
//! The draws are Gaussian AR(1) chains (φ = 0.3, so an ESS near the 1000–1500
//! of a NUTS run on that target), fixed by a seed, with a further AR(1)
//! chain per chain as `lp__`. With
//! `QNMC_BENCH_DRAWS=DIR` they are instead the `chain_*.csv` files of a
//! `qnmc run --output DIR`, so that the same draws can be timed with ArviZ
//! (`python3 benches/arviz_diagnostics.py DIR`):
//!
//! ```sh
//! qnmc run --target gaussian --dimension 1000 --plot none --output /tmp/g1000
//! QNMC_BENCH_DRAWS=/tmp/g1000 cargo bench -p qnmc-benches --bench diagnostics
//! python3 benches/arviz_diagnostics.py /tmp/g1000
//! ```

mod common;

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use qnmc_host::diagnostics::{
    available_threads, ess_bulk, ess_tail, parallel_map, rank_normalized_rhat, summarize,
};
use qnmc_host::draws::RunDraws;
use qnmc_host::output::{read_cmdstan_csv, run_draws_from_cmdstan, summarize_run};
use std::hint::black_box;
use std::time::Duration;

const QUANTITIES: usize = 1000;
const CHAINS: usize = 4;
const DRAWS: usize = 1000;

/// The run whose draws are timed: `QNMC_BENCH_DRAWS`'s files when set, the
/// synthetic draws otherwise.
fn run_draws() -> RunDraws {
    match std::env::var_os("QNMC_BENCH_DRAWS") {
        Some(dir) => run_files(std::path::Path::new(&dir)),
        None => synthetic_run(),
    }
}

/// The `chain_*.csv` files in `dir` as a run (panics with the reason when
/// they cannot be read: this is a bench, and its input is a command line
/// away).
fn run_files(dir: &std::path::Path) -> RunDraws {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("QNMC_BENCH_DRAWS={}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("chain_") && n.ends_with(".csv"))
        })
        .collect();
    paths.sort();
    let files: Vec<_> = paths
        .iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            read_cmdstan_csv(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        })
        .collect();
    run_draws_from_cmdstan(&files).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// A run of [`CHAINS`] chains of [`DRAWS`] draws of [`QUANTITIES`]
/// quantities, each an AR(1) chain, and an AR(1) `lp__`.
fn synthetic_run() -> RunDraws {
    common::ar1_run(QUANTITIES, CHAINS, DRAWS, 26)
}

/// Quantity j's chains as slices.
fn slices(quantity: &[Vec<f64>]) -> Vec<&[f64]> {
    quantity.iter().map(Vec::as_slice).collect()
}

fn diagnostics(c: &mut Criterion) {
    let run = run_draws();
    // `draws[j][k]`: quantity j's chain k.
    let draws: Vec<Vec<Vec<f64>>> = (0..run.names.len()).map(|j| run.chains_of(j)).collect();
    let quantities = draws.len();
    let threads = available_threads();
    println!(
        "{quantities} quantities × {} chains × {} draws, {threads} thread(s) for all_cores",
        draws.first().map_or(0, Vec::len),
        draws.first().and_then(|q| q.first()).map_or(0, Vec::len),
    );
    let bulk_and_tail = |j: usize| {
        let s = slices(&draws[j]);
        ess_bulk(&s) + ess_tail(&s)
    };

    let mut group = c.benchmark_group("bulk_tail_ess");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(15));
    group.bench_function("all_cores", |b| {
        b.iter(|| black_box(parallel_map(quantities, threads, bulk_and_tail)));
    });
    group.bench_function("one_thread", |b| {
        b.iter(|| black_box(parallel_map(quantities, 1, bulk_and_tail)));
    });
    group.finish();

    let mut group = c.benchmark_group("rank_rhat");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("all_cores", |b| {
        b.iter(|| {
            black_box(parallel_map(quantities, threads, |j| {
                rank_normalized_rhat(&slices(&draws[j]))
            }))
        });
    });
    group.finish();

    let mut group = c.benchmark_group("summarize");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(15));
    group.bench_function("all_cores", |b| {
        b.iter(|| {
            black_box(parallel_map(quantities, threads, |j| {
                summarize(&slices(&draws[j]))
            }))
        });
    });
    group.finish();

    let mut group = c.benchmark_group("summarize_run");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(15));
    group.bench_function("all_cores", |b| {
        b.iter(|| black_box(summarize_run(&run, None)));
    });
    group.finish();
}

criterion_group!(benches, diagnostics);
criterion_main!(benches);
