//! `qnmc demo`: HMC, QNHMC and HAMCMC on the QNHMC paper's 100-D Gaussian
//! N(0, 11ᵀ + 4I), with acceptance, ESS, gradient cost and error against the
//! known truth, so the samplers can be compared honestly in one table.

use std::fmt::Write as _;
use std::time::Instant;

use qnmc::{
    FullBatch, Hamcmc, HamcmcSettings, Hmc, HmcSettings, MemoryUpdate, Qnhmc, QnhmcMass,
    QnhmcSettings, StepSizeSchedule, StepStats,
};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use qnmc_host::diagnostics::{ess_bulk, mean, variance, weighted_mean, weighted_variance};
use qnmc_host::targets::CorrelatedGaussian;

/// Dimension of the demo target (the QNHMC paper's §5.1).
pub const DIMENSION: usize = 100;
/// L-BFGS memory of the quasi-Newton samplers in the demo.
pub const MEMORY: usize = 10;

/// Settings of a demo run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DemoSettings {
    /// Seed of chain 0; chain k uses `seed + k`.
    pub seed: u64,
    /// Independent chains per sampler (run on parallel threads).
    pub chains: usize,
    /// Warm-up draws per chain, discarded (QNHMC learns its memory here).
    pub warmup: usize,
    /// Kept draws per chain.
    pub draws: usize,
}

impl Default for DemoSettings {
    fn default() -> Self {
        DemoSettings {
            seed: 2016,
            chains: 4,
            warmup: 1000,
            draws: 5000,
        }
    }
}

/// One line of the demo table.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoRow {
    /// Sampler and its settings.
    pub sampler: String,
    /// Whether its kept draws come from an exact (π-invariant) chain.
    pub exact: bool,
    /// Mean acceptance rate of the kept draws (1 for HAMCMC).
    pub acceptance: f64,
    /// Gradient evaluations per kept draw.
    pub gradients_per_draw: f64,
    /// Smallest bulk ESS over the 100 coordinates (all chains).
    pub min_ess: f64,
    /// Bulk ESS of the projection on the all-ones direction (variance 104).
    pub ess_ones: f64,
    /// Gradient evaluations (kept draws only) per unit of the smaller ESS.
    pub gradients_per_ess: f64,
    /// max over coordinates of |mean − 0| / true sd.
    pub max_mean_error: f64,
    /// Relative error of the variance along the all-ones direction.
    pub ones_variance_error: f64,
    /// Mean relative error of the marginal variances (true 5).
    pub marginal_variance_error: f64,
    /// Divergent transitions among the kept draws.
    pub divergences: u64,
    /// Wall time of the run in seconds (all chains, including warm-up).
    pub seconds: f64,
}

/// What one chain produced: kept draws, weights, acceptance and cost.
struct ChainOutput {
    draws: Vec<[f64; DIMENSION]>,
    weights: Vec<f64>,
    accepted: u64,
    gradients: u64,
    divergences: u64,
}

impl ChainOutput {
    fn new(n: usize) -> Self {
        ChainOutput {
            draws: Vec::with_capacity(n),
            weights: Vec::with_capacity(n),
            accepted: 0,
            gradients: 0,
            divergences: 0,
        }
    }

    fn record(&mut self, position: &[f64; DIMENSION], stats: &StepStats<f64>) {
        self.draws.push(*position);
        self.weights.push(stats.step_size);
        self.accepted += stats.accepted as u64;
        self.gradients += stats.gradient_evaluations as u64;
        self.divergences += stats.divergent as u64;
    }
}

type ChainRunner = dyn Fn(u64, &DemoSettings) -> ChainOutput + Sync;

fn run_chains(settings: &DemoSettings, runner: &ChainRunner) -> Vec<ChainOutput> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..settings.chains)
            .map(|k| scope.spawn(move || runner(settings.seed + k as u64, settings)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a demo chain panicked"))
            .collect()
    })
}

fn start(seed: u64) -> [f64; DIMENSION] {
    // Over-dispersed start: every coordinate ±3 around the mode.
    let mut rng = XorShiftRng::seed_from_u64(seed ^ 0x5eed);
    let mut x = [0.0; DIMENSION];
    for v in x.iter_mut() {
        let u: f64 = qnmc::Real::uniform_open_closed(&mut rng);
        *v = 3.0 * (2.0 * u - 1.0);
    }
    x
}

const TARGET: CorrelatedGaussian<DIMENSION> = CorrelatedGaussian {
    independent_variance: 4.0,
    shared_variance: 1.0,
};

