//! `sg-conditioning`: the stochastic-gradient family on posteriors where
//! preconditioning matters — HAMCMC against SGLD, pSGLD, SGRLD and SGHMC on a
//! linear Gaussian model and a logistic regression whose covariates have
//! condition number 10, 10³ and 10⁵ (in a random rotation, so a diagonal
//! preconditioner cannot undo it).
//!
//! The protocol, stated in full in the report:
//!
//! - **Data**: D = [`DIMENSION`] covariates x = Q diag(s) z, z ~ N(0, I), Q a
//!   random rotation, sᵢ geometric from 1 to κ^-½ so that cov(x) has
//!   condition number κ. Linear Gaussian: θ ~ N(0, I), yₙ ~ N(xₙᵀθ, 1),
//!   [`Sizes::linear_rows`] rows, exact posterior. Logistic: prior N(0, 100 I),
//!   true w scaled so xᵀw has sd 1.5, [`Sizes::logistic_rows`] rows; the
//!   reference is self-normalised importance sampling from a Student-t(4)
//!   Laplace proposal (exact as the draws grow; its weight ESS is printed).
//! - **Equal-effort step rule**: each sampler's own pilot step ε₀
//!   ([`qnmc_host::run::pilot`]: mode and Hessian, variance budget 0.1) times
//!   each multiplier of [`GRID`], [`Sizes::grid_iterations`] iterations each,
//!   the same seed; the multiplier with the smallest mean + covariance error
//!   at the end wins (an oracle choice: every sampler gets its best constant
//!   step from the same nine tries).
//! - **Runs**: where `qnmc run` starts a chain with pilot settings, the
//!   mode ± [`START_RADIUS`] Laplace marginal sds per coordinate (the same
//!   point for every sampler; from θ = 0 the error is dominated by the trip
//!   of thousands of posterior sds to the posterior, from the mode itself the
//!   mean error is trivially small), [`Sizes::iterations`] iterations with a fresh seed,
//!   every draw kept. The estimate at iteration t is the plain mean and
//!   covariance of the draws in (t/2, t]. HAMCMC runs with the default
//!   memory M = [`HAMCMC_MEMORY`] and with M − 1 = D pairs.
//! - **Errors**, scale-free with the reference N(μ, Σ = LLᵀ): mean error
//!   ‖L⁻¹(θ̄ − μ)‖/√D (in posterior sds), covariance error
//!   ‖L⁻¹ Ĉ L⁻ᵀ − I‖_F/√D.

use std::time::Instant;

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use qnmc::{
    Hamcmc, HamcmcSettings, MinibatchPotential, Psgld, PsgldSettings, Sghmc, SghmcSettings, Sgld,
    SgldSettings, Sgrld, SgrldSettings, StepSizeSchedule,
};
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

use super::report::log_spaced;
use super::{ReproduceOptions, Reproduction};
use qnmc_host::run::SamplerKind;
use qnmc_host::run::pilot::{Curvature, SgDefaults, curvature_of_potential, sg_defaults};
use qnmc_host::run::sg_metric;

mod data;
mod reference;
mod summary;

pub use data::{linear_model, logistic_model};
pub use reference::Reference;
use reference::importance_reference;
use summary::{chart, markdown};

/// Parameters D of both models.
pub const DIMENSION: usize = 10;
/// Condition numbers κ of the covariates' covariance.
pub const CONDITIONS: [f64; 3] = [1e1, 1e3, 1e5];
/// HAMCMC's memory M (the CLI default): M − 1 = 4 pairs.
pub const HAMCMC_MEMORY: usize = 5;
/// HAMCMC's memory with as many pairs as dimensions (M − 1 = D), run
/// besides the default.
pub const HAMCMC_FULL_MEMORY: usize = DIMENSION + 1;
/// Minibatch size of the linear Gaussian model.
pub const LINEAR_BATCH: usize = 1000;
/// Chains start at the mode ± this many Laplace sds per coordinate (the
/// CLI's `--init-radius`).
pub const START_RADIUS: f64 = 2.0;
/// Minibatch size of the logistic regression.
pub const LOGISTIC_BATCH: usize = 1000;
/// Multipliers of each sampler's pilot step size tried by the step rule:
/// 10^-2 … 10^2 in half decades.
pub const GRID: [f64; 9] = [
    0.01,
    0.031_622_776_601_683_79,
    0.1,
    0.316_227_766_016_837_9,
    1.0,
    3.162_277_660_168_379,
    10.0,
    31.622_776_601_683_79,
    100.0,
];
/// Samplers compared, in table order.
pub const SAMPLERS: [SamplerKind; 5] = [
    SamplerKind::Sgld,
    SamplerKind::Psgld,
    SamplerKind::Sgrld,
    SamplerKind::Sghmc,
    SamplerKind::Hamcmc,
];
/// Degrees of freedom of the importance-sampling proposal (logistic reference).
const PROPOSAL_DOF: usize = 4;
/// Prior variance of the logistic regression.
const LOGISTIC_PRIOR_VARIANCE: f64 = 100.0;
/// sd of the true linear predictor xᵀw of the logistic data.
const LOGISTIC_SIGNAL_SD: f64 = 1.5;

