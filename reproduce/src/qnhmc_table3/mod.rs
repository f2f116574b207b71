//! `qnhmc-table3`: Table 3 of Fu, Luo & Zhang (2016) — Bayesian
//! probabilistic matrix factorisation (K = 10) on MovieLens-1M: test RMSE
//! and running time of MAP, HMC, QNHMC and HMC-BFGS.
//!
//! The model is [`BayesianPmf`] (Salakhutdinov and Mnih's, with diagonal
//! precisions so that a Hamiltonian sampler moves every unknown); the data
//! are the MovieLens-1M-shaped synthetic set or the real `ratings.dat`
//! ([`super::movielens`]). MAP is L-BFGS on the factors
//! ([`map_estimate`]); HMC, QNHMC and HMC-BFGS start
//! from it, as the demo code the paper follows starts its Gibbs sampler
//! from PMF's MAP, with L = 10: first a short probe at the paper's
//! ε = 0.01 (which accepts nothing on the full data), then chains whose ε
//! dual averaging tunes during warm-up, as `qnhmc-table2` does. The test
//! RMSE is that of the average of the kept draws' predictions (the demo
//! code's estimate). HMC-BFGS is Zhang & Sutton's ensemble of
//! [`WALKERS`] chains started around MAP ([`WALKER_JITTER`]); one of its
//! updates moves one walker with L leapfrog steps, the gradients of one
//! HMC update, and its draw is the walker it moved.

mod map;
mod write_up;

use std::time::{Duration, Instant};

use qnmc::adaptation::jittered_step_size;
use qnmc::{
    DualAveraging, DualAveragingSettings, Hmc, HmcBfgs, HmcBfgsSettings, HmcSettings, Qnhmc,
    QnhmcSettings, Sampler, Step, StepStats,
};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

pub use map::{MapFit, hyperparameters_at_conditional_mode, map_estimate};

use super::movielens::AveragedPredictions;
use super::{ReproduceOptions, Reproduction};
use qnmc_host::model::{Model, PaddedModel};
use qnmc_host::run::LARGE_DIMENSION;
use qnmc_host::targets::BayesianPmf;

/// The paper's leapfrog step size ε.
pub const PAPER_STEP_SIZE: f64 = 0.01;
/// The paper's leapfrog steps per update L.
pub const LEAPFROG_STEPS: u32 = 10;
/// QNHMC's memory m: the paper prints none for Table 3; its Table 2's m = 7.
pub const MEMORY: usize = super::qnhmc_table2::MEMORY;
/// Updates per chain in the full run, warm-up included (the paper prints
/// no count).
pub const ITERATIONS: usize = 200;
/// Warm-up updates: dual averaging tunes ε, and their draws are discarded
/// before the predictions are averaged.
pub const WARMUP: usize = 50;
/// Updates of the probe at the paper's fixed ε (one chain per sampler).
pub const PROBE_UPDATES: usize = 20;
/// Acceptance rate dual averaging aims at (Stan's, as in `qnhmc-table2`).
pub const TARGET_ACCEPTANCE: f64 = 0.8;
/// Relative jitter of ε after warm-up (as in `qnhmc-table2`).
pub const JITTER: f64 = 0.1;
/// Chains per sampler in the full run (seeds `seed`, `seed + 1`, …).
pub const SEEDS: usize = 3;
/// Updates and warm-up of the quick run (on `pmf-small`'s data); its probe
/// runs a third of the full probe.
pub const QUICK: (usize, usize) = (30, 10);
/// HMC-BFGS's walkers K: Table 2's ensemble (`qnhmc-table2`), which takes
/// the K = 5 of the paper's Table 1; Table 3 prints none.
pub const WALKERS: usize = super::qnhmc_table2::ENSEMBLE;
/// HMC-BFGS's pair capacity, K − 2 (the most its K − 1 other walkers give).
const WALKER_PAIRS: usize = WALKERS - 2;
/// HMC-BFGS's walkers start at MAP plus this × N(0, 1) per coordinate (as
/// `qnhmc-table2` jitters its walkers' start): distinct points, so the
/// first pairs exist, within the tuned trajectories' reach of MAP.
pub const WALKER_JITTER: f64 = 0.01;
/// QNHMC's memories m tried beside [`MEMORY`] (one chain each, the first
/// seed): the paper prints none for Table 3.
pub const MEMORY_SENSITIVITY: [usize; 2] = [3, 15];
/// The larger memory's capacity.
const MEMORY_CAPACITY: usize = 15;
/// HMC-BFGS's walkers tried beside [`WALKERS`] (one chain, the first seed).
pub const WALKERS_SENSITIVITY: usize = 10;
/// L-BFGS iterations allowed to MAP (quick run: a fifth).
pub const MAP_ITERATIONS: u32 = 500;
/// MAP stops when an iteration lowers U by less than this × max(|U|, 1).
pub const MAP_TOLERANCE: f64 = 1e-10;

