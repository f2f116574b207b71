//! Each core sampler behind one interface, [`ChainSampler`], so a single
//! chain loop ([`super::chain`]) drives them all.

use qnmc::samplers::recipe::ConstantInverseMetric;
use qnmc::{Amagold, Error, HmcBfgs, MhBfgs, Sampler, Step, StepStats};

use super::pilot::MAX_PILOT_DIMENSION;
use crate::draws::{AdaptedMetric, MAX_WRITTEN_METRIC_DIMENSION};
use crate::metric_kind::MetricKind;
use crate::model::{ModelRng, PaddedModel};
use qnmc::adaptation::{AdaptiveNuts, MetricEstimator};
use qnmc::metric::Metric;
use qnmc::saved_state::{SavedState, StateError, restore, save, saved_len};

/// Walkers of the HMC-BFGS and MH-BFGS ensembles.
pub const ENSEMBLE_WALKERS: usize = 8;
/// Pair capacity of the ensembles' metric: K − 2 (the other K − 1 walkers
/// give K − 2 difference pairs).
pub const ENSEMBLE_MEMORY: usize = ENSEMBLE_WALKERS - 2;

/// A core sampler as the chain loop sees it.
pub(crate) trait ChainSampler<const D: usize> {
    /// One iteration. `Err`: the sampler refused a non-finite gradient or
    /// proposal and is unchanged (counted as a divergence).
    fn step(
        &mut self,
        target: &PaddedModel<'_, D>,
        rng: &mut ModelRng,
    ) -> Result<StepStats<f64>, Error>;
    /// The reported state (walker 0 for the ensembles).
    fn position(&self) -> &[f64; D];
    /// U at [`position`](Self::position) when the sampler tracks it.
    fn potential(&self) -> Option<f64>;
    /// Sets the step size of the next iterations.
    fn set_step_size(&mut self, step_size: f64) -> Result<(), Error>;
    /// For a sampler that runs its own warm-up and may end it early or extend
    /// it (NUTS):
    /// whether the next iteration is still a warm-up draw. `None`: the chain
    /// loop counts `--warmup` iterations.
    fn is_warming_up(&self) -> Option<bool> {
        None
    }
    /// NUTS only: tree depth of the last transition.
    fn tree_depth(&self) -> Option<u32> {
        None
    }
    /// NUTS only: its metric, of `kind` on the model's `n` coordinates, as
    /// the CmdStan files write it.
    fn adapted_metric(&self, kind: MetricKind, n: usize) -> Option<AdaptedMetric> {
        let _ = (kind, n);
        None
    }
    /// The sampler's whole state as [`qnmc::saved_state`] bytes (a
    /// checkpoint's).
    fn saved_state(&self) -> Vec<u8>;
    /// Restores [`saved_state`](Self::saved_state)'s bytes; refused bytes
    /// leave the sampler unchanged.
    fn restore_state(&mut self, bytes: &[u8]) -> Result<(), StateError>;
}

/// `value`'s [`qnmc::saved_state`] bytes.
pub(crate) fn state_bytes<S: SavedState + ?Sized>(value: &S) -> Vec<u8> {
    let mut bytes = vec![0; saved_len(value)];
    // The buffer is `saved_len` long: saving cannot fail.
    let _ = save(value, &mut bytes);
    bytes
}

/// Every core sampler whose transition reports [`StepStats`] is a chain
/// sampler as it is: the core's [`Sampler`] and [`Step`] traits are the
/// chain loop's interface (HMC, QNHMC, HAMCMC, the recipe family). What
/// needs more is wrapped: NUTS with its warm-up ([`NutsChain`]), AMAGOLD or
/// L2MC ([`AmagoldChain`]) and the ensembles' sweeps ([`Sweep`]).
impl<const D: usize, S> ChainSampler<D> for S
where
    S: for<'m> Step<f64, D, PaddedModel<'m, D>, Stats = StepStats<f64>> + SavedState,
{
    fn step(
        &mut self,
        target: &PaddedModel<'_, D>,
        rng: &mut ModelRng,
    ) -> Result<StepStats<f64>, Error> {
        Step::step(self, target, rng)
    }
    fn position(&self) -> &[f64; D] {
        Sampler::position(self)
    }
    fn potential(&self) -> Option<f64> {
        Sampler::potential(self)
    }
    fn set_step_size(&mut self, step_size: f64) -> Result<(), Error> {
        Sampler::set_step_size(self, step_size)
    }
    fn saved_state(&self) -> Vec<u8> {
        state_bytes(self)
    }
    fn restore_state(&mut self, bytes: &[u8]) -> Result<(), StateError> {
        restore(self, bytes)
    }
}

