//! Checking and splitting a set of chains (one slice per chain).
//!
//! Stan's rules, which every diagnostic here follows: chains must be of equal
//! length with enough draws, every draw finite, and no chain (after splitting,
//! for split diagnostics) constant. "Constant" uses Eigen's
//! `isApproxToConstant` with its default precision, i.e. every draw within a
//! relative 10⁻¹² of the chain's first draw.
//!
//! One deliberate difference: Stan's `is_finite_and_varies` also rejects
//! input whose chains all *start* at (approximately) the same value, even when
//! every chain varies; that spuriously turns chains sharing an initial point
//! into NaN, so it is not reproduced here.

/// Relative precision of Eigen's `isApprox` for doubles (`dummy_precision`).
const APPROX_PRECISION: f64 = 1e-12;

/// Draws per chain if there is at least one chain, all chains have the same
/// length, and that length is at least `min_draws`; `None` otherwise.
pub(crate) fn common_length<C: AsRef<[f64]>>(chains: &[C], min_draws: usize) -> Option<usize> {
    let n = chains.first()?.as_ref().len();
    if n < min_draws || chains.iter().any(|c| c.as_ref().len() != n) {
        return None;
    }
    Some(n)
}

/// Whether every draw is finite and no chain is (approximately) constant.
pub(crate) fn finite_and_varies<C: AsRef<[f64]>>(chains: &[C]) -> bool {
    chains.iter().all(|chain| {
        let chain = chain.as_ref();
        chain.iter().all(|v| v.is_finite()) && !is_approx_constant(chain)
    })
}

/// Eigen's `isApproxToConstant(x[0])`: |xᵢ − x₀| ≤ 10⁻¹²·min(|xᵢ|, |x₀|) for
/// all i.
fn is_approx_constant(chain: &[f64]) -> bool {
    let Some(&first) = chain.first() else {
        return true;
    };
    chain
        .iter()
        .all(|&v| (v - first).abs() <= APPROX_PRECISION * v.abs().min(first.abs()))
}

/// Split chains stored one after another: split chain `c` is
/// `draws[c·len .. (c + 1)·len]`.
pub(crate) struct Split {
    /// All split draws, split chain after split chain.
    pub(crate) draws: Vec<f64>,
    /// Draws per split chain.
    pub(crate) len: usize,
    /// Number of split chains (twice the input chains).
    pub(crate) count: usize,
}

impl Split {
    /// The split chains as slices.
    pub(crate) fn chains(&self) -> Vec<&[f64]> {
        chunks(&self.draws, self.len, self.count)
    }
}

/// `draws` (of `count` chains of `len` draws, one after another) as one
/// slice per chain.
pub(crate) fn chunks(draws: &[f64], len: usize, count: usize) -> Vec<&[f64]> {
    (0..count).map(|c| &draws[c * len..(c + 1) * len]).collect()
}

/// Splits each chain into its first and second half, giving twice as many
/// chains of ⌊n/2⌋ draws. For odd n the middle draw is dropped (as Stan's
/// `split_chains` does: the second half starts at ⌈n/2⌉). The chains must
/// have a common length n.
pub(crate) fn split_chains<C: AsRef<[f64]>>(chains: &[C]) -> Split {
    let n = chains.first().map_or(0, |c| c.as_ref().len());
    debug_assert!(chains.iter().all(|c| c.as_ref().len() == n));
    let half = n / 2;
    let tail_start = n.div_ceil(2);
    let mut draws = Vec::with_capacity(2 * half * chains.len());
    for chain in chains {
        let chain = chain.as_ref();
        draws.extend_from_slice(&chain[..half]);
        draws.extend_from_slice(&chain[tail_start..tail_start + half]);
    }
    Split {
        draws,
        len: half,
        count: 2 * chains.len(),
    }
}

/// All draws of all chains, chain after chain.
pub(crate) fn pooled<C: AsRef<[f64]>>(chains: &[C]) -> Vec<f64> {
    chains
        .iter()
        .flat_map(|c| c.as_ref().iter().copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_even_and_odd() {
        let a = [1.0, 2.0, 3.0, 4.0];
        let b = [5.0, 6.0, 7.0, 8.0, 9.0];
        let split = split_chains(&[&a[..]]);
        assert_eq!(split.chains(), [[1.0, 2.0], [3.0, 4.0]]);
        assert_eq!((split.len, split.count), (2, 2));
        // Odd length: the middle draw (7) is dropped.
        let split = split_chains(&[&b[..]]);
        assert_eq!(split.chains(), [[5.0, 6.0], [8.0, 9.0]]);
        assert_eq!(split.draws, [5.0, 6.0, 8.0, 9.0]);
        let split = split_chains(&[&a[..], &b[1..]]);
        assert_eq!(
            split.chains(),
            [[1.0, 2.0], [3.0, 4.0], [6.0, 7.0], [8.0, 9.0]]
        );
    }

    #[test]
    fn length_checks() {
        let a = [1.0; 5];
        let b = [1.0; 4];
        assert_eq!(common_length(&[&a[..], &a[..]], 4), Some(5));
        assert_eq!(common_length(&[&a[..], &b[..]], 4), None);
        assert_eq!(common_length(&[&b[..]], 5), None);
        assert_eq!(common_length::<&[f64]>(&[], 0), None);
    }

    #[test]
    fn finiteness_and_variation() {
        let ok = [1.0, 2.0, 3.0];
        let constant = [2.0, 2.0, 2.0];
        let nearly_constant = [1.0, 1.0 + 1e-14, 1.0];
        let infinite = [1.0, f64::INFINITY, 3.0];
        let nan = [1.0, f64::NAN, 3.0];
        assert!(finite_and_varies(&[&ok[..], &ok[..]]));
        assert!(!finite_and_varies(&[&ok[..], &constant[..]]));
        assert!(!finite_and_varies(&[&nearly_constant[..]]));
        assert!(!finite_and_varies(&[&ok[..], &infinite[..]]));
        assert!(!finite_and_varies(&[&nan[..]]));
        assert!(!finite_and_varies(&[&[0.0, 0.0][..]]));
    }
}
