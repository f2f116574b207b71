//! The L-BFGS start of a NUTS warm-up, shared by the estimators that use it
//! ([`LbfgsEstimator`](super::LbfgsEstimator) and
//! [`LbfgsStartDiagonalEstimator`](super::LbfgsStartDiagonalEstimator)):
//! minimise U from the chain's initial point, as Pathfinder (Zhang et al.
//! 2022) does, and read a diagonal metric off the path's curvature pairs.
//!
//! Why: Stan's uniform(−2, 2) start can lie so far in the tails that a
//! warm-up of a few hundred draws spends most of them descending (sblrc-blr:
//! U ≈ 10⁸ at the start, the typical set reached near draw 440 of 500, so
//! every slow window but the last saw only the descent), or cannot move at
//! all (arma11 with |θ| > 1: U ≈ 10¹⁰⁵, whose rounding alone exceeds the
//! divergence threshold of 1000, so every transition diverges and dual
//! averaging drives ε to its floor). L-BFGS leaves both in tens to hundreds
//! of gradients (docs/POSTERIORDB.md).
//!
//! What it does: minimise U within 1000 iterations and 1000 evaluations
//! ([`OPTIMIZATION_ITERATIONS`], [`OPTIMIZATION_EVALUATIONS`]), scoring
//! the path's points by the ELBO of their Gaussians so as to refuse an
//! optimum in a funnel's neck and to stop on the way down one; then read
//! the diagonal of the path's inverse Hessian. Optionally,
//! [`secant_at_one_sd`] measures central secants at the optimum, rescaled
//! to one sd of the curvature they measure (the CLI's default; off in the
//! core's settings). [`LbfgsStartDiagonalEstimator`] is the diagonal metric
//! after this start (the CLI's `--metric diag`).

use crate::adaptation::metric_estimators::{
    DiagonalEstimator, MetricChange, MetricEstimator, clamp_variance,
};
use crate::error::Error;
use crate::lbfgs::{
    InitialScaling, LbfgsMemory, LbfgsSettings, MinimizeOutcome, elbo_estimate, minimize_observed,
};
use crate::metric::DiagonalMetric;
use crate::real::Real;
use crate::target::Potential;

/// Most L-BFGS iterations of the optimisation that starts the warm-up.
/// posteriordb's diamonds (D = 26, 24 correlated polynomial covariates)
/// needs 300–535 iterations from Stan's starts (4 seeds measured); at the
/// former limit of 200 its U was within 4–17 of the optimum yet the start
/// was discarded as unbounded, and the warm-up spent its draws descending
/// from U ≈ 8·10⁶ (the one posterior qnmc's default failed).
pub(crate) const OPTIMIZATION_ITERATIONS: u32 = 1000;

/// Most target evaluations of that optimisation: it also stops, unconverged
/// (so the chain starts where it was), once it has spent these. Down a
/// centred hierarchy's neck each iteration's line search costs ~10
/// evaluations (eight-schools-centered: 1 125 for 200 iterations), so this
/// keeps such starts as cheap as before while letting cheap iterations run
/// on (diamonds: 1.15 evaluations per iteration).
pub(crate) const OPTIMIZATION_EVALUATIONS: u32 = 1000;

/// The optimisation stops when an iteration lowers U by less than this times
/// max(|U|, 1) (Pathfinder's 1e-13: a larger tolerance stopped on the flat
/// ridge of the years regression, far from its mode).
pub(crate) const OPTIMIZATION_TOLERANCE: f64 = 1e-13;

/// An optimum must have ‖∇U‖ at most this times ‖∇U‖ at the initial point;
/// else the chain starts where it was. The relative decrease that stops the
/// optimisation ([`OPTIMIZATION_TOLERANCE`]) also fires in a centred
/// hierarchy's neck, where U falls without end as a scale goes to 0 but each
/// iteration gains little against the group effects' curvature (1/σ²):
/// `radon-centered` (n = 24, beyond the ELBO's n ≤ M) "converged" from 2 of
/// 200 starts at log σ_α = −21 and −19 with ‖∇U‖ 1.5–2 times the start's
/// (∂U/∂log σ_α = J − 1 = 19, the neck's constant slope); those chains spent
/// their warm-up climbing out and kept 950–1000 leapfrog steps per draw
/// (`qnmc run` seeds 7, 8, 10: 0.3–1.3 M gradients against 60–70 k). At
/// every optimum the path reaches on the 12 built-in targets measured with
/// a bounded mode (100 starts each: the five logistic regressions, gaussian,
/// linear-gaussian, eight schools, sblrc, arK, the years regression,
/// stochastic-volatility-noncentered) the ratio is 4·10⁻¹⁶ to 4·10⁻⁶, so
/// 10⁻³ leaves 280 times the largest; centred eight schools' one such
/// "optimum" in 100 starts measures 3.1, Neal's funnel's mode (v = −40.5,
/// where e^{−v} = 4·10¹⁷ multiplies the round-off in x) 5·10⁻⁶ to 6·10³.
pub(crate) const OPTIMUM_GRADIENT_REDUCTION: f64 = 1e-3;

/// The optimisation stops, and the chain starts where it was, once ‖∇U‖
/// exceeds this many times its norm at the initial point: the path is going
/// down a neck, where ∇U along the group effects grows as 1/σ² while U falls
/// without end. Along such paths from `qnmc run`'s starts (seeds 1–3, 10
/// pairs; `cli/examples/elbo_along_path.rs` prints where) it first passes
/// 100 after 113–160 evaluations on `radon-centered`, 278 and 390 on
/// `stochastic-volatility` (the third seed: never; n above the ELBO's
/// reach, so nothing else stopped these paths before the budget of 1000
/// ran out), after 24–80 on centred
/// eight schools, the hierarchical logistic regression and the funnel; on
/// the way to a bounded mode it falls instead (eight schools, German
/// credit: below 0.07 by iteration 16). Only an early stop: a path that
/// stops with ‖∇U‖ not [`OPTIMUM_GRADIENT_REDUCTION`] times below the
/// start's is refused anyway.
pub(crate) const NECK_GRADIENT_GROWTH: f64 = 100.0;

/// An ELBO must fall below the best of the path by this many nats, plus 3
/// sds of a 4-draw estimate on a well-fitted Gaussian (√(n/8): U's sd there
/// is √(n/2)), to count as worse. On Neal's funnel (n = 10, margin 13.4) the
/// path's early points beat the neck's optimum by 40–900 nats; the noise
/// between points of one path reached 17 nats there (an ELBO of −29 between
/// −12 and −14).
pub(crate) const ELBO_MARGIN: f64 = 10.0;

