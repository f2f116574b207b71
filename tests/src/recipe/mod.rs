//! Dense reference implementations for the complete-recipe samplers
//! (`qnmc::samplers::recipe`), written from each paper's own update equations in
//! block form (Ma, Chen & Fox 2015 eq. 18, 19, 20, 24, 27, 30; Li et al. 2016
//! Algorithm 1; Chen, Fox & Guestrin 2014 Algorithm 2), not from the core's generic (D, Q, Γ) engine, plus the targets,
//! metrics and linear-recursion algebra (discrete Lyapunov equation) the
//! `tests/recipe_*.rs` files use.
//!
//! Every reference consumes random numbers exactly as the core documents: the
//! batch (drawn by the target), then D standard normals from
//! `qnmc::random::fill_standard_normal`.

use nalgebra::{DMatrix, DVector};
use qnmc::random::fill_standard_normal;
use qnmc::samplers::recipe::{DiagonalRiemannianMetric, MinibatchHessianDiagonal};
use qnmc::{MinibatchPotential, Real};
use rand_core::Rng;

/// U(θ) = ½ θᵀPθ (P = `precision`, dense) with Gaussian gradient noise:
/// ∇Ũ(θ) = Pθ + σ·ν, ν ~ N(0, I) drawn as the "batch" (D normals from
/// `fill_standard_normal`, in the working precision then widened).
#[derive(Debug, Clone)]
pub struct NoisyGaussian<const D: usize> {
    /// P, row-major.
    pub precision: [[f64; D]; D],
    /// σ ≥ 0.
    pub noise_sd: f64,
}

impl<const D: usize> NoisyGaussian<D> {
    /// P as a dense matrix.
    pub fn precision_matrix(&self) -> DMatrix<f64> {
        DMatrix::from_fn(D, D, |i, j| self.precision[i][j])
    }
}

impl<T: Real, const D: usize> MinibatchPotential<T, D> for NoisyGaussian<D> {
    type Batch = [T; D];
    fn draw_batch<R: Rng + ?Sized>(&self, rng: &mut R) -> [T; D] {
        let mut nu = [T::ZERO; D];
        fill_standard_normal(rng, &mut nu);
        nu
    }
    fn minibatch_gradient(&self, batch: &[T; D], x: &[T; D], g: &mut [T; D]) {
        for (i, (gi, row)) in g.iter_mut().zip(&self.precision).enumerate() {
            let mut s = T::ZERO;
            for (&pij, &xj) in row.iter().zip(x) {
                s += T::from_f64(pij) * xj;
            }
            *gi = s + T::from_f64(self.noise_sd) * batch[i];
        }
    }
}

impl<T: Real, const D: usize> MinibatchHessianDiagonal<T, D> for NoisyGaussian<D> {
    fn minibatch_hessian_diagonal(&self, _batch: &[T; D], _x: &[T; D], out: &mut [T; D]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = T::from_f64(self.precision[i][i]);
        }
    }
}

/// The recipe's 1-D toy (Ma et al. 2015, Fig. 2/S.5): U(θ) = θ⁴ − 2θ², full
/// gradient 4θ³ − 4θ, no randomness in the batch.
#[derive(Debug, Clone, Copy)]
pub struct DoubleWell;

impl DoubleWell {
    /// U(θ).
    pub fn potential(x: f64) -> f64 {
        x * x * x * x - 2.0 * x * x
    }
}

impl<T: Real> MinibatchPotential<T, 1> for DoubleWell {
    type Batch = ();
    fn draw_batch<R: Rng + ?Sized>(&self, _rng: &mut R) {}
    fn minibatch_gradient(&self, _b: &(), x: &[T; 1], g: &mut [T; 1]) {
        let four = T::from_f64(4.0);
        g[0] = four * x[0] * x[0] * x[0] - four * x[0];
    }
}

/// The toy's metric, after the recipe's Supp. F.1 choice G⁻¹ = D√|U + C| with
/// D = 1.5 but an offset C = `offset` > 1 (not the paper's 0.5) so that
/// U + C ≥ C − 1 > 0 (U ≥ −1) and the metric is smooth:
/// G⁻¹(θ) = 1.5·√(U(θ) + C), ∂G⁻¹ = 1.5·U′/(2√(U + C)).
#[derive(Debug, Clone, Copy)]
pub struct DoubleWellMetric {
    /// C > 1.
    pub offset: f64,
}

impl DoubleWellMetric {
    /// (G⁻¹(θ), ∂G⁻¹/∂θ) in f64.
    pub fn eval(&self, x: f64) -> (f64, f64) {
        let root = (DoubleWell::potential(x) + self.offset).sqrt();
        let du = 4.0 * x * x * x - 4.0 * x;
        (1.5 * root, 1.5 * du / (2.0 * root))
    }
}

