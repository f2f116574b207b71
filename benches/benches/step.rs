//! Criterion benches of one sampler step and of the L-BFGS kernels.
//!
//! Run: `cargo bench -p qnmc-benches --bench step`. The target is the cheapest
//! possible (isotropic Gaussian, U = ½‖θ‖², O(D) per gradient), so the numbers
//! measure the samplers' own cost, which should grow linearly in D.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use qnmc::adaptation::{
    AcceptanceStatistic, AdaptiveNuts, DEFAULT_RANK_TOLERANCE, LbfgsEstimator, WarmupSchedule,
};
use qnmc::kernels::{dot, dot_wide};
use qnmc::lbfgs::{LbfgsMemory, LbfgsSettings};
use qnmc::metric::{DiagonalMetric, LbfgsMetric, Metric};
use qnmc::random::{fill_standard_normal, fill_standard_normal_ziggurat, standard_normal};
use qnmc::{
    FullBatch, Hamcmc, HamcmcSettings, Hmc, HmcSettings, Nuts, NutsSettings, Potential, Qnhmc,
    QnhmcSettings, StepSizeSchedule,
};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;
use std::hint::black_box;
use std::time::Duration;

/// U(θ) = ½ Σ dᵢ θᵢ² with dᵢ spread over [1, 10]: cheap but not isotropic, so
/// the L-BFGS pairs carry information.
#[derive(Clone, Copy)]
struct CheapGaussian;

impl<const D: usize> Potential<f64, D> for CheapGaussian {
    fn potential_and_gradient(&self, x: &[f64; D], g: &mut [f64; D]) -> f64 {
        let mut u = 0.0;
        for i in 0..D {
            let d = 1.0 + 9.0 * (i as f64) / (D as f64);
            g[i] = d * x[i];
            u += x[i] * g[i];
        }
        0.5 * u
    }
}

/// N(0, 11ᵀ + 4I), the 100-D Gaussian of the side-by-side benchmark
/// (qnmc-compare's `gaussian`): Σ⁻¹ = (I − 11ᵀ/(4 + D))/4, so U and ∇U cost
/// O(D) like [`CheapGaussian`].
#[derive(Clone, Copy)]
struct CorrelatedGaussian;

impl<const D: usize> Potential<f64, D> for CorrelatedGaussian {
    fn potential_and_gradient(&self, x: &[f64; D], g: &mut [f64; D]) -> f64 {
        let sum: f64 = x.iter().sum();
        let shift = sum / (4.0 + D as f64);
        let mut u = 0.0;
        for i in 0..D {
            g[i] = 0.25 * (x[i] - shift);
            u += x[i] * g[i];
        }
        0.5 * u
    }
}

const LEAPFROG_STEPS: u32 = 5;

fn bench_qnhmc<const D: usize, const M: usize>(c: &mut Criterion) {
    let mut group = c.benchmark_group(format!("qnhmc_step/M={M}"));
    let mut rng = XorShiftRng::seed_from_u64(1);
    let settings = QnhmcSettings::new(0.2, LEAPFROG_STEPS, M);
    let mut sampler =
        Box::new(Qnhmc::<f64, D, M>::new(settings, [0.5; D], &CheapGaussian).unwrap());
    // Fill the memory first so the step pays for a full ring.
    for _ in 0..50 {
        sampler.step(&CheapGaussian, &mut rng);
    }
    group.bench_with_input(BenchmarkId::from_parameter(D), &D, |b, _| {
        b.iter(|| black_box(sampler.step(&CheapGaussian, &mut rng)))
    });
    group.finish();
}