/// Run lengths and data sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    /// Rows N of the linear Gaussian data.
    pub linear_rows: usize,
    /// Rows N of the logistic data.
    pub logistic_rows: usize,
    /// Iterations of each sampler's measured run.
    pub iterations: usize,
    /// Iterations of each step-size trial.
    pub grid_iterations: usize,
    /// Importance-sampling draws of the logistic reference.
    pub reference_draws: usize,
}

impl Sizes {
    /// The protocol of a target with `rows` data points and minibatches of
    /// `batch`.
    pub fn protocol(&self, rows: usize, batch: usize) -> Protocol {
        Protocol {
            iterations: self.iterations,
            grid_iterations: self.grid_iterations,
            batch,
            rows,
            start: Start::NearMode {
                radius: START_RADIUS,
                seed: 17,
            },
        }
    }
}

/// The sizes of a full (`quick = false`) or quick run.
pub fn sizes(quick: bool) -> Sizes {
    if quick {
        Sizes {
            linear_rows: 5_000,
            logistic_rows: 5_000,
            iterations: 4_000,
            grid_iterations: 800,
            reference_draws: 4_000,
        }
    } else {
        Sizes {
            linear_rows: 10_000,
            logistic_rows: 10_000,
            iterations: 200_000,
            grid_iterations: 20_000,
            reference_draws: 40_000,
        }
    }
}

/// Which model a panel is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Linear Gaussian regression, exact posterior.
    LinearGaussian,
    /// Logistic regression, importance-sampling reference.
    Logistic,
}

impl Family {
    fn name(self) -> &'static str {
        match self {
            Family::LinearGaussian => "linear Gaussian",
            Family::Logistic => "logistic regression",
        }
    }

    fn stem(self) -> &'static str {
        match self {
            Family::LinearGaussian => "linear",
            Family::Logistic => "logistic",
        }
    }
}

/// One estimate along a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Iteration t.
    pub iteration: usize,
    /// Sampler wall time to iteration t, seconds (errors not included).
    pub seconds: f64,
    /// ‖L⁻¹(θ̄ − μ)‖/√D of the draws in (t/2, t].
    pub mean_error: f64,
    /// ‖L⁻¹ Ĉ L⁻ᵀ − I‖_F/√D of the draws in (t/2, t].
    pub covariance_error: f64,
}

impl Point {
    /// The covariance error if `covariance`, else the mean error.
    pub fn error(&self, covariance: bool) -> f64 {
        if covariance {
            self.covariance_error
        } else {
            self.mean_error
        }
    }
}

/// One sampler's run on one panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// Which sampler.
    pub sampler: SamplerKind,
    /// Its name in tables and charts (HAMCMC with its memory M).
    pub label: String,
    /// Its pilot step size ε₀.
    pub pilot_step: f64,
    /// Score (final mean + covariance error) of each [`GRID`] trial;
    /// infinite when the trial failed.
    pub grid_scores: Vec<f64>,
    /// The chosen multiplier of ε₀.
    pub multiplier: f64,
    /// Estimates at log-spaced iterations.
    pub points: Vec<Point>,
    /// Iterations run (fewer than asked when a step failed).
    pub iterations: usize,
    /// The failed step, if one did.
    pub failure: Option<String>,
}

impl Curve {
    /// The last estimate, if any.
    pub fn last(&self) -> Option<&Point> {
        self.points.last()
    }

    /// Wall time of the run (to its last estimate), seconds.
    pub fn seconds(&self) -> f64 {
        self.last().map_or(f64::NAN, |p| p.seconds)
    }

