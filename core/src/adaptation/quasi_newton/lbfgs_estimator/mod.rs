//! [`LbfgsEstimator`]: learns the quasi-Newton metric
//! [`LbfgsMetric`] from the warm-up's slow windows.
//!
//! The diagonal base is [`DiagonalEstimator`]'s σᵢ² = √(Var θᵢ / Var ∂ᵢU).
//! The curvature pairs come from the draws themselves: every two consecutive
//! slow-window draws give a pair s = θₜ − θₜ₋₁, y = ∇U(θₜ) − ∇U(θₜ₋₁), a secant
//! of the posterior's curvature along s (exact for a Gaussian, whatever the two
//! points). Over a window the estimator keeps the `M` pairs along which the
//! diagonal base is most wrong, scored in the base's scaled coordinates
//! (s̃ = s/√b, ỹ = y∘√b) by |ln(s̃ᵀỹ/s̃ᵀs̃)| + |ln(ỹᵀỹ/s̃ᵀỹ)|: both Rayleigh
//! quotients are 1 along a direction the base already gets right.
//!
//! At the window's end the kept pairs are made mutually conjugate (each pair
//! minus its components along the earlier ones, sⱼᵀyₖ = 0 for j < k; a linear
//! combination of secant pairs of a quadratic is again an exact pair), so
//! that the BFGS update has the hereditary property: H yⱼ = sⱼ for every kept
//! pair, not just the newest. A pair whose s or y becomes (nearly) dependent
//! on the earlier ones or that loses its positive curvature is dropped, and
//! at most D pairs are kept (D conjugate pairs already span every direction;
//! a further one is the target's departure from a quadratic plus rounding). The metric is then
//! rebuilt on the new diagonal base.
//!
//! Three candidates compete at each window end — the metric in force, the new
//! diagonal with the window's pairs, and the new diagonal alone — by the Fisher
//! divergence criterion on the window's last `M` draws (the criterion nuts-rs
//! adapts with): for a Gaussian π with covariance Σ the map x ↦ S⁻¹(x − μ),
//! S Sᵀ = H, whitens π exactly when H = Σ, and
//! E‖Sᵀ∇U − S⁻¹(θ − μ)‖² = E[∇Uᵀ H ∇U] + E[(θ − μ)ᵀ H⁻¹ (θ − μ)] − 2E[∇Uᵀ(θ − μ)]
//! is zero then; the last term does not depend on H, so the metric with the
//! smaller mean of ∇UᵀH∇U + (θ − μ)ᵀH⁻¹(θ − μ) wins. This keeps a metric from
//! the start-up optimisation that the window's draws cannot yet improve on.
//!
//! Three refinements make the metric nearly exact within the first windows
//! (docs/NUTS.md has the measurements): two *probe pairs* per window end,
//! exact secants measured along the directions where the draws spread most
//! beyond the metric and where the gradients are stiffest (a power
//! iteration across windows on streamed products Ĉov(θ)q and Ĉov(∇U)r; see
//! [`probe`](MetricEstimator::probe)); the winner's base *matched* so that
//! the metric with its pairs has the window's √(Var θᵢ / Var ∂ᵢU); and the
//! diagonal's log scales *shrunk* towards their mean by the share of their
//! spread that sampling noise explains.
//!
//! A fourth candidate, for a model of dimension n ≤ `M` and with
//! [`window_covariance`](LbfgsEstimatorSettings::window_covariance) on (the
//! CLI's default): the metric of the window's covariances of θ and ∇U
//! (`window_covariance.rs`), scored only where ∇U is close enough to linear
//! in θ ([`MIN_GRADIENT_LINEARITY`]).
//!
//! The estimator and its window end are in this file; the L-BFGS start from
//! the initial point and the secants at its optimum in `optimum.rs`; the
//! pool of pairs, the probes and the matched base in `pair_pool.rs`; the
//! Fisher contest of the candidates in `metric_contest.rs`; the tests in
//! `tests.rs`.
//!
//! Why not the trajectory pairs QNHMC uses: consecutive leapfrog steps span
//! few directions, and a memory frozen from one trajectory missed the 100-D
//! Gaussian's dominant direction in every run (issue 10's measurement).

