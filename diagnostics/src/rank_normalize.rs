//! Rank normalisation (Vehtari et al. 2021, eq. 14).
//!
//! All S draws of all chains are ranked jointly; ties get their average
//! (fractional) rank, and rank r becomes the normal score
//! z = Φ⁻¹((r − 3/8)/(S + 1/4)) (Blom's offset), exactly as Stan's
//! `rank_transform`. The result has the shape of the input.

use std::cell::RefCell;
use std::rc::Rc;

use super::chains::pooled;
use super::normal::normal_quantile;

/// Rank-normalises `chains` jointly: each draw is replaced by
/// Φ⁻¹((r − 3/8)/(S + 1/4)), r its average rank among all S draws.
///
/// Chains may have different lengths here; the output mirrors the input
/// shape. Draws are compared with `==`/`<` after a total-order sort, so the
/// input should not contain NaN (NaN draws sort last and are ranked as
/// distinct values).
pub fn rank_normalize(chains: &[&[f64]]) -> Vec<Vec<f64>> {
    let mut scores = Ranked::new(&pooled(chains)).scores.into_iter();
    chains
        .iter()
        .map(|c| scores.by_ref().take(c.len()).collect())
        .collect()
}

/// The joint rank normalisation of some draws (all chains' draws, chain
/// after chain), with the draws' sorted order kept for what else is built
/// on it: the sorted draws ([`sorted`](Self::sorted)), the rank
/// normalisation of groups of chains alone ([`block_scores`](Self::block_scores))
/// and of the folded draws |x − median| ([`folded_scores`](Self::folded_scores)),
/// each computed from that order in linear time instead of sorting again.
///
/// The draws are sorted as integers (their total-order bit patterns, by
/// [`radix_sort_by_key`], which is stable, so ties keep their pooled order
/// as a stable sort by value would), and the scores of untied integer ranks
/// come from a per-thread table for the number of draws, being the same for
/// every quantity of a run. Both give exactly the scores of sorting by
/// `total_cmp` and calling [`normal_quantile`] for each rank (see the tests).
pub(crate) struct Ranked {
    /// The draws sorted by `f64::total_cmp`, ties in their pooled order.
    sorted: Vec<f64>,
    /// `index[i]`: the pooled index of `sorted[i]`.
    index: Vec<u32>,
    /// Each draw's score Φ⁻¹((r − 3/8)/(S + 1/4)), in the draws' order.
    pub(crate) scores: Vec<f64>,
}

impl Ranked {
    /// Rank-normalises `draws` jointly.
    pub(crate) fn new(draws: &[f64]) -> Ranked {
        assert!(u32::try_from(draws.len()).is_ok(), "fewer than 2³² draws");
        let order = radix_sort_by_key(
            draws
                .iter()
                .enumerate()
                .map(|(i, &v)| (total_order_key(v), i as u32))
                .collect(),
            |d| d.0,
        );
        let sorted: Vec<f64> = order.iter().map(|d| from_total_order_key(d.0)).collect();
        let index: Vec<u32> = order.iter().map(|d| d.1).collect();
        let mut scores = vec![0.0; draws.len()];
        score_tie_groups(&sorted, |i| index[i] as usize, &mut scores);
        Ranked {
            sorted,
            index,
            scores,
        }
    }

    /// All the draws sorted by `f64::total_cmp` (that order is total, so the
    /// sorted sequence is unique).
    pub(crate) fn sorted(&self) -> &[f64] {
        &self.sorted
    }

    /// The rank normalisation of each block of `block` consecutive draws
    /// alone (the draws' count being a multiple of `block`), in the draws'
    /// order: what [`Ranked::new`] of each block gives, bit for bit.
    ///
    /// Each block's draws are taken from the joint order, which keeps them
    /// sorted, so no block is sorted again.
    pub(crate) fn block_scores(&self, block: usize) -> Vec<f64> {
        let count = self.sorted.len();
        assert!(block > 0 && count % block == 0, "whole blocks");
        // The joint order, filtered into each block (stably), block after
        // block: values, and indices within the block.
        let mut next: Vec<usize> = (0..count / block).map(|b| b * block).collect();
        let mut values = vec![0.0; count];
        let mut within = vec![0_u32; count];
        for (&v, &i) in self.sorted.iter().zip(&self.index) {
            let b = i as usize / block;
            values[next[b]] = v;
            within[next[b]] = i - (b * block) as u32;
            next[b] += 1;
        }
        let mut scores = vec![0.0; count];
        for ((values, within), out) in values
            .chunks_exact(block)
            .zip(within.chunks_exact(block))
            .zip(scores.chunks_exact_mut(block))
        {
            score_tie_groups(values, |i| within[i] as usize, out);
        }
        scores
    }

