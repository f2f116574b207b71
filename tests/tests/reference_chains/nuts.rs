//! The core's NUTS against the dense reference (`qnmc_tests::dense::nuts`),
//! written from docs/NUTS.md: both are fed identically seeded generators and
//! must give, draw by draw for 500 draws,
//!
//! - the same position to 1e-10 (|a − b| ≤ 1e-10·max(1, |b|), as
//!   `reference_chains/hmc.rs`), and the same energy error and acceptance
//!   statistic to the same tolerance;
//! - the same tree depth, leapfrog count, gradient-evaluation count, divergent
//!   flag and max-depth flag (every discrete decision of the transition).
//!
//! Cases: a correlated Gaussian (D = 5) and a Bayesian logistic regression
//! (D = 6, not Gaussian), each with the four metrics (identity, diagonal,
//! dense, L-BFGS from a few exact pairs of a quadratic); a twisted banana
//! (not log-concave) with the dense metric; a small maximum depth (4) where
//! most trees saturate; a step size large enough for divergences at the
//! default threshold; and a small `max_energy_error` so that divergences with
//! a finite energy error (which still add exp(−ΔH) to the acceptance sum)
//! happen. Each case asserts that what it is meant to cover did happen.
//!
//! Negative controls: a reference with another (equally valid) momentum
//! factor, without Stan's extra U-turn checks, with uniform instead of biased
//! progressive sampling, or with a step size off by 10⁻⁸, is told apart.

use nalgebra::{DMatrix, DVector};
use qnmc::lbfgs::{LbfgsMemory, LbfgsSettings};
use qnmc::metric::{DenseMetric, DiagonalMetric, IdentityMetric, LbfgsMetric, Metric};
use qnmc::random::standard_normal;
use qnmc::{Nuts, NutsSettings, NutsStats, Potential};
use qnmc_tests::dense::nuts::{
    DenseNuts, DenseNutsStep, dense_metric, diagonal_metric, identity_metric, lbfgs_metric,
};
use qnmc_tests::dense::util::dvec;
use qnmc_tests::dense::{
    Banana, CorrelatedGaussian, DenseTarget, LogisticRegression, coordinate_error,
    max_coordinate_error,
};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use crate::common::rng;

/// Bound on every coordinate of every draw and on the real-valued statistics.
const TOL: f64 = 1e-10;
/// Draws compared per chain.
const STEPS: usize = 500;

/// What a side-by-side run saw.
#[derive(Debug, Clone, Default)]
struct Report {
    draws: usize,
    /// Largest coordinate error of the positions.
    worst_position: f64,
    /// Largest error of the acceptance statistic and the energy error.
    worst_statistic: f64,
    divergent: usize,
    saturated: usize,
    moved: usize,
    leapfrog_steps: u64,
    /// Draws with a leaf whose θ was not finite (not evaluated).
    unevaluated: usize,
    /// Draws per tree depth 0..=10.
    depths: [usize; 11],
}

/// Compares one draw; `Err` names the first decision or value that differs.
fn compare_draw(
    n: usize,
    core_position: &[f64],
    core: &NutsStats<f64>,
    reference_position: &DVector<f64>,
    reference: &DenseNutsStep,
    report: &mut Report,
) -> Result<(), String> {
    let discrete = [
        ("tree depth", core.tree_depth, reference.tree_depth),
        (
            "leapfrog steps",
            core.leapfrog_steps,
            reference.leapfrog_steps,
        ),
        (
            "gradient evaluations",
            core.gradient_evaluations,
            reference.gradient_evaluations,
        ),
        (
            "divergent",
            core.divergent as u32,
            reference.divergent as u32,
        ),
        (
            "reached max depth",
            core.reached_max_depth as u32,
            reference.reached_max_depth as u32,
        ),
    ];
    for (what, c, r) in discrete {
        if c != r {
            return Err(format!(
                "draw {n}: {what} differs: core {c}, reference {r}\n core {core:?}\n  ref {reference:?}"
            ));
        }
    }
    let e = max_coordinate_error(core_position, reference_position.as_slice());
    report.worst_position = report.worst_position.max(e);
    if e > TOL {
        return Err(format!(
            "draw {n}: positions differ by {e:e}\n core {core_position:?}\n  ref {:?}\n core {core:?}\n  ref {reference:?}",
            reference_position.as_slice()
        ));
    }
    let statistics = [
        (
            "acceptance statistic",
            core.acceptance_statistic,
            reference.acceptance_statistic,
        ),
        ("energy error", core.energy_error, reference.energy_error),
        ("energy", core.energy, reference.energy),
        ("step size", core.step_size, reference.step_size),
    ];
    for (what, c, r) in statistics {
        let e = coordinate_error(c, r);
        report.worst_statistic = report.worst_statistic.max(e);
        if e > TOL {
            return Err(format!(
                "draw {n}: {what} differs by {e:e}: core {c}, reference {r}"
            ));
        }
    }
    report.draws += 1;
    report.divergent += core.divergent as usize;
    report.saturated += core.reached_max_depth as usize;
    report.moved += core.moved as usize;
    report.leapfrog_steps += core.leapfrog_steps as u64;
    report.unevaluated += (core.leapfrog_steps != core.gradient_evaluations) as usize;
    report.depths[core.tree_depth as usize] += 1;
    Ok(())
}

