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
//!   ([`crate::run::pilot`]: mode and Hessian, variance budget 0.1) times
//!   each multiplier of [`GRID`], [`Sizes::grid_iterations`] iterations each,
//!   the same seed; the multiplier with the smallest mean + covariance error
//!   at the end wins (an oracle choice: every sampler gets its best constant
//!   step from the same nine tries).
//! - **Runs**: from the mode the pilot found (where `qnmc run` starts them;
//!   from θ = 0 the error is dominated by the trip of thousands of posterior
//!   sds to the posterior, which every sampler makes at its slowest
//!   direction's pace), [`Sizes::iterations`] iterations with a fresh seed,
//!   every draw kept. The estimate at iteration t is the plain mean and
//!   covariance of the draws in (t/2, t]. HAMCMC runs with the default
//!   memory M = [`HAMCMC_MEMORY`] and with M − 1 = D pairs.
//! - **Errors**, scale-free with the reference N(μ, Σ = LLᵀ): mean error
//!   ‖L⁻¹(θ̄ − μ)‖/√D (in posterior sds), covariance error
//!   ‖L⁻¹ Ĉ L⁻ᵀ − I‖_F/√D.

use std::fmt::Write as _;
use std::time::Instant;

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use qnmc::random::standard_normal;
use qnmc::{
    Hamcmc, HamcmcSettings, MinibatchPotential, Potential, Psgld, PsgldSettings, Sghmc,
    SghmcSettings, Sgld, SgldSettings, Sgrld, SgrldSettings, StepSizeSchedule,
};
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

use super::report::{log_spaced, machine, number, quick_note};
use super::{ReproduceOptions, Reproduction};
use crate::chart::{Chart, Scale, Series, SeriesStyle};
use crate::run::SamplerKind;
use crate::run::pilot::{Curvature, SgDefaults, curvature_of_potential, sg_defaults};
use crate::run::samplers::ConstantDiagonalMetric;
use crate::targets::{LinearGaussianModel, LogisticRegression};

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
/// Minibatch size of the logistic regression.
pub const LOGISTIC_BATCH: usize = 100;
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
            start_at_mode: true,
        }
    }
}

/// The sizes of a full (`quick = false`) or quick run.
pub fn sizes(quick: bool) -> Sizes {
    if quick {
        Sizes {
            linear_rows: 20_000,
            logistic_rows: 5_000,
            iterations: 4_000,
            grid_iterations: 800,
            reference_draws: 4_000,
        }
    } else {
        Sizes {
            linear_rows: 1_000_000,
            logistic_rows: 100_000,
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
        self.points.iter().find(|p| {
            let e = if covariance {
                p.covariance_error
            } else {
                p.mean_error
            };
            e <= target
        })
    }
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
        let last = sgld.last()?;
        let target = if covariance {
            last.covariance_error
        } else {
            last.mean_error
        };
        hamcmc
            .first_reaching(target, covariance)
            .map(|p| p.seconds / sgld.seconds())
    }
}

/// The reference posterior N(μ, Σ) and its whitening L⁻¹ (Σ = LLᵀ).
pub struct Reference {
    mean: DVector<f64>,
    whitening: DMatrix<f64>,
    note: String,
}

impl Reference {
    /// From the posterior mean and covariance; `note` says where they come
    /// from. `None` when the covariance is not positive definite.
    pub fn new(mean: DVector<f64>, covariance: &DMatrix<f64>, note: String) -> Option<Self> {
        let l = covariance.clone().cholesky()?.l();
        let whitening = l.try_inverse()?;
        Some(Reference {
            mean,
            whitening,
            note,
        })
    }

    /// (mean error, covariance error) of `draws`.
    fn errors<const D: usize>(&self, draws: &[[f64; D]]) -> (f64, f64) {
        let d = D;
        let n = draws.len().max(1) as f64;
        let mut mean = DVector::<f64>::zeros(d);
        for x in draws {
            for i in 0..d {
                mean[i] += x[i] / n;
            }
        }
        let mut cov = DMatrix::<f64>::zeros(d, d);
        for x in draws {
            for i in 0..d {
                let a = x[i] - mean[i];
                for j in 0..=i {
                    cov[(i, j)] += a * (x[j] - mean[j]);
                }
            }
        }
        let denominator = (draws.len() as f64 - 1.0).max(1.0);
        for i in 0..d {
            for j in 0..=i {
                cov[(i, j)] /= denominator;
                cov[(j, i)] = cov[(i, j)];
            }
        }
        let e = &self.whitening * (mean - &self.mean);
        let white = &self.whitening * cov * self.whitening.transpose() - DMatrix::identity(d, d);
        let root = (d as f64).sqrt();
        (e.norm() / root, white.norm() / root)
    }
}