/// The host's NUTS: trees up to [`MAX_TREE_DEPTH`](super::MAX_TREE_DEPTH)
/// levels deep, so that any `--max-tree-depth` the CLI takes runs.
pub(crate) type HostNuts<const D: usize, E> =
    AdaptiveNuts<f64, D, E, { super::MAX_TREE_DEPTH as usize }>;

/// NUTS with its own windowed warm-up. During warm-up a draw's gradient
/// count includes the step-size searches made after it, so the run's total
/// is every gradient the chain spent.
pub(crate) struct NutsChain<const D: usize, E: MetricEstimator<f64, D>> {
    pub(crate) chain: Box<HostNuts<D, E>>,
    /// Tree depth of the last transition.
    pub(crate) last_depth: Option<u32>,
}

impl<const D: usize, E: MetricEstimator<f64, D>> ChainSampler<D> for NutsChain<D, E>
where
    HostNuts<D, E>: SavedState,
{
    fn step(
        &mut self,
        target: &PaddedModel<'_, D>,
        rng: &mut ModelRng,
    ) -> Result<StepStats<f64>, Error> {
        let warming_up = self.chain.is_warming_up();
        let before = self.chain.warmup_gradient_evaluations();
        let nuts = self.chain.step(target, rng);
        self.last_depth = Some(nuts.tree_depth);
        let mut stats = nuts.step_stats();
        if warming_up {
            let spent = self.chain.warmup_gradient_evaluations() - before;
            stats.gradient_evaluations = u32::try_from(spent).unwrap_or(u32::MAX);
        }
        Ok(stats)
    }
    fn position(&self) -> &[f64; D] {
        self.chain.position()
    }
    fn potential(&self) -> Option<f64> {
        Some(self.chain.sampler().potential())
    }
    fn set_step_size(&mut self, step_size: f64) -> Result<(), Error> {
        self.chain.set_step_size(step_size)
    }
    fn is_warming_up(&self) -> Option<bool> {
        Some(self.chain.is_warming_up())
    }
    fn tree_depth(&self) -> Option<u32> {
        self.last_depth
    }
    fn adapted_metric(&self, kind: MetricKind, n: usize) -> Option<AdaptedMetric> {
        let metric = self.chain.sampler().metric();
        // M⁻¹ e_j, column by column (boxed: D may be 2¹⁴).
        let mut unit = qnmc::in_place::zeroed_box::<[f64; D]>();
        let mut column = qnmc::in_place::zeroed_box::<[f64; D]>();
        Some(match kind {
            MetricKind::Identity => AdaptedMetric::Unit,
            MetricKind::Diagonal => {
                unit[..n].fill(1.0);
                metric.velocity(&unit, &mut column);
                AdaptedMetric::Diagonal(column[..n].to_vec())
            }
            MetricKind::Dense | MetricKind::Lbfgs if n <= MAX_WRITTEN_METRIC_DIMENSION => {
                let mut inverse = vec![0.0; n * n];
                for j in 0..n {
                    unit[j] = 1.0;
                    metric.velocity(&unit, &mut column);
                    unit[j] = 0.0;
                    for i in 0..n {
                        inverse[i * n + j] = column[i];
                    }
                }
                AdaptedMetric::Dense(inverse)
            }
            MetricKind::Dense | MetricKind::Lbfgs => AdaptedMetric::NotWritten,
        })
    }
    /// The sampler and its warm-up; `last_depth` is the last transition's
    /// and is set again by the next.
    fn saved_state(&self) -> Vec<u8> {
        state_bytes(&*self.chain)
    }
    fn restore_state(&mut self, bytes: &[u8]) -> Result<(), StateError> {
        restore(&mut *self.chain, bytes)
    }
}

/// AMAGOLD (minibatch inner steps) or L2MC (full batch).
pub(crate) struct AmagoldChain<const D: usize> {
    pub(crate) sampler: Box<Amagold<f64, D>>,
    pub(crate) full_batch: bool,
}