/// The reference's metric: (M⁻¹, F).
type DenseMetricPair = (DMatrix<f64>, DMatrix<f64>);

/// Runs the core with `metric` and the reference with (M⁻¹, F) side by side.
fn nuts_chain<P, K, const D: usize>(
    target: &P,
    settings: NutsSettings<f64>,
    metric: K,
    reference_metric: DenseMetricPair,
    x0: [f64; D],
    seed: u64,
) -> Result<Report, String>
where
    P: Potential<f64, D> + DenseTarget,
    K: Metric<f64, D>,
{
    nuts_chain_variant(
        target,
        settings,
        metric,
        reference_metric,
        x0,
        seed,
        false,
        |_| {},
    )
}

/// [`nuts_chain`] with the reference moved to the core's state (θ, U, ∇U)
/// after every compared draw: each transition from the same state must agree,
/// but rounding differences do not compound over draws. For targets whose
/// curvature amplifies them (the banana: 10⁻¹⁶ grows to 10⁻¹⁰ within 100–150
/// draws on some streams, then shrinks again).
fn nuts_chain_per_transition<P, K, const D: usize>(
    target: &P,
    settings: NutsSettings<f64>,
    metric: K,
    reference_metric: DenseMetricPair,
    x0: [f64; D],
    seed: u64,
) -> Result<Report, String>
where
    P: Potential<f64, D> + DenseTarget,
    K: Metric<f64, D>,
{
    nuts_chain_variant(
        target,
        settings,
        metric,
        reference_metric,
        x0,
        seed,
        true,
        |_| {},
    )
}

/// [`nuts_chain`] with the reference changed by `tweak` (negative controls),
/// and moved to the core's state after every draw when `resynchronise`.
#[allow(clippy::too_many_arguments)]
fn nuts_chain_variant<P, K, const D: usize>(
    target: &P,
    settings: NutsSettings<f64>,
    metric: K,
    reference_metric: DenseMetricPair,
    x0: [f64; D],
    seed: u64,
    resynchronise: bool,
    tweak: impl FnOnce(&mut DenseNuts),
) -> Result<Report, String>
where
    P: Potential<f64, D> + DenseTarget,
    K: Metric<f64, D>,
{
    let mut core =
        Nuts::<f64, D, K>::new(settings, metric, x0, target).map_err(|e| e.to_string())?;
    let (inverse, factor) = reference_metric;
    let mut reference = DenseNuts::general(
        settings.step_size,
        settings.max_tree_depth,
        inverse,
        factor,
        dvec(&x0),
        target,
    );
    reference.max_energy_error = settings.max_energy_error;
    tweak(&mut reference);
    let (mut rc, mut rr) = (rng(seed), rng(seed));
    let mut report = Report::default();
    for n in 1..=STEPS {
        let c = core.step(target, &mut rc);
        let r = reference.step(target, &mut rr);
        compare_draw(n, core.position(), &c, &reference.position, &r, &mut report)?;
        if resynchronise {
            reference.position = dvec(core.position());
            reference.gradient = dvec(core.gradient());
            reference.potential = core.potential();
        }
    }
    Ok(report)
}

// ---------------------------------------------------------------------------
// Metrics: the core's and the reference's from the same numbers.

