//! Dense HAMCMC (Şimşekli et al. 2016, Algorithm 1; ALGORITHMS.md §2).
//!
//! The reference keeps the last M draws in a `VecDeque` (oldest at the front)
//! and at most M − 1 pairs. Draw t (t = 1, 2, …):
//!
//! ```text
//! ε_t from the schedule;  Ω_t = the target's batch (drawn first);  z = D normals
//! base = the newest draw while fewer than M draws are held (start-up SGLD, no pairs),
//!        the oldest held draw θ_{t−M} afterwards
//! g = ∇Ũ_Ω(base);  θ_t = base − ε_t H g + √(2ε_t) S z      (dense H and product-form S)
//! once M draws are held: s = θ_t − base, y = ∇Ũ_Ω(θ_t) − g, offered to the
//! curvature rule (y ← y + λ s), and the oldest draw leaves the window
//! ```
//!
//! Step sizes: constant, or ε_t = (a / t_b)^κ with t_b = ⌊(t − 1)/M⌋·M + 1, the
//! first draw of t's block of M draws.

use std::collections::VecDeque;

use nalgebra::DVector;
use qnmc::{HamcmcSettings, StepSizeSchedule};
use rand_core::Rng;

use super::dense_bfgs::{DenseCurvature, DensePairs, DenseScaling};
use super::targets::DenseMinibatchTarget;
use super::util::{DenseStep, draw_normals, finite};

/// Step-size schedule of the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DenseSchedule {
    /// ε_t = ε.
    Constant(f64),
    /// ε_t = (a / t_b)^κ, constant in blocks of M.
    BlockDecaying {
        /// a.
        scale: f64,
        /// κ.
        exponent: f64,
    },
}

/// Dense HAMCMC with window M.
#[derive(Debug, Clone)]
pub struct DenseHamcmc {
    /// M: draws kept (pairs kept: M − 1).
    pub window: usize,
    /// Step sizes.
    pub schedule: DenseSchedule,
    /// The pairs.
    pub memory: DensePairs,
    /// The last (up to) M draws, oldest first.
    pub history: VecDeque<DVector<f64>>,
    /// Draws taken.
    pub draws: u64,
}

/// Why a reference step failed (mirrors the core's errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenseHamcmcError {
    /// Non-finite gradient.
    Gradient,
    /// Non-finite proposal.
    Proposal,
}

impl DenseHamcmc {
    /// The reference for the core's `settings` and window `m`, started at `x0`.
    pub fn new(settings: &HamcmcSettings<f64>, m: usize, x0: DVector<f64>) -> Self {
        let schedule = match settings.step_size {
            StepSizeSchedule::Constant(e) => DenseSchedule::Constant(e),
            StepSizeSchedule::BlockDecaying { scale, exponent } => {
                DenseSchedule::BlockDecaying { scale, exponent }
            }
        };
        let curvature: DenseCurvature = settings.curvature.into();
        DenseHamcmc {
            window: m,
            schedule,
            memory: DensePairs::new(m - 1, DenseScaling::Fixed(settings.gamma), curvature),
            history: VecDeque::from(vec![x0]),
            draws: 0,
        }
    }

    /// ε_t.
    pub fn step_size(&self, t: u64) -> f64 {
        match self.schedule {
            DenseSchedule::Constant(e) => e,
            DenseSchedule::BlockDecaying { scale, exponent } => {
                let m = self.window as u64;
                let first = (t - 1) / m * m + 1;
                (scale / first as f64).powf(exponent)
            }
        }
    }

    /// The newest draw.
    pub fn position(&self) -> &DVector<f64> {
        self.history.back().expect("never empty")
    }

    /// One draw.
    pub fn step<P: DenseMinibatchTarget + ?Sized, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> Result<DenseStep, DenseHamcmcError> {
        let d = self.position().len();
        let t = self.draws + 1;
        let eps = self.step_size(t);
        let batch = target.draw_batch_indices(rng);
        let z = draw_normals(rng, d);
        let full = self.history.len() == self.window;
        let base = if full {
            self.history.front()
        } else {
            self.history.back()
        }
        .expect("never empty")
        .clone();

        let g = target.batch_gradient_vec(&batch, &base);
        if !finite(&g) {
            return Err(DenseHamcmcError::Gradient);
        }
        let bfgs = self.memory.bfgs(d);
        let theta = &base - (&bfgs.h * &g) * eps + (&bfgs.s * z) * (2.0 * eps).sqrt();
        if !finite(&theta) {
            return Err(DenseHamcmcError::Proposal);
        }
        let mut evaluations = 1;
        let mut skipped = 0;
        if full {
            let g_new = target.batch_gradient_vec(&batch, &theta);
            evaluations = 2;
            if !finite(&g_new) {
                return Err(DenseHamcmcError::Gradient);
            }
            if !self.memory.offer(&(&theta - &base), &(&g_new - &g)) {
                skipped = 1;
            }
            self.history.pop_front();
        }
        self.history.push_back(theta);
        self.draws = t;
        Ok(DenseStep {
            accepted: true,
            divergent: false,
            gradient_evaluations: evaluations,
            pairs_skipped: skipped,
            step_size: eps,
        })
    }
}
