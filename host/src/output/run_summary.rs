//! The numbers both summaries print: per-quantity statistics (with the truth
//! beside them when known) and per-chain sampler statistics.

use crate::diagnostics::{Summary, available_threads, ess_bulk, parallel_map, summarize};
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
    let count = run.names.len();
    // Task j < count: quantity j's summary over all chains and its bulk ESS
    // in each chain alone; task `count`: lp__.
    let mut per_task: Vec<(Summary, Vec<f64>)> =
        parallel_map(count + 1, available_threads(), |j| {
            if j == count {
                let computed = computed_lp(run);
                let lp_slices: Vec<&[f64]> = computed.iter().map(Vec::as_slice).collect();
                return (summarize(&lp_slices), Vec::new());
            }
            let chains = run.chains_of(j);
            let slices: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
            let per_chain = slices.iter().map(|c| ess_bulk(&[c])).collect();
            (summarize(&slices), per_chain)
        });
    let (lp, _) = per_task.pop().expect("task `count` is lp__");
    let quantities: Vec<QuantitySummary> = per_task
        .iter()
        .enumerate()
        .map(|(j, (stats, _))| QuantitySummary {
            name: run.names[j].clone(),
            truth: known.and_then(|k| compare(stats, k, j)),
            stats: *stats,
        })
        .collect();

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
    RunSummary {
        lp,
        lp_computed: run
            .chains
            .iter()
            .map(|c| c.lp.iter().filter(|v| !v.is_nan()).count())
            .sum(),
        chains: run
            .chains
            .iter()
            .enumerate()
            .map(|(k, c)| summarize_chain(c, per_task.iter().map(|(_, e)| e[k])))
            .collect(),
        quantities,
        slowest,
        min_ess_bulk,
        gradient_evaluations,
        seconds,
        ess_per_second: ratio(min_ess_bulk, seconds),
        ess_per_gradient: ratio(min_ess_bulk, gradient_evaluations as f64),
    }
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
fn summarize_chain(chain: &ChainDraws, quantity_ess: impl Iterator<Item = f64>) -> ChainSummary {
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
    }
}

/// a / b, NaN when b is not positive.
fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { f64::NAN }
}