/// A data generator (not a sampler stream).
fn data_rng(seed: u64) -> XorShiftRng {
    XorShiftRng::seed_from_u64(seed ^ 0xd47a_5eed)
}

/// A random symmetric positive definite matrix Q diag(λ) Qᵀ with eigenvalues
/// spread over [lo, hi] and a random orthogonal Q.
fn random_spd(d: usize, lo: f64, hi: f64, seed: u64) -> DMatrix<f64> {
    let mut r = data_rng(seed);
    let g = DMatrix::from_fn(d, d, |_, _| standard_normal::<f64, _>(&mut r));
    let q = g.qr().q();
    let lambda = DVector::from_fn(d, |i, _| {
        lo * (hi / lo).powf(i as f64 / (d as f64 - 1.0).max(1.0))
    });
    let m = &q * DMatrix::from_diagonal(&lambda) * q.transpose();
    (&m + m.transpose()) * 0.5
}

fn to_array<const D: usize>(m: &DMatrix<f64>) -> [[f64; D]; D] {
    std::array::from_fn(|i| std::array::from_fn(|j| m[(i, j)]))
}

fn diagonal<const D: usize>(variances: [f64; D]) -> (DiagonalMetric<f64, D>, DenseMetricPair) {
    (
        DiagonalMetric::new(&variances).expect("valid variances"),
        diagonal_metric(&variances),
    )
}

fn dense<const D: usize>(covariance: &DMatrix<f64>) -> (DenseMetric<f64, D>, DenseMetricPair) {
    (
        DenseMetric::new(&to_array::<D>(covariance)).expect("valid covariance"),
        dense_metric(covariance),
    )
}

/// Pairs (s, y = A s) of the quadratic ½ θᵀAθ along random directions.
fn quadratic_pairs(a: &DMatrix<f64>, count: usize, seed: u64) -> Vec<(DVector<f64>, DVector<f64>)> {
    let mut r = data_rng(seed);
    (0..count)
        .map(|_| {
            let s = DVector::from_fn(a.nrows(), |_, _| standard_normal::<f64, _>(&mut r));
            let y = a * &s;
            (s, y)
        })
        .collect()
}

fn lbfgs<const D: usize, const M: usize>(
    base: [f64; D],
    pairs: &[(DVector<f64>, DVector<f64>)],
) -> (LbfgsMetric<f64, D, M>, DenseMetricPair) {
    let mut memory = LbfgsMemory::<f64, D, M>::new(LbfgsSettings::with_max_pairs(M)).unwrap();
    for (s, y) in pairs {
        let s: [f64; D] = std::array::from_fn(|i| s[i]);
        let y: [f64; D] = std::array::from_fn(|i| y[i]);
        assert!(
            memory.try_push(&s, &y),
            "an exact pair of an SPD quadratic is admitted"
        );
    }
    // Rank tolerance 0: every direction kept, H is the full BFGS matrix.
    let metric = LbfgsMetric::new(&base, &memory, 0.0).expect("valid base");
    assert_eq!(metric.pairs_skipped(), 0);
    (metric, lbfgs_metric(&base, pairs))
}

// ---------------------------------------------------------------------------
// Targets.

fn gaussian() -> CorrelatedGaussian {
    // Σ = 2·11ᵀ + I in D = 5 (condition number 11), off-centre.
    CorrelatedGaussian::new(&[1.0, -1.0, 0.5, 0.0, 2.0], 2.0, 1.0)
}

fn gaussian_covariance() -> DMatrix<f64> {
    DMatrix::from_fn(5, 5, |i, j| 2.0 + if i == j { 1.0 } else { 0.0 })
}

const GAUSSIAN_X0: [f64; 5] = [3.0, 2.0, -2.0, 1.0, 0.0];

fn logistic() -> LogisticRegression {
    LogisticRegression::synthetic(6, 80, 7)
}

const LOGISTIC_X0: [f64; 6] = [0.5, -0.5, 0.2, 0.0, 1.0, -1.0];

fn banana() -> Banana {
    Banana::new(4, 2.0, 0.6)
}

const BANANA_X0: [f64; 4] = [0.3, -0.2, 0.1, 0.4];

