//! A stansummary-style row of statistics for one quantity.

use super::chains::pooled;
use super::ess::{ess_bulk, ess_tail};
use super::mcse::{mcse_mean, mcse_sd};
use super::rhat::rank_normalized_rhat;
use super::stats::{mean, quantile, variance};

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
    /// Bulk ESS, see [`ess_bulk`].
    pub ess_bulk: f64,
    /// Tail ESS, see [`ess_tail`].
    pub ess_tail: f64,
    /// Rank-normalised split R̂, see
    /// [`rank_normalized_rhat`].
    pub rhat: f64,
    /// Monte Carlo standard error of the mean, see
    /// [`mcse_mean`].
    pub mcse_mean: f64,
    /// Monte Carlo standard error of the sd, see [`mcse_sd`].
    pub mcse_sd: f64,
    /// 5% quantile of all draws (type 7, see [`quantile`]).
    pub q5: f64,
    /// Median of all draws (type 7).
    pub q50: f64,
    /// 95% quantile of all draws (type 7).
    pub q95: f64,
}

/// Computes the [`Summary`] of `chains` (one slice per chain).
///
/// With no draws at all, every field is NaN.
pub fn summarize(chains: &[&[f64]]) -> Summary {
    let all = pooled(chains);
    Summary {
        mean: mean(&all),
        sd: variance(&all).sqrt(),
        ess_bulk: ess_bulk(chains),
        ess_tail: ess_tail(chains),
        rhat: rank_normalized_rhat(chains),
        mcse_mean: mcse_mean(chains),
        mcse_sd: mcse_sd(chains),
        q5: quantile(&all, 0.05),
        q50: quantile(&all, 0.5),
        q95: quantile(&all, 0.95),
    }
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
