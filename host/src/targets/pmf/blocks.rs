//! [`BlockPartition`]: the training ratings cut into a B × B grid of
//! blocks and B disjoint parts, the data schedule of the HAMCMC paper's
//! distributed matrix factorisation (§4.3, Fig. 4; Fig. 5's experiment).
//!
//! Users are cut into B ranges of consecutive indices, user u in block
//! ⌊u·B/I⌋, and items likewise, item j in ⌊j·B/J⌋. Part p (0 ≤ p < B) is
//! the union of the B blocks (b, (b + p) mod B), b = 0..B: a "diagonal" of
//! the grid, whose blocks share no user range and no item range (so B
//! computers, each holding one user range, can work on one part at once).
//! The parts are disjoint and together hold every training rating. A
//! sampler step picks part p with probability |Ω_p| / N and uses all of it
//! as its minibatch, scaled by N / |Ω_p|: the expectation of the scaled sum
//! is the full-data sum, Σ_p (|Ω_p|/N)(N/|Ω_p|) Σ_{Ω_p} = Σ_Ω.

use super::PmfError;
use super::ratings::Ratings;
use crate::model::ModelRng;
use rand_core::Rng;

/// A B × B block grid over the training ratings and its B diagonal parts.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockPartition {
    blocks: usize,
    users: usize,
    items: usize,
    /// Training-rating indices of each part, ascending.
    parts: Vec<Vec<u32>>,
}

impl BlockPartition {
    /// The HAMCMC paper's grid: 4 × 4 blocks, 4 parts.
    pub const HAMCMC_BLOCKS: usize = 4;

    /// Cuts the training ratings of `ratings` into `blocks` × `blocks`
    /// blocks and `blocks` parts. Fails when `blocks` is 0 or exceeds the
    /// number of users or items (a block range would be empty).
    pub fn new(ratings: &Ratings, blocks: usize) -> Result<Self, PmfError> {
        let (users, items) = (ratings.users(), ratings.items());
        if blocks == 0 || blocks > users || blocks > items {
            return Err(PmfError::new(format!(
                "a block grid needs 1 to min(users, items) = {} blocks a side, got {blocks}",
                users.min(items)
            )));
        }
        let mut partition = BlockPartition {
            blocks,
            users,
            items,
            parts: vec![Vec::new(); blocks],
        };
        let train = ratings.train();
        for n in 0..train.len() {
            let (u, j, _) = train.get(n);
            let p = partition.part_of(partition.user_block(u), partition.item_block(j));
            partition.parts[p].push(n as u32);
        }
        Ok(partition)
    }

    /// B, the number of blocks a side (and of parts).
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// The block row ⌊u·B/I⌋ of user `u`.
    pub fn user_block(&self, u: usize) -> usize {
        u * self.blocks / self.users
    }

    /// The block column ⌊j·B/J⌋ of item `j`.
    pub fn item_block(&self, j: usize) -> usize {
        j * self.blocks / self.items
    }

    /// The part holding block (`user_block`, `item_block`):
    /// (item_block − user_block) mod B.
    pub fn part_of(&self, user_block: usize, item_block: usize) -> usize {
        (item_block + self.blocks - user_block) % self.blocks
    }

    /// The training-rating indices (into [`Ratings::train`]) of part `p`,
    /// ascending.
    pub fn part(&self, p: usize) -> &[u32] {
        &self.parts[p]
    }

    /// |Ω_p| for each part p.
    pub fn sizes(&self) -> Vec<usize> {
        self.parts.iter().map(Vec::len).collect()
    }

    /// A part drawn with probability |Ω_p| / N: a training rating uniform
    /// among the N (multiply-shift of a u32), and the part that holds it.
    pub fn choose(&self, rng: &mut ModelRng) -> usize {
        let total: usize = self.parts.iter().map(Vec::len).sum();
        let mut n = ((u64::from(rng.next_u32()) * total as u64) >> 32) as usize;
        for (p, part) in self.parts.iter().enumerate() {
            if n < part.len() {
                return p;
            }
            n -= part.len();
        }
        self.blocks - 1
    }
}
