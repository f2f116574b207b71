//! `zhang-sutton-fig2`: Fig. 2 of Zhang & Sutton (2011), *Quasi-Newton
//! Methods for Markov Chain Monte Carlo* — the autocorrelation of HMC and
//! HMC-BFGS draws projected on the leading eigenvector of the 1000-D
//! Gaussian N(0, 11ᵀ + 4I), plus the ESS along that direction.
//!
//! The paper (§6, last paragraph) prints only the target, D = 1000 and
//! K = 5 chains; ε, L, the run length and the starts are not printed for
//! this figure. Our rule: the paper's own protocol for comparing the two
//! samplers (§6, logistic regression): L = 40 for HMC and 20 for HMC-BFGS,
//! ε uniform on [0.9ε̂, ε̂] with ε̂ tuned during burn-in (dual averaging to
//! acceptance 0.8, as in our Table 2), 5000 kept draws per chain after 1000
//! burn-in draws, N(0, I) starts, 10 runs. The sensitivity setting is the
//! paper's other printed choice (§6, CRF): ε = 0.02 fixed, L = 10 for both.
//!
//! Σ = 11ᵀ + 4I has eigenvalue D + 4 = 1004 along u = 1/√D and 4 in every
//! other direction, so the projection is uᵀx. Lags are per-chain draws
//! (for HMC-BFGS a sweep of K updates), as the paper's ACF of "samples".

use std::time::Instant;

use qnmc::adaptation::{DualAveragingSettings, Warmup};
use qnmc::{Hmc, HmcBfgs, HmcBfgsSettings, HmcSettings, StepStats};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use super::{ReproduceOptions, Reproduction};
use qnmc_host::diagnostics::{autocorrelation, ess_basic};
use qnmc_host::targets::CorrelatedGaussian;

mod summary;

use summary::{charts, markdown};

/// Dimension of the target (the paper's 1000), for the full and quick runs.
pub const DIMENSION: usize = 1000;
/// HMC-BFGS ensemble size (the paper's K = 5 for this figure).
pub const ENSEMBLE: usize = 5;
/// Largest lag of the ACF (the x axis of the paper's Fig. 2 ends at 200).
pub const MAX_LAG: usize = 200;
/// Acceptance that dual averaging aims at (Stan's 0.8, as in Table 2).
pub const TARGET_ACCEPTANCE: f64 = 0.8;
/// The step size is uniform on [0.9ε̂, ε̂]: ε̄(1 ± j) with ε̄ = 0.95ε̂.
const JITTER: f64 = 0.05 / 0.95;
/// HMC-BFGS pair capacity K − 2.
const PAIRS: usize = ENSEMBLE - 2;

/// How ε and L are chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setting {
    /// Short name used in tables and chart file names.
    pub name: &'static str,
    /// HMC leapfrog steps.
    pub hmc_leapfrog: u32,
    /// HMC-BFGS leapfrog steps.
    pub bfgs_leapfrog: u32,
    /// `None`: ε̂ tuned during burn-in, ε uniform on [0.9ε̂, ε̂]; `Some(ε)`: fixed.
    pub fixed_step: Option<f64>,
}

/// The headline setting: §6's protocol (L 40 / 20, ε̂ tuned, jittered).
pub const TUNED: Setting = Setting {
    name: "tuned",
    hmc_leapfrog: super::zhang_sutton_table2::HMC_LEAPFROG,
    bfgs_leapfrog: super::zhang_sutton_table2::HMC_BFGS_LEAPFROG,
    fixed_step: None,
};

/// The sensitivity setting: §6's CRF choice, ε = 0.02, L = 10 for both.
pub const CRF: Setting = Setting {
    name: "crf",
    hmc_leapfrog: 10,
    bfgs_leapfrog: 10,
    fixed_step: Some(0.02),
};

/// Run lengths, in per-chain draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lengths {
    /// Burn-in draws per chain (ε̂ is tuned during them).
    pub burn_in: usize,
    /// Kept draws per chain.
    pub kept: usize,
    /// Runs of the headline setting.
    pub runs: usize,
    /// Runs of the sensitivity setting.
    pub sensitivity_runs: usize,
}

impl Lengths {
    /// The paper's 5000 after 1000 and 10 runs (3 for the sensitivity
    /// setting); quick: 1000 after 200, 2 runs and 1.
    pub fn new(quick: bool) -> Self {
        if quick {
            Lengths {
                burn_in: 200,
                kept: 1000,
                runs: 2,
                sensitivity_runs: 1,
            }
        } else {
            Lengths {
                burn_in: 1000,
                kept: 5000,
                runs: 10,
                sensitivity_runs: 3,
            }
        }
    }
}

