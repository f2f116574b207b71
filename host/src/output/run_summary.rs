//! The numbers both summaries print: per-quantity statistics (with the truth
//! beside them when known) and per-chain sampler statistics.

use super::row_facts::{RowFacts, RowScan};
use super::separated_chains::{Separation, find_separation};
use crate::diagnostics::{
    Summary, available_threads, parallel_map, summarize, summarize_with_chain_ess,
};
use crate::draw_values::{DrawValues, InMemory, block_quantities, infallible};
use crate::draws::{ChainDraws, RunDraws};
use crate::model::KnownPosterior;

/// Statistics of one reported quantity over all chains.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantitySummary {
    /// The quantity's name (`w[1]`).
    pub name: String,
    /// Moments, quantiles, ESS, R̂ and MCSE.
    pub stats: Summary,
    /// The truth and how far the estimates are from it, when known.
    pub truth: Option<TruthComparison>,
}

/// Estimated against known posterior moments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TruthComparison {
    /// True posterior mean.
    pub mean: f64,
    /// True posterior standard deviation.
    pub sd: f64,
    /// (estimated mean − true mean) / √(MCSE² + reference MCSE²).
    pub z_mean: f64,
    /// (estimated sd − true sd) / √(MCSE_sd² + reference MCSE_sd²).
    pub z_sd: f64,
}

/// Sampler statistics of one chain.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainSummary {
    /// 1-based chain id.
    pub chain_id: usize,
    /// The chain's seed.
    pub seed: u64,
    /// Kept draws.
    pub draws: usize,
    /// Mean of `accept_stat__`.
    pub acceptance_mean: f64,
    /// Number of divergent transitions among the kept draws.
    pub divergences: usize,
    /// Mean step size over the kept draws.
    pub step_size_mean: f64,
    /// Gradient evaluations, warm-up included.
    pub gradient_evaluations: u64,
    /// Warm-up iterations run (NUTS may end its warm-up before `--warmup`).
    pub warmup_draws: u64,
    /// Warm-up wall time, seconds.
    pub warmup_seconds: f64,
    /// Sampling wall time, seconds.
    pub sampling_seconds: f64,
    /// Seconds spent on `lp__` full-data passes after minibatch steps (not
    /// in `sampling_seconds` nor in ESS per second).
    pub lp_seconds: f64,
    /// Smallest single-chain bulk ESS over the quantities.
    pub min_ess_bulk: f64,
    /// `min_ess_bulk` per second of warm-up plus sampling.
    pub ess_per_second: f64,
    /// `min_ess_bulk` per gradient evaluation (warm-up included).
    pub ess_per_gradient: f64,
    /// What its kept draws show row by row: whether it moved, its longest
    /// stay at one point, its first non-finite value.
    pub rows: RowFacts,
}

/// Everything the JSON and text summaries report about a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// `lp__` over all chains, from the draws it was computed for (a
    /// minibatch sampler under `--lp every N` computes it for every N-th
    /// kept draw only, under `--lp none` for none: NaN there).
    pub lp: Summary,
    /// Kept draws, all chains, with a computed `lp__` (not NaN).
    pub lp_computed: usize,
    /// One entry per reported quantity, in the run's order.
    pub quantities: Vec<QuantitySummary>,
    /// One entry per chain.
    pub chains: Vec<ChainSummary>,
    /// Index of the quantity with the smallest bulk ESS (`None` when no
    /// quantity has a finite one).
    pub slowest: Option<usize>,
    /// Bulk ESS of the slowest quantity over all chains (NaN if none).
    pub min_ess_bulk: f64,
    /// Gradient evaluations of all chains, warm-up included.
    pub gradient_evaluations: u64,
    /// Warm-up plus sampling seconds of all chains.
    pub seconds: f64,
    /// `min_ess_bulk` per second (`seconds`).
    pub ess_per_second: f64,
    /// `min_ess_bulk` per gradient evaluation.
    pub ess_per_gradient: f64,
    /// The first quantity in which the chains form groups that never met
    /// ([`separated_chains`](super::separated_chains)), if any.
    pub separation: Option<Separation>,
}

/// Computes the [`RunSummary`] of `run`, comparing with `known` where given.
///
/// The quantities are summarised in parallel on all cores
/// ([`parallel_map`]); the result is the same, bit for bit, as a sequential
/// computation. This is the expensive part of the summaries (rank
/// normalisations, sorts and FFTs for every quantity), so callers that
/// print and write several summaries of one run should compute it once and
/// pass it on ([`summary_table_with`](super::summary_table_with),
/// [`summary_json_with`](super::summary_json_with),
/// [`write_run_files_summarized`](super::write_run_files_summarized)).
pub fn summarize_run(run: &RunDraws, known: Option<&KnownPosterior>) -> RunSummary {
    infallible(summarize_run_from(run, &InMemory, known))
}

