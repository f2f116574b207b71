//! `qnhmc-table1`: Table 1 of Fu, Luo & Zhang (2016), *Quasi-Newton
//! Hamiltonian Monte Carlo* — HMC, HMC-BFGS and QNHMC on the 100-D Gaussian
//! N(0, 11ᵀ + 4I).
//!
//! Settings of the paper (§5.1): ε = 0.01, L = 10 for every sampler, 100K
//! draws from one distant starting point shared by all samplers, the last 50K
//! kept; draws projected on the all-ones direction; Σ_{k=1}^{500} ρ_k and
//! ESS = n / (1 + 2 Σ ρ_k) with m = 500 lags; HMC-BFGS with K = 5 chains.
//! The paper does not print the QNHMC L-BFGS memory for this experiment; we
//! use [`MEMORY`] pairs.

use std::fmt::Write as _;
use std::time::Instant;

use qnmc::{
    Hmc, HmcBfgs, HmcBfgsSettings, HmcSettings, MemoryUpdate, Potential, Qnhmc, QnhmcMass,
    QnhmcSettings, StepStats,
};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use super::report::{machine, number, quick_note, thin};
use super::{ReproduceOptions, Reproduction};
use qnmc_host::chart::{Chart, Scale, Series, SeriesStyle};
use qnmc_host::diagnostics::{autocorrelation, ess_bulk};
use qnmc_host::targets::CorrelatedGaussian;

/// Dimension of the target (the paper's d = 100).
pub const DIMENSION: usize = 100;
/// QNHMC's L-BFGS memory (pairs); not printed in the paper for §5.1.
pub const MEMORY: usize = 10;
/// HMC-BFGS ensemble size (the paper's K = 5).
pub const ENSEMBLE: usize = 5;
/// Leapfrog step size of every sampler (the paper's ε = 0.01).
pub const STEP_SIZE: f64 = 0.01;
/// Leapfrog steps of every sampler (the paper's L = 10).
pub const LEAPFROG_STEPS: u32 = 10;
/// Lags summed in Σρ_k (the paper's m = 500).
pub const MAX_LAG: usize = 500;

/// HMC-BFGS pair capacity K − 2.
const ENSEMBLE_PAIRS: usize = ENSEMBLE - 2;

/// Run lengths: total draws (updates), of which the last `kept` are analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Lengths {
    total: usize,
    kept: usize,
    max_lag: usize,
}

impl Lengths {
    fn new(quick: bool) -> Self {
        if quick {
            Lengths {
                total: 4_000,
                kept: 2_000,
                max_lag: 100,
            }
        } else {
            Lengths {
                total: 100_000,
                kept: 50_000,
                max_lag: MAX_LAG,
            }
        }
    }
}

/// One row of our table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Sampler and settings.
    pub sampler: String,
    /// Σ_{k=1}^{m} ρ_k of the projection on 1/√D (mean over chains for the
    /// ensemble).
    pub sum_autocorrelation: f64,
    /// The paper's ESS n/(1 + 2Σρ_k) (summed over chains for the ensemble).
    pub ess: f64,
    /// Stan's bulk ESS of the same projection (summed over chains for the
    /// ensemble), which truncates the autocorrelation sum adaptively.
    pub ess_bulk: f64,
    /// Wall time of the whole run (burn-in included), seconds.
    pub seconds: f64,
    /// `ess / seconds`.
    pub ess_per_second: f64,
    /// First draw whose xᵀΣ⁻¹x fell below D + 3√(2D) (the χ²_D mean plus
    /// three standard deviations): our burn-in measure (NaN if never).
    pub burn_in_draws: f64,
    /// Acceptance rate over the kept draws.
    pub acceptance: f64,
    /// uᵀHu for u = 1/√D with H the sampler's final L-BFGS inverse Hessian
    /// (QNHMC only, NaN otherwise): the variance it learned along the
    /// all-ones direction, 104 for the true Σ.
    pub learned_variance_along_ones: f64,
    /// Autocorrelations ρ_0 … ρ_m of the projection (chain 0 of the ensemble).
    pub autocorrelation: Vec<f64>,
    /// xᵀΣ⁻¹x of every draw (chain of the first update for the ensemble).
    pub trace: Vec<f64>,
}

