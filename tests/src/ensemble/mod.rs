//! Dense references for the ensemble samplers HMC-BFGS and MH-BFGS
//! (Zhang & Sutton 2011, §3–§4; ALGORITHMS.md §4), written from the paper with
//! `nalgebra` matrices and `Vec`s.
//!
//! The pseudo-memory of chain i (the paper's H_BFGS(x_{1:K∖i})): the other
//! chains, stably sorted by log density L = −U ascending; consecutive points
//! give (s, y); a point whose pair fails the curvature rule is dropped and the
//! next point is paired with the last kept one. The pairs go through
//! [`DensePairs`] (γ rule, admission rule) and [`DenseBfgs`] (dense H, B, S).
//! The factor C with C Cᵀ = B, needed for the HMC-BFGS momentum, is built here
//! in dense product form (ALGORITHMS.md §1): C⁰ = I/√γ,
//! C⁺ = (I − u vᵀ) C, v = s/(sᵀBs), u = y/α + Bs, α = √(sᵀy/sᵀBs).
//!
//! Random numbers per update, as the core documents: D normals
//! ([`draw_normals`]), then one uniform ([`metropolis`]).

use nalgebra::{DMatrix, DVector};
use rand_core::Rng;

use crate::dense::util::{DenseStep, draw_normals, finite, metropolis};
use crate::dense::{DenseBfgs, DenseCurvature, DensePairs, DenseScaling, DenseTarget};

/// The metric of one update.
#[derive(Debug, Clone)]
pub struct DenseMetric {
    /// The pairs and γ.
    pub pairs: DensePairs,
    /// Dense H, B, S.
    pub bfgs: DenseBfgs,
    /// Dense product-form C, C Cᵀ = B.
    pub c: DMatrix<f64>,
    /// Points dropped by the curvature rule.
    pub skipped: u32,
}

/// Dense product-form C of a list of pairs.
pub fn dense_c(dim: usize, gamma: f64, pairs: &[(DVector<f64>, DVector<f64>)]) -> DMatrix<f64> {
    let eye = DMatrix::<f64>::identity(dim, dim);
    let mut c = &eye / gamma.sqrt();
    let mut b = &eye / gamma;
    for (s, y) in pairs {
        let bs = &b * s;
        let sbs = s.dot(&bs);
        let sy = s.dot(y);
        let alpha = (sy / sbs).sqrt();
        let v = s / sbs;
        let u = y / alpha + &bs;
        c = (&eye - &u * v.transpose()) * c;
        b = &b - &bs * bs.transpose() / sbs + y * y.transpose() / sy;
    }
    c
}

/// The K chains and what the reference needs to build metrics.
#[derive(Debug, Clone)]
pub struct DenseEnsemble {
    /// States.
    pub x: Vec<DVector<f64>>,
    /// U at the states.
    pub u: Vec<f64>,
    /// ∇U at the states.
    pub g: Vec<DVector<f64>>,
    /// γ rule.
    pub scaling: DenseScaling,
    /// Curvature rule.
    pub curvature: DenseCurvature,
    /// Chain updated next.
    pub next: usize,
}

impl DenseEnsemble {
    /// Evaluates the target at every initial state.
    pub fn new<P: DenseTarget + ?Sized>(
        x0: Vec<DVector<f64>>,
        scaling: DenseScaling,
        curvature: DenseCurvature,
        target: &P,
    ) -> Self {
        let mut u = Vec::new();
        let mut g = Vec::new();
        for x in &x0 {
            let (ui, gi) = target.value_and_gradient(x);
            u.push(ui);
            g.push(gi);
        }
        DenseEnsemble {
            x: x0,
            u,
            g,
            scaling,
            curvature,
            next: 0,
        }
    }

    /// The metric from every chain but `i`.
    pub fn metric(&self, i: usize) -> DenseMetric {
        let k = self.x.len();
        let dim = self.x[0].len();
        let mut others: Vec<usize> = (0..k).filter(|&j| j != i).collect();
        // L = −U ascending == U descending; `sort_by` is stable.
        others.sort_by(|&a, &b| (-self.u[a]).partial_cmp(&(-self.u[b])).unwrap());
        let mut pairs = DensePairs::new(k - 2, self.scaling, self.curvature);
        let mut skipped = 0;
        let mut last = others[0];
        for &j in &others[1..] {
            let s = &self.x[j] - &self.x[last];
            let y = &self.g[j] - &self.g[last];
            if pairs.offer(&s, &y) {
                last = j;
            } else {
                skipped += 1;
            }
        }
        let bfgs = pairs.bfgs(dim);
        let c = dense_c(dim, pairs.gamma, &pairs.pairs);
        DenseMetric {
            pairs,
            bfgs,
            c,
            skipped,
        }
    }

    fn take_next(&mut self) -> usize {
        let i = self.next;
        self.next = (i + 1) % self.x.len();
        i
    }
}

/// Dense HMC-BFGS (Algorithm 1, eq. 15).
#[derive(Debug, Clone)]
pub struct DenseHmcBfgs {
    /// ε.
    pub step_size: f64,
    /// L.
    pub leapfrog_steps: u32,
    /// The chains.
    pub ensemble: DenseEnsemble,
}