/// [`summarize_run`] with the values read from `values`: a block of
/// [`block_quantities`] columns at a time, so that a run whose values a
/// sink kept on disk ([`ValueSpills`](super::ValueSpills)) is summarised in
/// memory for one block. The result is the same, bit for bit, whatever
/// the values' source.
pub fn summarize_run_from<V: DrawValues>(
    run: &RunDraws,
    values: &V,
    known: Option<&KnownPosterior>,
) -> Result<RunSummary, V::Error> {
    let count = run.names.len();
    let threads = available_threads();
    let block = block_quantities(run);
    let computed = computed_lp(run);
    let lp_slices: Vec<&[f64]> = computed.iter().map(Vec::as_slice).collect();
    let lp = summarize(&lp_slices);
    // Each block's quantities in tasks of a few: the summaries over all
    // chains and each quantity's bulk ESS in each chain alone.
    let mut per_quantity: Vec<(Summary, Vec<f64>)> = Vec::with_capacity(count);
    for start in (0..count).step_by(block) {
        let which: Vec<usize> = (start..(start + block).min(count)).collect();
        let columns = values.columns(run, &which)?;
        let group = quantities_per_task(which.len(), threads);
        let tasks = which.len().div_ceil(group);
        let part = parallel_map(tasks, threads, |t| {
            columns[t * group..((t + 1) * group).min(which.len())]
                .iter()
                .map(|chains| {
                    let slices: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
                    summarize_with_chain_ess(&slices)
                })
                .collect::<Vec<_>>()
        });
        per_quantity.extend(part.into_iter().flatten());
    }
    let quantities: Vec<QuantitySummary> = per_quantity
        .iter()
        .enumerate()
        .map(|(j, (stats, _))| QuantitySummary {
            name: run.names[j].clone(),
            truth: known.and_then(|k| compare(stats, k, j)),
            stats: *stats,
        })
        .collect();
    let mut rows = Vec::with_capacity(run.chains.len());
    for k in 0..run.chains.len() {
        let mut scan = RowScan::new();
        values.for_each_row(run, k, &mut |row| scan.observe(row))?;
        rows.push(scan.finish());
    }
    let rhats: Vec<f64> = quantities.iter().map(|q| q.stats.rhat).collect();
    let separation = find_separation(run, values, lp.rhat, &rhats)?;

    let slowest = quantities
        .iter()
        .enumerate()
        .filter(|(_, q)| q.stats.ess_bulk.is_finite())
        .min_by(|a, b| a.1.stats.ess_bulk.total_cmp(&b.1.stats.ess_bulk))
        .map(|(j, _)| j);
    let min_ess_bulk = slowest.map_or(f64::NAN, |j| quantities[j].stats.ess_bulk);
    let gradient_evaluations = run.chains.iter().map(|c| c.gradient_evaluations).sum();
    let seconds = run
        .chains
        .iter()
        .map(|c| c.warmup_seconds + c.sampling_seconds)
        .sum();
    Ok(RunSummary {
        lp,
        lp_computed: run
            .chains
            .iter()
            .map(|c| c.lp.iter().filter(|v| !v.is_nan()).count())
            .sum(),
        chains: run
            .chains
            .iter()
            .zip(rows)
            .enumerate()
            .map(|(k, (c, rows))| summarize_chain(c, per_quantity.iter().map(|(_, e)| e[k]), rows))
            .collect(),
        quantities,
        slowest,
        min_ess_bulk,
        gradient_evaluations,
        seconds,
        ess_per_second: ratio(min_ess_bulk, seconds),
        ess_per_gradient: ratio(min_ess_bulk, gradient_evaluations as f64),
        separation,
    })
}

/// Quantities [`summarize_run`] gives each task: up to 16, but at least 4
/// tasks per thread so that the work still spreads over the threads for
/// few quantities.
fn quantities_per_task(count: usize, threads: usize) -> usize {
    (count / (4 * threads.max(1))).clamp(1, 16)
}

/// Each chain's `lp__` where it was computed (NaN marks a draw it was not
/// computed for; see [`ChainDraws::lp`]). Under `--lp every N` the values
/// are every N-th kept draw, itself a Markov chain (thinned), so its
/// diagnostics hold.
fn computed_lp(run: &RunDraws) -> Vec<Vec<f64>> {
    run.chains
        .iter()
        .map(|c| c.lp.iter().copied().filter(|v| !v.is_nan()).collect())
        .collect()
}

