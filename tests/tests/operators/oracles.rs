//! Operator oracles for the L-BFGS engine (ALGORITHMS.md §1, "Oracles").
//!
//! Every operator of `qnmc::lbfgs::LbfgsMemory` is materialised on the unit
//! vectors and compared with dense matrices built by the textbook BFGS formulas
//! from the same pairs (`qnmc_tests::dense::DenseBfgs`):
//!
//! - H (two-loop) = H_dense (inverse update),  B (C Cᵀ product) = B_dense (direct update),
//! - S Sᵀ = H_dense,  C Cᵀ = B_dense,  H·B = I,
//! - S = the dense product-form factor (the S the dense QNHMC/HAMCMC references use),
//!   and that dense S satisfies S Sᵀ = H_dense on its own,
//! - the transposed operators are the transposes,
//! - log det H = log det H_dense (Cholesky) = −log det B_dense (LU),
//!
//! as relative Frobenius errors (log det: |Δ| / max(1, |log det|)), ≤ 1e-10 in f64.
//! Problems: random SPD and indefinite pair sources over a grid of D and M, pairs
//! from real QNHMC and HAMCMC runs, the same in f32, and the pair ring against a
//! `VecDeque` model.

use std::collections::VecDeque;

use nalgebra::{DMatrix, DVector};
use qnmc::lbfgs::{CurvaturePolicy, InitialScaling, LbfgsMemory, LbfgsSettings, PairRing};
use qnmc::{
    Hamcmc, HamcmcSettings, Potential, Qnhmc, QnhmcMass, QnhmcSettings, Real, StepSizeSchedule,
};
use qnmc_tests::dense::{
    Banana, CorrelatedGaussian, DenseBfgs, DenseCurvature, DensePairs, DenseScaling,
    LinearGaussianMinibatch, LogisticRegression, rel_frobenius,
};
use rand_xorshift::XorShiftRng;

use crate::common::{from_array, normal, rng, uniform};

/// f64 bound on every oracle.
const TOL_F64: f64 = 1e-10;

/// f32 bound, for memories with condition number κ(H) ≤ [`KAPPA_F32`] (asserted).
/// Each operator is a chain of at most m ≤ 10 rank-one factors, each applied
/// with a length-D dot product and an axpy (the product form also builds B s
/// through two more chains), and the checks multiply two materialised operators
/// (S Sᵀ, C Cᵀ, H·B), which amplifies relative errors by up to κ. The
/// worst-case bound of a length-D dot product is γ_D ≈ D·u (u = 2⁻²⁴ ≈ 6.0e-8),
/// giving m·D·u·κ = 10·50·6e-8·200 = 6e-3, which round-off never reaches
/// because its signs are random: the probabilistic bound (Higham & Mary 2019)
/// replaces D by √D and m by √m, √m·√D·u·κ = 3.2·7.1·6e-8·200 ≈ 2.7e-4. So
/// 1e-3 keeps a margin of about 4 over that. The measured worst is 2.4e-5
/// (H·B on the worst-conditioned memory), 4e-6 for the other oracles (C Cᵀ).
/// The compact factors (issue 12) roughly tripled these (from 8e-6 and 1e-6):
/// on the small-D cases (2m > D) the pairs are linearly dependent and the
/// coefficients of the factor vectors in them are not unique.
const TOL_F32: f64 = 1e-3;

/// The largest κ(H) the f32 bound is derived for.
const KAPPA_F32: f64 = 200.0;

// ---------------------------------------------------------------------------
// Random problems.

fn random_orthogonal(r: &mut XorShiftRng, d: usize) -> DMatrix<f64> {
    let g = DMatrix::from_fn(d, d, |_, _| normal(r));
    g.qr().q()
}