/// One HMC draw (M = I, L = `LEAPFROG_STEPS`): the shared leapfrog
/// integrator at a fixed length, against the target's gradient alone.
fn bench_hmc<const D: usize>(c: &mut Criterion) {
    let mut group = c.benchmark_group(format!("hmc_step/D={D}"));
    let mut rng = XorShiftRng::seed_from_u64(7);
    let settings = HmcSettings::new(0.2, LEAPFROG_STEPS);
    let mut sampler = Box::new(Hmc::<f64, D>::new(settings, [0.5; D], &CheapGaussian).unwrap());
    group.bench_function("gradient", |b| {
        let x = [0.3; D];
        let mut g = [0.0; D];
        b.iter(|| CheapGaussian.potential_and_gradient(black_box(&x), &mut g))
    });
    group.bench_function("identity_metric", |b| {
        b.iter(|| black_box(sampler.step(&CheapGaussian, &mut rng)))
    });
    group.finish();
}

fn bench_hamcmc<const D: usize, const M: usize>(c: &mut Criterion) {
    let mut group = c.benchmark_group(format!("hamcmc_step/M={M}"));
    let mut rng = XorShiftRng::seed_from_u64(2);
    let target = FullBatch(CheapGaussian);
    let settings = HamcmcSettings::new(StepSizeSchedule::Constant(1e-3), 1.0, 0.0);
    let mut sampler = Box::new(Hamcmc::<f64, D, M>::new(settings, [0.5; D]).unwrap());
    for _ in 0..(4 * M) {
        sampler.step(&target, &mut rng).unwrap();
    }
    group.bench_with_input(BenchmarkId::from_parameter(D), &D, |b, _| {
        b.iter(|| black_box(sampler.step(&target, &mut rng).unwrap()))
    });
    group.finish();
}

fn bench_kernels<const D: usize, const M: usize>(c: &mut Criterion) {
    let mut memory =
        Box::new(LbfgsMemory::<f64, D, M>::new(LbfgsSettings::with_max_pairs(M)).unwrap());
    for k in 0..M {
        let mut s = [0.0; D];
        let mut y = [0.0; D];
        for i in 0..D {
            s[i] = ((i * 7 + k * 13) % 11) as f64 - 5.0;
            y[i] = (1.0 + i as f64 / D as f64) * s[i];
        }
        memory.try_push(&s, &y);
    }
    let v = [1.0; D];
    let mut out = [0.0; D];
    let mut group = c.benchmark_group(format!("lbfgs/D={D}/M={M}"));
    group.bench_function("apply_inverse_hessian", |b| {
        b.iter(|| memory.apply_inverse_hessian(black_box(&v), &mut out))
    });
    group.bench_function("apply_sqrt_inverse_hessian", |b| {
        b.iter(|| memory.apply_sqrt_inverse_hessian(black_box(&v), &mut out))
    });
    // A new pair invalidates the factors: this is the rebuild HAMCMC pays once
    // per step (the new pair's Gram row, O(MD), and the factors, O(M³)).
    let (s, y) = {
        let p = memory.pairs().get(0).unwrap();
        (*p.0, *p.1)
    };
    group.bench_function("push_pair_and_refresh_factors", |b| {
        b.iter(|| {
            memory.try_push(black_box(&s), black_box(&y));
            memory.refresh_factors()
        })
    });
    group.finish();
}

/// M exact pairs (s random, y = diag(d) s) of [`CheapGaussian`]'s quadratic.
fn cheap_gaussian_pairs<const D: usize, const M: usize>(seed: u64) -> Box<LbfgsMemory<f64, D, M>> {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let mut memory =
        Box::new(LbfgsMemory::<f64, D, M>::new(LbfgsSettings::with_max_pairs(M)).unwrap());
    for _ in 0..M {
        let mut s = [0.0; D];
        let mut y = [0.0; D];
        for i in 0..D {
            s[i] = standard_normal::<f64, _>(&mut rng);
            y[i] = (1.0 + 9.0 * i as f64 / D as f64) * s[i];
        }
        assert!(memory.try_push(&s, &y));
    }
    memory
}