use super::covariance_product::CovarianceProduct;
use super::scale_shrinkage::shrink_log_scales;
use super::window_covariance::WindowCovariance;
use crate::adaptation::metric_estimators::{
    DiagonalEstimator, MetricChange, MetricEstimator, variances_from_gradient,
};

mod metric_contest;
mod optimum;
mod pair_pool;

/// The rank tolerance τ to pass to [`LbfgsEstimator::new`] unless you have
/// a reason not to: the learned metric drops every direction that changes it
/// by less than a factor e^0.1 ≈ 1.105 (|ln μ| ≤ 0.1). Such a direction does
/// nothing for mixing, but each kept one costs 4 multiply-adds per coordinate
/// and leapfrog step. On the 100-D Gaussian of the side-by-side benchmark
/// the warm-up learns one direction that matters (μ ≈ 26) and 39 with
/// μ = 0.98–1.04: τ = 0.1 keeps rank 1 instead of 40 and halves the time per
/// draw, with ESS per gradient unchanged within the seed-to-seed noise on
/// every benchmark target (docs/NUTS.md, "Rank tolerance").
pub const DEFAULT_RANK_TOLERANCE: f64 = 0.1;

/// The window's covariance metric competes at a window end only where ∇U
/// is close to linear in θ over the window's draws: the smallest squared
/// canonical correlation between θ and ∇U must be at least this (it is 1 for
/// any Gaussian, whatever the draws). The metric is Gaussian-optimal; where
/// curvature varies it fits an average curvature and its steps are too long
/// where the posterior is stiff. On posteriordb's latent Gaussian process
/// gp_pois_regr (seed 1, 15 window ends over 4 chains) the measure was
/// 0.0002–0.14 at 14 and 0.63 at one; on the small correlated regressions
/// the metric is for, 0.75–0.90 (mesquite) and 0.98–0.999 (kidiq, earnings,
/// nes) — measured in a throwaway build that added γ = 10⁻²√ε to both
/// covariances, which can only lower the measure. At 0.5 gp_pois_regr still
/// took the metric and diverged; at 0.7 it ran as without it (docs/NUTS.md,
/// "The linearity gate").
pub const MIN_GRADIENT_LINEARITY: f64 = 0.7;

use crate::error::{Error, require_non_negative};
use crate::kernels::dot;
use crate::lbfgs::{InitialScaling, LbfgsMemory, LbfgsSettings};
use crate::metric::LbfgsMetric;
use crate::metric::Metric;
use crate::real::Real;
use crate::target::Potential;

/// The settings of an [`LbfgsEstimator`]: what
/// [`LbfgsEstimator::new`], [`with_max_pairs`](LbfgsEstimator::with_max_pairs)
/// and [`with_optimization`](LbfgsEstimator::with_optimization) set, for
/// [`MetricEstimator::reset`] (building the estimator in place).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LbfgsEstimatorSettings<T> {
    /// Directions that change the metric by less than a factor
    /// e^`rank_tolerance` are dropped (≥ 0; [`DEFAULT_RANK_TOLERANCE`]).
    pub rank_tolerance: T,
    /// Most pairs kept (clamped to the const `M`).
    pub max_pairs: usize,
    /// Whether the warm-up starts with an L-BFGS optimisation.
    pub optimize: bool,
    /// Whether a model of dimension n ≤ `M` also scores the window's
    /// covariance metric (`adaptation/quasi_newton/window_covariance.rs`) at each window
    /// end where the window's ∇U is close to linear in θ
    /// ([`MIN_GRADIENT_LINEARITY`]). Off here (the core's defaults are
    /// Stan's); the CLI turns it on. On posteriordb (43 posteriors × 3
    /// seeds) it raised ESS per gradient against nuts-rs low-rank from 0.87×
    /// to 1.03× on the kept draws and from 1.06× to 1.20× including warm-up,
    /// with the same z-tests, divergences and R̂ (docs/NUTS.md, "The
    /// linearity gate"). Without the linearity gate it failed the latent
    /// Gaussian process gp_pois_regr.
    pub window_covariance: bool,
    /// Whether the window's covariance metric (with `window_covariance`)
    /// competes only in a chain whose L-BFGS start found no optimum
    /// ([`LbfgsEstimator::start_found_no_optimum`]). Off here; the CLI turns
    /// it on for models of 21–25 coordinates, which it gives the storage of
    /// 32 pairs: there the centred varying-intercept regression
    /// `radon-centered` (n = 24, no optimum) gains from the covariance
    /// metric, while German credit (n = 25, an optimum) lost tail ESS with
    /// it (docs/NUTS.md, "The window's covariance metric where the start
    /// found no optimum").
    pub covariance_without_optimum_only: bool,
    /// Whether, for a model of dimension n ≤ `M`, the L-BFGS start replaces
    /// the path's pairs by n central secants measured at the optimum, one
    /// sd of the measured curvature along each column of the path metric's
    /// square root (2n–8n gradients; `LbfgsEstimator::with_optimum_secants`).
    /// Off here; the CLI turns it on. On posteriordb it cut the warm-up of
    /// the posteriors whose path metric was far too wide (diamonds 0.62× →
    /// 1.77× nuts-rs low-rank including warm-up), but a chain that started
    /// in a minor mode, sampled with that mode's accurate metric, stayed
    /// there (3 runs of 129). The CLI therefore compares the chains'
    /// [`LbfgsEstimator::laplace_log_mass`] before they draw and restarts
    /// those far below the best (docs/NUTS.md, "Secants at the optimum" and
    /// "Minor modes"); a caller running chains of its own should do the
    /// same.
    pub optimum_secants: bool,
}

