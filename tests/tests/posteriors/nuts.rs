//! The core's NUTS samples known posteriors, with every metric.
//!
//! 1. N(0, Σ), Σ = 11ᵀ + 4I in D = 20 (every coordinate has variance 5, the
//!    all-ones projection 1ᵀθ/√D has variance 4 + 20 = 24), with the identity,
//!    diagonal (the true variances), dense (the true Σ) and L-BFGS metrics
//!    (a diagonal base of 5 and exact pairs y = Σ⁻¹s along random directions),
//!    and the diagonal metric in f32.
//! 2. A badly scaled diagonal Gaussian, standard deviations 10⁻³, 10⁻², …, 10³
//!    (D = 7), with the diagonal (true variances), dense (true covariance)
//!    and L-BFGS (a base off by factors up to 4 either way, plus exact pairs
//!    y = A s along random directions) metrics. The identity metric is run on
//!    case 1 only: with a 10⁶ spread of scales a stable ε (≲ 10⁻³) needs ~10⁶
//!    leapfrog steps per independent draw of the widest coordinate, more than
//!    the 2¹⁰ − 1 a tree allows.
//! 3. Negative controls: a metric whose momentum is drawn 25 % too wide for
//!    its kinetic energy (a wrong kinetic energy: the chain is not π-invariant)
//!    must fail, and the correct draws must fail against variances 10 % off.
//!
//! **Thresholds.** For each scalar f (a coordinate, its squared deviation from
//! the known mean, the projection and its square) the estimate is the pooled
//! mean over 4 chains of the post-warm-up draws and MCSE = sd(f)/√ESS, the
//! ESS from `qnmc_host::diagnostics` (bulk ESS for means, basic split-chain ESS
//! for the squared deviations: see `posteriors/hmc.rs`), through the
//! shared `qnmc_tests::amagold::checks`. z = (estimate − truth)/MCSE is
//! ≈ N(0, s²) with s ≤ 1.15 for a correct sampler (the spread measured on
//! replicate runs in `posteriors/hmc.rs`); a family of n z's passes when
//! every |z| is below the Bonferroni limit 1.15·Φ⁻¹(1 − 0.005/(2n)) (≈ 4.4
//! for n = 42), a false alarm probability ≤ 0.5 % per family whatever the
//! correlation between the z's. Seeds are fixed, so every run is the same.
//!
//! The step size is jittered by ±10 % per draw from a generator of its own
//! (a mixture of exact kernels, still exact), so that no direction sits at an
//! exact resonance of ε.

use nalgebra::{DMatrix, DVector};
use qnmc::lbfgs::{LbfgsMemory, LbfgsSettings};
use qnmc::metric::{DenseMetric, DiagonalMetric, IdentityMetric, LbfgsMetric, Metric};
use qnmc::random::standard_normal;
use qnmc::{Nuts, NutsSettings, Potential, Real};
use qnmc_host::targets::CorrelatedGaussian;
use qnmc_tests::amagold::checks::{Ess, Z, check_family, family_fails, series, z_known};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

const CHAINS: usize = 4;
const WARMUP: usize = 200;
const DRAWS: usize = 2000;
/// ε of each draw is ε₀·(1 + JITTER·(2u − 1)).
const JITTER: f64 = 0.1;

/// Post-warm-up draws of the chains, as f64, and what the sampler reported.
struct Run<const D: usize> {
    chains: Vec<Vec<[f64; D]>>,
    acceptance: f64,
    divergent: usize,
    leapfrog_per_draw: f64,
}

/// Runs `CHAINS` chains of the core NUTS with `metric`, from `starts`.
fn run_chains<T, K, P, const D: usize>(
    target: &P,
    metric: &K,
    step_size: f64,
    starts: &[[f64; D]],
    seed: u64,
) -> Run<D>
where
    T: Real,
    K: Metric<T, D> + Clone,
    P: Potential<T, D>,
{
    let mut chains = Vec::with_capacity(CHAINS);
    let (mut acceptance, mut divergent, mut leapfrog) = (0.0, 0, 0u64);
    for (c, start) in starts.iter().enumerate() {
        let x0 = start.map(T::from_f64);
        let settings = NutsSettings::new(T::from_f64(step_size));
        let mut nuts = Nuts::<T, D, K>::new(settings, metric.clone(), x0, target).unwrap();
        let mut rng = XorShiftRng::seed_from_u64(seed + c as u64);
        let mut jitter = XorShiftRng::seed_from_u64(!(seed + c as u64));
        let mut draws = Vec::with_capacity(DRAWS);
        for n in 0..WARMUP + DRAWS {
            let u = f64::uniform_open_closed(&mut jitter);
            let eps = step_size * (1.0 + JITTER * (2.0 * u - 1.0));
            nuts.set_step_size(T::from_f64(eps)).unwrap();
            let stats = nuts.step(target, &mut rng);
            if n >= WARMUP {
                acceptance += stats.acceptance_statistic.to_f64();
                divergent += stats.divergent as usize;
                leapfrog += stats.leapfrog_steps as u64;
                draws.push(nuts.position().map(|x| x.to_f64()));
            }
        }
        chains.push(draws);
    }
    let total = (starts.len() * DRAWS) as f64;
    Run {
        chains,
        acceptance: acceptance / total,
        divergent,
        leapfrog_per_draw: leapfrog as f64 / total,
    }
}