/// The paper's Table 1, as printed: (method, Σρ_k, burn-in seconds, ESS, ESS/s).
pub const PAPER_TABLE: [(&str, f64, f64, f64, f64); 3] = [
    ("HMC", 98.27, 81.0, 253.0, 7.22),
    ("HMC-BFGS", 49.74, 47.0, 497.0, 9.65),
    ("QN-HMC", 2.65, 0.93, 7936.0, 93.36),
];

const TARGET: CorrelatedGaussian<DIMENSION> = CorrelatedGaussian {
    independent_variance: 4.0,
    shared_variance: 1.0,
};

/// The shared distant start: every coordinate uniform on [0, 10], so the
/// projection on 1/√D is about 50 (five standard deviations out).
fn start(seed: u64) -> [f64; DIMENSION] {
    let mut rng = XorShiftRng::seed_from_u64(seed ^ 0x51a7);
    let mut x = [0.0; DIMENSION];
    for v in x.iter_mut() {
        let u: f64 = qnmc::Real::uniform_open_closed(&mut rng);
        *v = 10.0 * u;
    }
    x
}

fn projection(x: &[f64; DIMENSION]) -> f64 {
    x.iter().sum::<f64>() / (DIMENSION as f64).sqrt()
}

fn mahalanobis(x: &[f64; DIMENSION]) -> f64 {
    let mut g = [0.0; DIMENSION];
    2.0 * TARGET.potential_and_gradient(x, &mut g)
}

/// Σ_{k=1}^{m} ρ_k and the paper's ESS of one series.
fn paper_ess(series: &[f64], max_lag: usize) -> (f64, f64, Vec<f64>) {
    let rho = autocorrelation(series, max_lag);
    let sum: f64 = rho.iter().skip(1).sum();
    (sum, series.len() as f64 / (1.0 + 2.0 * sum), rho)
}

fn burn_in(trace: &[f64]) -> f64 {
    let threshold = DIMENSION as f64 + 3.0 * (2.0 * DIMENSION as f64).sqrt();
    trace
        .iter()
        .position(|&v| v <= threshold)
        .map_or(f64::NAN, |i| (i + 1) as f64)
}

/// A single-chain sampler's output: projections, trace, acceptances.
struct SingleChain {
    projections: Vec<f64>,
    trace: Vec<f64>,
    accepted: usize,
}

fn run_single(
    lengths: Lengths,
    mut step: impl FnMut() -> (StepStats<f64>, [f64; DIMENSION]),
) -> SingleChain {
    let mut out = SingleChain {
        projections: Vec::with_capacity(lengths.kept),
        trace: Vec::with_capacity(lengths.total),
        accepted: 0,
    };
    let burn = lengths.total - lengths.kept;
    for k in 0..lengths.total {
        let (stats, x) = step();
        out.trace.push(mahalanobis(&x));
        if k >= burn {
            out.projections.push(projection(&x));
            out.accepted += stats.accepted as usize;
        }
    }
    out
}

fn single_row(
    name: String,
    chain: SingleChain,
    seconds: f64,
    lengths: Lengths,
    learned_variance_along_ones: f64,
) -> Row {
    let (sum, ess, rho) = paper_ess(&chain.projections, lengths.max_lag);
    Row {
        sampler: name,
        sum_autocorrelation: sum,
        ess,
        ess_bulk: ess_bulk(&[&chain.projections]),
        seconds,
        ess_per_second: ess / seconds,
        burn_in_draws: burn_in(&chain.trace),
        acceptance: chain.accepted as f64 / lengths.kept as f64,
        learned_variance_along_ones,
        autocorrelation: rho,
        trace: chain.trace,
    }
}

fn hmc_row(seed: u64, lengths: Lengths) -> Row {
    let t = Instant::now();
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let settings = HmcSettings::new(STEP_SIZE, LEAPFROG_STEPS);
    // The Gaussian target is finite everywhere and the settings are constants:
    // construction cannot fail.
    let mut sampler = Hmc::<f64, DIMENSION>::new(settings, start(seed), &TARGET)
        .expect("constant, valid HMC settings");
    let chain = run_single(lengths, || {
        let stats = sampler.step(&TARGET, &mut rng);
        (stats, *sampler.position())
    });
    let seconds = t.elapsed().as_secs_f64();
    single_row(
        format!("HMC (M = I, ε {STEP_SIZE}, L {LEAPFROG_STEPS})"),
        chain,
        seconds,
        lengths,
        f64::NAN,
    )
}