/// The paper's Table 3: method, test RMSE, running time in seconds.
pub const PAPER: [(&str, f64, f64); 4] = [
    ("MAP", 0.8701, 27.67),
    ("HMC", 0.8607, 202.5),
    ("QNHMC", 0.8628, 108.34),
    ("HMC-BFGS", 0.8618, 179.23),
];

/// The samplers run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// HMC, M = I.
    Hmc,
    /// QNHMC as in the paper: M = I, γ = 1, m = [`MEMORY`], the memory
    /// learning throughout.
    Qnhmc,
    /// HMC-BFGS (Zhang & Sutton): [`WALKERS`] walkers, each moved by HMC
    /// with the L-BFGS metric of the other walkers' K − 2 pairs.
    HmcBfgs,
}

impl Kind {
    /// Every sampler, in table order.
    pub const ALL: [Kind; 3] = [Kind::Hmc, Kind::Qnhmc, Kind::HmcBfgs];

    /// The name in the table.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Hmc => "HMC",
            Kind::Qnhmc => "QNHMC",
            Kind::HmcBfgs => "HMC-BFGS",
        }
    }

    /// Target evaluations at construction: one per walker.
    pub fn starts(self) -> u64 {
        match self {
            Kind::HmcBfgs => WALKERS as u64,
            Kind::Hmc | Kind::Qnhmc => 1,
        }
    }
}

/// The state an update moved: the one chain of HMC and QNHMC, the walker
/// of HMC-BFGS's ensemble that the update moved.
trait MovedState {
    /// The walker the next update moves.
    fn next_walker(&self) -> usize {
        0
    }
    /// Walker `k`'s state.
    fn walker(&self, k: usize) -> &[f64; LARGE_DIMENSION];
}

impl MovedState for Hmc<f64, LARGE_DIMENSION> {
    fn walker(&self, _: usize) -> &[f64; LARGE_DIMENSION] {
        self.position()
    }
}

impl<const M: usize> MovedState for Qnhmc<f64, LARGE_DIMENSION, M> {
    fn walker(&self, _: usize) -> &[f64; LARGE_DIMENSION] {
        self.position()
    }
}

impl<const K: usize, const M: usize> MovedState for HmcBfgs<f64, LARGE_DIMENSION, K, M> {
    fn next_walker(&self) -> usize {
        self.next_chain()
    }
    fn walker(&self, k: usize) -> &[f64; LARGE_DIMENSION] {
        self.position(k).unwrap_or(&self.positions()[0])
    }
}

/// One chain's record, one entry per update.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Curve {
    /// Test RMSE of this update's draw (predictions clipped to [1, 5]).
    pub draw_rmse: Vec<f64>,
    /// Test RMSE of the average of the predictions of the draws after the
    /// burn-in (NaN during it): Table 3's estimate.
    pub mean_rmse: Vec<f64>,
    /// Seconds in the sampler's steps up to each update (scoring the test
    /// set not counted).
    pub seconds: Vec<f64>,
    /// Gradient evaluations up to each update (construction's included).
    pub gradients: Vec<u64>,
    /// Accepted updates.
    pub accepted: usize,
    /// Sum of the updates' acceptance probabilities.
    pub acceptance: f64,
    /// The step size after warm-up (the fixed ε of a probe).
    pub step_size: f64,
    /// Why the chain stopped early, if it did.
    pub failure: Option<String>,
}

impl Curve {
    /// The last averaged RMSE (NaN when the chain never left burn-in).
    pub fn final_mean_rmse(&self) -> f64 {
        self.mean_rmse.last().copied().unwrap_or(f64::NAN)
    }

    /// Seconds of the whole chain.
    pub fn total_seconds(&self) -> f64 {
        self.seconds.last().copied().unwrap_or(f64::NAN)
    }

    /// Mean acceptance probability over the updates run.
    pub fn mean_acceptance(&self) -> f64 {
        self.acceptance / self.draw_rmse.len().max(1) as f64
    }

    /// Updates run.
    pub fn updates(&self) -> usize {
        self.draw_rmse.len()
    }
}