/// Mean and variance z's of every coordinate against N(0, diag(`variances`)),
/// plus those of the projection onto `direction` (unit length) with variance
/// `direction_variance`.
fn gaussian_family<const D: usize>(
    chains: &[Vec<[f64; D]>],
    variances: &[f64; D],
    direction: Option<(&[f64; D], f64)>,
) -> Vec<Z> {
    let mut zs = Vec::new();
    for i in 0..D {
        zs.push(z_known(
            &format!("mean θ{i}"),
            &series(chains, |x| x[i]),
            0.0,
            Ess::Bulk,
        ));
        zs.push(z_known(
            &format!("var θ{i}"),
            &series(chains, |x| x[i] * x[i]),
            variances[i],
            Ess::BasicSplit,
        ));
    }
    if let Some((u, var)) = direction {
        let project = |x: &[f64; D]| x.iter().zip(u).map(|(a, b)| a * b).sum::<f64>();
        zs.push(z_known(
            "mean uᵀθ",
            &series(chains, project),
            0.0,
            Ess::Bulk,
        ));
        zs.push(z_known(
            "var uᵀθ",
            &series(chains, |x| project(x).powi(2)),
            var,
            Ess::BasicSplit,
        ));
    }
    zs
}

/// Checks a family and prints the run's summary.
fn check<const D: usize>(name: &str, run: &Run<D>, zs: &[Z]) {
    println!(
        "{name}: acceptance {:.3}, {} divergent, {:.1} leapfrog steps per draw",
        run.acceptance, run.divergent, run.leapfrog_per_draw
    );
    assert_eq!(run.divergent, 0, "{name}: divergences on a Gaussian");
    check_family(name, zs);
}

/// Pairs (s, y = A s) of the quadratic ½ θᵀAθ along random directions
/// diag(`scale`)·z.
fn quadratic_pairs<const D: usize>(
    a: &DMatrix<f64>,
    scale: &[f64; D],
    count: usize,
    seed: u64,
) -> Vec<([f64; D], [f64; D])> {
    let mut r = XorShiftRng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let s = DVector::from_fn(D, |i, _| scale[i] * standard_normal::<f64, _>(&mut r));
            let y = a * &s;
            (std::array::from_fn(|i| s[i]), std::array::from_fn(|i| y[i]))
        })
        .collect()
}

/// The core's L-BFGS metric on the base diag(`base`) with the given pairs
/// (every pair admitted, no direction dropped).
fn lbfgs_metric<T: Real, const D: usize, const M: usize>(
    base: &[f64; D],
    pairs: &[([f64; D], [f64; D])],
) -> LbfgsMetric<T, D, M> {
    let mut memory = LbfgsMemory::<T, D, M>::new(LbfgsSettings::with_max_pairs(M)).unwrap();
    for (s, y) in pairs {
        assert!(memory.try_push(&s.map(T::from_f64), &y.map(T::from_f64)));
    }
    LbfgsMetric::new(&base.map(T::from_f64), &memory, T::ZERO).unwrap()
}

// ---------------------------------------------------------------------------
// 1. N(0, 11ᵀ + 4I), D = 20.

const PAPER_D: usize = 20;

fn paper_covariance() -> DMatrix<f64> {
    DMatrix::from_fn(PAPER_D, PAPER_D, |i, j| {
        1.0 + if i == j { 4.0 } else { 0.0 }
    })
}

/// Overdispersed starts: 1.5 × exact draws of N(0, Σ).
fn paper_starts(seed: u64) -> Vec<[f64; PAPER_D]> {
    let mut r = XorShiftRng::seed_from_u64(seed);
    (0..CHAINS)
        .map(|_| {
            let shared: f64 = standard_normal(&mut r);
            std::array::from_fn(|_| 1.5 * (2.0 * standard_normal::<f64, _>(&mut r) + shared))
        })
        .collect()
}

