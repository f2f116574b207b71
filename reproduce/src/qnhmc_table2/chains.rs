//! Running one sampler on the images and recording what the table and the
//! charts need: per update the potential and the per-draw test error, the
//! cumulative gradient count and sampler time; after warm-up the kept draws
//! (per coordinate, for the ESS), the posterior predictive and the posterior
//! mean.
//!
//! Every sampler starts at w = 0 (HMC-BFGS's chains within 10⁻² of it, so
//! that their first pairs exist), runs `iterations` updates of L leapfrog
//! steps, and tunes ε during the first `warmup` updates by dual averaging
//! from the paper's ε = 0.1 (Stan's settings, target acceptance
//! [`TARGET_ACCEPTANCE`]); after warm-up ε is fixed at the averaged ε̄, each
//! update's ε jittered uniformly on ε̄(1 ± [`JITTER`]).

use std::time::Instant;

use qnmc::adaptation::jittered_step_size;
use qnmc::lbfgs::InitialScaling;
use qnmc::{
    DualAveraging, DualAveragingSettings, Hmc, HmcBfgs, HmcBfgsSettings, HmcSettings, MemoryUpdate,
    Qnhmc, QnhmcMass, QnhmcSettings, StepStats,
};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use super::data::{DIMENSION, Data, Images};
use super::{ENSEMBLE, LEAPFROG_STEPS, Lengths, MEMORY, PAPER_STEP_SIZE};
use qnmc_host::diagnostics::ess_basic;

/// Acceptance rate dual averaging aims at (Stan's 0.8, as in this project's
/// Zhang & Sutton reproduction).
pub const TARGET_ACCEPTANCE: f64 = 0.8;
/// Relative jitter of ε after warm-up.
pub const JITTER: f64 = 0.1;

/// HMC-BFGS pair storage K − 2.
const ENSEMBLE_PAIRS: usize = ENSEMBLE - 2;

/// The samplers of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// HMC, M = I.
    Hmc,
    /// HMC-BFGS (Zhang & Sutton 2011), an ensemble of [`ENSEMBLE`] chains.
    HmcBfgs,
    /// QNHMC as in the paper: M = I, γ = 1, m = [`MEMORY`].
    Qnhmc,
    /// QNHMC with M = C and γ of the newest pair (the `qnmc` CLI's default;
    /// not in the paper).
    QnhmcMassC,
}

impl Kind {
    /// Every sampler, in table order.
    pub const ALL: [Kind; 4] = [Kind::Hmc, Kind::HmcBfgs, Kind::Qnhmc, Kind::QnhmcMassC];

    /// Short name (charts, table).
    pub fn label(self) -> &'static str {
        match self {
            Kind::Hmc => "HMC",
            Kind::HmcBfgs => "HMC-BFGS",
            Kind::Qnhmc => "QNHMC",
            Kind::QnhmcMassC => "QNHMC, M = C",
        }
    }

    /// Chains moved by one sampler (K for the ensemble).
    pub fn chains(self) -> usize {
        match self {
            Kind::HmcBfgs => ENSEMBLE,
            _ => 1,
        }
    }
}

/// What one run recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The sampler.
    pub kind: Kind,
    /// Its seed.
    pub seed: u64,
    /// ε̄ after warm-up.
    pub step_size: f64,
    /// After each update: the largest potential U over the chains (the one
    /// chain of a single-chain sampler).
    pub potential: Vec<f64>,
    /// After each update: the test error of the current draw (mean over
    /// the chains of the ensemble).
    pub test_error: Vec<f64>,
    /// Gradient evaluations so far after each update (the start's included).
    pub gradients: Vec<u64>,
    /// Seconds spent in the sampler so far after each update (test-error
    /// and bookkeeping time excluded).
    pub seconds: Vec<f64>,
    /// Updates after warm-up, and how many were accepted.
    pub kept_updates: usize,
    /// Accepted updates after warm-up.
    pub accepted: usize,
    /// Divergent updates over the whole run.
    pub divergences: usize,
    /// Kept draws (all chains'; for the ensemble one per chain after each
    /// sweep).
    pub kept_draws: usize,
    /// Test error of the posterior predictive: the mean of σ(xᵀw) over the
    /// kept draws, thresholded at 0.5.
    pub predictive_error: f64,
    /// Test error of the posterior mean of w over the kept draws.
    pub posterior_mean_error: f64,
    /// Mean per-draw test error over the kept draws.
    pub mean_draw_error: f64,
    /// ESS of each coordinate over the kept draws (Stan's basic ESS per
    /// chain, summed over chains; a chain that did not move counts 0).
    pub ess: Vec<f64>,
    /// ESS of the potential U over the kept draws (same convention).
    pub ess_potential: f64,
}