    /// The rank normalisation of the folded draws |x − `median`|, in the
    /// draws' order: what [`Ranked::new`] of the folded draws gives, bit for
    /// bit. No draw may be NaN or infinite, nor may `median`.
    ///
    /// The draws below `median`, taken downwards, and those at or above it,
    /// taken upwards, each give their folded values in increasing order (the
    /// rounded subtraction is monotone), so merging the two runs sorts the
    /// folded draws; equal folded values are ranked together whatever their
    /// order, so the scores are those of a sort.
    pub(crate) fn folded_scores(&self, median: f64) -> Vec<f64> {
        debug_assert!(median.is_finite() && self.sorted.iter().all(|v| v.is_finite()));
        let count = self.sorted.len();
        // Draws [0, split) are below the median: x − median < 0 there (a
        // difference of distinct finite doubles is never 0) and ≥ 0 beyond.
        let split = self.sorted.partition_point(|&v| v < median);
        // Each run's folded values in increasing order, and their indices,
        // closed by +∞ so that the merge needs no bounds tests (a folded
        // value may be +∞ too, |x − median| overflowing: a tie with the end
        // of the other run is resolved by the run's length).
        let folded = |i: usize| (self.sorted[i] - median).abs();
        let below: Vec<f64> = (0..split)
            .rev()
            .map(folded)
            .chain([f64::INFINITY])
            .collect();
        let above: Vec<f64> = (split..count).map(folded).chain([f64::INFINITY]).collect();
        let below_index: Vec<u32> = self.index[..split]
            .iter()
            .rev()
            .copied()
            .chain([0])
            .collect();
        let above_index: Vec<u32> = self.index[split..].iter().copied().chain([0]).collect();
        let mut merged = vec![0.0; count];
        let mut merged_index = vec![0_u32; count];
        let (mut b, mut a) = (0, 0);
        for (value, index) in merged.iter_mut().zip(&mut merged_index) {
            // Without branches (which run the next value comes from is
            // data-dependent, so a branch would be mispredicted half the
            // time): the smaller value (equal values have equal bits, no
            // value being −0 or NaN) and, by a mask, its index.
            let from_below = (below[b] < above[a]) | ((below[b] == above[a]) & (b < split));
            *value = below[b].min(above[a]);
            let mask = u32::from(from_below).wrapping_neg();
            *index = above_index[a] ^ ((above_index[a] ^ below_index[b]) & mask);
            b += usize::from(from_below);
            a += usize::from(!from_below);
        }
        let mut scores = vec![0.0; count];
        score_tie_groups(&merged, |i| merged_index[i] as usize, &mut scores);
        scores
    }
}

/// Gives every draw its score: `sorted` holds the draws in increasing order
/// (no NaN among equal values), `sorted[i]` being draw `index(i)`; draws of
/// equal value (a tie group, occupying ranks start + 1 ..= end) all get the
/// score of their average rank, written to `out[index(i)]`.
fn score_tie_groups(sorted: &[f64], index: impl Fn(usize) -> usize, out: &mut [f64]) {
    let count = sorted.len();
    let total = count as f64;
    with_untied_scores(count, |untied| {
        let mut start = 0;
        while start < count {
            let first = sorted[start];
            let mut end = start + 1;
            while end < count && sorted[end] == first {
                end += 1;
            }
            let z = if end == start + 1 {
                untied[start]
            } else {
                let average_rank = (start + 1 + end) as f64 / 2.0;
                normal_quantile((average_rank - 0.375) / (total + 0.25))
            };
            for i in start..end {
                out[index(i)] = z;
            }
            start = end;
        }
    });
}

/// Draws sorted by `f64::total_cmp` (by [`radix_sort_by_key`]).
pub(crate) fn sort_total_order(draws: &[f64]) -> Vec<f64> {
    radix_sort_by_key(draws.iter().map(|&v| total_order_key(v)).collect(), |&k| k)
        .into_iter()
        .map(from_total_order_key)
        .collect()
}

/// Below this many items [`radix_sort_by_key`] uses the standard library's
/// stable sort (the 256-entry digit counts outweigh the work).
const RADIX_MIN: usize = 64;