const PAPER_VARIANCES: [f64; PAPER_D] = [5.0; PAPER_D];

fn ones_direction() -> [f64; PAPER_D] {
    [1.0 / (PAPER_D as f64).sqrt(); PAPER_D]
}

fn paper_family(chains: &[Vec<[f64; PAPER_D]>], variances: &[f64; PAPER_D]) -> Vec<Z> {
    let u = ones_direction();
    // Var(uᵀθ) = 4 + 20·1 (= 24 with the true variances; scaled with them in
    // the negative control).
    let along = 24.0 * variances[0] / PAPER_VARIANCES[0];
    gaussian_family(chains, variances, Some((&u, along)))
}

#[test]
fn paper_gaussian_identity_metric() {
    let target = CorrelatedGaussian::<PAPER_D>::paper();
    let run =
        run_chains::<f64, _, _, PAPER_D>(&target, &IdentityMetric, 1.0, &paper_starts(1), 100);
    let zs = paper_family(&run.chains, &PAPER_VARIANCES);
    check("N(0, 11ᵀ + 4I), identity", &run, &zs);
    // Power: the same draws against variances 10 % too large fail.
    assert!(family_fails(&paper_family(
        &run.chains,
        &PAPER_VARIANCES.map(|v| 1.1 * v)
    )));
}

#[test]
fn paper_gaussian_diagonal_metric_f64_and_f32() {
    let target = CorrelatedGaussian::<PAPER_D>::paper();
    let metric = DiagonalMetric::<f64, PAPER_D>::new(&PAPER_VARIANCES).unwrap();
    let run = run_chains::<f64, _, _, PAPER_D>(&target, &metric, 0.45, &paper_starts(2), 200);
    check(
        "N(0, 11ᵀ + 4I), diagonal",
        &run,
        &paper_family(&run.chains, &PAPER_VARIANCES),
    );

    let metric = DiagonalMetric::<f32, PAPER_D>::new(&PAPER_VARIANCES.map(|v| v as f32)).unwrap();
    let run = run_chains::<f32, _, _, PAPER_D>(&target, &metric, 0.45, &paper_starts(3), 300);
    check(
        "N(0, 11ᵀ + 4I), diagonal, f32",
        &run,
        &paper_family(&run.chains, &PAPER_VARIANCES),
    );
}

#[test]
fn paper_gaussian_dense_metric() {
    let target = CorrelatedGaussian::<PAPER_D>::paper();
    let sigma = paper_covariance();
    let cov: [[f64; PAPER_D]; PAPER_D] =
        std::array::from_fn(|i| std::array::from_fn(|j| sigma[(i, j)]));
    let metric = DenseMetric::<f64, PAPER_D>::new(&cov).unwrap();
    let run = run_chains::<f64, _, _, PAPER_D>(&target, &metric, 0.8, &paper_starts(4), 400);
    check(
        "N(0, 11ᵀ + 4I), dense",
        &run,
        &paper_family(&run.chains, &PAPER_VARIANCES),
    );
}

#[test]
fn paper_gaussian_lbfgs_metric() {
    let target = CorrelatedGaussian::<PAPER_D>::paper();
    let precision = paper_covariance().try_inverse().unwrap();
    let pairs = quadratic_pairs(&precision, &[1.0; PAPER_D], 5, 5);
    let metric = lbfgs_metric::<f64, PAPER_D, 5>(&[5.0; PAPER_D], &pairs);
    let run = run_chains::<f64, _, _, PAPER_D>(&target, &metric, 0.6, &paper_starts(5), 500);
    check(
        "N(0, 11ᵀ + 4I), L-BFGS (5 pairs)",
        &run,
        &paper_family(&run.chains, &PAPER_VARIANCES),
    );
}

// ---------------------------------------------------------------------------
// 2. sds 10⁻³ … 10³.

const SCALED_D: usize = 7;
const SDS: [f64; SCALED_D] = [1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3];

/// N(0, diag(SDS²)).
struct BadlyScaled;

impl<T: Real> Potential<T, SCALED_D> for BadlyScaled {
    fn potential_and_gradient(&self, x: &[T; SCALED_D], g: &mut [T; SCALED_D]) -> T {
        let mut u = T::ZERO;
        for i in 0..SCALED_D {
            let precision = T::from_f64(1.0 / (SDS[i] * SDS[i]));
            g[i] = precision * x[i];
            u += T::HALF * x[i] * g[i];
        }
        u
    }
}