/// U = Σᵢ (xᵢ⁴/4 + xᵢ²/2) (D = 4): the curvature 3x² + 1 grows without
/// bound, so a fixed ε is stable in the bulk and unstable in the tails, where
/// the leapfrog's energy error explodes (divergences at Stan's threshold).
#[derive(Debug, Clone, Copy)]
struct Quartic;

impl DenseTarget for Quartic {
    fn dim(&self) -> usize {
        4
    }
    fn eval(&self, x: &[f64], g: &mut [f64]) -> f64 {
        let mut u = 0.0;
        for (gi, xi) in g.iter_mut().zip(x) {
            *gi = xi * xi * xi + xi;
            u += 0.25 * xi * xi * xi * xi + 0.5 * xi * xi;
        }
        u
    }
}

impl Potential<f64, 4> for Quartic {
    fn potential_and_gradient(&self, x: &[f64; 4], g: &mut [f64; 4]) -> f64 {
        self.eval(x, g)
    }
}

// ---------------------------------------------------------------------------
// Cases.

/// Checks a finished run and prints its summary.
fn finish(label: &str, run: Result<Report, String>) -> Report {
    let report = run.unwrap_or_else(|e| panic!("NUTS {label}: {e}"));
    assert_eq!(report.draws, STEPS, "{label}");
    assert!(
        report.moved > STEPS / 2,
        "{label}: the chain hardly moved: {report:?}"
    );
    eprintln!(
        "NUTS {label}: worst position {:.1e}, worst statistic {:.1e}, {} divergent, {} at max depth, \
         {:.1} leapfrog steps per draw, depths {:?}",
        report.worst_position,
        report.worst_statistic,
        report.divergent,
        report.saturated,
        report.leapfrog_steps as f64 / STEPS as f64,
        report.depths
    );
    report
}

fn settings(step_size: f64) -> NutsSettings<f64> {
    NutsSettings::new(step_size)
}

#[test]
fn gaussian_all_metrics_match_dense_reference() {
    let g = gaussian();
    let sigma = gaussian_covariance();
    let x0 = GAUSSIAN_X0;
    let mut worst = 0.0f64;

    let r = nuts_chain(
        &g,
        settings(0.35),
        IdentityMetric,
        identity_metric(5),
        x0,
        1,
    );
    worst = worst.max(finish("gaussian, identity", r).worst_position);

    let (m, d) = diagonal([3.0, 2.5, 3.5, 3.0, 2.0]);
    let r = nuts_chain(&g, settings(0.5), m, d, x0, 2);
    worst = worst.max(finish("gaussian, diagonal", r).worst_position);

    // The true Σ, perturbed so that the metric is not exact.
    let cov = &sigma + random_spd(5, 0.1, 1.0, 3);
    let (m, d) = dense::<5>(&cov);
    let r = nuts_chain(&g, settings(0.7), m, d, x0, 3);
    worst = worst.max(finish("gaussian, dense", r).worst_position);

    // Three exact pairs of the target's own quadratic on a diagonal base.
    let pairs = quadratic_pairs(&g.precision(), 3, 4);
    let (m, d) = lbfgs::<5, 4>([1.5, 1.0, 2.0, 0.8, 1.2], &pairs);
    let r = nuts_chain(&g, settings(0.6), m, d, x0, 4);
    worst = worst.max(finish("gaussian, L-BFGS (3 pairs)", r).worst_position);

    eprintln!("gaussian: worst position error {worst:e}");
}

#[test]
fn logistic_all_metrics_match_dense_reference() {
    let l = logistic();
    let x0 = LOGISTIC_X0;
    let mut worst = 0.0f64;

    let r = nuts_chain(
        &l,
        settings(0.15),
        IdentityMetric,
        identity_metric(6),
        x0,
        11,
    );
    worst = worst.max(finish("logistic, identity", r).worst_position);

    let (m, d) = diagonal([0.1, 0.06, 0.08, 0.05, 0.1, 0.07]);
    let r = nuts_chain(&l, settings(0.5), m, d, x0, 12);
    worst = worst.max(finish("logistic, diagonal", r).worst_position);

    let cov = random_spd(6, 0.02, 0.15, 13);
    let (m, d) = dense::<6>(&cov);
    let r = nuts_chain(&l, settings(0.5), m, d, x0, 13);
    worst = worst.max(finish("logistic, dense", r).worst_position);

    // Four exact pairs of a quadratic with a Hessian of the posterior's scale.
    let a = random_spd(6, 6.0, 25.0, 14);
    let pairs = quadratic_pairs(&a, 4, 14);
    let (m, d) = lbfgs::<6, 5>([0.08; 6], &pairs);
    let r = nuts_chain(&l, settings(0.5), m, d, x0, 14);
    worst = worst.max(finish("logistic, L-BFGS (4 pairs)", r).worst_position);

    eprintln!("logistic: worst position error {worst:e}");
}

