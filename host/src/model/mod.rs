//! The runtime-dimension model interface that the `qnmc` command line runs.
//!
//! The core samplers are generic over a compile-time dimension `D`; a target
//! chosen on the command line (a CSV file, a posteriordb posterior) only knows
//! its dimension at run time. [`Model`] is that run-time face: slices instead
//! of arrays, `f64` only, object safe so the CLI can hold a `Box<dyn Model>`.
//! Besides U and ∇U a model may give a stochastic gradient (for the
//! minibatch samplers), the map to its reported quantities
//! ([`Model::constrain`]), what is known of its posterior
//! ([`Model::known_posterior`], or a [`Model::reference_model`], a twin
//! that a reference run samples instead), its description for `model.json` ([`Model::description`]) and
//! its coefficients on the data's original scale ([`Model::original_scale`]).
//! [`PotentialModel`] is the other way round: any core [`Potential`] (a
//! hand-written gradient, or an `AutodiffModel` in `ForwardGradient`) as a
//! [`Model`], for [`Sampling`](crate::fit::Sampling).
//! [`PaddedModel`] turns any `&dyn Model` into a core [`Potential`] and
//! [`MinibatchPotential`] of a fixed `D ≥ dimension()`: coordinates past the
//! model's own are independent N(0, 1) auxiliaries that the caller drops from
//! the output (they do not change the marginal of the model's coordinates),
//! or, for NUTS with its run-time dimension
//! ([`PaddedModel::frozen_padding`]), coordinates never read or written.
//!
//! ```
//! use qnmc::Potential;
//! use qnmc_host::model::{Model, PaddedModel};
//!
//! /// U(x) = x₀²/2 + x₁²/8: independent N(0, 1) and N(0, 4).
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
//! let model = TwoNormals;
//! assert_eq!(model.output_names(), ["x[1]", "x[2]"]);
//! // Run it as a 4-dimensional core target: two auxiliary N(0, 1) coordinates.
//! let padded = PaddedModel::<4>::new(&model).unwrap();
//! let mut g = [0.0; 4];
//! let u = padded.potential_and_gradient(&[1.0, 2.0, 3.0, 0.0], &mut g);
//! assert_eq!(u, 0.5 + 0.5 + 4.5);
//! assert_eq!(g, [1.0, 0.5, 3.0, 0.0]);
//! ```

mod per_thread;
mod potential_model;

pub use per_thread::PerThread;
pub use potential_model::{PotentialModel, WrongNameCount};

use qnmc::{MinibatchPotential, Potential};
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

/// The random-number generator handed to [`Model::stochastic_gradient`].
pub type ModelRng = XorShiftRng;

/// A target density on ℝⁿ with n known at run time: U(x) = −log π(x) up to a
/// constant, written on the unconstrained space (log-Jacobians of constraining
/// transforms included), and the map to the quantities reported to the user.
pub trait Model: Send + Sync {
    /// Short identifier, as accepted by `--target` (e.g. `logreg-german`).
    fn name(&self) -> String;

    /// Number n of unconstrained coordinates the sampler moves.
    fn dimension(&self) -> usize;

    /// U(x) and ∇U(x) at `x` (`x.len() == gradient.len() == dimension()`).
    /// A value or gradient that is not finite is allowed: the samplers reject
    /// such transitions and count them.
    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64;

    /// Names of the reported quantities, Stan style with 1-based indices
    /// (`w[1]`, `theta[3]`, `tau`). Default: `x[1]`, …, `x[n]`.
    fn output_names(&self) -> Vec<String> {
        (1..=self.dimension()).map(|i| format!("x[{i}]")).collect()
    }

