//! [`NodeGrid`]: who holds what — the HAMCMC paper's Fig. 4 layout of a
//! matrix factorisation over B nodes, and those nodes over the ranks.
//!
//! The ratings are cut into B × B blocks by
//! [`BlockPartition`](qnmc_host::targets::BlockPartition) (users in
//! B ranges, items in B ranges). Node b keeps the factor rows W_b of user
//! range b for the whole run. Part p is the diagonal of blocks
//! (b, (b + p) mod B): while the chain uses part p, node b holds the item
//! factors H_c, c = (b + p) mod B, and every rating it needs, so its
//! gradient needs no message. When the next part p' differs, every block
//! of H moves to the node that needs it: H_c goes from node (c − p) mod B
//! to node (c − p') mod B, a cyclic shift by p' − p.
//!
//! The unit of data is a **shard**: shard b < B is W_b, shard B + c is
//! H_c. Sums over the whole vector (the inner products of HAMCMC, the
//! non-finite checks) are sums of one partial per shard, added in shard
//! order whichever rank holds the shard ([`Cluster::sum_over_shards`](crate::Cluster::sum_over_shards)).
//!
//! The B nodes are spread over R ranks, R dividing B: rank r runs nodes
//! r·B/R … (r + 1)·B/R − 1. With R = 1 one process runs all of them; the
//! chain is the same.

use std::ops::Range;

use qnmc_host::model::Model as _;
use qnmc_host::targets::GaussianPmf;

use crate::DistributedError;

/// The block layout of one model over a number of ranks, seen from one
/// rank.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeGrid {
    nodes: usize,
    ranks: usize,
    rank: usize,
    rank_k: usize,
    users: usize,
    user_ranges: Vec<Range<usize>>,
    item_ranges: Vec<Range<usize>>,
}

impl NodeGrid {
    /// The grid of `model`'s partition (B = its
    /// [`blocks`](qnmc_host::targets::BlockPartition::blocks)) over `ranks` ranks, seen from
    /// `rank`. Fails unless `ranks` divides B and `rank` < `ranks`.
    pub fn new(model: &GaussianPmf, ranks: usize, rank: usize) -> Result<Self, DistributedError> {
        let partition = model.partition();
        let nodes = partition.blocks();
        if ranks == 0 || nodes % ranks != 0 || rank >= ranks {
            return Err(DistributedError::Setting(format!(
                "{ranks} ranks for {nodes} nodes (rank {rank}): the ranks must divide the nodes"
            )));
        }
        let ratings = model.ratings();
        let ranges = |count: usize, block: &dyn Fn(usize) -> usize| {
            let mut out = vec![0..0; nodes];
            for i in 0..count {
                let b = block(i);
                if out[b].is_empty() {
                    out[b] = i..i + 1;
                } else {
                    out[b].end = i + 1;
                }
            }
            out
        };
        let user_ranges = ranges(ratings.users(), &|u| partition.user_block(u));
        let item_ranges = ranges(ratings.items(), &|j| partition.item_block(j));
        debug_assert_eq!(
            (ratings.users() + ratings.items()) * model.rank(),
            model.dimension()
        );
        Ok(NodeGrid {
            nodes,
            ranks,
            rank,
            rank_k: model.rank(),
            users: ratings.users(),
            user_ranges,
            item_ranges,
        })
    }

    /// B, the number of nodes (and of parts, and of blocks of W and of H).
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// 2B, the number of shards.
    pub fn shards(&self) -> usize {
        2 * self.nodes
    }

    /// R.
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// The rank this grid is seen from.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The nodes rank `rank` runs.
    pub fn nodes_of(&self, rank: usize) -> Range<usize> {
        let per = self.nodes / self.ranks;
        rank * per..(rank + 1) * per
    }

    /// The rank that runs node `node`.
    pub fn rank_of_node(&self, node: usize) -> usize {
        node / (self.nodes / self.ranks)
    }

    /// The item block node `node` holds during part `part`: (node + part) mod B.
    pub fn item_block_at(&self, node: usize, part: usize) -> usize {
        (node + part) % self.nodes
    }

    /// The node holding item block `c` during part `part`: (c − part) mod B.
    pub fn node_holding(&self, item_block: usize, part: usize) -> usize {
        (item_block + self.nodes - part % self.nodes) % self.nodes
    }

    /// The rank holding shard `shard` during part `part`.
    pub fn rank_holding(&self, shard: usize, part: usize) -> usize {
        if shard < self.nodes {
            self.rank_of_node(shard)
        } else {
            self.rank_of_node(self.node_holding(shard - self.nodes, part))
        }
    }

    /// The shards rank `rank` holds during part `part`, ascending.
    pub fn held_by(&self, rank: usize, part: usize) -> Vec<usize> {
        let mut held: Vec<usize> = (0..self.shards())
            .filter(|&s| self.rank_holding(s, part) == rank)
            .collect();
        held.sort_unstable();
        held
    }

    /// The coordinates of shard `shard` in the model's vector (W_b: the
    /// users of range b, K each; H_c: the items of range c, after the I·K
    /// user coordinates).
    pub fn coordinates(&self, shard: usize) -> Range<usize> {
        let k = self.rank_k;
        if shard < self.nodes {
            let users = &self.user_ranges[shard];
            users.start * k..users.end * k
        } else {
            let items = &self.item_ranges[shard - self.nodes];
            (self.users + items.start) * k..(self.users + items.end) * k
        }
    }

    /// The users of range `block`.
    pub fn users_of(&self, block: usize) -> Range<usize> {
        self.user_ranges[block].clone()
    }

    /// The items of range `block`.
    pub fn items_of(&self, block: usize) -> Range<usize> {
        self.item_ranges[block].clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qnmc_host::targets::SyntheticRecipe;

    fn model() -> GaussianPmf {
        let ratings = SyntheticRecipe::new(41, 27, 500, 3)
            .with_min_per_user(3)
            .build()
            .unwrap();
        GaussianPmf::new(ratings, 3).unwrap()
    }

    /// The shards cover every coordinate once, every shard is held by
    /// exactly one rank in every part, and node b holds H_{(b+p) mod B}.
    #[test]
    fn every_coordinate_and_shard_has_one_owner() {
        let model = model();
        for ranks in [1, 2, 4] {
            let grid = NodeGrid::new(&model, ranks, 0).unwrap();
            let mut seen = vec![0u8; model.dimension()];
            for s in 0..grid.shards() {
                for i in grid.coordinates(s) {
                    seen[i] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "ranks {ranks}");
            for part in 0..grid.nodes() {
                let mut owners = vec![0u8; grid.shards()];
                for r in 0..ranks {
                    for s in grid.held_by(r, part) {
                        owners[s] += 1;
                    }
                    assert_eq!(grid.held_by(r, part).len(), grid.shards() / ranks);
                }
                assert!(owners.iter().all(|&c| c == 1));
                for b in 0..grid.nodes() {
                    let c = grid.item_block_at(b, part);
                    assert_eq!(grid.node_holding(c, part), b);
                    assert_eq!(model.partition().part_of(b, c), part);
                }
            }
        }
    }

    #[test]
    fn refuses_ranks_that_do_not_divide_the_nodes() {
        let model = model();
        assert!(NodeGrid::new(&model, 3, 0).is_err());
        assert!(NodeGrid::new(&model, 0, 0).is_err());
        assert!(NodeGrid::new(&model, 2, 2).is_err());
    }
}
