//! [`Dsgld`]: distributed SGLD (Ahn, Korattikara, Liu, Rajan & Welling 2015,
//! as the HAMCMC paper runs it): θ ← θ − ε ∇Ũ_Ω(θ) + √(2ε) z on the part in
//! use, one part gradient per step.

use super::{ShardSampler, local_update_step};
use crate::DistributedError;
use crate::cluster::Cluster;
use crate::transport::Transport;

const THETA: usize = 0;
const GRADIENT: usize = 1;
const NOISE: usize = 2;
const PROPOSAL: usize = 3;

/// Distributed SGLD with a constant step size ε.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dsgld {
    step_size: f64,
}

impl Dsgld {
    /// ε, finite and positive.
    pub fn new(step_size: f64) -> Result<Self, DistributedError> {
        if step_size.is_finite() && step_size > 0.0 {
            Ok(Dsgld { step_size })
        } else {
            Err(DistributedError::Setting(format!(
                "the step size must be finite and positive, got {step_size}"
            )))
        }
    }
}

impl ShardSampler for Dsgld {
    fn slots(&self) -> (usize, usize) {
        (1, 3)
    }

    fn draw_slot(&self) -> usize {
        THETA
    }

    fn step<T: Transport>(
        &mut self,
        cluster: &mut Cluster<'_, T>,
        draw: u64,
    ) -> Result<u32, DistributedError> {
        let eps = self.step_size;
        let noise_scale = (2.0 * eps).sqrt();
        let slots = [THETA, GRADIENT, NOISE, PROPOSAL];
        local_update_step(cluster, draw, slots, &[(PROPOSAL, THETA)], |d, n| {
            for i in 0..n {
                let (x, g, z) = (d[THETA * n + i], d[GRADIENT * n + i], d[NOISE * n + i]);
                d[PROPOSAL * n + i] = x - eps * g + noise_scale * z;
            }
        })?;
        Ok(1)
    }
}
