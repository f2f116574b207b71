//! Default settings of the stochastic-gradient samplers from a pilot.
//!
//! A sampler without a Metropolis test (HAMCMC, SGLD, pSGLD, SGRLD, SGHMC,
//! SGNHT, SGRHMC) is biased by its step size, and a constant default step
//! cannot suit both a 270-row and a 200 000-row data set. When `--step-size`
//! is not given and the target's stochastic gradient is a minibatch of its
//! data or the exact gradient (ν = 0 below), the run first spends a pilot on
//! the full-data U:
//!
//! 1. the mode, by L-BFGS ([`qnmc::lbfgs::minimize`]), and
//! 2. the Hessian A there, by central differences of ∇U (2n gradients),
//!
//! and derives the sampler's settings from A, from the minibatch noise
//! ν = N/b − 1 (the minibatch gradient scaled to the full data has covariance
//! ≈ ν·A near the mode when the data terms dominate A) and from a variance
//! budget β = [`SG_VARIANCE_BUDGET`]:
//!
//! ```text
//! Langevin  θ ← θ − εP∇Ũ + N(0, 2εP)   (SGLD P = I, SGRLD P = G⁻¹, pSGLD P ≈ its RMSprop preconditioner)
//!   with μ the eigenvalues of P^½ A P^½, the stationary variance along an
//!   eigenvector is inflated by ≈ ε μ (1 + ν) / 2 (discretisation ε μ / 2,
//!   minibatch noise ε μ ν / 2), so  ε = 2β / ((1 + ν) μ_max),
//!   and the slowest direction relaxes in τ = 1 / (ε μ_min) iterations.
//! HAMCMC    H ≈ A⁻¹ on the memory's span and γI off it: γ = 1 / λ_max(A)
//!   keeps μ ≤ 1 off the span. Its pairs come from minibatch gradients, so on
//!   the span H is a noisy A⁻¹ and μ reaches ≈ 2: ε = β / (1 + ν), half the
//!   Langevin value (measured on logreg-heart: at 2β/(1 + ν) the sds were
//!   5–13% too wide, at β/(1 + ν) 1–7%). Its step starts from the draw M
//!   iterations back, and its memory spans only some of the slow
//!   directions: τ = M / (2ε √μ_min) with μ_min = γλ_min, the 2 for the
//!   span's μ ≈ 2 (measured bulk ESS ≈ 1 per draw at a thinning of 2τ on
//!   logreg-heart, κ = 6, on logreg-german, κ = 15, and on a 10⁵-row CSV,
//!   κ = 2; R̂ 1.055 on logreg-german with a thinning of M/(2ε) that ignores κ).
//! SGHMC, SGNHT   friction C = √λ_max (critical damping of the stiffest
//!   direction), ε = 2βC / ((1 + ν) λ_max); the slow direction is overdamped
//!   and relaxes in τ = C / (ε λ_min) iterations.
//! SGRHMC   its friction is its metric, G⁻¹ = t / diag(A), with t chosen so
//!   that the friction damps the stiffest direction critically in the
//!   whitened coordinates diag(A)^½ θ; ε from the same budget.
//! ```
//!
//! Thinning keeps one draw per τ/2 iterations (at most [`MAX_AUTO_THIN`]) and
//! the warm-up lasts 10τ iterations (at least 1000, at most
//! [`MAX_AUTO_WARMUP`]), unless `--thin` / `--warmup` say otherwise. SGRLD's
//! metric is G = diag(A) (the observed Fisher information plus the prior's
//! curvature at the mode), so SGRLD is not SGLD with G = I.
//!
//! The chains start at the mode plus uniform(−r, r) Laplace sds √(A⁻¹)ᵢᵢ per
//! coordinate (r = `--init-radius`): overdispersed for R̂, and where the step
//! size holds (from Stan's uniform(−2, 2) starts HAMCMC's first steps on arK
//! overshot to non-finite points and the chains never moved).
//!
//! The pilot refuses (an error naming `--step-size`) when the mode or a
//! positive-definite Hessian cannot be found: its formulas would then be
//! wrong, and a guessed step size would look fine while being biased.

use std::fmt;

use nalgebra::{DMatrix, SymmetricEigen};
use qnmc::Potential;
use qnmc::lbfgs::{InitialScaling, LbfgsMemory, LbfgsSettings, minimize};

