//! [`PairRing`]: a fixed-capacity ring buffer of L-BFGS pairs (s, y, sᵀy).

use crate::real::Real;

/// A ring buffer of up to `M` pairs (sᵢ, yᵢ) with their curvature sᵢᵀyᵢ, oldest
/// first. Pushing into a full ring drops the oldest pair. The usable capacity can
/// be set below `M` at run time (HAMCMC keeps M − 1 pairs).
#[derive(Debug, Clone)]
pub struct PairRing<T, const D: usize, const M: usize> {
    s: [[T; D]; M],
    y: [[T; D]; M],
    curvature: [T; M],
    start: usize,
    len: usize,
    capacity: usize,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize, const M: usize] PairRing<T, D, M> { s, y, curvature, start, len, capacity });

impl<T: Real, const D: usize, const M: usize> PairRing<T, D, M> {
    /// An empty ring that holds at most `capacity` pairs (clamped to `M`).
    pub fn new(capacity: usize) -> Self {
        PairRing {
            s: [[T::ZERO; D]; M],
            y: [[T::ZERO; D]; M],
            curvature: [T::ZERO; M],
            start: 0,
            len: 0,
            capacity: if capacity < M { capacity } else { M },
        }
    }

    /// Number of pairs held.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when no pair is held.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Most pairs this ring keeps.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Empties the ring and sets its capacity (clamped to `M`), writing
    /// nothing of length D.
    pub(crate) fn set_capacity(&mut self, capacity: usize) {
        self.start = 0;
        self.len = 0;
        self.capacity = if capacity < M { capacity } else { M };
    }

    /// Forgets every pair.
    #[inline]
    pub fn clear(&mut self) {
        self.start = 0;
        self.len = 0;
    }

    #[inline]
    fn slot(&self, k: usize) -> usize {
        let i = self.start + k;
        if i >= self.capacity {
            i - self.capacity
        } else {
            i
        }
    }

    /// Appends a pair; when full, the oldest pair is dropped. A ring of capacity
    /// zero ignores the pair.
    pub fn push(&mut self, s: &[T; D], y: &[T; D], curvature: T) {
        self.push_leading(s, y, curvature, D);
    }

    /// [`push`](Self::push) of the first `len` entries of s and y (at most
    /// D): the slot's entries from `len` on keep what they held, zero for a
    /// ring that has only ever held pairs of that length.
    pub(crate) fn push_leading(&mut self, s: &[T; D], y: &[T; D], curvature: T, len: usize) {
        if self.capacity == 0 {
            return;
        }
        let slot = if self.len < self.capacity {
            self.len += 1;
            self.slot(self.len - 1)
        } else {
            let oldest = self.start;
            self.start = self.slot(1);
            oldest
        };
        let len = len.min(D);
        self.s[slot][..len].copy_from_slice(&s[..len]);
        self.y[slot][..len].copy_from_slice(&y[..len]);
        self.curvature[slot] = curvature;
    }

    /// The k-th pair in age order (0 = oldest) as (s, y, sᵀy), or `None` past the end.
    #[inline]
    pub fn get(&self, k: usize) -> Option<(&[T; D], &[T; D], T)> {
        if k >= self.len {
            return None;
        }
        let i = self.slot(k);
        Some((&self.s[i], &self.y[i], self.curvature[i]))
    }

    /// The newest pair, if any.
    #[inline]
    pub fn newest(&self) -> Option<(&[T; D], &[T; D], T)> {
        self.len.checked_sub(1).and_then(|k| self.get(k))
    }

    /// Iterates over the pairs from oldest to newest.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&[T; D], &[T; D], T)> + '_ {
        (0..self.len).map(move |k| {
            let i = self.slot(k);
            (&self.s[i], &self.y[i], self.curvature[i])
        })
    }
}

#[cfg(test)]
mod tests {
    use super::PairRing;

    fn firsts(r: &PairRing<f64, 1, 3>) -> [f64; 3] {
        let mut out = [f64::NAN; 3];
        for (k, (s, _, _)) in r.iter().enumerate() {
            out[k] = s[0];
        }
        out
    }

    #[test]
    fn keeps_the_newest_pairs_in_order() {
        let mut r = PairRing::<f64, 1, 3>::new(3);
        assert!(r.is_empty());
        for v in 1..=5 {
            r.push(&[v as f64], &[-(v as f64)], v as f64);
        }
        assert_eq!(r.len(), 3);
        assert_eq!(firsts(&r), [3.0, 4.0, 5.0]);
        assert_eq!(r.newest().unwrap().2, 5.0);
        assert_eq!(r.get(0).unwrap().1, &[-3.0]);
        assert!(r.get(3).is_none());
        r.clear();
        assert!(r.newest().is_none());
    }

    #[test]
    fn reduced_capacity_and_zero_capacity() {
        let mut r = PairRing::<f64, 1, 3>::new(2);
        for v in 1..=4 {
            r.push(&[v as f64], &[0.0], 1.0);
        }
        assert_eq!(r.len(), 2);
        assert_eq!(firsts(&r)[..2], [3.0, 4.0]);
        let mut z = PairRing::<f64, 1, 3>::new(0);
        z.push(&[1.0], &[1.0], 1.0);
        assert!(z.is_empty());
        assert_eq!(PairRing::<f64, 1, 3>::new(10).capacity(), 3);
    }
}
