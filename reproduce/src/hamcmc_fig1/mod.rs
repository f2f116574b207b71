//! `hamcmc-fig1`: Figure 1 of Şimşekli, Badeau, Cemgil & Richard (2016),
//! *Stochastic Quasi-Newton Langevin Monte Carlo* — samples of SGLD, pSGLD,
//! SGRLD (with the inverse expected Fisher information of the full problem)
//! and HAMCMC (M = 2) on a correlated 2-D posterior of the linear Gaussian
//! model (§5.1, eq. 14), drawn over the contours of the exact posterior.
//!
//! Paper settings: D = 2, σ_x² = 10, T = 20 000 samples of which the first
//! half is burn-in, subsample size N_Ω = N/100, ε_t = (a_ε/t)^0.51 with the
//! a_ε of its Appendix B, Table 1 (row D = 2). The paper prints neither N nor
//! how the regressors aₙ are drawn; we keep `hamcmc-fig2`'s choices
//! ([`hamcmc_fig2::OBSERVATIONS`], [`hamcmc_fig2::correlation`], data seed
//! `seed ^ D`) so the two figures use one construction.
//!
//! The figure is a picture; to check it we measure each chain's kept samples
//! against the exact posterior N(μ, Σ) ([`Fit`]) over several chain seeds,
//! at the paper's step sizes and at each sampler's best a_ε from a sweep
//! (the paper says it tuned every method "with the same rigor").

use qnmc::metric::DenseMetric;
use qnmc::{
    DenseSgrld, DenseSgrldSettings, Hamcmc, HamcmcSettings, Psgld, PsgldSettings, Sgld,
    SgldSettings, StepSizeSchedule,
};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use super::hamcmc_fig2::{self, BATCH, EXPONENT, NOISE_VARIANCE, OBSERVATIONS};
use super::{ReproduceOptions, Reproduction};
use qnmc_host::targets::{LinearGaussianModel, Posterior};

mod fit;
mod noise;
mod report;
#[cfg(test)]
mod tests;

pub use fit::{CHI2_2_95, Fit};

/// The dimension D (the paper's 2, "for visualization purposes").
pub const DIMENSION: usize = 2;
/// Samples T per chain (the paper's 20 000); the first half is burn-in.
pub const SAMPLES: usize = 20_000;
/// Samples of a quick run.
pub const QUICK_SAMPLES: usize = 4_000;
/// Chain seeds per sampler and setting (evaluation).
pub const SEEDS: usize = 10;
/// Chain seeds of a quick run.
pub const QUICK_SEEDS: usize = 3;
/// Chain seeds per point of the a_ε sweep (distinct from the evaluation
/// seeds, so the tuned rows are not scored on the chains that chose them).
pub const TUNING_SEEDS: usize = 5;
/// Factors of the a_ε sweep, relative to the paper's a_ε.
pub const SWEEP: [f64; 9] = [1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3];
/// pSGLD's α and λ (Table 1).
pub const PSGLD_DECAY: f64 = 0.9;
/// pSGLD's λ (Table 1).
pub const PSGLD_REGULARIZER: f64 = 1e-3;
/// HAMCMC's γ (Table 1).
pub const HAMCMC_GAMMA: f64 = 50.0;
/// HAMCMC's trust region λ (Table 1).
pub const HAMCMC_TRUST_REGION: f64 = 1.0;
/// HAMCMC's memory M (the figure's caption).
pub const HAMCMC_MEMORY: usize = 2;

/// The model of the figure: D = 2, batches of N/100.
pub type Model = LinearGaussianModel<DIMENSION, BATCH>;

/// The four samplers of the figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// SGLD.
    Sgld,
    /// pSGLD (RMSprop diagonal, correction term dropped, as Li et al.).
    Psgld,
    /// SGRLD with G⁻¹ = (Σ aₙaₙᵀ/σ² + I)⁻¹ ([`DenseSgrld`]).
    Sgrld,
    /// HAMCMC with M = 2.
    Hamcmc,
}

impl Method {
    /// The figure's panels, in its order.
    pub const ALL: [Method; 4] = [Method::Sgld, Method::Psgld, Method::Sgrld, Method::Hamcmc];

