//! What one step of each sampler of any dimension costs at n = 10⁵ and
//! 10⁶ coordinates, against the bytes the step must move.
//!
//! Run: `cargo bench -p qnmc-benches --bench large_dimension`. Each sampler
//! is built by `new_boxed` in the storage the host uses for large models
//! (`LARGE_DIMENSION` = 2²⁰) and runs n coordinates with `set_dimension`,
//! as `qnmc run` does. The target is a standard normal whose stochastic
//! gradient is the exact one (g = θ, one pass over n numbers), so the step's
//! own vector work is what is timed.
//!
//! The bound: a step that reads every vector of its state once (the
//! sampler's n-long vectors: for HAMCMC its M draws, M − 1 pairs and five
//! work vectors) cannot be faster than streaming those bytes from memory.
//! The group `stream` times exactly that, a sum over an array of the
//! state's size, in the same run; the ratio of the two medians says how many
//! passes over its state the step makes (printed before each group: the
//! bytes of the state per sampler).

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use qnmc::lbfgs::InitialScaling;
use qnmc::{
    Amagold, AmagoldSettings, Hamcmc, HamcmcSettings, MinibatchPotential, Potential, Psgld,
    PsgldSettings, Qnhmc, QnhmcMass, QnhmcSettings, Sgld, SgldSettings, StepSizeSchedule,
};
use qnmc_host::run::LARGE_DIMENSION;
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;
use std::hint::black_box;
use std::time::Duration;

const D: usize = LARGE_DIMENSION;

/// U = ½|θ|² on the first `n` coordinates; its minibatch gradient is exact.
#[derive(Clone, Copy)]
struct Normal {
    n: usize,
}

impl Potential<f64, D> for Normal {
    fn potential_and_gradient(&self, x: &[f64; D], g: &mut [f64; D]) -> f64 {
        let mut u = 0.0;
        for (gi, &xi) in g[..self.n].iter_mut().zip(&x[..self.n]) {
            *gi = xi;
            u += xi * xi;
        }
        0.5 * u
    }
}

impl MinibatchPotential<f64, D> for Normal {
    type Batch = ();
    fn draw_batch<R: Rng + ?Sized>(&self, _rng: &mut R) {}
    fn minibatch_gradient(&self, _batch: &(), x: &[f64; D], g: &mut [f64; D]) {
        g[..self.n].copy_from_slice(&x[..self.n]);
    }
}

fn start(n: usize) -> Box<[f64; D]> {
    let mut x = qnmc::in_place::zeroed_box::<[f64; D]>();
    for (i, v) in x[..n].iter_mut().enumerate() {
        *v = ((i % 7) as f64 - 3.0) * 0.1;
    }
    x
}

const SIZES: [usize; 2] = [100_000, 1_000_000];

/// Reads every number of `data` once: a sum over eight independent lanes,
/// so that the loop waits on memory, not on the latency of one chain of
/// additions.
fn stream(data: &[f64]) -> f64 {
    let mut lanes = [0.0f64; 8];
    let chunks = data.chunks_exact(8);
    let tail: f64 = chunks.remainder().iter().sum();
    for chunk in chunks {
        for (l, v) in lanes.iter_mut().zip(chunk) {
            *l += v;
        }
    }
    lanes.iter().sum::<f64>() + tail
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("large_dimension");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for n in SIZES {
        let target = Normal { n };
        let x0 = start(n);
        let mut rng = XorShiftRng::seed_from_u64(1);
        // The states' sizes in n-long f64 vectors (the struct fields).
        eprintln!(
            "n = {n}: bytes of state per sampler (8 n per vector): sgld {} MB (6 vectors), \
             psgld {} MB (12), hamcmc M=2 {} MB (3M + 3 = 9), hamcmc M=20 {} MB (63), \
             qnhmc M=5 {} MB (4M + 9 = 29), amagold {} MB (7)",
            6 * 8 * n / 1_000_000,
            12 * 8 * n / 1_000_000,
            9 * 8 * n / 1_000_000,
            63 * 8 * n / 1_000_000,
            29 * 8 * n / 1_000_000,
            7 * 8 * n / 1_000_000,
        );
        for vectors in [6usize, 9, 12, 29, 63] {
            let data = vec![1.0f64; vectors * n];
            group.bench_with_input(
                BenchmarkId::new(format!("stream_{vectors}_vectors"), n),
                &data,
                |b, data| b.iter(|| black_box(stream(data))),
            );
        }
        {
            let mut s = Sgld::<f64, D>::new_boxed(SgldSettings::new(0.01), &x0).unwrap();
            s.set_dimension(n).unwrap();
            group.bench_function(BenchmarkId::new("sgld", n), |b| {
                b.iter(|| s.step(&target, &mut rng).unwrap())
            });
        }
        {
            let mut s =
                Psgld::<f64, D>::new_boxed(PsgldSettings::new(0.01, 0.99, 1e-5), &x0).unwrap();
            s.set_dimension(n).unwrap();
            group.bench_function(BenchmarkId::new("psgld", n), |b| {
                b.iter(|| s.step(&target, &mut rng).unwrap())
            });
        }
        macro_rules! hamcmc {
            ($m:literal, $name:literal) => {{
                let settings = HamcmcSettings::new(StepSizeSchedule::Constant(0.01), 1.0, 0.0);
                let mut s = Hamcmc::<f64, D, $m>::new_boxed(settings, &x0).unwrap();
                s.set_dimension(n).unwrap();
                // Fill the memory first: the timed steps run with M − 1 pairs.
                for _ in 0..2 * $m {
                    s.step(&target, &mut rng).unwrap();
                }
                group.bench_function(BenchmarkId::new($name, n), |b| {
                    b.iter(|| s.step(&target, &mut rng).unwrap())
                });
            }};
        }
        hamcmc!(2, "hamcmc_m2");
        hamcmc!(20, "hamcmc_m20");
        {
            let mut settings = QnhmcSettings::new(0.5, 1, 5);
            settings.mass = QnhmcMass::InverseHessian;
            settings.lbfgs.scaling = InitialScaling::NewestPair(1.0);
            let mut s = Qnhmc::<f64, D, 5>::new_boxed(settings, &x0, &target).unwrap();
            s.set_dimension(n).unwrap();
            for _ in 0..20 {
                s.step(&target, &mut rng);
            }
            group.bench_function(BenchmarkId::new("qnhmc_m5_l1", n), |b| {
                b.iter(|| s.step(&target, &mut rng))
            });
        }
        {
            let mut s =
                Amagold::<f64, D>::new_boxed(AmagoldSettings::new(0.1, 1, 0.5), &x0, &target)
                    .unwrap();
            s.set_dimension(n).unwrap();
            group.bench_function(BenchmarkId::new("amagold_t1", n), |b| {
                b.iter(|| s.step(&target, &mut rng))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