impl<T: Real> LbfgsEstimatorSettings<T> {
    /// `rank_tolerance`, every pair (`M`), optimisation on, no window
    /// covariance: the settings of `LbfgsEstimator::new(rank_tolerance)`.
    pub fn new(rank_tolerance: T) -> Self {
        LbfgsEstimatorSettings {
            rank_tolerance,
            max_pairs: usize::MAX,
            optimize: true,
            window_covariance: false,
            covariance_without_optimum_only: false,
            optimum_secants: false,
        }
    }
}

/// Learns an [`LbfgsMetric`] (diagonal base + up to `M` conjugated pairs
/// between draws) from each slow window.
#[derive(Debug, Clone)]
pub struct LbfgsEstimator<T, const D: usize, const M: usize> {
    /// The window's draws except the held-out ones (candidates are built on
    /// its diagonal and scored on the held-out draws).
    diagonal: DiagonalEstimator<T, D>,
    /// Every draw of the window (the winner's final diagonal).
    window_diagonal: DiagonalEstimator<T, D>,
    base: [T; D],
    previous_position: [T; D],
    previous_gradient: [T; D],
    has_previous: bool,
    pool_s: [[T; D]; M],
    pool_y: [[T; D]; M],
    pool_score: [T; M],
    pool_len: usize,
    memory: LbfgsMemory<T, D, M>,
    rank_tolerance: T,
    pairs_used: usize,
    max_pairs: usize,
    optimize: bool,
    window_covariance: bool,
    covariance_without_optimum_only: bool,
    optimum_secants: bool,
    recent_position: [[T; D]; M],
    recent_gradient: [[T; D]; M],
    recent_len: usize,
    recent_next: usize,
    candidate: LbfgsMetric<T, D, M>,
    replaced: u32,
    kept: u32,
    /// Draws observed in the current window.
    observed: u64,
    /// Conjugated pairs left in the pool's first slots by the last window end.
    conjugated: usize,
    /// Scores of the last window end: metric in force, diagonal + pairs,
    /// diagonal alone, window covariances (∞ where not scored).
    last_scores: [T; 4],
    /// The window's gradient linearity at the last window end (NaN where
    /// not measured).
    last_linearity: T,
    /// Ĉov(θ)·q over the window: finds the direction in which the draws
    /// spread most beyond the metric (power iteration across windows).
    spread: CovarianceProduct<T, D>,
    /// Ĉov(∇U)·r over the window: the direction the metric finds stiffest.
    stiffness: CovarianceProduct<T, D>,
    /// The coordinates the sampler moves ([`MetricEstimator::set_dimension`];
    /// 0 is D): the shrinkage of the scales pools these only.
    dimension: usize,
    /// Cov θ and Cov ∇U of the window's draws but the held-out ones, when
    /// the model's dimension is at most `M`: the fourth candidate.
    covariance: WindowCovariance<T, M>,
    /// −U* + ½·log det Σ over the moved coordinates at the optimum of the
    /// last L-BFGS start whose secants set the metric; NaN otherwise.
    laplace_log_mass: T,
    /// Whether the last L-BFGS start found an optimum and the chain started
    /// beside it.
    started_at_optimum: bool,
    /// Whether the last L-BFGS start ran and refused what it reached (out of
    /// budget, ∇U not brought down, or an optimum in a neck): the window
    /// covariance then competes without the linearity gate.
    start_found_no_optimum: bool,
    /// Draws of the initial buffer held in `diagonal` and `window_diagonal`
    /// ([`MetricEstimator::observe_early`]), idle there until the first
    /// slow window: cleared at its first draw.
    early_draws: u64,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize, const M: usize] LbfgsEstimator<T, D, M> {
    diagonal, window_diagonal, base, previous_position, previous_gradient, has_previous, pool_s, pool_y,
    pool_score, pool_len, memory, rank_tolerance, pairs_used, max_pairs, optimize, window_covariance, covariance_without_optimum_only, optimum_secants, recent_position,
    recent_gradient, recent_len, recent_next, candidate, replaced, kept, observed, conjugated,
    last_scores, last_linearity, spread, stiffness, dimension, covariance, laplace_log_mass,
    started_at_optimum, start_found_no_optimum, early_draws
});

