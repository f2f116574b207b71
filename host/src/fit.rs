//! Sampling a model from Rust as `qnmc run` does: [`Sampling`] holds the
//! sampler and its settings (the CLI's defaults unless changed), [`Fit`]
//! what a run gives back — the draws, the summary table's statistics and the
//! health checks with their warnings.
//!
//! The command line calls the same code (`Sampling::draw`), so a model run
//! here and with `qnmc run` with the same settings and seed gives the same
//! bits (a test compares them). [`Sampling`] takes `qnmc run`'s defaults
//! for its sampler ([`RunSettings::for_sampler`](crate::run::RunSettings::for_sampler))
//! and runs what the command runs from [`run`](crate::run) — the refused
//! defaults, the pilot, the chains — and from [`output`](crate::output), the
//! summary and the health checks.
//!
//! ```
//! use qnmc_host::fit::Sampling;
//! use qnmc_host::model::Model;
//!
//! /// Independent N(0, 1) and N(0, 4): U(x) = x₀²/2 + x₁²/8.
//! struct TwoNormals;
//! impl Model for TwoNormals {
//!     fn name(&self) -> String { "two-normals".into() }
//!     fn dimension(&self) -> usize { 2 }
//!     fn potential_and_gradient(&self, x: &[f64], g: &mut [f64]) -> f64 {
//!         g[0] = x[0];
//!         g[1] = x[1] / 4.0;
//!         x[0] * x[0] / 2.0 + x[1] * x[1] / 8.0
//!     }
//! }
//!
//! // NUTS with the quasi-Newton metric, 4 chains, warm-up 500, 1000 draws each.
//! let fit = Sampling::new().seed(1).run(&TwoNormals).unwrap();
//! assert!(fit.usable() && fit.warnings().is_empty(), "{:?}", fit.health.lines());
//! // sd 2 and ~4000 draws of ESS ≳ 1000: the MCSE of the sd is ≲ 0.05.
//! assert!((fit.sd("x[2]").unwrap() - 2.0).abs() < 0.25);
//! ```
//!
//! Any [`Model`] runs: one written by hand as above, a core `Potential` or
//! an `AutodiffModel` through [`PotentialModel`](crate::model::PotentialModel),
//! or a Stan model compiled to a shared library, through the crate
//! `qnmc-stan`'s `StanModel` (its docs show the run; docs/CLI.md, "Your own
//! Stan model", says how to build one).

use crate::draws::RunDraws;
use crate::metric_kind::sampler_label;
use crate::model::{KnownPosterior, Model};
use crate::output::{
    QuantitySummary, RunHealth, RunSummary, assess_run, summarize_run, summary_table_with,
};
use crate::run::{
    DrawSink, PilotLengths, Progress, RunError, RunSettings, SamplerKind, SgDefaults, StopFlag,
    apply_pilot, refused_defaults, run_into,
};

/// A sampler and its settings, ready to run any number of models.
///
/// [`Sampling::new`] is what `qnmc run` runs without options: NUTS with the
/// quasi-Newton metric learned in warm-up, 4 chains in parallel, warm-up 500,
/// 1000 kept draws, seed 2016 ([`RunSettings::for_sampler`]). Every other
/// knob of the CLI is a field of [`RunSettings`], set with
/// [`settings`](Self::settings).
#[derive(Debug, Clone)]
pub struct Sampling {
    sampler: SamplerKind,
    settings: RunSettings,
    warmup_given: bool,
    thin_given: bool,
    progress: bool,
    stop: Option<StopFlag>,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling::new()
    }
}

impl Sampling {
    /// The default sampler (`qnmc run` without `--sampler`) with the CLI's
    /// defaults.
    pub fn new() -> Sampling {
        Sampling::with_sampler(SamplerKind::Nuts)
    }

    /// `sampler` with the defaults `qnmc run --sampler NAME` takes: its
    /// warm-up length, and for the stochastic-gradient samplers the pilot
    /// run that chooses the step size (and, unless given, warm-up and
    /// thinning) from the model.
    pub fn with_sampler(sampler: SamplerKind) -> Sampling {
        Sampling {
            sampler,
            settings: RunSettings::for_sampler(sampler),
            warmup_given: false,
            thin_given: false,
            progress: false,
            stop: None,
        }
    }

    /// `sampler` with `settings` as they are; `lengths` says which of the
    /// warm-up and thinning the pilot may still choose (the CLI: those not
    /// given on the command line).
    pub fn from_settings(
        sampler: SamplerKind,
        settings: RunSettings,
        lengths: PilotLengths,
    ) -> Sampling {
        Sampling {
            sampler,
            settings,
            warmup_given: !lengths.warmup,
            thin_given: !lengths.thin,
            progress: false,
            stop: None,
        }
    }

    /// Independent chains, run in parallel (default 4).
    pub fn chains(mut self, chains: usize) -> Sampling {
        self.settings.chains = chains;
        self
    }