/// Q diag(λ) Qᵀ with log-uniform |λ| in [lo, hi]; with `indefinite`, each λ is
/// negated with probability 1/2 (at least one of each sign when d ≥ 2).
fn random_symmetric(
    r: &mut XorShiftRng,
    d: usize,
    lo: f64,
    hi: f64,
    indefinite: bool,
) -> DMatrix<f64> {
    let q = random_orthogonal(r, d);
    let mut lambda = DVector::from_fn(d, |_, _| (lo.ln() + uniform(r) * (hi.ln() - lo.ln())).exp());
    if indefinite {
        for i in 0..d {
            if uniform(r) < 0.5 {
                lambda[i] = -lambda[i];
            }
        }
        if d >= 2 {
            lambda[0] = lambda[0].abs();
            lambda[1] = -lambda[1].abs();
        }
    }
    &q * DMatrix::from_diagonal(&lambda) * q.transpose()
}

fn to_array<T: Real, const D: usize>(v: &DVector<f64>) -> [T; D] {
    let mut out = [T::ZERO; D];
    for i in 0..D {
        out[i] = T::from_f64(v[i]);
    }
    out
}

// ---------------------------------------------------------------------------
// The oracle itself.

/// Worst errors of one or many oracle checks.
#[derive(Debug, Clone, Copy, Default)]
struct Errors {
    /// H (two-loop) vs H_dense.
    h: f64,
    /// B (core) vs B_dense.
    b: f64,
    /// S Sᵀ vs H_dense.
    s_st: f64,
    /// C Cᵀ vs B_dense.
    c_ct: f64,
    /// H·B vs I (core operators only).
    hb: f64,
    /// S (core) vs the dense product-form S.
    s_factor: f64,
    /// Dense S Sᵀ vs dense H (checks the reference's own S).
    dense_s: f64,
    /// Transposed operators vs transposes.
    transposes: f64,
    /// log det.
    log_det: f64,
    /// Number of checks merged.
    checks: usize,
    /// Largest condition number of the dense H seen (for the record).
    condition: f64,
}

impl Errors {
    fn worst(&self) -> f64 {
        [
            self.h,
            self.b,
            self.s_st,
            self.c_ct,
            self.hb,
            self.s_factor,
            self.dense_s,
            self.transposes,
            self.log_det,
        ]
        .into_iter()
        .fold(0.0, f64::max)
    }

    fn merge(&mut self, o: &Errors) {
        self.h = self.h.max(o.h);
        self.b = self.b.max(o.b);
        self.s_st = self.s_st.max(o.s_st);
        self.c_ct = self.c_ct.max(o.c_ct);
        self.hb = self.hb.max(o.hb);
        self.s_factor = self.s_factor.max(o.s_factor);
        self.dense_s = self.dense_s.max(o.dense_s);
        self.transposes = self.transposes.max(o.transposes);
        self.log_det = self.log_det.max(o.log_det);
        self.checks += o.checks;
        self.condition = self.condition.max(o.condition);
    }

    fn assert_below(&self, tol: f64, label: &str) {
        assert!(
            self.worst() <= tol,
            "{label}: oracle error above {tol:e}: {self:#?}"
        );
    }
}

