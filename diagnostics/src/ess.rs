//! Effective sample size (ESS): the multi-chain Geyer estimator of Stan
//! (Vehtari, Gelman, Simpson, Carpenter & Bürkner 2021) and its bulk, tail,
//! basic and split variants.
//!
//! For M chains of N draws with autocovariances γ̂ₖ⁽ᵐ⁾ (biased, see
//! [`autocovariance`]):
//!
//! - W = mean over chains of the sample variances sₘ² = γ̂₀⁽ᵐ⁾·N/(N − 1);
//! - var⁺ = W·(N − 1)/N + B/N, where B/N is the sample variance of the chain
//!   means (omitted for a single chain);
//! - ρ̂ₖ = 1 − (W − mean over chains of γ̂ₖ⁽ᵐ⁾)/var⁺.
//!
//! The ρ̂ₖ are summed in pairs (ρ̂₂ₜ, ρ̂₂ₜ₊₁) while a pair's sum is positive
//! (Geyer's initial positive sequence, stopping before lag N − 4), each pair
//! being capped at the previous pair's mean (initial monotone sequence). With
//! t̂ the first lag not used, τ̂ = −1 + 2 Σ_{k<t̂} ρ̂ₖ + ρ̂_{t̂+1}⁺, where the
//! last term is the first unused even-lag ρ̂ if positive (this reduces the
//! variance for antithetic chains). τ̂ is bounded below by 1/log₁₀(MN), so the
//! ESS = MN/τ̂ never exceeds MN·log₁₀(MN).

use super::autocorrelation::autocovariance;
use super::chains::{Split, chunks, common_length, finite_and_varies, split_chains};
use super::rank_normalize::{Ranked, sort_total_order};
use super::stats::{mean, quantile_sorted, variance};

/// Minimum draws per chain for [`ess_basic`], and per *split* chain for the
/// split variants (so those need twice as many draws per input chain).
pub(crate) const MIN_DRAWS: usize = 4;

/// Stan's `ess` on chains already checked (≥ 1 chain, common length ≥ 4).
///
/// Does not check for constant or non-finite input (like Stan's function); a
/// zero var⁺ gives whatever the arithmetic gives.
///
/// The autocovariances are first summed directly, one lag at a time, because
/// Geyer's sequence usually stops after a few lags (at lag ≈ 2 for draws as
/// good as independent) and each direct lag costs n multiply-adds where the
/// FFT of all lags costs ~100·n. Only when the sequence runs past
/// [`DIRECT_LAGS`] lags are all lags computed by FFT ([`autocovariance`]) and
/// the sum started again from them, with the chain means of [`mean`]: that
/// path gives the numbers of an FFT-only computation bit for bit.
///
/// The direct path sums the chain means and each lag's products in
/// [`LANES`] interleaved partial sums ([`sum_lanes`], [`lagged_dot`]), which
/// the compiler turns into vector instructions, rather than one running
/// sum, whose additions wait on each other. That changes the order of the
/// additions, so its ESS differs from one-sum arithmetic (and from the FFT)
/// by round-off only: ~10⁻¹⁶ relative on the autocovariances, ≤ 10⁻¹² on the
/// ESS (see the tests).
pub(crate) fn ess_of_chains<C: AsRef<[f64]>>(chains: &[C]) -> f64 {
    let n = chains[0].as_ref().len();
    debug_assert!(!chains.is_empty() && n >= MIN_DRAWS);
    let nf = n as f64;
    let chain_means: Vec<f64> = chains.iter().map(|c| sum_lanes(c.as_ref()) / nf).collect();
    let mut centred = Vec::with_capacity(chains.len() * n);
    for (c, m) in chains.iter().zip(&chain_means) {
        centred.extend(c.as_ref().iter().map(|x| x - m));
    }
    let direct = |chain: usize, lag: usize| -> Option<f64> {
        (lag < DIRECT_LAGS).then(|| lagged_dot(&centred[chain * n..(chain + 1) * n], lag) / nf)
    };
    if let Some(ess) = geyer_ess(chains.len(), n, &chain_means, direct) {
        return ess;
    }
    let chain_means: Vec<f64> = chains.iter().map(|c| mean(c.as_ref())).collect();
    let acov: Vec<Vec<f64>> = chains.iter().map(|c| autocovariance(c.as_ref())).collect();
    geyer_ess(chains.len(), n, &chain_means, |chain, lag| {
        Some(acov[chain][lag])
    })
    .unwrap_or(f64::NAN)
}

/// Partial sums kept by [`sum_lanes`] and [`lagged_dot`]: enough
/// independent additions in flight to keep a vector adder busy.
const LANES: usize = 8;