#[test]
fn banana_dense_metric_matches_dense_reference() {
    let b = banana();
    let cov = DMatrix::from_diagonal(&DVector::from_column_slice(&[2.0, 1.5, 2.0, 1.5]))
        + random_spd(4, 0.05, 0.3, 21);
    let (m, d) = dense::<4>(&cov);
    let r = nuts_chain_per_transition(&b, settings(0.4), m, d, BANANA_X0, 21);
    let report = finish("banana, dense, per transition", r);
    // The twist's curvature grows with |θ₀|: a few trees diverge in the tails.
    assert!(report.divergent > 0, "{report:?}");
}

/// max_tree_depth = 4: at ε = 0.1 a U-turn on the Gaussian takes ≈ π√11/0.1 ≈
/// 100 leapfrog steps, more than 2⁴ − 1 = 15, so most trees saturate.
#[test]
fn saturated_trees_match_dense_reference() {
    let g = gaussian();
    let mut s = settings(0.1);
    s.max_tree_depth = 4;
    let r = nuts_chain(&g, s, IdentityMetric, identity_metric(5), GAUSSIAN_X0, 31);
    let report = finish("gaussian, identity, max depth 4", r);
    assert!(report.saturated > STEPS / 2, "{report:?}");
    assert!(report.depths[5..].iter().all(|&n| n == 0));

    // And with the L-BFGS metric, where some trees still turn before depth 4.
    let g = gaussian();
    let pairs = quadratic_pairs(&g.precision(), 2, 32);
    let (m, d) = lbfgs::<5, 4>([1.0; 5], &pairs);
    let mut s = settings(0.3);
    s.max_tree_depth = 4;
    let r = nuts_chain(&g, s, m, d, GAUSSIAN_X0, 32);
    let report = finish("gaussian, L-BFGS, max depth 4", r);
    assert!(
        report.saturated > 0 && report.saturated < STEPS,
        "{report:?}"
    );
}

/// Divergences at Stan's threshold: on the quartic, ε = 0.8 is stable in the
/// bulk and unstable in the tails, so some trees end at a leaf whose energy
/// error exceeds 1000 (or is not finite), and the chain still moves. With an
/// absurd ε = 10³⁰⁸ from the Gaussian's mode every first leaf diverges, some
/// because the drift overflows θ (then the target is not evaluated: leapfrog
/// steps ≠ gradient evaluations), the others because U(θ) overflows.
#[test]
fn divergent_transitions_match_dense_reference() {
    let r = nuts_chain(
        &Quartic,
        settings(0.8),
        IdentityMetric,
        identity_metric(4),
        [0.5; 4],
        41,
    );
    let report = finish("quartic, identity, ε = 0.8", r);
    assert!(
        report.divergent > 5 && report.divergent < STEPS / 5,
        "{report:?}"
    );

    let g = gaussian();
    let r = nuts_chain(
        &g,
        settings(1e308),
        IdentityMetric,
        identity_metric(5),
        // At the mode ∇U = 0, so θ = μ + εz overflows iff some |zᵢ| > 1.8.
        [1.0, -1.0, 0.5, 0.0, 2.0],
        42,
    );
    let report = r.unwrap_or_else(|e| panic!("NUTS gaussian, ε = 1e308: {e}"));
    eprintln!("NUTS gaussian, ε = 1e308: {report:?}");
    assert_eq!(report.draws, STEPS);
    assert_eq!(report.divergent, STEPS);
    assert_eq!(report.moved, 0);
    assert!(
        report.unevaluated > 0 && report.unevaluated < STEPS,
        "{report:?}"
    );
}

