//! Operator identities of the metrics `qnmc::metric::{LbfgsMetric, DenseMetric}`
//! against dense references.
//!
//! Every operator is materialised on the unit vectors (column j = op(eⱼ)) and
//! compared with a dense matrix built from the definitions, as relative
//! Frobenius errors (log det: |Δ| / max(1, |log det|)):
//!
//! `LbfgsMetric` (pairs y = A s of random SPD quadratics, base diag(b) random),
//! against H = the dense BFGS inverse update from H⁰ = diag(b),
//! H⁺ = (I − ρ s yᵀ) H (I − ρ y sᵀ) + ρ s sᵀ, ρ = 1/sᵀy, of the held pairs:
//! - velocity: H;  momentum factor F: F Fᵀ = H⁻¹;  S: S Sᵀ = H;  B = H⁻¹;
//! - ½ pᵀHp = kinetic_energy(p, velocity(p)) for random p;
//! - log det H;  the directions are orthonormal;
//! - with τ > 0: the truncated H_τ agrees with H on the kept directions, the
//!   scaled difference diag(b)^{−½}(H − H_τ)diag(b)^{−½} has spectral norm
//!   ≤ e^τ − 1, and every eigenvalue of H_τ⁻¹H lies in [e^{−τ}, e^τ];
//! - with b = γ·1 the dense reference is the crate's `DenseBfgs` H.
//!
//! `DenseMetric` (random SPD Σ): L Lᵀ = Σ, F Fᵀ = Σ⁻¹, velocity = Σ.
//!
//! Grid: D ∈ {1, 2, 7, 30} × M ∈ {1, 3, 8}, f64 to 1e-10; f32 with the
//! bound of [`f32_bound`].

use nalgebra::{DMatrix, DVector};
use qnmc::Real;
use qnmc::lbfgs::{CurvaturePolicy, InitialScaling, LbfgsMemory, LbfgsSettings};
use qnmc::metric::{DenseMetric, LbfgsMetric, Metric};
use qnmc_tests::dense::DenseBfgs;
use qnmc_tests::dense::rel_frobenius;
use qnmc_tests::dense::util::log_det_spd;
use rand_xorshift::XorShiftRng;

use crate::common::{from_array, normal, rng, uniform};

/// f64 bound on every identity.
const TOL_F64: f64 = 1e-10;

/// Seeds per grid point.
const SEEDS: u64 = 12;

/// u = 2⁻²⁴, the unit round-off of f32.
const U_F32: f64 = f32::EPSILON as f64 / 2.0;

/// The f32 bound 32·n·u·κ on a case whose reference has condition number κ
/// (of H for `LbfgsMetric`, of Σ for `DenseMetric`), with n the length of the
/// longest chain of roundings per entry:
///
/// - `DenseMetric`: n = D + 1. Cholesky gives L Lᵀ = Σ + ΔΣ with
///   |ΔΣ| ≤ γ_{D+1}|L||Lᵀ| (Higham, Thm 10.3), the substitutions and the
///   matrix–vector products are length-D sums, and F Fᵀ against Σ⁻¹ turns a
///   relative backward error into a forward error up to κ times larger.
/// - `LbfgsMetric`: n = D + 2m (m pairs). Every entry of the small matrices
///   starts as a length-D inner product (error ≤ γ_D relative to the norms);
///   Gram–Schmidt, R⁻¹, A = T_S R⁻ᵀ, A C Aᵀ, N, the Jacobi rotations and
///   U = Q E each add sums of length ≤ 2m; applying the operator adds two
///   length-D passes. About eight such stages, each ≤ n·u, and κ for the
///   identities against H⁻¹: 8·n·u·κ to first order.
///
/// The constant 32 is that first-order count with a margin of 4. Rounding
/// errors of random sign stay well below it; the largest measured
/// error/bound ratio is printed and asserted ≤ 1.
fn f32_bound(n: usize, kappa: f64) -> f64 {
    32.0 * n as f64 * U_F32 * kappa
}