use super::dispatch::{padded_dimension, with_dimension};
use super::{RunSettings, SamplerKind};
use crate::model::{Model, PaddedModel};

/// β: the largest relative inflation of the stationary variance (along the
/// stiffest direction) the derived step size allows, 0.1 (posterior sds about
/// 5% too wide there; less elsewhere).
pub const SG_VARIANCE_BUDGET: f64 = 0.1;
/// Largest thinning the pilot chooses.
pub const MAX_AUTO_THIN: usize = 1000;
/// Longest warm-up (iterations) the pilot chooses.
pub const MAX_AUTO_WARMUP: usize = 1_000_000;
/// L-BFGS iterations of the pilot's mode search.
const MODE_ITERATIONS: u32 = 1000;

/// The full-data U at its mode: where, its Hessian, and what it cost.
#[derive(Debug, Clone)]
pub struct Curvature {
    /// The mode (the model's n coordinates).
    pub mode: Vec<f64>,
    /// Symmetrised finite-difference Hessian of U at the mode, n × n.
    pub hessian: DMatrix<f64>,
    /// Full-data gradient evaluations spent.
    pub gradient_evaluations: usize,
}

/// What the pilot chose for a stochastic-gradient sampler, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct SgDefaults {
    /// Step size ε.
    pub step_size: f64,
    /// Thinning (kept iteration every `thin`): the pilot's choice, or the
    /// one the user gave ([`apply_pilot`] records what the run uses).
    pub thin: usize,
    /// Warm-up iterations (chosen or given, as [`thin`](Self::thin)).
    pub warmup: usize,
    /// HAMCMC's γ.
    pub gamma: Option<f64>,
    /// SGHMC's C, SGNHT's A.
    pub friction: Option<f64>,
    /// SGRLD's / SGRHMC's constant G⁻¹ (diagonal, n entries).
    pub inverse_metric: Option<Vec<f64>>,
    /// Minibatch noise factor ν = N/b − 1.
    pub noise_factor: f64,
    /// Largest and smallest eigenvalue of the preconditioned Hessian.
    pub stiffest: f64,
    /// See [`stiffest`](Self::stiffest).
    pub slowest: f64,
    /// Iterations the slowest direction needs to relax by a factor e.
    pub relaxation_iterations: f64,
    /// Full-data gradient evaluations the pilot spent.
    pub gradient_evaluations: usize,
    /// The mode, where the chains start (plus `--init-radius` Laplace sds).
    pub mode: Vec<f64>,
    /// Laplace sds √(A⁻¹)ᵢᵢ at the mode.
    pub posterior_sd: Vec<f64>,
}

impl fmt::Display for SgDefaults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "step size {:.3e} (variance budget {SG_VARIANCE_BUDGET}, minibatch noise N/b-1 = {:.1}, preconditioned curvature {:.3e}..{:.3e}), thin {}, warm-up {}",
            self.step_size, self.noise_factor, self.slowest, self.stiffest, self.thin, self.warmup
        )?;
        if let Some(g) = self.gamma {
            write!(f, ", gamma {g:.3e}")?;
        }
        if let Some(c) = self.friction {
            write!(f, ", friction {c:.3e}")?;
        }
        if self.inverse_metric.is_some() {
            write!(f, ", metric G = diag(Hessian at the mode)")?;
        }
        write!(
            f,
            "; pilot: {} full-data gradients",
            self.gradient_evaluations
        )
    }
}

impl SgDefaults {
    /// Why the chosen run cannot mix, when the slowest direction relaxes
    /// slower than the largest thinning covers (τ / 2 > [`MAX_AUTO_THIN`]):
    /// a posterior too ill-conditioned for this sampler.
    pub fn too_slow_warning(&self) -> Option<String> {
        (self.relaxation_iterations / 2.0 > MAX_AUTO_THIN as f64).then(|| {
            format!(
                "the slowest direction needs about {:.0} iterations to relax (preconditioned curvature {:.3e}..{:.3e}), more than a thinning of {MAX_AUTO_THIN} covers: expect R-hat > 1.01; use a preconditioned sampler (nuts, sgrld, hamcmc) or give --thin",
                self.relaxation_iterations, self.slowest, self.stiffest
            )
        })
    }
}