    /// The first estimate whose error (`covariance` or mean) is at most
    /// `target`.
    pub fn first_reaching(&self, target: f64, covariance: bool) -> Option<&Point> {
        self.points.iter().find(|p| p.error(covariance) <= target)
    }
}

/// The curve of `curves` with the lowest final error (`covariance` or mean):
/// that error and the curve's label; `None` when no curve has a finite one.
pub fn lowest_final_error(curves: &[Curve], covariance: bool) -> Option<(f64, &str)> {
    curves
        .iter()
        .filter_map(|c| c.last().map(|q| (q.error(covariance), c.label.as_str())))
        .filter(|(e, _)| e.is_finite())
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

/// One model at one condition number.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// The model.
    pub family: Family,
    /// Condition number κ of the covariates.
    pub condition: f64,
    /// Condition number of the Hessian of U at the mode (the posterior's).
    pub posterior_condition: f64,
    /// Rows N.
    pub rows: usize,
    /// Minibatch size b.
    pub batch: usize,
    /// How the reference was made.
    pub reference: String,
    /// One curve per sampler of [`SAMPLERS`].
    pub curves: Vec<Curve>,
}

impl Panel {
    /// The curve of `kind`.
    pub fn curve(&self, kind: SamplerKind) -> Option<&Curve> {
        self.curves.iter().find(|c| c.sampler == kind)
    }

    /// Wall time the curve labelled `label` needed to reach SGLD's final
    /// error (mean, or covariance) divided by SGLD's wall time; `None` when it
    /// never reached it (or a run is missing).
    pub fn time_ratio_to_sgld(&self, label: &str, covariance: bool) -> Option<f64> {
        let sgld = self.curve(SamplerKind::Sgld)?;
        let hamcmc = self.curves.iter().find(|c| c.label == label)?;
        let target = sgld.last()?.error(covariance);
        hamcmc
            .first_reaching(target, covariance)
            .map(|p| p.seconds / sgld.seconds())
    }
}

/// What a run of `iterations` steps of one sampler produced.
struct Trace<const D: usize> {
    draws: Vec<[f64; D]>,
    /// Wall seconds at each checkpoint reached.
    seconds: Vec<f64>,
    failure: Option<String>,
}

/// Steps `step` `iterations` times, keeping every draw and the wall time at
/// each of `checkpoints`.
fn drive<const D: usize>(
    iterations: usize,
    checkpoints: &[usize],
    mut step: impl FnMut() -> Result<[f64; D], qnmc::Error>,
) -> Trace<D> {
    let mut draws = Vec::with_capacity(iterations);
    let mut seconds = Vec::with_capacity(checkpoints.len());
    let start = Instant::now();
    let mut next = 0;
    for t in 1..=iterations {
        match step() {
            Ok(x) if x.iter().all(|v| v.is_finite()) => draws.push(x),
            Ok(_) => {
                return Trace {
                    draws,
                    seconds,
                    failure: Some(format!("iteration {t}: non-finite state")),
                };
            }
            Err(e) => {
                return Trace {
                    draws,
                    seconds,
                    failure: Some(format!("iteration {t}: {e}")),
                };
            }
        }
        if next < checkpoints.len() && checkpoints[next] == t {
            seconds.push(start.elapsed().as_secs_f64());
            next += 1;
        }
    }
    Trace {
        draws,
        seconds,
        failure: None,
    }
}

/// How long one run lasts, where it records its wall time, its seed.
#[derive(Clone, Copy)]
struct RunLength<'a> {
    iterations: usize,
    checkpoints: &'a [usize],
    seed: u64,
}

