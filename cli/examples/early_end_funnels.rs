//! Does the early end of NUTS's warm-up leave chains stuck in a funnel?
//!
//! For each target and seed, `qnmc run`'s default NUTS (quasi-Newton metric,
//! 4 chains, `--warmup 500`, 1000 kept draws, seed `s`) runs twice: with the
//! early end (`--early-end 2`, the default) and without it (`--early-end 0`:
//! always the whole warm-up). A chain is **stuck** when more than half of
//! its kept draws reached the maximum tree depth (10) or diverged (a chain
//! frozen in a neck, where every trajectory diverges); a run is **unmixed**
//! when the largest rank-normalised split R̂ over its quantities exceeds
//! 1.05. The table gives, per target and setting, the stuck chains, the
//! unmixed runs, the chains whose warm-up ended early, the divergences after
//! warm-up, and the median gradients per chain (warm-up included).
//!
//! ```sh
//! cargo run --release -p qnmc-cli --example early_end_funnels -- [seeds] [targets…]
//! ```
//!
//! Set `QNMC_EARLY_END_VERBOSE=1` to print every run's worst R̂, divergences
//! per chain and step sizes on stderr.
//!
//! Defaults: 20 seeds (1–20); the targets `funnel` (Neal's, 10-D),
//! `eight-schools-centered`, `stochastic-volatility` (centred AR(1), T = 100),
//! the same three with every chain started in the neck (`funnel@neck`, …;
//! see `NeckStart`), and, as controls where the early end should keep firing, `gaussian` and
//! `logreg-german`. Other `--target` names may be given.

use qnmc_cli::{TargetArgs, build_target};
use qnmc_host::diagnostics::rank_normalized_rhat;
use qnmc_host::model::Model;
use qnmc_host::run::{Progress, RunSettings, SamplerKind, run};

/// A target whose chains start in its funnel's neck: the model with another
/// initial point (`name@neck` on the command line). The chains start there
/// plus uniform(−0.1, 0.1) (`init_radius`), and the L-BFGS start cannot
/// leave it: it converges into the funnel's neck (Neal's funnel, mode at
/// v = −40.5) or does not converge at all (the centred hierarchies, whose U
/// falls without bound as the scale goes to zero), and then the chain
/// starts where it was.
struct NeckStart {
    model: Box<dyn Model>,
    start: Vec<f64>,
}

impl NeckStart {
    /// The neck of each funnel target: the scale's log at −5 (τ, σ, or
    /// e^(v/2) ≈ 0.08), every other coordinate at its location.
    fn new(model: Box<dyn Model>) -> Self {
        let mut start = model.initial_point();
        start.iter_mut().for_each(|x| *x = 0.0);
        match model.name().as_str() {
            // (v, x₁…): v = −5.
            "funnel" => start[0] = -5.0,
            // (θ₁…θ₈, μ, log τ).
            "eight-schools-centered" => start[9] = -5.0,
            // (μ, atanh φ, log σ, h₁…h_T): h at μ = −1.
            "stochastic-volatility" => {
                start.iter_mut().for_each(|x| *x = -1.0);
                start[1] = 1.0;
                start[2] = -5.0;
            }
            other => panic!("no neck start for {other}"),
        }
        NeckStart { model, start }
    }
}

impl Model for NeckStart {
    fn name(&self) -> String {
        format!("{}@neck", self.model.name())
    }
    fn dimension(&self) -> usize {
        self.model.dimension()
    }
    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        self.model.potential_and_gradient(x, gradient)
    }
    fn output_names(&self) -> Vec<String> {
        self.model.output_names()
    }
    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        self.model.constrain(x, out)
    }
    fn initial_point(&self) -> Vec<f64> {
        self.start.clone()
    }
}

const DEFAULT_TARGETS: [&str; 8] = [
    "funnel",
    "eight-schools-centered",
    "stochastic-volatility",
    "funnel@neck",
    "eight-schools-centered@neck",
    "stochastic-volatility@neck",
    "gaussian",
    "logreg-german",
];
/// Leapfrog steps of a tree at depth 10 (Stan's default maximum).
const MAX_DEPTH_STEPS: u32 = (1 << 10) - 1;