/// What a sampler's pilot rule ([`SamplerEntry::pilot`](crate::run::SamplerEntry::pilot))
/// reads: the Hessian A at the mode, the minibatch noise and the user's
/// settings.
pub struct PilotInputs<'a> {
    /// A, n × n.
    pub hessian: &'a DMatrix<f64>,
    /// Its diagonal.
    pub diagonal: &'a [f64],
    /// Minibatch noise factor ν = N/b − 1.
    pub nu: f64,
    /// The variance budget β ([`SG_VARIANCE_BUDGET`]).
    pub beta: f64,
    /// Smallest eigenvalue of A.
    pub lambda_min: f64,
    /// Largest eigenvalue of A.
    pub lambda_max: f64,
    /// The sampler's memory (HAMCMC).
    pub memory: usize,
    /// The user's friction (SGHMC, SGNHT), if given.
    pub friction: Option<f64>,
    /// The user's γ (HAMCMC), if given.
    pub gamma: Option<f64>,
}

impl PilotInputs<'_> {
    /// n.
    pub fn dimension(&self) -> usize {
        self.hessian.nrows()
    }

    /// The extreme eigenvalues of P^½ A P^½ for a diagonal P.
    pub fn eigenvalue_range(&self, p: &[f64]) -> Result<(f64, f64), String> {
        extreme_eigenvalues(&precondition(self.hessian, p))
    }

    /// A Langevin sampler's choice with preconditioner P (the module docs):
    /// ε = 2β / ((1 + ν) μ_max), τ = 1 / (ε μ_min).
    pub fn langevin(&self, out: &mut SgDefaults, p: &[f64]) -> Result<(), String> {
        let (lo, hi) = self.eigenvalue_range(p)?;
        out.stiffest = hi;
        out.slowest = lo;
        out.step_size = 2.0 * self.beta / ((1.0 + self.nu) * hi);
        out.relaxation_iterations = 1.0 / (out.step_size * lo);
        Ok(())
    }
}