impl DenseHmcBfgs {
    /// Updates the next chain; returns the chain index, the metric and the step.
    pub fn step<P: DenseTarget + ?Sized, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> (usize, DenseMetric, DenseStep) {
        let i = self.ensemble.take_next();
        let metric = self.ensemble.metric(i);
        let dim = self.ensemble.x[i].len();
        let h = &metric.bfgs.h;
        let eps = self.step_size;
        let z = draw_normals(rng, dim);
        let mut p = &metric.c * z;
        let kinetic = |p: &DVector<f64>| 0.5 * p.dot(&(h * p));
        let h0 = self.ensemble.u[i] + kinetic(&p);
        let mut x = self.ensemble.x[i].clone();
        let mut g = self.ensemble.g[i].clone();
        let mut u = self.ensemble.u[i];
        let mut evals = 0;
        let mut ok = true;
        // L leapfrog steps with both half kicks (never merged across steps),
        // ended as a divergence by a non-finite position (not evaluated),
        // U, ∇U or energy.
        for _ in 0..self.leapfrog_steps {
            p -= &g * (0.5 * eps);
            x += (h * &p) * eps;
            if !finite(&x) {
                ok = false;
                break;
            }
            let (u1, g1) = target.value_and_gradient(&x);
            evals += 1;
            u = u1;
            g = g1;
            if !u.is_finite() || !finite(&g) {
                ok = false;
                break;
            }
            p -= &g * (0.5 * eps);
            if !(u + kinetic(&p)).is_finite() {
                ok = false;
                break;
            }
        }
        let h1 = if ok { u + kinetic(&p) } else { f64::INFINITY };
        let d = metropolis(h0, h1, rng);
        if d.accepted {
            self.ensemble.x[i] = x;
            self.ensemble.g[i] = g;
            self.ensemble.u[i] = u;
        }
        let skipped = metric.skipped;
        (
            i,
            metric,
            DenseStep {
                accepted: d.accepted,
                divergent: d.divergent,
                gradient_evaluations: evals,
                pairs_skipped: skipped,
                step_size: eps,
            },
        )
    }
}

/// Dense MH-BFGS (§4.1, eq. 14), proposal x′ ~ N(µ(x), ε²H) with µ(x) = x
/// (`newton = false`) or µ(x) = x − (ε²/2)H∇U(x) (`newton = true`).
#[derive(Debug, Clone)]
pub struct DenseMhBfgs {
    /// ε.
    pub step_size: f64,
    /// Newton (Langevin-form) mean instead of the random walk.
    pub newton: bool,
    /// The chains.
    pub ensemble: DenseEnsemble,
}

impl DenseMhBfgs {
    /// log N(a; µ(b), ε²H) with the full normalising constant, through the dense
    /// B (direct update) and log det H by Cholesky.
    fn log_q(
        &self,
        metric: &DenseMetric,
        a: &DVector<f64>,
        b: &DVector<f64>,
        gb: &DVector<f64>,
    ) -> f64 {
        let eps = self.step_size;
        let dim = a.len() as f64;
        let mean = if self.newton {
            b - (&metric.bfgs.h * gb) * (0.5 * eps * eps)
        } else {
            b.clone()
        };
        let r = a - mean;
        let quad = r.dot(&(&metric.bfgs.b * &r)) / (eps * eps);
        let log_det = dim * (eps * eps).ln() + metric.bfgs.log_det_h();
        -0.5 * quad - 0.5 * log_det - 0.5 * dim * (2.0 * std::f64::consts::PI).ln()
    }

    /// Updates the next chain; returns the chain index, the metric and the step.
    pub fn step<P: DenseTarget + ?Sized, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> (usize, DenseMetric, DenseStep) {
        let i = self.ensemble.take_next();
        let metric = self.ensemble.metric(i);
        let dim = self.ensemble.x[i].len();
        let eps = self.step_size;
        let z = draw_normals(rng, dim);
        let x = self.ensemble.x[i].clone();
        let g = self.ensemble.g[i].clone();
        let mut mean = x.clone();
        if self.newton {
            mean -= (&metric.bfgs.h * &g) * (0.5 * eps * eps);
        }
        let xp = mean + (&metric.bfgs.s * z) * eps;
        let (up, gp) = target.value_and_gradient(&xp);
        // eq. 14 as H₀ − H₁ with H = U − log q(·|·).
        let (h0, h1) = if up.is_finite() && finite(&gp) {
            (
                self.ensemble.u[i] - self.log_q(&metric, &xp, &x, &g),
                up - self.log_q(&metric, &x, &xp, &gp),
            )
        } else {
            (self.ensemble.u[i], f64::INFINITY)
        };
        let d = metropolis(h0, h1, rng);
        if d.accepted {
            self.ensemble.x[i] = xp;
            self.ensemble.g[i] = gp;
            self.ensemble.u[i] = up;
        }
        let skipped = metric.skipped;
        (
            i,
            metric,
            DenseStep {
                accepted: d.accepted,
                divergent: d.divergent,
                gradient_evaluations: 1,
                pairs_skipped: skipped,
                step_size: eps,
            },
        )
    }
}
