//! Monte Carlo standard errors of the posterior mean and standard deviation.
//!
//! - mean: √(s²/E), s² the sample variance of all draws (N − 1 denominator)
//!   and E the basic ESS of the *split* chains
//!   ([`ess_basic_split`](super::ess_basic_split), posterior's `ess_mean`);
//! - sd: with centred draws d = |x − x̄| (x̄ over all draws), m₂ = mean(d²),
//!   m₄ = mean(d⁴) and E the basic ESS of the *split* d-chains,
//!   Var(σ̂²) ≈ (m₄ − m₂²)/E (Kenney & Keeping 1951) and, by the delta
//!   method, MCSE(σ̂) = √(Var(σ̂²)/(4 m₂)).
//!
//! These are the definitions of the R package posterior between versions 1.2
//! and 1.3 (2022), which produced Stan's reference values for its `bern` test
//! data (see `tests/golden.rs`). Stan's C++ `mcse_sd` is the same;
//! Stan's C++ `mcse_mean` instead divides by the ESS of the *unsplit* chains,
//! which stays within Stan's 10⁻⁴ test tolerance but does not reproduce the
//! printed digits (0.02021 vs 0.02016 for `lp__`); the split version
//! reproduces them exactly.
//!
//! For the sd no single definition reproduces both printed reference values
//! (0.03553 for `lp__`, 0.00216 for `theta`): the ESS of |x − x̄| used here
//! gives 0.035530 and 0.002197, while posterior ≥ 1.4's ESS of (x − x̄)² gives
//! 0.030890 and 0.002164. Only the former is within Stan's 10⁻⁴ tolerance
//! for both, and it is what Stan's C++ computes.

use super::chains::{common_length, finite_and_varies, pooled};
use super::ess::{MIN_DRAWS, checked_split, ess_of_chains};
use super::stats::{mean, variance};

/// Monte Carlo standard error of the mean: sd(all draws)/√(basic ESS of the
/// split chains), i.e. sd/√[`ess_basic_split`](super::ess_basic_split).
///
/// NaN if there are no chains, lengths differ, a chain has fewer than 8
/// draws (the split ESS needs 4 per half), a draw is not finite, or a chain
/// or half chain is constant.
pub fn mcse_mean(chains: &[&[f64]]) -> f64 {
    if !finite_and_varies(chains) {
        return f64::NAN;
    }
    match checked_split(chains) {
        Some(split) => (variance(&pooled(chains)) / ess_of_chains(&split.chains())).sqrt(),
        None => f64::NAN,
    }
}

/// Monte Carlo standard error of the standard deviation, by the delta method
/// from the variance of the second central moment, with the ESS of
/// |x − x̄| on split chains.
///
/// NaN if there are no chains, lengths differ, a chain has fewer than 8
/// draws (the split ESS needs 4 per half), a draw is not finite, or a chain is
/// constant.
pub fn mcse_sd(chains: &[&[f64]]) -> f64 {
    if common_length(chains, 2 * MIN_DRAWS).is_none() || !finite_and_varies(chains) {
        return f64::NAN;
    }
    let all = pooled(chains);
    sd_error(&all, chains[0].len(), mean(&all))
}

/// [`mcse_sd`] of chains already checked, given all their draws `all`
/// (chains of `n` draws, one after another) and the mean of `all`.
pub(crate) fn sd_error(all: &[f64], n: usize, grand_mean: f64) -> f64 {
    let centred: Vec<f64> = all.iter().map(|x| (x - grand_mean).abs()).collect();
    // The split centred chains, as views.
    let (half, tail_start) = (n / 2, n.div_ceil(2));
    let split: Vec<&[f64]> = centred
        .chunks_exact(n)
        .flat_map(|c| [&c[..half], &c[tail_start..tail_start + half]])
        .collect();
    let ess = ess_of_chains(&split);
    let m2 = centred.iter().map(|d| d * d).sum::<f64>() / centred.len() as f64;
    let m4 = centred.iter().map(|d| (d * d) * (d * d)).sum::<f64>() / centred.len() as f64;
    let var_of_var = (m4 - m2 * m2) / ess;
    (var_of_var / m2 / 4.0).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn independent_draws_give_textbook_errors() {
        // For (nearly) independent draws MCSE(mean) ≈ σ/√S and, for a uniform
        // distribution, MCSE(sd) ≈ √((m₄ − m₂²)/(4 m₂ S)) with m₂ = 1/12 and
        // m₄ = 1/80 on (−½, ½).
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let chains: Vec<Vec<f64>> = (0..4)
            .map(|_| (0..5000).map(|_| next()).collect())
            .collect();
        let views: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
        let s = 20_000.0;
        let expected_mean = (1.0_f64 / 12.0 / s).sqrt();
        let got_mean = mcse_mean(&views);
        assert!(
            (got_mean / expected_mean - 1.0).abs() < 0.1,
            "{got_mean} vs {expected_mean}"
        );
        let (m2, m4) = (1.0 / 12.0, 1.0 / 80.0);
        let expected_sd = ((m4 - m2 * m2) / (4.0 * m2 * s)).sqrt();
        let got_sd = mcse_sd(&views);
        assert!(
            (got_sd / expected_sd - 1.0).abs() < 0.1,
            "{got_sd} vs {expected_sd}"
        );
    }

    #[test]
    fn invalid_input_is_nan() {
        let x = [1.0, 2.0, 3.0];
        assert!(mcse_mean(&[&x[..]]).is_nan());
        assert!(mcse_sd(&[&x[..]]).is_nan());
        let y = [1.0, 2.0, f64::NEG_INFINITY, 4.0, 5.0, 6.0, 7.0, 8.0];
        assert!(mcse_mean(&[&y[..]]).is_nan());
        assert!(mcse_sd(&[&y[..]]).is_nan());
    }
}