/// A sampler seen by [`run`]: one step (returning which chain moved),
/// positions and potentials of its chains, its step size.
trait Chains {
    fn step_chain(&mut self, target: &Images, rng: &mut XorShiftRng) -> (StepStats<f64>, usize);
    fn chain_positions(&self) -> &[[f64; DIMENSION]];
    fn chain_potential(&self, chain: usize) -> f64;
    fn put_step_size(&mut self, step_size: f64);
}

impl Chains for Hmc<f64, DIMENSION> {
    fn step_chain(&mut self, target: &Images, rng: &mut XorShiftRng) -> (StepStats<f64>, usize) {
        (self.step(target, rng), 0)
    }
    fn chain_positions(&self) -> &[[f64; DIMENSION]] {
        std::slice::from_ref(self.position())
    }
    fn chain_potential(&self, _: usize) -> f64 {
        self.potential()
    }
    fn put_step_size(&mut self, step_size: f64) {
        // Dual averaging returns finite positive steps.
        self.set_step_size(step_size).expect("positive step size");
    }
}

impl Chains for Qnhmc<f64, DIMENSION, MEMORY> {
    fn step_chain(&mut self, target: &Images, rng: &mut XorShiftRng) -> (StepStats<f64>, usize) {
        (self.step(target, rng), 0)
    }
    fn chain_positions(&self) -> &[[f64; DIMENSION]] {
        std::slice::from_ref(self.position())
    }
    fn chain_potential(&self, _: usize) -> f64 {
        self.potential()
    }
    fn put_step_size(&mut self, step_size: f64) {
        self.set_step_size(step_size).expect("positive step size");
    }
}

impl Chains for HmcBfgs<f64, DIMENSION, ENSEMBLE, ENSEMBLE_PAIRS> {
    fn step_chain(&mut self, target: &Images, rng: &mut XorShiftRng) -> (StepStats<f64>, usize) {
        let chain = self.next_chain();
        (self.step(target, rng), chain)
    }
    fn chain_positions(&self) -> &[[f64; DIMENSION]] {
        &self.positions()[..]
    }
    fn chain_potential(&self, chain: usize) -> f64 {
        self.potentials()[chain]
    }
    fn put_step_size(&mut self, step_size: f64) {
        self.set_step_size(step_size).expect("positive step size");
    }
}

/// Runs `kind` with `seed` for `lengths.iterations` updates (warm-up
/// included) on `data`.
pub fn run(kind: Kind, seed: u64, data: &Data, lengths: Lengths) -> Trace {
    let train = &data.train;
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let start = [0.0; DIMENSION];
    let t = Instant::now();
    // The start w = 0 is finite, U(0) = N ln 2, and the settings are
    // constants: construction cannot fail.
    match kind {
        Kind::Hmc => {
            let mut s = Hmc::<f64, DIMENSION>::new_boxed(
                HmcSettings::new(PAPER_STEP_SIZE, LEAPFROG_STEPS),
                &start,
                train,
            )
            .expect("finite start, valid settings");
            drive(
                kind,
                seed,
                &mut *s,
                data,
                lengths,
                1,
                None,
                t.elapsed().as_secs_f64(),
                &mut rng,
            )
        }
        Kind::Qnhmc | Kind::QnhmcMassC => {
            let mut settings = QnhmcSettings::new(PAPER_STEP_SIZE, LEAPFROG_STEPS, MEMORY);
            let freeze = (lengths.warmup / 2) as u64;
            settings.memory_update = MemoryUpdate::FreezeAfter(freeze);
            if kind == Kind::QnhmcMassC {
                settings.mass = QnhmcMass::InverseHessian;
                settings.lbfgs.scaling = InitialScaling::NewestPair(1.0);
            }
            let mut s = Qnhmc::<f64, DIMENSION, MEMORY>::new_boxed(settings, &start, train)
                .expect("finite start, valid settings");
            drive(
                kind,
                seed,
                &mut *s,
                data,
                lengths,
                1,
                Some(freeze as usize),
                t.elapsed().as_secs_f64(),
                &mut rng,
            )
        }
        Kind::HmcBfgs => {
            let mut jitter = XorShiftRng::seed_from_u64(seed ^ 0xb1f9);
            let starts: [[f64; DIMENSION]; ENSEMBLE] = core::array::from_fn(|_| {
                core::array::from_fn(|_| {
                    0.01 * qnmc::random::standard_normal::<f64, _>(&mut jitter)
                })
            });
            let mut s = Box::new(
                HmcBfgs::<f64, DIMENSION, ENSEMBLE, ENSEMBLE_PAIRS>::new(
                    HmcBfgsSettings::new(PAPER_STEP_SIZE, LEAPFROG_STEPS),
                    starts,
                    train,
                )
                .expect("finite starts, valid settings"),
            );
            drive(
                kind,
                seed,
                &mut *s,
                data,
                lengths,
                ENSEMBLE as u64,
                None,
                t.elapsed().as_secs_f64(),
                &mut rng,
            )
        }
    }
}