    /// Name in tables and charts.
    pub fn label(self) -> &'static str {
        match self {
            Method::Sgld => "SGLD",
            Method::Psgld => "pSGLD",
            Method::Sgrld => "SGRLD (dense Fisher)",
            Method::Hamcmc => "HAMCMC M = 2",
        }
    }

    /// File-name part.
    pub fn slug(self) -> &'static str {
        match self {
            Method::Sgld => "sgld",
            Method::Psgld => "psgld",
            Method::Sgrld => "sgrld",
            Method::Hamcmc => "hamcmc",
        }
    }

    /// The paper's a_ε for D = 2 (Appendix B, Table 1).
    pub fn paper_scale(self) -> f64 {
        match self {
            Method::Sgld => 1e-5,
            Method::Psgld => 5e-2,
            Method::Sgrld => 5e-2,
            Method::Hamcmc => 1e-6,
        }
    }

    fn index(self) -> u64 {
        match self {
            Method::Sgld => 1,
            Method::Psgld => 2,
            Method::Sgrld => 3,
            Method::Hamcmc => 4,
        }
    }
}

/// The kept samples (after burn-in) of one chain.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// θ_t for t in (T/2, T].
    pub samples: Vec<[f64; DIMENSION]>,
    /// The step that failed (non-finite), if one did; `samples` is then
    /// what was kept before it.
    pub failure: Option<String>,
}

/// The data set, its exact posterior and the SGRLD metric built from it.
pub struct Problem {
    /// The simulated model.
    pub model: Model,
    /// The exact posterior N(μ, Σ), Σ = (Σ aₙaₙᵀ/σ² + I)⁻¹.
    pub posterior: Posterior<DIMENSION>,
    /// G⁻¹ = Σ (the inverse expected Fisher information of the full
    /// problem, prior included), factored once.
    pub inverse_fisher: DenseMetric<f64, DIMENSION>,
}

impl Problem {
    /// The data of `hamcmc-fig2`'s construction at D = 2 with data seed
    /// `seed ^ 2`.
    pub fn simulate(seed: u64) -> Result<Problem, String> {
        let model = Model::simulate(
            OBSERVATIONS,
            NOISE_VARIANCE,
            hamcmc_fig2::correlation(DIMENSION),
            seed ^ DIMENSION as u64,
        );
        let posterior = model.posterior();
        let inverse_fisher = DenseMetric::new(&posterior.covariance)
            .map_err(|e| format!("the inverse Fisher matrix is not usable: {e}"))?;
        Ok(Problem {
            model,
            posterior,
            inverse_fisher,
        })
    }
}

/// ε_t = (a/t)^κ.
fn decaying(a: f64, t: usize) -> f64 {
    (a / t as f64).powf(EXPONENT)
}

/// Runs `samples` steps of `step(t)` (which returns θ_t) and keeps the
/// second half; stops at the first error.
fn collect(
    samples: usize,
    mut step: impl FnMut(usize) -> Result<[f64; DIMENSION], qnmc::Error>,
) -> Chain {
    let burn_in = samples / 2;
    let mut kept = Vec::with_capacity(samples - burn_in);
    for t in 1..=samples {
        match step(t) {
            Ok(x) => {
                if t > burn_in {
                    kept.push(x);
                }
            }
            Err(e) => {
                return Chain {
                    samples: kept,
                    failure: Some(format!("step {t}: {e}")),
                };
            }
        }
    }
    Chain {
        samples: kept,
        failure: None,
    }
}

/// One chain of `method` from θ₀ = 0 with scale `a` (ε_t = (a/t)^0.51).
pub fn run_chain(problem: &Problem, method: Method, a: f64, seed: u64, samples: usize) -> Chain {
    let model = &problem.model;
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let start = [0.0; DIMENSION];
    let bad = |e: qnmc::Error| Chain {
        samples: Vec::new(),
        failure: Some(format!("settings: {e}")),
    };
    match method {
        Method::Sgld => {
            let mut s = match Sgld::<f64, DIMENSION>::new(SgldSettings::new(decaying(a, 1)), start)
            {
                Ok(s) => s,
                Err(e) => return bad(e),
            };
            collect(samples, |t| {
                s.set_step_size(decaying(a, t))?;
                s.step(model, &mut rng)?;
                Ok(*s.position())
            })
        }
        Method::Psgld => {
            let settings = PsgldSettings::new(decaying(a, 1), PSGLD_DECAY, PSGLD_REGULARIZER);
            let mut s = match Psgld::<f64, DIMENSION>::new(settings, start) {
                Ok(s) => s,
                Err(e) => return bad(e),
            };
            collect(samples, |t| {
                s.set_step_size(decaying(a, t))?;
                s.step(model, &mut rng)?;
                Ok(*s.position())
            })
        }
        Method::Sgrld => {
            let settings = DenseSgrldSettings::new(decaying(a, 1));
            let mut s = match DenseSgrld::new(settings, start, problem.inverse_fisher.clone()) {
                Ok(s) => s,
                Err(e) => return bad(e),
            };
            collect(samples, |t| {
                s.set_step_size(decaying(a, t))?;
                s.step(model, &mut rng)?;
                Ok(*s.position())
            })
        }
        Method::Hamcmc => {
            let schedule = StepSizeSchedule::BlockDecaying {
                scale: a,
                exponent: EXPONENT,
            };
            let settings = HamcmcSettings::new(schedule, HAMCMC_GAMMA, HAMCMC_TRUST_REGION);
            let mut s = match Hamcmc::<f64, DIMENSION, HAMCMC_MEMORY>::new(settings, start) {
                Ok(s) => s,
                Err(e) => return bad(e),
            };
            collect(samples, |_| {
                s.step(model, &mut rng)?;
                Ok(*s.position())
            })
        }
    }
}