// ---------------------------------------------------------------------------
// Random problems.

fn log_uniform(r: &mut XorShiftRng, lo: f64, hi: f64) -> f64 {
    (lo.ln() + uniform(r) * (hi.ln() - lo.ln())).exp()
}

/// Q diag(λ) Qᵀ with Q Haar-like orthogonal and log-uniform λ ∈ [lo, hi].
fn random_spd(r: &mut XorShiftRng, d: usize, lo: f64, hi: f64) -> DMatrix<f64> {
    let q = DMatrix::from_fn(d, d, |_, _| normal(r)).qr().q();
    let lambda = DVector::from_fn(d, |_, _| log_uniform(r, lo, hi));
    let a = &q * DMatrix::from_diagonal(&lambda) * q.transpose();
    // Exactly symmetric.
    (&a + a.transpose()) * 0.5
}

fn to_array<T: Real, const D: usize>(v: &DVector<f64>) -> [T; D] {
    std::array::from_fn(|i| T::from_f64(v[i]))
}

/// Column j = op(eⱼ).
fn materialise<T: Real, const D: usize>(op: impl Fn(&[T; D], &mut [T; D])) -> DMatrix<f64> {
    let mut m = DMatrix::zeros(D, D);
    for j in 0..D {
        let mut e = [T::ZERO; D];
        e[j] = T::ONE;
        let mut out = [T::ZERO; D];
        op(&e, &mut out);
        for i in 0..D {
            m[(i, j)] = out[i].to_f64();
        }
    }
    m
}

fn condition(a: &DMatrix<f64>) -> f64 {
    let ev = a.clone().symmetric_eigen().eigenvalues;
    ev.max() / ev.min()
}

fn inverse(a: &DMatrix<f64>) -> DMatrix<f64> {
    a.clone()
        .cholesky()
        .expect("reference is positive definite")
        .inverse()
}

/// The dense BFGS inverse update from H⁰ = diag(b), oldest pair first.
fn dense_bfgs_diagonal_base(
    base: &DVector<f64>,
    pairs: &[(DVector<f64>, DVector<f64>)],
) -> DMatrix<f64> {
    let d = base.len();
    let eye = DMatrix::<f64>::identity(d, d);
    let mut h = DMatrix::from_diagonal(base);
    for (s, y) in pairs {
        let rho = 1.0 / s.dot(y);
        let left = &eye - s * y.transpose() * rho;
        h = &left * h * left.transpose() + s * s.transpose() * rho;
    }
    h
}

// ---------------------------------------------------------------------------
// Error bookkeeping.

/// Worst errors over many cases.
#[derive(Debug, Clone, Copy, Default)]
struct Errors {
    /// velocity vs H.
    h: f64,
    /// F Fᵀ vs H⁻¹.
    f_ft: f64,
    /// S Sᵀ vs H.
    s_st: f64,
    /// B (apply_hessian) vs H⁻¹.
    b: f64,
    /// kinetic energy vs ½ pᵀHp (relative).
    kinetic: f64,
    /// log det.
    log_det: f64,
    /// Uᵀ U vs I.
    orthonormal: f64,
    /// Truncation: error on the kept directions, relative to ‖H̃‖.
    kept: f64,
    /// Truncation: ‖scaled difference‖₂ / (e^τ − 1) (must be ≤ 1).
    dropped_ratio: f64,
    /// Truncation: how far the eigenvalues of H_τ⁻¹H leave [e^{−τ}, e^τ], relative.
    band: f64,
    /// b = γ·1: own dense reference vs DenseBfgs.
    reference: f64,
    /// Cases.
    checks: usize,
    /// Truncated cases that dropped at least one direction.
    truncated: usize,
    /// Largest condition number of a reference.
    condition: f64,
    /// Largest error / bound (f32 cases; 0 in f64).
    bound_ratio: f64,
}