    /// The run's seed (default 2016); chain k draws from
    /// [`chain_seed`](crate::run::chain_seed)`(seed, k)`.
    pub fn seed(mut self, seed: u64) -> Sampling {
        self.settings.seed = seed;
        self
    }

    /// Warm-up iterations per chain (default: the sampler's,
    /// [`default_warmup`](crate::run::default_warmup)). QNHMC freezes its
    /// memory after half of them, as with `--warmup`.
    pub fn warmup(mut self, warmup: usize) -> Sampling {
        if self.settings.qnhmc_freeze_after == Some(self.settings.warmup / 2) {
            self.settings.qnhmc_freeze_after = Some(warmup / 2);
        }
        self.settings.warmup = warmup;
        self.warmup_given = true;
        self
    }

    /// Kept draws per chain (default 1000).
    pub fn draws(mut self, draws: usize) -> Sampling {
        self.settings.draws = draws;
        self
    }

    /// Keep every `thin`-th iteration after warm-up (default 1; the
    /// stochastic-gradient samplers' pilot may choose another).
    pub fn thin(mut self, thin: usize) -> Sampling {
        self.settings.thin = thin;
        self.thin_given = true;
        self
    }

    /// Changes any other setting (the CLI's options, one field each).
    ///
    /// ```
    /// use qnmc_host::fit::Sampling;
    ///
    /// let sampling = Sampling::new().settings(|s| s.target_acceptance = Some(0.95));
    /// assert_eq!(sampling.run_settings().target_acceptance, Some(0.95));
    /// ```
    pub fn settings(mut self, change: impl FnOnce(&mut RunSettings)) -> Sampling {
        change(&mut self.settings);
        self
    }

    /// Draws a progress bar on stderr while the chains run (default: none).
    pub fn progress(mut self, show: bool) -> Sampling {
        self.progress = show;
        self
    }

    /// Ends every chain at its next iteration once `stop` is requested
    /// (from another thread, a signal handler of the program's own): the
    /// run returns the draws made so far, [`RunDraws::interrupted`] says
    /// so, and the summary covers the chains that kept a draw, cut to the
    /// shortest (the health report's note says what was left out). No
    /// signal handler is installed here.
    pub fn stop_on(mut self, stop: StopFlag) -> Sampling {
        self.stop = Some(stop);
        self
    }

    /// The sampler.
    pub fn sampler(&self) -> SamplerKind {
        self.sampler
    }

    /// The settings as they stand (before any pilot run).
    pub fn run_settings(&self) -> &RunSettings {
        &self.settings
    }

    /// Runs the chains on `model` and returns the draws with their summary
    /// and health checks. An error means nothing ran (invalid settings, a
    /// model too large, defaults known not to mix); a run that ran is
    /// returned even when its draws are unusable: check
    /// [`Fit::usable`] and [`Fit::warnings`] before using it, as `qnmc run`
    /// does with its exit code.
    pub fn run(&self, model: &dyn Model) -> Result<Fit, RunError> {
        let drawn = self.draw(
            model,
            |settings, _pilot, total| {
                run_progress(self.sampler, settings, model, total, !self.progress)
            },
            None,
        )?;
        let known = model.known_posterior();
        let (summary, mut health) = match &drawn.draws.interrupted {
            None => {
                let summary = summarize_run(&drawn.draws, known.as_ref());
                let health = assess_run(&drawn.draws, &summary);
                (summary, health)
            }
            Some(interruption) => {
                // The diagnostics need chains of equal length: those that
                // kept a draw, cut to the shortest.
                let mut kept = drawn.draws.clone();
                kept.chains.retain(|c| !c.is_empty());
                let shortest = kept.shortest_chain();
                kept.truncate(shortest);
                let summary = summarize_run(&kept, known.as_ref());
                let mut health = assess_run(&kept, &summary);
                if kept.chains.is_empty() {
                    health.unusable.push(format!(
                        "the run was {} before any chain kept a draw",
                        interruption.describe()
                    ));
                } else {
                    health.warnings.push(format!(
                        "the run was {}: the draws are fewer than asked for",
                        interruption.describe()
                    ));
                }
                (summary, health)
            }
        };
        if let Some(w) = drawn.pilot.as_ref().and_then(|p| p.too_slow_warning()) {
            health.warnings.push(format!("{}: {w}", self.sampler));
        }
        Ok(Fit {
            sampler: self.sampler,
            settings: drawn.settings,
            pilot: drawn.pilot,
            draws: drawn.draws,
            known,
            summary,
            health,
        })
    }

