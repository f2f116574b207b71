//! Dense NUTS: the No-U-Turn Sampler (Hoffman & Gelman 2014) in the form
//! docs/NUTS.md fixes, written from that page and Stan's description
//! (multinomial sampling inside a subtree, biased progressive sampling when a
//! subtree joins the trajectory, the generalised U-turn criterion of
//! Betancourt 2017 with Stan's two extra checks across the halves of every
//! merged tree), not from the core's iterative loop.
//!
//! The tree is built recursively: a subtree of depth k is a subtree of depth
//! k − 1 followed by another one started from its last leaf, and the two are
//! checked for a U-turn when the second is complete. The leaves therefore come
//! in build order, and the merges after each leaf happen in the order of the
//! binary counter docs/NUTS.md describes (smallest first), so the random draws
//! come exactly in the documented order:
//!
//! ```text
//! D normals (fill_standard_normal_ziggurat), then per doubling:
//!   u_dir; one u_leaf per non-divergent leaf; u_top after a valid subtree
//! ```
//!
//! The metric is a dense inverse mass matrix M⁻¹ and a momentum factor F with
//! p = F z (F Fᵀ = M), chosen by the constructors to be the factor the core's
//! metric documents. Every state's velocity is v = M⁻¹p by a direct product.

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand_core::Rng;

use super::targets::DenseTarget;
use super::util::{draw_normals_ziggurat, draw_uniform, finite};

/// What one reference transition did (the fields of the core's `NutsStats`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DenseNutsStep {
    /// Valid doublings.
    pub tree_depth: u32,
    /// Leapfrog steps (divergent leaves included).
    pub leapfrog_steps: u32,
    /// Target evaluations (leaves whose θ was not finite are not evaluated).
    pub gradient_evaluations: u32,
    /// Σ min(1, exp(−ΔH)) / leapfrog steps.
    pub acceptance_statistic: f64,
    /// H of the sample.
    pub energy: f64,
    /// H(sample) − H₀.
    pub energy_error: f64,
    /// A divergent leaf was met.
    pub divergent: bool,
    /// depth = max_depth and no U-turn was found.
    pub reached_max_depth: bool,
    /// ε of the transition.
    pub step_size: f64,
}

/// A point of the trajectory.
#[derive(Debug, Clone)]
struct State {
    theta: DVector<f64>,
    p: DVector<f64>,
    g: DVector<f64>,
    v: DVector<f64>,
    u: f64,
    h: f64,
}

/// A valid subtree in build order: `first` is its first-built leaf, `last` its
/// last-built one, `rho` the sum of its momenta.
#[derive(Debug, Clone)]
struct Subtree {
    first: State,
    last: State,
    rho: DVector<f64>,
}

/// What the leaves of the current transition add up to.
#[derive(Debug)]
struct Transition {
    h0: f64,
    step: f64,
    max_energy_error: f64,
    /// log W_s of the subtree being built (`None` before its first valid leaf).
    log_w_subtree: Option<f64>,
    /// The subtree's multinomial candidate.
    candidate: Option<State>,
    sum_alpha: f64,
    leapfrog_steps: u32,
    gradient_evaluations: u32,
    divergent: bool,
}

/// log(eᵃ + eᵇ), for finite a, b.
fn log_sum_exp(a: f64, b: f64) -> f64 {
    let m = a.max(b);
    m + ((a - m).exp() + (b - m).exp()).ln()
}

/// Betancourt's generalised criterion: both velocities point along ρ.
fn no_u_turn(a: &DVector<f64>, b: &DVector<f64>, rho: &DVector<f64>) -> bool {
    a.dot(rho) > 0.0 && b.dot(rho) > 0.0
}

/// The three checks docs/NUTS.md applies when tree `a` (first in the order
/// that matters: build order inside a subtree, trajectory order at the top)
/// is joined with tree `b`: (begin, end, ρ) of each. `true` if all pass.
/// `extra` switches Stan's two checks across the halves on (the default).
fn merge_ok(
    (a_begin, a_end, a_rho): (&State, &State, &DVector<f64>),
    (b_begin, b_end, b_rho): (&State, &State, &DVector<f64>),
    extra: bool,
) -> bool {
    let rho = a_rho + b_rho;
    no_u_turn(&a_begin.v, &b_end.v, &rho)
        && (!extra
            || (no_u_turn(&a_begin.v, &b_begin.v, &(a_rho + &b_begin.p))
                && no_u_turn(&a_end.v, &b_end.v, &(&a_end.p + b_rho))))
}