/// One update of a boxed sampler.
type StepFn<'a> = dyn FnMut(&mut XorShiftRng) -> StepStats<f64> + 'a;

/// Fixed-ε HMC or QNHMC (M = I) at the paper's ε from w = 0 for `draws`
/// updates: (accepted, mean acceptance probability).
pub fn probe_paper_step(kind: Kind, seed: u64, data: &Data, draws: usize) -> (usize, f64) {
    let train = &data.train;
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let start = [0.0; DIMENSION];
    let mut step: Box<StepFn<'_>> = match kind {
        Kind::Qnhmc => {
            let settings = QnhmcSettings::new(PAPER_STEP_SIZE, LEAPFROG_STEPS, MEMORY);
            let mut s = Qnhmc::<f64, DIMENSION, MEMORY>::new_boxed(settings, &start, train)
                .expect("finite start, valid settings");
            Box::new(move |r| s.step(train, r))
        }
        _ => {
            let settings = HmcSettings::new(PAPER_STEP_SIZE, LEAPFROG_STEPS);
            let mut s = Hmc::<f64, DIMENSION>::new_boxed(settings, &start, train)
                .expect("finite start, valid settings");
            Box::new(move |r| s.step(train, r))
        }
    };
    let (mut accepted, mut probability) = (0, 0.0);
    for _ in 0..draws {
        let stats = step(&mut rng);
        accepted += usize::from(stats.accepted);
        probability += stats.acceptance_probability;
    }
    (accepted, probability / draws.max(1) as f64)
}

/// The recording loop shared by every sampler. `initial_gradients`: the
/// evaluations construction made; `restart`: the update after which dual
/// averaging restarts (QNHMC's memory freezes there).
#[allow(clippy::too_many_arguments)]
fn drive<C: Chains + ?Sized>(
    kind: Kind,
    seed: u64,
    sampler: &mut C,
    data: &Data,
    lengths: Lengths,
    initial_gradients: u64,
    restart: Option<usize>,
    initial_seconds: f64,
    rng: &mut XorShiftRng,
) -> Trace {
    let chains = kind.chains();
    let test = &data.test;
    let mut recorder = Recorder::new(sampler, test, chains);
    let mut step_sizes = StepSizes::new(lengths.warmup, restart);
    sampler.put_step_size(PAPER_STEP_SIZE);

    let n = lengths.iterations;
    let mut trace = Trace::empty(kind, seed, n);
    let (mut gradients, mut seconds) = (initial_gradients, initial_seconds);

    for it in 0..n {
        let t = Instant::now();
        let (stats, moved) = sampler.step_chain(&data.train, rng);
        let next = step_sizes.after(it, stats.acceptance_probability);
        sampler.put_step_size(jittered_step_size(next, JITTER, rng));
        seconds += t.elapsed().as_secs_f64();
        gradients += u64::from(stats.gradient_evaluations);
        trace.divergences += usize::from(stats.divergent);

        recorder.record_update(sampler, test, moved, &mut trace);
        trace.gradients.push(gradients);
        trace.seconds.push(seconds);

        if it >= lengths.warmup {
            trace.kept_updates += 1;
            trace.accepted += usize::from(stats.accepted);
            // Single chains: every draw; the ensemble: every chain after
            // each full sweep.
            if (it + 1) % chains == 0 {
                recorder.keep_draws(sampler, test, &mut trace);
            }
        }
    }
    trace.step_size = step_sizes.fixed;
    recorder.finish(test, &mut trace);
    trace
}

impl Trace {
    /// A trace of `kind` with `seed` before its first update, with room
    /// for `updates` updates.
    fn empty(kind: Kind, seed: u64, updates: usize) -> Self {
        Trace {
            kind,
            seed,
            step_size: f64::NAN,
            potential: Vec::with_capacity(updates),
            test_error: Vec::with_capacity(updates),
            gradients: Vec::with_capacity(updates),
            seconds: Vec::with_capacity(updates),
            kept_updates: 0,
            accepted: 0,
            divergences: 0,
            kept_draws: 0,
            predictive_error: f64::NAN,
            posterior_mean_error: f64::NAN,
            mean_draw_error: f64::NAN,
            ess: Vec::new(),
            ess_potential: f64::NAN,
        }
    }
}

/// The step size of each update of [`drive`]: by dual averaging from the
/// paper's ε during the `warmup` updates (restarted after update `restart`),
/// then the averaged ε̄ (`fixed`, before jitter).
struct StepSizes {
    dual: DualAveraging<f64>,
    fixed: f64,
    warmup: usize,
    restart: Option<usize>,
}