/// Scored points in a row, each more than the margin below the path's best
/// ELBO, after which the optimisation stops: the path is going down a neck
/// (centred eight schools: the ELBO peaks by iteration 16 and is 20–30 nats
/// lower by iteration 64, with most of the 1000 evaluations still to spend).
pub(crate) const ELBO_WORSE_STOP: u32 = 2;

/// What the optimisation from a chain's initial point found.
pub(crate) enum LbfgsStart<T, const D: usize> {
    /// The chain should start where it is, with its first metric as it is:
    /// the optimisation took no step, kept no pair, ran out of iterations
    /// or evaluations without converging (U falling without end, as in a
    /// centred hierarchical model), stopped on its way down a neck
    /// ([`ELBO_WORSE_STOP`]), or converged to an optimum whose Gaussian has
    /// a far lower ELBO than a point the path passed (Neal's funnel, whose
    /// mode lies deep in the neck). There the end point and its pairs
    /// describe the neck, not the posterior's bulk, and a chain started
    /// there spends its warm-up climbing out (7× the gradients on the
    /// funnel: docs/journal/2026-11-29-funnel-lbfgs-start.md).
    StayPut {
        /// Target evaluations spent.
        gradient_evaluations: u32,
    },
    /// An optimum, with the path's curvature pairs in the memory.
    Optimum(MinimizeOutcome<T, D>),
}

/// The path's ELBOs so far: the best, the last, and how many scored points
/// in a row fell more than `margin` below the best.
struct PathElbos<T> {
    /// The target's own dimension (a run-time n ≤ D).
    moved: usize,
    best: T,
    last: T,
    worse_in_a_row: u32,
    evaluations: u32,
    margin: T,
}

impl<T: Real> PathElbos<T> {
    fn new(n: usize) -> Self {
        let noise = T::from_f64(3.0) * (T::from_u64(n as u64) / T::from_f64(8.0)).sqrt();
        PathElbos {
            moved: n,
            best: -T::INFINITY,
            last: -T::INFINITY,
            worse_in_a_row: 0,
            evaluations: 0,
            margin: T::from_f64(ELBO_MARGIN) + noise,
        }
    }

    fn score<const D: usize, const M: usize, P: Potential<T, D>>(
        &mut self,
        target: &P,
        position: &[T; D],
        memory: &mut LbfgsMemory<T, D, M>,
        normals: &[T; D],
    ) {
        let (elbo, spent) = elbo_estimate(target, position, memory, normals, self.moved);
        self.evaluations += spent;
        self.last = elbo;
        if elbo > self.best {
            self.best = elbo;
        }
        if elbo < self.best - self.margin {
            self.worse_in_a_row += 1;
        } else {
            self.worse_in_a_row = 0;
        }
    }
}

/// The optimisation took no step, kept no pair, ran out of iterations or
/// evaluations without converging, or stopped where ∇U is not
/// [`OPTIMUM_GRADIENT_REDUCTION`] times smaller than at its start.
fn unconverged<T: Real, const D: usize, const M: usize>(
    outcome: &MinimizeOutcome<T, D>,
    memory: &LbfgsMemory<T, D, M>,
) -> bool {
    let out_of_budget = outcome.iterations >= OPTIMIZATION_ITERATIONS
        || outcome.gradient_evaluations >= OPTIMIZATION_EVALUATIONS;
    let reduced = outcome.gradient_reduction() <= T::from_f64(OPTIMUM_GRADIENT_REDUCTION);
    outcome.iterations == 0
        || memory.is_empty()
        || (!outcome.converged && out_of_budget)
        || !reduced
}

/// The start without the ELBO's choice: the optimum unless [`unconverged`].
fn plain_start<T: Real, const D: usize, const M: usize>(
    outcome: MinimizeOutcome<T, D>,
    memory: &LbfgsMemory<T, D, M>,
) -> LbfgsStart<T, D> {
    if unconverged(&outcome, memory) {
        LbfgsStart::StayPut {
            gradient_evaluations: outcome.gradient_evaluations,
        }
    } else {
        LbfgsStart::Optimum(outcome)
    }
}

/// L-BFGS from `position` with the pairs kept in `memory`, and whether the
/// chain should start at its optimum, decided as Pathfinder (Zhang et al.
/// 2022) chooses along its path: the points at iterations 1, 2, 4, … and
/// the last are scored by the ELBO of the Gaussian the memory describes
/// there ([`elbo_estimate`], draws made from `normals`, over the first
/// `moved` coordinates: the target's own, a run-time n ≤ D). The optimum stands
/// unless the path's best ELBO beats its own by more than the margin
/// ([`ELBO_MARGIN`]); the optimisation stops early once [`ELBO_WORSE_STOP`]
/// scored points in a row fall that far below the best. Only where the
/// memory can hold as many pairs as there are coordinates (`moved` ≤ its
/// capacity M); beyond, the optimum stands as before. Where the optimum
/// does not stand the chain stays at `position`: starting at the path's
/// best point instead was no better (30 seeds, ESS per gradient 0.90×
/// [0.64, 1.27] and 20 passes against 23 on centred eight schools, 0.73×
/// [0.49, 1.08] on stochastic volatility, 0.89× [0.65, 1.23] on the
/// funnel; 90 % intervals over seeds). `None` when U or ∇U is not finite at
/// `position`.
pub(crate) fn optimize_start<T: Real, const D: usize, const M: usize, P: Potential<T, D>>(
    target: &P,
    position: &[T; D],
    memory: &mut LbfgsMemory<T, D, M>,
    normals: &[T; D],
    moved: usize,
) -> Option<LbfgsStart<T, D>> {
    let moved = moved.clamp(1, memory.dimension());
    // Scored only where the memory can hold n pairs. Beyond, the path's pairs
    // span only part of the space and log det H is mostly (n − m)·log γ,
    // which moves with γ along the path: on stochastic-volatility-noncentered
    // (n = 103, 10 pairs) the ELBO refused a sound optimum (½ log det H fell
    // by 140 nats with γ, U by 52, about n/2 as at a Gaussian's mode) and the
    // NUTS reference run started from there did not mix (R̂ 1.59). With
    // `M < D` and no run-time dimension that is known at compile time, so
    // such builds do not link the scoring (9 KiB on thumbv7m: the firmware
    // example, D = 3 and M = 1, fills the micro:bit's 256 KiB of flash to
    // within 2 KiB).
    let scoring =
        (M >= D || cfg!(feature = "runtime-dimension")) && moved <= memory.pairs().capacity();
    let out_of_neck = |iterate: &MinimizeOutcome<T, D>| {
        iterate.gradient_reduction() <= T::from_f64(NECK_GRADIENT_GROWTH)
    };
    if !scoring {
        let outcome = minimize_observed(
            target,
            position,
            memory,
            OPTIMIZATION_ITERATIONS,
            OPTIMIZATION_EVALUATIONS,
            T::from_f64(OPTIMIZATION_TOLERANCE),
            |iterate, _| out_of_neck(iterate),
        )?;
        return Some(plain_start(outcome, memory));
    }
    let mut elbos = PathElbos::new(moved);
    let mut last_scored = 0;
    let outcome = minimize_observed(
        target,
        position,
        memory,
        OPTIMIZATION_ITERATIONS,
        OPTIMIZATION_EVALUATIONS,
        T::from_f64(OPTIMIZATION_TOLERANCE),
        |iterate, memory| {
            if !out_of_neck(iterate) {
                return false;
            }
            if !iterate.iterations.is_power_of_two() {
                return true;
            }
            last_scored = iterate.iterations;
            elbos.score(target, &iterate.position, memory, normals);
            elbos.worse_in_a_row < ELBO_WORSE_STOP
        },
    )?;
    let going_down = elbos.worse_in_a_row >= ELBO_WORSE_STOP;
    let mut stay = unconverged(&outcome, memory) || (!outcome.converged && going_down);
    if !stay {
        if last_scored != outcome.iterations {
            elbos.score(target, &outcome.position, memory, normals);
        }
        stay = elbos.best > elbos.last + elbos.margin;
    }
    let gradient_evaluations = outcome.gradient_evaluations + elbos.evaluations;
    if stay {
        return Some(LbfgsStart::StayPut {
            gradient_evaluations,
        });
    }
    Some(LbfgsStart::Optimum(MinimizeOutcome {
        gradient_evaluations,
        ..outcome
    }))
}