fn qnhmc_row(seed: u64, lengths: Lengths, mass: QnhmcMass) -> Row {
    let t = Instant::now();
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let mut settings = QnhmcSettings::new(STEP_SIZE, LEAPFROG_STEPS, MEMORY);
    settings.mass = mass;
    settings.memory_update = MemoryUpdate::FreezeAfter((lengths.total - lengths.kept) as u64);
    let mut sampler = Box::new(
        Qnhmc::<f64, DIMENSION, MEMORY>::new(settings, start(seed), &TARGET)
            .expect("constant, valid QNHMC settings"),
    );
    let chain = run_single(lengths, || {
        let stats = sampler.step(&TARGET, &mut rng);
        (stats, *sampler.position())
    });
    let seconds = t.elapsed().as_secs_f64();
    let u = [1.0 / (DIMENSION as f64).sqrt(); DIMENSION];
    let mut hu = [0.0; DIMENSION];
    sampler.memory().apply_inverse_hessian(&u, &mut hu);
    let learned: f64 = u.iter().zip(&hu).map(|(a, b)| a * b).sum();
    let label = match mass {
        QnhmcMass::Identity => "QNHMC, paper's M = I",
        QnhmcMass::InverseHessian => "QNHMC, our M = C option (not in the paper)",
    };
    single_row(
        format!(
            "{label} (ε {STEP_SIZE}, L {LEAPFROG_STEPS}, m {MEMORY}, memory frozen after burn-in)"
        ),
        chain,
        seconds,
        lengths,
        learned,
    )
}

fn hmc_bfgs_row(seed: u64, lengths: Lengths) -> Row {
    let t = Instant::now();
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let settings = HmcBfgsSettings::new(STEP_SIZE, LEAPFROG_STEPS);
    // Every chain starts near the shared start (small jitter so the first
    // pairs exist).
    let base = start(seed);
    let mut jitter = XorShiftRng::seed_from_u64(seed ^ 0xb1f9);
    let starts: [[f64; DIMENSION]; ENSEMBLE] = core::array::from_fn(|_| {
        let mut x = base;
        for v in x.iter_mut() {
            *v += qnmc::random::standard_normal::<f64, _>(&mut jitter);
        }
        x
    });
    let mut sampler = Box::new(
        HmcBfgs::<f64, DIMENSION, ENSEMBLE, ENSEMBLE_PAIRS>::new(settings, starts, &TARGET)
            .expect("constant, valid HMC-BFGS settings"),
    );
    // An update moves one chain; `lengths.total` updates = total / K sweeps.
    let sweeps = lengths.total / ENSEMBLE;
    let kept_sweeps = lengths.kept / ENSEMBLE;
    let mut per_chain: Vec<Vec<f64>> = (0..ENSEMBLE)
        .map(|_| Vec::with_capacity(kept_sweeps))
        .collect();
    let mut trace = Vec::with_capacity(lengths.total);
    let mut accepted = 0usize;
    for sweep in 0..sweeps {
        for _ in 0..ENSEMBLE {
            let chain = sampler.next_chain();
            let stats = sampler.step(&TARGET, &mut rng);
            let x = sampler.positions()[chain];
            trace.push(mahalanobis(&x));
            if sweep >= sweeps - kept_sweeps {
                accepted += stats.accepted as usize;
            }
        }
        if sweep >= sweeps - kept_sweeps {
            for (k, series) in per_chain.iter_mut().enumerate() {
                series.push(projection(&sampler.positions()[k]));
            }
        }
    }
    let seconds = t.elapsed().as_secs_f64();
    let max_lag = lengths.max_lag.min(kept_sweeps / 4);
    let mut sum = 0.0;
    let mut ess = 0.0;
    let mut bulk = 0.0;
    let mut rho0 = Vec::new();
    for (k, series) in per_chain.iter().enumerate() {
        let (s, e, rho) = paper_ess(series, max_lag);
        sum += s / ENSEMBLE as f64;
        ess += e;
        bulk += ess_bulk(&[series]);
        if k == 0 {
            rho0 = rho;
        }
    }
    Row {
        sampler: format!(
            "HMC-BFGS (K {ENSEMBLE}, ε {STEP_SIZE}, L {LEAPFROG_STEPS}; per-chain, lags in sweeps ≤ {max_lag})"
        ),
        sum_autocorrelation: sum,
        ess,
        ess_bulk: bulk,
        seconds,
        ess_per_second: ess / seconds,
        burn_in_draws: burn_in(&trace),
        acceptance: accepted as f64 / (kept_sweeps * ENSEMBLE) as f64,
        learned_variance_along_ones: f64::NAN,
        autocorrelation: rho0,
        trace,
    }
}