impl<const D: usize> ChainSampler<D> for AmagoldChain<D> {
    fn step(
        &mut self,
        target: &PaddedModel<'_, D>,
        rng: &mut ModelRng,
    ) -> Result<StepStats<f64>, Error> {
        Ok(if self.full_batch {
            self.sampler.step_full_batch(target, rng)
        } else {
            self.sampler.step(target, rng)
        })
    }
    fn position(&self) -> &[f64; D] {
        self.sampler.position()
    }
    fn potential(&self) -> Option<f64> {
        Some(self.sampler.potential())
    }
    fn set_step_size(&mut self, step_size: f64) -> Result<(), Error> {
        self.sampler.set_step_size(step_size)
    }
    fn saved_state(&self) -> Vec<u8> {
        state_bytes(&*self.sampler)
    }
    fn restore_state(&mut self, bytes: &[u8]) -> Result<(), StateError> {
        restore(&mut *self.sampler, bytes)
    }
}

/// An ensemble (boxed) whose iteration is a sweep: every walker moves once
/// (the core's [`Step`] moves one). The statistics are walker 0's, except the
/// acceptance probability (mean over the sweep, what the dual averaging
/// sees) and the gradient count (sum).
pub(crate) struct Sweep<S>(pub(crate) S);

macro_rules! ensemble_sampler {
    ($name:ident) => {
        impl<const D: usize> ChainSampler<D>
            for Sweep<Box<$name<f64, D, ENSEMBLE_WALKERS, ENSEMBLE_MEMORY>>>
        {
            fn step(
                &mut self,
                target: &PaddedModel<'_, D>,
                rng: &mut ModelRng,
            ) -> Result<StepStats<f64>, Error> {
                let mut first: Option<StepStats<f64>> = None;
                let (mut acceptance, mut gradients) = (0.0, 0u32);
                for _ in 0..ENSEMBLE_WALKERS {
                    let walker = self.0.next_chain();
                    let stats = $name::step(&mut *self.0, target, rng);
                    let a = stats.acceptance_probability;
                    acceptance += if a.is_finite() { a } else { 0.0 };
                    gradients = gradients.saturating_add(stats.gradient_evaluations);
                    if walker == 0 {
                        first = Some(stats);
                    }
                }
                let mut stats = first.unwrap_or_else(|| StepStats {
                    accepted: false,
                    acceptance_probability: 0.0,
                    energy_error: 0.0,
                    divergent: false,
                    gradient_evaluations: 0,
                    pairs_skipped: 0,
                    step_size: self.0.settings().step_size,
                    energy: None,
                });
                stats.acceptance_probability = acceptance / ENSEMBLE_WALKERS as f64;
                stats.gradient_evaluations = gradients;
                Ok(stats)
            }
            fn position(&self) -> &[f64; D] {
                Sampler::position(&*self.0)
            }
            fn potential(&self) -> Option<f64> {
                Sampler::potential(&*self.0)
            }
            fn set_step_size(&mut self, step_size: f64) -> Result<(), Error> {
                Sampler::set_step_size(&mut *self.0, step_size)
            }
            fn saved_state(&self) -> Vec<u8> {
                state_bytes(&*self.0)
            }
            fn restore_state(&mut self, bytes: &[u8]) -> Result<(), StateError> {
                restore(&mut *self.0, bytes)
            }
        }
    };
}

ensemble_sampler!(HmcBfgs);
ensemble_sampler!(MhBfgs);

/// SGRLD's and SGRHMC's metric: a constant diagonal G⁻¹ (∂G⁻¹ = 0), the
/// pilot's G = diag(Hessian at the mode) on the model's coordinates and the
/// identity beyond them (auxiliaries, padding) or without a pilot. The
/// core's [`ConstantInverseMetric`] holding [`MAX_PILOT_DIMENSION`] values:
/// 8 KB whatever the storage D, so the in-place constructors, which move
/// the metric in, build the samplers at D = 2²⁰ too (the pilot stops at
/// [`MAX_PILOT_DIMENSION`] coordinates, so a larger model gets G = I).
pub type SgMetric = ConstantInverseMetric<f64, MAX_PILOT_DIMENSION>;

/// [`SgMetric`] from the model's entries of G⁻¹ (the pilot's), or G = I
/// without them.
pub fn sg_metric(inverse: Option<&[f64]>) -> SgMetric {
    inverse.map_or_else(SgMetric::identity, SgMetric::from_leading)
}