/// A setting the paper does not print, changed from ours on one chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// QNHMC with memory m.
    QnhmcMemory(usize),
    /// HMC-BFGS with [`WALKERS_SENSITIVITY`] walkers (K − 2 pairs).
    HmcBfgsWalkers,
}

impl Variant {
    /// Every variant run.
    pub fn all() -> Vec<Variant> {
        let mut v: Vec<Variant> = MEMORY_SENSITIVITY
            .into_iter()
            .map(Variant::QnhmcMemory)
            .collect();
        v.push(Variant::HmcBfgsWalkers);
        v
    }

    /// The sampler it varies.
    pub fn kind(self) -> Kind {
        match self {
            Variant::QnhmcMemory(_) => Kind::Qnhmc,
            Variant::HmcBfgsWalkers => Kind::HmcBfgs,
        }
    }

    /// The setting, as the report names it.
    pub fn label(self) -> String {
        match self {
            Variant::QnhmcMemory(m) => format!("QNHMC, m = {m}"),
            Variant::HmcBfgsWalkers => format!("HMC-BFGS, K = {WALKERS_SENSITIVITY}"),
        }
    }

    /// Target evaluations at construction.
    fn starts(self) -> u64 {
        match self {
            Variant::QnhmcMemory(_) => 1,
            Variant::HmcBfgsWalkers => WALKERS_SENSITIVITY as u64,
        }
    }
}

/// Every chain of one sampler.
#[derive(Debug, Clone, PartialEq)]
pub struct Runs {
    /// The sampler.
    pub kind: Kind,
    /// The probe at the paper's ε (first seed).
    pub probe: Curve,
    /// One curve per seed, ε tuned.
    pub curves: Vec<Curve>,
}

/// What the experiment ran on and what came out.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    /// Where the ratings came from.
    pub data: String,
    /// The model's dimension (I + J)·K + 4K.
    pub dimension: usize,
    /// Training and test ratings.
    pub sizes: (usize, usize),
    /// Users and items.
    pub sides: (usize, usize),
    /// Updates per chain, warm-up included.
    pub iterations: usize,
    /// Warm-up updates (their draws discarded).
    pub warmup: usize,
    /// Test RMSE of predicting every rating by the training mean.
    pub mean_baseline: f64,
    /// The MAP fit the chains start from.
    pub map: MapFit,
    /// Its test RMSE.
    pub map_rmse: f64,
    /// Each sampler's chains.
    pub runs: Vec<Runs>,
    /// The sensitivity chains (first seed, ε tuned as the others').
    pub sensitivity: Vec<(Variant, Curve)>,
}

/// Clipped test RMSE of the draw `x` (the model's coordinates only).
fn draw_rmse(model: &BayesianPmf, x: &[f64], predictions: &mut [f64]) -> f64 {
    model.test_predictions(x, predictions);
    let ratings = model.ratings();
    let clipped: Vec<f64> = predictions.iter().map(|&p| ratings.clip(p)).collect();
    ratings.test_rmse(&clipped)
}

/// Runs MAP, then every sampler from it (one chain per seed; one seed in a
/// quick run).
pub fn experiment(options: &ReproduceOptions) -> Result<Experiment, String> {
    let (ratings, data) = super::movielens::ratings(options)?;
    let model = BayesianPmf::new(ratings, BayesianPmf::PAPER_RANK).map_err(|e| e.to_string())?;
    let target = PaddedModel::<LARGE_DIMENSION>::new(&model)
        .map_err(|e| e.to_string())?
        .frozen_padding();
    let (iterations, warmup) = if options.quick {
        QUICK
    } else {
        (ITERATIONS, WARMUP)
    };
    let probe_updates = if options.quick {
        PROBE_UPDATES / 3
    } else {
        PROBE_UPDATES
    };
    let map_iterations = if options.quick {
        MAP_ITERATIONS / 5
    } else {
        MAP_ITERATIONS
    };
    let map = map_estimate(&model, &target, map_iterations, MAP_TOLERANCE)?;
    let mut predictions = vec![0.0; model.ratings().test().len()];
    let map_rmse = draw_rmse(&model, &map.position, &mut predictions);
    let train_mean = model.ratings().train().mean();
    let baseline = model
        .ratings()
        .test_rmse(&vec![model.ratings().clip(train_mean); predictions.len()]);
    let seeds = if options.quick { 1 } else { SEEDS };
    let runs = Kind::ALL
        .into_iter()
        .map(|kind| {
            let chain = |seed: u64, iterations: usize, warmup: Option<usize>| Chain {
                model: &model,
                target: &target,
                start: &map.position,
                iterations,
                warmup,
                seed,
            };
            Runs {
                kind,
                probe: chain(options.seed, probe_updates, None).run(kind),
                curves: (0..seeds as u64)
                    .map(|k| {
                        chain(options.seed.wrapping_add(k), iterations, Some(warmup)).run(kind)
                    })
                    .collect(),
            }
        })
        .collect();
    let sensitivity = Variant::all()
        .into_iter()
        .map(|v| {
            let chain = Chain {
                model: &model,
                target: &target,
                start: &map.position,
                iterations,
                warmup: Some(warmup),
                seed: options.seed,
            };
            (v, chain.run_variant(v))
        })
        .collect();
    Ok(Experiment {
        data,
        dimension: model.dimension(),
        sizes: (model.ratings().train().len(), predictions.len()),
        sides: (model.ratings().users(), model.ratings().items()),
        iterations,
        warmup,
        mean_baseline: baseline,
        map,
        map_rmse,
        runs,
        sensitivity,
    })
}