impl StepSizes {
    fn new(warmup: usize, restart: Option<usize>) -> Self {
        StepSizes {
            dual: DualAveraging::new(DualAveragingSettings::stan(PAPER_STEP_SIZE))
                .expect("constant, valid dual-averaging settings"),
            fixed: PAPER_STEP_SIZE,
            warmup,
            restart,
        }
    }

    /// The step size after update `it` (counted from 0), which had
    /// acceptance probability `acceptance`.
    fn after(&mut self, it: usize, acceptance: f64) -> f64 {
        if it < self.warmup {
            let mut e = self.dual.update(acceptance);
            if self.restart == Some(it + 1) {
                e = self.dual.final_step_size();
                self.dual.restart(e).expect("positive step size");
            }
            if it + 1 == self.warmup {
                self.fixed = self.dual.final_step_size();
                e = self.fixed;
            }
            e
        } else {
            self.fixed
        }
    }
}

/// What [`drive`] keeps besides the trace: each chain's current test error
/// and potential, and over the kept draws each chain's series of every
/// coordinate and of U, the running sums of the posterior predictive, of
/// the posterior mean and of the per-draw test error.
struct Recorder {
    chains: usize,
    chain_error: Vec<f64>,
    chain_potential: Vec<f64>,
    series: Vec<Vec<Vec<f64>>>,
    potential_series: Vec<Vec<f64>>,
    predictive: Vec<f64>,
    mean: Vec<f64>,
    draw_error_sum: f64,
}

impl Recorder {
    /// Starts from the `chains` chains of `sampler` as they are; `test`
    /// gives the test error.
    fn new<C: Chains + ?Sized>(sampler: &C, test: &Images, chains: usize) -> Self {
        Recorder {
            chains,
            chain_error: sampler
                .chain_positions()
                .iter()
                .map(|w| test.error(w))
                .collect(),
            chain_potential: (0..chains).map(|c| sampler.chain_potential(c)).collect(),
            series: vec![vec![Vec::new(); DIMENSION]; chains],
            potential_series: vec![Vec::new(); chains],
            predictive: vec![0.0; test.len()],
            mean: vec![0.0; DIMENSION],
            draw_error_sum: 0.0,
        }
    }

    /// After an update that moved chain `moved`: its test error and
    /// potential, and in `trace` the mean test error over the chains and
    /// the largest potential.
    fn record_update<C: Chains + ?Sized>(
        &mut self,
        sampler: &C,
        test: &Images,
        moved: usize,
        trace: &mut Trace,
    ) {
        let w = &sampler.chain_positions()[moved];
        self.chain_error[moved] = test.error(w);
        self.chain_potential[moved] = sampler.chain_potential(moved);
        trace
            .test_error
            .push(self.chain_error.iter().sum::<f64>() / self.chains as f64);
        trace.potential.push(
            self.chain_potential
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max),
        );
    }

    /// Keeps the current draw of every chain (counted in `trace`).
    fn keep_draws<C: Chains + ?Sized>(&mut self, sampler: &C, test: &Images, trace: &mut Trace) {
        for (c, w) in sampler.chain_positions().iter().enumerate() {
            for (i, v) in w.iter().enumerate() {
                self.series[c][i].push(*v);
                self.mean[i] += v;
            }
            self.potential_series[c].push(self.chain_potential[c]);
            test.add_probabilities(w, &mut self.predictive);
            self.draw_error_sum += self.chain_error[c];
            trace.kept_draws += 1;
        }
    }

    /// The kept draws' summaries in `trace`: the test errors of the
    /// posterior predictive, of the posterior mean and per draw, and the
    /// ESS of every coordinate and of U.
    fn finish(mut self, test: &Images, trace: &mut Trace) {
        let kept = trace.kept_draws.max(1) as f64;
        for p in self.predictive.iter_mut() {
            *p /= kept;
        }
        for v in self.mean.iter_mut() {
            *v /= kept;
        }
        trace.predictive_error = test.error_of_probabilities(&self.predictive);
        trace.posterior_mean_error = test.error(&self.mean);
        trace.mean_draw_error = self.draw_error_sum / kept;
        let series = &self.series;
        trace.ess = (0..DIMENSION)
            .map(|i| summed_ess(series.iter().map(|chain| chain[i].as_slice())))
            .collect();
        trace.ess_potential = summed_ess(self.potential_series.iter().map(Vec::as_slice));
    }
}

/// Stan's basic ESS of each chain's series, summed; a series that does not
/// vary (NaN ESS) counts 0.
fn summed_ess<'a>(chains: impl Iterator<Item = &'a [f64]>) -> f64 {
    chains
        .map(|c| {
            let e = ess_basic(&[c]);
            if e.is_nan() { 0.0 } else { e }
        })
        .sum()
}
