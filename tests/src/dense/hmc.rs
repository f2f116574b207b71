//! Dense HMC with a general inverse metric K (Neal 2011, §5.4.1 with a mass
//! matrix): momentum r ~ N(0, K⁻¹), H(x, r) = U(x) + ½ rᵀKr, leapfrog
//!
//! ```text
//! r ← r − (ε/2)∇U(x);  repeat L times { x ← x + εKr;  r ← r − ε∇U(x) }  (last kick halved)
//! ```
//!
//! then one Metropolis test. The momentum is r = R·z with z the D standard normals
//! of the draw and R a fixed matrix with R Rᵀ = K⁻¹ (for the core's identity and
//! diagonal masses, R = diag(1/√kᵢ)); the QNHMC equivalence test passes
//! R = C⁻¹·(the QNHMC momentum factor) so that r = C⁻¹p from the same normals.

use nalgebra::{DMatrix, DVector};
use rand_core::Rng;

use super::targets::DenseTarget;
use super::util::{DenseStep, draw_normals, finite, metropolis};

/// Dense HMC with inverse metric K.
#[derive(Debug, Clone)]
pub struct DenseHmc {
    /// ε.
    pub step_size: f64,
    /// L.
    pub leapfrog_steps: u32,
    /// K, the inverse metric.
    pub inverse_metric: DMatrix<f64>,
    /// R: r = R·z.
    pub momentum_map: DMatrix<f64>,
    /// Current state.
    pub position: DVector<f64>,
    /// U(position).
    pub potential: f64,
    /// ∇U(position).
    pub gradient: DVector<f64>,
}

impl DenseHmc {
    /// HMC with K = diag(`inverse_mass`) and r = diag(1/√kᵢ)·z.
    pub fn diagonal<P: DenseTarget + ?Sized>(
        step_size: f64,
        leapfrog_steps: u32,
        inverse_mass: &[f64],
        x0: DVector<f64>,
        target: &P,
    ) -> Self {
        let k = DMatrix::from_diagonal(&DVector::from_column_slice(inverse_mass));
        let r = DMatrix::from_diagonal(&DVector::from_iterator(
            inverse_mass.len(),
            inverse_mass.iter().map(|v| 1.0 / v.sqrt()),
        ));
        Self::general(step_size, leapfrog_steps, k, r, x0, target)
    }

    /// HMC with an arbitrary inverse metric K and momentum map R.
    pub fn general<P: DenseTarget + ?Sized>(
        step_size: f64,
        leapfrog_steps: u32,
        inverse_metric: DMatrix<f64>,
        momentum_map: DMatrix<f64>,
        x0: DVector<f64>,
        target: &P,
    ) -> Self {
        let (potential, gradient) = target.value_and_gradient(&x0);
        DenseHmc {
            step_size,
            leapfrog_steps,
            inverse_metric,
            momentum_map,
            position: x0,
            potential,
            gradient,
        }
    }

    fn kinetic(&self, r: &DVector<f64>) -> f64 {
        0.5 * r.dot(&(&self.inverse_metric * r))
    }

    /// One draw: D normals, r = R·z, leapfrog, one uniform for the test.
    pub fn step<P: DenseTarget + ?Sized, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> DenseStep {
        let z = draw_normals(rng, self.position.len());
        let eps = self.step_size;
        let mut r = &self.momentum_map * z;
        let h0 = self.potential + self.kinetic(&r);

        let mut x = self.position.clone();
        let mut g = self.gradient.clone();
        let mut u = self.potential;
        let mut evaluations = 0;
        let mut ok = true;
        // L leapfrog steps with both half kicks (never merged across steps),
        // ended as a divergence by a non-finite position (not evaluated),
        // U, ∇U or energy.
        for _ in 0..self.leapfrog_steps {
            r -= &g * (0.5 * eps);
            x += (&self.inverse_metric * &r) * eps;
            if !finite(&x) {
                ok = false;
                break;
            }
            (u, g) = target.value_and_gradient(&x);
            evaluations += 1;
            if !(u.is_finite() && finite(&g)) {
                ok = false;
                break;
            }
            r -= &g * (0.5 * eps);
            if !(u + self.kinetic(&r)).is_finite() {
                ok = false;
                break;
            }
        }
        let h1 = if ok {
            u + self.kinetic(&r)
        } else {
            f64::INFINITY
        };
        let decision = metropolis(h0, h1, rng);
        if decision.accepted {
            self.position = x;
            self.gradient = g;
            self.potential = u;
        }
        DenseStep {
            accepted: decision.accepted,
            divergent: decision.divergent,
            gradient_evaluations: evaluations,
            pairs_skipped: 0,
            step_size: eps,
        }
    }
}
