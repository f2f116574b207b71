//! How well single NUTS chains mix log τ, the slow quantity of eight schools
//! (posteriordb's noncentered model; needs `../shared/data`), with the
//! quasi-Newton metric `qnmc run` learns against qnmc's diagonal metric.
//!
//! For each seed: one chain started at the model's initial point plus
//! uniform(−2, 2), the default warm-up (500 draws, L-BFGS start, symmetric
//! acceptance statistic at 0.8, early end after two kept windows), then 1000
//! kept draws. It prints the ESS of log τ and of the indicator log τ < −1.27
//! (τ below the reference posterior's 5 % quantile, 0.28: the lower tail a
//! tail ESS measures), each by Geyer's initial positive sequence, and the
//! gradients of warm-up and draws; then their geometric means over seeds.
//!
//! ```sh
//! cargo run --release -p qnmc-cli --example eight_schools_tail -- [lbfgs|diag] [seeds] [v]
//! ```
//!
//! Defaults: `lbfgs`, 40 seeds; a third argument prints every chain.
use qnmc::adaptation::{
    AcceptanceStatistic, AdaptiveNuts, DEFAULT_RANK_TOLERANCE, DiagonalEstimator, LbfgsEstimator,
    MetricEstimator, WarmupSchedule,
};
use qnmc::metric::{DiagonalMetric, LbfgsMetric};
use qnmc::{NutsSettings, Potential};
use qnmc_cli::{TargetArgs, build_target};
use qnmc_host::model::Model;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

const D: usize = 10;
/// The unconstrained coordinate log τ (after θ̃₁…θ̃₈ and μ).
const LOG_TAU: usize = 9;
/// ln 0.28: the reference posterior's 5 % quantile of τ.
const LOWER_TAIL: f64 = -1.27;

struct Target<'a>(&'a dyn Model);

impl Potential<f64, D> for Target<'_> {
    fn potential_and_gradient(&self, x: &[f64; D], g: &mut [f64; D]) -> f64 {
        self.0.potential_and_gradient(x, g)
    }
}

/// n / (1 + 2 Σ ρₜ) with Geyer's initial positive sequence.
fn ess(x: &[f64]) -> f64 {
    let n = x.len();
    let mean = x.iter().sum::<f64>() / n as f64;
    let var = x.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / n as f64;
    if var == 0.0 {
        return f64::NAN;
    }
    let rho = |t: usize| {
        (0..n - t)
            .map(|i| (x[i] - mean) * (x[i + t] - mean))
            .sum::<f64>()
            / (n as f64 * var)
    };
    let (mut sum, mut t) = (0.0, 1);
    while t + 1 < n {
        let pair = rho(t) + rho(t + 1);
        if pair < 0.0 {
            break;
        }
        sum += pair;
        t += 2;
    }
    n as f64 / (1.0 + 2.0 * sum)
}

/// One chain: (ESS of log τ, ESS of its lower-tail indicator, step size,
/// gradients of warm-up and draws).
fn chain<E: MetricEstimator<f64, D>>(
    target: &Target<'_>,
    start: [f64; D],
    metric: E::Metric,
    estimator: E,
    rng: &mut XorShiftRng,
) -> (f64, f64, f64, u64) {
    let schedule = WarmupSchedule::after_optimization(500).unwrap();
    let mut chain: AdaptiveNuts<f64, D, E, 10> = AdaptiveNuts::new(
        NutsSettings::new(0.1),
        schedule,
        metric,
        estimator,
        start,
        target,
    )
    .unwrap();
    chain.set_target_acceptance(0.8).unwrap();
    chain.set_acceptance_statistic(AcceptanceStatistic::Symmetric);
    chain.set_early_end(2);
    chain.set_jitter(0.1).unwrap();
    while chain.is_warming_up() {
        chain.step(target, rng);
    }
    let mut log_tau = Vec::with_capacity(1000);
    let mut gradients = chain.warmup_gradient_evaluations();
    for _ in 0..1000 {
        gradients += u64::from(chain.step(target, rng).gradient_evaluations);
        log_tau.push(chain.position()[LOG_TAU]);
    }
    let lower: Vec<f64> = log_tau
        .iter()
        .map(|v| f64::from(u8::from(*v < LOWER_TAIL)))
        .collect();
    let step_size = chain.sampler().settings().step_size;
    (ess(&log_tau), ess(&lower), step_size, gradients)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let diagonal = args.get(1).is_some_and(|a| a == "diag");
    let seeds: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(40);
    let verbose = args.get(3).is_some();
    let shared = match qnmc_host::shared_data::locate(None) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("eight schools needs the shared data folder: {e}");
            std::process::exit(2);
        }
    };
    let model = build_target(&TargetArgs {
        target: "eight-schools".into(),
        shared_data: Some(shared),
        ..TargetArgs::default()
    })
    .unwrap_or_else(|e| panic!("eight-schools: {e}"));
    let target = Target(model.as_ref());
    let (mut log_ess, mut log_lower, mut gradients) = (0.0, 0.0, 0);
    for seed in 1..=seeds {
        let mut rng = XorShiftRng::seed_from_u64(seed);
        let mut start = [0.0; D];
        for (x, x0) in start.iter_mut().zip(model.initial_point()) {
            let u: f64 = qnmc::Real::uniform_open_closed(&mut rng);
            *x = x0 + 2.0 * (2.0 * u - 1.0);
        }
        let (e, lower, eps, g) = if diagonal {
            let metric = DiagonalMetric::<f64, D>::identity();
            chain(&target, start, metric, DiagonalEstimator::new(), &mut rng)
        } else {
            let metric = LbfgsMetric::<f64, D, 20>::identity();
            let estimator = LbfgsEstimator::<f64, D, 20>::new(DEFAULT_RANK_TOLERANCE).unwrap();
            chain(&target, start, metric, estimator, &mut rng)
        };
        if verbose {
            println!(
                "seed {seed}: eps {eps:.3}, ESS log tau {e:.0}, lower tail {lower:.0}, gradients {g}"
            );
        }
        log_ess += e.ln();
        log_lower += lower.ln();
        gradients += g;
    }
    let n = seeds as f64;
    println!(
        "{} metric, {seeds} chains of 1000 draws: geometric mean ESS of log tau {:.0}, of its lower tail {:.0}; gradients per chain {}",
        if diagonal { "diagonal" } else { "quasi-Newton" },
        (log_ess / n).exp(),
        (log_lower / n).exp(),
        gradients / seeds
    );
}