    /// What [`run`](Self::run) and `qnmc run` share: the checks, the pilot
    /// run, the chains. `progress` makes the progress counter from the
    /// settings that will run, the pilot's choices and the run's total
    /// iterations (the CLI prints the choices there, before the chains);
    /// `sink`, if any, receives each chain's draws as they are made (`qnmc
    /// run --output` writes its chain files so).
    pub fn draw(
        &self,
        model: &dyn Model,
        progress: impl FnOnce(&RunSettings, Option<&SgDefaults>, u64) -> Progress,
        sink: Option<&dyn DrawSink>,
    ) -> Result<Drawn, RunError> {
        let mut settings = self.settings.clone();
        settings
            .validate(self.sampler)
            .map_err(RunError::Settings)?;
        if let Some(e) = refused_defaults(
            self.sampler,
            self.thin_given,
            model.dimension(),
            model.data_size(),
        ) {
            return Err(RunError::Settings(e));
        }
        let lengths = PilotLengths {
            warmup: !self.warmup_given,
            thin: !self.thin_given,
        };
        let pilot =
            apply_pilot(model, self.sampler, &mut settings, lengths).map_err(RunError::Settings)?;
        let total = (settings.chains * (settings.warmup + settings.draws * settings.thin)) as u64;
        let mut progress = progress(&settings, pilot.as_ref(), total);
        if let Some(stop) = &self.stop {
            progress = progress.with_stop(stop.clone());
        }
        let draws = run_into(model, self.sampler, &settings, &progress, sink);
        progress.finish();
        Ok(Drawn {
            settings,
            pilot,
            draws: draws?,
        })
    }
}

/// The progress bar of a run of `sampler` with `settings` on `model`:
/// `total` iterations, labelled "nuts (lbfgs metric) on MODEL"; hidden when
/// `quiet`.
pub fn run_progress(
    sampler: SamplerKind,
    settings: &RunSettings,
    model: &dyn Model,
    total: u64,
    quiet: bool,
) -> Progress {
    let metric = (sampler == SamplerKind::Nuts).then(|| settings.metric_for(sampler));
    let label = format!(
        "{} on {}",
        sampler_label(sampler.name(), metric),
        model.name()
    );
    Progress::new(total, &label, quiet)
}

/// The chains of a run before their diagnostics ([`Sampling::draw`]).
#[derive(Debug)]
pub struct Drawn {
    /// The settings that ran (after the pilot's choices).
    pub settings: RunSettings,
    /// What the pilot run chose, if one ran.
    pub pilot: Option<SgDefaults>,
    /// The draws.
    pub draws: RunDraws,
}

/// A finished run: its draws (CmdStan's layout), the statistics of the
/// summary table and the health checks `qnmc run` prints.
#[derive(Debug, Clone)]
pub struct Fit {
    /// The sampler that ran.
    pub sampler: SamplerKind,
    /// The settings that ran, with the pilot's choices.
    pub settings: RunSettings,
    /// What the stochastic-gradient samplers' pilot run chose, if one ran.
    pub pilot: Option<SgDefaults>,
    /// Every chain's kept draws and sampler statistics.
    pub draws: RunDraws,
    /// The model's known posterior moments, if it has them.
    pub known: Option<KnownPosterior>,
    /// Mean, sd, quantiles, bulk and tail ESS, R̂ and MCSE of every
    /// quantity, and each chain's statistics.
    pub summary: RunSummary,
    /// Unusable draws, warnings and notes (divergences, R̂, ESS, E-BFMI,
    /// tree depth, a model that threw), as `qnmc run` prints them.
    pub health: RunHealth,
}

impl Fit {
    /// `false` when the draws must not be used (every transition divergent,
    /// a chain that never moved, a non-finite `lp__`): `qnmc run` exits 3.
    pub fn usable(&self) -> bool {
        self.health.usable()
    }

    /// The warnings, one sentence each (`qnmc run` prints them as
    /// `warning: …`; `--strict` turns them into exit code 4).
    pub fn warnings(&self) -> &[String] {
        &self.health.warnings
    }

    /// The summary table `qnmc run` prints (stansummary's columns).
    pub fn table(&self) -> String {
        summary_table_with(&self.draws, self.known.as_ref(), &self.summary)
    }

    /// The statistics of the quantity `name` (as in the table: `x[1]`,
    /// `tau`).
    pub fn quantity(&self, name: &str) -> Option<&QuantitySummary> {
        self.summary.quantities.iter().find(|q| q.name == name)
    }

    /// Posterior mean of `name`, all chains.
    pub fn mean(&self, name: &str) -> Option<f64> {
        self.quantity(name).map(|q| q.stats.mean)
    }

    /// Posterior standard deviation of `name`, all chains.
    pub fn sd(&self, name: &str) -> Option<f64> {
        self.quantity(name).map(|q| q.stats.sd)
    }

    /// The kept draws of `name`, one vector per chain.
    pub fn draws_of(&self, name: &str) -> Option<Vec<Vec<f64>>> {
        let j = self.draws.names.iter().position(|n| n == name)?;
        Some(self.draws.chains_of(j))
    }
}

#[cfg(test)]
mod tests;
