//! Dense reference implementation of AMAGOLD / L2MC, written from the paper's
//! *reformulated* Algorithm 3 (Zhang, Cooper & De Sa 2020, Appendix F) rather
//! than from Algorithm 2, which the core follows. The variables are
//! v = εσ⁻²r, b = εβ, h = ε²σ⁻²:
//!
//! ```text
//! v ~ N(0, hI) (resampling);  v₋½ = v;  ρ = 0;  θ₀ = θ + ½v₋½
//! for t = 0..T−1: if t ≠ 0 { θₜ = θₜ₋₁ + vₜ₋½ };  ηₜ ~ N(0, 4hb I);  Ũₜ
//!     vₜ₊½ = ((1 − b)vₜ₋½ − h∇Ũₜ(θₜ) + ηₜ)/(1 + b);  ρ += ½∇Ũₜ(θₜ)ᵀ(vₜ₋½ + vₜ₊½)
//! θ* = θ_{T−1} + ½v_{T−½};  a = exp(U(θ) − U(θ*) + ρ);  accept → (θ*, v*), else v = −v₋½
//! ```
//!
//! Agreement with the core (to rounding) therefore also checks the algebra of
//! the change of variables. Random numbers are consumed as the core documents:
//! D normals for the momentum (resampling, or the first step of the
//! persistent variant), per inner step D normals for η when b > 0 and then the
//! batch, and one uniform. Plain `nalgebra` vectors, allocation everywhere.

pub mod checks;

use nalgebra::DVector;
use qnmc::random::fill_standard_normal;
use qnmc::{MinibatchPotential, Potential};
use rand_core::Rng;

/// What a dense AMAGOLD step reports.
#[derive(Debug, Clone, Copy)]
pub struct DenseOutcome {
    /// Accepted or not.
    pub accepted: bool,
    /// log a = U(θ) − U(θ*) + ρ.
    pub log_a: f64,
}

/// AMAGOLD in the (v, b, h) variables with dense vectors.
pub struct DenseAmagold {
    /// Position θ.
    pub theta: DVector<f64>,
    /// Velocity v = εσ⁻²r carried between steps (persistent variant).
    pub v: Option<DVector<f64>>,
    /// ε.
    pub eps: f64,
    /// σ².
    pub sigma2: f64,
    /// β.
    pub beta: f64,
    /// T.
    pub steps: u32,
    /// Keep the momentum between steps.
    pub persistent: bool,
}

fn to_array<const D: usize>(x: &DVector<f64>) -> [f64; D] {
    let mut a = [0.0; D];
    for i in 0..D {
        a[i] = x[i];
    }
    a
}

fn normals<R: Rng>(rng: &mut R, d: usize) -> DVector<f64> {
    let mut z = vec![0.0f64; d];
    fill_standard_normal(rng, &mut z);
    DVector::from_vec(z)
}

impl DenseAmagold {
    fn full_u<const D: usize, P: Potential<f64, D>>(target: &P, x: &DVector<f64>) -> f64 {
        let mut g = [0.0; D];
        target.potential_and_gradient(&to_array::<D>(x), &mut g)
    }

    /// One step; `minibatch` = false uses the full gradient (L2MC) and draws
    /// no batch.
    pub fn step<const D: usize, P, R>(
        &mut self,
        target: &P,
        rng: &mut R,
        minibatch: bool,
    ) -> DenseOutcome
    where
        P: Potential<f64, D> + MinibatchPotential<f64, D>,
        R: Rng,
    {
        let b = self.eps * self.beta;
        let h = self.eps * self.eps / self.sigma2;
        if !self.persistent || self.v.is_none() {
            self.v = Some(normals(rng, D) * h.sqrt());
        }
        let v0 = self.v.clone().unwrap();
        let mut v = v0.clone();
        let mut rho = 0.0;
        let mut theta_t = &self.theta + &v * 0.5;
        for t in 0..self.steps {
            if t != 0 {
                theta_t += &v;
            }
            let eta = if b > 0.0 {
                normals(rng, D) * (4.0 * h * b).sqrt()
            } else {
                DVector::zeros(D)
            };
            let mut g = [0.0; D];
            if minibatch {
                let batch = target.draw_batch(rng);
                target.minibatch_gradient(&batch, &to_array::<D>(&theta_t), &mut g);
            } else {
                target.potential_and_gradient(&to_array::<D>(&theta_t), &mut g);
            }
            let g = DVector::from_column_slice(&g);
            let v_next = (&v * (1.0 - b) - &g * h + eta) / (1.0 + b);
            rho += 0.5 * g.dot(&(&v + &v_next));
            v = v_next;
        }
        let theta_star = theta_t + &v * 0.5;
        let log_a = Self::full_u(target, &self.theta) - Self::full_u(target, &theta_star) + rho;
        let u = <f64 as qnmc::Real>::uniform_open_closed(rng);
        let p = if log_a >= 0.0 { 1.0 } else { log_a.exp() };
        let accepted = log_a.is_finite() && u <= p;
        if accepted {
            self.theta = theta_star;
            self.v = Some(v);
        } else {
            self.v = Some(-v0);
        }
        DenseOutcome { accepted, log_a }
    }

    /// The momentum r = σ²v/ε of the carried velocity.
    pub fn momentum(&self) -> Option<DVector<f64>> {
        self.v.as_ref().map(|v| v * (self.sigma2 / self.eps))
    }
}