/// Every `SCORE_EVERY`-th draw of a window is held out of the candidates'
/// diagonal and scores them instead: scored on the draws they were fitted to,
/// the window's own estimates are favoured by their own sampling noise. The
/// winner is then rebuilt on the diagonal of every window draw. What each
/// variant measured is in docs/NUTS.md ("What was tried").
const SCORE_EVERY: u64 = 3;

/// The candidates of a window end after the metric in force (index 0 of
/// [`LbfgsEstimator::last_window_scores`]), in the order they are scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Candidate {
    Pairs = 1,
    Diagonal = 2,
    Covariance = 3,
}

/// Fixed-point rounds that match the winner's base to the window's diagonal.
const BASE_MATCHING_ROUNDS: usize = 3;

/// Early draws between switches of the early estimate: the metric is
/// estimated on the last 10–20 draws.
const EARLY_SWITCH: u64 = 10;

impl<T: Real, const D: usize, const M: usize> LbfgsEstimator<T, D, M> {
    /// An estimator whose metric drops directions that change it by less than
    /// a factor e^`rank_tolerance` (0 keeps every direction; the recommended
    /// value is [`DEFAULT_RANK_TOLERANCE`]).
    pub fn new(rank_tolerance: T) -> Result<Self, Error> {
        require_non_negative(rank_tolerance, "rank_tolerance")?;
        Ok(LbfgsEstimator {
            diagonal: DiagonalEstimator::new(),
            window_diagonal: DiagonalEstimator::new(),
            base: [T::ONE; D],
            previous_position: [T::ZERO; D],
            previous_gradient: [T::ZERO; D],
            has_previous: false,
            pool_s: [[T::ZERO; D]; M],
            pool_y: [[T::ZERO; D]; M],
            pool_score: [T::ZERO; M],
            pool_len: 0,
            memory: LbfgsMemory::new(LbfgsSettings::with_max_pairs(M))?,
            rank_tolerance,
            pairs_used: 0,
            max_pairs: M,
            optimize: true,
            window_covariance: false,
            covariance_without_optimum_only: false,
            optimum_secants: false,
            recent_position: [[T::ZERO; D]; M],
            recent_gradient: [[T::ZERO; D]; M],
            recent_len: 0,
            recent_next: 0,
            candidate: LbfgsMetric::identity(),
            replaced: 0,
            kept: 0,
            observed: 0,
            conjugated: 0,
            last_scores: [T::INFINITY; 4],
            last_linearity: T::from_f64(f64::NAN),
            spread: CovarianceProduct::new(),
            stiffness: CovarianceProduct::new(),
            dimension: D,
            covariance: WindowCovariance::new(),
            laplace_log_mass: T::from_f64(f64::NAN),
            started_at_optimum: false,
            start_found_no_optimum: false,
            early_draws: 0,
        })
    }