/// Sorts `items` by `key`, stably (items of equal key keep their order): the
/// result is what `sort_by_key` gives.
///
/// A least-significant-digit radix sort on the key's four high bytes: one
/// pass counts every byte's digits, then each byte in which the keys differ
/// (bytes shared by all keys, common for the highest, are skipped) is a
/// stable counting scatter. That orders the items by the high half of their
/// key, stably; each run of items sharing that half (for draws of a
/// continuous distribution, rare: 32 bits tell apart draws at a relative
/// 10⁻⁶) is then sorted by the whole key with the standard library's stable
/// sort, which leaves the items of equal key in their order. Linear in the
/// number of items for such draws, against n·log n comparisons (and
/// mispredicted branches) for a comparison sort, and half the passes of a
/// radix sort on all eight bytes.
pub(crate) fn radix_sort_by_key<T: Copy + Default>(
    mut items: Vec<T>,
    key: impl Fn(&T) -> u64,
) -> Vec<T> {
    let count = items.len();
    if count < RADIX_MIN {
        items.sort_by_key(|t| key(t));
        return items;
    }
    const HIGH: std::ops::Range<usize> = 4..8;
    let mut digits = [[0_u32; 256]; 8];
    for item in &items {
        let k = key(item);
        for byte in HIGH {
            digits[byte][(k >> (8 * byte)) as u8 as usize] += 1;
        }
    }
    let first = key(&items[0]);
    let mut scratch = vec![T::default(); count];
    for byte in HIGH {
        let counts = &digits[byte];
        let shift = 8 * byte;
        if counts[(first >> shift) as u8 as usize] as usize == count {
            continue; // every key has this byte
        }
        let mut next = [0_usize; 256];
        let mut sum = 0;
        for (slot, &c) in next.iter_mut().zip(counts) {
            *slot = sum;
            sum += c as usize;
        }
        for item in &items {
            let digit = (key(item) >> shift) as u8 as usize;
            scratch[next[digit]] = *item;
            next[digit] += 1;
        }
        std::mem::swap(&mut items, &mut scratch);
    }
    // Runs sharing the high half: sorted by the low half too.
    let mut start = 0;
    while start < count {
        let high = key(&items[start]) >> 32;
        let mut end = start + 1;
        while end < count && key(&items[end]) >> 32 == high {
            end += 1;
        }
        if end - start > 1 {
            items[start..end].sort_by_key(|t| key(t));
        }
        start = end;
    }
    items
}

