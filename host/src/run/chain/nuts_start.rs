//! NUTS with the quasi-Newton metric, started apart from its draws: the
//! L-BFGS start of every chain runs first, so that the runner can compare
//! the chains' optima ([`crate::run::minor_modes`]) before any draws.

use std::time::Instant;

use qnmc::adaptation::{
    DEFAULT_RANK_TOLERANCE, LbfgsEstimator, LbfgsEstimatorSettings, WarmupSchedule,
};

use crate::draws::{ChainDraws, ChainRestart};
use crate::run::samplers::NutsChain;
use crate::run::{
    NUTS_NO_OPTIMUM_COVARIANCE_BUCKET, NUTS_WINDOW_COVARIANCE_MEMORY, RunError, nuts_dimension,
};

use super::{ChainJob, Setup, adaptive_nuts, drive, sampler_error, setup};

/// A chain of NUTS with the quasi-Newton metric that has made its start —
/// the L-BFGS optimisation, the secants at the optimum, the first step size
/// — and drawn nothing yet: the runner compares the chains' optima before
/// the draws ([`crate::run::minor_modes`]).
pub(crate) trait StartedChain: Send {
    /// [`LbfgsEstimator::laplace_log_mass`] of the chain's optimum.
    fn laplace_log_mass(&self) -> Option<f64>;
    /// [`LbfgsEstimator::started_at_optimum`]: whether the chain's
    /// optimisation found an optimum.
    fn started_at_optimum(&self) -> bool;
    /// The point the chain's optimisation started from (the model's
    /// coordinates).
    fn initial_point(&self) -> Vec<f64>;
    /// Makes the start again from `initial` (another chain's initial point),
    /// its gradients and time counted with the chain's, and records why.
    fn restart_from(
        &mut self,
        job: &ChainJob<'_>,
        initial: &[f64],
        restart: ChainRestart,
    ) -> Result<(), RunError>;
    /// Warm-up and sampling.
    fn finish(self: Box<Self>, job: &ChainJob<'_>) -> Result<ChainDraws, RunError>;
}

struct StartedNutsLbfgs<'a, const D: usize, const M: usize> {
    setup: Setup<'a, D>,
    settings: LbfgsEstimatorSettings<f64>,
    sampler: NutsChain<D, LbfgsEstimator<f64, D, M>>,
    /// Wall time of the starts (counted with the warm-up's).
    start_seconds: f64,
}

/// Builds the sampler at `x.start` and makes its start (counting its
/// gradients in `x.chain`); returns it and the seconds it took.
fn started_sampler<const D: usize, const M: usize>(
    job: &ChainJob<'_>,
    x: &mut Setup<'_, D>,
    settings: LbfgsEstimatorSettings<f64>,
) -> Result<(NutsChain<D, LbfgsEstimator<f64, D, M>>, f64), RunError> {
    let clock = Instant::now();
    let mut sampler = adaptive_nuts::<D, LbfgsEstimator<f64, D, M>>(
        job,
        x,
        settings,
        WarmupSchedule::after_optimization,
    )
    .map_err(sampler_error(job.kind))?;
    sampler.chain.prepare_warmup(&x.target, &mut x.rng);
    x.chain.gradient_evaluations += sampler.chain.warmup_gradient_evaluations();
    Ok((sampler, clock.elapsed().as_secs_f64()))
}

impl<const D: usize, const M: usize> StartedChain for StartedNutsLbfgs<'_, D, M> {
    fn laplace_log_mass(&self) -> Option<f64> {
        self.sampler.chain.estimator().laplace_log_mass()
    }
    fn started_at_optimum(&self) -> bool {
        self.sampler.chain.estimator().started_at_optimum()
    }
    fn initial_point(&self) -> Vec<f64> {
        self.setup.start[..self.setup.target.model_dimension()].to_vec()
    }
    fn restart_from(
        &mut self,
        job: &ChainJob<'_>,
        initial: &[f64],
        restart: ChainRestart,
    ) -> Result<(), RunError> {
        let n = initial.len().min(D);
        self.setup.start[..n].copy_from_slice(&initial[..n]);
        self.setup.chain.restart = Some(restart);
        let (sampler, seconds) = started_sampler::<D, M>(job, &mut self.setup, self.settings)?;
        self.sampler = sampler;
        self.start_seconds += seconds;
        Ok(())
    }
    fn finish(self: Box<Self>, job: &ChainJob<'_>) -> Result<ChainDraws, RunError> {
        let StartedNutsLbfgs {
            mut setup,
            mut sampler,
            start_seconds,
            ..
        } = *self;
        // The start (the L-BFGS optimisation) counts as warm-up time.
        setup.chain.warmup_seconds = start_seconds;
        drive(
            job,
            &setup.target,
            &mut sampler,
            &mut setup.rng,
            &mut setup.chain,
        )?;
        Ok(setup.chain)
    }
}

/// Chain `k` of NUTS with the quasi-Newton metric, in storage of compile-time
/// dimension `D` with memory `M` (`--memory` pairs kept), after its start
/// (the estimator moves it to the mode by L-BFGS, then a draw away).
pub(crate) fn start_nuts_lbfgs_chain<'a, const D: usize, const M: usize>(
    job: &ChainJob<'a>,
    k: usize,
) -> Result<Box<dyn StartedChain + 'a>, RunError> {
    let mut setup = setup::<D>(job, k)?;
    let mut settings = LbfgsEstimatorSettings::new(DEFAULT_RANK_TOLERANCE);
    settings.max_pairs = job.settings.memory_for(job.kind);
    settings.window_covariance = job.settings.window_covariance;
    settings.optimum_secants = job.settings.optimum_secants;
    if M == NUTS_WINDOW_COVARIANCE_MEMORY
        && nuts_dimension(job.model.dimension()).ok() == Some(NUTS_NO_OPTIMUM_COVARIANCE_BUCKET)
    {
        // The 25 bucket in the 32 bucket's storage: as with 20 pairs where
        // the start finds an optimum (`NUTS_NO_OPTIMUM_COVARIANCE_BUCKET`).
        settings.covariance_without_optimum_only = true;
        settings.optimum_secants = false;
    }
    let (sampler, start_seconds) = started_sampler::<D, M>(job, &mut setup, settings)?;
    Ok(Box::new(StartedNutsLbfgs {
        setup,
        settings,
        sampler,
        start_seconds,
    }))
}