/// How far above U at the optimum a start drawn from the start metric may
/// lie, in units of ½‖z‖² (z the standard normals the draw was made from):
/// on a Gaussian whose Hessian the metric matches, U(start) − U(optimum) is
/// exactly ½‖z‖², so ten times that (plus [`START_EXCESS_SLACK`]) only
/// catches a metric that is far too wide in some direction.
pub(crate) const START_EXCESS_FACTOR: f64 = 10.0;

/// Added to the bound of [`START_EXCESS_FACTOR`] (for small ‖z‖).
pub(crate) const START_EXCESS_SLACK: f64 = 10.0;

/// Halvings of the displacement [`typical_start`] tries before it starts at
/// the optimum itself.
pub(crate) const START_HALVINGS: u32 = 10;

/// The chain's start: `optimum` moved by `displacement` (a draw from the
/// start metric made from `normals`), halved while U there is not finite or
/// exceeds U(optimum) by more than [`START_EXCESS_FACTOR`]·½‖z‖² +
/// [`START_EXCESS_SLACK`]; the optimum itself after [`START_HALVINGS`]
/// halvings. Returns the start and the target evaluations spent (one per
/// trial).
///
/// Why: the path's pairs can leave a direction with a variance far too
/// large. posteriordb's gp_pois_regr (seed 5, chain 4) drew a start with
/// U ≈ 6·10⁴⁷ from an optimum at U ≈ −976: dual averaging drove ε to 10⁻³⁴
/// and the chain never moved.
pub(crate) fn typical_start<T: Real, const D: usize, P: Potential<T, D>>(
    target: &P,
    optimum: &MinimizeOutcome<T, D>,
    displacement: &[T; D],
    normals: &[T; D],
) -> ([T; D], u32) {
    let half_norm = T::HALF * crate::kernels::dot(normals, normals);
    let bound = optimum.potential
        + T::from_f64(START_EXCESS_FACTOR) * half_norm
        + T::from_f64(START_EXCESS_SLACK);
    let mut scale = T::ONE;
    let mut start = optimum.position;
    let mut gradient = [T::ZERO; D];
    let mut evaluations = 0;
    for _ in 0..=START_HALVINGS {
        for i in 0..D {
            start[i] = optimum.position[i] + scale * displacement[i];
        }
        if crate::kernels::all_finite(&start) {
            let u = target.potential_and_gradient(&start, &mut gradient);
            evaluations += 1;
            if u.is_finite() && u <= bound {
                return (start, evaluations);
            }
        }
        scale *= T::HALF;
    }
    (optimum.position, evaluations)
}

/// Most central secants [`secant_at_one_sd`] measures along one direction
/// (the first and up to three rescaled ones).
pub(crate) const SECANT_TRIES: u32 = 4;

/// A secant is kept once its step is between ½ and 2 sds of the curvature it
/// measured (sᵀy within [¼, 4]).
pub(crate) const SECANT_SDS_SQUARED: (f64, f64) = (0.25, 4.0);

/// The central secant y = (∇U(x + s) − ∇U(x − s))/2 at the optimum `x`
/// along `step`, with the step rescaled to one sd of the curvature measured
/// along it (s ← s/√(sᵀy)) until sᵀy is within [`SECANT_SDS_SQUARED`];
/// `None` when a gradient is not finite, the curvature is not positive, or
/// [`SECANT_TRIES`] do not settle. Returns the secant (`step` holds its s)
/// and the evaluations spent (two per try).
///
/// Why central and rescaled: on posteriordb's logearn_logheight_male the
/// path's metric was 10–300 times too wide in variance, so a step of one of
/// its sds reached 3–24 posterior sds from the mode. A one-sided secant
/// there picks up the quadratic part of ∇U (U is not quadratic in log σ and
/// the slopes); the central one cancels it, and the rescaling brings the
/// step back to where the quadratic model holds (docs/NUTS.md, "Secants at
/// the optimum").
pub(crate) fn secant_at_one_sd<T: Real, const D: usize, P: Potential<T, D>>(
    target: &P,
    optimum: &[T; D],
    step: &mut [T; D],
) -> (Option<[T; D]>, u32) {
    let mut spent = 0;
    for _ in 0..SECANT_TRIES {
        let mut forward = [T::ZERO; D];
        let mut backward = [T::ZERO; D];
        for (sign, gradient) in [(T::ONE, &mut forward), (-T::ONE, &mut backward)] {
            let mut x = [T::ZERO; D];
            for i in 0..D {
                x[i] = optimum[i] + sign * step[i];
            }
            if !crate::kernels::all_finite(&x) {
                return (None, spent);
            }
            let u = target.potential_and_gradient(&x, gradient);
            spent += 1;
            if !(u.is_finite() && crate::kernels::all_finite(gradient)) {
                return (None, spent);
            }
        }
        let mut y = [T::ZERO; D];
        for i in 0..D {
            y[i] = T::HALF * (forward[i] - backward[i]);
        }
        let sy = crate::kernels::dot(step, &y);
        if !(sy.is_finite() && sy > T::ZERO) {
            return (None, spent);
        }
        let (low, high) = SECANT_SDS_SQUARED;
        if sy >= T::from_f64(low) && sy <= T::from_f64(high) {
            return (Some(y), spent);
        }
        let scale = T::ONE / sy.sqrt();
        for v in step.iter_mut() {
            *v *= scale;
        }
    }
    (None, spent)
}