/// One sampler at one a_ε over several chain seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The sampler.
    pub method: Method,
    /// Its a_ε.
    pub scale: f64,
    /// One fit per chain that finished (failed chains are left out).
    pub fits: Vec<Fit>,
    /// Chains that failed, with why.
    pub failures: Vec<String>,
}

impl Row {
    /// Mean Gaussian-fit KL over the finished chains (∞ if any failed).
    pub fn mean_kl(&self) -> f64 {
        if !self.failures.is_empty() || self.fits.is_empty() {
            return f64::INFINITY;
        }
        let kl = self.fits.iter().map(|f| f.kl).sum::<f64>() / self.fits.len() as f64;
        if kl.is_nan() { f64::INFINITY } else { kl }
    }
}

/// Chain seed of replicate `r` of `method`; `tuning` seeds are disjoint from
/// the evaluation seeds (replicate 0 of the evaluation uses `seed + 1 … + 4`
/// as `hamcmc-fig2`'s chains do).
pub fn chain_seed(seed: u64, method: Method, replicate: usize, tuning: bool) -> u64 {
    seed + method.index() + 100 * replicate as u64 + if tuning { 1_000_000 } else { 0 }
}

fn row(
    problem: &Problem,
    method: Method,
    scale: f64,
    seeds: usize,
    samples: usize,
    seed: u64,
    tuning: bool,
) -> (Row, Option<Chain>) {
    let mut fits = Vec::new();
    let mut failures = Vec::new();
    let mut first = None;
    for r in 0..seeds {
        let chain = run_chain(
            problem,
            method,
            scale,
            chain_seed(seed, method, r, tuning),
            samples,
        );
        match &chain.failure {
            Some(why) => failures.push(why.clone()),
            None => fits.push(Fit::new(&chain.samples, &problem.posterior)),
        }
        if r == 0 {
            first = Some(chain);
        }
    }
    (
        Row {
            method,
            scale,
            fits,
            failures,
        },
        first,
    )
}

/// The spread a constant-preconditioner chain (SGLD, SGRLD) should have by
/// the linear-Gaussian calculation in `hamcmc_fig1/noise.rs`, at the mean ε_t of the
/// kept half.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    /// SGLD or SGRLD.
    pub method: Method,
    /// a_ε.
    pub scale: f64,
    /// Mean ε_t over t ∈ (T/2, T].
    pub step: f64,
    /// tr(Σ⁻¹C)/D without the minibatch gradient noise (Euler bias only).
    pub without_noise: f64,
    /// The same with it.
    pub with_noise: f64,
}

/// [`Prediction`] for `method` at `a` (None for pSGLD and HAMCMC, whose
/// preconditioners adapt).
pub fn predict(problem: &Problem, method: Method, a: f64, samples: usize) -> Option<Prediction> {
    let h = match method {
        Method::Sgld => [[1.0, 0.0], [0.0, 1.0]],
        Method::Sgrld => problem.posterior.covariance,
        Method::Psgld | Method::Hamcmc => return None,
    };
    let step = noise::mean_kept_step(a, samples);
    Some(Prediction {
        method,
        scale: a,
        step,
        without_noise: noise::predicted_spread(problem, &h, step, false),
        with_noise: noise::predicted_spread(problem, &h, step, true),
    })
}