    /// Whether the warm-up starts with an L-BFGS optimisation (default: yes;
    /// see [`MetricEstimator::initialize_by_optimization`]).
    pub fn with_optimization(mut self, optimize: bool) -> Self {
        self.optimize = optimize;
        self
    }

    /// Whether a model of dimension n ≤ `M` also scores the window's
    /// covariance metric (default: no; see
    /// [`LbfgsEstimatorSettings::window_covariance`]).
    pub fn with_window_covariance(mut self, on: bool) -> Self {
        self.window_covariance = on;
        self
    }

    /// Whether the window's covariance metric competes only where the
    /// chain's start found no optimum (default: no; see
    /// [`LbfgsEstimatorSettings::covariance_without_optimum_only`]).
    pub fn with_covariance_without_optimum_only(mut self, on: bool) -> Self {
        self.covariance_without_optimum_only = on;
        self
    }

    /// Whether, for a model of dimension n ≤ `M`, the L-BFGS start measures
    /// the first metric by n central secants at the optimum (default: no;
    /// see [`LbfgsEstimatorSettings::optimum_secants`]).
    pub fn with_optimum_secants(mut self, on: bool) -> Self {
        self.optimum_secants = on;
        self
    }

    /// Keeps at most `max_pairs` pairs (clamped to `M`).
    pub fn with_max_pairs(mut self, max_pairs: usize) -> Self {
        self.max_pairs = max_pairs.min(M);
        self
    }

    /// Pairs in the metric built at the last window end.
    pub fn pairs_used(&self) -> usize {
        self.pairs_used
    }

    /// Window ends at which the new estimate replaced the metric, and at which
    /// the old metric was kept (it scored better on the window's draws).
    pub fn window_decisions(&self) -> (u32, u32) {
        (self.replaced, self.kept)
    }

    /// The Fisher scores at the last window end (smaller wins): the metric in
    /// force, the new diagonal with pairs, the new diagonal alone, and the
    /// metric of the window's covariances (∞ for a candidate not scored; the
    /// last one is scored only for a dimension n ≤ `M`).
    pub fn last_window_scores(&self) -> [T; 4] {
        self.last_scores
    }

    /// The smallest squared canonical correlation between θ and ∇U over the
    /// last window's draws (1 for a Gaussian; the covariance candidate is
    /// scored only at [`MIN_GRADIENT_LINEARITY`] or above), NaN where the
    /// window covariance is off or was not measured.
    pub fn last_gradient_linearity(&self) -> T {
        self.last_linearity
    }

    /// The log mass of the Laplace approximation at the optimum the last
    /// L-BFGS start found, −U* + ½·log det Σ over the moved coordinates
    /// (without the constant n/2·log 2π), when secants measured the metric
    /// there ([`LbfgsEstimatorSettings::optimum_secants`]); `None` otherwise
    /// (no optimum, n > `M`, or a secant refused). Chains started from
    /// different points compare it to see which optimum holds the mass: a
    /// chain whose optimum's is far below another's started in a minor mode
    /// that an accurate metric may never leave.
    pub fn laplace_log_mass(&self) -> Option<T> {
        self.laplace_log_mass
            .is_finite()
            .then_some(self.laplace_log_mass)
    }

    /// Whether the last L-BFGS start found an optimum and the chain started
    /// beside it (a draw of the start metric about it). `false` before any
    /// start, without optimisation, and when the chain started at its
    /// initial point because the optimisation took no step or ran out of
    /// its budget unconverged: U falling without end (a centred hierarchy)
    /// or a slow descent along an ill-conditioned valley, which a chain's
    /// warm-up then spends hundreds of draws finishing. Chains that
    /// compare [`laplace_log_mass`](Self::laplace_log_mass) can restart such
    /// a chain from the initial point of one that found an optimum.
    pub fn started_at_optimum(&self) -> bool {
        self.started_at_optimum
    }

