//! What the stack tests and the `stack_use` example share: the default NUTS
//! (the quasi-Newton metric with 20 pairs, the host's warm-up settings) on
//! the QNHMC paper's Gaussian N(0, 11ᵀ + 4I), built in place on the heap.
//!
//! This crate's tests are compiled without optimisation (the workspace's
//! `[profile.test.package.qnmc-tests-debug]`): a debug build is what
//! `cargo run` and `cargo test` give a new user, and it keeps every copy an
//! optimised build would elide, so it needs the most stack.

use qnmc::adaptation::{
    AcceptanceStatistic, AdaptiveNuts, DEFAULT_RANK_TOLERANCE, LbfgsEstimator,
    LbfgsEstimatorSettings, WarmupSchedule,
};
use qnmc::{NutsSettings, Potential};
use rand_core::SeedableRng;

/// The recommended default's pairs.
pub const PAIRS: usize = 20;

/// The default sampler at dimension `D`.
pub type DefaultNuts<const D: usize> = AdaptiveNuts<f64, D, LbfgsEstimator<f64, D, PAIRS>>;

/// N(0, 11ᵀ + 4I): Σ⁻¹ = (I − 11ᵀ/(4 + D))/4.
pub struct Correlated<const D: usize>;

impl<const D: usize> Potential<f64, D> for Correlated<D> {
    fn potential_and_gradient(&self, x: &[f64; D], g: &mut [f64; D]) -> f64 {
        let sum: f64 = x.iter().sum();
        let shift = sum / (4.0 + D as f64);
        let mut u = 0.0;
        for i in 0..D {
            g[i] = (x[i] - shift) / 4.0;
            u += 0.5 * x[i] * g[i];
        }
        u
    }
}

/// The default NUTS built in a zeroed heap allocation (it never crosses the
/// stack), with the host CLI's settings: symmetric acceptance statistic,
/// early end after two kept windows, ±10 % step-size jitter.
pub fn boxed_default_nuts<const D: usize>(warmup: u64) -> Box<DefaultNuts<D>> {
    let mut chain = DefaultNuts::<D>::new_boxed(
        NutsSettings::new(0.5),
        WarmupSchedule::after_optimization(warmup).expect("a valid warm-up length"),
        LbfgsEstimatorSettings::new(DEFAULT_RANK_TOLERANCE),
        &[1.0; D],
        &Correlated::<D>,
    )
    .expect("the Gaussian is finite at the start");
    chain.set_acceptance_statistic(AcceptanceStatistic::Symmetric);
    chain.set_early_end(2);
    chain.set_jitter(0.1).expect("a valid jitter");
    chain
}

/// Runs `draws` draws (warm-up included) and returns, over the kept draws,
/// the mean of the sum of the coordinates (variance D² + 4D under the
/// target), the mean of their spread Σ(θᵢ − θ̄)²/(D − 1) (4·χ²_{D−1}/(D − 1)
/// under the target) and the number of kept draws.
pub fn run<const D: usize>(
    chain: &mut DefaultNuts<D>,
    seed: u64,
    draws: usize,
) -> (f64, f64, usize) {
    let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(seed);
    let (mut sum, mut spread, mut kept) = (0.0, 0.0, 0);
    for _ in 0..draws {
        let keep = !chain.is_warming_up();
        chain.step(&Correlated::<D>, &mut rng);
        if keep {
            let position = chain.position();
            let total: f64 = position.iter().sum();
            let mean = total / D as f64;
            sum += total;
            spread += position
                .iter()
                .map(|x| (x - mean) * (x - mean))
                .sum::<f64>()
                / (D - 1) as f64;
            kept += 1;
        }
    }
    let kept_draws = kept.max(1) as f64;
    (sum / kept_draws, spread / kept_draws, kept)
}