/// Everything the report shows.
pub struct Results {
    /// The data and exact posterior.
    pub problem: Problem,
    /// Samples per chain (T).
    pub samples: usize,
    /// The paper's a_ε, one row per sampler.
    pub paper: Vec<Row>,
    /// The first chain of each paper row (drawn in the figure).
    pub paper_chains: Vec<(Method, Chain)>,
    /// Fits of T/2 independent draws from the exact posterior (the floor a
    /// perfect sampler would reach), one per evaluation seed.
    pub exact: Vec<Fit>,
    /// The a_ε sweep on the tuning seeds: for each sampler, one row per
    /// factor of [`SWEEP`].
    pub sweep: Vec<Vec<Row>>,
    /// Each sampler at the factor with the lowest mean KL in the sweep,
    /// rerun on the evaluation seeds.
    pub tuned: Vec<Row>,
    /// The first chain of each tuned row.
    pub tuned_chains: Vec<(Method, Chain)>,
    /// Predicted spreads of SGLD and SGRLD at the paper's and the tuned a_ε.
    pub predictions: Vec<Prediction>,
    /// Wall time of the whole experiment, seconds.
    pub seconds: f64,
}

/// Runs the experiment.
pub fn results(options: &ReproduceOptions) -> Result<Results, String> {
    let start = std::time::Instant::now();
    let (samples, seeds, tuning_seeds) = if options.quick {
        (QUICK_SAMPLES, QUICK_SEEDS, 2)
    } else {
        (SAMPLES, SEEDS, TUNING_SEEDS)
    };
    let problem = Problem::simulate(options.seed)?;
    let mut paper = Vec::new();
    let mut paper_chains = Vec::new();
    for method in Method::ALL {
        let (r, first) = row(
            &problem,
            method,
            method.paper_scale(),
            seeds,
            samples,
            options.seed,
            false,
        );
        paper.push(r);
        if let Some(c) = first {
            paper_chains.push((method, c));
        }
    }
    let exact = (0..seeds)
        .map(|r| {
            let draws = fit::exact_draws(
                &problem.posterior,
                samples - samples / 2,
                options.seed + 500 + r as u64,
            );
            Fit::new(&draws, &problem.posterior)
        })
        .collect();
    let mut sweep = Vec::new();
    let mut tuned = Vec::new();
    let mut tuned_chains = Vec::new();
    for method in Method::ALL {
        let rows: Vec<Row> = SWEEP
            .iter()
            .map(|&f| {
                row(
                    &problem,
                    method,
                    f * method.paper_scale(),
                    tuning_seeds,
                    samples,
                    options.seed,
                    true,
                )
                .0
            })
            .collect();
        let best = rows
            .iter()
            .min_by(|a, b| a.mean_kl().total_cmp(&b.mean_kl()))
            .map_or(method.paper_scale(), |r| r.scale);
        let (r, first) = row(&problem, method, best, seeds, samples, options.seed, false);
        tuned.push(r);
        if let Some(c) = first {
            tuned_chains.push((method, c));
        }
        sweep.push(rows);
    }
    let mut predictions: Vec<Prediction> = Vec::new();
    for r in paper.iter().chain(&tuned) {
        let seen = predictions
            .iter()
            .any(|p| p.method == r.method && p.scale == r.scale);
        if let (false, Some(p)) = (seen, predict(&problem, r.method, r.scale, samples)) {
            predictions.push(p);
        }
    }
    Ok(Results {
        predictions,
        problem,
        samples,
        paper,
        paper_chains,
        exact,
        sweep,
        tuned,
        tuned_chains,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Runs the experiment and writes the report.
pub fn run(options: &ReproduceOptions) -> Reproduction {
    let title = "HAMCMC (Şimşekli et al. 2016), Figure 1: samples of SGLD, pSGLD, SGRLD and HAMCMC on a correlated 2-D posterior".to_string();
    match results(options) {
        Ok(r) => Reproduction {
            name: "hamcmc-fig1".to_string(),
            title,
            markdown: report::markdown(&r, options),
            charts: report::charts(&r),
            skipped: Vec::new(),
        },
        Err(why) => Reproduction {
            name: "hamcmc-fig1".to_string(),
            title,
            markdown: format!("# HAMCMC paper, Figure 1\n\nNot run: {why}.\n"),
            charts: Vec::new(),
            skipped: vec![format!("hamcmc-fig1: {why}")],
        },
    }
}