    /// Whether the last L-BFGS start ran and refused what it reached: it ran
    /// out of its budget, ∇U did not come down, or its optimum lay in a
    /// funnel's neck (`adaptation/quasi_newton/lbfgs_start.rs`). The posterior then has
    /// no mode a Gaussian describes — U falls without end along a scale, as
    /// in a centred hierarchy — and the window's covariance metric competes
    /// at every window end without the linearity gate
    /// ([`MIN_GRADIENT_LINEARITY`]), whose measure such a window fails
    /// whatever the metric (0.00–0.36 on centred eight schools). The gate
    /// is for posteriors with a mode, such as gp_pois_regr, whose start
    /// converges. On the centred hierarchical logistic regression of the
    /// hierarchical suite (seeds 1–40) ESS per gradient with this rule is
    /// 1.37× [0.95, 1.98] that without it (docs/NUTS.md, "Where the start
    /// found no optimum").
    pub fn start_found_no_optimum(&self) -> bool {
        self.start_found_no_optimum
    }

    /// The coordinates the sampler moves (n ≤ D).
    fn moved(&self) -> usize {
        if self.dimension == 0 {
            D
        } else {
            self.dimension.min(D)
        }
    }
}

impl<T: Real, const D: usize, const M: usize> LbfgsEstimator<T, D, M> {
    /// Clears what belongs to one window: the streamed products, the
    /// diagonal estimators, the window covariance and the held-out draws.
    fn restart_window_sums(&mut self) {
        // The streamed products belong to one window. `probe` (called before
        // `end_window` by `AdaptiveNuts`) has already restarted them along
        // the next directions, so this changes nothing there; a driver that
        // never probes gets fresh sums each window instead of stale ones.
        self.spread.restart(None);
        self.stiffness.restart(None);
        self.diagonal.clear();
        self.window_diagonal.clear();
        self.covariance.clear();
        self.recent_len = 0;
        self.recent_next = 0;
        self.observed = 0;
    }
}

impl<T: Real, const D: usize, const M: usize> MetricEstimator<T, D> for LbfgsEstimator<T, D, M> {
    type Metric = LbfgsMetric<T, D, M>;
    type Settings = LbfgsEstimatorSettings<T>;

    fn reset(
        &mut self,
        settings: LbfgsEstimatorSettings<T>,
        metric: &mut LbfgsMetric<T, D, M>,
    ) -> Result<(), Error> {
        require_non_negative(settings.rank_tolerance, "rank_tolerance")?;
        // The field values of `new`, `with_max_pairs` and `with_optimization`
        // (a unit test compares the two); zero first, so every field not set
        // here is the zero `new` gives it.
        crate::in_place::zero(self);
        self.base = [T::ONE; D];
        // Cannot fail (M pairs in a memory of M, γ = 1, default curvature).
        self.memory.reset(LbfgsSettings::with_max_pairs(M))?;
        self.rank_tolerance = settings.rank_tolerance;
        self.max_pairs = settings.max_pairs.min(M);
        self.optimize = settings.optimize;
        self.window_covariance = settings.window_covariance;
        self.covariance_without_optimum_only = settings.covariance_without_optimum_only;
        self.optimum_secants = settings.optimum_secants;
        self.candidate.set_identity();
        self.last_scores = [T::INFINITY; 4];
        self.last_linearity = T::from_f64(f64::NAN);
        self.laplace_log_mass = T::from_f64(f64::NAN);
        self.started_at_optimum = false;
        self.start_found_no_optimum = false;
        self.dimension = D;
        metric.set_identity();
        Ok(())
    }

    fn set_dimension(&mut self, n: usize) {
        self.dimension = n.clamp(1, D.max(1));
    }

    fn initialize(
        &mut self,
        _position: &[T; D],
        gradient: &[T; D],
        metric: &mut LbfgsMetric<T, D, M>,
    ) -> Result<(), Error> {
        self.diagonal.clear();
        self.window_diagonal.clear();
        self.early_draws = 0;
        self.covariance.clear();
        self.observed = 0;
        self.pool_len = 0;
        self.conjugated = 0;
        self.has_previous = false;
        self.memory.clear();
        // Zeroed in place: the values of `CovarianceProduct::new()`.
        crate::in_place::zero(&mut self.spread);
        crate::in_place::zero(&mut self.stiffness);
        let base = variances_from_gradient(gradient);
        metric.rebuild(&base, &self.memory, self.rank_tolerance)?;
        self.base = base;
        Ok(())
    }