/// Runs `s.warmup + s.draws` steps and keeps the draws after warm-up.
fn collect(
    s: &DemoSettings,
    mut step: impl FnMut() -> (StepStats<f64>, [f64; DIMENSION]),
) -> ChainOutput {
    let mut out = ChainOutput::new(s.draws);
    for k in 0..s.warmup + s.draws {
        let (stats, position) = step();
        if k >= s.warmup {
            out.record(&position, &stats);
        }
    }
    out
}

fn hmc_chain(seed: u64, s: &DemoSettings) -> ChainOutput {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let settings = HmcSettings::new(HMC_STEP, HMC_LEAPFROG);
    let mut sampler =
        Hmc::<f64, DIMENSION>::new(settings, start(seed), &TARGET).expect("valid demo settings");
    collect(s, || {
        let stats = sampler.step(&TARGET, &mut rng);
        (stats, *sampler.position())
    })
}

fn qnhmc_chain(seed: u64, s: &DemoSettings, mass: QnhmcMass, step: f64) -> ChainOutput {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let mut settings = QnhmcSettings::new(step, QNHMC_LEAPFROG, MEMORY);
    settings.mass = mass;
    settings.memory_update = MemoryUpdate::FreezeAfter(s.warmup as u64);
    let mut sampler = Box::new(
        Qnhmc::<f64, DIMENSION, MEMORY>::new(settings, start(seed), &TARGET)
            .expect("valid demo settings"),
    );
    collect(s, || {
        let stats = sampler.step(&TARGET, &mut rng);
        (stats, *sampler.position())
    })
}

fn hamcmc_chain(seed: u64, s: &DemoSettings) -> ChainOutput {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let target = FullBatch(TARGET);
    let schedule = StepSizeSchedule::Constant(HAMCMC_STEP);
    let settings = HamcmcSettings::new(schedule, HAMCMC_GAMMA, 0.0);
    let mut sampler = Box::new(
        Hamcmc::<f64, DIMENSION, HAMCMC_MEMORY>::new(settings, start(seed))
            .expect("valid demo settings"),
    );
    // Two gradients per draw instead of L: HAMCMC gets the same gradient budget,
    // and keeps every HAMCMC_BUDGET_FACTOR-th draw so the diagnostics see as many
    // draws as for the other samplers.
    let (warmup, draws) = (
        HAMCMC_BUDGET_FACTOR * s.warmup,
        HAMCMC_BUDGET_FACTOR * s.draws,
    );
    let mut out = ChainOutput::new(s.draws);
    let mut gradients = 0u64;
    for k in 0..warmup + draws {
        // The Gaussian's gradient is finite everywhere; a step error would be a bug.
        let stats = sampler.step(&target, &mut rng).expect("finite gradient");
        if k >= warmup {
            gradients += stats.gradient_evaluations as u64;
            if (k - warmup) % HAMCMC_BUDGET_FACTOR == HAMCMC_BUDGET_FACTOR - 1 {
                out.record(sampler.position(), &stats);
            }
        }
    }
    out.gradients = gradients;
    out
}

const HMC_STEP: f64 = 0.9;
const HMC_LEAPFROG: u32 = 23;
const QNHMC_LEAPFROG: u32 = 20;
const QNHMC_IDENTITY_STEP: f64 = 0.17;
const QNHMC_INVERSE_HESSIAN_STEP: f64 = 1.0;
const HAMCMC_MEMORY: usize = 3;
const HAMCMC_STEP: f64 = 0.1;
/// HAMCMC draws per draw of the L = 20 samplers: equal gradient budgets.
const HAMCMC_BUDGET_FACTOR: usize = 10;
const HAMCMC_GAMMA: f64 = 4.0;