/// max_energy_error = 1.5: divergences with a finite energy error, whose
/// exp(−ΔH) still enters the acceptance statistic, happen in most draws.
#[test]
fn small_energy_threshold_matches_dense_reference() {
    let g = gaussian();
    let cov = gaussian_covariance();
    let (m, d) = dense::<5>(&cov);
    let mut s = settings(1.2);
    s.max_energy_error = 1.5;
    let r = nuts_chain(&g, s, m, d, GAUSSIAN_X0, 51);
    let report = finish("gaussian, dense, max energy error 1.5", r);
    assert!(
        report.divergent > 20 && report.divergent < STEPS,
        "{report:?}"
    );
}

/// A start far in the tails (U ≈ 4 000 above the mode's): the first
/// trajectories fall by hundreds of units of energy, so the core rebases its
/// linear-space multinomial weights (a leaf weight above 2⁶⁴ ≈ e⁴⁴) where the
/// reference sums in log space; the chains must still agree to the last draw.
#[test]
fn a_start_far_in_the_tails_matches_dense_reference() {
    let g = gaussian();
    let cov = gaussian_covariance();
    let x0 = GAUSSIAN_X0.map(|x| 40.0 * x);
    // The first transition falls far: weights relative to H₀ would overflow
    // 2⁶⁴, so this run takes the rebase path.
    let (m, _) = dense::<5>(&cov);
    let mut probe = Nuts::<f64, 5, _>::new(settings(0.5), m, x0, &g).unwrap();
    let first = probe.step(&g, &mut rng(61));
    assert!(first.energy_error < -100.0, "{first:?}");
    let (m, d) = dense::<5>(&cov);
    let r = nuts_chain(&g, settings(0.5), m, d, x0, 61);
    finish("gaussian, dense, start far in the tails", r);
}

// ---------------------------------------------------------------------------
// Negative controls: the comparison can fail.

#[test]
fn a_wrong_reference_is_detected() {
    let g = gaussian();
    let cov = gaussian_covariance();
    // The lower Cholesky factor of M instead of L⁻ᵀ (F Fᵀ = M for both, so
    // both are valid samplers of the same distribution, but not the same
    // chain).
    let (m, (inverse, _)) = dense::<5>(&cov);
    let precision = cov.clone().try_inverse().unwrap();
    let other_factor = precision.cholesky().unwrap().l();
    let r = nuts_chain(
        &g,
        settings(0.7),
        m,
        (inverse, other_factor),
        GAUSSIAN_X0,
        61,
    );
    let e = r.expect_err("another momentum factor was not detected");
    eprintln!("other factor: {e}");

    // Without Stan's two extra checks across the halves of merged trees, or
    // with uniform instead of biased progressive sampling at the top, the
    // chains part: the comparison sees both documented choices.
    let l = logistic();
    for (what, tweak) in [
        (
            "no extra U-turn checks",
            (|r: &mut DenseNuts| r.extra_u_turn_checks = false) as fn(&mut DenseNuts),
        ),
        ("uniform progressive sampling", |r| {
            r.biased_progressive = false
        }),
    ] {
        let e = nuts_chain_variant(
            &l,
            settings(0.15),
            IdentityMetric,
            identity_metric(6),
            LOGISTIC_X0,
            11,
            false,
            tweak,
        )
        .expect_err(what);
        eprintln!("{what}: {}", e.lines().next().unwrap_or(""));
    }

    // A step size off by one part in 10⁸.
    let mut core = Nuts::<f64, 5, _>::new(settings(0.35), IdentityMetric, GAUSSIAN_X0, &g).unwrap();
    let (inverse, factor) = identity_metric(5);
    let mut reference = DenseNuts::general(
        0.35 * (1.0 + 1e-8),
        10,
        inverse,
        factor,
        dvec(&GAUSSIAN_X0),
        &g,
    );
    let (mut rc, mut rr) = (rng(62), rng(62));
    let mut report = Report::default();
    let c = core.step(&g, &mut rc);
    let r = reference.step(&g, &mut rr);
    // Positions are compared before the reported step size: the 1e-8 shows in
    // the trajectory itself.
    let e = compare_draw(1, core.position(), &c, &reference.position, &r, &mut report)
        .expect_err("a step size off by 1e-8 was not detected");
    assert!(e.contains("positions differ"), "{e}");
}