/// One chain's inputs.
struct Chain<'a> {
    model: &'a BayesianPmf,
    target: &'a PaddedModel<'a, LARGE_DIMENSION>,
    start: &'a [f64],
    iterations: usize,
    /// Warm-up updates whose ε dual averaging tunes (and whose draws are
    /// not averaged); `None`: the paper's ε throughout, every draw averaged.
    warmup: Option<usize>,
    seed: u64,
}

/// Builds `$sampler` (a `new_boxed` call of sampler `$kind`), gives it the
/// model's dimension and drives it; an error becomes the curve's failure.
macro_rules! built {
    ($chain:expr, $kind:expr, $sampler:expr) => {
        match $sampler {
            Ok(mut sampler) => match sampler.set_dimension($chain.model.dimension()) {
                Ok(()) => $chain.drive(&mut *sampler, $kind.starts()),
                Err(e) => Curve::failed(e),
            },
            Err(e) => Curve::failed(e),
        }
    };
}

impl Curve {
    fn failed(e: qnmc::Error) -> Curve {
        Curve {
            failure: Some(format!("not built: {e}")),
            ..Curve::default()
        }
    }
}

impl<'a> Chain<'a> {
    fn run(&self, kind: Kind) -> Curve {
        const D: usize = LARGE_DIMENSION;
        match kind {
            Kind::HmcBfgs => built!(
                self,
                kind,
                HmcBfgs::<f64, D, WALKERS, WALKER_PAIRS>::new_boxed(
                    HmcBfgsSettings::new(PAPER_STEP_SIZE, LEAPFROG_STEPS),
                    &self.walker_starts::<WALKERS>(),
                    self.target
                )
            ),
            Kind::Hmc => built!(
                self,
                kind,
                Hmc::<f64, D>::new_boxed(
                    HmcSettings::new(PAPER_STEP_SIZE, LEAPFROG_STEPS),
                    &self.padded_start(),
                    self.target
                )
            ),
            Kind::Qnhmc => built!(
                self,
                kind,
                Qnhmc::<f64, D, MEMORY>::new_boxed(
                    QnhmcSettings::new(PAPER_STEP_SIZE, LEAPFROG_STEPS, MEMORY),
                    &self.padded_start(),
                    self.target
                )
            ),
        }
    }

    /// The chain of a [`Variant`].
    fn run_variant(&self, variant: Variant) -> Curve {
        const D: usize = LARGE_DIMENSION;
        match variant {
            Variant::QnhmcMemory(m) => {
                built!(
                    self,
                    variant,
                    Qnhmc::<f64, D, MEMORY_CAPACITY>::new_boxed(
                        QnhmcSettings::new(PAPER_STEP_SIZE, LEAPFROG_STEPS, m),
                        &self.padded_start(),
                        self.target
                    )
                )
            }
            Variant::HmcBfgsWalkers => {
                const K: usize = WALKERS_SENSITIVITY;
                built!(
                    self,
                    variant,
                    HmcBfgs::<f64, D, K, { K - 2 }>::new_boxed(
                        HmcBfgsSettings::new(PAPER_STEP_SIZE, LEAPFROG_STEPS),
                        &self.walker_starts::<K>(),
                        self.target
                    )
                )
            }
        }
    }

    /// The start in storage of [`LARGE_DIMENSION`] (zeroed; the model's
    /// coordinates written).
    fn padded_start(&self) -> Box<[f64; LARGE_DIMENSION]> {
        let mut start = qnmc::in_place::zeroed_box::<[f64; LARGE_DIMENSION]>();
        start[..self.start.len()].copy_from_slice(self.start);
        start
    }