impl Errors {
    fn worst(&self) -> f64 {
        [
            self.h,
            self.f_ft,
            self.s_st,
            self.b,
            self.kinetic,
            self.log_det,
            self.orthonormal,
            self.kept,
            self.band,
            self.reference,
        ]
        .into_iter()
        .fold(0.0, f64::max)
    }

    fn merge(&mut self, o: &Errors) {
        self.h = self.h.max(o.h);
        self.f_ft = self.f_ft.max(o.f_ft);
        self.s_st = self.s_st.max(o.s_st);
        self.b = self.b.max(o.b);
        self.kinetic = self.kinetic.max(o.kinetic);
        self.log_det = self.log_det.max(o.log_det);
        self.orthonormal = self.orthonormal.max(o.orthonormal);
        self.kept = self.kept.max(o.kept);
        self.dropped_ratio = self.dropped_ratio.max(o.dropped_ratio);
        self.band = self.band.max(o.band);
        self.reference = self.reference.max(o.reference);
        self.checks += o.checks;
        self.truncated += o.truncated;
        self.condition = self.condition.max(o.condition);
        self.bound_ratio = self.bound_ratio.max(o.bound_ratio);
    }
}

// ---------------------------------------------------------------------------
// LbfgsMetric.

/// What one random case was built from.
struct LbfgsCase<T: Real, const D: usize, const M: usize> {
    base: [T; D],
    memory: LbfgsMemory<T, D, M>,
    /// The held pairs as f64, oldest first (exactly what the metric reads).
    pairs: Vec<(DVector<f64>, DVector<f64>)>,
}

fn lbfgs_case<T: Real, const D: usize, const M: usize>(
    seed: u64,
    lo: f64,
    hi: f64,
    uniform_base: bool,
) -> LbfgsCase<T, D, M> {
    let mut r = rng(seed);
    let a = random_spd(&mut r, D, lo, hi);
    let gamma = log_uniform(&mut r, 0.3, 3.0);
    let base = DVector::from_fn(D, |_, _| {
        if uniform_base {
            gamma
        } else {
            log_uniform(&mut r, 0.3, 3.0)
        }
    });
    let settings = LbfgsSettings {
        max_pairs: M,
        scaling: InitialScaling::Fixed(T::ONE),
        curvature: CurvaturePolicy::default(),
    };
    let mut memory = LbfgsMemory::<T, D, M>::new(settings).expect("valid settings");
    // From one pair to well past a wrap-around of the ring.
    let pushes = 1 + (uniform(&mut r) * (3 * M) as f64) as usize;
    for _ in 0..pushes {
        let scale = (2.0 * uniform(&mut r) - 1.0).exp();
        let s = DVector::from_fn(D, |_, _| scale * normal(&mut r));
        let y = &a * &s;
        assert!(
            memory.try_push(&to_array::<T, D>(&s), &to_array::<T, D>(&y)),
            "seed {seed}: an SPD quadratic's pair was skipped"
        );
    }
    let pairs = memory
        .pairs()
        .iter()
        .map(|(s, y, _)| (from_array(s), from_array(y)))
        .collect();
    LbfgsCase {
        base: to_array(&base),
        memory,
        pairs,
    }
}

