//! The chain loop every sampler runs: warm-up (dual averaging, QNHMC's
//! memory freezing, the metric's windows), then every `thin`-th iteration
//! kept as a row, with checkpoints and the sink fed as it goes.

use std::time::Instant;

use qnmc::adaptation::{DualAveragingSettings, Warmup};
use qnmc::{Error, Potential, Sampler, StepStats};

use crate::draws::ChainDraws;
use crate::model::{ModelRng, PaddedModel};
use crate::run::checkpoint::run_fingerprint;
use crate::run::checkpointing::{Checkpointing, LoopPoint};
use crate::run::draw_sink::ChainSink;
use crate::run::samplers::ChainSampler;
use crate::run::sink_error::{SinkError, output_error};
use crate::run::{LpMode, RunError, SamplerKind};

use super::{ChainJob, STEP_SIZE_JITTER};

/// Adapter: the dual-averaging driver sees any [`ChainSampler`].
struct Adaptable<'s, const D: usize, S: ?Sized>(&'s mut S);

impl<const D: usize, S: ChainSampler<D> + ?Sized> Sampler<f64, D> for Adaptable<'_, D, S> {
    /// The chain loop keeps the settings; the driver needs only the step size.
    type Settings = ();
    fn settings(&self) -> &() {
        &()
    }
    fn set_step_size(&mut self, step_size: f64) -> Result<(), Error> {
        self.0.set_step_size(step_size)
    }
    fn position(&self) -> &[f64; D] {
        self.0.position()
    }
}

/// Warm-up then sampling, recording every `thin`-th kept iteration: the
/// chain's sink opened, the step-size warm-up started, a checkpoint restored
/// if there is one, then one [`ChainLoop::iterate`] per iteration until the
/// draws are made or a stop is requested.
pub(super) fn drive<const D: usize, S: ChainSampler<D> + ?Sized>(
    job: &ChainJob<'_>,
    target: &PaddedModel<'_, D>,
    sampler: &mut S,
    rng: &mut ModelRng,
    chain: &mut ChainDraws,
) -> Result<(), RunError> {
    let mut sink = match job.sink {
        Some(to) => Some(
            to.sink
                .open_chain(to.run, job.settings, chain)
                .map_err(|e| sink_error(job, e))?,
        ),
        None => None,
    };
    let mut warmup = step_size_warmup(job, sampler, rng)?;
    let mut state = ChainLoop::new(job, target, chain);
    let mut checkpoints = job
        .sink
        .and_then(|to| to.sink.checkpoints())
        .map(|store| Checkpointing::new(store, run_fingerprint(job.model, job.kind, job.settings)));
    if let Some(cp) = &checkpoints {
        state.restore(cp, sampler, warmup.as_mut(), rng, chain, &mut sink)?;
    }
    state.start_clocks();
    while state.iterate(
        sampler,
        warmup.as_mut(),
        rng,
        chain,
        &mut sink,
        checkpoints.as_mut(),
    )? {}
    state.finish(chain);
    if let Some(sink) = sink {
        sink.finished(chain).map_err(|e| sink_error(job, e))?;
    }
    Ok(())
}

/// Dual averaging of the step size for the samplers that adapt it outside
/// NUTS (which runs its own windowed warm-up, `AdaptiveNuts`), started on
/// the sampler; `None` for the others or with a given step size.
fn step_size_warmup<const D: usize, S: ChainSampler<D> + ?Sized>(
    job: &ChainJob<'_>,
    sampler: &mut S,
    rng: &mut ModelRng,
) -> Result<Option<Warmup<f64>>, RunError> {
    let (s, kind) = (job.settings, job.kind);
    let adapt = kind.adapts_step_size() && kind != SamplerKind::Nuts && s.step_size.is_none();
    if !adapt {
        return Ok(None);
    }
    let mut da = DualAveragingSettings::stan(s.step_size_for(kind, job.model.data_size()));
    da.target_acceptance = s.target_acceptance_for(kind);
    let mut w = Warmup::new(da, s.warmup as u64, STEP_SIZE_JITTER)
        .map_err(|e| RunError::Settings(format!("step-size adaptation: {e}")))?;
    if let Some(n) = (kind.entry().step_size_restart)(s) {
        w = w.with_restart(n as u64);
    }
    w.start(&mut Adaptable::<D, S>(sampler), rng)
        .map_err(|e| RunError::Settings(format!("step-size adaptation: {e}")))?;
    Ok(Some(w))
}

/// What a failed step records: refused, divergent, one evaluation.
const REFUSED_STEP: StepStats<f64> = StepStats {
    accepted: false,
    acceptance_probability: 0.0,
    energy_error: f64::NAN,
    divergent: true,
    gradient_evaluations: 1,
    pairs_skipped: 0,
    step_size: f64::NAN,
    energy: None,
};