impl<T: Real> DiagonalRiemannianMetric<T, 1> for DoubleWellMetric {
    fn inverse_metric(&self, x: &[T; 1], inv: &mut [T; 1], der: &mut [T; 1]) {
        let t = x[0];
        let u = t * t * t * t - T::TWO * t * t;
        let root = (u + T::from_f64(self.offset)).sqrt();
        let du = T::from_f64(4.0) * t * t * t - T::from_f64(4.0) * t;
        inv[0] = T::from_f64(1.5) * root;
        der[0] = T::from_f64(1.5) * du / (T::TWO * root);
    }
}

/// A smooth per-coordinate metric for D-dimensional tests:
/// (G⁻¹)ᵢᵢ = 0.5 + 1/(1 + θᵢ²), ∂ᵢ(G⁻¹)ᵢᵢ = −2θᵢ/(1 + θᵢ²)².
#[derive(Debug, Clone, Copy)]
pub struct BumpMetric;

impl BumpMetric {
    /// (G⁻¹ᵢᵢ, ∂ᵢG⁻¹ᵢᵢ) for one coordinate, in f64.
    pub fn eval(x: f64) -> (f64, f64) {
        let q = 1.0 + x * x;
        (0.5 + 1.0 / q, -2.0 * x / (q * q))
    }
}

impl<T: Real, const D: usize> DiagonalRiemannianMetric<T, D> for BumpMetric {
    fn inverse_metric(&self, x: &[T; D], inv: &mut [T; D], der: &mut [T; D]) {
        for i in 0..D {
            let q = T::ONE + x[i] * x[i];
            inv[i] = T::HALF + T::ONE / q;
            der[i] = -(T::TWO * x[i]) / (q * q);
        }
    }
}

/// Draws a batch and D normals the documented way and returns (∇Ũ, w) as dense
/// vectors.
pub fn draw<const D: usize, P: MinibatchPotential<f64, D>, R: Rng>(
    target: &P,
    theta: &DVector<f64>,
    rng: &mut R,
) -> (DVector<f64>, DVector<f64>) {
    let batch = target.draw_batch(rng);
    let mut w = [0.0f64; D];
    fill_standard_normal(rng, &mut w);
    let mut x = [0.0f64; D];
    x.copy_from_slice(theta.as_slice());
    let mut g = [0.0f64; D];
    target.minibatch_gradient(&batch, &x, &mut g);
    (
        DVector::from_column_slice(&g),
        DVector::from_column_slice(&w),
    )
}

/// SGLD, recipe eq. (19) with D = I and the B̂ of eq. (9):
/// θ ← θ − ε∇Ũ + √(ε(2 − εB̂))·w.
pub fn sgld_step(
    theta: &DVector<f64>,
    g: &DVector<f64>,
    w: &DVector<f64>,
    eps: f64,
    bhat: f64,
) -> DVector<f64> {
    theta - g * eps + w * (eps * (2.0 - eps * bhat)).sqrt()
}

/// pSGLD (Li et al. 2016, Alg. 1, their η = 2ε). `v` is the RMSprop average
/// (updated in place unless `frozen` is `Some(G)`). With `hessian_diagonal`
/// = Some(∂ᵢᵢŨ) (and not frozen) their Γ is added: Γᵢ = ∂Gᵢᵢ/∂θᵢ with
/// Gᵢᵢ = (λ + √Vᵢ)⁻¹ and Vᵢ = αv_prev + (1 − α)(s·∂ᵢŨ)², by the chain rule
/// ∂G/∂θᵢ = −(λ + √V)⁻²·(∂V/∂θᵢ)/(2√V), ∂V/∂θᵢ = 2(1 − α)s²·∂ᵢŨ·∂ᵢᵢŨ.
/// Returns (θ′, G used).
#[allow(clippy::too_many_arguments)]
pub fn psgld_step(
    theta: &DVector<f64>,
    v: &mut DVector<f64>,
    g: &DVector<f64>,
    w: &DVector<f64>,
    eps: f64,
    alpha: f64,
    lambda: f64,
    scale: f64,
    frozen: Option<&DVector<f64>>,
    hessian_diagonal: Option<&DVector<f64>>,
) -> (DVector<f64>, DVector<f64>) {
    let mut gamma = DVector::zeros(theta.len());
    let precond = match frozen {
        Some(gd) => gd.clone(),
        None => {
            let gs = g * scale;
            *v = &*v * alpha + gs.component_mul(&gs) * (1.0 - alpha);
            let precond = v.map(|vi| 1.0 / (lambda + vi.sqrt()));
            if let Some(h) = hessian_diagonal {
                for i in 0..theta.len() {
                    let dv = 2.0 * (1.0 - alpha) * scale * scale * g[i] * h[i];
                    let root = v[i].sqrt();
                    gamma[i] = if root > 0.0 {
                        -dv / (2.0 * root * (lambda + root) * (lambda + root))
                    } else {
                        0.0
                    };
                }
            }
            precond
        }
    };
    // Li et al.: θ ← θ + (η/2)·(G·∇log p + Γ) + N(0, η G), η = 2ε, ∇log p = −∇Ũ.
    let eta = 2.0 * eps;
    let noise = precond.map(|p| (eta * p).sqrt()).component_mul(w);
    (
        theta + (-precond.component_mul(g) + gamma) * (eta / 2.0) + noise,
        precond,
    )
}

