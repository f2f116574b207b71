//! Chains that never met: a chain (or a group of chains) whose draws stay in
//! a region the other chains never visit, such as a funnel's neck or one of
//! two separated modes. Its draws and the others' are not draws of one
//! posterior, however the warnings read, so [`super::assess`] calls such a
//! run unusable (`qnmc run` exits with code 3).
//!
//! The rule, per quantity (`lp__` first, then every reported quantity): each
//! chain's central interval between its [`LOWER_QUANTILE`] and
//! [`UPPER_QUANTILE`] quantiles; two chains *meet* when their intervals
//! overlap, and chains joined by meetings form a group. More than one group
//! in a quantity whose rank-normalised R̂ exceeds [`SEPARATED_RHAT`] is a
//! separation (an undefined R̂, as when a chain is frozen at one value,
//! counts as above it). The central 90 % rather than the whole range, so
//! that one excursion does not join two groups; R̂ as a second condition, so
//! that a quantity whose chains barely vary cannot raise it on its own.
//!
//! Calibration (`docs/HIERARCHICAL.md`, `compare/nutpie/unusable_rates.py`):
//! of 360 runs (qnmc's default, `--metric diag`, nutpie diag and low-rank on
//! the funnels and eight schools, 10–40 seeds, and four regressions), none of
//! the 207 that passed `qnmc check` is refused, by this rule or by the
//! frozen-chain rule of `run_health`.

use crate::draw_values::{DrawValues, InMemory, block_quantities, infallible};
use crate::draws::RunDraws;

/// Lower end of a chain's central interval (5 %).
pub const LOWER_QUANTILE: f64 = 0.05;
/// Upper end of a chain's central interval (95 %).
pub const UPPER_QUANTILE: f64 = 0.95;
/// A separation counts only where R̂ exceeds this.
pub const SEPARATED_RHAT: f64 = 1.1;
/// Chains with fewer finite values than this in a quantity are not judged
/// in it (their quantiles say too little).
pub const MIN_DRAWS: usize = 20;

/// One group of chains in the quantity that separates them.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainGroup {
    /// 1-based chain ids, ascending.
    pub chains: Vec<usize>,
    /// The group's draws' median in the quantity.
    pub median: f64,
    /// The lowest lower end and highest upper end of its chains' central
    /// intervals.
    pub low: f64,
    /// See [`low`](Self::low).
    pub high: f64,
}

/// Groups of chains that never met in one quantity.
#[derive(Debug, Clone, PartialEq)]
pub struct Separation {
    /// The quantity (`lp__` or a reported name).
    pub quantity: String,
    /// Its R̂ over all chains.
    pub rhat: f64,
    /// The groups, from the one with the most chains (ties: the lowest
    /// median first).
    pub groups: Vec<ChainGroup>,
}

impl Separation {
    /// The sentence `qnmc run` prints after `unusable: `.
    pub fn message(&self) -> String {
        let Some((main, apart)) = self.groups.split_first() else {
            return format!("the chains never met in {}", self.quantity);
        };
        let ids = |g: &ChainGroup| {
            let names: Vec<String> = g.chains.iter().map(usize::to_string).collect();
            let s = if g.chains.len() == 1 { "" } else { "s" };
            format!("chain{s} {}", names.join(", "))
        };
        let range = |g: &ChainGroup| format!("{} to {}", number(g.low), number(g.high));
        let stayed: Vec<String> = apart
            .iter()
            .map(|g| {
                format!(
                    "{} stayed where {} ≈ {} (90 % of {} draws in {})",
                    ids(g),
                    self.quantity,
                    number(g.median),
                    if g.chains.len() == 1 { "its" } else { "their" },
                    range(g)
                )
            })
            .collect();
        let neck = self.quantity == "lp__" && apart.iter().any(|g| g.median > main.median);
        format!(
            "{}, a region {} never visited (theirs: {} ≈ {}, {}); {}. The chains \
             sampled different regions ({}), so their draws are not one posterior's. Try a \
             non-centred parameterisation, --metric diag, or a longer --warmup",
            stayed.join("; "),
            ids(main),
            self.quantity,
            number(main.median),
            range(main),
            if self.rhat.is_nan() {
                "R-hat undefined (a chain constant in it)".to_string()
            } else {
                format!("R-hat {:.2}", self.rhat)
            },
            if neck {
                "higher lp__ apart from the rest: a funnel's neck?"
            } else {
                "a funnel's neck, or separated modes?"
            }
        )
    }
}