/// A key whose unsigned order is `f64::total_cmp`'s order (−NaN < −∞ < … <
/// −0 < +0 < … < +∞ < +NaN): negative numbers get all bits flipped, the others
/// only the sign bit. [`from_total_order_key`] inverts it.
fn total_order_key(v: f64) -> u64 {
    let bits = v.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// The draw whose [`total_order_key`] is `key`.
fn from_total_order_key(key: u64) -> f64 {
    f64::from_bits(if key >> 63 == 1 {
        key & !(1 << 63)
    } else {
        !key
    })
}

/// Scores tables kept per thread (a run's diagnostics use one or two sizes:
/// all chains, and one chain for the per-chain ESS).
const MAX_TABLES: usize = 4;

thread_local! {
    /// `(S, table)`: table[r − 1] = Φ⁻¹((r − 3/8)/(S + 1/4)), r = 1 … S.
    static UNTIED_SCORES: RefCell<Vec<(usize, Rc<[f64]>)>> = const { RefCell::new(Vec::new()) };
}

/// Calls `f` with the scores of the integer ranks 1 … `count` among `count`
/// draws, computed once per thread and count.
fn with_untied_scores<R>(count: usize, f: impl FnOnce(&[f64]) -> R) -> R {
    let table = UNTIED_SCORES.with(|tables| {
        if let Some((_, t)) = tables.borrow().iter().find(|(n, _)| *n == count) {
            return Rc::clone(t);
        }
        let total = count as f64;
        let table: Rc<[f64]> = (1..=count)
            .map(|r| normal_quantile((r as f64 - 0.375) / (total + 0.25)))
            .collect();
        let mut tables = tables.borrow_mut();
        if tables.len() >= MAX_TABLES {
            tables.remove(0);
        }
        tables.push((count, Rc::clone(&table)));
        table
    });
    f(&table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantile;

    /// The definition, computed plainly: a stable sort by `total_cmp` and
    /// one quantile per tie group.
    fn reference(chains: &[Vec<f64>]) -> (Vec<Vec<f64>>, Vec<f64>) {
        let mut draws: Vec<(f64, usize, usize)> = Vec::new();
        for (c, chain) in chains.iter().enumerate() {
            for (i, &v) in chain.iter().enumerate() {
                draws.push((v, c, i));
            }
        }
        draws.sort_by(|a, b| a.0.total_cmp(&b.0));
        let total = draws.len() as f64;
        let mut out: Vec<Vec<f64>> = chains.iter().map(|c| vec![0.0; c.len()]).collect();
        let mut start = 0;
        while start < draws.len() {
            let mut end = start + 1;
            while end < draws.len() && draws[end].0 == draws[start].0 {
                end += 1;
            }
            let z = normal_quantile(((start + 1 + end) as f64 / 2.0 - 0.375) / (total + 0.25));
            for &(_, c, i) in &draws[start..end] {
                out[c][i] = z;
            }
            start = end;
        }
        (out, draws.iter().map(|d| d.0).collect())
    }

    fn flat_bits(x: &[f64]) -> Vec<u64> {
        x.iter().map(|v| v.to_bits()).collect()
    }

    fn bits(x: &[Vec<f64>]) -> Vec<Vec<u64>> {
        x.iter()
            .map(|c| c.iter().map(|v| v.to_bits()).collect())
            .collect()
    }

    /// Deterministic pseudo-random draws with ties (a few repeated values),
    /// every `specials`-th round with zeros of both signs, infinities, NaNs
    /// and extreme magnitudes, and magnitudes over 20 decades.
    fn awkward_draws(seed: u64, count: usize, specials: bool) -> Vec<f64> {
        let mut state = seed;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state >> 11
        };
        let special = [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::MIN_POSITIVE,
            -5e-324,
            1e300,
            -1e-300,
        ];
        (0..count)
            .map(|_| match next() % 10 {
                0 | 1 => (next() % 4) as f64 - 1.5,
                2 if specials => special[(next() % 10) as usize],
                _ => (next() as f64 / 9e15 - 0.5) * 10f64.powi((next() % 20) as i32 - 10),
            })
            .collect()
    }

    #[test]
    fn integer_sort_and_score_table_match_the_definition() {
        for round in 0..60 {
            let chains: Vec<Vec<f64>> = (0..1 + round % 5)
                .map(|c| {
                    awkward_draws(
                        (11 + 100 * round + c) as u64,
                        (round * 7 + c * 3) % 200,
                        round % 3 == 0,
                    )
                })
                .collect();
            let all: Vec<f64> = chains.concat();
            let ranked = Ranked::new(&all);
            let (expected_scores, expected_sorted) = reference(&chains);
            assert_eq!(
                flat_bits(&ranked.scores),
                flat_bits(&expected_scores.concat()),
                "round {round}"
            );
            assert_eq!(
                flat_bits(ranked.sorted()),
                flat_bits(&expected_sorted),
                "round {round}"
            );
            assert_eq!(
                flat_bits(&sort_total_order(&all)),
                flat_bits(&expected_sorted),
                "round {round}"
            );
            let views: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
            assert_eq!(
                bits(&rank_normalize(&views)),
                bits(&expected_scores),
                "round {round}"
            );
        }
    }

    #[test]
    fn radix_sort_is_sort_unstable_of_key_and_index() {
        // (total-order key, index) pairs are unique, so `sort_unstable`
        // gives the one order by key then index: a stable sort by key.
        for (round, count) in [0, 1, 2, 63, 64, 65, 100, 1000, 4000, 10_000]
            .into_iter()
            .enumerate()
        {
            for specials in [false, true] {
                let draws = awkward_draws(round as u64 + 3, count, specials);
                let pairs: Vec<(u64, u32)> = draws
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| (total_order_key(v), i as u32))
                    .collect();
                let mut expected = pairs.clone();
                expected.sort_unstable();
                assert_eq!(
                    radix_sort_by_key(pairs, |d| d.0),
                    expected,
                    "{count} draws, specials {specials}"
                );
            }
        }
        // Keys sharing all but their lowest byte (one run of equal high
        // halves), or all but their highest (passes skipped), or all of them
        // (every pass skipped).
        let low: Vec<(u64, u32)> = (0..500_u32)
            .map(|i| (0xabcd_ef01_2345_6700 | u64::from(i * 37 % 256), i))
            .collect();
        let high: Vec<(u64, u32)> = (0..500_u32)
            .map(|i| (u64::from(i * 37 % 256) << 56 | 0x42, i))
            .collect();
        let same: Vec<(u64, u32)> = (0..500_u32).map(|i| (7, 499 - i)).collect();
        // Runs sharing the high half, with ties in the low half.
        let runs: Vec<(u64, u32)> = (0..2000_u32)
            .map(|i| (u64::from(i % 3) << 40 | u64::from(i * 7919 % 50), i))
            .collect();
        for pairs in [low, high, same, runs] {
            let mut expected = pairs.clone();
            expected.sort_by_key(|d| d.0);
            assert_eq!(radix_sort_by_key(pairs, |d| d.0), expected);
        }
    }

    #[test]
    fn block_and_folded_scores_are_those_of_their_own_sort() {
        for round in 0..40_u64 {
            let block = [8, 50, 64, 65, 500][round as usize % 5];
            let blocks = 1 + round as usize % 4;
            let mut draws = awkward_draws(round + 1, block * blocks, false);
            // Values symmetric about the median fold to ties.
            let median = quantile(&draws, 0.5);
            for (i, d) in draws.iter_mut().enumerate().skip(3).step_by(17) {
                *d = if i % 2 == 0 {
                    median + 0.25
                } else {
                    median - 0.25
                };
            }
            if round % 4 == 0 {
                draws[0] = 0.0;
                draws[1] = -0.0;
            }
            if round % 4 == 1 {
                // |x − median| overflows to +∞ for the medians ±10³⁰⁸.
                draws[0] = 1.7e308;
                draws[2] = -1.7e308;
                draws[4] = 1.7e308;
            }
            let ranked = Ranked::new(&draws);
            let expected: Vec<f64> = draws
                .chunks_exact(block)
                .flat_map(|b| Ranked::new(b).scores)
                .collect();
            assert_eq!(
                flat_bits(&ranked.block_scores(block)),
                flat_bits(&expected),
                "round {round}"
            );
            for m in [
                quantile(&draws, 0.5),
                draws[5],
                0.0,
                -0.0,
                1e9,
                -1e9,
                1e308,
                -1e308,
            ] {
                let folded: Vec<f64> = draws.iter().map(|x| (x - m).abs()).collect();
                assert_eq!(
                    flat_bits(&ranked.folded_scores(m)),
                    flat_bits(&Ranked::new(&folded).scores),
                    "round {round}, median {m}"
                );
            }
        }
    }

    #[test]
    fn total_order_keys_order_like_total_cmp() {
        let values = [
            -f64::NAN,
            f64::NEG_INFINITY,
            -1.0,
            -5e-324,
            -0.0,
            0.0,
            5e-324,
            1.0,
            f64::INFINITY,
            f64::NAN,
        ];
        for w in values.windows(2) {
            assert!(total_order_key(w[0]) < total_order_key(w[1]), "{w:?}");
        }
        for v in values {
            assert_eq!(
                from_total_order_key(total_order_key(v)).to_bits(),
                v.to_bits()
            );
        }
    }

    #[test]
    fn ranks_without_ties() {
        let a = [0.3, -1.0];
        let b = [10.0, 2.0];
        let z = rank_normalize(&[&a[..], &b[..]]);
        // ranks: a = (2, 1), b = (4, 3); S = 4.
        let score = |r: f64| normal_quantile((r - 0.375) / 4.25);
        assert_eq!(
            z,
            vec![vec![score(2.0), score(1.0)], vec![score(4.0), score(3.0)]]
        );
        // Symmetric ranks give antisymmetric scores.
        assert!((z[0][1] + z[1][0]).abs() < 1e-15);
    }

    #[test]
    fn ties_get_average_rank() {
        let a = [5.0, 1.0, 5.0];
        let b = [5.0, 7.0];
        let z = rank_normalize(&[&a[..], &b[..]]);
        // sorted: 1 | 5 5 5 | 7 → ranks 1, (2+3+4)/3 = 3, 5; S = 5.
        let score = |r: f64| normal_quantile((r - 0.375) / 5.25);
        assert_eq!(z[0], vec![score(3.0), score(1.0), score(3.0)]);
        assert_eq!(z[1], vec![score(3.0), score(5.0)]);
        // The middle rank of an odd count maps to z = Φ⁻¹(0.5) = 0.
        assert!(score(3.0).abs() < 1e-16);
    }
}