/// Dense NUTS with inverse metric M⁻¹ and momentum factor F.
#[derive(Debug, Clone)]
pub struct DenseNuts {
    /// ε.
    pub step_size: f64,
    /// At most 2^max_depth − 1 leapfrog steps.
    pub max_depth: u32,
    /// ΔH above which a leaf is divergent.
    pub max_energy_error: f64,
    /// M⁻¹.
    pub inverse_metric: DMatrix<f64>,
    /// F: p = F z.
    pub momentum_factor: DMatrix<f64>,
    /// Current θ.
    pub position: DVector<f64>,
    /// U(θ).
    pub potential: f64,
    /// ∇U(θ).
    pub gradient: DVector<f64>,
    /// Stan's two extra checks across the halves of every merged tree (true:
    /// docs/NUTS.md; false only for negative controls).
    pub extra_u_turn_checks: bool,
    /// Biased progressive sampling at the top (true: docs/NUTS.md); false
    /// takes the subtree's candidate with probability W_s / (W + W_s), the
    /// uniform progressive sampling of the inner merges (negative controls).
    pub biased_progressive: bool,
}

impl DenseNuts {
    /// NUTS with an arbitrary M⁻¹ and F (F Fᵀ = M).
    pub fn general<P: DenseTarget + ?Sized>(
        step_size: f64,
        max_depth: u32,
        inverse_metric: DMatrix<f64>,
        momentum_factor: DMatrix<f64>,
        x0: DVector<f64>,
        target: &P,
    ) -> Self {
        let (potential, gradient) = target.value_and_gradient(&x0);
        DenseNuts {
            step_size,
            max_depth,
            max_energy_error: 1000.0,
            inverse_metric,
            momentum_factor,
            position: x0,
            potential,
            gradient,
            extra_u_turn_checks: true,
            biased_progressive: true,
        }
    }

    /// M = I: F = I.
    pub fn identity<P: DenseTarget + ?Sized>(
        step_size: f64,
        max_depth: u32,
        x0: DVector<f64>,
        target: &P,
    ) -> Self {
        let (inverse, factor) = identity_metric(x0.len());
        Self::general(step_size, max_depth, inverse, factor, x0, target)
    }

