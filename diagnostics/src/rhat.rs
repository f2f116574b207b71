//! Potential scale reduction R̂: the basic split R̂ (Gelman et al., BDA3) and
//! the rank-normalised R̂ of Vehtari et al. (2021).
//!
//! For M chains of N draws, with chain means x̄ₘ and grand mean x̄:
//!
//! - B = N/(M − 1) Σₘ (x̄ₘ − x̄)² (between-chain variance);
//! - W = (1/M) Σₘ sₘ², sₘ² the within-chain sample variance (N − 1 denominator);
//! - R̂ = √(((N − 1)/N·W + B/N) / W).
//!
//! Both R̂ here are computed on split chains, so even a single input chain
//! gives two chains to compare.

use super::chains::{Split, chunks, common_length, finite_and_varies, split_chains};
use super::ess::MIN_DRAWS;
use super::rank_normalize::Ranked;
use super::stats::{mean, quantile_sorted};

/// Stan's `rhat` on already checked chains (≥ 2 chains of ≥ 2 draws each).
fn rhat_of_chains<C: AsRef<[f64]>>(chains: &[C]) -> f64 {
    let m = chains.len() as f64;
    let n = chains[0].as_ref().len() as f64;
    let means: Vec<f64> = chains.iter().map(|c| mean(c.as_ref())).collect();
    let grand_mean = mean(&means);
    let between = n * means.iter().map(|x| (x - grand_mean).powi(2)).sum::<f64>() / (m - 1.0);
    let within = chains
        .iter()
        .zip(&means)
        .map(|(c, &cm)| c.as_ref().iter().map(|x| (x - cm).powi(2)).sum::<f64>() / (n - 1.0))
        .sum::<f64>()
        / m;
    ((between / within + n - 1.0) / n).sqrt()
}

/// Split chains if valid for R̂ (≥ 4 draws per chain, equal lengths, finite,
/// no constant half chain).
pub(crate) fn checked_split(chains: &[&[f64]]) -> Option<Split> {
    common_length(chains, MIN_DRAWS)?;
    let split = split_chains(chains);
    finite_and_varies(&split.chains()).then_some(split)
}

/// Basic split R̂: R̂ of the split chains, no rank normalisation (Stan's
/// `rhat(split_chains(...))`, the "basic" R̂ of stansummary, formerly
/// `compute_split_potential_scale_reduction`).
///
/// NaN if there are no chains, lengths differ, a chain has fewer than 4
/// draws, a draw is not finite, or a half chain is constant.
pub fn split_rhat(chains: &[&[f64]]) -> f64 {
    match checked_split(chains) {
        Some(split) => rhat_of_chains(&split.chains()),
        None => f64::NAN,
    }
}

/// Rank-normalised split R̂ (Vehtari et al. 2021): the larger of the bulk R̂
/// (R̂ of the rank-normalised split chains) and the tail R̂ (R̂ of the
/// rank-normalised folded split chains |x − median|, the median taken over all
/// split draws). NaN if either is NaN.
///
/// NaN under the same conditions as [`split_rhat`].
pub fn rank_normalized_rhat(chains: &[&[f64]]) -> f64 {
    let Some(split) = checked_split(chains) else {
        return f64::NAN;
    };
    let ranked = Ranked::new(&split.draws);
    let median = quantile_sorted(ranked.sorted(), 0.5);
    rank_rhat_of_split(&split, &ranked, median)
}

/// [`rank_normalized_rhat`] of split chains already checked (equal lengths of
/// at least 2, finite, none constant), given their joint rank normalisation
/// `ranked` and the median of all their draws. The folded draws are ranked
/// from `ranked`'s order ([`Ranked::folded_scores`]), not sorted again.
pub(crate) fn rank_rhat_of_split(split: &Split, ranked: &Ranked, median: f64) -> f64 {
    let bulk = rhat_of_chains(&chunks(&ranked.scores, split.len, split.count));
    let folded = ranked.folded_scores(median);
    let tail = rhat_of_chains(&chunks(&folded, split.len, split.count));
    if bulk.is_nan() || tail.is_nan() {
        f64::NAN
    } else {
        bulk.max(tail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_split_rhat() {
        // One chain 0 1 2 3 4 5 6 7 → halves (0 1 2 3), (4 5 6 7):
        // means 1.5, 5.5; N = 4; B = 4·(2² + 2²)/1 = 32; W = 5/3.
        // R̂ = √((32/(5/3) + 3)/4) = √(22.2/4).
        let x: Vec<f64> = (0..8).map(f64::from).collect();
        let expected = (22.2_f64 / 4.0).sqrt();
        assert!((split_rhat(&[&x[..]]) - expected).abs() < 1e-14);
    }

    #[test]
    fn identical_halves_give_rhat_below_one() {
        // Two identical halves: B = 0, R̂ = √((N − 1)/N).
        let x = [1.0, 3.0, 2.0, 5.0, 1.0, 3.0, 2.0, 5.0];
        let expected = (3.0_f64 / 4.0).sqrt();
        assert!((split_rhat(&[&x[..]]) - expected).abs() < 1e-15);
        // Ranks are identical too, and so are the folded ranks.
        assert!((rank_normalized_rhat(&[&x[..]]) - expected).abs() < 1e-15);
    }

    #[test]
    fn shifted_chains_have_large_rank_rhat() {
        let a: Vec<f64> = (0..100).map(|i| (i as f64 * 0.7).sin()).collect();
        let b: Vec<f64> = a.iter().map(|x| x + 3.0).collect();
        let r = rank_normalized_rhat(&[&a[..], &b[..]]);
        assert!(r > 1.5, "{r}");
    }

    #[test]
    fn invalid_input_is_nan() {
        let x = [1.0, 2.0, 3.0];
        assert!(split_rhat(&[&x[..]]).is_nan());
        assert!(rank_normalized_rhat(&[&x[..]]).is_nan());
        let c = [1.0; 10];
        assert!(split_rhat(&[&c[..]]).is_nan());
        assert!(split_rhat(&[]).is_nan());
    }
}