/// The chain loop's state: where it is (the counters a checkpoint saves as
/// a [`LoopPoint`]), its clocks, what the progress bar has not been told
/// yet, and the scratch a kept draw is written through.
struct ChainLoop<'j, 'a, const D: usize> {
    job: &'j ChainJob<'a>,
    target: &'j PaddedModel<'a, D>,
    /// The model's dimension n, and the coordinates the sampler moves
    /// (n, or more with auxiliary padding).
    n: usize,
    moved: usize,
    /// energy__: H = U + K at the kept draw, for the samplers with a
    /// Hamiltonian. They all move the model's coordinates only; with
    /// auxiliaries H would be that of the padded target, not the model's,
    /// so none is recorded then.
    records_energy: bool,
    /// A sink that keeps the values takes each kept draw's, and the chain
    /// drops them: its memory does not grow with its draws.
    sink_keeps_values: bool,
    /// Which kept draws of a minibatch sampler get a full-data `lp__`.
    lp_mode: LpMode,
    iteration: usize,
    kept: usize,
    /// Warm-up iterations done; a sampler with its own warm-up (NUTS) may
    /// end it before `--warmup` (then the progress bar skips the rest), or
    /// one terminal buffer after it when that buffer diverged
    /// (`AdaptiveNuts::set_divergence_target`).
    warmup_done: Option<usize>,
    lp_seconds: f64,
    /// Seconds of sampling before a restored checkpoint.
    sampling_before: f64,
    warmup_clock: Instant,
    sampling_clock: Instant,
    /// Iterations, and divergent kept draws, not yet counted by the
    /// progress bar.
    unreported: u64,
    unreported_divergent: u64,
    row: Vec<f64>,
    gradient: Box<[f64; D]>,
}

impl<'j, 'a, const D: usize> ChainLoop<'j, 'a, D> {
    fn new(job: &'j ChainJob<'a>, target: &'j PaddedModel<'a, D>, chain: &mut ChainDraws) -> Self {
        let s = job.settings;
        let quantities = job.model.output_names().len();
        let n = job.model.dimension();
        let sink_keeps_values = job.sink.is_some_and(|to| to.sink.keeps_values());
        chain.lp.reserve(s.draws);
        if !sink_keeps_values {
            chain.values.reserve(s.draws * quantities);
        }
        let moved = target.moved_dimension();
        ChainLoop {
            job,
            target,
            n,
            moved,
            records_energy: job.kind.has_hamiltonian() && moved == n,
            sink_keeps_values,
            lp_mode: s.lp_mode(job.model.data_size()),
            iteration: 0,
            kept: 0,
            warmup_done: None,
            lp_seconds: 0.0,
            sampling_before: 0.0,
            warmup_clock: Instant::now(),
            sampling_clock: Instant::now(),
            unreported: 0,
            unreported_divergent: 0,
            row: vec![0.0; quantities],
            gradient: qnmc::in_place::zeroed_box::<[f64; D]>(),
        }
    }

    /// Restores the chain from its checkpoint, if the store holds one: the
    /// sampler, the warm-up, the generator and the counters, then the rows
    /// the chain's file held, given to the sink again.
    fn restore<S: ChainSampler<D> + ?Sized>(
        &mut self,
        cp: &Checkpointing<'_>,
        sampler: &mut S,
        warmup: Option<&mut Warmup<f64>>,
        rng: &mut ModelRng,
        chain: &mut ChainDraws,
        sink: &mut Option<Box<dyn ChainSink>>,
    ) -> Result<(), RunError> {
        let stop_flag = self.job.progress.stop_flag();
        let Some(restored) = cp.restore(stop_flag, sampler, warmup, rng, chain)? else {
            return Ok(());
        };
        let point = restored.point;
        self.iteration = point.iteration;
        self.kept = point.kept;
        self.lp_seconds = point.lp_seconds;
        self.sampling_before = point.sampling_seconds;
        if let Some(w) = point.warmup_done {
            self.warmup_done = Some(w);
            self.warmup_ended(w, sampler, chain);
        }
        // The warm-up is known: the files can take the rows again.
        let keeps_values = self.sink_keeps_values;
        cp.replay(stop_flag, &restored, chain, &mut |chain| {
            give_kept(sink, chain, keeps_values)
        })?;
        self.unreported += self.iteration as u64;
        self.unreported_divergent += chain.divergent.iter().filter(|&&d| d).count() as u64;
        Ok(())
    }

