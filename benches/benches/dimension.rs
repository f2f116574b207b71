//! What a model of dimension n costs NUTS in compile-time storage D > n.
//!
//! Run: `cargo bench -p qnmc-benches --bench dimension`. The host runs a
//! model of dimension n in the smallest compiled size D ≥ n (for n = 300:
//! 512; for n = 5000: 8192). Three ways to do that, each with the default
//! warm-up (L-BFGS start, quasi-Newton metric with 20 pairs, the CLI's
//! settings) on N(0, 11ᵀ + 4I) in n dimensions:
//!
//! - `own_dimension`: a sampler compiled for D = n (the reference);
//! - `run_time_dimension`: D with `AdaptiveNuts::set_dimension(n)` (what the
//!   host does now): every pass stops at n, coordinates n.. stay zero;
//! - `gaussian_padding` (n = 300 only): D with the D − n extra coordinates
//!   sampled as independent N(0, 1), what the host did before.
//!
//! Reported per leapfrog step (criterion) and, printed before each group,
//! the leapfrog steps per kept draw over 1000 draws after the warm-up: the
//! cost of a draw is their product. The run-time dimension's chain is bit
//! for bit the reference's (`qnmc::adaptation` tests), so its leapfrog steps
//! per draw are equal by construction; only the time per step can differ.

use criterion::{Criterion, criterion_group, criterion_main};
use qnmc::NutsSettings;
use qnmc::Potential;
use qnmc::adaptation::{
    AcceptanceStatistic, AdaptiveNuts, DEFAULT_RANK_TOLERANCE, LbfgsEstimator,
    LbfgsEstimatorSettings, WarmupSchedule,
};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;
use std::time::Duration;

/// N(0, 11ᵀ + 4I) on the first `N` coordinates (Σ⁻¹ = (I − 11ᵀ/(4 + N))/4,
/// O(N) per gradient); with `PADDED`, the coordinates from N on are
/// independent N(0, 1), else they are not read or written.
#[derive(Clone, Copy)]
struct LeadingGaussian<const N: usize, const PADDED: bool>;

impl<const N: usize, const PADDED: bool, const D: usize> Potential<f64, D>
    for LeadingGaussian<N, PADDED>
{
    fn potential_and_gradient(&self, x: &[f64; D], g: &mut [f64; D]) -> f64 {
        let sum: f64 = x[..N].iter().sum();
        let shift = sum / (4.0 + N as f64);
        let mut u = 0.0;
        for i in 0..N {
            g[i] = 0.25 * (x[i] - shift);
            u += x[i] * g[i];
        }
        if PADDED {
            for i in N..D {
                g[i] = x[i];
                u += x[i] * x[i];
            }
        }
        0.5 * u
    }
}

type Chain<const D: usize> = AdaptiveNuts<f64, D, LbfgsEstimator<f64, D, 20>>;

/// The CLI's default NUTS, warmed up on `target` (dimension `n` ≤ D).
fn warmed_up<const D: usize, P: Potential<f64, D>>(
    target: &P,
    n: usize,
    frozen: bool,
    rng: &mut XorShiftRng,
) -> Box<Chain<D>> {
    let mut start = [0.0; D];
    let moved = if frozen { n } else { D };
    for (i, s) in start.iter_mut().take(moved).enumerate() {
        *s = if i % 2 == 0 { 1.0 } else { -0.5 };
    }
    let mut chain = Chain::<D>::new_boxed(
        NutsSettings::new(0.1),
        WarmupSchedule::after_optimization(500).unwrap(),
        LbfgsEstimatorSettings::new(DEFAULT_RANK_TOLERANCE),
        &start,
        target,
    )
    .unwrap();
    if frozen {
        chain.set_dimension(n).unwrap();
    }
    chain.set_acceptance_statistic(AcceptanceStatistic::Symmetric);
    chain.set_early_end(2);
    chain.set_jitter(0.1).unwrap();
    while chain.is_warming_up() {
        chain.step(target, rng);
    }
    chain
}

/// Leapfrog steps per draw over 1000 draws, then criterion's time per
/// leapfrog step.
fn bench_case<const D: usize, P: Potential<f64, D>>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    target: &P,
    n: usize,
    frozen: bool,
) {
    let mut rng = XorShiftRng::seed_from_u64(11);
    let mut chain = warmed_up::<D, P>(target, n, frozen, &mut rng);
    let steps: u64 = (0..1000)
        .map(|_| u64::from(chain.step(target, &mut rng).leapfrog_steps))
        .sum();
    println!(
        "{name} (D = {D}, n = {n}): {:.2} leapfrog steps per draw, step size {:.4}",
        steps as f64 / 1000.0,
        chain.final_step_size()
    );
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let start = std::time::Instant::now();
            let mut done = 0u64;
            while done < iters {
                done += u64::from(chain.step(target, &mut rng).leapfrog_steps);
            }
            start.elapsed().mul_f64(iters as f64 / done as f64)
        })
    });
}

fn all(c: &mut Criterion) {
    println!("kernels: {}", qnmc::kernels::kernels_in_use());
    let mut group = c.benchmark_group("nuts_per_leapfrog_by_storage/n=300");
    bench_case::<300, _>(
        &mut group,
        "own_dimension",
        &LeadingGaussian::<300, false>,
        300,
        false,
    );
    bench_case::<512, _>(
        &mut group,
        "run_time_dimension",
        &LeadingGaussian::<300, false>,
        300,
        true,
    );
    bench_case::<512, _>(
        &mut group,
        "gaussian_padding",
        &LeadingGaussian::<300, true>,
        300,
        false,
    );
    group.finish();
    let mut group = c.benchmark_group("nuts_per_leapfrog_by_storage/n=5000");
    bench_case::<5000, _>(
        &mut group,
        "own_dimension",
        &LeadingGaussian::<5000, false>,
        5000,
        false,
    );
    bench_case::<8192, _>(
        &mut group,
        "run_time_dimension",
        &LeadingGaussian::<5000, false>,
        5000,
        true,
    );
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30);
    targets = all
}
criterion_main!(benches);