fn summarize(
    name: &str,
    exact: bool,
    weighted: bool,
    chains: Vec<ChainOutput>,
    seconds: f64,
) -> DemoRow {
    let n: usize = chains.iter().map(|c| c.draws.len()).sum();
    let accepted: u64 = chains.iter().map(|c| c.accepted).sum();
    let gradients: u64 = chains.iter().map(|c| c.gradients).sum();
    let divergences: u64 = chains.iter().map(|c| c.divergences).sum();
    let weights: Vec<f64> = chains
        .iter()
        .flat_map(|c| c.weights.iter().copied())
        .collect();
    let truth_sd = TARGET.covariance(0, 0).sqrt();

    let estimate = |values: &[f64]| -> (f64, f64) {
        if weighted {
            (
                weighted_mean(values, &weights),
                weighted_variance(values, &weights),
            )
        } else {
            (mean(values), variance(values))
        }
    };

    let mut min_ess = f64::INFINITY;
    let mut max_mean_error: f64 = 0.0;
    let mut marginal_variance_error = 0.0;
    for i in 0..DIMENSION {
        let per_chain: Vec<Vec<f64>> = chains
            .iter()
            .map(|c| c.draws.iter().map(|d| d[i]).collect())
            .collect();
        let refs: Vec<&[f64]> = per_chain.iter().map(|v| v.as_slice()).collect();
        min_ess = min_ess.min(ess_bulk(&refs));
        let all: Vec<f64> = per_chain.concat();
        let (m, v) = estimate(&all);
        max_mean_error = max_mean_error.max(m.abs() / truth_sd);
        marginal_variance_error += (v / TARGET.covariance(i, i) - 1.0).abs() / DIMENSION as f64;
    }
    let scale = 1.0 / (DIMENSION as f64).sqrt();
    let ones: Vec<Vec<f64>> = chains
        .iter()
        .map(|c| {
            c.draws
                .iter()
                .map(|d| d.iter().sum::<f64>() * scale)
                .collect()
        })
        .collect();
    let refs: Vec<&[f64]> = ones.iter().map(|v| v.as_slice()).collect();
    let ess_ones = ess_bulk(&refs);
    let (_, ones_var) = estimate(&ones.concat());
    DemoRow {
        sampler: name.to_string(),
        exact,
        acceptance: accepted as f64 / n as f64,
        gradients_per_draw: gradients as f64 / n as f64,
        min_ess,
        ess_ones,
        gradients_per_ess: gradients as f64 / min_ess.min(ess_ones),
        max_mean_error,
        ones_variance_error: ones_var / TARGET.variance_along_ones() - 1.0,
        marginal_variance_error,
        divergences,
        seconds,
    }
}

/// Runs the four samplers and returns one row each.
pub fn run(settings: &DemoSettings) -> Vec<DemoRow> {
    let mut rows = Vec::new();
    let timed = |runner: &ChainRunner| {
        let t = Instant::now();
        let chains = run_chains(settings, runner);
        (chains, t.elapsed().as_secs_f64())
    };
    let (c, t) = timed(&hmc_chain);
    rows.push(summarize(
        &format!("HMC (M = I, eps {HMC_STEP}, L {HMC_LEAPFROG})"),
        true,
        false,
        c,
        t,
    ));
    let (c, t) = timed(&|seed, s| qnhmc_chain(seed, s, QnhmcMass::Identity, QNHMC_IDENTITY_STEP));
    rows.push(summarize(
        &format!(
            "QNHMC paper M = I, frozen (eps {QNHMC_IDENTITY_STEP}, L {QNHMC_LEAPFROG}, m {MEMORY})"
        ),
        true,
        false,
        c,
        t,
    ));
    let (c, t) = timed(&|seed, s| {
        qnhmc_chain(
            seed,
            s,
            QnhmcMass::InverseHessian,
            QNHMC_INVERSE_HESSIAN_STEP,
        )
    });
    rows.push(summarize(
        &format!(
            "QNHMC M = C, frozen (eps {QNHMC_INVERSE_HESSIAN_STEP}, L {QNHMC_LEAPFROG}, m {MEMORY})"
        ),
        true,
        false,
        c,
        t,
    ));
    let (c, t) = timed(&hamcmc_chain);
    rows.push(summarize(
        &format!("HAMCMC full batch (eps {HAMCMC_STEP} constant, M {HAMCMC_MEMORY}, gamma {HAMCMC_GAMMA}, {HAMCMC_BUDGET_FACTOR}x draws, thinned)"),
        false,
        false,
        c,
        t,
    ));
    rows
}

/// The rows as a Markdown table.
pub fn table(rows: &[DemoRow]) -> String {
    let mut out = String::new();
    out.push_str("| sampler | exact | accept | grads/draw | min ESS | ESS 1-dir | grads/ESS | max mean err/sd | var err 1-dir | var err marg | div | s |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {:.2} | {:.1} | {:.0} | {:.0} | {:.1} | {:.3} | {:+.3} | {:.3} | {} | {:.1} |",
            r.sampler,
            if r.exact { "yes" } else { "no" },
            r.acceptance,
            r.gradients_per_draw,
            r.min_ess,
            r.ess_ones,
            r.gradients_per_ess,
            r.max_mean_error,
            r.ones_variance_error,
            r.marginal_variance_error,
            r.divergences,
            r.seconds
        );
    }
    out
}
