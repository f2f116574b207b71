//! [`Cluster`]: one rank's view of a distributed chain — the shards it
//! holds, the part in use, and the four things a sampler asks of it: a
//! part gradient, noise, a sum over shards, and moving the blocks of H.

use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use qnmc_host::model::{Model as _, ModelRng};
use qnmc_host::targets::{GaussianPmf, factor_dot};

use crate::DistributedError;
use crate::grid::NodeGrid;
use crate::shard::Shard;
use crate::transport::Transport;

/// Bytes this rank sent, by purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Traffic {
    /// Blocks of H (with their history) passed to the next node.
    pub blocks: u64,
    /// The all-gathers of per-shard partial sums (HAMCMC's Gram matrix,
    /// the non-finite checks).
    pub reduces: u64,
    /// Draws gathered to rank 0 to be scored (not part of the sampler).
    pub gathers: u64,
}

/// One rank's shards and its share of the schedule.
pub struct Cluster<'m, T: Transport> {
    model: &'m GaussianPmf,
    grid: NodeGrid,
    transport: T,
    shards: Vec<Option<Shard>>,
    /// Training-rating indices of block (b, c) for this rank's nodes b,
    /// ascending: `blocks[b − first node][c]`.
    blocks: Vec<Vec<Vec<u32>>>,
    part: usize,
    part_rng: ModelRng,
    seed: u64,
    slots: (usize, usize),
    traffic: Traffic,
}

impl<'m, T: Transport> Cluster<'m, T> {
    /// This rank's part of `model` for a sampler with `persistent` and
    /// `scratch` slots per shard, slot 0 set to the model's initial point.
    /// The first part is drawn from `seed`, the same on every rank.
    pub fn new(
        model: &'m GaussianPmf,
        transport: T,
        seed: u64,
        persistent: usize,
        scratch: usize,
    ) -> Result<Self, DistributedError> {
        let grid = NodeGrid::new(model, transport.ranks(), transport.rank())?;
        let partition = model.partition();
        let users = model.ratings().train().users();
        let mut blocks = Vec::new();
        for b in grid.nodes_of(grid.rank()) {
            let mut row = Vec::with_capacity(grid.nodes());
            for c in 0..grid.nodes() {
                let part = partition.part(partition.part_of(b, c));
                let mine = part.iter().copied();
                row.push(
                    mine.filter(|&n| partition.user_block(users[n as usize] as usize) == b)
                        .collect(),
                );
            }
            blocks.push(row);
        }
        let mut part_rng = ModelRng::seed_from_u64(seed);
        let part = partition.choose(&mut part_rng);
        let start = model.initial_point();
        let mut shards: Vec<Option<Shard>> = (0..grid.shards()).map(|_| None).collect();
        for s in grid.held_by(grid.rank(), part) {
            let mut shard = Shard::new(grid.coordinates(s), persistent, scratch);
            shard
                .slot_mut(0)
                .copy_from_slice(&start[grid.coordinates(s)]);
            shards[s] = Some(shard);
        }
        Ok(Cluster {
            model,
            grid,
            transport,
            shards,
            blocks,
            part,
            part_rng,
            seed,
            slots: (persistent, scratch),
            traffic: Traffic::default(),
        })
    }

    /// The grid.
    pub fn grid(&self) -> &NodeGrid {
        &self.grid
    }

    /// The part the next step uses.
    pub fn part(&self) -> usize {
        self.part
    }

    /// Bytes sent so far, by purpose.
    pub fn traffic(&self) -> Traffic {
        self.traffic
    }

    /// The shards this rank holds, ascending.
    pub fn held_mut(&mut self) -> impl Iterator<Item = &mut Shard> {
        self.shards.iter_mut().flatten()
    }

