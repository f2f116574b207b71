//! Dense QNHMC (Fu, Luo & Zhang 2016, Algorithm 2; ALGORITHMS.md §3).
//!
//! Per proposal the preconditioner C is the dense BFGS matrix H of the pairs
//! held (rebuilt from scratch every draw). With mass M:
//!
//! ```text
//! z ~ N(0, I) (D normals);  p = z (M = I)  or  p = S z (M = C, S the product-form factor)
//! p ← p − (ε/2) C∇U(q)
//! repeat L times { q ← q + ε C M⁻¹ p;  p ← p − ε C∇U(q) }   (last kick halved)
//! Metropolis on H(q, p) = U(q) + ½ pᵀM⁻¹p  (one uniform)
//! ```
//!
//! C M⁻¹ is H for M = I and exactly I for M = C = H (M⁻¹ = B = H⁻¹); the kinetic
//! energy uses M⁻¹ = I or the dense direct-update B.
//!
//! Every new gradient of the trajectory gives a tentative pair (Δq, Δ∇U) that
//! passes the curvature rule or is counted as skipped; the admitted ones join the
//! memory, in order, only when the proposal is accepted (older pairs beyond
//! `max_pairs` fall out). In `FreezeAfter(n)` mode the memory learns during the
//! first n draws only.

use nalgebra::DVector;
use qnmc::{MemoryUpdate, QnhmcMass, QnhmcSettings};
use rand_core::Rng;

use super::dense_bfgs::{DenseBfgs, DensePairs};
use super::targets::DenseTarget;
use super::util::{DenseStep, draw_normals, finite, metropolis};

/// Dense QNHMC.
#[derive(Debug, Clone)]
pub struct DenseQnhmc {
    /// ε.
    pub step_size: f64,
    /// L.
    pub leapfrog_steps: u32,
    /// Mass choice.
    pub mass: QnhmcMass,
    /// `Some(n)`: freeze after n draws.
    pub freeze_after: Option<u64>,
    /// The committed pairs.
    pub memory: DensePairs,
    /// Draws so far.
    pub draws: u64,
    /// Current state.
    pub position: DVector<f64>,
    /// U(position).
    pub potential: f64,
    /// ∇U(position).
    pub gradient: DVector<f64>,
}

impl DenseQnhmc {
    /// The reference for the core's `settings`, started at `x0`.
    pub fn new<P: DenseTarget + ?Sized>(
        settings: &QnhmcSettings<f64>,
        x0: DVector<f64>,
        target: &P,
    ) -> Self {
        let (potential, gradient) = target.value_and_gradient(&x0);
        DenseQnhmc {
            step_size: settings.step_size,
            leapfrog_steps: settings.leapfrog_steps,
            mass: settings.mass,
            freeze_after: match settings.memory_update {
                MemoryUpdate::Adaptive => None,
                MemoryUpdate::FreezeAfter(n) => Some(n),
            },
            memory: DensePairs::new(
                settings.lbfgs.max_pairs,
                settings.lbfgs.scaling.into(),
                settings.lbfgs.curvature.into(),
            ),
            draws: 0,
            position: x0,
            potential,
            gradient,
        }
    }

    /// Whether the memory still learns at the next draw.
    pub fn learning(&self) -> bool {
        match self.freeze_after {
            None => true,
            Some(n) => self.draws < n,
        }
    }

    /// The dense matrices of the current memory (the C of the next proposal).
    pub fn current_bfgs(&self) -> DenseBfgs {
        self.memory.bfgs(self.position.len())
    }

    /// One draw.
    pub fn step<P: DenseTarget + ?Sized, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> DenseStep {
        let d = self.position.len();
        let eps = self.step_size;
        let recording = self.learning();
        let bfgs = self.current_bfgs();
        let c = &bfgs.h;

        let z = draw_normals(rng, d);
        let kinetic = |p: &DVector<f64>| match self.mass {
            QnhmcMass::Identity => 0.5 * p.dot(p),
            QnhmcMass::InverseHessian => 0.5 * p.dot(&(&bfgs.b * p)),
        };
        let mut p = match self.mass {
            QnhmcMass::Identity => z,
            QnhmcMass::InverseHessian => &bfgs.s * z,
        };
        let h0 = self.potential + kinetic(&p);

        let mut x = self.position.clone();
        let mut g = self.gradient.clone();
        let mut u = self.potential;
        let mut tentative = Vec::new();
        let mut skipped = 0u32;
        let mut evaluations = 0u32;
        let mut ok = true;
        p -= (c * &g) * (0.5 * eps);
        for l in 1..=self.leapfrog_steps {
            let velocity = match self.mass {
                QnhmcMass::Identity => c * &p,
                QnhmcMass::InverseHessian => p.clone(),
            };
            let x_new = &x + velocity * eps;
            let (u_new, g_new) = target.value_and_gradient(&x_new);
            evaluations += 1;
            u = u_new;
            if !(u_new.is_finite() && finite(&g_new) && finite(&x_new)) {
                ok = false;
                break;
            }
            if recording {
                let s = &x_new - &x;
                let y = &g_new - &g;
                match self.memory.curvature.admit(&s, &y) {
                    Some(y) => tentative.push((s, y)),
                    None => skipped += 1,
                }
            }
            x = x_new;
            g = g_new;
            let h = if l == self.leapfrog_steps {
                0.5 * eps
            } else {
                eps
            };
            p -= (c * &g) * h;
        }
        let h1 = if ok { u + kinetic(&p) } else { f64::INFINITY };
        let decision = metropolis(h0, h1, rng);
        self.memory.skipped += skipped as u64;
        if decision.accepted {
            self.position = x;
            self.gradient = g;
            self.potential = u;
            for (s, y) in tentative {
                self.memory.push_admitted(s, y);
            }
        }
        self.draws += 1;
        DenseStep {
            accepted: decision.accepted,
            divergent: decision.divergent,
            gradient_evaluations: evaluations,
            pairs_skipped: skipped,
            step_size: eps,
        }
    }
}