#[derive(Default)]
struct Tally {
    runs: usize,
    chains: usize,
    stuck: usize,
    unmixed: usize,
    ended_early: usize,
    divergences: usize,
    gradients: Vec<u64>,
    worst_rhat: f64,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seeds: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(20);
    let named: Vec<String> = args.iter().skip(1).cloned().collect();
    let targets: Vec<String> = if named.is_empty() {
        DEFAULT_TARGETS.iter().map(|t| t.to_string()).collect()
    } else {
        named
    };
    println!(
        "| target | early end | runs | stuck chains (> 50 % at max depth or divergent) | runs with R̂ > 1.05 | worst R̂ | warm-ups ended early | divergences after warm-up | median gradients per chain |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for name in &targets {
        let (target, neck) = match name.strip_suffix("@neck") {
            Some(target) => (target, true),
            None => (name.as_str(), false),
        };
        let built = build_target(&TargetArgs {
            target: target.into(),
            ..TargetArgs::default()
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let model: Box<dyn Model> = if neck {
            Box::new(NeckStart::new(built))
        } else {
            built
        };
        for early_end in [2, 0] {
            let mut tally = Tally::default();
            for seed in 1..=seeds {
                let settings = RunSettings {
                    seed,
                    warmup: 500,
                    draws: 1000,
                    early_end: Some(early_end),
                    init_radius: if neck { 0.1 } else { 2.0 },
                    ..RunSettings::default()
                };
                let draws = run(
                    model.as_ref(),
                    SamplerKind::Nuts,
                    &settings,
                    &Progress::hidden(),
                )
                .unwrap_or_else(|e| panic!("{name}, seed {seed}: {e}"));
                let quantities = draws.names.len();
                let mut worst = 1.0f64;
                for j in 0..quantities {
                    let columns: Vec<Vec<f64>> = draws
                        .chains
                        .iter()
                        .map(|c| c.column(j, quantities))
                        .collect();
                    let refs: Vec<&[f64]> = columns.iter().map(|c| c.as_slice()).collect();
                    let r = rank_normalized_rhat(&refs);
                    // A quantity that never moved has no R̂: count it as unmixed.
                    worst = worst.max(if r.is_finite() { r } else { f64::INFINITY });
                }
                if std::env::var_os("QNMC_EARLY_END_VERBOSE").is_some() {
                    let divergent: Vec<usize> = draws
                        .chains
                        .iter()
                        .map(|c| c.divergent.iter().filter(|&&d| d).count())
                        .collect();
                    let steps: Vec<f64> = draws
                        .chains
                        .iter()
                        .map(|c| c.step_size.first().copied().unwrap_or(f64::NAN))
                        .collect();
                    eprintln!(
                        "{name} early end {early_end} seed {seed}: worst R̂ {worst:.3}, divergences {divergent:?}, step sizes {steps:.3?}"
                    );
                }
                tally.runs += 1;
                tally.unmixed += (worst > 1.05) as usize;
                tally.worst_rhat = tally.worst_rhat.max(worst);
                for chain in &draws.chains {
                    let deep = chain
                        .n_leapfrog
                        .iter()
                        .filter(|&&n| n >= MAX_DEPTH_STEPS)
                        .count();
                    tally.chains += 1;
                    let divergent = chain.divergent.iter().filter(|&&d| d).count();
                    let kept = chain.n_leapfrog.len();
                    tally.stuck += (2 * deep > kept || 2 * divergent > kept) as usize;
                    tally.ended_early += (chain.warmup_draws < 500) as usize;
                    tally.divergences += divergent;
                    tally.gradients.push(chain.gradient_evaluations);
                }
            }
            tally.gradients.sort_unstable();
            let median = tally.gradients[tally.gradients.len() / 2];
            println!(
                "| {name} | {} | {} | {} of {} | {} | {:.3} | {} | {} | {} |",
                if early_end > 0 { "on (2)" } else { "off" },
                tally.runs,
                tally.stuck,
                tally.chains,
                tally.unmixed,
                tally.worst_rhat,
                tally.ended_early,
                tally.divergences,
                median
            );
        }
    }
}