fn compare(stats: &Summary, known: &KnownPosterior, j: usize) -> Option<TruthComparison> {
    let mean = *known.mean.get(j)?;
    let sd = *known.sd.get(j)?;
    let reference =
        |mcse: &Option<Vec<f64>>| mcse.as_ref().and_then(|v| v.get(j).copied()).unwrap_or(0.0);
    let mean_error = stats.mcse_mean.hypot(reference(&known.mean_mcse));
    let sd_error = stats.mcse_sd.hypot(reference(&known.sd_mcse));
    Some(TruthComparison {
        mean,
        sd,
        z_mean: (stats.mean - mean) / mean_error,
        z_sd: (stats.sd - sd) / sd_error,
    })
}

/// `chain`'s statistics, given the single-chain bulk ESS of each quantity.
fn summarize_chain(
    chain: &ChainDraws,
    quantity_ess: impl Iterator<Item = f64>,
    rows: RowFacts,
) -> ChainSummary {
    let min_ess_bulk = quantity_ess
        .filter(|e| e.is_finite())
        .min_by(f64::total_cmp)
        .unwrap_or(f64::NAN);
    let seconds = chain.warmup_seconds + chain.sampling_seconds;
    ChainSummary {
        chain_id: chain.chain_id,
        seed: chain.seed,
        draws: chain.len(),
        acceptance_mean: crate::diagnostics::mean(&chain.accept_stat),
        divergences: chain.divergent.iter().filter(|&&d| d).count(),
        step_size_mean: crate::diagnostics::mean(&chain.step_size),
        gradient_evaluations: chain.gradient_evaluations,
        warmup_draws: chain.warmup_draws,
        warmup_seconds: chain.warmup_seconds,
        sampling_seconds: chain.sampling_seconds,
        lp_seconds: chain.lp_seconds,
        min_ess_bulk,
        ess_per_second: ratio(min_ess_bulk, seconds),
        ess_per_gradient: ratio(min_ess_bulk, chain.gradient_evaluations as f64),
        rows,
    }
}

/// a / b, NaN when b is not positive.
fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { f64::NAN }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::ess_bulk;

    /// A run of `chains` chains of `draws` draws of `width` quantities
    /// (deterministic, distinct values).
    fn run(width: usize, chains: usize, draws: usize) -> RunDraws {
        let mut state = 3_u64;
        RunDraws {
            names: (1..=width).map(|j| format!("x[{j}]")).collect(),
            chains: (0..chains)
                .map(|k| ChainDraws {
                    chain_id: k + 1,
                    lp: (0..draws).map(|i| -(i as f64).sin()).collect(),
                    values: (0..width * draws)
                        .map(|_| {
                            state = state
                                .wrapping_mul(6_364_136_223_846_793_005)
                                .wrapping_add(1_442_695_040_888_963_407);
                            (state >> 11) as f64 / (1_u64 << 53) as f64
                        })
                        .collect(),
                    ..ChainDraws::default()
                })
                .collect(),
            ..RunDraws::default()
        }
    }

    #[test]
    fn columns_are_chains_of() {
        let mut r = run(7, 3, 11);
        // A last row cut short: only its first quantities have the draw.
        r.chains[1].values.truncate(7 * 10 + 3);
        for range in [0..7, 0..1, 2..5, 6..7, 3..3] {
            let which: Vec<usize> = range.clone().collect();
            let got = infallible(InMemory.columns(&r, &which));
            let expected: Vec<Vec<Vec<f64>>> = range.map(|j| r.chains_of(j)).collect();
            assert_eq!(got, expected);
        }
    }

    #[test]
    fn grouped_tasks_give_each_quantitys_summary() {
        for width in [0, 1, 9, 70] {
            let r = run(width, 2, 40);
            let s = summarize_run(&r, None);
            assert_eq!(s.quantities.len(), width);
            for (j, q) in s.quantities.iter().enumerate() {
                let chains = r.chains_of(j);
                let slices: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
                assert_eq!(q.stats, summarize(&slices), "{width}: {j}");
            }
            for (k, c) in s.chains.iter().enumerate() {
                let min = (0..width)
                    .map(|j| ess_bulk(&[&r.chains_of(j)[k]]))
                    .min_by(f64::total_cmp)
                    .unwrap_or(f64::NAN);
                assert_eq!(
                    c.min_ess_bulk.to_bits(),
                    min.to_bits(),
                    "{width}: chain {k}"
                );
            }
            let lp: Vec<&[f64]> = r.chains.iter().map(|c| c.lp.as_slice()).collect();
            assert_eq!(s.lp, summarize(&lp));
        }
        assert!(quantities_per_task(1000, 2) == 16 && quantities_per_task(9, 2) == 1);
    }
}