/// Every identity on one case; `tol` is the bound the truncation checks
/// allow for round-off.
fn lbfgs_identities<T: Real, const D: usize, const M: usize>(
    case: &LbfgsCase<T, D, M>,
    seed: u64,
    tol: f64,
) -> Errors {
    let metric = LbfgsMetric::new(&case.base, &case.memory, T::ZERO).expect("valid metric");
    let base = from_array(&case.base);
    let h_ref = dense_bfgs_diagonal_base(&base, &case.pairs);
    let h_inv = inverse(&h_ref);
    assert_eq!(metric.pairs_used(), case.pairs.len(), "seed {seed}");
    assert_eq!(metric.pairs_skipped(), 0, "seed {seed}");
    assert!(metric.rank() <= (2 * M).min(D), "seed {seed}");

    let h = materialise::<T, D>(|p, v| metric.velocity(p, v));
    let f = materialise::<T, D>(|z, p| metric.momentum_from_normals(z, p));
    let s = materialise::<T, D>(|z, o| metric.apply_sqrt_inverse_hessian(z, o));
    let b = materialise::<T, D>(|x, o| metric.apply_hessian(x, o));

    // ½ pᵀHp = kinetic_energy(p, velocity(p)), p random.
    let mut r = rng(seed ^ 0x5eed);
    let mut kinetic = 0.0f64;
    for _ in 0..5 {
        let p = DVector::from_fn(D, |_, _| normal(&mut r));
        let p_t = to_array::<T, D>(&p);
        let mut v = [T::ZERO; D];
        metric.velocity(&p_t, &mut v);
        let p64 = from_array(&p_t);
        let exact = 0.5 * p64.dot(&(&h_ref * &p64));
        let got = metric.kinetic_energy(&p_t, &v).to_f64();
        kinetic = kinetic.max((got - exact).abs() / exact);
    }

    // Uᵀ U = I.
    let rank = metric.rank();
    let mut orthonormal = 0.0f64;
    for i in 0..rank {
        for j in 0..rank {
            let (ui, uj) = (
                from_array(metric.direction(i).expect("direction")),
                from_array(metric.direction(j).expect("direction")),
            );
            let target = if i == j { 1.0 } else { 0.0 };
            orthonormal = orthonormal.max((ui.dot(&uj) - target).abs());
        }
    }
    assert!(metric.direction(rank).is_none());

    let log_det_ref = log_det_spd(&h_ref);
    let mut e = Errors {
        h: rel_frobenius(&h, &h_ref),
        f_ft: rel_frobenius(&(&f * f.transpose()), &h_inv),
        s_st: rel_frobenius(&(&s * s.transpose()), &h_ref),
        b: rel_frobenius(&b, &h_inv),
        kinetic,
        log_det: (metric.log_det_inverse_mass().to_f64() - log_det_ref).abs()
            / log_det_ref.abs().max(1.0),
        orthonormal,
        checks: 1,
        condition: condition(&h_ref),
        ..Errors::default()
    };

    // Truncation at the median |ln μ| (ln of T, as the metric computes it).
    let mut logs: Vec<f64> = metric
        .eigenvalues()
        .iter()
        .map(|m| Real::ln(*m).abs().to_f64())
        .collect();
    logs.sort_by(f64::total_cmp);
    if let Some(&tau) = logs.get(logs.len() / 2) {
        let truncated =
            LbfgsMetric::new(&case.base, &case.memory, T::from_f64(tau)).expect("valid metric");
        let expected_rank = logs.iter().filter(|l| **l > tau).count();
        assert_eq!(truncated.rank(), expected_rank, "seed {seed}: τ = {tau}");
        e.truncated += (truncated.rank() < rank) as usize;
        let h_tau = materialise::<T, D>(|p, v| truncated.velocity(p, v));
        // X = diag(b)^{-1/2} (H − H_τ) diag(b)^{-1/2} = H̃ − H̃_τ.
        let inv_sqrt_b = DMatrix::from_diagonal(&base.map(|x| 1.0 / x.sqrt()));
        let x = &inv_sqrt_b * (&h_ref - &h_tau) * &inv_sqrt_b;
        let h_tilde_norm = (&inv_sqrt_b * &h_ref * &inv_sqrt_b).norm();
        for k in 0..truncated.rank() {
            let u = from_array(truncated.direction(k).expect("direction"));
            e.kept = e.kept.max((&x * u).norm() / h_tilde_norm);
        }
        let spectral = x.clone().symmetric_eigen().eigenvalues.abs().max();
        let allowed = tau.exp() - 1.0;
        e.dropped_ratio = spectral / (allowed + tol);
        assert!(
            spectral <= allowed + tol * h_tilde_norm,
            "seed {seed}: dropped part {spectral} > e^τ − 1 = {allowed}"
        );
        // Eigenvalues of H_τ⁻¹ H = L⁻¹ H L⁻ᵀ, H_τ = L Lᵀ.
        let h_tau_sym = (&h_tau + h_tau.transpose()) * 0.5;
        let l = h_tau_sym.cholesky().expect("H_τ is positive definite").l();
        let l_inv = l.try_inverse().expect("invertible");
        let g = &l_inv * &h_ref * l_inv.transpose();
        let g = (&g + g.transpose()) * 0.5;
        for ev in g.symmetric_eigen().eigenvalues.iter() {
            let out = (ev.ln().abs() - tau).max(0.0);
            e.band = e.band.max(out);
        }
    }
    e
}