/// The quasi-Newton metric's v = H p (eigen-form, independent `dot_wide`s)
/// against the two-loop recursion on the same M pairs (base 1, γ = 1: the
/// same H), full rank r = 2M.
fn bench_metric_velocity<const D: usize, const M: usize>(c: &mut Criterion) {
    let memory = cheap_gaussian_pairs::<D, M>(3);
    let mut metric = Box::new(LbfgsMetric::<f64, D, M>::identity());
    metric.rebuild(&[1.0; D], &memory, 0.0).unwrap();
    assert_eq!(metric.rank(), 2 * M, "the bench measures the full rank");
    let p = [1.0; D];
    let mut out = [0.0; D];
    let mut group = c.benchmark_group(format!("metric_velocity/D={D}/M={M}"));
    group.bench_function("lbfgs_metric", |b| {
        b.iter(|| metric.velocity(black_box(&p), &mut out))
    });
    group.bench_function("two_loop", |b| {
        b.iter(|| memory.apply_inverse_hessian(black_box(&p), &mut out))
    });
    group.bench_function("lbfgs_metric_momentum", |b| {
        b.iter(|| metric.momentum_from_normals(black_box(&p), &mut out))
    });
    group.finish();
    let mut group = c.benchmark_group(format!("metric_rebuild/D={D}/M={M}"));
    group.bench_function("rebuild", |b| {
        b.iter(|| metric.rebuild(black_box(&[1.0; D]), &memory, 0.0))
    });
    group.finish();
}

/// Times `leapfrogs` leapfrog steps of `nuts` on `target` (whole draws).
fn per_leapfrog<K: Metric<f64, D>, P: Potential<f64, D>, const D: usize>(
    nuts: &mut Nuts<f64, D, K>,
    target: &P,
    rng: &mut XorShiftRng,
    leapfrogs: u64,
) -> Duration {
    let start = std::time::Instant::now();
    let mut done = 0u64;
    while done < leapfrogs {
        done += u64::from(nuts.step(target, rng).leapfrog_steps);
    }
    // Scale to exactly `leapfrogs` steps (the last draw overshoots).
    start.elapsed().mul_f64(leapfrogs as f64 / done as f64)
}

/// Runs `f` with the AVX2 copies of the kernels forbidden (the `_portable`
/// benches: what a processor without AVX2, or a `no_std` build, runs; the
/// same bits, see `qnmc::kernels`).
fn portable_kernels(f: impl FnOnce()) {
    qnmc::kernels::set_avx2_allowed(false);
    f();
    qnmc::kernels::set_avx2_allowed(true);
}

/// Time per leapfrog step of NUTS (whole transitions: momentum, tree
/// building, U-turn checks, multinomial sampling), reported per leapfrog
/// step: criterion's iteration count is spent in leapfrog steps, not draws.
/// `gradient` is the target alone, so the sampler's overhead per leapfrog is
/// the difference. Metrics: diagonal, and the quasi-Newton metric at full
/// rank 2M (every pair kept, the most expensive case). Each with the kernels
/// this machine runs by default (AVX2 when present) and with the portable
/// ones (`_portable`). D = 6 and 25 show the small-vector side: below
/// `qnmc::kernels::MIN_WIDE_LENGTH` both runs take the portable
/// loops.
fn bench_nuts_leapfrog<const D: usize, const M: usize>(c: &mut Criterion) {
    let mut rng = XorShiftRng::seed_from_u64(5);
    let memory = cheap_gaussian_pairs::<D, M>(5);
    let mut metric = LbfgsMetric::<f64, D, M>::identity();
    metric.rebuild(&[0.5; D], &memory, 0.0).unwrap();
    assert_eq!(metric.rank(), 2 * M, "the bench measures the full rank");
    let start = [0.1; D];
    let settings = NutsSettings::new(0.2);
    let mut lbfgs = Box::new(Nuts::new(settings, metric, start, &CheapGaussian).unwrap());
    let variances: [f64; D] = std::array::from_fn(|i| 1.0 / (1.0 + 9.0 * i as f64 / D as f64));
    let diagonal = DiagonalMetric::new(&variances).unwrap();
    let mut diag = Box::new(Nuts::new(settings, diagonal, start, &CheapGaussian).unwrap());
    let mut group = c.benchmark_group(format!("nuts_per_leapfrog/D={D}/M={M}"));
    group.bench_function("gradient", |b| {
        let x = [0.3; D];
        let mut g = [0.0; D];
        b.iter(|| CheapGaussian.potential_and_gradient(black_box(&x), &mut g))
    });
    group.bench_function("diagonal_metric", |b| {
        b.iter_custom(|n| per_leapfrog(&mut diag, &CheapGaussian, &mut rng, n))
    });
    group.bench_function("lbfgs_metric_full_rank", |b| {
        b.iter_custom(|n| per_leapfrog(&mut lbfgs, &CheapGaussian, &mut rng, n))
    });
    portable_kernels(|| {
        group.bench_function("diagonal_metric_portable", |b| {
            b.iter_custom(|n| per_leapfrog(&mut diag, &CheapGaussian, &mut rng, n))
        });
        group.bench_function("lbfgs_metric_full_rank_portable", |b| {
            b.iter_custom(|n| per_leapfrog(&mut lbfgs, &CheapGaussian, &mut rng, n))
        });
    });
    group.finish();
}