/// Runs the four samplers (sequentially, so each wall time is its own) and
/// returns our rows: HMC, HMC-BFGS, QNHMC M = I, QNHMC M = C.
pub fn rows(options: &ReproduceOptions) -> Vec<Row> {
    let lengths = Lengths::new(options.quick);
    let seed = options.seed;
    vec![
        hmc_row(seed, lengths),
        hmc_bfgs_row(seed, lengths),
        qnhmc_row(seed, lengths, QnhmcMass::Identity),
        qnhmc_row(seed, lengths, QnhmcMass::InverseHessian),
    ]
}

/// Runs the experiment and writes the report.
pub fn run(options: &ReproduceOptions) -> Reproduction {
    let lengths = Lengths::new(options.quick);
    let rows = rows(options);
    Reproduction {
        skipped: Vec::new(),
        name: "qnhmc-table1".to_string(),
        title: "QNHMC (Fu, Luo & Zhang 2016), Table 1: 100-D Gaussian N(0, 11ᵀ + 4I)".to_string(),
        markdown: markdown(&rows, lengths, options),
        charts: charts(&rows),
    }
}

fn markdown(rows: &[Row], lengths: Lengths, options: &ReproduceOptions) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# QNHMC paper, Table 1: HMC vs HMC-BFGS vs QNHMC on N(0, 11ᵀ + 4I), D = {DIMENSION}\n"
    );
    md.push_str(quick_note(options.quick));
    let _ = writeln!(
        md,
        "Settings (paper §5.1): ε = {STEP_SIZE}, L = {LEAPFROG_STEPS} for every sampler; \
         {} draws from one distant start (every coordinate uniform on [0, 10], seed {}), \
         the last {} analysed; draws projected on 1/√D; Σρ_k over k = 1 … {}; \
         ESS = n / (1 + 2Σρ_k). QNHMC L-BFGS memory m = {MEMORY} (not printed in the paper). \
         HMC-BFGS: K = {ENSEMBLE} chains, {} updates = {} sweeps; its Σρ_k is the mean \
         over chains and its ESS the sum over chains (Zhang & Sutton's convention), lags \
         counted in sweeps.\n",
        lengths.total,
        options.seed,
        lengths.kept,
        lengths.max_lag,
        lengths.total,
        lengths.total / ENSEMBLE,
    );
    md.push_str("## The paper's numbers (Fu, Luo & Zhang 2016, Table 1, as printed)\n\n");
    md.push_str("| method | Σρ_k | burn-in (s) | ESS | ESS/s |\n|---|---|---|---|---|\n");
    for (name, s, b, e, r) in PAPER_TABLE {
        let _ = writeln!(md, "| {name} | {s} | {b} | {e} | {r} |");
    }
    md.push_str("\n## Ours\n\n");
    md.push_str(
        "| sampler | Σρ_k | ESS (paper's formula) | ESS bulk (Stan) | accept | burn-in (draws) | seconds | ESS/s | uᵀHu (true 104) |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {:.2} | {} | {:.2} | {} | {} |",
            r.sampler,
            number(r.sum_autocorrelation),
            number(r.ess),
            number(r.ess_bulk),
            r.acceptance,
            number(r.burn_in_draws),
            r.seconds,
            number(r.ess_per_second),
            number(r.learned_variance_along_ones)
        );
    }
    let _ = writeln!(
        md,
        "\nBurn-in is measured in draws (the first draw with xᵀΣ⁻¹x ≤ D + 3√(2D), the χ²_D \
         mean plus three standard deviations), not in seconds as the paper reads it off its \
         Figure 1. Seconds and ESS/s depend on the machine: {}.\n",
        machine()
    );
    md.push_str(DISCUSSION);
    md
}