fn lbfgs_grid_point<const D: usize, const M: usize>(total: &mut Errors) {
    for seed in 0..SEEDS {
        let seed = 10_000 * D as u64 + 100 * M as u64 + seed;
        let case = lbfgs_case::<f64, D, M>(seed, 0.1, 10.0, false);
        let e = lbfgs_identities(&case, seed, TOL_F64);
        assert!(
            e.worst() <= TOL_F64,
            "D = {D}, M = {M}, seed {seed}: {e:#?}"
        );
        total.merge(&e);
        // b = γ·1: the diagonal-base reference is the crate's γI reference.
        let case = lbfgs_case::<f64, D, M>(seed + 7, 0.1, 10.0, true);
        let dense = DenseBfgs::new(D, case.base[0], &case.pairs);
        let mine = dense_bfgs_diagonal_base(&from_array(&case.base), &case.pairs);
        let mut e = lbfgs_identities(&case, seed + 7, TOL_F64);
        e.reference = rel_frobenius(&mine, &dense.h);
        assert!(
            e.worst() <= TOL_F64,
            "D = {D}, M = {M}, seed {} (b = γ1): {e:#?}",
            seed + 7
        );
        total.merge(&e);
    }
}

fn lbfgs_grid_point_f32<const D: usize, const M: usize>(total: &mut Errors) {
    for seed in 0..SEEDS {
        let seed = 20_000 * D as u64 + 100 * M as u64 + seed;
        // Better conditioned than the f64 cases: A's spectrum in [0.5, 5].
        let case = lbfgs_case::<f32, D, M>(seed, 0.5, 5.0, false);
        let base = from_array(&case.base);
        let kappa = condition(&dense_bfgs_diagonal_base(&base, &case.pairs));
        let bound = f32_bound(D + 2 * case.pairs.len(), kappa);
        let mut e = lbfgs_identities(&case, seed, bound);
        e.bound_ratio = e.worst() / bound;
        assert!(
            e.worst() <= bound,
            "f32, D = {D}, M = {M}, seed {seed}, bound {bound:e}: {e:#?}"
        );
        total.merge(&e);
    }
}

#[test]
fn lbfgs_metric_identities_f64() {
    let mut total = Errors::default();
    lbfgs_grid_point::<1, 1>(&mut total);
    lbfgs_grid_point::<1, 3>(&mut total);
    lbfgs_grid_point::<1, 8>(&mut total);
    lbfgs_grid_point::<2, 1>(&mut total);
    lbfgs_grid_point::<2, 3>(&mut total);
    lbfgs_grid_point::<2, 8>(&mut total);
    lbfgs_grid_point::<7, 1>(&mut total);
    lbfgs_grid_point::<7, 3>(&mut total);
    lbfgs_grid_point::<7, 8>(&mut total);
    lbfgs_grid_point::<30, 1>(&mut total);
    lbfgs_grid_point::<30, 3>(&mut total);
    lbfgs_grid_point::<30, 8>(&mut total);
    eprintln!("LbfgsMetric f64: {total:#?}");
    assert_eq!(total.checks, 12 * 2 * SEEDS as usize);
    assert!(total.truncated > 50, "truncation must drop directions");
    assert!(total.worst() <= TOL_F64);
}