    /// Writes into slot `out` of every held shard the part gradient at the
    /// draw in slot `at`: the prior's gradient plus N/|Ω_p| times the
    /// likelihood gradient of part p's ratings — node b's block
    /// (b, (b + p) mod B) for its W_b and H_c. Bit for bit
    /// [`GaussianPmf::part_gradient`]'s numbers: the same products, added to
    /// each coordinate in the same (ascending rating) order.
    pub fn part_gradient(&mut self, at: usize, out: usize) {
        let (sigma_w, sigma_h, sigma_x) = self.model.sds();
        let (offset, k) = (self.model.offset(), self.model.rank());
        let precision = 1.0 / (sigma_x * sigma_x);
        let train = self.model.ratings().train();
        let (users, items, values) = (train.users(), train.items(), train.ratings());
        let part_len = self.model.partition().part(self.part).len();
        let weight = train.len() as f64 / part_len.max(1) as f64;
        let nodes = self.grid.nodes();
        for (local, b) in self.grid.nodes_of(self.grid.rank()).enumerate() {
            let c = self.grid.item_block_at(b, self.part);
            let mut w = self.shards[b].take().expect("a rank holds its nodes' W");
            let mut h = self.shards[nodes + c].take().expect("node b holds H_(b+p)");
            for (shard, sigma) in [(&mut w, sigma_w), (&mut h, sigma_h)] {
                let p = 1.0 / (sigma * sigma);
                let (x, g) = shard.read_write(at, out);
                for (gi, &xi) in g.iter_mut().zip(x) {
                    *gi = p * xi;
                }
            }
            let (u0, j0) = (self.grid.users_of(b).start, self.grid.items_of(c).start);
            let (xw, gw) = w.read_write(at, out);
            let (xh, gh) = h.read_write(at, out);
            for &n in &self.blocks[local][c] {
                let n = n as usize;
                let a = (users[n] as usize - u0) * k;
                let bh = (items[n] as usize - j0) * k;
                let (wv, hv) = (&xw[a..a + k], &xh[bh..bh + k]);
                let residual = factor_dot(wv, hv) + offset - f64::from(values[n]);
                let coefficient = weight * precision * residual;
                for (g, &v) in gw[a..a + k].iter_mut().zip(hv) {
                    *g += coefficient * v;
                }
                for (g, &v) in gh[bh..bh + k].iter_mut().zip(wv) {
                    *g += coefficient * v;
                }
            }
            self.shards[b] = Some(w);
            self.shards[nodes + c] = Some(h);
        }
    }

    /// Fills slot `slot` of every held shard with standard normals for
    /// draw `draw`: shard s's from its own stream, seeded by (seed, draw,
    /// s), so a shard's noise does not depend on which rank holds it.
    pub fn fill_noise(&mut self, draw: u64, slot: usize) {
        let seed = self.seed;
        for (s, shard) in self.shards.iter_mut().enumerate() {
            if let Some(shard) = shard {
                let mut rng = XorShiftRng::seed_from_u64(stream_seed(seed, draw, s as u64));
                qnmc::random::fill_standard_normal(&mut rng, shard.slot_mut(slot));
            }
        }
    }

    /// The sum over all shards of `width` numbers per shard (`partial`
    /// writes a shard's), on every rank: an all-gather of each rank's
    /// partials, then one sum in shard order, so every rank, and every
    /// number of ranks, gets the same bits.
    pub fn sum_over_shards(
        &mut self,
        width: usize,
        mut partial: impl FnMut(&mut Shard, &mut [f64]),
    ) -> Result<Vec<f64>, DistributedError> {
        let held = self.grid.held_by(self.grid.rank(), self.part);
        let mut local = vec![0.0; held.len() * width];
        for (slot, &s) in local.chunks_exact_mut(width.max(1)).zip(&held) {
            let shard = self.shards[s].as_mut().expect("held shards are here");
            partial(shard, slot);
        }
        let ranks = self.grid.ranks();
        let mut all = vec![0.0; ranks * local.len()];
        let before = self.transport.bytes_sent();
        self.transport.all_gather(&local, &mut all)?;
        self.traffic.reduces += self.transport.bytes_sent() - before;
        let mut place = vec![(0, 0); self.grid.shards()];
        for r in 0..ranks {
            for (k, s) in self.grid.held_by(r, self.part).into_iter().enumerate() {
                place[s] = (r, k);
            }
        }
        let mut total = vec![0.0; width];
        for &(r, k) in &place {
            let at = (r * held.len() + k) * width;
            for (t, v) in total.iter_mut().zip(&all[at..at + width]) {
                *t += v;
            }
        }
        Ok(total)
    }

