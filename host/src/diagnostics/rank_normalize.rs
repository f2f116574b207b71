//! Rank normalisation (Vehtari et al. 2021, eq. 14).
//!
//! All S draws of all chains are ranked jointly; ties get their average
//! (fractional) rank, and rank r becomes the normal score
//! z = Φ⁻¹((r − 3/8)/(S + 1/4)) (Blom's offset), exactly as Stan's
//! `rank_transform`. The result has the shape of the input.

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
    // (value, chain, position) of every draw.
    let mut draws: Vec<(f64, usize, usize)> = chains
        .iter()
        .enumerate()
        .flat_map(|(c, chain)| {
            chain
                .as_ref()
                .iter()
                .enumerate()
                .map(move |(i, &v)| (v, c, i))
        })
        .collect();
    draws.sort_by(|a, b| a.0.total_cmp(&b.0));

    let total = draws.len() as f64;
    let mut out: Vec<Vec<f64>> = chains.iter().map(|c| vec![0.0; c.as_ref().len()]).collect();
    let mut start = 0;
    while start < draws.len() {
        // The tie group draws[start..end] shares ranks start+1 ..= end.
        let mut end = start + 1;
        while end < draws.len() && draws[end].0 == draws[start].0 {
            end += 1;
        }
        let average_rank = (start + 1 + end) as f64 / 2.0;
        let z = normal_quantile((average_rank - 0.375) / (total + 0.25));
        for &(_, c, i) in &draws[start..end] {
            out[c][i] = z;
        }
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