    /// K walkers at the start plus [`WALKER_JITTER`]·N(0, 1) per model
    /// coordinate, in a zeroed allocation (K · 8 MiB, of which only the
    /// model's coordinates are written).
    fn walker_starts<const K: usize>(&self) -> Box<[[f64; LARGE_DIMENSION]; K]> {
        let mut starts = qnmc::in_place::zeroed_box::<[[f64; LARGE_DIMENSION]; K]>();
        let mut jitter = XorShiftRng::seed_from_u64(self.seed ^ 0xb1f9);
        for walker in starts.iter_mut() {
            for (w, &x) in walker.iter_mut().zip(self.start) {
                *w = x + WALKER_JITTER * qnmc::random::standard_normal::<f64, _>(&mut jitter);
            }
        }
        starts
    }

    /// Steps `sampler` `iterations` times, tuning ε during warm-up,
    /// scoring each draw on the test set; stops at a step error or a
    /// non-finite draw.
    fn drive<S>(&self, sampler: &mut S, starts: u64) -> Curve
    where
        S: Step<f64, LARGE_DIMENSION, PaddedModel<'a, LARGE_DIMENSION>>
            + Sampler<f64, LARGE_DIMENSION>
            + MovedState
            + ?Sized,
    {
        let warmup = self.warmup.unwrap_or(0);
        let mut settings = DualAveragingSettings::stan(PAPER_STEP_SIZE);
        settings.target_acceptance = TARGET_ACCEPTANCE;
        // Constant, valid settings.
        let mut dual = DualAveraging::new(settings).expect("valid dual-averaging settings");
        let mut fixed = PAPER_STEP_SIZE;
        let ratings = self.model.ratings();
        let n = self.model.dimension();
        let tests = ratings.test().len();
        let mut rng = XorShiftRng::seed_from_u64(self.seed);
        let mut predictions = vec![0.0; tests];
        let mut average = AveragedPredictions::new(tests);
        let mut curve = Curve::default();
        let mut elapsed = Duration::ZERO;
        // Construction evaluated each start once.
        let mut gradients = starts;
        for t in 1..=self.iterations {
            let moved = sampler.next_walker();
            let clock = Instant::now();
            let stats = sampler.step(self.target, &mut rng);
            elapsed += clock.elapsed();
            let stats: StepStats<f64> = match stats {
                Ok(s) => s.into(),
                Err(e) => {
                    curve.failure = Some(format!("update {t}: {e}"));
                    break;
                }
            };
            if self.warmup.is_some() {
                let next = if t < warmup {
                    dual.update(stats.acceptance_probability)
                } else {
                    if t == warmup {
                        let _ = dual.update(stats.acceptance_probability);
                        fixed = dual.final_step_size();
                    }
                    jittered_step_size(fixed, JITTER, &mut rng)
                };
                if let Err(e) = sampler.set_step_size(next) {
                    curve.failure = Some(format!("update {t}: {e}"));
                    break;
                }
            }
            gradients += u64::from(stats.gradient_evaluations);
            curve.accepted += usize::from(stats.accepted);
            curve.acceptance += stats.acceptance_probability;
            let x = &sampler.walker(moved)[..n];
            let rmse = draw_rmse(self.model, x, &mut predictions);
            if !rmse.is_finite() {
                curve.failure = Some(format!("non-finite test predictions at update {t}"));
                break;
            }
            curve.draw_rmse.push(rmse);
            let mean = if t > warmup {
                average.keep(ratings, &predictions)
            } else {
                f64::NAN
            };
            curve.mean_rmse.push(mean);
            curve.seconds.push(elapsed.as_secs_f64());
            curve.gradients.push(gradients);
        }
        curve.step_size = fixed;
        curve
    }
}

/// Runs the experiment and writes the report.
pub fn run(options: &ReproduceOptions) -> Reproduction {
    let name = "qnhmc-table3".to_string();
    let title =
        "QNHMC (Fu, Luo & Zhang 2016), Table 3: Bayesian PMF, test RMSE and time".to_string();
    match experiment(options) {
        Ok(e) => Reproduction {
            name,
            title,
            markdown: write_up::markdown(&e, options),
            charts: write_up::charts(&e),
            skipped: Vec::new(),
        },
        Err(why) => Reproduction {
            name,
            title,
            markdown: format!("# QNHMC paper, Table 3\n\nNot run: {why}\n"),
            charts: Vec::new(),
            skipped: vec![format!("qnhmc-table3: {why}")],
        },
    }
}

#[cfg(test)]
mod tests;