fn scaled_variances() -> [f64; SCALED_D] {
    SDS.map(|s| s * s)
}

fn scaled_starts(seed: u64) -> Vec<[f64; SCALED_D]> {
    let mut r = XorShiftRng::seed_from_u64(seed);
    (0..CHAINS)
        .map(|_| std::array::from_fn(|i| 1.5 * SDS[i] * standard_normal::<f64, _>(&mut r)))
        .collect()
}

fn scaled_family(chains: &[Vec<[f64; SCALED_D]>]) -> Vec<Z> {
    gaussian_family(chains, &scaled_variances(), None)
}

#[test]
fn badly_scaled_diagonal_and_dense_metrics() {
    let variances = scaled_variances();
    let metric = DiagonalMetric::<f64, SCALED_D>::new(&variances).unwrap();
    let run = run_chains::<f64, _, _, SCALED_D>(&BadlyScaled, &metric, 0.8, &scaled_starts(6), 600);
    check(
        "sds 1e-3 … 1e3, diagonal",
        &run,
        &scaled_family(&run.chains),
    );

    let cov: [[f64; SCALED_D]; SCALED_D] =
        std::array::from_fn(|i| std::array::from_fn(|j| if i == j { variances[i] } else { 0.0 }));
    let metric = DenseMetric::<f64, SCALED_D>::new(&cov).unwrap();
    let run = run_chains::<f64, _, _, SCALED_D>(&BadlyScaled, &metric, 0.8, &scaled_starts(7), 700);
    check("sds 1e-3 … 1e3, dense", &run, &scaled_family(&run.chains));
}

#[test]
fn badly_scaled_lbfgs_metric() {
    // A base off by factors in [1/4, 4], corrected along 4 random directions.
    let mut r = XorShiftRng::seed_from_u64(8);
    let base: [f64; SCALED_D] = std::array::from_fn(|i| {
        let u = f64::uniform_open_closed(&mut r);
        SDS[i] * SDS[i] * 4f64.powf(2.0 * u - 1.0)
    });
    let precision = DMatrix::from_diagonal(&DVector::from_iterator(
        SCALED_D,
        SDS.iter().map(|s| 1.0 / (s * s)),
    ));
    let pairs = quadratic_pairs(&precision, &SDS, 4, 9);
    let metric = lbfgs_metric::<f64, SCALED_D, 4>(&base, &pairs);
    let run =
        run_chains::<f64, _, _, SCALED_D>(&BadlyScaled, &metric, 0.5, &scaled_starts(10), 800);
    check(
        "sds 1e-3 … 1e3, L-BFGS (4 pairs)",
        &run,
        &scaled_family(&run.chains),
    );
}

// ---------------------------------------------------------------------------
// 3. Negative control.

/// The diagonal metric with momenta drawn `WIDTH` times too wide: p = WIDTH·z/σ
/// while the kinetic energy and velocity stay those of M⁻¹ = diag(σ²). The
/// trajectories then run at too high an energy and the draws are too spread.
#[derive(Debug, Clone)]
struct TooWideMomentum<const D: usize>(DiagonalMetric<f64, D>);

const WIDTH: f64 = 1.25;

impl<const D: usize> Metric<f64, D> for TooWideMomentum<D> {
    fn momentum_from_normals(&self, z: &[f64; D], p: &mut [f64; D]) {
        self.0.momentum_from_normals(z, p);
        for v in p.iter_mut() {
            *v *= WIDTH;
        }
    }
    fn velocity(&self, p: &[f64; D], v: &mut [f64; D]) {
        self.0.velocity(p, v)
    }
}

#[test]
fn a_wrong_kinetic_energy_fails() {
    let target = CorrelatedGaussian::<PAPER_D>::paper();
    let metric = TooWideMomentum(DiagonalMetric::<f64, PAPER_D>::new(&PAPER_VARIANCES).unwrap());
    let run = run_chains::<f64, _, _, PAPER_D>(&target, &metric, 0.45, &paper_starts(11), 1100);
    let zs = paper_family(&run.chains, &PAPER_VARIANCES);
    let worst = zs.iter().map(|z| z.z.abs()).fold(0.0, f64::max);
    println!("too-wide momentum: max |z| {worst:.1}");
    assert!(
        family_fails(&zs),
        "the wrong sampler passed: max |z| {worst:.2}"
    );
}