    /// L-BFGS minimisation of U (at most 1000 iterations and 1000
    /// evaluations; `lbfgs_start.rs`) from the initial point; the path's
    /// pairs on the diagonal of the path's own inverse Hessian give the first
    /// metric,
    /// and the chain starts at the optimum plus a draw from N(0, H) of that
    /// metric. The chain starts where it is, with the gradient-scaled
    /// diagonal, when the optimisation takes no step, does not converge
    /// within its budget (U unbounded below, as in a centred
    /// hierarchical model), or ends at an optimum whose Gaussian's ELBO an
    /// earlier point of the path beats by far (a funnel's neck;
    /// `optimize_start`), and `None` when the start is not finite.
    fn initialize_by_optimization<P: Potential<T, D>>(
        &mut self,
        target: &P,
        position: &[T; D],
        normals: &[T; D],
        metric: &mut LbfgsMetric<T, D, M>,
    ) -> Option<([T; D], u32)> {
        self.laplace_log_mass = T::from_f64(f64::NAN);
        self.started_at_optimum = false;
        self.start_found_no_optimum = false;
        if M == 0 || !self.optimize {
            return None;
        }
        let mut settings = LbfgsSettings::with_max_pairs(self.max_pairs.min(M));
        settings.scaling = InitialScaling::NewestPair(T::ONE);
        // The path's pairs go to the estimator's own memory (idle until the
        // first window end, which clears it), not to a local one: 2·M·D
        // numbers on the stack would be 320 KB at D = 1000, M = 20. It is
        // reset to its state of `new` afterwards, so no bit changes.
        if self.memory.reset(settings).is_err() {
            return None;
        }
        let found = self.start_from_optimization(target, position, normals, metric);
        let _ = self.memory.reset(LbfgsSettings::with_max_pairs(M));
        found
    }

    /// Two secant pairs measured at the window's end, one gradient each: along
    /// Ĉov(θ)·q (one draw sd long), where q is the direction in which the
    /// last window's draws spread most beyond the metric, and along r, the
    /// direction the metric found stiffest (Ĉov(∇U)·r largest after H). The
    /// next window follows q ← H⁻¹Ĉov(θ)q and r ← H Ĉov(∇U)r: a power
    /// iteration across windows for the directions the metric gets most
    /// wrong, which pairs between random draws reach only by chance.
    fn probe<P: Potential<T, D>>(
        &mut self,
        target: &P,
        position: &[T; D],
        gradient: &[T; D],
        metric: &LbfgsMetric<T, D, M>,
    ) -> u32 {
        if M < 2 || self.max_pairs < 2 {
            return 0;
        }
        let mut spent = 0;
        let mut next_spread = None;
        let mut next_stiffness = None;
        if let Some(c) = self.spread.product() {
            let variance = dot(&c, &self.spread.direction);
            if variance.is_finite() && variance > T::ZERO {
                let scale = T::ONE / variance.sqrt();
                let mut step = [T::ZERO; D];
                for i in 0..D {
                    step[i] = c[i] * scale;
                }
                spent += self.probe_pair(target, position, gradient, &step);
                let mut next = [T::ZERO; D];
                metric.apply_hessian(&c, &mut next);
                next_spread = Some(next);
            }
        }
        if let Some(c) = self.stiffness.product() {
            let curvature = dot(&c, &self.stiffness.direction);
            if curvature.is_finite() && curvature > T::ZERO {
                let scale = T::ONE / curvature.sqrt();
                let mut step = [T::ZERO; D];
                for i in 0..D {
                    step[i] = self.stiffness.direction[i] * scale;
                }
                spent += self.probe_pair(target, position, gradient, &step);
                let mut next = [T::ZERO; D];
                metric.velocity(&c, &mut next);
                next_stiffness = Some(next);
            }
        }
        self.spread.restart(next_spread.as_ref());
        self.stiffness.restart(next_stiffness.as_ref());
        spent
    }