/// Runs `kind` with the pilot's settings `pilot` and step size `step_size`
/// on `target` from θ = 0.
fn simulate<const D: usize, const M: usize, P: MinibatchPotential<f64, D>>(
    kind: SamplerKind,
    pilot: &SgDefaults,
    step_size: f64,
    start: [f64; D],
    target: &P,
    length: RunLength<'_>,
) -> Trace<D> {
    let RunLength {
        iterations,
        checkpoints,
        seed,
    } = length;
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let refused = |e: qnmc::Error| Trace {
        draws: Vec::new(),
        seconds: Vec::new(),
        failure: Some(format!("settings refused: {e}")),
    };
    match kind {
        SamplerKind::Sgld => match Sgld::<f64, D>::new(SgldSettings::new(step_size), start) {
            Ok(mut s) => drive(iterations, checkpoints, || {
                s.step(target, &mut rng)?;
                Ok(*s.position())
            }),
            Err(e) => refused(e),
        },
        SamplerKind::Psgld => {
            match Psgld::<f64, D>::new(PsgldSettings::new(step_size, 0.99, 1e-5), start) {
                Ok(mut s) => drive(iterations, checkpoints, || {
                    s.step(target, &mut rng)?;
                    Ok(*s.position())
                }),
                Err(e) => refused(e),
            }
        }
        SamplerKind::Sgrld => {
            let metric = sg_metric(pilot.inverse_metric.as_deref());
            match Sgrld::<f64, D, _>::new(SgrldSettings::new(step_size), start, metric) {
                Ok(mut s) => drive(iterations, checkpoints, || {
                    s.step(target, &mut rng)?;
                    Ok(*s.position())
                }),
                Err(e) => refused(e),
            }
        }
        SamplerKind::Sghmc => {
            let settings = SghmcSettings::new(step_size, pilot.friction.unwrap_or(1.0));
            match Sghmc::<f64, D>::new(settings, start) {
                Ok(mut s) => drive(iterations, checkpoints, || {
                    s.step(target, &mut rng)?;
                    Ok(*s.position())
                }),
                Err(e) => refused(e),
            }
        }
        SamplerKind::Hamcmc => {
            let settings = HamcmcSettings::new(
                StepSizeSchedule::Constant(step_size),
                pilot.gamma.unwrap_or(1.0),
                0.0,
            );
            match Hamcmc::<f64, D, M>::new(settings, start) {
                Ok(s) => {
                    let mut s = Box::new(s);
                    drive(iterations, checkpoints, || {
                        s.step(target, &mut rng)?;
                        Ok(*s.position())
                    })
                }
                Err(e) => refused(e),
            }
        }
        other => Trace {
            draws: Vec::new(),
            seconds: Vec::new(),
            failure: Some(format!("{other} is not part of this benchmark")),
        },
    }
}

/// The estimates of `trace` at `checkpoints` (window (t/2, t]).
fn points<const D: usize>(
    trace: &Trace<D>,
    checkpoints: &[usize],
    reference: &Reference,
) -> Vec<Point> {
    checkpoints
        .iter()
        .zip(&trace.seconds)
        .filter(|(t, _)| **t >= 4)
        .map(|(&t, &seconds)| {
            let (mean_error, covariance_error) = reference.errors(&trace.draws[t / 2..t]);
            Point {
                iteration: t,
                seconds,
                mean_error,
                covariance_error,
            }
        })
        .collect()
}

/// Score of a trace for the step rule: final mean + covariance error.
fn score<const D: usize>(trace: &Trace<D>, reference: &Reference) -> f64 {
    let n = trace.draws.len();
    if trace.failure.is_some() || n < 4 {
        return f64::INFINITY;
    }
    let (m, c) = reference.errors(&trace.draws[n / 2..]);
    let s = m + c;
    if s.is_finite() { s } else { f64::INFINITY }
}

/// Run lengths of [`compare_samplers`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Protocol {
    /// Iterations of each measured run.
    pub iterations: usize,
    /// Iterations of each step-size trial.
    pub grid_iterations: usize,
    /// Minibatch size b of the target (for the pilot's ν = N/b − 1).
    pub batch: usize,
    /// Data points N.
    pub rows: usize,
    /// Where the chains start.
    pub start: Start,
}

/// Where [`compare_samplers`] starts every chain (the same point for every
/// sampler of a call).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Start {
    /// θ = 0 (the HAMCMC paper's start).
    Zero,
    /// As `qnmc run` starts a chain with pilot settings: the mode plus
    /// uniform(−`radius`, `radius`) Laplace marginal sds √(A⁻¹)ᵢᵢ per
    /// coordinate, drawn with `seed`.
    NearMode {
        /// `--init-radius` (2 in the CLI).
        radius: f64,
        /// Seed of the offsets.
        seed: u64,
    },
}

