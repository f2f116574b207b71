//! How close the quasi-Newton metric NUTS learns in its warm-up comes to the
//! true covariance of the 100-D Gaussian N(0, 11ᵀ + 4I) (issue 10's T1).
//!
//! For each seed: one chain with the settings `qnmc run --sampler nuts` uses
//! (L-BFGS metric with 20 pairs, symmetric acceptance statistic at 0.8,
//! early end after 2 kept windows, initial buffer 25), started at uniform(−2, 2); after the
//! warm-up it prints the warm-up's gradients, the final step size, and the
//! eigenvalues λ of Σ^(−1/2) H Σ^(−1/2) (all 1 for H = Σ): the smallest, the
//! largest, the one along the all-ones direction (variance 104) and the mean
//! over the other 99 directions, plus the Fisher-type misfit
//! tr(HΣ⁻¹) + tr(H⁻¹Σ) − 2D.
//!
//! ```sh
//! cargo run --release -p qnmc-host --example learned_metric -- [warm-up draws] [seeds] [initial buffer] [v]
//! ```
//!
//! Defaults: 500 warm-up draws, seeds 1–6, initial buffer 25 and terminal
//! buffer 75 (as `WarmupSchedule::after_optimization`); a fourth argument prints every
//! window end (gradients so far, replaced or kept, the Fisher scores).
use nalgebra::{DMatrix, SymmetricEigen};
use qnmc::adaptation::{
    AcceptanceStatistic, AdaptiveNuts, DEFAULT_RANK_TOLERANCE, LbfgsEstimator,
    LbfgsEstimatorSettings, WarmupSchedule,
};
use qnmc::metric::Metric;
use qnmc::{NutsSettings, Potential};
use rand_core::SeedableRng;

const D: usize = 100;
const M: usize = 20;

/// N(0, 11ᵀ + 4I): precision (I − 11ᵀ/104)/4.
struct Correlated;

impl Potential<f64, D> for Correlated {
    fn potential_and_gradient(&self, x: &[f64; D], g: &mut [f64; D]) -> f64 {
        let sum: f64 = x.iter().sum();
        let mut u = 0.0;
        for i in 0..D {
            g[i] = 0.25 * (x[i] - sum / 104.0);
            u += 0.5 * x[i] * g[i];
        }
        u
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let warmup: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(500);
    let seeds: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(6);
    let init: u64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(25);
    let verbose = args.get(4).is_some();
    // Σ^(−1/2) = (I − P)/2 + P/√104, P = 11ᵀ/D.
    let p = DMatrix::from_element(D, D, 1.0 / D as f64);
    let eye = DMatrix::<f64>::identity(D, D);
    let inv_sqrt = (&eye - &p) * 0.5 + &p * (1.0 / 104f64.sqrt());
    println!(
        "seed | warm-up grads | eps | lambda min | lambda max | lambda ones | mean others | misfit | pairs"
    );
    for seed in 1..=seeds {
        let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(seed);
        let mut start = [0.0; D];
        for v in start.iter_mut() {
            let u: f64 = qnmc::Real::uniform_open_closed(&mut rng);
            *v = 2.0 * (2.0 * u - 1.0);
        }
        // Built on the heap: at D = 100 the sampler is too large for
        // `AdaptiveNuts::new` (NEW_MAX_BYTES).
        let mut chain = AdaptiveNuts::<f64, D, LbfgsEstimator<f64, D, M>, 10>::new_boxed(
            NutsSettings::new(0.1),
            WarmupSchedule::new(warmup, init, 75, 25).unwrap(),
            LbfgsEstimatorSettings::new(DEFAULT_RANK_TOLERANCE),
            &start,
            &Correlated,
        )
        .unwrap();
        chain.set_target_acceptance(0.8).unwrap();
        chain.set_acceptance_statistic(AcceptanceStatistic::Symmetric);
        chain.set_early_end(2);
        let mut last = 0;
        let mut decisions = (0, 0);
        while chain.is_warming_up() {
            chain.step(&Correlated, &mut rng);
            let now = chain.estimator().window_decisions();
            if verbose && now != decisions {
                let g = chain.warmup_gradient_evaluations();
                println!(
                    "  draw {} grads {} (+{}) {} eps {:.3} scores {:?}",
                    chain.draws(),
                    g,
                    g - last,
                    if now.0 > decisions.0 {
                        "replaced"
                    } else {
                        "kept"
                    },
                    chain.sampler().settings().step_size,
                    chain.estimator().last_window_scores()
                );
                last = g;
                decisions = now;
            }
        }
        let metric = chain.sampler().metric();
        let mut h = DMatrix::<f64>::zeros(D, D);
        let mut e = [0.0; D];
        let mut col = [0.0; D];
        for j in 0..D {
            e[j] = 1.0;
            metric.velocity(&e, &mut col);
            e[j] = 0.0;
            for i in 0..D {
                h[(i, j)] = col[i];
            }
        }
        let h = (&h + h.transpose()) * 0.5;
        let a = &inv_sqrt * &h * &inv_sqrt;
        let eig = SymmetricEigen::new(a.clone());
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        let mut misfit = 0.0;
        for &l in eig.eigenvalues.iter() {
            lo = lo.min(l);
            hi = hi.max(l);
            misfit += l + 1.0 / l - 2.0;
        }
        let ones = DMatrix::from_element(D, 1, 1.0 / (D as f64).sqrt());
        let along = (ones.transpose() * &a * &ones)[(0, 0)];
        let others = (a.trace() - along) / (D - 1) as f64;
        println!(
            "{seed} | {} | {:.3} | {lo:.3} | {hi:.3} | {along:.3} | {others:.3} | {misfit:.2} | {}",
            chain.warmup_gradient_evaluations(),
            chain.final_step_size(),
            chain.estimator().pairs_used(),
        );
    }
}