/// A random rotation (Gram–Schmidt of a Gaussian matrix), rows orthonormal.
fn rotation(rng: &mut XorShiftRng) -> [[f64; DIMENSION]; DIMENSION] {
    let mut q = [[0.0; DIMENSION]; DIMENSION];
    for k in 0..DIMENSION {
        let mut v = [0.0; DIMENSION];
        for x in v.iter_mut() {
            *x = standard_normal(rng);
        }
        for u in q.iter().take(k) {
            let p: f64 = v.iter().zip(u).map(|(a, b)| a * b).sum();
            for (a, b) in v.iter_mut().zip(u) {
                *a -= p * b;
            }
        }
        let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt();
        for (o, a) in q[k].iter_mut().zip(&v) {
            *o = a / norm;
        }
    }
    q
}

/// `rows` covariate vectors with covariance Q diag(s²) Qᵀ, cond = `condition`.
fn covariates(rows: usize, condition: f64, rng: &mut XorShiftRng) -> Vec<[f64; DIMENSION]> {
    let q = rotation(rng);
    let sds: Vec<f64> = (0..DIMENSION)
        .map(|i| condition.powf(-0.5 * i as f64 / (DIMENSION - 1) as f64))
        .collect();
    (0..rows)
        .map(|_| {
            let mut x = [0.0; DIMENSION];
            for (k, row) in q.iter().enumerate() {
                let z = sds[k] * standard_normal::<f64, _>(rng);
                for (xi, qi) in x.iter_mut().zip(row) {
                    *xi += z * qi;
                }
            }
            x
        })
        .collect()
}

fn normals(rng: &mut XorShiftRng) -> [f64; DIMENSION] {
    let mut v = [0.0; DIMENSION];
    for x in v.iter_mut() {
        *x = standard_normal(rng);
    }
    v
}

