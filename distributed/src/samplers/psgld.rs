//! [`Psgld`]: distributed preconditioned SGLD (Li, Chen, Carlson & Carin
//! 2016; the core's `qnmc::Psgld` without Γ, gradient scale 1): the
//! RMSprop second moments V are per coordinate and travel with their block.
//!
//! ```text
//! V ← α V + (1 − α) g ⊙ g,   G = 1 ⊘ (λ + √V)
//! θ ← θ − ε G ⊙ g + √(2ε G) ⊙ z
//! ```

use super::{ShardSampler, local_update_step};
use crate::DistributedError;
use crate::cluster::Cluster;
use crate::transport::Transport;

const THETA: usize = 0;
const MOMENTS: usize = 1;
const GRADIENT: usize = 2;
const NOISE: usize = 3;
const PROPOSAL: usize = 4;
const NEW_MOMENTS: usize = 5;

/// Distributed PSGLD with step size ε, decay α and regulariser λ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Psgld {
    step_size: f64,
    decay: f64,
    regulariser: f64,
}

impl Psgld {
    /// ε > 0, α ∈ [0, 1), λ > 0, all finite.
    pub fn new(step_size: f64, decay: f64, regulariser: f64) -> Result<Self, DistributedError> {
        let ok = step_size.is_finite()
            && step_size > 0.0
            && (0.0..1.0).contains(&decay)
            && regulariser.is_finite()
            && regulariser > 0.0;
        if ok {
            Ok(Psgld {
                step_size,
                decay,
                regulariser,
            })
        } else {
            Err(DistributedError::Setting(format!(
                "PSGLD needs ε > 0, α in [0, 1) and λ > 0, got ({step_size}, {decay}, {regulariser})"
            )))
        }
    }
}

impl ShardSampler for Psgld {
    fn slots(&self) -> (usize, usize) {
        (2, 4)
    }

    fn draw_slot(&self) -> usize {
        THETA
    }

    fn step<T: Transport>(
        &mut self,
        cluster: &mut Cluster<'_, T>,
        draw: u64,
    ) -> Result<u32, DistributedError> {
        let Psgld {
            step_size: eps,
            decay,
            regulariser,
        } = *self;
        let slots = [THETA, GRADIENT, NOISE, PROPOSAL];
        let commits = [(PROPOSAL, THETA), (NEW_MOMENTS, MOMENTS)];
        local_update_step(cluster, draw, slots, &commits, |d, n| {
            for i in 0..n {
                let g = d[GRADIENT * n + i];
                let v = decay * d[MOMENTS * n + i] + (1.0 - decay) * g * g;
                let precondition = 1.0 / (regulariser + v.sqrt());
                let x = d[THETA * n + i];
                d[PROPOSAL * n + i] = x - eps * precondition * g
                    + (2.0 * eps * precondition).sqrt() * d[NOISE * n + i];
                d[NEW_MOMENTS * n + i] = v;
            }
        })?;
        Ok(1)
    }
}
