//! [`Shard`]: one block of W or H with every per-coordinate vector a
//! sampler keeps for it, in slots.

use std::ops::Range;

/// The slots of one shard: `persistent` slots that travel with the block
/// when it moves to another rank (the draws, the L-BFGS pairs, PSGLD's
/// second moments), then `scratch` slots that do not (gradients, noise,
/// proposals). Slot k holds entries `k·len … (k + 1)·len` of one vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Shard {
    coordinates: Range<usize>,
    persistent: usize,
    data: Vec<f64>,
}

impl Shard {
    /// A shard over `coordinates` of the model's vector, all slots zero.
    pub fn new(coordinates: Range<usize>, persistent: usize, scratch: usize) -> Self {
        let len = coordinates.len();
        Shard {
            coordinates,
            persistent,
            data: vec![0.0; len * (persistent + scratch)],
        }
    }

    /// The coordinates of the model's vector this shard holds.
    pub fn coordinates(&self) -> Range<usize> {
        self.coordinates.clone()
    }

    /// Its number of coordinates.
    pub fn len(&self) -> usize {
        self.coordinates.len()
    }

    /// `true` for a shard of no coordinate.
    pub fn is_empty(&self) -> bool {
        self.coordinates.is_empty()
    }

    /// Slot `k`.
    pub fn slot(&self, k: usize) -> &[f64] {
        let n = self.len();
        &self.data[k * n..(k + 1) * n]
    }

    /// Slot `k`, to write.
    pub fn slot_mut(&mut self, k: usize) -> &mut [f64] {
        let n = self.len();
        &mut self.data[k * n..(k + 1) * n]
    }

    /// Slot `read` to read and slot `write` (≠ `read`) to write.
    pub fn read_write(&mut self, read: usize, write: usize) -> (&[f64], &mut [f64]) {
        assert_ne!(read, write, "one slot cannot be both read and written");
        let n = self.len();
        if read < write {
            let (lo, hi) = self.data.split_at_mut(write * n);
            (&lo[read * n..(read + 1) * n], &mut hi[..n])
        } else {
            let (lo, hi) = self.data.split_at_mut(read * n);
            (&hi[..n], &mut lo[write * n..(write + 1) * n])
        }
    }

    /// Copies slot `from` into slot `to`.
    pub fn copy_slot(&mut self, from: usize, to: usize) {
        if from != to {
            let (src, dst) = self.read_write(from, to);
            dst.copy_from_slice(src);
        }
    }

    /// The persistent slots, what a block move sends.
    pub fn persistent(&self) -> &[f64] {
        &self.data[..self.persistent * self.len()]
    }

    /// The persistent slots, what a block move receives into.
    pub fn persistent_mut(&mut self) -> &mut [f64] {
        let n = self.persistent * self.len();
        &mut self.data[..n]
    }

    /// All slots as one flat vector (slot k at `k·len`), for updates that
    /// read several slots and write one.
    pub fn data_mut(&mut self) -> &mut [f64] {
        &mut self.data
    }
}
