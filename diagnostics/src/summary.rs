//! A stansummary-style row of statistics for one quantity.

use super::chains::{chunks, common_length, finite_and_varies, pooled};
use super::ess::{MIN_DRAWS, ess_bulk, ess_of_chains, tail_of_split};
use super::mcse::sd_error;
use super::rank_normalize::{Ranked, sort_total_order};
use super::rhat::rank_rhat_of_split;
use super::stats::{mean, quantile_sorted, variance};

/// Posterior summary of one scalar quantity over all chains, as printed by
/// CmdStan's `stansummary`.
///
/// Moments and quantiles pool every draw of every chain; the diagnostics are
/// NaN whenever their functions are (unequal chain lengths, too few draws,
/// non-finite or constant draws).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Mean of all draws.
    pub mean: f64,
    /// Standard deviation of all draws (N − 1 denominator).
    pub sd: f64,
    /// Bulk ESS, see [`ess_bulk`](super::ess_bulk).
    pub ess_bulk: f64,
    /// Tail ESS, see [`ess_tail`](super::ess_tail).
    pub ess_tail: f64,
    /// Rank-normalised split R̂, see
    /// [`rank_normalized_rhat`](super::rank_normalized_rhat).
    pub rhat: f64,
    /// Monte Carlo standard error of the mean, see
    /// [`mcse_mean`](crate::mcse_mean).
    pub mcse_mean: f64,
    /// Monte Carlo standard error of the sd, see
    /// [`mcse_sd`](crate::mcse_sd).
    pub mcse_sd: f64,
    /// 5% quantile of all draws (type 7, see [`quantile`](super::quantile)).
    pub q5: f64,
    /// Median of all draws (type 7).
    pub q50: f64,
    /// 95% quantile of all draws (type 7).
    pub q95: f64,
}

/// Computes the [`Summary`] of `chains` (one slice per chain).
///
/// With no draws at all, every field is NaN. Each field is, bit for bit, what
/// its own function ([`ess_bulk`](super::ess_bulk), …) returns; the split
/// chains, their rank normalisation and their sorted draws are computed once
/// and shared.
pub fn summarize(chains: &[&[f64]]) -> Summary {
    summarize_shared(chains, false).0
}

/// [`summarize`], and the bulk ESS of each chain alone: element k is, bit for
/// bit, [`ess_bulk`](super::ess_bulk)`(&[chains[k]])` (a chain's own
/// diagnostics, as `qnmc run` reports per chain).
///
/// When the chains are valid together, each chain's rank normalisation is
/// taken from the joint sort of all draws instead of sorting the chain again.
pub fn summarize_with_chain_ess(chains: &[&[f64]]) -> (Summary, Vec<f64>) {
    summarize_shared(chains, true)
}