    /// Draws the next part (the same draw on every rank) and moves every
    /// block of H whose node is on another rank there, with its persistent
    /// slots. The moves go in item-block order on every rank, each a send
    /// on the old rank and a receive on the new one, so blocking sends
    /// cannot deadlock.
    pub fn next_part(&mut self) -> Result<(), DistributedError> {
        let next = self.model.partition().choose(&mut self.part_rng);
        let (nodes, me) = (self.grid.nodes(), self.grid.rank());
        let before = self.transport.bytes_sent();
        for c in 0..nodes {
            let s = nodes + c;
            let from = self.grid.rank_holding(s, self.part);
            let to = self.grid.rank_holding(s, next);
            if from == to {
                continue;
            }
            if from == me {
                let shard = self.shards[s].take().expect("the sender holds the block");
                self.transport.send(to, shard.persistent())?;
            } else if to == me {
                let mut shard = Shard::new(self.grid.coordinates(s), self.slots.0, self.slots.1);
                self.transport.receive(from, shard.persistent_mut())?;
                self.shards[s] = Some(shard);
            }
        }
        self.traffic.blocks += self.transport.bytes_sent() - before;
        self.part = next;
        Ok(())
    }

    /// Slot `slot` of every shard, assembled on rank 0 into the model's
    /// vector (`Some` there, `None` on the other ranks).
    pub fn gather(&mut self, slot: usize) -> Result<Option<Vec<f64>>, DistributedError> {
        let me = self.grid.rank();
        let before = self.transport.bytes_sent();
        let mut full = (me == 0).then(|| vec![0.0; self.model.dimension()]);
        for r in 0..self.grid.ranks() {
            for s in self.grid.held_by(r, self.part) {
                let range = self.grid.coordinates(s);
                match (&mut full, r == me) {
                    (Some(full), true) => {
                        let shard = self.shards[s].as_ref().expect("held");
                        full[range].copy_from_slice(shard.slot(slot));
                    }
                    (Some(full), false) => self.transport.receive(r, &mut full[range])?,
                    (None, true) => {
                        let shard = self.shards[s].as_ref().expect("held");
                        self.transport.send(0, shard.slot(slot))?;
                    }
                    (None, false) => {}
                }
            }
        }
        self.traffic.gathers += self.transport.bytes_sent() - before;
        Ok(full)
    }
}

/// The seed of shard `shard`'s noise at draw `draw` (SplitMix64 finalisers
/// over the three numbers).
fn stream_seed(seed: u64, draw: u64, shard: u64) -> u64 {
    fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    mix(seed ^ mix(draw ^ mix(shard)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::SingleProcess;
    use qnmc_host::targets::SyntheticRecipe;

    /// The shards' part gradients, put together, are
    /// `GaussianPmf::part_gradient`'s vector bit for bit, for every part.
    #[test]
    fn part_gradient_is_the_models_bit_for_bit() {
        let ratings = SyntheticRecipe::new(37, 23, 400, 3)
            .with_min_per_user(3)
            .build()
            .unwrap();
        let model = GaussianPmf::new(ratings, 4).unwrap();
        let mut cluster = Cluster::new(&model, SingleProcess, 5, 1, 1).unwrap();
        let x = model.initial_point();
        for _ in 0..12 {
            let mut expected = vec![0.0; model.dimension()];
            model.part_gradient(&x, cluster.part(), &mut expected);
            cluster.part_gradient(0, 1);
            let ours = cluster.gather(1).unwrap().unwrap();
            assert!(
                ours.iter()
                    .zip(&expected)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "part {}",
                cluster.part()
            );
            cluster.next_part().unwrap();
        }
    }
}