/// The diagonal of the path's L-BFGS inverse Hessian (D two-loop products,
/// once per chain), each entry clamped to the estimators' variance bounds,
/// γ where an entry is not positive and finite. Not the scalar γ alone: with
/// parameters on very different scales a scalar leaves the pairs to span
/// ratios of variances of 10¹⁰ and more.
pub(crate) fn inverse_hessian_diagonal<T: Real, const D: usize, const M: usize>(
    memory: &LbfgsMemory<T, D, M>,
) -> [T; D] {
    let mut diagonal = [T::ONE; D];
    let mut unit = [T::ZERO; D];
    let mut column = [T::ZERO; D];
    for i in 0..D {
        unit[i] = T::ONE;
        memory.apply_inverse_hessian(&unit, &mut column);
        unit[i] = T::ZERO;
        diagonal[i] = if column[i].is_finite() && column[i] > T::ZERO {
            clamp_variance(column[i])
        } else {
            clamp_variance(memory.gamma())
        };
    }
    diagonal
}

/// The [`DiagonalEstimator`]'s metric σᵢ² = √(Var θᵢ / Var ∂ᵢU), learned
/// after an L-BFGS start: before the first warm-up draw the chain moves to
/// the optimum of U plus a draw from N(0, diag H), where diag H is the
/// diagonal of the path's inverse Hessian (kept up to `M` pairs), which is
/// also the first metric. Where the optimisation does not reach an optimum
/// (it takes no step, or runs out of its 1000 iterations or 1000
/// evaluations without converging, as down a funnel), or reaches one in a
/// funnel's neck (`optimize_start`'s ELBO test), the chain starts where
/// it is, with σᵢ² = 1/|∂ᵢU| as the plain estimator does. Pair it with
/// [`WarmupSchedule::after_optimization`](crate::adaptation::WarmupSchedule::after_optimization).
///
/// Storage: the estimator's 4·D plus the memory's 2·M·D numbers (the
/// optimisation's pairs; idle after the start).
///
/// ```
/// use qnmc::Potential;
/// use qnmc::adaptation::{AdaptiveNuts, LbfgsStartDiagonalEstimator, WarmupSchedule};
/// use qnmc::metric::DiagonalMetric;
/// use qnmc::samplers::NutsSettings;
/// use rand_xorshift::XorShiftRng;
/// use rand_core::SeedableRng;
///
/// /// Independent normals with sds 10⁻³ and 10³, started 10⁶ sds from the mode.
/// struct Scales;
/// impl Potential<f64, 2> for Scales {
///     fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
///         *g = [x[0] * 1e6, x[1] * 1e-6];
///         0.5 * (x[0] * x[0] * 1e6 + x[1] * x[1] * 1e-6)
///     }
/// }
/// let mut chain: AdaptiveNuts<f64, 2, LbfgsStartDiagonalEstimator<f64, 2, 5>, 10> =
///     AdaptiveNuts::new(
///         NutsSettings::new(0.1),
///         WarmupSchedule::after_optimization(200).unwrap(),
///         DiagonalMetric::identity(),
///         LbfgsStartDiagonalEstimator::new().unwrap(),
///         [1e3, 1.0],
///         &Scales,
///     )
///     .unwrap();
/// let mut rng = XorShiftRng::seed_from_u64(1);
/// while chain.is_warming_up() {
///     chain.step(&Scales, &mut rng);
/// }
/// let v = chain.sampler().metric().variances();
/// assert!((v[0] / 1e-6).ln().abs() < 1.0 && (v[1] / 1e6).ln().abs() < 1.0, "{v:?}");
/// ```
#[derive(Debug, Clone)]
pub struct LbfgsStartDiagonalEstimator<T, const D: usize, const M: usize> {
    diagonal: DiagonalEstimator<T, D>,
    memory: LbfgsMemory<T, D, M>,
    /// The chain's run-time dimension n ≤ D (0: D), for the start's ELBO.
    dimension: usize,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize, const M: usize] LbfgsStartDiagonalEstimator<T, D, M> { diagonal, memory, dimension });

/// The optimisation's memory settings: up to `M` pairs, base γ from the
/// newest pair (as [`LbfgsEstimator`](super::LbfgsEstimator)'s start).
fn start_settings<T: Real>(pairs: usize) -> LbfgsSettings<T> {
    let mut settings = LbfgsSettings::with_max_pairs(pairs);
    settings.scaling = InitialScaling::NewestPair(T::ONE);
    settings
}

impl<T: Real, const D: usize, const M: usize> LbfgsStartDiagonalEstimator<T, D, M> {
    /// An empty estimate; `M` ≥ 1 (else [`Error::InvalidSetting`]).
    pub fn new() -> Result<Self, Error> {
        Ok(LbfgsStartDiagonalEstimator {
            diagonal: DiagonalEstimator::new(),
            memory: LbfgsMemory::new(start_settings(M))?,
            dimension: 0,
        })
    }
}