/// How the pilot sets one sampler's step size and tuning from A
/// ([`PilotInputs`]), writing into the defaults it starts from.
pub type PilotRule = fn(&PilotInputs<'_>, &mut SgDefaults) -> Result<(), String>;

/// `true` for the samplers whose defaults come from the pilot (no
/// Metropolis test, minibatch gradients).
pub fn uses_pilot(kind: SamplerKind) -> bool {
    kind.entry().pilot.is_some()
}

/// The largest model the pilot measures (its dense Hessian and eigenproblem;
/// the largest compile-time size of [`DIMENSIONS`](super::DIMENSIONS)).
pub const MAX_PILOT_DIMENSION: usize = 1000;

/// The mode of the full-data U by L-BFGS from the model's initial point, and
/// the Hessian there by central differences.
///
/// The Hessian is dense (n × n, 2n gradients, an O(n³) eigenproblem): the
/// pilot stops at [`MAX_PILOT_DIMENSION`] coordinates and refuses larger
/// models, whose step size the user gives.
pub fn curvature_at_mode(model: &dyn Model) -> Result<Curvature, String> {
    let n = model.dimension();
    if n > MAX_PILOT_DIMENSION {
        return Err(format!(
            "the pilot measures a dense {n} × {n} Hessian, and stops at {MAX_PILOT_DIMENSION} coordinates"
        ));
    }
    let d = padded_dimension(n).map_err(|e| e.to_string())?;
    with_dimension!(
        d,
        |D| {
            let target = PaddedModel::<D>::new(model).map_err(|e| e.to_string())?;
            curvature_of_potential(&target, &target.initial_point(), n)
        },
        Err(format!("no dimension {d} compiled"))
    )
}

/// [`curvature_at_mode`] for a core target: the mode of `target` by L-BFGS
/// from `start`, and the Hessian of its first `n` coordinates (the others,
/// padding, held at the mode) by central differences of the gradient.
pub fn curvature_of_potential<const D: usize, P: Potential<f64, D>>(
    target: &P,
    start: &[f64; D],
    n: usize,
) -> Result<Curvature, String> {
    let n = n.min(D);
    let mut settings = LbfgsSettings::with_max_pairs(10);
    settings.scaling = InitialScaling::NewestPair(1.0);
    let mut memory = Box::new(LbfgsMemory::<f64, D, 10>::new(settings).map_err(|e| e.to_string())?);
    let outcome = minimize(target, start, &mut memory, MODE_ITERATIONS, 1e-13)
        .ok_or("U or its gradient is not finite at the initial point")?;
    let mode = outcome.position;
    let mut evaluations = outcome.gradient_evaluations as usize;
    let mut hessian = DMatrix::<f64>::zeros(n, n);
    let mut x = mode;
    let (mut plus, mut minus) = ([0.0; D], [0.0; D]);
    for j in 0..n {
        let h = 1e-5 * mode[j].abs().max(1.0);
        x[j] = mode[j] + h;
        target.potential_and_gradient(&x, &mut plus);
        x[j] = mode[j] - h;
        target.potential_and_gradient(&x, &mut minus);
        x[j] = mode[j];
        evaluations += 2;
        for i in 0..n {
            hessian[(i, j)] = (plus[i] - minus[i]) / (2.0 * h);
        }
    }
    let hessian = (&hessian + hessian.transpose()) * 0.5;
    if hessian.iter().any(|v| !v.is_finite()) {
        return Err("the Hessian at the mode is not finite".into());
    }
    Ok(Curvature {
        mode: mode[..n].to_vec(),
        hessian,
        gradient_evaluations: evaluations,
    })
}

/// Eigenvalues (ascending ends) of the symmetric `m`, or why they are unusable.
fn extreme_eigenvalues(m: &DMatrix<f64>) -> Result<(f64, f64), String> {
    let eigen = SymmetricEigen::new(m.clone());
    let lo = eigen
        .eigenvalues
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    let hi = eigen
        .eigenvalues
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    if !(lo.is_finite() && hi.is_finite() && lo > 0.0) {
        return Err(format!(
            "the Hessian at the mode is not positive definite (eigenvalues {lo:.3e}..{hi:.3e}): the posterior is not locally Gaussian there"
        ));
    }
    Ok((lo, hi))
}

/// √(A⁻¹)ᵢᵢ for a positive-definite A.
fn laplace_sds(a: &DMatrix<f64>) -> Result<Vec<f64>, String> {
    let inverse = a
        .clone()
        .cholesky()
        .ok_or("the Hessian at the mode has no Cholesky factor")?
        .inverse();
    Ok((0..a.nrows()).map(|i| inverse[(i, i)].sqrt()).collect())
}

/// P^½ A P^½ for a diagonal P.
fn precondition(a: &DMatrix<f64>, p: &[f64]) -> DMatrix<f64> {
    DMatrix::from_fn(a.nrows(), a.ncols(), |i, j| {
        a[(i, j)] * (p[i] * p[j]).sqrt()
    })
}

/// The settings `kind` gets from `curvature` on a target with `data_size`
/// points and minibatches of `batch_size`, memory `memory` (HAMCMC), with
/// `friction` the user's (SGHMC, SGNHT) and `gamma` the user's (HAMCMC) if
/// given.
pub fn sg_defaults(
    kind: SamplerKind,
    curvature: &Curvature,
    data_size: usize,
    batch_size: usize,
    memory: usize,
    friction: Option<f64>,
    gamma: Option<f64>,
) -> Result<SgDefaults, String> {
    let a = &curvature.hessian;
    let n = a.nrows();
    let beta = SG_VARIANCE_BUDGET;
    let nu = (data_size as f64 / batch_size.max(1) as f64 - 1.0).max(0.0);
    let (lambda_min, lambda_max) = extreme_eigenvalues(a)?;
    let diagonal: Vec<f64> = (0..n).map(|i| a[(i, i)]).collect();
    let mut out = SgDefaults {
        step_size: f64::NAN,
        thin: 1,
        warmup: 1000,
        gamma: None,
        friction: None,
        inverse_metric: None,
        noise_factor: nu,
        stiffest: lambda_max,
        slowest: lambda_min,
        relaxation_iterations: f64::NAN,
        gradient_evaluations: curvature.gradient_evaluations,
        mode: curvature.mode.clone(),
        posterior_sd: laplace_sds(a)?,
    };
    let rule = kind
        .entry()
        .pilot
        .ok_or_else(|| format!("internal: {kind} takes no pilot"))?;
    let inputs = PilotInputs {
        hessian: a,
        diagonal: &diagonal,
        nu,
        beta,
        lambda_min,
        lambda_max,
        memory,
        friction,
        gamma,
    };
    rule(&inputs, &mut out)?;
    let tau = out.relaxation_iterations;
    if !(out.step_size.is_finite() && out.step_size > 0.0 && tau.is_finite()) {
        return Err("the pilot's step size is not finite".into());
    }
    out.thin = ((tau / 2.0).ceil() as usize).clamp(1, MAX_AUTO_THIN);
    out.warmup = ((10.0 * tau).ceil() as usize).clamp(1000, MAX_AUTO_WARMUP);
    Ok(out)
}

/// Whether the pilot may set the warm-up and the thinning (they were not
/// given on the command line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PilotLengths {
    /// The pilot may choose the warm-up.
    pub warmup: bool,
    /// The pilot may choose the thinning.
    pub thin: bool,
}