    fn observe(&mut self, position: &[T; D], gradient: &[T; D], _: &LbfgsMetric<T, D, M>) {
        if self.early_draws > 0 {
            // The initial buffer's draws are not the first window's.
            self.early_draws = 0;
            self.diagonal.clear();
            self.window_diagonal.clear();
        }
        self.observed += 1;
        self.window_diagonal.add(position, gradient);
        let held_out = M > 0 && self.observed % SCORE_EVERY == 0;
        if !held_out {
            self.diagonal.add(position, gradient);
            let n = self.moved();
            if self.covariance_on() && n <= M {
                self.covariance.add(position, gradient, n);
            }
        } else {
            let slot = self.recent_next % M;
            self.recent_position[slot] = *position;
            self.recent_gradient[slot] = *gradient;
            self.recent_next = (slot + 1) % M;
            self.recent_len = (self.recent_len + 1).min(M);
        }
        if self.has_previous {
            let mut s = [T::ZERO; D];
            let mut y = [T::ZERO; D];
            for i in 0..D {
                s[i] = position[i] - self.previous_position[i];
                y[i] = gradient[i] - self.previous_gradient[i];
            }
            self.offer(&s, &y);
            if !self.spread.has_direction {
                self.spread.restart(Some(&s));
            }
            if !self.stiffness.has_direction {
                self.stiffness.restart(Some(&y));
            }
        }
        self.spread.add(position);
        self.stiffness.add(gradient);
        self.previous_position = *position;
        self.previous_gradient = *gradient;
        self.has_previous = true;
    }

    /// Both window estimators take the draw: `diagonal` holds the draws
    /// since the last switch, `window_diagonal` those since the switch
    /// before it (no storage of its own: both are idle before the first
    /// slow window).
    fn observe_early(&mut self, position: &[T; D], gradient: &[T; D]) {
        self.early_draws += 1;
        self.diagonal.add(position, gradient);
        self.window_diagonal.add(position, gradient);
    }

    fn refresh_early(&mut self, metric: &mut LbfgsMetric<T, D, M>) -> Result<MetricChange, Error> {
        if self.diagonal.count() >= EARLY_SWITCH {
            core::mem::swap(&mut self.diagonal, &mut self.window_diagonal);
            self.diagonal.clear();
        }
        let Some(mut base) = self.window_diagonal.estimate(&self.base) else {
            return Ok(MetricChange::Kept);
        };
        let n = self.moved();
        shrink_log_scales(&mut base[..n], self.window_diagonal.count());
        // No pairs yet: the start stayed put, and the first window end
        // fills the memory.
        self.memory.clear();
        metric.rebuild(&base, &self.memory, self.rank_tolerance)?;
        self.base = base;
        Ok(MetricChange::Replaced)
    }

    fn end_window(&mut self, metric: &mut LbfgsMetric<T, D, M>) -> Result<MetricChange, Error> {
        let mut base = self.diagonal.estimate(&self.base).unwrap_or(self.base);
        let n = self.moved();
        shrink_log_scales(&mut base[..n], self.diagonal.count());
        // The diagonal from every draw of the window (held-out ones too): the
        // winning candidate is rebuilt on it.
        let mut base_all = self.window_diagonal.estimate(&base).unwrap_or(base);
        shrink_log_scales(&mut base_all[..n], self.window_diagonal.count());
        self.memory.clear();
        self.has_previous = false;
        let (winner, mut result) = self.run_contest(metric, &base, n);
        let mut changed = false;
        if let Some(candidate) = winner {
            match self.install_winner(metric, candidate, base, base_all) {
                Ok(()) => changed = true,
                Err(e) => result = Err(e),
            }
        }
        if changed {
            self.replaced += 1;
        } else {
            self.kept += 1;
        }
        if winner == Some(Candidate::Diagonal) {
            // The bare diagonal won: its pairs were no help.
            self.conjugated = 0;
        }
        self.carry_pairs_into_pool();
        self.restart_window_sums();
        result.map(|()| {
            if changed {
                MetricChange::Replaced
            } else {
                MetricChange::Kept
            }
        })
    }
}

#[cfg(test)]
mod tests;