    /// What the warm-up's end after `w` iterations records, in the loop or
    /// from a checkpoint: its length, NUTS's metric (fixed from here on),
    /// and the progress bar told, the warm-up iterations not run included.
    fn warmup_ended<S: ChainSampler<D> + ?Sized>(
        &mut self,
        w: usize,
        sampler: &S,
        chain: &mut ChainDraws,
    ) {
        let (s, kind) = (self.job.settings, self.job.kind);
        chain.warmup_draws = w as u64;
        if kind == SamplerKind::Nuts && s.step_size.is_none() && w > 0 {
            chain.adapted_metric = sampler.adapted_metric(s.metric_for(kind), self.n);
        }
        self.unreported += (s.warmup - w.min(s.warmup)) as u64;
        self.job.progress.warmup_ended();
    }

    /// The clocks start when the loop does.
    fn start_clocks(&mut self) {
        self.warmup_clock = Instant::now();
        self.sampling_clock = Instant::now();
    }

    /// One pass of the loop: the warm-up's end noted, a checkpoint when one
    /// is due, then (unless the draws are made or a stop was requested) one
    /// transition, recorded. Returns whether the loop goes on.
    fn iterate<S: ChainSampler<D> + ?Sized>(
        &mut self,
        sampler: &mut S,
        warmup: Option<&mut Warmup<f64>>,
        rng: &mut ModelRng,
        chain: &mut ChainDraws,
        sink: &mut Option<Box<dyn ChainSink>>,
        checkpoints: Option<&mut Checkpointing<'_>>,
    ) -> Result<bool, RunError> {
        let s = self.job.settings;
        let mut warmup_ended = false;
        if self.warmup_done.is_none() {
            let over = match sampler.is_warming_up() {
                Some(warming_up) => !warming_up,
                None => self.iteration >= s.warmup,
            };
            if over {
                self.warmup_done = Some(self.iteration);
                chain.warmup_seconds += self.warmup_clock.elapsed().as_secs_f64();
                self.warmup_ended(self.iteration, sampler, chain);
                self.sampling_clock = Instant::now();
                warmup_ended = true;
            }
        }
        let sampled = self.warmup_done.map_or(0, |w| self.iteration - w);
        let done = sampled == s.draws * s.thin;
        let stop = !done && self.job.progress.stop_requested();
        // A checkpoint at the warm-up's end, every `interval`, when the
        // chain stops or is done; with saved warm-up draws, not before the
        // first kept draw (until then the chain's file holds no row).
        if let Some(cp) = checkpoints {
            if cp.due(warmup_ended || done || stop) && (!s.save_warmup || !chain.is_empty()) {
                self.checkpoint(cp, sampler, warmup.as_deref(), rng, chain, sink)?;
            }
        }
        if done {
            return Ok(false);
        }
        // A stop request (Ctrl-C in `qnmc run`) ends the chain here, in
        // warm-up or sampling, with the draws kept so far.
        if stop {
            chain.interrupted = true;
            if self.warmup_done.is_none() {
                chain.warmup_draws = self.iteration as u64;
                chain.warmup_seconds += self.warmup_clock.elapsed().as_secs_f64();
            }
            return Ok(false);
        }
        let stats = sampler.step(self.target, rng).unwrap_or(REFUSED_STEP);
        chain.gradient_evaluations += u64::from(stats.gradient_evaluations);
        if let Some(w) = warmup {
            // A refused step size leaves the previous one: nothing to count.
            let _ = w.after_draw(&mut Adaptable::<D, S>(&mut *sampler), &stats, rng);
        }
        // CmdStan saves warm-up iterations 0, thin, 2·thin, …
        if s.save_warmup && self.warmup_done.is_none() && self.iteration % s.thin == 0 {
            self.save_warmup_row(sampler, &stats, chain);
        }
        if self.warmup_done.is_some() && (sampled + 1) % s.thin == 0 {
            self.keep_row(sampler, &stats, chain, sink)?;
        }
        self.iteration += 1;
        self.unreported += 1;
        if self.unreported >= 64 {
            self.job
                .progress
                .advance_with_divergences(self.unreported, self.unreported_divergent);
            self.unreported = 0;
            self.unreported_divergent = 0;
        }
        Ok(true)
    }

    /// Saves a checkpoint of the chain as it is, the sink flushed first.
    fn checkpoint<S: ChainSampler<D> + ?Sized>(
        &self,
        cp: &mut Checkpointing<'_>,
        sampler: &S,
        warmup: Option<&Warmup<f64>>,
        rng: &ModelRng,
        chain: &ChainDraws,
        sink: &mut Option<Box<dyn ChainSink>>,
    ) -> Result<(), RunError> {
        let seconds = |clock: Instant| clock.elapsed().as_secs_f64();
        let point = LoopPoint {
            iteration: self.iteration,
            warmup_done: self.warmup_done,
            kept: self.kept,
            lp_seconds: self.lp_seconds,
            warmup_seconds: chain.warmup_seconds
                + if self.warmup_done.is_none() {
                    seconds(self.warmup_clock)
                } else {
                    0.0
                },
            sampling_seconds: if self.warmup_done.is_some() {
                self.sampling_before + seconds(self.sampling_clock)
            } else {
                0.0
            },
        };
        if let Some(sink) = sink.as_mut() {
            sink.flush().map_err(|e| sink_error(self.job, e))?;
        }
        cp.save(
            self.job.progress.stop_flag(),
            sampler,
            warmup,
            rng,
            chain,
            &point,
        )
    }