const DISCUSSION: &str = "## Where we differ, and why\n\n\
We do **not** reproduce the paper's ranking at its settings: with ε = 0.01 and L = 10 \
every sampler here, QNHMC included, is a slow random walk along the all-ones direction. \
What we can say about why:\n\n\
- **HMC at ε = 0.01, L = 10 barely moves.** A trajectory has length εL = 0.1 while the \
standard deviation along 1 is √104 ≈ 10.2 (2 in every other direction), so a draw \
rotates the all-ones component by about 0.01 rad: its autocorrelation stays near 1 over \
all 500 lags and Σρ_k comes out near its ceiling of 500, not the paper's 98.27. We see no \
way to get the paper's HMC figure from the stated ε and L on this target.\n\
- **QNHMC only helps along directions its memory has learned.** Its pairs are the \
(Δq, Δ∇U) of the leapfrog steps of accepted trajectories (ALGORITHMS.md §3), so the m = 10 \
pairs kept come from the last trajectory or two and are nearly collinear: the memory \
learns the curvature along about one direction, γ = 1 elsewhere. The last column shows \
the variance the final memory assigns to the all-ones direction (the truth is 104): \
when it is far below 104, QNHMC moves along 1 exactly like HMC. The paper does not say \
how its pairs are formed in §5.1, nor its m, γ or whether B is frozen; a memory that \
held the all-ones direction would give M = I an inverse mass 104² along it and about \
1 rad per draw, which is the kind of mixing the paper reports.\n\
- **M = I versus M = C** (ALGORITHMS.md §3): with C fixed, QNHMC is HMC with inverse \
mass C M⁻¹ C, i.e. C² for the paper's M = I and C for our M = C option. M = C is the \
ideal preconditioning only at a step size near 1 (see `qnmc demo`); at ε = 0.01 it is \
not better. It is an extra row, not in the paper.\n\
- **HMC-BFGS** builds its metric from the K − 1 = 4 other chains (3 pairs), so it knows \
the curvature only along the directions in which the other chains differ; every other \
direction moves as in HMC. Its lags are sweeps (K updates), so each lag costs K times the \
gradients of a lag of the single-chain samplers.\n\
- **ESS definitions.** The paper's ESS = n/(1 + 2Σ_{k≤500} ρ_k) cannot fall below \
n/1001 however slow the chain, so it overstates the ESS of a chain that is still \
correlated at lag 500; Stan's bulk ESS (adaptive truncation, rank-normalised) is printed \
beside it and is the number to trust.\n\
- **Memory.** The paper updates the QNHMC memory throughout (an adaptive chain); we \
freeze it after the burn-in so the analysed draws come from an exact, MH-corrected chain.\n\
- **Timing** depends on the machine; the paper's machine and language are not stated, so \
compare ESS, not ESS/s, across machines.\n";

fn charts(rows: &[Row]) -> Vec<Chart> {
    let acf = Chart {
        file_stem: "qnhmc-table1-autocorrelation".to_string(),
        title: "Autocorrelation along the all-ones direction".to_string(),
        x_label: "lag".to_string(),
        y_label: "ρ_k".to_string(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series: rows
            .iter()
            .map(|r| Series {
                label: short_label(&r.sampler),
                points: r
                    .autocorrelation
                    .iter()
                    .enumerate()
                    .map(|(k, v)| (k as f64, *v))
                    .collect(),
                style: SeriesStyle::Line,
            })
            .collect(),
        categories: Vec::new(),
    };
    let burn = Chart {
        file_stem: "qnhmc-table1-burn-in".to_string(),
        title: "Convergence to the HPD region (paper's Figure 1)".to_string(),
        x_label: "draw".to_string(),
        y_label: "xᵀΣ⁻¹x".to_string(),
        x_scale: Scale::Log10,
        y_scale: Scale::Log10,
        series: rows
            .iter()
            .map(|r| {
                let pts: Vec<(f64, f64)> = r
                    .trace
                    .iter()
                    .enumerate()
                    .map(|(i, v)| ((i + 1) as f64, *v))
                    .collect();
                Series {
                    label: short_label(&r.sampler),
                    points: thin(&pts, 2000),
                    style: SeriesStyle::Line,
                }
            })
            .collect(),
        categories: Vec::new(),
    };
    vec![acf, burn]
}

/// The sampler name without its settings in parentheses.
fn short_label(sampler: &str) -> String {
    sampler
        .split(" (")
        .next()
        .unwrap_or(sampler)
        .trim()
        .to_string()
}