    /// Writes the reported quantities at unconstrained `x` into `out`
    /// (`out.len() == output_names().len()`). Default: the identity.
    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        out.copy_from_slice(x);
    }

    /// A starting point (unconstrained). Default: the origin.
    fn initial_point(&self) -> Vec<f64> {
        vec![0.0; self.dimension()]
    }

    /// Number of data points the stochastic gradient subsamples, if any
    /// (`None` for targets whose stochastic gradient is the exact one or
    /// artificial noise).
    fn data_size(&self) -> Option<usize> {
        None
    }

    /// `true` when [`stochastic_gradient`](Self::stochastic_gradient) is the
    /// exact ∇U (no data to subsample, no injected noise). Default: `true`
    /// for models without [`data_size`](Self::data_size); a model that
    /// injects artificial noise must say `false`. The pilot of the
    /// stochastic-gradient samplers ([`crate::run::pilot`]) uses it: with an
    /// exact gradient its minibatch noise term is 0, with injected noise of
    /// unknown form it does not run.
    fn stochastic_gradient_is_exact(&self) -> bool {
        self.data_size().is_none()
    }

    /// An unbiased estimate of ∇U(x), for the stochastic-gradient samplers:
    /// a minibatch of `batch_size` data points or injected noise, drawn with
    /// `rng`. Default: the exact gradient.
    fn stochastic_gradient(
        &self,
        x: &[f64],
        batch_size: usize,
        rng: &mut ModelRng,
        gradient: &mut [f64],
    ) {
        let _ = (batch_size, rng);
        let _ = self.potential_and_gradient(x, gradient);
    }

    /// What is known about the posterior of the reported quantities, if
    /// anything: analytic moments or reference draws.
    fn known_posterior(&self) -> Option<KnownPosterior> {
        None
    }

    /// A model of the same posterior with the same reported quantities,
    /// written in coordinates a reference run mixes in (a non-centred twin
    /// of a centred hierarchy), for targets without a
    /// [`known_posterior`](Self::known_posterior):
    /// [`reference_run`](crate::run::reference_run) samples it (NUTS with
    /// the diagonal metric) instead of this model. Default: `None`.
    fn reference_model(&self) -> Option<Box<dyn Model>> {
        None
    }

    /// What a user needs to reproduce or read a fit of this model, written to
    /// `model.json` by `qnmc run --output` (e.g. for a CSV fit: data file and
    /// its SHA-256, label column and rule, covariate names, standardisation,
    /// prior). Default: nothing beyond the target's name.
    fn description(&self) -> Option<serde_json::Value> {
        None
    }

    /// A note for the user when evaluations of U failed during the run
    /// (e.g. a Stan model's `reject()`: those transitions were rejected and
    /// counted as divergent). Default: `None`.
    fn evaluation_failures(&self) -> Option<String> {
        None
    }

    /// The reported quantities mapped to the data's original scale, when the
    /// model samples a transformed version of them (coefficients of
    /// standardised covariates). Default: `None` (already on that scale).
    fn original_scale(&self) -> Option<OriginalScale> {
        None
    }
}

/// A linear map from the reported quantities w to quantities on the data's
/// original scale, β = A·w (for standardised covariates x ↦ (x − m)/s:
/// βⱼ = wⱼ/sⱼ and the intercept β₀ = w₀ − Σⱼ wⱼ·mⱼ/sⱼ).
#[derive(Debug, Clone, PartialEq)]
pub struct OriginalScale {
    /// Name of each βᵢ.
    pub names: Vec<String>,
    /// Row i holds Aᵢ, one weight per reported quantity.
    pub rows: Vec<Vec<f64>>,
}

impl OriginalScale {
    /// β = A·`w`.
    pub fn apply(&self, w: &[f64]) -> Vec<f64> {
        self.rows
            .iter()
            .map(|row| row.iter().zip(w).map(|(a, x)| a * x).sum())
            .collect()
    }
}

/// Posterior moments of the reported quantities that draws can be checked
/// against (`qnmc check`) and plotted against.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownPosterior {
    /// Where the numbers come from (e.g. "analytic", "posteriordb reference
    /// draws (Stan NUTS, 10 × 1000)").
    pub source: String,
    /// Posterior mean of each reported quantity.
    pub mean: Vec<f64>,
    /// Posterior standard deviation of each reported quantity.
    pub sd: Vec<f64>,
    /// Monte-Carlo standard error of `mean` when it was estimated from
    /// reference draws (`None`: exact).
    pub mean_mcse: Option<Vec<f64>>,
    /// Monte-Carlo standard error of `sd` when estimated (`None`: exact).
    pub sd_mcse: Option<Vec<f64>>,
    /// Marginal densities are Gaussian with `mean` and `sd` (plots draw them).
    pub gaussian_marginals: bool,
}

impl KnownPosterior {
    /// Appends one quantity estimated from reference draws (one slice per
    /// chain): pooled mean and sd (N − 1), and, where this posterior carries
    /// MCSEs, [`mcse_mean`](crate::diagnostics::mcse_mean) and
    /// [`mcse_sd`](crate::diagnostics::mcse_sd) of the chains.
    pub fn push_estimated(&mut self, chains: &[&[f64]]) {
        let all: Vec<f64> = chains.concat();
        self.mean.push(crate::diagnostics::mean(&all));
        self.sd.push(crate::diagnostics::variance(&all).sqrt());
        if let Some(m) = self.mean_mcse.as_mut() {
            m.push(crate::diagnostics::mcse_mean(chains));
        }
        if let Some(s) = self.sd_mcse.as_mut() {
            s.push(crate::diagnostics::mcse_sd(chains));
        }
    }
}