impl<T: Real, const D: usize, const M: usize> MetricEstimator<T, D>
    for LbfgsStartDiagonalEstimator<T, D, M>
{
    type Metric = DiagonalMetric<T, D>;
    type Settings = ();

    fn reset(&mut self, _: (), metric: &mut DiagonalMetric<T, D>) -> Result<(), Error> {
        self.memory.reset(start_settings(M))?;
        self.diagonal.reset((), metric)
    }

    fn set_dimension(&mut self, n: usize) {
        self.dimension = n.clamp(1, D.max(1));
    }

    fn initialize(
        &mut self,
        position: &[T; D],
        gradient: &[T; D],
        metric: &mut DiagonalMetric<T, D>,
    ) -> Result<(), Error> {
        self.diagonal.initialize(position, gradient, metric)
    }

    fn initialize_by_optimization<P: Potential<T, D>>(
        &mut self,
        target: &P,
        position: &[T; D],
        normals: &[T; D],
        metric: &mut DiagonalMetric<T, D>,
    ) -> Option<([T; D], u32)> {
        let moved = if self.dimension == 0 {
            D
        } else {
            self.dimension
        };
        let outcome = match optimize_start(target, position, &mut self.memory, normals, moved)? {
            LbfgsStart::StayPut {
                gradient_evaluations,
            } => return Some((*position, gradient_evaluations)),
            LbfgsStart::Optimum(outcome) => outcome,
        };
        let variances = inverse_hessian_diagonal(&self.memory);
        if metric.set_variances(&variances).is_err() {
            return Some((*position, outcome.gradient_evaluations));
        }
        let mut displacement = [T::ZERO; D];
        for i in 0..D {
            displacement[i] = variances[i].sqrt() * normals[i];
        }
        let (start, evaluations) = typical_start(target, &outcome, &displacement, normals);
        Some((start, outcome.gradient_evaluations + evaluations))
    }

    fn observe(&mut self, position: &[T; D], gradient: &[T; D], metric: &DiagonalMetric<T, D>) {
        self.diagonal.observe(position, gradient, metric);
    }

    fn end_window(&mut self, metric: &mut DiagonalMetric<T, D>) -> Result<MetricChange, Error> {
        self.diagonal.end_window(metric)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adaptation::{AdaptiveNuts, WarmupSchedule};
    use crate::lbfgs::minimize_within;
    use crate::samplers::NutsSettings;
    use rand_core::SeedableRng;

    /// A 2-D target for [`secant_at_one_sd`]: ∇U = (g₀(x₀), g₁(x₁)).
    struct Separable(fn(f64) -> (f64, f64), fn(f64) -> (f64, f64));

    impl Potential<f64, 2> for Separable {
        fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
            let (u0, g0) = (self.0)(x[0]);
            let (u1, g1) = (self.1)(x[1]);
            *g = [g0, g1];
            u0 + u1
        }
    }

    /// Reference table for the central secant at the optimum 0: the step it
    /// settles on (sᵀy within [¼, 4], so ½–2 sds of the curvature it
    /// measured), the secant (exact for these: (g(s) − g(−s))/2 is s/σ² for
    /// a normal and s + s³ for U = x²/2 + x⁴/4), and the evaluations (two per
    /// try). Bound: 1e-12 relative (rounding only).
    #[test]
    fn secants_settle_at_one_sd_of_the_measured_curvature() {
        fn quartic(x: f64) -> (f64, f64) {
            (0.5 * x * x + 0.25 * x.powi(4), x + x * x * x)
        }
        fn flat(_: f64) -> (f64, f64) {
            (0.0, 0.0)
        }
        fn sd_100(x: f64) -> (f64, f64) {
            (0.5 * x * x * 1e-4, x * 1e-4)
        }
        fn sd_001(x: f64) -> (f64, f64) {
            (0.5 * x * x * 1e4, x * 1e4)
        }
        // (target, first step, settled step, evaluations)
        let table: [(Separable, [f64; 2], [f64; 2], u32); 4] = [
            // An sd-0.01 normal probed 3 000 sds out: exact at any length,
            // so one rescaling lands on exactly one sd.
            (Separable(flat, sd_001), [0.0, 30.0], [0.0, 0.01], 4),
            // An sd-100 normal probed at 1/100 sd: rescaled up to one sd.
            (Separable(flat, sd_100), [0.0, 1.0], [0.0, 100.0], 4),
            // Already within the range: measured once, kept.
            (Separable(sd_100, flat), [150.0, 0.0], [150.0, 0.0], 2),
            // The quartic from x = 10: sᵀy = 10 100 → s = 0.0995, then
            // sᵀy = 0.0100 → s = 0.995, then sᵀy = 1.97: three tries.
            (Separable(quartic, flat), [10.0, 0.0], [0.0, 0.0], 6),
        ];
        for (k, (target, first, settled, evaluations)) in table.iter().enumerate() {
            let mut step = *first;
            let (y, spent) = secant_at_one_sd(target, &[0.0; 2], &mut step);
            let y = y.unwrap_or_else(|| panic!("row {k}: no secant"));
            assert_eq!(spent, *evaluations, "row {k}");
            let sy = step[0] * y[0] + step[1] * y[1];
            assert!((0.25..=4.0).contains(&sy), "row {k}: sᵀy {sy}");
            let mut expected = [0.0; 2];
            target.potential_and_gradient(&step, &mut expected);
            for i in 0..2 {
                // For these odd gradients the central secant is ∇U(s).
                assert!(
                    (y[i] - expected[i]).abs() <= 1e-12 * expected[i].abs().max(1e-300),
                    "row {k}"
                );
                if k < 3 {
                    assert!(
                        (step[i] - settled[i]).abs() <= 1e-12 * settled[i].abs(),
                        "row {k}: {step:?}"
                    );
                }
            }
        }
    }

    /// No secant (and the evaluations spent, never more than the tries
    /// allow) where a gradient is not finite or the curvature is not positive.
    #[test]
    fn secants_refuse_walls_and_concave_directions() {
        fn wall(x: f64) -> (f64, f64) {
            if x < 1.0 {
                (0.5 * x * x, x)
            } else {
                (f64::INFINITY, f64::NAN)
            }
        }
        fn concave(x: f64) -> (f64, f64) {
            (-x * x, -2.0 * x)
        }
        fn flat(_: f64) -> (f64, f64) {
            (0.0, 0.0)
        }
        fn steep(x: f64) -> (f64, f64) {
            (x.powi(8), 8.0 * x.powi(7))
        }
        for (k, (target, step, most)) in [
            (Separable(wall, flat), [2.0, 0.0], 1),
            (Separable(concave, flat), [1.0, 0.0], 2),
            (Separable(flat, flat), [1.0, 1.0], 2),
            (Separable(steep, flat), [1e3, 0.0], 2 * SECANT_TRIES),
        ]
        .into_iter()
        .enumerate()
        {
            let mut s = step;
            let (y, spent) = secant_at_one_sd(&target, &[0.0; 2], &mut s);
            assert!(y.is_none(), "row {k}: {y:?} at {s:?}");
            assert!(spent <= most, "row {k}: {spent}");
        }
    }

    use crate::test_targets::{Scales, VARIANCES};

    /// U = −x₀ on all of ℝ: falls without end, so L-BFGS runs out of
    /// iterations without converging.
    struct Slope;
    impl Potential<f64, 3> for Slope {
        fn potential_and_gradient(&self, x: &[f64; 3], g: &mut [f64; 3]) -> f64 {
            *g = [-1.0, 0.0, 0.0];
            -x[0]
        }
    }

    /// From a start 3000, 1000 and 10 sds out on a Gaussian with variances
    /// spanning 10¹⁰, the start moves to within 20 sds of the mode in every
    /// coordinate, and the first metric is within a factor 1.5 of the truth
    /// in every coordinate, where the gradient-scaled one was off by factors
    /// 3, 1000 and 1000 (measured ratios 0.986, 0.998, 0.990). Backtracking L-BFGS
    /// pairs are not exactly conjugate, so this is not exact in general:
    /// from x₀ = 3000 the same diagonal was off by 175 in x₀.
    #[test]
    fn a_far_start_moves_near_the_mode_with_a_better_diagonal() {
        let start = [3.0, -1e3, 1e3];
        let mut estimator = LbfgsStartDiagonalEstimator::<f64, 3, 5>::new().unwrap();
        let mut metric = DiagonalMetric::identity();
        let mut g = [0.0; 3];
        Scales.potential_and_gradient(&start, &mut g);
        estimator.initialize(&start, &g, &mut metric).unwrap();
        let before = *metric.variances();
        let normals = [1.0, -1.0, 0.5];
        let (moved, evaluations) = estimator
            .initialize_by_optimization(&Scales, &start, &normals, &mut metric)
            .unwrap();
        assert!(evaluations > 1 && evaluations < 100, "{evaluations}");
        let after = metric.variances();
        for i in 0..3 {
            let error = |v: f64| (v / VARIANCES[i]).ln().abs();
            assert!(error(before[i]) > 1.0, "{i}: {before:?}");
            assert!(error(after[i]) < 1.5f64.ln(), "{i}: {before:?} → {after:?}");
            assert!(
                moved[i].abs() < 20.0 * VARIANCES[i].sqrt(),
                "{i}: {moved:?}"
            );
        }
    }

    /// Neal's funnel in 10 dimensions: v ~ N(0, 3²), xᵢ | v ~ N(0, eᵛ).
    /// U = v²/18 + (9/2)v + Σ xᵢ² e^{−v}/2 has its mode in the neck, at
    /// v = −40.5, x = 0.
    struct Funnel;
    impl Potential<f64, 10> for Funnel {
        fn potential_and_gradient(&self, x: &[f64; 10], g: &mut [f64; 10]) -> f64 {
            let v = x[0];
            let e = (-v).exp();
            let mut sum = 0.0;
            for i in 1..10 {
                g[i] = x[i] * e;
                sum += x[i] * x[i];
            }
            g[0] = v / 9.0 + 4.5 - 0.5 * sum * e;
            v * v / 18.0 + 4.5 * v + 0.5 * sum * e
        }
    }

    /// Centred eight schools (Rubin 1981's data): μ ~ N(0, 5²), τ ~
    /// half-Cauchy(0, 5) with τ = eˢ, θⱼ ~ N(μ, τ²), yⱼ ~ N(θⱼ, σⱼ²);
    /// x = (μ, s, θ₁…θ₈). U falls without end as s → −∞ with θ → μ.
    struct CentredEightSchools;
    const Y: [f64; 8] = [28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0];
    const SIGMA: [f64; 8] = [15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0];
    impl Potential<f64, 10> for CentredEightSchools {
        fn potential_and_gradient(&self, x: &[f64; 10], g: &mut [f64; 10]) -> f64 {
            let (mu, s) = (x[0], x[1]);
            let tau2 = (2.0 * s).exp();
            let mut u = mu * mu / 50.0 + (1.0 + tau2 / 25.0).ln() - s;
            g[0] = mu / 25.0;
            g[1] = 2.0 * tau2 / 25.0 / (1.0 + tau2 / 25.0) - 1.0;
            for j in 0..8 {
                let d = x[2 + j] - mu;
                let r = (x[2 + j] - Y[j]) / SIGMA[j];
                u += 0.5 * d * d / tau2 + s + 0.5 * r * r;
                g[0] -= d / tau2;
                g[1] += 1.0 - d * d / tau2;
                g[2 + j] = d / tau2 + r / SIGMA[j];
            }
            u
        }
    }

    /// Starts in (−2, 2)¹⁰ (Stan's) and standard normals, from a seed.
    fn start_and_normals(seed: u64) -> ([f64; 10], [f64; 10]) {
        let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(seed);
        let mut start = [0.0; 10];
        for v in start.iter_mut() {
            *v = 4.0 * f64::uniform_open_closed(&mut rng) - 2.0;
        }
        let mut normals = [0.0; 10];
        crate::random::fill_standard_normal(&mut rng, &mut normals);
        (start, normals)
    }

    fn path_memory() -> LbfgsMemory<f64, 10, 10> {
        LbfgsMemory::new(start_settings(10)).unwrap()
    }

    /// The start from `start` with 10 pairs; panics unless the chain stays
    /// put, and returns the evaluations it spent.
    fn stays_put<P: Potential<f64, 10>>(
        target: &P,
        start: &[f64; 10],
        normals: &[f64; 10],
        seed: u64,
    ) -> u32 {
        match optimize_start(target, start, &mut path_memory(), normals, 10) {
            Some(LbfgsStart::StayPut {
                gradient_evaluations,
            }) => gradient_evaluations,
            Some(LbfgsStart::Optimum(o)) => panic!("seed {seed}: optimum kept at {o:?}"),
            None => panic!("seed {seed}: no start"),
        }
    }

    /// L-BFGS alone, with the start's budget: the control.
    fn plain_path<P: Potential<f64, 10>>(
        target: &P,
        start: &[f64; 10],
    ) -> MinimizeOutcome<f64, 10> {
        minimize_within(
            target,
            start,
            &mut path_memory(),
            OPTIMIZATION_ITERATIONS,
            OPTIMIZATION_EVALUATIONS,
            OPTIMIZATION_TOLERANCE,
        )
        .unwrap()
    }

    /// With fewer pairs than coordinates (5 for 10) the ELBO is not scored
    /// (the control for the gate in `optimize_start`): the start spends
    /// exactly the evaluations of the path that stops only on the neck's
    /// growing gradient ([`NECK_GRADIENT_GROWTH`]), none on ELBO draws. On
    /// the funnel both end with the chain where it was: the ELBO refuses
    /// the neck's mode, and without it the path stops on its way down.
    #[test]
    fn with_fewer_pairs_than_coordinates_the_elbo_is_not_scored() {
        for seed in 0..5 {
            let (start, normals) = start_and_normals(seed);
            let mut memory = LbfgsMemory::<f64, 10, 5>::new(start_settings(5)).unwrap();
            let plain = minimize_observed(
                &Funnel,
                &start,
                &mut memory,
                OPTIMIZATION_ITERATIONS,
                OPTIMIZATION_EVALUATIONS,
                OPTIMIZATION_TOLERANCE,
                |iterate, _| iterate.gradient_reduction() <= NECK_GRADIENT_GROWTH,
            )
            .unwrap();
            match optimize_start(&Funnel, &start, &mut memory, &normals, 10) {
                Some(LbfgsStart::StayPut {
                    gradient_evaluations,
                }) => assert_eq!(
                    gradient_evaluations, plain.gradient_evaluations,
                    "seed {seed}"
                ),
                _ => panic!("seed {seed}: the neck's mode stood"),
            }
            stays_put(&Funnel, &start, &normals, seed);
        }
    }

    /// U = 10¹⁵ − x₀ + ½ Σᵢ₌₁⁹ xᵢ²: falls without end along x₀, but against
    /// |U| = 10¹⁵ each iteration's decrease is below the relative tolerance,
    /// so L-BFGS stops "converged" (the control) with ∇U as large as at the
    /// start (∂U/∂x₀ = −1 throughout) — as in `radon-centered`'s neck, where
    /// ∂U/∂log σ_α = J − 1. The chain stays put, also where the ELBO is not
    /// scored (5 pairs for 10 coordinates).
    struct EndlessValley;
    impl Potential<f64, 10> for EndlessValley {
        fn potential_and_gradient(&self, x: &[f64; 10], g: &mut [f64; 10]) -> f64 {
            g[0] = -1.0;
            let mut u = 1e15 - x[0];
            for i in 1..10 {
                g[i] = x[i];
                u += 0.5 * x[i] * x[i];
            }
            u
        }
    }

    #[test]
    fn a_stop_where_the_gradient_did_not_come_down_is_no_optimum() {
        for seed in 0..5 {
            let (start, normals) = start_and_normals(seed);
            let plain = plain_path(&EndlessValley, &start);
            assert!(
                plain.converged && plain.gradient_reduction() > 0.1,
                "seed {seed}: {plain:?}"
            );
            let mut memory = LbfgsMemory::<f64, 10, 5>::new(start_settings(5)).unwrap();
            let start_of_chain = optimize_start(&EndlessValley, &start, &mut memory, &normals, 10);
            assert!(
                matches!(start_of_chain, Some(LbfgsStart::StayPut { .. })),
                "seed {seed}: the optimum stood"
            );
            stays_put(&EndlessValley, &start, &normals, seed);
        }
    }

    /// From 10 starts in the funnel's bulk, L-BFGS alone converges to the
    /// mode in the neck (v < −35: the control, which shows there is an
    /// optimum to refuse), and the start refuses it: the chain stays put.
    /// Measured: the path's best ELBO beats the optimum's by 40–900 nats
    /// against a margin of 13.4.
    #[test]
    fn the_funnels_mode_in_the_neck_is_refused() {
        for seed in 0..10 {
            let (start, normals) = start_and_normals(seed);
            let plain = plain_path(&Funnel, &start);
            assert!(
                plain.converged && plain.position[0] < -35.0,
                "seed {seed}: {plain:?}"
            );
            let spent = stays_put(&Funnel, &start, &normals, seed);
            assert!(spent > 0, "seed {seed}");
        }
    }

    /// Down centred eight schools' neck the optimisation stops once the
    /// ELBO has fallen twice in a row, long before its 1000 evaluations
    /// (which L-BFGS alone spends: the control), and the chain stays put.
    /// Measured: 94–444 evaluations, ELBO draws included.
    #[test]
    fn the_optimisation_stops_on_its_way_down_a_neck() {
        for seed in 0..10 {
            let (start, normals) = start_and_normals(seed);
            let plain = plain_path(&CentredEightSchools, &start);
            assert!(
                !plain.converged && plain.gradient_evaluations >= OPTIMIZATION_EVALUATIONS,
                "seed {seed}: {plain:?}"
            );
            let spent = stays_put(&CentredEightSchools, &start, &normals, seed);
            assert!(spent < OPTIMIZATION_EVALUATIONS / 2, "seed {seed}: {spent}");
        }
    }

    /// Where the ELBO is not scored (5 pairs for 10 coordinates), the
    /// optimisation down centred eight schools' neck stops once ‖∇U‖ has
    /// grown [`NECK_GRADIENT_GROWTH`] times, long before the 1000
    /// evaluations L-BFGS alone spends there (the control), and the chain
    /// stays put. The same paths without the stop converge on nothing: no
    /// optimum is lost.
    #[test]
    fn the_optimisation_stops_where_the_gradient_grows_down_a_neck() {
        for seed in 0..10 {
            let (start, normals) = start_and_normals(seed);
            let plain = plain_path(&CentredEightSchools, &start);
            assert!(
                !plain.converged && plain.gradient_evaluations >= OPTIMIZATION_EVALUATIONS,
                "seed {seed}: {plain:?}"
            );
            let mut memory = LbfgsMemory::<f64, 10, 5>::new(start_settings(5)).unwrap();
            match optimize_start(&CentredEightSchools, &start, &mut memory, &normals, 10) {
                Some(LbfgsStart::StayPut {
                    gradient_evaluations,
                }) => assert!(
                    gradient_evaluations < OPTIMIZATION_EVALUATIONS / 4,
                    "seed {seed}: {gradient_evaluations}"
                ),
                _ => panic!("seed {seed}: an optimum stood in the neck"),
            }
        }
    }

    /// Scoring the path with an observer that draws from the memory's
    /// Gaussian leaves the path bit for bit as it was.
    #[test]
    fn scoring_the_path_leaves_it_unchanged() {
        for seed in 0..5 {
            let (start, normals) = start_and_normals(seed);
            let plain = minimize_within(&Funnel, &start, &mut path_memory(), 1000, 1000, 1e-13);
            let mut scored = 0;
            let observed = minimize_observed(
                &Funnel,
                &start,
                &mut path_memory(),
                1000,
                1000,
                1e-13,
                |iterate, memory| {
                    scored += 1;
                    elbo_estimate(&Funnel, &iterate.position, memory, &normals, 10);
                    true
                },
            );
            assert_eq!(plain, observed, "seed {seed}");
            assert_eq!(scored, plain.unwrap().iterations, "seed {seed}");
        }
    }

    #[test]
    fn an_unbounded_optimisation_leaves_the_start_and_the_gradient_metric() {
        let start = [0.5, 0.25, -1.0];
        let mut estimator = LbfgsStartDiagonalEstimator::<f64, 3, 5>::new().unwrap();
        let mut metric = DiagonalMetric::identity();
        let mut g = [0.0; 3];
        Slope.potential_and_gradient(&start, &mut g);
        estimator.initialize(&start, &g, &mut metric).unwrap();
        let before = *metric.variances();
        let (moved, evaluations) = estimator
            .initialize_by_optimization(&Slope, &start, &[1.0; 3], &mut metric)
            .unwrap();
        assert_eq!(moved, start);
        assert_eq!(*metric.variances(), before);
        assert!(evaluations >= OPTIMIZATION_EVALUATIONS, "{evaluations}");
        let not_finite = [f64::NAN, 0.0, 0.0];
        assert!(
            estimator
                .initialize_by_optimization(&Scales, &not_finite, &[1.0; 3], &mut metric)
                .is_none()
        );
    }

    /// The whole warm-up from a start 10⁴–10¹⁵ sds out (U ≈ 5·10³⁵, whose
    /// rounding alone exceeds the divergence threshold, as arma11's start
    /// does): with the L-BFGS start every one of 10 seeds ends with each
    /// variance within a factor e of the truth (a window of ≥ 25 draws
    /// estimates a log variance to about ±0.3). The control: the plain
    /// estimator with Stan's schedule and the same budget misses (measured:
    /// 3 of 10 seeds, x₀'s variance at the 10⁻¹⁸ floor, ε ≈ 0.004), so the
    /// test tells the two apart.
    #[test]
    fn the_warmup_learns_the_scales_from_where_the_plain_estimator_is_stuck() {
        let start = [1e12, 1e4, 1e8];
        let mut plain_off = 0;
        for seed in 0..10 {
            let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(seed);
            let mut chain: AdaptiveNuts<f64, 3, LbfgsStartDiagonalEstimator<f64, 3, 5>, 10> =
                AdaptiveNuts::new(
                    NutsSettings::new(0.1),
                    WarmupSchedule::after_optimization(150).unwrap(),
                    DiagonalMetric::identity(),
                    LbfgsStartDiagonalEstimator::new().unwrap(),
                    start,
                    &Scales,
                )
                .unwrap();
            while chain.is_warming_up() {
                chain.step(&Scales, &mut rng);
            }
            let v = chain.sampler().metric().variances();
            for i in 0..3 {
                assert!((v[i] / VARIANCES[i]).ln().abs() < 1.0, "seed {seed}: {v:?}");
            }
            let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(seed);
            let mut plain: AdaptiveNuts<f64, 3, DiagonalEstimator<f64, 3>, 10> = AdaptiveNuts::new(
                NutsSettings::new(0.1),
                WarmupSchedule::stan(150).unwrap(),
                DiagonalMetric::identity(),
                DiagonalEstimator::new(),
                start,
                &Scales,
            )
            .unwrap();
            while plain.is_warming_up() {
                plain.step(&Scales, &mut rng);
            }
            let v = plain.sampler().metric().variances();
            if (0..3).any(|i| (v[i] / VARIANCES[i]).ln().abs() >= 1.0) {
                plain_off += 1;
            }
        }
        assert!(plain_off >= 2, "{plain_off} of 10 plain warm-ups off");
    }

    /// U = ½‖x‖² + e^{5x₀} − 1 − 5x₀: minimum 0 at 0, and a wall of
    /// e^{5x₀} that a metric 26 times too wide along x₀ lands far up.
    struct Wall;
    impl Potential<f64, 2> for Wall {
        fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
            let e = (5.0 * x[0]).exp();
            *g = [x[0] + 5.0 * e - 5.0, x[1]];
            0.5 * (x[0] * x[0] + x[1] * x[1]) + e - 1.0 - 5.0 * x[0]
        }
    }

    fn optimum_of_wall() -> MinimizeOutcome<f64, 2> {
        MinimizeOutcome {
            position: [0.0; 2],
            gradient: [0.0; 2],
            potential: 0.0,
            iterations: 1,
            gradient_evaluations: 1,
            converged: true,
            start_gradient_norm: 1.0,
        }
    }

    #[test]
    fn a_start_far_up_a_wall_is_halved_back() {
        // z = (1, 0): the bound is 0 + 10·½ + 10 = 15. Displacement 10 along
        // x₀ gives U ≈ e⁵⁰; 5, 2.5, 1.25 and 0.625 are still above 15
        // (U(0.625) ≈ 18.8); 0.3125 gives U ≈ 2.3.
        let (start, evaluations) =
            typical_start(&Wall, &optimum_of_wall(), &[10.0, 0.0], &[1.0, 0.0]);
        assert_eq!(start, [0.3125, 0.0]);
        assert_eq!(evaluations, 6);
        let mut g = [0.0; 2];
        let u = Wall.potential_and_gradient(&start, &mut g);
        assert!(u > 2.0 && u < 2.5, "{u}");
    }

    #[test]
    fn a_start_where_the_metric_fits_is_kept() {
        // Along x₁ the wall is a unit Gaussian: displacement z itself gives
        // exactly ½z², kept after one evaluation, even for a large |z|.
        for z in [0.1, 1.0, 3.0, 6.0] {
            let (start, evaluations) =
                typical_start(&Wall, &optimum_of_wall(), &[0.0, z], &[0.0, z]);
            assert_eq!((start, evaluations), ([0.0, z], 1), "z = {z}");
        }
    }

    #[test]
    fn a_start_with_no_finite_density_near_falls_back_to_the_optimum() {
        /// Finite only within 10⁻⁶ of the origin.
        struct Pinhole;
        impl Potential<f64, 2> for Pinhole {
            fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
                *g = *x;
                if x[0].abs() + x[1].abs() < 1e-6 {
                    0.0
                } else {
                    f64::INFINITY
                }
            }
        }
        let (start, evaluations) =
            typical_start(&Pinhole, &optimum_of_wall(), &[1.0, 1.0], &[1.0, 1.0]);
        assert_eq!(start, [0.0, 0.0]);
        assert_eq!(evaluations, START_HALVINGS + 1);
        // A non-finite displacement costs nothing and also falls back.
        let (start, evaluations) =
            typical_start(&Wall, &optimum_of_wall(), &[f64::NAN, 0.0], &[1.0, 0.0]);
        assert_eq!((start, evaluations), ([0.0, 0.0], 0));
    }
}