/// Time per leapfrog step of NUTS with the quasi-Newton metric its warm-up
/// learns (M pairs, [`DEFAULT_RANK_TOLERANCE`], 1000 warm-up draws, the
/// CLI's warm-up settings) on
/// [`CorrelatedGaussian`], at the tuned step size, against that target's
/// gradient alone. The rank it learned is printed: the cost of the velocity
/// grows with it (4 multiply-adds per coordinate and direction).
fn bench_nuts_leapfrog_learned<const D: usize, const M: usize>(c: &mut Criterion) {
    let mut rng = XorShiftRng::seed_from_u64(6);
    let estimator = LbfgsEstimator::<f64, D, M>::new(DEFAULT_RANK_TOLERANCE)
        .unwrap()
        .with_max_pairs(M);
    let mut chain = Box::new(
        AdaptiveNuts::<f64, D, _>::new(
            NutsSettings::new(0.1),
            WarmupSchedule::after_optimization(1000).unwrap(),
            LbfgsMetric::<f64, D, M>::identity(),
            estimator,
            [1.0; D],
            &CorrelatedGaussian,
        )
        .unwrap(),
    );
    // As the CLI's default NUTS (host/src/run/chain.rs: adaptive_nuts).
    chain.set_acceptance_statistic(AcceptanceStatistic::Symmetric);
    chain.set_early_end(2);
    chain.set_jitter(0.1).unwrap();
    while chain.is_warming_up() {
        chain.step(&CorrelatedGaussian, &mut rng);
    }
    let mut nuts = Box::new(chain.sampler().clone());
    let metric = nuts.metric();
    println!(
        "learned on N(0, 11ᵀ + 4I), D = {D}, M = {M}: rank {}, eigenvalues {:.3?}, step size {:.3}",
        metric.rank(),
        metric.eigenvalues(),
        nuts.settings().step_size
    );
    let mut group = c.benchmark_group(format!("nuts_per_leapfrog_learned/D={D}/M={M}"));
    group.bench_function("gradient", |b| {
        let x = [0.3; D];
        let mut g = [0.0; D];
        b.iter(|| CorrelatedGaussian.potential_and_gradient(black_box(&x), &mut g))
    });
    group.bench_function("lbfgs_metric_learned", |b| {
        b.iter_custom(|n| per_leapfrog(&mut nuts, &CorrelatedGaussian, &mut rng, n))
    });
    portable_kernels(|| {
        group.bench_function("lbfgs_metric_learned_portable", |b| {
            b.iter_custom(|n| per_leapfrog(&mut nuts, &CorrelatedGaussian, &mut rng, n))
        });
    });
    group.finish();
}