/// Why a [`PaddedModel`] could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DimensionTooSmall {
    /// The model's dimension.
    pub model: usize,
    /// The compile-time dimension asked for.
    pub padded: usize,
}

impl core::fmt::Display for DimensionTooSmall {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "a model of dimension {} does not fit a sampler of dimension {}",
            self.model, self.padded
        )
    }
}

impl std::error::Error for DimensionTooSmall {}

/// A [`Model`] seen as a core target of compile-time dimension `D`: the model's
/// n coordinates first, then D − n independent N(0, 1) auxiliaries, or, for
/// a sampler that keeps coordinates n.. at zero itself (NUTS with its
/// run-time dimension, [`frozen_padding`](Self::frozen_padding)), nothing.
///
/// As a [`MinibatchPotential`] a batch is a seed drawn from the sampler's
/// generator; the gradient estimate is [`Model::stochastic_gradient`] with a
/// generator seeded by it (so a chain stays reproducible from its seed).
#[derive(Clone, Copy)]
pub struct PaddedModel<'a, const D: usize> {
    model: &'a dyn Model,
    n: usize,
    batch_size: usize,
    auxiliaries: bool,
}

impl<'a, const D: usize> PaddedModel<'a, D> {
    /// Wraps `model`; fails when `model.dimension() > D` or the model has no
    /// coordinates.
    pub fn new(model: &'a dyn Model) -> Result<Self, DimensionTooSmall> {
        let n = model.dimension();
        if n > D || n == 0 {
            return Err(DimensionTooSmall {
                model: n,
                padded: D,
            });
        }
        Ok(PaddedModel {
            model,
            n,
            batch_size: 0,
            auxiliaries: true,
        })
    }

    /// No auxiliaries: for a sampler that keeps coordinates n.. at zero and
    /// never reads the gradient there (NUTS after
    /// [`AdaptiveNuts::set_dimension`](qnmc::adaptation::AdaptiveNuts::set_dimension)).
    /// U and ∇U are the model's alone, the gradient from n on is left as it
    /// is, and starting points are drawn in the first n coordinates only.
    pub fn frozen_padding(mut self) -> Self {
        self.auxiliaries = false;
        self
    }

    /// The coordinates a sampler moves: D with auxiliaries, else the
    /// model's n.
    pub fn moved_dimension(&self) -> usize {
        if self.auxiliaries { D } else { self.n }
    }

    /// Sets the minibatch size passed to [`Model::stochastic_gradient`].
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size;
        self
    }

    /// The wrapped model.
    pub fn model(&self) -> &'a dyn Model {
        self.model
    }

    /// The model's own dimension n ≤ D.
    pub fn model_dimension(&self) -> usize {
        self.n
    }

    /// A padded starting point: the model's initial point, auxiliaries 0.
    pub fn initial_point(&self) -> [f64; D] {
        let mut x = [0.0; D];
        self.write_initial_point(&mut x);
        x
    }

    /// Writes [`initial_point`](Self::initial_point) into `x` (for a large
    /// D, whose array does not belong on the stack).
    pub fn write_initial_point(&self, x: &mut [f64; D]) {
        let start = self.model.initial_point();
        x[..self.n].copy_from_slice(&start[..self.n]);
        x[self.n..].fill(0.0);
    }

    fn auxiliary(&self, x: &[f64; D], gradient: &mut [f64; D]) -> f64 {
        if !self.auxiliaries {
            return 0.0;
        }
        let mut u = 0.0;
        for i in self.n..D {
            gradient[i] = x[i];
            u += 0.5 * x[i] * x[i];
        }
        u
    }
}

impl<const D: usize> Potential<f64, D> for PaddedModel<'_, D> {
    fn potential_and_gradient(&self, x: &[f64; D], gradient: &mut [f64; D]) -> f64 {
        let u = self
            .model
            .potential_and_gradient(&x[..self.n], &mut gradient[..self.n]);
        u + self.auxiliary(x, gradient)
    }
}

impl<const D: usize> MinibatchPotential<f64, D> for PaddedModel<'_, D> {
    type Batch = u64;

    fn draw_batch<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        rng.next_u64()
    }

    fn minibatch_gradient(&self, batch: &u64, x: &[f64; D], gradient: &mut [f64; D]) {
        let mut rng = ModelRng::seed_from_u64(*batch);
        self.model.stochastic_gradient(
            &x[..self.n],
            self.batch_size,
            &mut rng,
            &mut gradient[..self.n],
        );
        let _ = self.auxiliary(x, gradient);
    }
}
