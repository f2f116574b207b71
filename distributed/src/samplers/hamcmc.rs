//! [`Hamcmc`]: distributed HAMCMC (Şimşekli et al. 2016, Algorithm 1 and
//! §4.3), the core's `qnmc::Hamcmc` with its vectors in shards.
//!
//! Every shard keeps its slices of the last M draws and of the M − 1 pairs
//! (s, y), and they move with their block of H. Step t, with the index
//! bookkeeping of docs/ALGORITHMS.md §2:
//!
//! ```text
//! g = ∇Ũ_Ω(θ_{t−M})                      one part gradient, local per node
//! G = Gram(s₁…s_m, y₁…y_m, g, z)         one sum over shards, (2m+2)(2m+3)/2 numbers
//! θ_t = θ_{t−M} − ε H g + √(2ε) S z      H g, S z from G (lbfgs_coefficients)
//! y = ∇Ũ_Ω(θ_t) − g + λ s,  s = θ_t − θ_{t−M}
//! sᵀy                                     one sum over shards (3 numbers)
//! ```
//!
//! The pair is kept when sᵀy is finite and positive (the core's HAMCMC
//! policy: trust region λ, no relative bound). Start-up as in the core:
//! draws 1 … M − 1 are preconditioned SGLD steps (H = γI) from the
//! previous draw, one gradient each.

use std::collections::VecDeque;

use qnmc::StepSizeSchedule;

use super::lbfgs_coefficients::Gram;
use super::{ShardSampler, non_finite};
use crate::DistributedError;
use crate::cluster::Cluster;
use crate::transport::Transport;

/// Distributed HAMCMC with memory M (M draws, M − 1 pairs).
#[derive(Debug, Clone, PartialEq)]
pub struct Hamcmc {
    memory: usize,
    schedule: StepSizeSchedule<f64>,
    gamma: f64,
    trust_region: f64,
    /// Draws held (≤ M), the ring slots of the oldest and newest draw.
    history_len: usize,
    oldest: usize,
    newest: usize,
    /// Pair slots (0 … M − 2) in age order, oldest first.
    pairs: VecDeque<usize>,
    pairs_skipped: u64,
}

impl Hamcmc {
    /// Memory M ≥ 2, the step sizes, γ > 0 and λ ≥ 0.
    pub fn new(
        memory: usize,
        schedule: StepSizeSchedule<f64>,
        gamma: f64,
        trust_region: f64,
    ) -> Result<Self, DistributedError> {
        if memory < 2 {
            return Err(DistributedError::Setting(format!(
                "HAMCMC keeps M draws and M - 1 pairs: M must be at least 2, got {memory}"
            )));
        }
        // The core's checks of the same settings (the schedule, γ, λ), with
        // its messages: a one-coordinate core HAMCMC is built and dropped.
        let settings = qnmc::HamcmcSettings::new(schedule, gamma, trust_region);
        qnmc::Hamcmc::<f64, 1, 2>::new(settings, [0.0])?;
        Ok(Hamcmc {
            memory,
            schedule,
            gamma,
            trust_region,
            history_len: 1,
            oldest: 0,
            newest: 0,
            pairs: VecDeque::new(),
            pairs_skipped: 0,
        })
    }

    /// Pairs refused so far (sᵀy not finite and positive).
    pub fn pairs_skipped(&self) -> u64 {
        self.pairs_skipped
    }

    /// Pairs held now.
    pub fn pairs(&self) -> usize {
        self.pairs.len()
    }

    fn s_slot(&self, k: usize) -> usize {
        self.memory + k
    }

    fn y_slot(&self, k: usize) -> usize {
        self.memory + (self.memory - 1) + k
    }

    /// Scratch slots: g, z, the proposal, its gradient, s and y.
    fn scratch(&self, k: usize) -> usize {
        3 * self.memory - 2 + k
    }