/// One sampler's run: projections and statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// ε̂ (tuned, or the fixed ε).
    pub max_step_size: f64,
    /// Acceptance rate of the kept updates.
    pub acceptance: f64,
    /// ρ₀ … ρ_MAX_LAG of uᵀx (HMC-BFGS: mean over chains of each chain's ACF).
    pub autocorrelation: Vec<f64>,
    /// ESS of uᵀx per chain (HMC-BFGS: mean over chains), Stan's basic ESS.
    pub ess_per_chain: f64,
    /// ESS summed over chains (the paper's convention; HMC: its one chain).
    pub ess_total: f64,
    /// Gradient evaluations of the run (burn-in included).
    pub gradients: f64,
    /// Wall time of the run (burn-in included), seconds.
    pub seconds: f64,
    /// Variance of the kept uᵀx (true value D + 4).
    pub variance: f64,
    /// HMC-BFGS: uᵀHu of the metric, averaged over the kept updates — the
    /// variance the L-BFGS inverse Hessian gives the leading direction (true
    /// D + 4). NaN for HMC.
    pub learned_variance: f64,
}

/// Both samplers' runs under one setting.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingResult {
    /// The setting.
    pub setting: Setting,
    /// HMC runs, one per seed.
    pub hmc: Vec<Run>,
    /// HMC-BFGS runs, same seeds.
    pub bfgs: Vec<Run>,
}

fn leading(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / (x.len() as f64).sqrt()
}

fn variance(x: &[f64]) -> f64 {
    let m = x.iter().sum::<f64>() / x.len() as f64;
    x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() - 1) as f64
}

fn start<const D: usize>(rng: &mut XorShiftRng) -> [f64; D] {
    core::array::from_fn(|_| qnmc::random::standard_normal::<f64, _>(rng))
}

/// Warm-up for `burn_in` updates: dual averaging (tuned) or a fixed ε
/// (`None`: nothing to adapt).
fn warmup(setting: Setting, burn_in: usize) -> Option<Warmup<f64>> {
    if setting.fixed_step.is_some() {
        return None;
    }
    let mut adaptation = DualAveragingSettings::stan(0.1);
    adaptation.target_acceptance = TARGET_ACCEPTANCE;
    Some(Warmup::new(adaptation, burn_in as u64, JITTER).expect("constant, valid settings"))
}

fn initial_step(setting: Setting) -> f64 {
    setting.fixed_step.unwrap_or(0.1)
}

/// One HMC run on N(0, 11ᵀ + 4I) in dimension D.
pub fn hmc_run<const D: usize>(setting: Setting, lengths: Lengths, seed: u64) -> Run {
    let t = Instant::now();
    let target = CorrelatedGaussian::<D>::paper();
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let settings = HmcSettings::new(initial_step(setting), setting.hmc_leapfrog);
    let mut sampler = Hmc::<f64, D>::new(settings, start(&mut rng), &target)
        .expect("finite start and valid settings");
    let mut warm = warmup(setting, lengths.burn_in);
    if let Some(w) = warm.as_mut() {
        w.start(&mut sampler, &mut rng).expect("positive step");
    }
    let mut series = Vec::with_capacity(lengths.kept);
    let (mut accepted, mut gradients) = (0usize, 0u64);
    for k in 0..lengths.burn_in + lengths.kept {
        let stats: StepStats<f64> = sampler.step(&target, &mut rng);
        gradients += stats.gradient_evaluations as u64;
        if k >= lengths.burn_in {
            accepted += stats.accepted as usize;
            series.push(leading(sampler.position()));
        }
        if let Some(w) = warm.as_mut() {
            let _ = w.after_draw(&mut sampler, &stats, &mut rng);
        }
    }
    let max_step = warm.map_or(initial_step(setting), |w| {
        w.final_step_size() * (1.0 + JITTER)
    });
    let ess = ess_basic(&[&series]);
    Run {
        max_step_size: max_step,
        acceptance: accepted as f64 / lengths.kept as f64,
        autocorrelation: autocorrelation(&series, MAX_LAG),
        ess_per_chain: ess,
        ess_total: ess,
        gradients: gradients as f64,
        seconds: t.elapsed().as_secs_f64(),
        variance: variance(&series),
        learned_variance: f64::NAN,
    }
}