fn dot(a: &[f64; DIMENSION], b: &[f64; DIMENSION]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The linear Gaussian data set at condition `condition` (noise variance 1).
pub fn linear_model(
    rows: usize,
    condition: f64,
    seed: u64,
) -> LinearGaussianModel<DIMENSION, LINEAR_BATCH> {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let regressors = covariates(rows, condition, &mut rng);
    let theta = normals(&mut rng);
    let observations = regressors
        .iter()
        .map(|a| dot(a, &theta) + standard_normal::<f64, _>(&mut rng))
        .collect();
    LinearGaussianModel {
        regressors,
        observations,
        noise_variance: 1.0,
    }
}

/// The logistic data set at condition `condition`.
pub fn logistic_model(
    rows: usize,
    condition: f64,
    seed: u64,
) -> LogisticRegression<DIMENSION, LOGISTIC_BATCH> {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let design = covariates(rows, condition, &mut rng);
    let mut w = normals(&mut rng);
    let sd = (design.iter().map(|x| dot(x, &w).powi(2)).sum::<f64>() / rows.max(1) as f64).sqrt();
    for v in w.iter_mut() {
        *v *= LOGISTIC_SIGNAL_SD / sd.max(f64::MIN_POSITIVE);
    }
    let labels = design
        .iter()
        .map(|x| {
            let p = 1.0 / (1.0 + (-dot(x, &w)).exp());
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            f64::from(u8::from(u < p))
        })
        .collect();
    LogisticRegression::new(design, labels, LOGISTIC_PRIOR_VARIANCE)
}

/// Self-normalised importance sampling of `target` from a Student-t
/// ([`PROPOSAL_DOF`]) centred at `mode` with scale `covariance` (the Laplace
/// approximation): mean, covariance and the weights' ESS. Two threads.
fn importance_reference<P: Potential<f64, DIMENSION> + Sync>(
    target: &P,
    mode: &[f64; DIMENSION],
    covariance: &DMatrix<f64>,
    draws: usize,
    seed: u64,
) -> Option<(DVector<f64>, DMatrix<f64>, f64)> {
    let l = covariance.clone().cholesky()?.l();
    let nu = PROPOSAL_DOF as f64;
    let d = DIMENSION;
    let threads = 2;
    let chunk = draws.div_ceil(threads);
    let samples: Vec<(Vec<f64>, f64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                let l = &l;
                scope.spawn(move || {
                    let mut rng = XorShiftRng::seed_from_u64(seed ^ ((k as u64 + 1) * 0x9E37));
                    let mut out = Vec::with_capacity(chunk);
                    let mut gradient = [0.0; DIMENSION];
                    for _ in 0..chunk {
                        let z = DVector::from_iterator(d, normals(&mut rng));
                        let chi2: f64 = (0..PROPOSAL_DOF)
                            .map(|_| standard_normal::<f64, _>(&mut rng).powi(2))
                            .sum();
                        let scale = (nu / chi2).sqrt();
                        let step = l * &z * scale;
                        let mut w = *mode;
                        for i in 0..d {
                            w[i] += step[i];
                        }
                        // log q up to a constant: ‖L⁻¹(w − mode)‖² = scale²‖z‖².
                        let r2 = scale * scale * z.norm_squared();
                        let log_q = -0.5 * (nu + d as f64) * (1.0 + r2 / nu).ln();
                        let u = target.potential_and_gradient(&w, &mut gradient);
                        out.push((w.to_vec(), -u - log_q));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let top = samples
        .iter()
        .map(|s| s.1)
        .filter(|v| v.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = samples
        .iter()
        .map(|s| {
            if s.1.is_finite() {
                (s.1 - top).exp()
            } else {
                0.0
            }
        })
        .collect();
    let total: f64 = weights.iter().sum();
    if total.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let mut mean = DVector::<f64>::zeros(d);
    for (s, w) in samples.iter().zip(&weights) {
        for i in 0..d {
            mean[i] += w * s.0[i] / total;
        }
    }
    let mut cov = DMatrix::<f64>::zeros(d, d);
    for (s, w) in samples.iter().zip(&weights) {
        for i in 0..d {
            for j in 0..d {
                cov[(i, j)] += w * (s.0[i] - mean[i]) * (s.0[j] - mean[j]) / total;
            }
        }
    }
    let ess = total * total / weights.iter().map(|w| w * w).sum::<f64>();
    Some((mean, cov, ess))
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
            let metric =
                ConstantDiagonalMetric::<D>::from_model_entries(pilot.inverse_metric.as_deref());
            match Sgrld::<f64, D>::new(SgrldSettings::new(step_size), start) {
                Ok(mut s) => drive(iterations, checkpoints, || {
                    s.step(target, &metric, &mut rng)?;
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Protocol {
    /// Iterations of each measured run.
    pub iterations: usize,
    /// Iterations of each step-size trial.
    pub grid_iterations: usize,
    /// Minibatch size b of the target (for the pilot's ν = N/b − 1).
    pub batch: usize,
    /// Data points N.
    pub rows: usize,
    /// Start the chains at the mode (else at θ = 0).
    pub start_at_mode: bool,
}

/// The benchmark's protocol for each of `samplers` on `target` (memory M for
/// HAMCMC): the pilot's ε₀ from `curvature`, the [`GRID`] trials, and the
/// measured run from θ = 0, its errors against `reference`.
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
    let mut start = [0.0; D];
    if protocol.start_at_mode {
        for (s, m) in start.iter_mut().zip(&curvature.mode) {
            *s = *m;
        }
    }
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
        reference: reference.note.clone(),
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

fn condition_label(k: f64) -> String {
    format!("1e{}", k.log10().round())
}

fn chart(panel: &Panel, covariance: bool, by_time: bool) -> Chart {
    let what = if covariance { "cov" } else { "mean" };
    let axis = if by_time { "time" } else { "iterations" };
    let y_label = if covariance {
        "covariance error ‖L⁻¹ĈL⁻ᵀ − I‖_F/√D"
    } else {
        "mean error ‖L⁻¹(θ̄ − μ)‖/√D"
    };
    Chart {
        file_stem: format!(
            "sg-conditioning-{}-k{}-{what}-{axis}",
            panel.family.stem(),
            condition_label(panel.condition)
        ),
        title: format!(
            "{}, cond(cov x) = {}: {}",
            panel.family.name(),
            condition_label(panel.condition),
            if covariance {
                "covariance error"
            } else {
                "mean error"
            }
        ),
        x_label: if by_time {
            "wall-clock time (s)".into()
        } else {
            "iteration t".into()
        },
        y_label: y_label.into(),
        x_scale: Scale::Log10,
        y_scale: Scale::Log10,
        series: panel
            .curves
            .iter()
            .map(|c| Series {
                label: c.label.clone(),
                points: c
                    .points
                    .iter()
                    .map(|p| {
                        let x = if by_time {
                            p.seconds.max(1e-6)
                        } else {
                            p.iteration as f64
                        };
                        let y = if covariance {
                            p.covariance_error
                        } else {
                            p.mean_error
                        };
                        (x, y)
                    })
                    .filter(|(_, y)| y.is_finite() && *y > 0.0)
                    .collect(),
                style: SeriesStyle::Line,
            })
            .collect(),
        categories: Vec::new(),
    }
}

fn ratio_text(r: Option<f64>) -> String {
    match r {
        Some(r) => number(r),
        None => "never".into(),
    }
}

fn markdown(panels: &[Panel], options: &ReproduceOptions) -> String {
    let s = sizes(options.quick);
    let mut md = String::new();
    md.push_str("# Stochastic-gradient samplers where preconditioning matters\n\n");
    md.push_str(quick_note(options.quick));
    let _ = writeln!(
        md,
        "Command: `qnmc reproduce sg-conditioning{}` (seed {}). \
         D = {DIMENSION}; covariates x = Q diag(s) z with Q a random rotation and \
         cond(cov x) = κ ∈ {{10, 10³, 10⁵}}. **Linear Gaussian**: θ ~ N(0, I), y ~ N(xᵀθ, 1), \
         N = {} rows, minibatch b = {LINEAR_BATCH}, exact posterior. **Logistic regression**: \
         prior N(0, {LOGISTIC_PRIOR_VARIANCE} I), true xᵀw with sd {LOGISTIC_SIGNAL_SD}, N = {} rows, \
         b = {LOGISTIC_BATCH}, reference by importance sampling ({} draws, Student-t({PROPOSAL_DOF}) \
         proposal at the Laplace approximation).\n",
        if options.quick { " --quick" } else { "" },
        options.seed,
        s.linear_rows,
        s.logistic_rows,
        s.reference_draws
    );
    let _ = writeln!(
        md,
        "**Step rule (equal effort)**: every sampler's own pilot step ε₀ (`qnmc run`'s default: \
         mode and Hessian A, variance budget β = 0.1, minibatch noise ν = N/b − 1; docs/DEFAULTS.md) \
         times each of 0.01, 0.03, …, 100 (9 tries of {} iterations, same seed); the try with the \
         smallest mean + covariance error wins. SGRLD uses G = diag(A), SGHMC friction √λ_max(A), \
         HAMCMC M = {HAMCMC_MEMORY} (the default, M − 1 = 4 pairs) and M = {HAMCMC_FULL_MEMORY} \
         (M − 1 = D pairs), γ = 1/λ_max(A), constant step. **Runs**: from the mode the pilot \
         found (as `qnmc run` starts them), {} \
         iterations, fresh seed, one run each. Estimates at iteration t use the draws in (t/2, t]. \
         **Errors**, in posterior units (Σ = LLᵀ the reference covariance): mean error \
         ‖L⁻¹(θ̄ − μ)‖/√D, covariance error ‖L⁻¹ĈL⁻ᵀ − I‖_F/√D (0.1 = 10 % of a posterior sd).\n",
        s.grid_iterations, s.iterations
    );
    md.push_str("## Final errors\n\n");
    md.push_str(
        "| model | κ (x) | κ (posterior) | sampler | ε₀ | chosen × ε₀ | mean error | cov error | seconds | note |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for p in panels {
        if p.curves.is_empty() {
            let _ = writeln!(
                md,
                "| {} | {} | — | — | — | — | — | — | — | not run: {} |",
                p.family.name(),
                condition_label(p.condition),
                p.reference
            );
        }
        for c in &p.curves {
            let (m, cv) = c
                .last()
                .map_or((f64::NAN, f64::NAN), |q| (q.mean_error, q.covariance_error));
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {:.2} | {} |",
                p.family.name(),
                condition_label(p.condition),
                number(p.posterior_condition),
                c.label,
                number(c.pilot_step),
                number(c.multiplier),
                number(m),
                number(cv),
                c.seconds(),
                c.failure.as_deref().unwrap_or("")
            );
        }
    }
    let _ = writeln!(md, "\nSeconds: {}.\n", machine());
    md.push_str("## HAMCMC against SGLD in wall time\n\n");
    let labels = [
        format!("hamcmc M={HAMCMC_MEMORY}"),
        format!("hamcmc M={HAMCMC_FULL_MEMORY}"),
    ];
    let _ = writeln!(
        md,
        "Wall time HAMCMC needed to first reach SGLD's final error, divided by SGLD's whole run \
         (the acceptance asks ≤ 0.2 at κ ≥ 10³; `never`: HAMCMC's error never got that low).\n\n\
         | model | κ (x) | mean: {0} | mean: {1} | cov: {0} | cov: {1} | best final mean error | best final cov error |\n\
         |---|---|---|---|---|---|---|---|",
        labels[0], labels[1]
    );
    for p in panels.iter().filter(|p| !p.curves.is_empty()) {
        let best = |covariance: bool| {
            p.curves
                .iter()
                .filter_map(|c| {
                    c.last().map(|q| {
                        let e = if covariance {
                            q.covariance_error
                        } else {
                            q.mean_error
                        };
                        (e, c.label.as_str())
                    })
                })
                .filter(|(e, _)| e.is_finite())
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .map_or("—".to_string(), |(e, n)| format!("{n} {}", number(e)))
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            p.family.name(),
            condition_label(p.condition),
            ratio_text(p.time_ratio_to_sgld(&labels[0], false)),
            ratio_text(p.time_ratio_to_sgld(&labels[1], false)),
            ratio_text(p.time_ratio_to_sgld(&labels[0], true)),
            ratio_text(p.time_ratio_to_sgld(&labels[1], true)),
            best(false),
            best(true)
        );
    }
    md.push_str("\n## Step-size trials (score = mean + cov error after the trial; ∞ = failed)\n\n");
    md.push_str("| model | κ (x) | sampler |");
    for m in GRID {
        let _ = write!(md, " ×{} |", number(m));
    }
    md.push_str("\n|---|---|---|");
    for _ in GRID {
        md.push_str("---|");
    }
    md.push('\n');
    for p in panels {
        for c in &p.curves {
            let _ = write!(
                md,
                "| {} | {} | {} |",
                p.family.name(),
                condition_label(p.condition),
                c.label
            );
            for v in &c.grid_scores {
                let cell = if v.is_finite() {
                    number(*v)
                } else {
                    "∞".into()
                };
                let _ = write!(md, " {cell} |");
            }
            md.push('\n');
        }
    }
    md.push_str("\nReferences: ");
    for p in panels {
        let _ = write!(
            md,
            "{} κ {}: {}; ",
            p.family.name(),
            condition_label(p.condition),
            p.reference
        );
    }
    md.push_str("\n\n");
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` exact draws from N(`mean`, `covariance`).
    fn gaussian_draws(
        mean: &DVector<f64>,
        covariance: &DMatrix<f64>,
        n: usize,
        seed: u64,
    ) -> Vec<[f64; DIMENSION]> {
        let l = covariance.clone().cholesky().unwrap().l();
        let mut rng = XorShiftRng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let z = DVector::from_iterator(DIMENSION, normals(&mut rng));
                let x = mean + &l * z;
                let mut out = [0.0; DIMENSION];
                out.copy_from_slice(x.as_slice());
                out
            })
            .collect()
    }

    fn small_linear() -> (
        LinearGaussianModel<DIMENSION, LINEAR_BATCH>,
        DVector<f64>,
        DMatrix<f64>,
    ) {
        let model = linear_model(2000, 1e3, 5);
        let p = model.posterior();
        let mean = DVector::from_column_slice(&p.mean);
        let cov = DMatrix::from_fn(DIMENSION, DIMENSION, |i, j| p.covariance[i][j]);
        (model, mean, cov)
    }

    /// Exact draws score near 0: with n draws the mean error is the RMS of D
    /// standard normals over √n (≈ 1/√n) and the covariance error ≈
    /// √((D + 1)/n) (off-diagonal entries of the whitened sample covariance
    /// have variance 1/n, diagonal 2/n). The bounds are 3× those Monte-Carlo
    /// scales; the draws shifted by 0.5 sd along every axis must score a mean
    /// error of 0.5 ± the same noise, and scaled by 1.2 a covariance error
    /// near 0.44·√D/√D = 0.44.
    #[test]
    fn errors_are_zero_for_exact_draws_and_see_shifts_and_scales() {
        let (_, mean, cov) = small_linear();
        let reference = Reference::new(mean.clone(), &cov, String::new()).unwrap();
        let n = 20_000;
        let draws = gaussian_draws(&mean, &cov, n, 1);
        let (m, c) = reference.errors(&draws);
        let mc_mean = 1.0 / (n as f64).sqrt();
        let mc_cov = ((DIMENSION as f64 + 1.0) / n as f64).sqrt();
        assert!(m < 3.0 * mc_mean, "mean error {m} for exact draws");
        assert!(c < 3.0 * mc_cov, "covariance error {c} for exact draws");

        // θ + 0.5 L 1: whitened mean off by 0.5 in every coordinate.
        let l = cov.clone().cholesky().unwrap().l();
        let shift = &l * DVector::from_element(DIMENSION, 0.5);
        let shifted: Vec<[f64; DIMENSION]> = draws
            .iter()
            .map(|x| {
                let mut y = *x;
                for i in 0..DIMENSION {
                    y[i] += shift[i];
                }
                y
            })
            .collect();
        let (m, _) = reference.errors(&shifted);
        assert!((m - 0.5).abs() < 3.0 * mc_mean, "shifted mean error {m}");

        // Spread 1.2× around the mean: whitened covariance 1.44 I.
        let scaled: Vec<[f64; DIMENSION]> = draws
            .iter()
            .map(|x| {
                let mut y = *x;
                for i in 0..DIMENSION {
                    y[i] = mean[i] + 1.2 * (x[i] - mean[i]);
                }
                y
            })
            .collect();
        let (_, c) = reference.errors(&scaled);
        assert!(
            (c - 0.44).abs() < 3.0 * 1.44 * mc_cov,
            "scaled covariance error {c}"
        );
    }

    /// On a Gaussian posterior (the linear model) the importance-sampling
    /// reference must recover the exact mean and covariance: errors within
    /// 4× the Monte-Carlo scales of [`errors_are_zero_for_exact_draws_and_see_shifts_and_scales`]
    /// at the weights' ESS (the t proposal is wider than the target, so the
    /// weight ESS is below the number of draws).
    #[test]
    fn importance_reference_recovers_a_gaussian_posterior() {
        let (model, mean, cov) = small_linear();
        let exact = Reference::new(mean.clone(), &cov, String::new()).unwrap();
        let mut mode = [0.0; DIMENSION];
        mode.copy_from_slice(mean.as_slice());
        let (m, c, ess) = importance_reference(&model, &mode, &cov, 20_000, 3).unwrap();
        assert!(ess > 2000.0 && ess <= 20_000.0, "weight ESS {ess}");
        let fake: Vec<[f64; DIMENSION]> = gaussian_draws(&m, &c, 40_000, 9);
        // Score the IS moments through draws from N(m, c): their own noise
        // adds the exact-draw scales at 40 000 draws.
        let (me, ce) = exact.errors(&fake);
        let mc_mean = 1.0 / ess.sqrt() + 1.0 / 200.0;
        let mc_cov = ((DIMENSION as f64 + 1.0) / ess).sqrt() + (11.0f64 / 40_000.0).sqrt();
        assert!(me < 4.0 * mc_mean, "IS mean error {me} (weight ESS {ess})");
        assert!(
            ce < 4.0 * mc_cov,
            "IS covariance error {ce} (weight ESS {ess})"
        );
    }

    #[test]
    fn covariates_have_the_asked_condition_number() {
        let mut rng = XorShiftRng::seed_from_u64(4);
        let x = covariates(50_000, 1e3, &mut rng);
        let mut cov = DMatrix::<f64>::zeros(DIMENSION, DIMENSION);
        for row in &x {
            let v = DVector::from_column_slice(row);
            cov += &v * v.transpose() / x.len() as f64;
        }
        let e = SymmetricEigen::new(cov).eigenvalues;
        let (lo, hi) = e.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
        // Sample eigenvalues of 50 000 draws: within a few % of 1 and 1e-3.
        assert!((hi - 1.0).abs() < 0.05, "largest {hi}");
        assert!((lo / 1e-3 - 1.0).abs() < 0.05, "smallest {lo}");
    }
}