/// Three or four significant digits: enough to tell the groups apart.
fn number(x: f64) -> String {
    let a = x.abs();
    if a != 0.0 && !(1e-3..1e5).contains(&a) {
        format!("{x:.2e}")
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// The `q`-quantile of `v` (linear interpolation between order statistics);
/// reorders `v`.
fn quantile(v: &mut [f64], q: f64) -> f64 {
    let h = q * (v.len() - 1) as f64;
    let i = h.floor() as usize;
    let n = v.len();
    let (_, &mut lo, upper) = v.select_nth_unstable_by(i, f64::total_cmp);
    if i + 1 < n {
        let hi = upper.iter().copied().fold(f64::INFINITY, f64::min);
        lo + (h - i as f64) * (hi - lo)
    } else {
        lo
    }
}

/// The median of `v`; reorders `v`.
fn median(v: &mut [f64]) -> f64 {
    quantile(v, 0.5)
}

/// Groups of the chains whose `(id, values)` are given, in one quantity, or
/// `None` when they form one group or a chain has too few values.
fn groups(chains: &[(usize, Vec<f64>)]) -> Option<Vec<ChainGroup>> {
    if chains.len() < 2 || chains.iter().any(|(_, v)| v.len() < MIN_DRAWS) {
        return None;
    }
    let mut intervals: Vec<(f64, f64, usize)> = chains
        .iter()
        .enumerate()
        .map(|(k, (_, v))| {
            let mut v = v.clone();
            (
                quantile(&mut v, LOWER_QUANTILE),
                quantile(&mut v, UPPER_QUANTILE),
                k,
            )
        })
        .collect();
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Overlapping intervals on a line: sweep by lower end.
    let mut found: Vec<(f64, f64, Vec<usize>)> = Vec::new();
    for (lo, hi, k) in intervals {
        match found.last_mut() {
            Some(last) if lo <= last.1 => {
                last.1 = last.1.max(hi);
                last.2.push(k);
            }
            _ => found.push((lo, hi, vec![k])),
        }
    }
    if found.len() < 2 {
        return None;
    }
    let mut out: Vec<ChainGroup> = found
        .into_iter()
        .map(|(low, high, members)| {
            let mut pooled: Vec<f64> = members
                .iter()
                .flat_map(|&k| chains[k].1.iter().copied())
                .collect();
            let mut ids: Vec<usize> = members.iter().map(|&k| chains[k].0).collect();
            ids.sort_unstable();
            ChainGroup {
                chains: ids,
                median: median(&mut pooled),
                low,
                high,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.chains
            .len()
            .cmp(&a.chains.len())
            .then(a.median.total_cmp(&b.median))
    });
    Some(out)
}

/// The first quantity (`lp__`, then the reported ones in order) in which the
/// chains of `run` (values in memory) form more than one group with R̂ above
/// [`SEPARATED_RHAT`], or `None`, given the R̂ of `lp__` and of each
/// quantity. [`summarize_run`](super::summarize_run) finds it for every run
/// ([`RunSummary::separation`](super::RunSummary::separation)).
pub fn separated_chains(run: &RunDraws, lp_rhat: f64, rhats: &[f64]) -> Option<Separation> {
    infallible(find_separation(run, &InMemory, lp_rhat, rhats))
}

/// [`separated_chains`] with the values read from `values`, given the R̂ of
/// `lp__` and of each quantity: the quantities whose R̂ lets them separate
/// the chains are read a block at a time ([`block_quantities`]).
pub(crate) fn find_separation<V: DrawValues>(
    run: &RunDraws,
    values: &V,
    lp_rhat: f64,
    rhats: &[f64],
) -> Result<Option<Separation>, V::Error> {
    let finite = |v: &[f64]| {
        v.iter()
            .copied()
            .filter(|x| x.is_finite())
            .collect::<Vec<_>>()
    };
    // NaN (a chain constant in the quantity) passes: such a chain is
    // frozen, and if apart, the worst case of all.
    let may_separate = |rhat: f64| rhat.is_nan() || rhat > SEPARATED_RHAT;
    let separation = |quantity: &str, rhat: f64, chains: &[(usize, Vec<f64>)]| {
        groups(chains).map(|groups| Separation {
            quantity: quantity.to_string(),
            rhat,
            groups,
        })
    };
    if may_separate(lp_rhat) {
        let chains: Vec<(usize, Vec<f64>)> = run
            .chains
            .iter()
            .map(|c| (c.chain_id, finite(&c.lp)))
            .collect();
        if let Some(found) = separation("lp__", lp_rhat, &chains) {
            return Ok(Some(found));
        }
    }
    let rhat_of = |j: usize| rhats.get(j).copied().unwrap_or(f64::NAN);
    let candidates: Vec<usize> = (0..run.names.len())
        .filter(|&j| may_separate(rhat_of(j)))
        .collect();
    for block in candidates.chunks(block_quantities(run)) {
        let columns = values.columns(run, block)?;
        for (&j, column) in block.iter().zip(columns) {
            let chains: Vec<(usize, Vec<f64>)> = run
                .chains
                .iter()
                .zip(&column)
                .map(|(c, draws)| (c.chain_id, finite(draws)))
                .collect();
            if let Some(found) = separation(&run.names[j], rhat_of(j), &chains) {
                return Ok(Some(found));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::summarize_run;
    use crate::output::test_runs::gaussian_run;

    /// `run` with chain `k` (0-based) moved by `shift` in every quantity and
    /// in `lp__`.
    fn shifted(mut run: RunDraws, k: usize, shift: f64) -> RunDraws {
        let c = &mut run.chains[k];
        c.values.iter_mut().for_each(|v| *v += shift);
        c.lp.iter_mut().for_each(|v| *v += shift);
        run
    }

    fn separation(run: &RunDraws) -> Option<Separation> {
        let summary = summarize_run(run, None);
        let rhats: Vec<f64> = summary.quantities.iter().map(|q| q.stats.rhat).collect();
        let found = separated_chains(run, summary.lp.rhat, &rhats);
        // (As text: an undefined R̂ is NaN, not equal to itself.)
        assert_eq!(
            format!("{found:?}"),
            format!("{:?}", summary.separation),
            "the summary finds the same"
        );
        found
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(number(-29.2323), "-29.23");
        assert_eq!(number(-450.4), "-450");
        assert_eq!(number(0.0378), "0.038");
        assert_eq!(number(2.5e-5), "2.50e-5");
    }

    #[test]
    fn quantile_interpolates_between_order_statistics() {
        let mut v = vec![4.0, 1.0, 3.0, 2.0, 5.0];
        assert_eq!(quantile(&mut v, 0.0), 1.0);
        assert_eq!(quantile(&mut v, 1.0), 5.0);
        assert_eq!(quantile(&mut v, 0.5), 3.0);
        assert!((quantile(&mut v, 0.1) - 1.4).abs() < 1e-12);
    }

    #[test]
    fn mixed_chains_are_one_group() {
        // Independent N(0, 1) draws, 4 x 1000, seeds 1..=20: a chain's
        // central 90 % is ±1.64 with a sampling error of ~0.07; two such
        // intervals never fail to overlap.
        for seed in 1..=20 {
            let run = gaussian_run(4, 1000, 5, seed);
            assert_eq!(separation(&run), None, "seed {seed}");
        }
    }

    #[test]
    fn overlapping_central_intervals_are_one_group() {
        // The grouping alone, without the R̂ condition: independent N(0, 1)
        // chains (central 90 % ±1.64, sampling error ~0.07) always meet.
        for seed in 1..=20 {
            let run = gaussian_run(4, 1000, 1, seed);
            let chains: Vec<(usize, Vec<f64>)> = run
                .chains
                .iter()
                .map(|c| (c.chain_id, c.values.clone()))
                .collect();
            assert_eq!(groups(&chains), None, "seed {seed}");
        }
    }

    #[test]
    fn a_chain_moved_off_is_named() {
        // Chain 3 moved by 10 sd: its central interval [8.4, 11.6] is apart
        // from the others' [−1.6, 1.6]; lp__ is checked first.
        let run = shifted(gaussian_run(4, 1000, 3, 7), 2, 10.0);
        let s = separation(&run).expect("separated");
        assert_eq!(s.quantity, "lp__");
        assert!(s.rhat > SEPARATED_RHAT);
        assert_eq!(s.groups.len(), 2);
        assert_eq!(s.groups[0].chains, vec![1, 2, 4]);
        assert_eq!(s.groups[1].chains, vec![3]);
        assert!((s.groups[1].median - 10.0 + 1.5).abs() < 1.0, "{s:?}");
        let m = s.message();
        assert!(m.starts_with("chain 3 stayed where lp__ ≈ "), "{m}");
        assert!(
            m.contains("a region chains 1, 2, 4 never visited (theirs: lp__ ≈ "),
            "{m}"
        );
        assert!(m.contains("funnel's neck?"), "{m}");
        assert!(m.contains("non-centred"), "{m}");
    }

    #[test]
    fn a_shift_inside_the_central_intervals_is_not_a_separation() {
        // 2 sd: the intervals [−1.6, 1.6] and [0.4, 3.6] overlap. The chains
        // disagree (R̂ ≈ 1.3, a warning) but they met.
        let run = shifted(gaussian_run(4, 1000, 3, 7), 0, 2.0);
        assert_eq!(separation(&run), None);
    }

    #[test]
    fn a_frozen_chain_apart_is_named_though_its_rhat_is_undefined() {
        // Neal's funnel, seed 5 of the default: chain 3 sat in the neck with
        // lp__ = 26.31 in every kept draw, the others' central 90 % reached
        // 17 at most; R̂ is undefined there (a constant chain).
        let mut run = gaussian_run(4, 1000, 2, 5);
        run.chains[2].lp.iter_mut().for_each(|v| *v = 26.31);
        let s = separation(&run).expect("separated");
        assert!(s.rhat.is_nan(), "{s:?}");
        assert_eq!(s.groups[1].chains, vec![3]);
        assert_eq!(s.groups[1].median, 26.31);
        assert!(s.message().contains("R-hat undefined"), "{}", s.message());
    }

    #[test]
    fn two_against_two_are_two_groups() {
        let run = shifted(shifted(gaussian_run(4, 1000, 2, 3), 1, -20.0), 3, -20.0);
        let s = separation(&run).expect("separated");
        assert_eq!(
            s.groups[0].chains,
            vec![2, 4],
            "lowest median first on a tie"
        );
        assert_eq!(s.groups[1].chains, vec![1, 3]);
        assert!(
            s.message().starts_with("chains 1, 3 stayed where"),
            "{}",
            s.message()
        );
    }

    #[test]
    fn few_draws_or_one_chain_are_not_judged() {
        let run = shifted(gaussian_run(4, MIN_DRAWS - 1, 2, 3), 1, 50.0);
        assert_eq!(separation(&run), None);
        let run = gaussian_run(1, 1000, 2, 3);
        assert_eq!(separation(&run), None);
    }

    #[test]
    fn a_quantity_separates_when_lp_does_not() {
        // Only quantity 2 of chain 4 moves; lp__ is left as it was.
        let mut run = gaussian_run(4, 1000, 3, 11);
        run.chains[3]
            .values
            .iter_mut()
            .skip(1)
            .step_by(3)
            .for_each(|v| *v += 8.0);
        let s = separation(&run).expect("separated");
        assert_eq!(s.quantity, run.names[1]);
        assert_eq!(s.groups[1].chains, vec![4]);
        assert!(s.message().contains("separated modes?"), "{}", s.message());
    }
}