    /// One transition, exactly as docs/NUTS.md lists it.
    pub fn step<P: DenseTarget + ?Sized, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> DenseNutsStep {
        let eps = self.step_size;
        // 1. Momentum and the initial state, the only leaf of the tree.
        let z = draw_normals_ziggurat(rng, self.position.len());
        let p0 = &self.momentum_factor * z;
        let v0 = &self.inverse_metric * &p0;
        let h0 = self.potential + 0.5 * p0.dot(&v0);
        let initial = State {
            theta: self.position.clone(),
            p: p0.clone(),
            g: self.gradient.clone(),
            v: v0,
            u: self.potential,
            h: h0,
        };
        let mut backward_end = initial.clone();
        let mut forward_end = initial.clone();
        let mut rho = p0;
        let mut log_w = 0.0;
        let mut sample = initial;
        let mut t = Transition {
            h0,
            step: eps,
            max_energy_error: self.max_energy_error,
            log_w_subtree: None,
            candidate: None,
            sum_alpha: 0.0,
            leapfrog_steps: 0,
            gradient_evaluations: 0,
            divergent: false,
        };
        let mut depth = 0u32;
        let mut u_turn = false;

        // 2. Doublings.
        while depth < self.max_depth {
            let forward = draw_uniform(rng) > 0.5;
            t.step = if forward { eps } else { -eps };
            t.log_w_subtree = None;
            t.candidate = None;
            let start = if forward { &forward_end } else { &backward_end };
            let Some(subtree) = self.build(target, rng, start, depth, &mut t) else {
                // Divergence or a U-turn inside the subtree: its candidate is
                // not used.
                u_turn = !t.divergent;
                break;
            };
            depth += 1;
            let log_w_subtree = t.log_w_subtree.expect("a valid subtree has leaves");
            let u_top = draw_uniform(rng);
            let log_threshold = if self.biased_progressive {
                log_w_subtree - log_w
            } else {
                log_w_subtree - log_sum_exp(log_w, log_w_subtree)
            };
            if u_top <= log_threshold.exp() {
                sample = t.candidate.take().expect("a valid subtree has a candidate");
            }
            log_w = log_sum_exp(log_w, log_w_subtree);
            // Join in trajectory order; a backward subtree's trajectory begin is
            // its last-built leaf.
            let ok = if forward {
                let ok = merge_ok(
                    (&backward_end, &forward_end, &rho),
                    (&subtree.first, &subtree.last, &subtree.rho),
                    self.extra_u_turn_checks,
                );
                forward_end = subtree.last;
                ok
            } else {
                let ok = merge_ok(
                    (&subtree.last, &subtree.first, &subtree.rho),
                    (&backward_end, &forward_end, &rho),
                    self.extra_u_turn_checks,
                );
                backward_end = subtree.last;
                ok
            };
            rho += &subtree.rho;
            if !ok {
                u_turn = true;
                break;
            }
        }

        // 3. The sample is the next state.
        self.position = sample.theta;
        self.gradient = sample.g;
        self.potential = sample.u;
        DenseNutsStep {
            tree_depth: depth,
            leapfrog_steps: t.leapfrog_steps,
            gradient_evaluations: t.gradient_evaluations,
            acceptance_statistic: t.sum_alpha / t.leapfrog_steps as f64,
            energy: sample.h,
            energy_error: sample.h - h0,
            divergent: t.divergent,
            reached_max_depth: depth == self.max_depth && !u_turn && !t.divergent,
            step_size: eps,
        }
    }

    /// A subtree of 2^depth leaves from `start`, or `None` if it is invalid (a
    /// divergent leaf or a U-turn), in which case building stopped at once.
    fn build<P: DenseTarget + ?Sized, R: Rng + ?Sized>(
        &self,
        target: &P,
        rng: &mut R,
        start: &State,
        depth: u32,
        t: &mut Transition,
    ) -> Option<Subtree> {
        if depth == 0 {
            let leaf = self.leaf(target, rng, start, t)?;
            return Some(Subtree {
                rho: leaf.p.clone(),
                first: leaf.clone(),
                last: leaf,
            });
        }
        let a = self.build(target, rng, start, depth - 1, t)?;
        let b = self.build(target, rng, &a.last, depth - 1, t)?;
        if !merge_ok(
            (&a.first, &a.last, &a.rho),
            (&b.first, &b.last, &b.rho),
            self.extra_u_turn_checks,
        ) {
            return None;
        }
        Some(Subtree {
            rho: &a.rho + &b.rho,
            first: a.first,
            last: b.last,
        })
    }

    /// One leapfrog step from `from` with the signed step `t.step`, then the
    /// divergence test and the leaf-by-leaf multinomial choice (one uniform).
    fn leaf<P: DenseTarget + ?Sized, R: Rng + ?Sized>(
        &self,
        target: &P,
        rng: &mut R,
        from: &State,
        t: &mut Transition,
    ) -> Option<State> {
        let h = t.step;
        t.leapfrog_steps += 1;
        let mut p = &from.p - &from.g * (0.5 * h);
        let theta = &from.theta + (&self.inverse_metric * &p) * h;
        if !finite(&theta) {
            t.divergent = true;
            return None;
        }
        let (u, g) = target.value_and_gradient(&theta);
        t.gradient_evaluations += 1;
        p -= &g * (0.5 * h);
        let v = &self.inverse_metric * &p;
        let energy = u + 0.5 * p.dot(&v);
        let delta = energy - t.h0;
        if !delta.is_finite() || delta > t.max_energy_error {
            if delta.is_finite() {
                t.sum_alpha += (-delta).exp().min(1.0);
            }
            t.divergent = true;
            return None;
        }
        t.sum_alpha += (-delta).exp().min(1.0);
        let log_w_subtree = match t.log_w_subtree {
            None => -delta,
            Some(w) => log_sum_exp(w, -delta),
        };
        t.log_w_subtree = Some(log_w_subtree);
        let leaf = State {
            theta,
            p,
            g,
            v,
            u,
            h: energy,
        };
        let u_leaf = draw_uniform(rng);
        if u_leaf <= (-delta - log_w_subtree).exp() {
            t.candidate = Some(leaf.clone());
        }
        Some(leaf)
    }
}