/// SGRLD, recipe eq. (20) with a diagonal metric: θ ← θ − ε[G⁻¹∇Ũ − Γ] +
/// N(0, 2εG⁻¹), Γᵢ = ∂ᵢ(G⁻¹)ᵢᵢ (dropped when `correct` is false), written with a
/// dense diagonal matrix.
pub fn sgrld_step(
    theta: &DVector<f64>,
    g: &DVector<f64>,
    w: &DVector<f64>,
    eps: f64,
    metric: impl Fn(f64) -> (f64, f64),
    correct: bool,
) -> DVector<f64> {
    let n = theta.len();
    let ginv = DMatrix::from_fn(n, n, |i, j| if i == j { metric(theta[i]).0 } else { 0.0 });
    let gamma = DVector::from_fn(n, |i, _| if correct { metric(theta[i]).1 } else { 0.0 });
    let root = DMatrix::from_fn(n, n, |i, j| {
        if i == j {
            (2.0 * ginv[(i, i)]).sqrt()
        } else {
            0.0
        }
    });
    theta - (&ginv * g) * eps + gamma * eps + root * w * eps.sqrt()
}

/// SGHMC, recipe eq. (18) (`SghmcUpdate::RecipeEuler`), M = mI: simultaneous
/// update of (θ, r) from the old state.
#[allow(clippy::too_many_arguments)]
pub fn sghmc_step(
    theta: &DVector<f64>,
    r: &DVector<f64>,
    g: &DVector<f64>,
    w: &DVector<f64>,
    eps: f64,
    friction: f64,
    bhat: f64,
    mass: f64,
) -> (DVector<f64>, DVector<f64>) {
    let theta_new = theta + r * (eps / mass);
    let r_new = r - g * eps - r * (eps * friction / mass)
        + w * (eps * (2.0 * friction - eps * bhat)).sqrt();
    (theta_new, r_new)
}

/// SGHMC in Chen et al.'s Algorithm 2 order (`SghmcUpdate::PositionFirst`),
/// M = mI, written from the paper: θ′ = θ + (ε/m)·r first; then the batch and
/// D normals w are drawn ([`draw`]) and the gradient is taken at θ′;
/// r′ = r − ε∇Ũ(θ′) − (εC/m)·r + √(ε(2C − εB̂))·w (friction on the old r).
/// With `gradient_at_new` false the gradient is taken at the old θ instead
/// (the recipe's eq. 18; a negative control).
#[allow(clippy::too_many_arguments)]
pub fn sghmc_position_first_step<const D: usize, P: MinibatchPotential<f64, D>, R: Rng>(
    target: &P,
    theta: &DVector<f64>,
    r: &DVector<f64>,
    rng: &mut R,
    eps: f64,
    friction: f64,
    bhat: f64,
    mass: f64,
    gradient_at_new: bool,
) -> (DVector<f64>, DVector<f64>) {
    let theta_new = theta + r * (eps / mass);
    let at = if gradient_at_new { &theta_new } else { theta };
    let (g, w) = draw::<D, _, _>(target, at, rng);
    let r_new = r - g * eps - r * (eps * friction / mass)
        + w * (eps * (2.0 * friction - eps * bhat)).sqrt();
    (theta_new, r_new)
}