/// Runs the pilot when `kind` takes one, the step size is not given and the
/// model's stochastic gradient is a minibatch or exact (not injected noise
/// of unknown form: the papers' toy targets keep their fixed defaults), and
/// writes its choices into `settings` (step size, γ,
/// friction, metric; warm-up and thinning where `lengths` allows). Returns
/// what it chose, `None` when no pilot applies.
pub fn apply_pilot(
    model: &dyn Model,
    kind: SamplerKind,
    settings: &mut RunSettings,
    lengths: PilotLengths,
) -> Result<Option<SgDefaults>, String> {
    if !uses_pilot(kind) || settings.step_size.is_some() {
        return Ok(None);
    }
    // (N, b): ν = N/b − 1; an exact gradient is ν = 0 (N = b = 1).
    let (data_size, batch_size) = match model.data_size() {
        Some(n) => (n, settings.batch_size_for(Some(n))),
        None if model.stochastic_gradient_is_exact() => (1, 1),
        None => return Ok(None),
    };
    let refuse = |why: String| {
        format!(
            "{kind} has no default step size for {}: {why}. Give --step-size (and check the answer against a run at half of it)",
            model.name()
        )
    };
    let curvature = curvature_at_mode(model).map_err(refuse)?;
    let friction = if kind.takes_option("friction") {
        settings.friction
    } else {
        None
    };
    let chosen = sg_defaults(
        kind,
        &curvature,
        data_size,
        batch_size,
        settings.memory_for(kind),
        friction,
        match settings.gamma {
            Some(InitialScaling::Fixed(g)) => Some(g),
            _ => None,
        },
    )
    .map_err(refuse)?;
    settings.step_size = Some(chosen.step_size);
    if let Some(g) = chosen.gamma {
        if settings.gamma.is_none() {
            settings.gamma = Some(InitialScaling::Fixed(g));
        }
    }
    if chosen.friction.is_some() {
        settings.friction = chosen.friction;
    }
    let mut chosen = chosen;
    // What the run uses: the pilot's lengths, or the ones the user gave
    // (so the printed line and the CSV header never name lengths the run
    // did not use).
    if lengths.warmup {
        settings.warmup = chosen.warmup;
    } else {
        chosen.warmup = settings.warmup;
    }
    if lengths.thin {
        settings.thin = chosen.thin;
    } else {
        chosen.thin = settings.thin;
    }
    settings.pilot = Some(chosen.clone());
    Ok(Some(chosen))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::check::{SG_BIAS_TOLERANCE, check_with_tolerance};
    use crate::run::{Progress, run};

    // U = Σ (xᵢ − μᵢ)² / (2σᵢ²) in 9-D: mode μ, Hessian diag(1/σ²), exact
    // gradient, the runner tests' model.
    use crate::run::tests::{Diagonal, N, mu, sigma};

    /// U = x₀²/2: x₁ is not identified, the Hessian is singular.
    struct Flat;
    impl Model for Flat {
        fn name(&self) -> String {
            "flat".into()
        }
        fn dimension(&self) -> usize {
            2
        }
        fn potential_and_gradient(&self, x: &[f64], g: &mut [f64]) -> f64 {
            g[0] = x[0];
            g[1] = 0.0;
            0.5 * x[0] * x[0]
        }
    }

    #[test]
    fn the_mode_and_hessian_of_a_quadratic_are_found() {
        // The gradient is linear, so central differences are exact up to
        // round-off: |g| · 1e-16 / h with h = 1e-5, below 1e-8 here.
        let c = curvature_at_mode(&Diagonal).unwrap();
        for i in 0..N {
            assert!((c.mode[i] - mu(i)).abs() < 1e-6, "{:?}", c.mode);
            for j in 0..N {
                let exact = if i == j { sigma(i).powi(-2) } else { 0.0 };
                assert!(
                    (c.hessian[(i, j)] - exact).abs() < 1e-8 * exact.max(1.0),
                    "H[{i},{j}] = {}",
                    c.hessian[(i, j)]
                );
            }
        }
        assert!(c.gradient_evaluations > 2 * N);
    }

    /// The formulas of the module docs, on A = diag(1/σ²): λmax = 1/σ₀²,
    /// λmin = 1/σ₈², κ = (σ₈/σ₀)² = 9.
    #[test]
    fn step_sizes_follow_the_variance_budget() {
        let c = curvature_at_mode(&Diagonal).unwrap();
        let (l_max, l_min) = (sigma(0).powi(-2), sigma(N - 1).powi(-2));
        let rel = |a: f64, b: f64| (a - b).abs() / b;
        let beta = SG_VARIANCE_BUDGET;
        // Exact gradient (ν = 0) and a minibatch of 100 of 1000 (ν = 9).
        for (n, b, nu) in [(1, 1, 0.0), (1000, 100, 9.0)] {
            let sgld = sg_defaults(SamplerKind::Sgld, &c, n, b, 5, None, None).unwrap();
            assert!(rel(sgld.step_size, 2.0 * beta / ((1.0 + nu) * l_max)) < 1e-6);
            assert!(rel(sgld.relaxation_iterations, 1.0 / (sgld.step_size * l_min)) < 1e-6);
            assert_eq!(sgld.noise_factor, nu);
            // SGRLD's G = diag(A) whitens a diagonal posterior: μ = 1.
            let sgrld = sg_defaults(SamplerKind::Sgrld, &c, n, b, 5, None, None).unwrap();
            assert!(rel(sgrld.step_size, 2.0 * beta / (1.0 + nu)) < 1e-6);
            let metric = sgrld.inverse_metric.clone().unwrap();
            for (i, g) in metric.iter().enumerate() {
                assert!(rel(*g, sigma(i).powi(2)) < 1e-6);
            }
            let ham = sg_defaults(SamplerKind::Hamcmc, &c, n, b, 5, None, None).unwrap();
            assert!(rel(ham.gamma.unwrap(), 1.0 / l_max) < 1e-6);
            assert!(rel(ham.step_size, beta / (1.0 + nu)) < 1e-6);
            let sghmc = sg_defaults(SamplerKind::Sghmc, &c, n, b, 5, None, None).unwrap();
            assert!(rel(sghmc.friction.unwrap(), l_max.sqrt()) < 1e-6);
            assert!(rel(sghmc.step_size, 2.0 * beta / ((1.0 + nu) * l_max.sqrt())) < 1e-6);
            for d in [&sgld, &sgrld, &ham, &sghmc] {
                assert!((1..=MAX_AUTO_THIN).contains(&d.thin));
                assert!((1000..=MAX_AUTO_WARMUP).contains(&d.warmup));
            }
        }
        // The user's friction and γ are kept.
        let sghmc = sg_defaults(SamplerKind::Sghmc, &c, 1, 1, 5, Some(2.0), None).unwrap();
        assert_eq!(sghmc.friction, Some(2.0));
        let ham = sg_defaults(SamplerKind::Hamcmc, &c, 1, 1, 5, None, Some(1.0)).unwrap();
        assert_eq!(ham.gamma, Some(1.0));
        assert!(
            rel(ham.step_size, beta / l_max) < 1e-6,
            "γλmax = {l_max} > 1"
        );
    }

    /// κ = 10⁶: SGLD's slowest direction needs τ = κ / (2β) = 5·10⁶
    /// iterations, far beyond the largest thinning, and says so; SGRLD's
    /// diagonal metric whitens this (diagonal) posterior and does not warn.
    #[test]
    fn an_ill_conditioned_posterior_is_flagged() {
        let c = Curvature {
            mode: vec![0.0; 2],
            hessian: DMatrix::from_diagonal(&nalgebra::DVector::from_vec(vec![1.0, 1e6])),
            gradient_evaluations: 0,
        };
        let sgld = sg_defaults(SamplerKind::Sgld, &c, 1, 1, 5, None, None).unwrap();
        assert_eq!(sgld.thin, MAX_AUTO_THIN);
        let w = sgld.too_slow_warning().unwrap();
        assert!(w.contains("expect R-hat > 1.01"), "{w}");
        let sgrld = sg_defaults(SamplerKind::Sgrld, &c, 1, 1, 5, None, None).unwrap();
        assert_eq!(sgrld.too_slow_warning(), None);
        assert!(curvature_at_mode(&Diagonal).is_ok());
    }

    #[test]
    fn a_singular_hessian_is_refused_with_the_option_to_give() {
        let mut s = RunSettings::default();
        let e = apply_pilot(&Flat, SamplerKind::Sgld, &mut s, PilotLengths::default()).unwrap_err();
        assert!(e.contains("not positive definite"), "{e}");
        assert!(e.contains("--step-size"), "{e}");
        assert_eq!(s, RunSettings::default(), "settings left alone");
    }

    #[test]
    fn no_pilot_for_exact_samplers_or_a_given_step_size() {
        let mut s = RunSettings::default();
        let l = PilotLengths {
            warmup: true,
            thin: true,
        };
        assert_eq!(
            apply_pilot(&Diagonal, SamplerKind::Nuts, &mut s, l),
            Ok(None)
        );
        s.step_size = Some(0.01);
        assert_eq!(
            apply_pilot(&Diagonal, SamplerKind::Sgld, &mut s, l),
            Ok(None)
        );
        assert_eq!(s.thin, 1);
        // Lengths the user gave are kept.
        let mut s = RunSettings::default();
        let chosen = apply_pilot(
            &Diagonal,
            SamplerKind::Sgld,
            &mut s,
            PilotLengths::default(),
        )
        .unwrap()
        .unwrap();
        assert_eq!((s.warmup, s.thin), (1000, 1));
        assert_eq!(s.step_size, Some(chosen.step_size));
        assert_eq!(s.pilot.as_ref(), Some(&chosen));
        // ... and what the pilot reports (printed, and in the CSV header) is
        // what the run uses, not the lengths it would have chosen.
        let mut s = RunSettings {
            warmup: 33,
            thin: 7,
            ..RunSettings::default()
        };
        let chosen = apply_pilot(
            &Diagonal,
            SamplerKind::Sgld,
            &mut s,
            PilotLengths::default(),
        )
        .unwrap()
        .unwrap();
        assert_eq!((s.warmup, s.thin), (33, 7));
        assert_eq!((chosen.warmup, chosen.thin), (33, 7));
        let chosen_alone = apply_pilot(
            &Diagonal,
            SamplerKind::Sgld,
            &mut RunSettings::default(),
            PilotLengths {
                warmup: true,
                thin: true,
            },
        )
        .unwrap()
        .unwrap();
        assert_ne!((chosen_alone.warmup, chosen_alone.thin), (33, 7));
    }

    /// Every sampler without a Metropolis test, with the pilot's settings,
    /// is within [`SG_BIAS_TOLERANCE`] of the exact posterior (0.1 sd on
    /// means, 10% on sds, beyond which the z-scores with the MCSE apply at
    /// family-wise level 0.001) and has R̂ < 1.05: 7 samplers × 18 z-scores.
    #[test]
    fn pilot_defaults_pass_the_bias_tolerant_check() {
        for kind in SamplerKind::ALL.into_iter().filter(|k| uses_pilot(*k)) {
            let mut s = RunSettings {
                draws: 500,
                seed: 11,
                ..RunSettings::default()
            };
            let lengths = PilotLengths {
                warmup: true,
                thin: true,
            };
            apply_pilot(&Diagonal, kind, &mut s, lengths)
                .unwrap()
                .unwrap();
            let draws = run(&Diagonal, kind, &s, &Progress::hidden()).unwrap();
            let report = check_with_tolerance(
                &draws,
                &Diagonal.known_posterior().unwrap(),
                Some(SG_BIAS_TOLERANCE),
            );
            assert!(report.passed(), "{kind}:\n{}", report.table());
        }
    }
}
