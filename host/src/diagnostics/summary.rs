//! A stansummary-style row of statistics for one quantity.

use super::chains::pooled;
use super::ess::{MIN_DRAWS, ess_of_chains, tail_of_split};
use super::mcse::{mcse_mean, mcse_sd};
use super::rank_normalize::rank_normalize_sorted;
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
    /// [`mcse_mean`].
    pub mcse_mean: f64,
    /// Monte Carlo standard error of the sd, see [`mcse_sd`].
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
    let all = pooled(chains);
    let ranks = rank_diagnostics(chains);
    // What `quantile(&all, p)` gives, with one sort for the three. When no
    // middle draw was dropped, the split chains hold exactly these draws.
    let sorted_all = match ranks.sorted_split {
        Some(sorted) if sorted.len() == all.len() => Some(sorted),
        _ => (!all.is_empty() && !all.iter().any(|v| v.is_nan())).then(|| {
            let mut sorted = all.clone();
            sorted.sort_by(f64::total_cmp);
            sorted
        }),
    };
    let pooled_quantile = |p: f64| {
        sorted_all
            .as_deref()
            .map_or(f64::NAN, |s| quantile_sorted(s, p))
    };
    Summary {
        mean: mean(&all),
        sd: variance(&all).sqrt(),
        ess_bulk: ranks.ess_bulk,
        ess_tail: ranks.ess_tail,
        rhat: ranks.rhat,
        mcse_mean: mcse_mean(chains),
        mcse_sd: mcse_sd(chains),
        q5: pooled_quantile(0.05),
        q50: pooled_quantile(0.5),
        q95: pooled_quantile(0.95),
    }
}

/// The diagnostics built on the split chains.
struct RankDiagnostics {
    ess_bulk: f64,
    ess_tail: f64,
    rhat: f64,
    /// All split draws sorted by `f64::total_cmp`, when the split chains were
    /// valid.
    sorted_split: Option<Vec<f64>>,
}

/// [`ess_bulk`](super::ess_bulk), [`ess_tail`](super::ess_tail) and
/// [`rank_normalized_rhat`](super::rank_normalized_rhat) of `chains`, with
/// the same checks and arithmetic as those functions but one split, one rank
/// normalisation and one sort between them.
fn rank_diagnostics(chains: &[&[f64]]) -> RankDiagnostics {
    let mut out = RankDiagnostics {
        ess_bulk: f64::NAN,
        ess_tail: f64::NAN,
        rhat: f64::NAN,
        sorted_split: None,
    };
    // R̂ needs 2 draws per split chain; the ESS need MIN_DRAWS.
    let Some(split) = super::rhat::checked_split(chains) else {
        return out;
    };
    let (ranked, sorted) = rank_normalize_sorted(&split);
    out.rhat = rank_rhat_of_split(&split, &ranked, quantile_sorted(&sorted, 0.5));
    if split[0].len() >= MIN_DRAWS {
        out.ess_bulk = ess_of_chains(&ranked);
        out.ess_tail = tail_of_split(&split, &sorted);
    }
    out.sorted_split = Some(sorted);
    out
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

    #[test]
    fn shared_work_gives_each_functions_bits() {
        use crate::diagnostics::{ess_bulk, ess_tail, quantile, rank_normalized_rhat};
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
            }
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
