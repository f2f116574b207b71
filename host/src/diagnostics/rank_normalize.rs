//! Rank normalisation (Vehtari et al. 2021, eq. 14).
//!
//! All S draws of all chains are ranked jointly; ties get their average
//! (fractional) rank, and rank r becomes the normal score
//! z = Φ⁻¹((r − 3/8)/(S + 1/4)) (Blom's offset), exactly as Stan's
//! `rank_transform`. The result has the shape of the input.

use std::cell::RefCell;
use std::rc::Rc;

use super::normal::normal_quantile;

/// Rank-normalises `chains` jointly: each draw is replaced by
/// Φ⁻¹((r − 3/8)/(S + 1/4)), r its average rank among all S draws.
///
/// Chains may have different lengths here; the output mirrors the input
/// shape. Draws are compared with `==`/`<` after a total-order sort, so the
/// input should not contain NaN (NaN draws sort last and are ranked as
/// distinct values).
pub fn rank_normalize(chains: &[&[f64]]) -> Vec<Vec<f64>> {
    rank_normalize_chains(chains)
}

/// [`rank_normalize`] for any slice-like chains.
pub(crate) fn rank_normalize_chains<C: AsRef<[f64]>>(chains: &[C]) -> Vec<Vec<f64>> {
    rank_normalize_sorted(chains).0
}

/// [`rank_normalize_chains`], and all draws sorted by `f64::total_cmp`
/// (exactly what sorting the pooled draws gives: that order is total, so the
/// sorted sequence is unique).
///
/// The draws are sorted as integers (their total-order bit patterns, then
/// their pooled index, so ties keep the order (chain, position) as a stable
/// sort by value would), and the scores of untied integer ranks come from a
/// per-thread table for the number of draws, being the same for every
/// quantity of a run. Both give exactly the scores of sorting by
/// `total_cmp` and calling [`normal_quantile`] for each rank.
pub(crate) fn rank_normalize_sorted<C: AsRef<[f64]>>(chains: &[C]) -> (Vec<Vec<f64>>, Vec<f64>) {
    // (total-order key, index in the pooled draws) of every draw.
    let mut draws: Vec<(u64, u32)> =
        Vec::with_capacity(chains.iter().map(|c| c.as_ref().len()).sum());
    for chain in chains {
        for &v in chain.as_ref() {
            let flat = u32::try_from(draws.len()).expect("fewer than 2³² draws");
            draws.push((total_order_key(v), flat));
        }
    }
    // Sorting (key, index) pairs puts equal draws in their pooled order, as a
    // stable sort by value would.
    draws.sort_unstable();
    let value = |d: &(u64, u32)| from_total_order_key(d.0);

    let count = draws.len();
    let total = count as f64;
    let mut flat_scores = vec![0.0; count];
    with_untied_scores(count, |untied| {
        let mut start = 0;
        while start < count {
            // The tie group draws[start..end] shares ranks start+1 ..= end.
            let first = value(&draws[start]);
            let mut end = start + 1;
            while end < count && value(&draws[end]) == first {
                end += 1;
            }
            let z = if end == start + 1 {
                untied[start]
            } else {
                let average_rank = (start + 1 + end) as f64 / 2.0;
                normal_quantile((average_rank - 0.375) / (total + 0.25))
            };
            for d in &draws[start..end] {
                flat_scores[d.1 as usize] = z;
            }
            start = end;
        }
    });
    let mut scores = flat_scores.into_iter();
    let out = chains
        .iter()
        .map(|c| scores.by_ref().take(c.as_ref().len()).collect())
        .collect();
    (out, draws.iter().map(value).collect())
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

    fn bits(x: &[Vec<f64>]) -> Vec<Vec<u64>> {
        x.iter()
            .map(|c| c.iter().map(|v| v.to_bits()).collect())
            .collect()
    }

    #[test]
    fn integer_sort_and_score_table_match_the_definition() {
        let mut state = 11_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state >> 11
        };
        let specials = [
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
        for round in 0..60 {
            let chains: Vec<Vec<f64>> = (0..1 + round % 5)
                .map(|c| {
                    (0..(round * 7 + c * 3) % 200)
                        .map(|_| match next() % 10 {
                            // Ties: a few repeated values.
                            0 | 1 => (next() % 4) as f64 - 1.5,
                            2 if round % 3 == 0 => specials[(next() % 10) as usize],
                            _ => {
                                (next() as f64 / 9e15 - 0.5) * 10f64.powi((next() % 20) as i32 - 10)
                            }
                        })
                        .collect()
                })
                .collect();
            let (scores, sorted) = rank_normalize_sorted(&chains);
            let (expected_scores, expected_sorted) = reference(&chains);
            assert_eq!(bits(&scores), bits(&expected_scores), "round {round}");
            assert_eq!(bits(&[sorted]), bits(&[expected_sorted]), "round {round}");
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