    /// A warm-up iteration saved as CmdStan's `save_warmup` does.
    fn save_warmup_row<S: ChainSampler<D> + ?Sized>(
        &mut self,
        sampler: &S,
        stats: &StepStats<f64>,
        chain: &mut ChainDraws,
    ) {
        let (n, moved) = (self.n, self.moved);
        let saved = &mut chain.saved_warmup;
        let x = sampler.position();
        let auxiliary: f64 = x[n..moved].iter().map(|v| 0.5 * v * v).sum();
        saved
            .lp
            .push(sampler.potential().map_or(f64::NAN, |u| -(u - auxiliary)));
        saved.accept_stat.push(stats.acceptance_probability);
        saved.step_size.push(stats.step_size);
        saved.n_leapfrog.push(stats.gradient_evaluations);
        saved.divergent.push(stats.divergent);
        if let Some(depth) = sampler.tree_depth() {
            saved.tree_depth.push(depth);
        }
        if self.records_energy {
            saved.energy.push(stats.energy.unwrap_or(f64::NAN));
        }
        self.job.model.constrain(&x[..n], &mut self.row);
        saved.values.extend_from_slice(&self.row);
    }

    /// A kept draw: its row recorded and given to the sink.
    fn keep_row<S: ChainSampler<D> + ?Sized>(
        &mut self,
        sampler: &S,
        stats: &StepStats<f64>,
        chain: &mut ChainDraws,
        sink: &mut Option<Box<dyn ChainSink>>,
    ) -> Result<(), RunError> {
        let (n, moved) = (self.n, self.moved);
        let x = sampler.position();
        // Minibatch samplers never compute the full-data U: lp__ costs a
        // full pass, timed apart from sampling; NaN when not computed.
        let u_padded = match sampler.potential() {
            Some(u) => Some(u),
            None if self.lp_mode.computes(self.kept) => {
                let clock = Instant::now();
                let u = self.target.potential_and_gradient(x, &mut self.gradient);
                self.lp_seconds += clock.elapsed().as_secs_f64();
                Some(u)
            }
            None => None,
        };
        self.kept += 1;
        let auxiliary: f64 = x[n..moved].iter().map(|v| 0.5 * v * v).sum();
        chain
            .lp
            .push(u_padded.map_or(f64::NAN, |u| -(u - auxiliary)));
        chain.accept_stat.push(stats.acceptance_probability);
        chain.step_size.push(stats.step_size);
        chain.n_leapfrog.push(stats.gradient_evaluations);
        chain.divergent.push(stats.divergent);
        self.unreported_divergent += u64::from(stats.divergent);
        if let Some(depth) = sampler.tree_depth() {
            chain.tree_depth.push(depth);
        }
        if self.records_energy {
            // A refused step (no statistics) has no energy: NaN.
            chain.energy.push(stats.energy.unwrap_or(f64::NAN));
        }
        self.job.model.constrain(&x[..n], &mut self.row);
        chain.values.extend_from_slice(&self.row);
        give_kept(sink, chain, self.sink_keeps_values).map_err(|e| sink_error(self.job, e))
    }

    /// The progress bar told the rest, and the chain's counts and times.
    fn finish(&self, chain: &mut ChainDraws) {
        self.job
            .progress
            .advance_with_divergences(self.unreported, self.unreported_divergent);
        chain.iterations = self.iteration as u64;
        chain.lp_seconds = self.lp_seconds;
        chain.sampling_seconds = if self.warmup_done.is_some() {
            (self.sampling_before + self.sampling_clock.elapsed().as_secs_f64() - self.lp_seconds)
                .max(0.0)
        } else {
            0.0
        };
    }
}

/// Gives the chain's last kept draw to `sink`, if any; a sink that
/// `keeps_values` takes them, and the chain drops them.
fn give_kept(
    sink: &mut Option<Box<dyn ChainSink>>,
    chain: &mut ChainDraws,
    keeps_values: bool,
) -> Result<(), SinkError> {
    if let Some(sink) = sink.as_mut() {
        sink.kept(chain)?;
        if keeps_values {
            chain.values.clear();
            chain.values_from_row = chain.len();
        }
    }
    Ok(())
}

/// A sink's error: the other chains are asked to stop (their draws would
/// not be written), and the run ends with [`RunError::Output`].
fn sink_error(job: &ChainJob<'_>, e: SinkError) -> RunError {
    output_error(job.progress.stop_flag(), e.to_string())
}