#[test]
fn lbfgs_metric_identities_f32() {
    let mut total = Errors::default();
    lbfgs_grid_point_f32::<1, 1>(&mut total);
    lbfgs_grid_point_f32::<1, 3>(&mut total);
    lbfgs_grid_point_f32::<1, 8>(&mut total);
    lbfgs_grid_point_f32::<2, 1>(&mut total);
    lbfgs_grid_point_f32::<2, 3>(&mut total);
    lbfgs_grid_point_f32::<2, 8>(&mut total);
    lbfgs_grid_point_f32::<7, 1>(&mut total);
    lbfgs_grid_point_f32::<7, 3>(&mut total);
    lbfgs_grid_point_f32::<7, 8>(&mut total);
    lbfgs_grid_point_f32::<30, 1>(&mut total);
    lbfgs_grid_point_f32::<30, 3>(&mut total);
    lbfgs_grid_point_f32::<30, 8>(&mut total);
    eprintln!("LbfgsMetric f32 (bound_ratio: worst error / bound): {total:#?}");
    assert_eq!(total.checks, 12 * SEEDS as usize);
    assert!(total.bound_ratio <= 1.0);
}

// ---------------------------------------------------------------------------
// DenseMetric.

fn dense_identities<T: Real, const D: usize>(seed: u64, lo: f64, hi: f64) -> (Errors, f64) {
    let mut r = rng(seed);
    let sigma = random_spd(&mut r, D, lo, hi);
    let cov: [[T; D]; D] =
        std::array::from_fn(|i| std::array::from_fn(|j| T::from_f64(sigma[(i, j)])));
    // The reference is the matrix the metric sees (rounded to T).
    let sigma = DMatrix::from_fn(D, D, |i, j| cov[i][j].to_f64());
    let metric = DenseMetric::new(&cov).expect("SPD covariance");
    let factor = metric.covariance_factor();
    let l = DMatrix::from_fn(D, D, |i, j| factor[i][j].to_f64());
    for i in 0..D {
        for j in i + 1..D {
            assert_eq!(l[(i, j)], 0.0, "L is lower triangular");
        }
    }
    let f = materialise::<T, D>(|z, p| metric.momentum_from_normals(z, p));
    let v = materialise::<T, D>(|p, v| metric.velocity(p, v));
    let kappa = condition(&sigma);
    let e = Errors {
        h: rel_frobenius(&v, &sigma),
        s_st: rel_frobenius(&(&l * l.transpose()), &sigma),
        f_ft: rel_frobenius(&(&f * f.transpose()), &inverse(&sigma)),
        checks: 1,
        condition: kappa,
        ..Errors::default()
    };
    (e, kappa)
}

#[test]
fn dense_metric_identities() {
    let mut total = Errors::default();
    let mut total_f32 = Errors::default();
    macro_rules! dims {
        ($($d:literal),*) => {$(
            for seed in 0..SEEDS {
                let (e, _) = dense_identities::<f64, $d>(30_000 + 100 * $d + seed, 0.1, 10.0);
                assert!(e.worst() <= TOL_F64, "D = {}, seed {seed}: {e:#?}", $d);
                total.merge(&e);
                let (mut e, kappa) = dense_identities::<f32, $d>(40_000 + 100 * $d + seed, 0.5, 5.0);
                let bound = f32_bound($d + 1, kappa);
                e.bound_ratio = e.worst() / bound;
                assert!(e.worst() <= bound, "f32, D = {}, seed {seed}, bound {bound:e}: {e:#?}", $d);
                total_f32.merge(&e);
            }
        )*};
    }
    dims!(1, 2, 7, 30);
    eprintln!("DenseMetric f64 (h: velocity, s_st: L Lᵀ, f_ft: F Fᵀ): {total:#?}");
    eprintln!("DenseMetric f32: {total_f32:#?}");
}