/// [`summarize`], and with `per_chain` each chain's bulk ESS
/// ([`summarize_with_chain_ess`]).
///
/// One split, one rank normalisation and one sort serve the bulk and tail
/// ESS, R̂, the quantiles and the chains' own bulk ESS; the split chains
/// serve the MCSE of the mean; the pooled draws, their mean and variance
/// serve the moments and both MCSE. Each value is computed with the checks
/// and arithmetic of its own function.
fn summarize_shared(chains: &[&[f64]], per_chain: bool) -> (Summary, Vec<f64>) {
    let all = pooled(chains);
    let mean_all = mean(&all);
    let variance_all = variance(&all);
    // Every draw finite and no chain constant (both MCSE need it).
    let chains_vary = finite_and_varies(chains);
    let mut s = Summary {
        mean: mean_all,
        sd: variance_all.sqrt(),
        ess_bulk: f64::NAN,
        ess_tail: f64::NAN,
        rhat: f64::NAN,
        mcse_mean: f64::NAN,
        mcse_sd: f64::NAN,
        q5: f64::NAN,
        q50: f64::NAN,
        q95: f64::NAN,
    };
    let mut chain_ess = Vec::new();
    // The three quantiles, from all draws sorted (what `quantile(&all, p)`
    // gives).
    let quantiles = |sorted: &[f64]| [0.05, 0.5, 0.95].map(|p| quantile_sorted(sorted, p));
    let mut pooled_quantiles = None;
    // R̂ needs 2 draws per split chain; the ESS (and so the MCSE of the
    // mean) need MIN_DRAWS.
    if let Some(split) = super::rhat::checked_split(chains) {
        let ranked = Ranked::new(&split.draws);
        let sorted = ranked.sorted();
        s.rhat = rank_rhat_of_split(&split, &ranked, quantile_sorted(sorted, 0.5));
        if split.len >= MIN_DRAWS {
            s.ess_bulk = ess_of_chains(&chunks(&ranked.scores, split.len, split.count));
            s.ess_tail = tail_of_split(&split, sorted);
            if chains_vary {
                s.mcse_mean = (variance_all / ess_of_chains(&split.chains())).sqrt();
            }
            if per_chain {
                // Chain k's two halves are the block [2k·len, 2(k + 1)·len).
                let block = 2 * split.len;
                let scores = ranked.block_scores(block);
                chain_ess = scores
                    .chunks_exact(block)
                    .map(|c| ess_of_chains(&chunks(c, split.len, 2)))
                    .collect();
            }
        }
        // When no middle draw was dropped, the split chains hold exactly the
        // pooled draws.
        if sorted.len() == all.len() {
            pooled_quantiles = Some(quantiles(sorted));
        }
    }
    if per_chain && chain_ess.len() != chains.len() {
        chain_ess = chains.iter().map(|c| ess_bulk(&[c])).collect();
    }
    if common_length(chains, 2 * MIN_DRAWS).is_some() && chains_vary {
        s.mcse_sd = sd_error(&all, chains[0].len(), mean_all);
    }
    if pooled_quantiles.is_none() && !all.is_empty() && !all.iter().any(|v| v.is_nan()) {
        pooled_quantiles = Some(quantiles(&sort_total_order(&all)));
    }
    if let Some([q5, q50, q95]) = pooled_quantiles {
        (s.q5, s.q50, s.q95) = (q5, q50, q95);
    }
    (s, chain_ess)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_a_ramp() {
        let a: Vec<f64> = (0..50).map(f64::from).collect();
        let b: Vec<f64> = (50..100).map(f64::from).collect();
        let s = summarize(&[&a[..], &b[..]]);
        assert_eq!(s.mean, 49.5);
        // Variance of 0..=99 with N − 1: 100·101/12 = 841.666…
        assert!((s.sd - (10100.0_f64 / 12.0).sqrt()).abs() < 1e-12);
        assert_eq!(s.q50, 49.5);
        assert!((s.q5 - 4.95).abs() < 1e-12);
        assert!((s.q95 - 94.05).abs() < 1e-12);
        // Two disjoint, trending chains: badly mixed.
        assert!(s.rhat > 1.5, "{}", s.rhat);
        assert!(s.ess_bulk.is_finite() && s.mcse_mean > 0.0 && s.mcse_sd > 0.0);
    }

    /// Deterministic AR(1) chains of `n` draws.
    fn ar1_chains(chains: usize, n: usize, phi: f64, seed: u64) -> Vec<Vec<f64>> {
        let mut state = seed;
        (0..chains)
            .map(|_| {
                let mut x = 0.0;
                (0..n)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(1_442_695_040_888_963_407);
                        x = phi * x + ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5);
                        x
                    })
                    .collect()
            })
            .collect()
    }

    /// Every field of `s` and the chains' own bulk ESS `chain_ess` against
    /// the standalone functions, bit for bit.
    fn assert_each_functions_bits(chains: &[&[f64]], s: &Summary, chain_ess: &[f64], what: &str) {
        use crate::{ess_tail, mcse_mean, mcse_sd, quantile, rank_normalized_rhat};
        let all = pooled(chains);
        let got = [
            s.mean,
            s.sd,
            s.ess_bulk,
            s.ess_tail,
            s.rhat,
            s.mcse_mean,
            s.mcse_sd,
            s.q5,
            s.q50,
            s.q95,
        ];
        let expected = [
            mean(&all),
            variance(&all).sqrt(),
            ess_bulk(chains),
            ess_tail(chains),
            rank_normalized_rhat(chains),
            mcse_mean(chains),
            mcse_sd(chains),
            quantile(&all, 0.05),
            quantile(&all, 0.5),
            quantile(&all, 0.95),
        ];
        assert_eq!(
            got.map(f64::to_bits),
            expected.map(f64::to_bits),
            "{what}: {got:?} vs {expected:?}"
        );
        let expected: Vec<u64> = chains.iter().map(|c| ess_bulk(&[c]).to_bits()).collect();
        let got: Vec<u64> = chain_ess.iter().map(|e| e.to_bits()).collect();
        assert_eq!(got, expected, "{what}: each chain's bulk ESS");
        assert_eq!(
            got_bits(&summarize(chains)),
            got_bits(s),
            "{what}: summarize"
        );
    }

    fn got_bits(s: &Summary) -> [u64; 10] {
        [
            s.mean,
            s.sd,
            s.ess_bulk,
            s.ess_tail,
            s.rhat,
            s.mcse_mean,
            s.mcse_sd,
            s.q5,
            s.q50,
            s.q95,
        ]
        .map(f64::to_bits)
    }

    #[test]
    fn shared_work_gives_each_functions_bits() {
        use crate::{ess_tail, quantile, rank_normalized_rhat};
        // Lengths around the thresholds (4 per chain for R̂, 8 for the ESS),
        // odd lengths, one and several chains, and ties.
        for (chains, n) in [(1, 4), (1, 7), (1, 8), (2, 9), (4, 101), (3, 1000)] {
            for phi in [0.0, 0.9] {
                let mut c = ar1_chains(chains, n, phi, 17 + n as u64);
                if n > 50 {
                    c[0][3] = c[0][5]; // a tie
                }
                let slices: Vec<&[f64]> = c.iter().map(Vec::as_slice).collect();
                let s = summarize(&slices);
                let all = pooled(&slices);
                let expected = [
                    ess_bulk(&slices),
                    ess_tail(&slices),
                    rank_normalized_rhat(&slices),
                    quantile(&all, 0.05),
                    quantile(&all, 0.5),
                    quantile(&all, 0.95),
                ];
                assert_eq!(
                    [s.ess_bulk, s.ess_tail, s.rhat, s.q5, s.q50, s.q95].map(f64::to_bits),
                    expected.map(f64::to_bits),
                    "{chains} × {n}, φ = {phi}: {s:?} vs {expected:?}"
                );
                assert_eq!(s.rhat.is_nan(), n < 4);
                assert_eq!(s.ess_bulk.is_nan(), n < 8);
                let (with, chain_ess) = summarize_with_chain_ess(&slices);
                assert_eq!(got_bits(&with), got_bits(&s));
                assert_each_functions_bits(&slices, &with, &chain_ess, &format!("{chains} × {n}"));
            }
        }
        // Chains valid alone but not together, or only some of them: a
        // chain with a constant half, one with an infinite draw, chains of
        // different lengths.
        for case in 0..3 {
            let mut c = ar1_chains(3, 40, 0.5, 9);
            match case {
                0 => c[1][..20].fill(1.5),
                1 => c[2][30] = f64::INFINITY,
                _ => c[0].truncate(30),
            }
            let slices: Vec<&[f64]> = c.iter().map(Vec::as_slice).collect();
            let (s, chain_ess) = summarize_with_chain_ess(&slices);
            assert!(
                s.ess_bulk.is_nan() && chain_ess[0].is_finite(),
                "case {case}"
            );
            assert_each_functions_bits(&slices, &s, &chain_ess, &format!("case {case}"));
        }
        // Invalid draws: the rank diagnostics are NaN, the quantiles are NaN
        // only with a NaN draw, and a constant chain is not "valid" either.
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let mut c = ar1_chains(3, 40, 0.5, 5);
            c[1][10] = bad;
            let slices: Vec<&[f64]> = c.iter().map(Vec::as_slice).collect();
            let s = summarize(&slices);
            let all = pooled(&slices);
            assert!(s.ess_bulk.is_nan() && s.ess_tail.is_nan() && s.rhat.is_nan());
            assert_eq!(s.q95.to_bits(), quantile(&all, 0.95).to_bits(), "{bad}");
            assert_eq!(s.q5.is_nan(), bad.is_nan());
        }
        let c = [[2.0; 20], [2.0; 20]];
        let slices: Vec<&[f64]> = c.iter().map(|x| &x[..]).collect();
        let s = summarize(&slices);
        assert!(s.rhat.is_nan() && s.ess_bulk.is_nan() && s.q50 == 2.0);
    }

    #[test]
    fn summary_of_nothing_is_nan() {
        let s = summarize(&[]);
        for v in [
            s.mean,
            s.sd,
            s.ess_bulk,
            s.ess_tail,
            s.rhat,
            s.mcse_mean,
            s.mcse_sd,
            s.q5,
            s.q50,
            s.q95,
        ] {
            assert!(v.is_nan());
        }
    }
}