/// D standard normals, as every sampler but NUTS draws them (Box–Muller) and
/// as NUTS draws its momenta (the ziggurat), f64 and f32.
fn bench_normals<const D: usize>(c: &mut Criterion) {
    let mut rng = XorShiftRng::seed_from_u64(7);
    let mut out = [0.0f64; D];
    let mut out_f32 = [0.0f32; D];
    let mut group = c.benchmark_group(format!("normals/D={D}"));
    group.bench_function("box_muller", |b| {
        b.iter(|| fill_standard_normal(&mut rng, black_box(&mut out)))
    });
    group.bench_function("ziggurat", |b| {
        b.iter(|| fill_standard_normal_ziggurat(&mut rng, black_box(&mut out)))
    });
    group.bench_function("box_muller_f32", |b| {
        b.iter(|| fill_standard_normal(&mut rng, black_box(&mut out_f32)))
    });
    group.bench_function("ziggurat_f32", |b| {
        b.iter(|| fill_standard_normal_ziggurat(&mut rng, black_box(&mut out_f32)))
    });
    group.finish();
}

/// One sequential chain (`dot`) against four fixed-order accumulators (`dot_wide`).
fn bench_dot<const D: usize>(c: &mut Criterion) {
    let mut rng = XorShiftRng::seed_from_u64(4);
    let a: [f64; D] = std::array::from_fn(|_| standard_normal::<f64, _>(&mut rng));
    let b: [f64; D] = std::array::from_fn(|_| standard_normal::<f64, _>(&mut rng));
    let af: [f32; D] = a.map(|x| x as f32);
    let bf: [f32; D] = b.map(|x| x as f32);
    let mut group = c.benchmark_group(format!("dot/D={D}"));
    group.bench_function("dot", |bench| {
        bench.iter(|| dot(black_box(&a), black_box(&b)))
    });
    group.bench_function("dot_wide", |bench| {
        bench.iter(|| dot_wide(black_box(&a), black_box(&b)))
    });
    group.bench_function("dot_f32", |bench| {
        bench.iter(|| dot(black_box(&af), black_box(&bf)))
    });
    group.bench_function("dot_wide_f32", |bench| {
        bench.iter(|| dot_wide(black_box(&af), black_box(&bf)))
    });
    group.finish();
}

fn all(c: &mut Criterion) {
    println!("kernels: {}", qnmc::kernels::kernels_in_use());
    bench_qnhmc::<10, 2>(c);
    bench_qnhmc::<100, 2>(c);
    bench_qnhmc::<1000, 2>(c);
    bench_qnhmc::<10, 5>(c);
    bench_qnhmc::<100, 5>(c);
    bench_qnhmc::<1000, 5>(c);
    bench_qnhmc::<10, 10>(c);
    bench_qnhmc::<100, 10>(c);
    bench_qnhmc::<1000, 10>(c);
    bench_hmc::<100>(c);
    bench_hmc::<1000>(c);
    bench_hamcmc::<10, 2>(c);
    bench_hamcmc::<100, 2>(c);
    bench_hamcmc::<1000, 2>(c);
    bench_hamcmc::<10, 5>(c);
    bench_hamcmc::<100, 5>(c);
    bench_hamcmc::<1000, 5>(c);
    bench_hamcmc::<10, 10>(c);
    bench_hamcmc::<100, 10>(c);
    bench_hamcmc::<1000, 10>(c);
    bench_kernels::<100, 10>(c);
    bench_kernels::<1000, 10>(c);
    bench_metric_velocity::<100, 10>(c);
    bench_dot::<100>(c);
    bench_normals::<100>(c);
    bench_nuts_leapfrog::<6, 3>(c);
    bench_nuts_leapfrog::<25, 5>(c);
    bench_nuts_leapfrog::<100, 10>(c);
    bench_nuts_leapfrog_learned::<100, 10>(c);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50);
    targets = all
}
criterion_main!(benches);