/// (M⁻¹, F) of the identity metric.
pub fn identity_metric(dim: usize) -> (DMatrix<f64>, DMatrix<f64>) {
    (DMatrix::identity(dim, dim), DMatrix::identity(dim, dim))
}

/// (M⁻¹, F) of the diagonal metric M⁻¹ = diag(σ²): F = diag(1/σ).
pub fn diagonal_metric(variances: &[f64]) -> (DMatrix<f64>, DMatrix<f64>) {
    let inverse = DMatrix::from_diagonal(&DVector::from_column_slice(variances));
    let factor = DMatrix::from_diagonal(&DVector::from_iterator(
        variances.len(),
        variances.iter().map(|v| 1.0 / v.sqrt()),
    ));
    (inverse, factor)
}

/// (M⁻¹, F) of the dense metric M⁻¹ = Σ = L Lᵀ: F = L⁻ᵀ.
pub fn dense_metric(covariance: &DMatrix<f64>) -> (DMatrix<f64>, DMatrix<f64>) {
    let l = covariance
        .clone()
        .cholesky()
        .expect("Σ is positive definite")
        .l();
    let l_inv = l.try_inverse().expect("the Cholesky factor is invertible");
    (covariance.clone(), l_inv.transpose())
}

/// The dense BFGS inverse Hessian on the base H⁰ = diag(b): for each pair
/// (s, y), oldest first, ρ = 1/sᵀy,
/// H ← (I − ρ s yᵀ) H (I − ρ y sᵀ) + ρ s sᵀ.
pub fn bfgs_inverse_hessian(base: &[f64], pairs: &[(DVector<f64>, DVector<f64>)]) -> DMatrix<f64> {
    let d = base.len();
    let eye = DMatrix::<f64>::identity(d, d);
    let mut h = DMatrix::from_diagonal(&DVector::from_column_slice(base));
    for (s, y) in pairs {
        let rho = 1.0 / s.dot(y);
        let left = &eye - s * y.transpose() * rho;
        let right = &eye - y * s.transpose() * rho;
        h = left * h * right + s * s.transpose() * rho;
    }
    h
}

/// (M⁻¹, F) of the L-BFGS metric: M⁻¹ = H, the dense BFGS inverse Hessian of
/// the pairs on the base diag(b), and F = diag(1/√b)·H̃^{-1/2} with
/// H̃ = diag(1/√b) H diag(1/√b) and H̃^{-1/2} its symmetric inverse square root
/// (by the eigendecomposition). F Fᵀ = diag(1/√b) H̃⁻¹ diag(1/√b) = H⁻¹ = M.
pub fn lbfgs_metric(
    base: &[f64],
    pairs: &[(DVector<f64>, DVector<f64>)],
) -> (DMatrix<f64>, DMatrix<f64>) {
    let h = bfgs_inverse_hessian(base, pairs);
    let d = base.len();
    let inv_root_b = DVector::from_iterator(d, base.iter().map(|b| 1.0 / b.sqrt()));
    let scale = DMatrix::from_diagonal(&inv_root_b);
    let scaled = &scale * &h * &scale;
    // Symmetrise against round-off before the eigensolver.
    let scaled = (&scaled + scaled.transpose()) * 0.5;
    let eigen = SymmetricEigen::new(scaled);
    let inv_sqrt = DVector::from_iterator(d, eigen.eigenvalues.iter().map(|l| 1.0 / l.sqrt()));
    let q = &eigen.eigenvectors;
    let h_tilde_inv_sqrt = q * DMatrix::from_diagonal(&inv_sqrt) * q.transpose();
    (h, scale * h_tilde_inv_sqrt)
}
