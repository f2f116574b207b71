//! The cost of one gradient: hand-written ∇U against automatic
//! differentiation of U written once (`qnmc::autodiff`), forward mode
//! (`ForwardGradient`, 8 tangents, and all D tangents in one pass for
//! German) and reverse mode (`ReverseGradient` on a fixed tape).
//!
//! Run: `cargo bench -p qnmc-benches --bench autodiff`. Targets: German
//! credit logistic regression (D = 25, N = 1000) and N(0, 11ᵀ + 4I) in
//! D = 100. Before each group it prints the median over 31 interleaved
//! rounds of the time ratios AD / hand (less sensitive to a noisy machine
//! than the ratio of criterion's medians).

use criterion::{Criterion, criterion_group, criterion_main};
use qnmc::autodiff::{AutodiffModel, ForwardGradient, ReverseGradient};
use qnmc::{Potential, Scalar};
use qnmc_host::targets::{CorrelatedGaussian, LogisticRegression};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Logistic regression: U(w) = ‖w‖²/(2v) + Σₙ softplus(fₙ) − tₙ fₙ.
struct Logistic<const D: usize> {
    rows: Vec<[f64; D]>,
    labels: Vec<f64>,
    prior_variance: f64,
}

impl<const D: usize> AutodiffModel<D> for Logistic<D> {
    fn potential<S: Scalar>(&self, w: &[S; D]) -> S {
        let inverse = S::from_f64(1.0 / self.prior_variance);
        let mut u = S::from_f64(0.0);
        for &wi in w {
            u += S::from_f64(0.5) * wi * wi * inverse;
        }
        for (x, &t) in self.rows.iter().zip(&self.labels) {
            let mut f = w[0] * S::from_f64(x[0]);
            for k in 1..D {
                f += w[k] * S::from_f64(x[k]);
            }
            u += f.softplus() - S::from_f64(t) * f;
        }
        u
    }
}

/// N(0, 11ᵀ + 4I): U = ½ θᵀΣ⁻¹θ, Σ⁻¹ = (I − 11ᵀ/(4 + D))/4.
struct Correlated;

impl<const D: usize> AutodiffModel<D> for Correlated {
    fn potential<S: Scalar>(&self, x: &[S; D]) -> S {
        let a = S::from_f64(4.0);
        let mut sum = S::from_f64(0.0);
        for &v in x {
            sum += v;
        }
        let shift = sum / (a + S::from_f64(D as f64));
        let mut u = S::from_f64(0.0);
        for &v in x {
            u += v * (v - shift) / a;
        }
        S::from_f64(0.5) * u
    }
}

/// Median over 31 rounds of (time of `k` gradients by each candidate) /
/// (time of `k` by the first), candidates interleaved within a round.
fn median_ratios<const D: usize>(x: &[f64; D], candidates: &[(&str, &dyn Potential<f64, D>)]) {
    let mut g = [0.0; D];
    let time = |p: &dyn Potential<f64, D>, k: u32, g: &mut [f64; D]| {
        let start = Instant::now();
        for _ in 0..k {
            black_box(p.potential_and_gradient(black_box(x), g));
        }
        start.elapsed().as_secs_f64()
    };
    // k so that the slowest candidate takes ~5 ms per round.
    let slowest = candidates
        .iter()
        .map(|(_, p)| time(*p, 3, &mut g) / 3.0)
        .fold(0.0, f64::max);
    let k = ((5e-3 / slowest) as u32).max(1);
    let mut ratios = vec![Vec::new(); candidates.len()];
    for _ in 0..31 {
        let times: Vec<f64> = candidates
            .iter()
            .map(|(_, p)| time(*p, k, &mut g))
            .collect();
        for (r, t) in ratios.iter_mut().zip(&times) {
            r.push(t / times[0]);
        }
    }
    for ((name, _), mut r) in candidates.iter().zip(ratios) {
        r.sort_by(f64::total_cmp);
        println!("  median ratio {name} / {}: {:.2}", candidates[0].0, r[15]);
    }
}

fn gradients(c: &mut Criterion) {
    let german = LogisticRegression::<25, 1>::german_credit();
    let model = Logistic {
        rows: german.design.clone(),
        labels: german.labels.clone(),
        prior_variance: german.prior_variance,
    };
    let forward8 = ForwardGradient::<_, 8>::new(&model);
    let forward25 = ForwardGradient::<_, 25>::new(&model);
    let reverse = Box::new(ReverseGradient::<_, f64, { 1 << 16 }>::new(&model));
    let w = [0.05; 25];
    let mut g = [0.0; 25];
    reverse.potential_and_gradient(&w, &mut g);
    println!("german (D = 25): {} tape nodes", reverse.tape().len());
    median_ratios(
        &w,
        &[
            ("hand", &german),
            ("forward8", &forward8),
            ("forward25", &forward25),
            ("reverse", &*reverse),
        ],
    );
    let mut group = c.benchmark_group("autodiff/german");
    group.bench_function("hand", |b| {
        b.iter(|| german.potential_and_gradient(black_box(&w), &mut g))
    });
    group.bench_function("forward8", |b| {
        b.iter(|| forward8.potential_and_gradient(black_box(&w), &mut g))
    });
    group.bench_function("forward25", |b| {
        b.iter(|| forward25.potential_and_gradient(black_box(&w), &mut g))
    });
    group.bench_function("reverse", |b| {
        b.iter(|| reverse.potential_and_gradient(black_box(&w), &mut g))
    });
    group.finish();

    let gaussian = CorrelatedGaussian::<100>::paper();
    let forward8 = ForwardGradient::<_, 8>::new(Correlated);
    let reverse = Box::new(ReverseGradient::<_, f64, 1024>::new(Correlated));
    let x: [f64; 100] = core::array::from_fn(|i| (i as f64 * 0.37).sin());
    let mut g = [0.0; 100];
    reverse.potential_and_gradient(&x, &mut g);
    println!("gaussian (D = 100): {} tape nodes", reverse.tape().len());
    median_ratios(
        &x,
        &[
            ("hand", &gaussian),
            ("forward8", &forward8),
            ("reverse", &*reverse),
        ],
    );
    let mut group = c.benchmark_group("autodiff/gaussian100");
    group.bench_function("hand", |b| {
        b.iter(|| Potential::<f64, 100>::potential_and_gradient(&gaussian, black_box(&x), &mut g))
    });
    group.bench_function("forward8", |b| {
        b.iter(|| forward8.potential_and_gradient(black_box(&x), &mut g))
    });
    group.bench_function("reverse", |b| {
        b.iter(|| reverse.potential_and_gradient(black_box(&x), &mut g))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3));
    targets = gradients
}
criterion_main!(benches);