/// Σ xᵢ, in [`LANES`] partial sums (xᵢ going to sum i mod [`LANES`]) added
/// pairwise at the end, the draws past the last whole group of
/// [`LANES`] last.
fn sum_lanes(x: &[f64]) -> f64 {
    let groups = x.chunks_exact(LANES);
    let rest: f64 = groups.remainder().iter().sum();
    let mut acc = [0.0; LANES];
    for g in groups {
        for (a, v) in acc.iter_mut().zip(g) {
            *a += v;
        }
    }
    combine(acc) + rest
}

/// Σ_{i < n − lag} xᵢ·x_{i+lag}, in [`LANES`] partial sums as [`sum_lanes`].
fn lagged_dot(x: &[f64], lag: usize) -> f64 {
    let (a, b) = (&x[..x.len() - lag], &x[lag..]);
    let (ga, gb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let rest: f64 = ga
        .remainder()
        .iter()
        .zip(gb.remainder())
        .map(|(p, q)| p * q)
        .sum();
    let mut acc = [0.0; LANES];
    for (p, q) in ga.zip(gb) {
        for ((s, u), v) in acc.iter_mut().zip(p).zip(q) {
            *s += u * v;
        }
    }
    combine(acc) + rest
}

/// The [`LANES`] partial sums added pairwise: sum i to sum i + 4, then
/// (0 + 2) + (1 + 3). (That order keeps the halves in vector registers;
/// (0 + 1) + (2 + 3) … made the compiler shuffle the sums in the loop, 1.4×
/// slower.)
fn combine(acc: [f64; LANES]) -> f64 {
    let mut half = [0.0; LANES / 2];
    for (i, h) in half.iter_mut().enumerate() {
        *h = acc[i] + acc[i + LANES / 2];
    }
    (half[0] + half[2]) + (half[1] + half[3])
}

/// Lags summed directly by [`ess_of_chains`] before it turns to the FFT.
const DIRECT_LAGS: usize = 40;

/// The ESS from the autocovariances `acov(chain, lag)` (γ̂ of the module
/// documentation) of `num_chains` chains of `n` draws with means
/// `chain_means`; `None` as soon as `acov` returns `None` for a lag the
/// sequence needs.
fn geyer_ess(
    num_chains: usize,
    n: usize,
    chain_means: &[f64],
    acov: impl Fn(usize, usize) -> Option<f64>,
) -> Option<f64> {
    let nf = n as f64;
    let mut within = 0.0;
    for chain in 0..num_chains {
        within += acov(chain, 0)? * nf / (nf - 1.0);
    }
    within /= num_chains as f64;
    let mut var_plus = within * (nf - 1.0) / nf;
    if num_chains > 1 {
        var_plus += variance(chain_means);
    }
    let rho_at = |lag: usize| -> Option<f64> {
        let mut sum = 0.0;
        for chain in 0..num_chains {
            sum += acov(chain, lag)?;
        }
        Some(1.0 - (within - sum / num_chains as f64) / var_plus)
    };

    let mut rho = vec![0.0; n];
    let mut rho_even = 1.0;
    let mut rho_odd = rho_at(1)?;
    rho[0] = rho_even;
    rho[1] = rho_odd;

    // Initial positive sequence, made monotone on the fly.
    let mut t = 1;
    while t < n - 4 && rho_even + rho_odd > 0.0 {
        rho_even = rho_at(t + 1)?;
        rho_odd = rho_at(t + 2)?;
        if rho_even + rho_odd >= 0.0 {
            rho[t + 1] = rho_even;
            rho[t + 2] = rho_odd;
        }
        if rho[t + 1] + rho[t + 2] > rho[t - 1] + rho[t] {
            rho[t + 1] = (rho[t - 1] + rho[t]) / 2.0;
            rho[t + 2] = rho[t + 1];
        }
        t += 2;
    }
    let max_t = t;
    if rho_even > 0.0 {
        rho[max_t + 1] = rho_even;
    }

    let total = (num_chains * n) as f64;
    let tau = -1.0 + 2.0 * rho[..max_t].iter().sum::<f64>() + rho[max_t + 1];
    if tau.is_nan() {
        return Some(f64::NAN);
    }
    Some(total / tau.max(1.0 / total.log10()))
}

/// Split chains if `chains` is valid for a split diagnostic (≥ 4 draws per
/// half, equal lengths, finite, no constant half); `None` otherwise.
pub(crate) fn checked_split(chains: &[&[f64]]) -> Option<Split> {
    common_length(chains, 2 * MIN_DRAWS)?;
    let split = split_chains(chains);
    finite_and_varies(&split.chains()).then_some(split)
}

/// Basic ESS on the chains as given: no splitting, no rank normalisation
/// (Stan's `ess`, the "basic" ESS of stansummary).
///
/// NaN if there are no chains, lengths differ, a chain has fewer than 4
/// draws, a draw is not finite, or a chain is constant.
pub fn ess_basic(chains: &[&[f64]]) -> f64 {
    if common_length(chains, MIN_DRAWS).is_none() || !finite_and_varies(chains) {
        return f64::NAN;
    }
    ess_of_chains(chains)
}

/// Basic ESS on split chains (each chain cut in half, the middle draw dropped
/// for odd lengths), without rank normalisation — what the R package
/// posterior calls `ess_mean`.
///
/// NaN if there are no chains, lengths differ, a chain has fewer than 8 draws
/// (4 per half), a draw is not finite, or a half chain is constant.
pub fn ess_basic_split(chains: &[&[f64]]) -> f64 {
    match checked_split(chains) {
        Some(split) => ess_of_chains(&split.chains()),
        None => f64::NAN,
    }
}

/// Bulk ESS: ESS of the rank-normalised split chains (Vehtari et al. 2021;
/// Stan ≥ 2.26, posterior's `ess_bulk`).
///
/// NaN under the same conditions as [`ess_basic_split`].
pub fn ess_bulk(chains: &[&[f64]]) -> f64 {
    match checked_split(chains) {
        Some(split) => {
            let ranked = Ranked::new(&split.draws);
            ess_of_chains(&chunks(&ranked.scores, split.len, split.count))
        }
        None => f64::NAN,
    }
}

/// Tail ESS: the smaller of the split-chain ESS of the indicators
/// I(x ≤ q₀.₀₅) and I(x ≥ q₀.₉₅), the quantiles (type 7) taken over all split
/// draws. (I(x ≥ q₀.₉₅) is Stan's choice; it differs from posterior's
/// I(x ≤ q₀.₉₅) only through draws equal to q₀.₉₅, and an indicator and its
/// complement have the same ESS.) If one of the two is NaN the other is
/// returned.
///
/// NaN under the same conditions as [`ess_basic_split`].
pub fn ess_tail(chains: &[&[f64]]) -> f64 {
    let Some(split) = checked_split(chains) else {
        return f64::NAN;
    };
    tail_of_split(&split, &sort_total_order(&split.draws))
}

/// [`ess_tail`] of split chains already checked ([`checked_split`]), given
/// all their draws sorted (by `f64::total_cmp`).
pub(crate) fn tail_of_split(split: &Split, sorted: &[f64]) -> f64 {
    let q05 = quantile_sorted(sorted, 0.05);
    let q95 = quantile_sorted(sorted, 0.95);
    let indicator_ess = |keep: &dyn Fn(f64) -> bool| -> f64 {
        let indicator: Vec<f64> = split
            .draws
            .iter()
            .map(|&v| if keep(v) { 1.0 } else { 0.0 })
            .collect();
        ess_of_chains(&chunks(&indicator, split.len, split.count))
    };
    let lower = indicator_ess(&|v| v <= q05);
    let upper = indicator_ess(&|v| v >= q95);
    match (lower.is_nan(), upper.is_nan()) {
        (true, _) => upper,
        (_, true) => lower,
        _ => lower.min(upper),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random uniforms in (−½, ½).
    fn uniforms(seed: u64, n: usize) -> Vec<f64> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            })
            .collect()
    }

    /// [`ess_of_chains`] with every lag from the FFT, as before the direct
    /// sums.
    fn ess_by_fft(chains: &[Vec<f64>]) -> f64 {
        let means: Vec<f64> = chains.iter().map(|c| mean(c)).collect();
        let acov: Vec<Vec<f64>> = chains.iter().map(|c| autocovariance(c)).collect();
        geyer_ess(chains.len(), chains[0].len(), &means, |c, lag| {
            Some(acov[c][lag])
        })
        .unwrap()
    }

    #[test]
    fn direct_lags_give_the_fft_ess_to_round_off() {
        // AR(1) chains from independent (φ = 0) to sticky (φ = 0.99, whose
        // sequence runs past DIRECT_LAGS and takes the FFT path), and an
        // antithetic one (φ = −0.6); lengths around the minimum and odd.
        for (phi, n) in [
            (0.0, 4),
            (0.0, 9),
            (0.0, 500),
            (-0.6, 500),
            (0.5, 333),
            (0.9, 500),
            (0.99, 1000),
        ] {
            let chains: Vec<Vec<f64>> = (0..4)
                .map(|k| {
                    let mut x = 0.0;
                    uniforms(k + 7, n)
                        .into_iter()
                        .map(|u| {
                            x = phi * x + u;
                            x
                        })
                        .collect()
                })
                .collect();
            let (got, want) = (ess_of_chains(&chains), ess_by_fft(&chains));
            assert!(
                (got - want).abs() <= 1e-12 * want,
                "φ = {phi}, n = {n}: {got} vs {want}"
            );
            if phi == 0.99 {
                assert_eq!(got.to_bits(), want.to_bits(), "the FFT path");
            }
        }
    }

    #[test]
    fn lane_sums_are_the_plain_sums() {
        for n in [0_usize, 1, 7, 8, 9, 15, 16, 17, 100, 1001] {
            // Small integers: every partial sum is exact, so the lanes give
            // the one-sum result bit for bit whatever the order.
            let x: Vec<f64> = (0..n).map(|i| ((i * 7919) % 23) as f64 - 11.0).collect();
            assert_eq!(sum_lanes(&x), x.iter().sum::<f64>(), "n = {n}");
            // Draws: equal to round-off.
            let u = uniforms(n as u64 + 1, n);
            let plain: f64 = u.iter().sum();
            assert!((sum_lanes(&u) - plain).abs() <= 1e-15 * n as f64, "n = {n}");
            for lag in [0, 1, 2, 7, 8, 9, n / 2, n.saturating_sub(1), n] {
                let lag = lag.min(n);
                let exact: f64 = x[..n - lag].iter().zip(&x[lag..]).map(|(a, b)| a * b).sum();
                assert_eq!(lagged_dot(&x, lag), exact, "n = {n}, lag {lag}");
                let plain: f64 = u[..n - lag].iter().zip(&u[lag..]).map(|(a, b)| a * b).sum();
                assert!(
                    (lagged_dot(&u, lag) - plain).abs() <= 1e-16 * n as f64,
                    "n = {n}, lag {lag}"
                );
            }
        }
    }

    #[test]
    fn independent_draws_have_ess_near_total() {
        let chains: Vec<Vec<f64>> = (0..4).map(|s| uniforms(s + 1, 2000)).collect();
        let views: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
        for (name, ess) in [
            ("basic", ess_basic(&views)),
            ("split", ess_basic_split(&views)),
            ("bulk", ess_bulk(&views)),
        ] {
            assert!((ess / 8000.0 - 1.0).abs() < 0.15, "{name}: {ess}");
        }
        let tail = ess_tail(&views);
        assert!(tail > 4000.0 && tail < 12000.0, "tail: {tail}");
    }

    #[test]
    fn correlated_draws_have_smaller_ess() {
        // AR(1) with φ = 0.9 has τ = (1 + φ)/(1 − φ) = 19.
        let chains: Vec<Vec<f64>> = (0..4)
            .map(|s| {
                let mut x = 0.0;
                uniforms(s + 11, 20_000)
                    .into_iter()
                    .map(|u| {
                        x = 0.9 * x + u;
                        x
                    })
                    .collect()
            })
            .collect();
        let views: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
        let expected = 80_000.0 / 19.0;
        let ess = ess_basic(&views);
        assert!((ess / expected - 1.0).abs() < 0.2, "{ess} vs {expected}");
    }

    #[test]
    fn antithetic_chain_is_capped_at_s_log10_s() {
        // AR(1) with φ = −0.9: τ = (1 + φ)/(1 − φ) ≈ 0.053 < 1/log₁₀(10⁴) = 0.25,
        // so the ESS is capped at S·log₁₀(S) = 40 000.
        let mut x = 0.0;
        let chain: Vec<f64> = uniforms(5, 10_000)
            .into_iter()
            .map(|u| {
                x = -0.9 * x + u;
                x
            })
            .collect();
        let ess = ess_basic(&[&chain[..]]);
        assert!((ess - 40_000.0).abs() < 1e-9, "{ess}");
    }

    #[test]
    fn invalid_input_is_nan() {
        let ok = uniforms(3, 100);
        let short = uniforms(4, 99);
        assert!(ess_basic(&[]).is_nan());
        assert!(ess_basic(&[&ok[..], &short[..]]).is_nan());
        assert!(ess_basic(&[&ok[..3]]).is_nan());
        assert!(!ess_basic(&[&ok[..4]]).is_nan());
        // Split variants need four draws per half.
        assert!(ess_bulk(&[&ok[..7]]).is_nan());
        assert!(!ess_bulk(&[&ok[..8]]).is_nan());
        assert!(ess_tail(&[&ok[..7]]).is_nan());
        assert!(ess_basic_split(&[&ok[..7]]).is_nan());
    }
}