/// The θ-r iteration matrix A and noise covariance Q of SGHMC (m = 1) on
/// U = ½θᵀPθ with ∇Ũ = Pθ + σν, ν ~ N(0, I): x = (θ, r), x′ = Ax + η,
/// η ~ N(0, Q), Q = diag(0, (ε²σ² + ε(2C − εB̂))I) for both orders;
/// recipe Euler A = [[I, εI], [−εP, (1 − εC)I]], position-first
/// A = [[I, εI], [−εP, (1 − εC)I − ε²P]] (r′ = r − εP(θ + εr) − εCr − εσν + …).
pub fn sghmc_linear_recursion(
    p: &DMatrix<f64>,
    eps: f64,
    friction: f64,
    bhat: f64,
    noise_sd: f64,
    position_first: bool,
) -> (DMatrix<f64>, DMatrix<f64>) {
    let d = p.nrows();
    let mut a = DMatrix::zeros(2 * d, 2 * d);
    let mut q = DMatrix::zeros(2 * d, 2 * d);
    for i in 0..d {
        a[(i, i)] = 1.0;
        a[(i, d + i)] = eps;
        a[(d + i, d + i)] = 1.0 - eps * friction;
        for j in 0..d {
            a[(d + i, j)] = -eps * p[(i, j)];
            if position_first {
                a[(d + i, d + j)] -= eps * eps * p[(i, j)];
            }
        }
        q[(d + i, d + i)] = eps * eps * noise_sd * noise_sd + eps * (2.0 * friction - eps * bhat);
    }
    (a, q)
}

/// The naive SGHMC of the recipe's eq. (15) (M = I): θ ← θ + εr, r ← r − ε∇Ũ.
pub fn naive_sghmc_step(
    theta: &DVector<f64>,
    r: &DVector<f64>,
    g: &DVector<f64>,
    eps: f64,
) -> (DVector<f64>, DVector<f64>) {
    (theta + r * eps, r - g * eps)
}

/// SGNHT, recipe eq. (24): returns (θ′, r′, ξ′); ξ′ = ξ when `fixed`.
#[allow(clippy::too_many_arguments)]
pub fn sgnht_step(
    theta: &DVector<f64>,
    r: &DVector<f64>,
    xi: f64,
    g: &DVector<f64>,
    w: &DVector<f64>,
    eps: f64,
    a: f64,
    bhat: f64,
    fixed: bool,
) -> (DVector<f64>, DVector<f64>, f64) {
    let d = theta.len() as f64;
    let theta_new = theta + r * eps;
    let r_new = r - g * eps - r * (eps * xi) + w * (eps * (2.0 * a - eps * bhat)).sqrt();
    let xi_new = if fixed {
        xi
    } else {
        xi + eps * (r.dot(r) / d - 1.0)
    };
    (theta_new, r_new, xi_new)
}

/// gSGRHMC (recipe Algorithm 1 / eq. 30) or, with `correct` false, the naive
/// eq. (27), diagonal metric, written with dense matrices. Returns (θ′, r′).
#[allow(clippy::too_many_arguments)]
pub fn sgrhmc_step(
    theta: &DVector<f64>,
    r: &DVector<f64>,
    g: &DVector<f64>,
    w: &DVector<f64>,
    eps: f64,
    bhat: f64,
    metric: impl Fn(f64) -> (f64, f64),
    correct: bool,
) -> (DVector<f64>, DVector<f64>) {
    let n = theta.len();
    let ginv = DMatrix::from_fn(n, n, |i, j| if i == j { metric(theta[i]).0 } else { 0.0 });
    let s = ginv.map(f64::sqrt);
    // ∇_θ(G^{-1/2}), i-th component Σⱼ ∂ⱼ(G^{-1/2})ᵢⱼ = ∂ᵢ√g = g′/(2√g).
    let div = DVector::from_fn(n, |i, _| {
        let (gi, dgi) = metric(theta[i]);
        if correct {
            dgi / (2.0 * gi.sqrt())
        } else {
            0.0
        }
    });
    let sigma = DMatrix::from_fn(n, n, |i, j| {
        if i == j {
            (eps * (2.0 * ginv[(i, i)] - eps * bhat)).sqrt()
        } else {
            0.0
        }
    });
    let theta_new = theta + &s * r * eps;
    let r_new = r - (&s * g) * eps + div * eps - (&ginv * r) * eps + sigma * w;
    (theta_new, r_new)
}

/// Solves Σ = AΣAᵀ + Q (A stable) by the doubling iteration
/// Σ ← Σ + AₖΣAₖᵀ, Aₖ₊₁ = Aₖ², to a relative change below 1e-15 (≤ 60 doublings).
pub fn discrete_lyapunov(a: &DMatrix<f64>, q: &DMatrix<f64>) -> DMatrix<f64> {
    let mut sigma = q.clone();
    let mut ak = a.clone();
    for _ in 0..60 {
        let add = &ak * &sigma * ak.transpose();
        sigma += &add;
        ak = &ak * &ak;
        if add.norm() <= 1e-15 * sigma.norm() {
            break;
        }
    }
    sigma
}