impl Start {
    fn point<const D: usize>(self, curvature: &Curvature) -> [f64; D] {
        let mut start = [0.0; D];
        if let Start::NearMode { radius, seed } = self {
            let sds: Vec<f64> = curvature
                .hessian
                .clone()
                .cholesky()
                .map(|c| c.inverse())
                .map(|inverse| {
                    (0..inverse.nrows())
                        .map(|i| inverse[(i, i)].sqrt())
                        .collect()
                })
                .unwrap_or_default();
            let mut rng = XorShiftRng::seed_from_u64(seed);
            for (i, s) in start.iter_mut().enumerate() {
                let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                let sd = sds.get(i).copied().unwrap_or(0.0);
                *s = curvature.mode.get(i).copied().unwrap_or(0.0) + radius * (2.0 * u - 1.0) * sd;
            }
        }
        start
    }
}

/// The benchmark's protocol for each of `samplers` on `target` (memory M for
/// HAMCMC): the pilot's ε₀ from `curvature`, the [`GRID`] trials, and the
/// measured run from `protocol.start`, its errors against `reference`.
pub fn compare_samplers<const D: usize, const M: usize, P: MinibatchPotential<f64, D>>(
    target: &P,
    samplers: &[SamplerKind],
    reference: &Reference,
    curvature: &Curvature,
    protocol: &Protocol,
    seed: u64,
) -> Vec<Curve> {
    let checkpoints = log_spaced(protocol.iterations, 10);
    let grid_checkpoints = [protocol.grid_iterations];
    let start = protocol.start.point::<D>(curvature);
    let mut curves = Vec::new();
    for (k, &kind) in samplers.iter().enumerate() {
        let label = if kind == SamplerKind::Hamcmc {
            format!("hamcmc M={M}")
        } else {
            kind.name().to_string()
        };
        let pilot = match sg_defaults(
            kind,
            curvature,
            protocol.rows,
            protocol.batch,
            M,
            None,
            None,
        ) {
            Ok(p) => p,
            Err(e) => {
                curves.push(Curve {
                    sampler: kind,
                    label,
                    pilot_step: f64::NAN,
                    grid_scores: Vec::new(),
                    multiplier: f64::NAN,
                    points: Vec::new(),
                    iterations: 0,
                    failure: Some(format!("pilot: {e}")),
                });
                continue;
            }
        };
        let grid_scores: Vec<f64> = GRID
            .iter()
            .map(|m| {
                let trace = simulate::<D, M, P>(
                    kind,
                    &pilot,
                    pilot.step_size * m,
                    start,
                    target,
                    RunLength {
                        iterations: protocol.grid_iterations,
                        checkpoints: &grid_checkpoints,
                        seed: seed + 100 + k as u64,
                    },
                );
                score(&trace, reference)
            })
            .collect();
        let best = (0..GRID.len())
            .min_by(|&a, &b| grid_scores[a].total_cmp(&grid_scores[b]))
            .unwrap_or(4);
        let multiplier = GRID[best];
        let trace = simulate::<D, M, P>(
            kind,
            &pilot,
            pilot.step_size * multiplier,
            start,
            target,
            RunLength {
                iterations: protocol.iterations,
                checkpoints: &checkpoints,
                seed: seed + 200 + k as u64,
            },
        );
        curves.push(Curve {
            sampler: kind,
            label,
            pilot_step: pilot.step_size,
            grid_scores,
            multiplier,
            points: points(&trace, &checkpoints, reference),
            iterations: trace.draws.len(),
            failure: trace.failure,
        });
    }
    curves
}

/// Condition number of the Hessian in `curvature`.
pub fn condition_number(curvature: &Curvature) -> f64 {
    let eigen = SymmetricEigen::new(curvature.hessian.clone());
    let (lo, hi) = eigen
        .eigenvalues
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &e| {
            (lo.min(e), hi.max(e))
        });
    hi / lo
}

/// Everything about one model at one condition number.
fn panel<P: MinibatchPotential<f64, DIMENSION>>(
    family: Family,
    condition: f64,
    target: &P,
    protocol: &Protocol,
    reference: &Reference,
    curvature: &Curvature,
    seed: u64,
) -> Panel {
    Panel {
        family,
        condition,
        posterior_condition: condition_number(curvature),
        rows: protocol.rows,
        batch: protocol.batch,
        reference: reference.note().to_string(),
        curves: {
            let mut curves = compare_samplers::<DIMENSION, HAMCMC_MEMORY, P>(
                target, &SAMPLERS, reference, curvature, protocol, seed,
            );
            curves.extend(compare_samplers::<DIMENSION, HAMCMC_FULL_MEMORY, P>(
                target,
                &[SamplerKind::Hamcmc],
                reference,
                curvature,
                protocol,
                seed + 1,
            ));
            curves
        },
    }
}

