//! What one run of one sampler configuration produced, in the same form for
//! both libraries: unconstrained draws of every chain plus the costs.

use std::sync::atomic::{AtomicU64, Ordering};

use qnmc_host::model::{KnownPosterior, Model, ModelRng};

/// One chain.
#[derive(Debug, Clone, Default)]
pub struct ChainRun {
    /// Kept draws on the unconstrained scale, row-major: draw i, coordinate j
    /// at `i * dimension + j`.
    pub draws: Vec<f64>,
    /// Gradient evaluations during tuning / warm-up, as the library counts them.
    pub gradients_tuning: u64,
    /// Gradient evaluations of the kept draws, as the library counts them.
    pub gradients_sampling: u64,
    /// Divergent transitions among the kept draws.
    pub divergences_sampling: u64,
    /// Divergent transitions during tuning (`None`: the library does not say).
    pub divergences_tuning: Option<u64>,
    /// Wall time of tuning, seconds (the chain's own clock).
    pub seconds_tuning: f64,
    /// Wall time of the kept draws, seconds.
    pub seconds_sampling: f64,
    /// Sum of the step sizes of the kept draws (their mean is the tuned step
    /// size, jitter averaged out).
    pub step_size_sum: f64,
}

/// All chains of one run of one configuration.
#[derive(Debug, Clone, Default)]
pub struct SamplerRun {
    /// Unconstrained dimension.
    pub dimension: usize,
    /// The chains, run one after another on one thread.
    pub chains: Vec<ChainRun>,
    /// Calls of `Model::potential_and_gradient` counted by [`Counted`], all
    /// chains, everything included (a cross-check of the libraries' counts).
    pub counted_calls: u64,
    /// Wall time of the whole run (setup included), seconds.
    pub seconds_wall: f64,
}

impl SamplerRun {
    /// Draws of coordinate `j`, one vector per chain.
    pub fn column(&self, j: usize) -> Vec<Vec<f64>> {
        self.chains
            .iter()
            .map(|c| {
                c.draws
                    .iter()
                    .skip(j)
                    .step_by(self.dimension)
                    .copied()
                    .collect()
            })
            .collect()
    }
}

/// A model seen through a call counter, reporting its unconstrained
/// coordinates (`constrain` is the identity), so that qnmc's `RunDraws` hold
/// the same quantities nuts-rs's draws do.
pub struct Counted<'a> {
    model: &'a dyn Model,
    calls: AtomicU64,
}

impl<'a> Counted<'a> {
    /// Wraps `model` with a counter at 0.
    pub fn new(model: &'a dyn Model) -> Self {
        Counted {
            model,
            calls: AtomicU64::new(0),
        }
    }

    /// Calls of `potential_and_gradient` so far.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }
}

impl Model for Counted<'_> {
    fn name(&self) -> String {
        self.model.name()
    }

    fn dimension(&self) -> usize {
        self.model.dimension()
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.model.potential_and_gradient(x, gradient)
    }

    fn initial_point(&self) -> Vec<f64> {
        self.model.initial_point()
    }

    fn data_size(&self) -> Option<usize> {
        self.model.data_size()
    }

    fn stochastic_gradient(
        &self,
        x: &[f64],
        batch_size: usize,
        rng: &mut ModelRng,
        gradient: &mut [f64],
    ) {
        self.model.stochastic_gradient(x, batch_size, rng, gradient);
    }

    fn known_posterior(&self) -> Option<KnownPosterior> {
        None
    }
}