/// Materialises a linear operator on the unit vectors: column j = op(e_j).
fn materialise<T: Real, const D: usize>(mut op: impl FnMut(&[T; D], &mut [T; D])) -> DMatrix<f64> {
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

/// The pairs the memory holds, as f64 dense vectors, oldest first; also checks
/// the stored curvature is sᵀy.
fn held_pairs<T: Real, const D: usize, const M: usize>(
    memory: &LbfgsMemory<T, D, M>,
    tol: f64,
) -> Vec<(DVector<f64>, DVector<f64>)> {
    memory
        .pairs()
        .iter()
        .map(|(s, y, sy)| {
            let (s, y) = (from_array(s), from_array(y));
            let exact = s.dot(&y);
            assert!(
                (sy.to_f64() - exact).abs() <= tol * exact.abs(),
                "stored curvature {sy} is not sᵀy = {exact}"
            );
            assert!(sy.to_f64() > 0.0, "a held pair has sᵀy ≤ 0");
            (s, y)
        })
        .collect()
}

/// Every oracle on one memory.
fn oracle_errors<T: Real, const D: usize, const M: usize>(
    memory: &LbfgsMemory<T, D, M>,
    tol: f64,
) -> Errors {
    let pairs = held_pairs(memory, tol);
    let dense = DenseBfgs::new(D, memory.gamma().to_f64(), &pairs);
    let eye = DMatrix::<f64>::identity(D, D);

    let mut mem = memory.clone();
    let h = materialise::<T, D>(|v, o| mem.apply_inverse_hessian(v, o));
    let b = materialise::<T, D>(|v, o| mem.apply_hessian(v, o));
    let s = materialise::<T, D>(|v, o| mem.apply_sqrt_inverse_hessian(v, o));
    let st = materialise::<T, D>(|v, o| mem.apply_sqrt_inverse_hessian_transpose(v, o));
    let c = materialise::<T, D>(|v, o| mem.apply_sqrt_hessian(v, o));
    let ct = materialise::<T, D>(|v, o| mem.apply_sqrt_hessian_transpose(v, o));
    let log_det = mem.log_det_inverse_hessian().to_f64();

    let dense_log_det = dense.log_det_h();
    let dense_log_det_b = dense.log_det_h_via_b();
    let log_scale = dense_log_det.abs().max(1.0);
    Errors {
        h: rel_frobenius(&h, &dense.h),
        b: rel_frobenius(&b, &dense.b),
        s_st: rel_frobenius(&(&s * s.transpose()), &dense.h),
        c_ct: rel_frobenius(&(&c * c.transpose()), &dense.b),
        hb: rel_frobenius(&(&h * &b), &eye),
        s_factor: rel_frobenius(&s, &dense.s),
        dense_s: rel_frobenius(&(&dense.s * dense.s.transpose()), &dense.h)
            .max(rel_frobenius(&(&dense.h * &dense.b), &eye)),
        transposes: rel_frobenius(&st, &s.transpose()).max(rel_frobenius(&ct, &c.transpose())),
        log_det: ((log_det - dense_log_det).abs() / log_scale)
            .max((dense_log_det_b - dense_log_det).abs() / log_scale),
        checks: 1,
        condition: {
            let ev = dense.h.clone().symmetric_eigen().eigenvalues;
            ev.max() / ev.min()
        },
    }
}

// ---------------------------------------------------------------------------
// (a) Random problems.

/// What a random case feeds the memory.
#[derive(Debug, Clone, Copy)]
struct Case {
    indefinite: bool,
    newest_pair: bool,
    gamma: f64,
    trust_region: f64,
    min_relative_curvature: f64,
    max_pairs: usize,
    pushes: usize,
    lo: f64,
    hi: f64,
}

impl Case {
    /// A case drawn from `seed`; `well_conditioned` restricts the spectrum for f32.
    fn draw<const M: usize>(r: &mut XorShiftRng, well_conditioned: bool) -> Case {
        let indefinite = uniform(r) < 0.3;
        let newest_pair = uniform(r) < 0.5;
        let (lo, hi, gamma) = if well_conditioned {
            (0.5, 5.0, 0.5 + 1.5 * uniform(r))
        } else {
            (0.1, 10.0, (-1.0 + 2.0 * uniform(r)).exp())
        };
        // Indefinite sources: sometimes a trust region, always an angle bound
        // (it keeps the admitted pairs well conditioned, and it is what skips).
        let trust_region = if indefinite && uniform(r) < 0.5 {
            0.5
        } else {
            0.0
        };
        let min_relative_curvature = if indefinite {
            if well_conditioned { 0.5 } else { 0.2 }
        } else if uniform(r) < 0.5 {
            1e-8
        } else {
            0.0
        };
        // Mostly the full M, sometimes fewer (the ring's run-time capacity).
        let max_pairs = if uniform(r) < 0.75 {
            M
        } else {
            1 + (uniform(r) * M as f64) as usize % M
        };
        // From none to well past a wrap-around.
        let pushes = (uniform(r) * (3 * M + 3) as f64) as usize;
        Case {
            indefinite,
            newest_pair,
            gamma,
            trust_region,
            min_relative_curvature,
            max_pairs,
            pushes,
            lo,
            hi,
        }
    }
}

/// Feeds a random case to an `LbfgsMemory<T, D, M>` and to the `Vec` model,
/// checks the bookkeeping (pairs held, order, γ, skip count) and returns the
/// oracle errors.
fn random_case<T: Real, const D: usize, const M: usize>(
    seed: u64,
    well_conditioned: bool,
    tol: f64,
) -> (Errors, u64) {
    let mut r = rng(seed);
    let case = Case::draw::<M>(&mut r, well_conditioned);
    let a = random_symmetric(&mut r, D, case.lo, case.hi, case.indefinite);
    let scaling = if case.newest_pair {
        InitialScaling::NewestPair(T::from_f64(case.gamma))
    } else {
        InitialScaling::Fixed(T::from_f64(case.gamma))
    };
    let curvature = CurvaturePolicy {
        trust_region: T::from_f64(case.trust_region),
        min_relative_curvature: T::from_f64(case.min_relative_curvature),
    };
    let settings = LbfgsSettings {
        max_pairs: case.max_pairs,
        scaling,
        curvature,
    };
    let mut memory = LbfgsMemory::<T, D, M>::new(settings).expect("valid settings");
    let mut model = DensePairs::new(
        case.max_pairs,
        DenseScaling::from(scaling),
        DenseCurvature::from(curvature),
    );
    for _ in 0..case.pushes {
        let scale = (2.0 * uniform(&mut r) - 1.0).exp();
        let s = DVector::from_fn(D, |_, _| scale * normal(&mut r));
        let y = &a * &s;
        // Round to T first, so the model sees exactly what the memory sees.
        let (s_t, y_t) = (to_array::<T, D>(&s), to_array::<T, D>(&y));
        let pushed = memory.try_push(&s_t, &y_t);
        let modelled = model.offer(&from_array(&s_t), &from_array(&y_t));
        assert_eq!(
            pushed, modelled,
            "seed {seed}: admission differs from the rule ({case:?})"
        );
    }
    // Bookkeeping against the model.
    assert_eq!(memory.len(), model.pairs.len(), "seed {seed}");
    assert_eq!(
        memory.pairs_skipped(),
        model.skipped,
        "seed {seed}: skip count"
    );
    assert_eq!(
        memory.pairs_admitted(),
        model.admitted,
        "seed {seed}: admitted count"
    );
    assert!(
        (memory.gamma().to_f64() - model.gamma).abs() <= tol * model.gamma,
        "seed {seed}: γ {} vs {}",
        memory.gamma(),
        model.gamma
    );
    for (k, ((s, y, _), (ms, my))) in memory.pairs().iter().zip(&model.pairs).enumerate() {
        let (s, y) = (from_array(s), from_array(y));
        assert_eq!(&s, ms, "seed {seed}: s of pair {k} (order)");
        assert!(
            (&y - my).norm() <= tol * my.norm(),
            "seed {seed}: y of pair {k}"
        );
    }
    if !case.indefinite {
        assert_eq!(
            memory.pairs_skipped(),
            0,
            "seed {seed}: an SPD source never skips"
        );
    }
    let errors = oracle_errors(&memory, tol);
    errors.assert_below(tol, &format!("seed {seed}, D = {D}, M = {M}, {case:?}"));
    (errors, memory.pairs_skipped())
}

fn random_grid_point<T: Real, const D: usize, const M: usize>(
    seeds: u64,
    well_conditioned: bool,
    tol: f64,
    total: &mut Errors,
) -> u64 {
    let mut skipped = 0;
    for seed in 0..seeds {
        let (e, k) = random_case::<T, D, M>(
            1000 * D as u64 + 100 * M as u64 + seed,
            well_conditioned,
            tol,
        );
        total.merge(&e);
        skipped += k;
    }
    skipped
}

macro_rules! grid {
    ($t:ty, $seeds:expr, $wc:expr, $tol:expr, $total:expr; $(($d:literal, $m:literal)),*) => {{
        let mut skipped = 0;
        $( skipped += random_grid_point::<$t, $d, $m>($seeds, $wc, $tol, $total); )*
        skipped
    }};
}

#[test]
fn random_spd_and_indefinite_problems_f64() {
    let mut total = Errors::default();
    let skipped = grid!(f64, 40, false, TOL_F64, &mut total;
        (2, 1), (2, 3), (2, 5), (2, 10),
        (5, 1), (5, 3), (5, 5), (5, 10),
        (20, 1), (20, 3), (20, 5), (20, 10),
        (50, 1), (50, 3), (50, 5), (50, 10));
    eprintln!("random problems f64: {total:#?}\n  pairs skipped in total: {skipped}");
    assert_eq!(total.checks, 16 * 40);
    assert!(
        skipped > 100,
        "the indefinite cases must exercise the skip rule"
    );
    total.assert_below(TOL_F64, "random f64");
}

#[test]
fn random_spd_and_indefinite_problems_f32() {
    let mut total = Errors::default();
    let skipped = grid!(f32, 20, true, TOL_F32, &mut total;
        (2, 1), (2, 3), (2, 5), (2, 10),
        (5, 1), (5, 3), (5, 5), (5, 10),
        (20, 1), (20, 3), (20, 5), (20, 10),
        (50, 1), (50, 3), (50, 5), (50, 10));
    eprintln!("random problems f32: {total:#?}\n  pairs skipped in total: {skipped}");
    assert!(
        total.condition <= KAPPA_F32,
        "the f32 cases must be well conditioned"
    );
    assert!(skipped > 20);
    total.assert_below(TOL_F32, "random f32");
}

/// A hand-checkable wrap-around: with M = 3 and 7 pushes the memory must hold
/// pairs 5, 6, 7 in that order, and agree with a dense BFGS of exactly those.
#[test]
fn wrap_around_keeps_the_newest_pairs() {
    let mut r = rng(77);
    let a = random_symmetric(&mut r, 6, 0.5, 4.0, false);
    let mut memory = LbfgsMemory::<f64, 6, 3>::new(LbfgsSettings::with_max_pairs(3)).unwrap();
    let mut all = Vec::new();
    for _ in 0..7 {
        let s = DVector::from_fn(6, |_, _| normal(&mut r));
        let y = &a * &s;
        assert!(memory.try_push(&to_array(&s), &to_array(&y)));
        all.push((s, y));
    }
    let last = &all[4..];
    for (k, (s, _, _)) in memory.pairs().iter().enumerate() {
        assert_eq!(from_array(s), last[k].0);
    }
    let dense = DenseBfgs::new(6, 1.0, last);
    let mem = memory.clone();
    let h = materialise::<f64, 6>(|v, o| mem.apply_inverse_hessian(v, o));
    assert!(rel_frobenius(&h, &dense.h) <= TOL_F64);
    // ... and not with all seven (the check can fail).
    let wrong = DenseBfgs::new(6, 1.0, &all);
    assert!(rel_frobenius(&h, &wrong.h) > 1e-3);
    assert!(oracle_errors(&memory, TOL_F64).worst() <= TOL_F64);
}

/// The typo of HAMCMC eq. 11 (q = αBs − y) gives a factor whose S Sᵀ is not H:
/// the oracle's measure must see it (so the S oracle can fail).
#[test]
fn the_printed_product_form_fails_the_oracle() {
    let mut r = rng(5);
    let d = 6;
    let a = random_symmetric(&mut r, d, 0.3, 3.0, false);
    let pairs: Vec<_> = (0..4)
        .map(|_| {
            let s = DVector::from_fn(d, |_, _| normal(&mut r));
            let y = &a * &s;
            (s, y)
        })
        .collect();
    let dense = DenseBfgs::new(d, 1.0, &pairs);
    let eye = DMatrix::<f64>::identity(d, d);
    let (mut b, mut s_f) = (eye.clone(), eye.clone());
    for (s, y) in &pairs {
        let bs = &b * s;
        let (sy, sbs) = (s.dot(y), s.dot(&bs));
        let alpha = (sy / sbs).sqrt();
        let q = &bs * alpha - y; // the printed sign
        s_f = (&eye - (s / sy) * q.transpose()) * s_f;
        b = &b - &bs * bs.transpose() / sbs + y * y.transpose() / sy;
    }
    assert!(rel_frobenius(&(&s_f * s_f.transpose()), &dense.h) > 0.1);
    assert!(rel_frobenius(&(&dense.s * dense.s.transpose()), &dense.h) <= TOL_F64);
}

/// ALGORITHMS.md §1 and the `InitialScaling::NewestPair` docs: γ is the newest
/// *held* pair's sᵀy/yᵀy, "and the given value while the memory is empty". A
/// memory with `max_pairs = 0` is always empty, so γ must stay put.
#[test]
fn newest_pair_gamma_ignores_pairs_a_zero_capacity_ring_drops() {
    let settings = LbfgsSettings {
        max_pairs: 0,
        scaling: InitialScaling::NewestPair(1.0),
        curvature: CurvaturePolicy::default(),
    };
    let mut memory = LbfgsMemory::<f64, 2, 2>::new(settings).unwrap();
    memory.try_push(&[1.0, 0.0], &[4.0, 0.0]);
    assert!(memory.is_empty());
    let mut out = [0.0; 2];
    memory.apply_inverse_hessian(&[1.0, 1.0], &mut out);
    assert_eq!(
        memory.gamma(),
        1.0,
        "γ changed for a pair that was not kept"
    );
    assert_eq!(
        out,
        [1.0, 1.0],
        "an empty memory with γ = 1 is the identity"
    );
}

// ---------------------------------------------------------------------------
// (b) Pairs from real runs.

/// Runs a core QNHMC and checks the oracles on its memory every `every` draws.
fn qnhmc_run<P: Potential<f64, D>, const D: usize, const M: usize>(
    target: &P,
    settings: QnhmcSettings<f64>,
    x0: [f64; D],
    seed: u64,
    steps: usize,
    every: usize,
) -> (Errors, usize, u64) {
    let mut sampler = Qnhmc::<f64, D, M>::new(settings, x0, target).unwrap();
    let mut r = rng(seed);
    let mut total = Errors::default();
    let mut accepted = 0;
    for n in 1..=steps {
        accepted += sampler.step(target, &mut r).accepted as usize;
        if n % every == 0 {
            let e = oracle_errors(sampler.memory(), TOL_F64);
            e.assert_below(TOL_F64, &format!("QNHMC run, seed {seed}, draw {n}"));
            total.merge(&e);
        }
    }
    assert!(
        !sampler.memory().is_empty(),
        "the run must have filled the memory"
    );
    (total, accepted, sampler.memory().pairs_skipped())
}

#[test]
fn pairs_from_qnhmc_runs() {
    let mut total = Errors::default();
    let gaussian = CorrelatedGaussian::new(&[0.5; 8], 1.0, 4.0);
    for (mass, scaling) in [
        (QnhmcMass::Identity, InitialScaling::Fixed(1.0)),
        (QnhmcMass::InverseHessian, InitialScaling::Fixed(1.0)),
        (QnhmcMass::Identity, InitialScaling::NewestPair(1.0)),
        (QnhmcMass::InverseHessian, InitialScaling::NewestPair(1.0)),
    ] {
        let mut s = QnhmcSettings::new(0.4, 6, 5);
        s.mass = mass;
        s.lbfgs.scaling = scaling;
        let (e, acc, _) = qnhmc_run::<_, 8, 5>(&gaussian, s, [3.0; 8], 11, 300, 25);
        assert!(acc > 30, "QNHMC Gaussian run accepted {acc}/300");
        total.merge(&e);
    }
    let logistic = LogisticRegression::synthetic(5, 60, 3);
    for mass in [QnhmcMass::Identity, QnhmcMass::InverseHessian] {
        let mut s = QnhmcSettings::new(0.15, 8, 4);
        s.mass = mass;
        let (e, acc, _) = qnhmc_run::<_, 5, 4>(&logistic, s, [0.0; 5], 12, 300, 25);
        assert!(acc > 30, "QNHMC logistic run accepted {acc}/300");
        total.merge(&e);
    }
    // A banana is not log-concave: some trajectory pairs have sᵀy ≤ 0.
    let banana = Banana::new(4, 2.0, 0.6);
    let mut skipped = 0;
    for (seed, mass, eps, steps) in [
        (20, QnhmcMass::Identity, 0.05, 4),
        (21, QnhmcMass::InverseHessian, 0.1, 8),
        (22, QnhmcMass::InverseHessian, 0.2, 4),
    ] {
        let mut s = QnhmcSettings::new(eps, steps, 6);
        s.mass = mass;
        s.lbfgs.curvature.min_relative_curvature = 0.05;
        let (e, acc, k) = qnhmc_run::<_, 4, 6>(&banana, s, [0.3, -0.2, 0.1, 0.4], seed, 300, 20);
        assert!(acc > 30, "QNHMC banana run accepted {acc}/300");
        skipped += k;
        total.merge(&e);
    }
    eprintln!("QNHMC-run pairs: {total:#?}\n  banana pairs skipped: {skipped}");
    assert!(skipped > 0, "the banana runs must exercise the skip rule");
    total.assert_below(TOL_F64, "QNHMC runs");
}

fn hamcmc_run<const D: usize, const M: usize>(
    target: &LinearGaussianMinibatch,
    settings: HamcmcSettings<f64>,
    seed: u64,
    steps: usize,
) -> Errors {
    let mut sampler = Hamcmc::<f64, D, M>::new(settings, [0.0; D]).unwrap();
    let mut r = rng(seed);
    let mut total = Errors::default();
    for n in 1..=steps {
        sampler.step(target, &mut r).expect("finite HAMCMC step");
        if n % 20 == 0 {
            assert_eq!(sampler.memory().len(), M - 1, "HAMCMC keeps M − 1 pairs");
            let e = oracle_errors(sampler.memory(), TOL_F64);
            e.assert_below(TOL_F64, &format!("HAMCMC run, seed {seed}, draw {n}"));
            total.merge(&e);
        }
    }
    total
}

#[test]
fn pairs_from_hamcmc_runs() {
    let model = LinearGaussianMinibatch::synthetic(5, 200, 20, 9);
    let mut total = Errors::default();
    for schedule in [
        StepSizeSchedule::Constant(0.02),
        StepSizeSchedule::BlockDecaying {
            scale: 0.05,
            exponent: 0.51,
        },
    ] {
        let settings = HamcmcSettings::new(schedule, 0.005, 1.0);
        total.merge(&hamcmc_run::<5, 2>(&model, settings, 31, 300));
        total.merge(&hamcmc_run::<5, 4>(&model, settings, 32, 300));
        total.merge(&hamcmc_run::<5, 6>(&model, settings, 33, 300));
    }
    eprintln!("HAMCMC-run pairs: {total:#?}");
    total.assert_below(TOL_F64, "HAMCMC runs");
}

// ---------------------------------------------------------------------------
// (c) f32 from a real run.

/// N(0, 11ᵀ + 4I) in f32 (U written directly in f32).
struct GaussianF32<const D: usize>;

impl<const D: usize> Potential<f32, D> for GaussianF32<D> {
    fn potential_and_gradient(&self, x: &[f32; D], g: &mut [f32; D]) -> f32 {
        // Σ⁻¹ = (I − 11ᵀ/(4 + D)) / 4.
        let sum: f32 = x.iter().sum();
        let c = sum / (4.0 + D as f32);
        let mut u = 0.0;
        for i in 0..D {
            g[i] = 0.25 * (x[i] - c);
            u += 0.5 * x[i] * g[i];
        }
        u
    }
}

#[test]
fn pairs_from_an_f32_qnhmc_run() {
    let mut total = Errors::default();
    for (mass, seed) in [(QnhmcMass::Identity, 41), (QnhmcMass::InverseHessian, 42)] {
        let mut s = QnhmcSettings::<f32>::new(0.4, 6, 4);
        s.mass = mass;
        let mut sampler = Qnhmc::<f32, 6, 4>::new(s, [2.0; 6], &GaussianF32::<6>).unwrap();
        let mut r = rng(seed);
        for n in 1..=300 {
            sampler.step(&GaussianF32::<6>, &mut r);
            if n % 25 == 0 {
                total.merge(&oracle_errors(sampler.memory(), TOL_F32));
            }
        }
    }
    eprintln!("f32 QNHMC-run pairs: {total:#?}");
    assert!(total.condition <= KAPPA_F32);
    total.assert_below(TOL_F32, "f32 QNHMC runs");
}

// ---------------------------------------------------------------------------
// PairRing against a VecDeque model.

fn ring_property<const M: usize>(seed: u64) -> usize {
    let mut r = rng(seed);
    let capacity = (uniform(&mut r) * (M + 2) as f64) as usize; // 0 ..= M + 1, clamped
    let mut ring = PairRing::<f64, 2, M>::new(capacity);
    let cap = capacity.min(M);
    assert_eq!(ring.capacity(), cap);
    let mut model: VecDeque<([f64; 2], [f64; 2], f64)> = VecDeque::new();
    let ops = 5 + (uniform(&mut r) * 60.0) as usize;
    let mut counter = 0.0;
    for _ in 0..ops {
        if uniform(&mut r) < 0.08 {
            ring.clear();
            model.clear();
        } else {
            counter += 1.0;
            let s = [counter, normal(&mut r)];
            let y = [-counter, normal(&mut r)];
            ring.push(&s, &y, counter * 0.5);
            if cap > 0 {
                if model.len() == cap {
                    model.pop_front();
                }
                model.push_back((s, y, counter * 0.5));
            }
        }
        assert_eq!(ring.len(), model.len(), "seed {seed}");
        assert_eq!(ring.is_empty(), model.is_empty());
        for k in 0..=model.len() + 1 {
            let got = ring.get(k).map(|(s, y, c)| (*s, *y, c));
            assert_eq!(got, model.get(k).copied(), "seed {seed}: get({k})");
        }
        assert_eq!(
            ring.newest().map(|(s, y, c)| (*s, *y, c)),
            model.back().copied()
        );
        let forward: Vec<_> = ring.iter().map(|(s, y, c)| (*s, *y, c)).collect();
        assert_eq!(
            forward,
            model.iter().copied().collect::<Vec<_>>(),
            "seed {seed}: iter"
        );
        let backward: Vec<_> = ring.iter().rev().map(|(s, y, c)| (*s, *y, c)).collect();
        assert_eq!(
            backward,
            model.iter().rev().copied().collect::<Vec<_>>(),
            "seed {seed}: rev"
        );
    }
    ops
}

#[test]
fn pair_ring_matches_a_vecdeque_model() {
    let mut ops = 0;
    for seed in 0..300 {
        ops += ring_property::<1>(seed);
        ops += ring_property::<2>(seed + 1000);
        ops += ring_property::<3>(seed + 2000);
        ops += ring_property::<7>(seed + 3000);
    }
    assert!(ops > 10_000);
}