/// A panel that could not be set up (pilot or reference failed).
fn broken(family: Family, condition: f64, rows: usize, batch: usize, why: String) -> Panel {
    Panel {
        family,
        condition,
        posterior_condition: f64::NAN,
        rows,
        batch,
        reference: why,
        curves: Vec::new(),
    }
}

fn linear_panel(condition: f64, sizes: &Sizes, seed: u64) -> Panel {
    let rows = sizes.linear_rows;
    let model = linear_model(rows, condition, seed);
    let posterior = model.posterior();
    let mean = DVector::from_column_slice(&posterior.mean);
    let covariance = DMatrix::from_fn(DIMENSION, DIMENSION, |i, j| posterior.covariance[i][j]);
    let setup = curvature_of_potential(&model, &[0.0; DIMENSION], DIMENSION).and_then(|c| {
        Reference::new(mean, &covariance, "exact (conjugate) posterior".into())
            .map(|r| (c, r))
            .ok_or_else(|| "the posterior covariance is not positive definite".into())
    });
    match setup {
        Ok((curvature, reference)) => panel(
            Family::LinearGaussian,
            condition,
            &model,
            &sizes.protocol(rows, LINEAR_BATCH),
            &reference,
            &curvature,
            seed,
        ),
        Err(e) => broken(Family::LinearGaussian, condition, rows, LINEAR_BATCH, e),
    }
}

fn logistic_panel(condition: f64, sizes: &Sizes, seed: u64) -> Panel {
    let rows = sizes.logistic_rows;
    let model = logistic_model(rows, condition, seed);
    let setup = curvature_of_potential(&model, &[0.0; DIMENSION], DIMENSION).and_then(|c| {
        let laplace = c
            .hessian
            .clone()
            .cholesky()
            .ok_or("the Hessian at the mode is not positive definite")?
            .inverse();
        let mut mode = [0.0; DIMENSION];
        mode.copy_from_slice(&c.mode);
        let (mean, covariance, ess) =
            importance_reference(&model, &mode, &laplace, sizes.reference_draws, seed + 7)
                .ok_or("the importance weights are not finite")?;
        let note = format!(
            "importance sampling, {} draws from a Student-t({PROPOSAL_DOF}) Laplace proposal, weight ESS {:.0}",
            sizes.reference_draws, ess
        );
        let reference = Reference::new(mean, &covariance, note)
            .ok_or("the reference covariance is not positive definite")?;
        Ok((c, reference))
    });
    match setup {
        Ok((curvature, reference)) => panel(
            Family::Logistic,
            condition,
            &model,
            &sizes.protocol(rows, LOGISTIC_BATCH),
            &reference,
            &curvature,
            seed,
        ),
        Err(e) => broken(Family::Logistic, condition, rows, LOGISTIC_BATCH, e),
    }
}

/// Every panel: both models at each of [`CONDITIONS`].
pub fn panels(options: &ReproduceOptions) -> Vec<Panel> {
    let sizes = sizes(options.quick);
    let mut out = Vec::new();
    for (k, &condition) in CONDITIONS.iter().enumerate() {
        out.push(linear_panel(
            condition,
            &sizes,
            options.seed + 10 * k as u64,
        ));
    }
    for (k, &condition) in CONDITIONS.iter().enumerate() {
        out.push(logistic_panel(
            condition,
            &sizes,
            options.seed + 1000 + 10 * k as u64,
        ));
    }
    out
}

/// Runs the benchmark and writes the report.
pub fn run(options: &ReproduceOptions) -> Reproduction {
    let panels = panels(options);
    let mut charts = Vec::new();
    for p in &panels {
        for covariance in [false, true] {
            for by_time in [false, true] {
                charts.push(chart(p, covariance, by_time));
            }
        }
    }
    Reproduction {
        name: "sg-conditioning".to_string(),
        title: "Stochastic-gradient samplers against the condition number: HAMCMC, SGLD, pSGLD, SGRLD, SGHMC".to_string(),
        markdown: markdown(&panels, options),
        charts,
        skipped: Vec::new(),
    }
}