    /// The proposal θ_t into the proposal slot; the Gram sum first.
    fn propose<T: Transport>(
        &self,
        cluster: &mut Cluster<'_, T>,
        draw: u64,
        eps: f64,
        base: usize,
    ) -> Result<(), DistributedError> {
        let (g, z, proposal) = (self.scratch(0), self.scratch(1), self.scratch(2));
        let mut basis: Vec<usize> = self.pairs.iter().map(|&k| self.s_slot(k)).collect();
        basis.extend(self.pairs.iter().map(|&k| self.y_slot(k)));
        basis.extend([g, z]);
        let m = self.pairs.len();
        let upper = cluster.sum_over_shards(Gram::upper_len(m), |shard, out| {
            let vectors: Vec<&[f64]> = basis.iter().map(|&b| shard.slot(b)).collect();
            Gram::upper_partial(&vectors, out);
        })?;
        let gram = Gram::from_upper(m, &upper);
        if !gram.is_finite() {
            return Err(DistributedError::NonFinite {
                draw,
                what: "gradient",
            });
        }
        let hg = gram.inverse_hessian_times_g(self.gamma);
        let sz = gram.sqrt_inverse_hessian_times_z(self.gamma);
        let noise_scale = (2.0 * eps).sqrt();
        for shard in cluster.held_mut() {
            let n = shard.len();
            let d = shard.data_mut();
            for i in 0..n {
                let (mut h, mut s) = (0.0, 0.0);
                for ((&b, &hc), &sc) in basis.iter().zip(&hg).zip(&sz) {
                    h += hc * d[b * n + i];
                    s += sc * d[b * n + i];
                }
                d[proposal * n + i] = d[base * n + i] - eps * h + noise_scale * s;
            }
        }
        Ok(())
    }

    /// The pair of a full memory: the proposal's gradient, s and y, and
    /// the sum of (non-finite proposal entries, non-finite gradient
    /// entries, sᵀy).
    fn pair<T: Transport>(
        &self,
        cluster: &mut Cluster<'_, T>,
        base: usize,
    ) -> Result<[f64; 3], DistributedError> {
        let [g, _, proposal, new_g, s, y] = core::array::from_fn(|k| self.scratch(k));
        cluster.part_gradient(proposal, new_g);
        let lambda = self.trust_region;
        let sums = cluster.sum_over_shards(3, |shard, out| {
            let n = shard.len();
            let d = shard.data_mut();
            for i in 0..n {
                let si = d[proposal * n + i] - d[base * n + i];
                d[s * n + i] = si;
                d[y * n + i] = d[new_g * n + i] - d[g * n + i] + lambda * si;
            }
            out[0] = non_finite(shard.slot(proposal));
            out[1] = non_finite(shard.slot(new_g));
            out[2] = qnmc_host::targets::factor_dot(shard.slot(s), shard.slot(y));
        })?;
        Ok([sums[0], sums[1], sums[2]])
    }
}

impl ShardSampler for Hamcmc {
    fn slots(&self) -> (usize, usize) {
        (3 * self.memory - 2, 6)
    }

    fn draw_slot(&self) -> usize {
        self.newest
    }

    fn step<T: Transport>(
        &mut self,
        cluster: &mut Cluster<'_, T>,
        draw: u64,
    ) -> Result<u32, DistributedError> {
        let eps = self.schedule.step_size(draw, self.memory as u64);
        let full = self.history_len == self.memory;
        let base = if full { self.oldest } else { self.newest };
        let (g, z, proposal) = (self.scratch(0), self.scratch(1), self.scratch(2));
        cluster.part_gradient(base, g);
        cluster.fill_noise(draw, z);
        self.propose(cluster, draw, eps, base)?;
        let fail = |what| DistributedError::NonFinite { draw, what };
        if !full {
            let bad = cluster.sum_over_shards(1, |shard, out| {
                out[0] = non_finite(shard.slot(proposal));
            })?;
            if bad[0] > 0.0 {
                return Err(fail("proposal"));
            }
            let slot = self.history_len;
            for shard in cluster.held_mut() {
                shard.copy_slot(proposal, slot);
            }
            self.newest = slot;
            self.history_len += 1;
            return Ok(1);
        }
        let [bad_proposal, bad_gradient, sy] = self.pair(cluster, base)?;
        if bad_proposal > 0.0 {
            return Err(fail("proposal"));
        }
        if bad_gradient > 0.0 {
            return Err(fail("gradient"));
        }
        if sy.is_finite() && sy > 0.0 {
            let k = if self.pairs.len() < self.memory - 1 {
                self.pairs.len()
            } else {
                self.pairs
                    .pop_front()
                    .expect("a full ring has an oldest pair")
            };
            let (s, y) = (self.scratch(4), self.scratch(5));
            let (s_slot, y_slot) = (self.s_slot(k), self.y_slot(k));
            for shard in cluster.held_mut() {
                shard.copy_slot(s, s_slot);
                shard.copy_slot(y, y_slot);
            }
            self.pairs.push_back(k);
        } else {
            self.pairs_skipped += 1;
        }
        let oldest = self.oldest;
        for shard in cluster.held_mut() {
            shard.copy_slot(proposal, oldest);
        }
        self.newest = oldest;
        self.oldest = (oldest + 1) % self.memory;
        Ok(2)
    }
}