/// One HMC-BFGS run (K = [`ENSEMBLE`] chains) in dimension D: `burn_in` and
/// `kept` count sweeps (K updates each); ε̂ is tuned over the burn-in updates.
pub fn hmc_bfgs_run<const D: usize>(setting: Setting, lengths: Lengths, seed: u64) -> Run {
    let t = Instant::now();
    let target = CorrelatedGaussian::<D>::paper();
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let starts: [[f64; D]; ENSEMBLE] = core::array::from_fn(|_| start(&mut rng));
    let settings = HmcBfgsSettings::new(initial_step(setting), setting.bfgs_leapfrog);
    let mut sampler = Box::new(
        HmcBfgs::<f64, D, ENSEMBLE, PAIRS>::new(settings, starts, &target)
            .expect("finite starts and valid settings"),
    );
    let mut warm = warmup(setting, lengths.burn_in * ENSEMBLE);
    if let Some(w) = warm.as_mut() {
        w.start(&mut *sampler, &mut rng).expect("positive step");
    }
    let u = [1.0 / (D as f64).sqrt(); D];
    let mut hu = Box::new([0.0; D]);
    let mut series: Vec<Vec<f64>> = (0..ENSEMBLE)
        .map(|_| Vec::with_capacity(lengths.kept))
        .collect();
    let (mut accepted, mut gradients, mut learned) = (0usize, 0u64, 0.0);
    for sweep in 0..lengths.burn_in + lengths.kept {
        let kept = sweep >= lengths.burn_in;
        for _ in 0..ENSEMBLE {
            let stats = sampler.step(&target, &mut rng);
            gradients += stats.gradient_evaluations as u64;
            if kept {
                accepted += stats.accepted as usize;
                sampler.memory().apply_inverse_hessian(&u, &mut hu);
                learned += u.iter().zip(hu.iter()).map(|(a, b)| a * b).sum::<f64>();
            }
            if let Some(w) = warm.as_mut() {
                let _ = w.after_draw(&mut *sampler, &stats, &mut rng);
            }
        }
        if kept {
            for (chain, x) in series.iter_mut().zip(sampler.positions()) {
                chain.push(leading(x));
            }
        }
    }
    let max_step = warm.map_or(initial_step(setting), |w| {
        w.final_step_size() * (1.0 + JITTER)
    });
    let updates = (lengths.kept * ENSEMBLE) as f64;
    // A chain that never moved has NaN ESS; it counts as 0 (as in Table 2).
    let ess: Vec<f64> = series
        .iter()
        .map(|s| {
            let e = ess_basic(&[s]);
            if e.is_nan() { 0.0 } else { e }
        })
        .collect();
    let mut acf = vec![0.0; MAX_LAG + 1];
    for s in &series {
        for (a, r) in acf.iter_mut().zip(autocorrelation(s, MAX_LAG)) {
            *a += r / ENSEMBLE as f64;
        }
    }
    Run {
        max_step_size: max_step,
        acceptance: accepted as f64 / updates,
        autocorrelation: acf,
        ess_per_chain: ess.iter().sum::<f64>() / ENSEMBLE as f64,
        ess_total: ess.iter().sum(),
        gradients: gradients as f64,
        seconds: t.elapsed().as_secs_f64(),
        variance: series.iter().map(|s| variance(s)).sum::<f64>() / ENSEMBLE as f64,
        learned_variance: learned / updates,
    }
}

/// Both samplers under `setting` for `runs` seeds (seed + 1000·r), in
/// dimension D.
pub fn run_setting<const D: usize>(
    setting: Setting,
    lengths: Lengths,
    runs: usize,
    seed: u64,
) -> SettingResult {
    let seeds: Vec<u64> = (0..runs as u64)
        .map(|r| seed.wrapping_add(1000 * r))
        .collect();
    SettingResult {
        setting,
        hmc: seeds
            .iter()
            .map(|&s| hmc_run::<D>(setting, lengths, s))
            .collect(),
        bfgs: seeds
            .iter()
            .map(|&s| hmc_bfgs_run::<D>(setting, lengths, s))
            .collect(),
    }
}

/// Runs the experiment (both settings, D = [`DIMENSION`]) and writes the
/// report.
pub fn run(options: &ReproduceOptions) -> Reproduction {
    let lengths = Lengths::new(options.quick);
    let t = Instant::now();
    let results = vec![
        run_setting::<DIMENSION>(TUNED, lengths, lengths.runs, options.seed),
        run_setting::<DIMENSION>(CRF, lengths, lengths.sensitivity_runs, options.seed),
    ];
    let seconds = t.elapsed().as_secs_f64();
    Reproduction {
        name: "zhang-sutton-fig2".to_string(),
        title: "Zhang & Sutton (2011), Fig. 2: ACF along the leading eigenvector of N(0, 11ᵀ + 4I), D = 1000"
            .to_string(),
        markdown: markdown(&results, DIMENSION, lengths, options, seconds),
        charts: charts(&results),
        skipped: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
