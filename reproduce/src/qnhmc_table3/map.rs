//! MAP for Table 3's first row, as the demo code the paper follows fits
//! PMF before its sampler: L-BFGS ([`qnmc::lbfgs::minimize`]) on the
//! factors U and V with the hyperparameters held at the Wishart prior's
//! mean (μ = 0, λ = ν₀w₀ = K), then each hyperparameter set to its
//! conditional mode given those factors.
//!
//! Why not the joint mode: a hierarchical posterior's joint mode is where
//! the factors collapse onto their mean and the precisions grow to ~n: a
//! fit that predicts no better than the training mean, and a point no
//! sampler should start from (measured in
//! `docs/journal/2026-11-29-qnhmc-table3-map.md`).
//!
//! The core's minimiser keeps its vectors (seven of D entries) on the
//! stack, and the model's storage is D = 2²⁰ (8 MiB per vector in f64), so
//! it runs on a thread of its own with a stack large enough for them; its
//! memory of pairs is allocated zeroed on the heap and told the model's
//! dimension, so the two-loop recursion costs what n costs.

use std::time::Instant;

use qnmc::Potential;
use qnmc::in_place::zeroed_box;
use qnmc::lbfgs::{InitialScaling, LbfgsMemory, LbfgsSettings, minimize};

use qnmc_host::model::{Model, PaddedModel};
use qnmc_host::run::LARGE_DIMENSION;
use qnmc_host::targets::{BayesianPmf, Hyper};

/// Pairs of the minimiser's memory.
pub const MAP_MEMORY: usize = 10;

/// Stack of the minimiser's thread: its vectors and outcome (≈ 9 × 8 MiB)
/// with room to spare.
const STACK_BYTES: usize = 256 << 20;

/// Where L-BFGS stopped, and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct MapFit {
    /// The model's coordinates at the fit (length n), hyperparameters at
    /// their conditional mode.
    pub position: Vec<f64>,
    /// U there.
    pub potential: f64,
    /// Accepted L-BFGS iterations.
    pub iterations: u32,
    /// Gradient evaluations, line-search trials included.
    pub gradients: u32,
    /// Whether the relative decrease fell below the tolerance.
    pub converged: bool,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// U with the hyperparameters held: their gradient entries are zeroed, so
/// L-BFGS moves the factors only.
struct FactorsOnly<'a> {
    target: &'a PaddedModel<'a, LARGE_DIMENSION>,
    /// The first hyperparameter coordinate, (I + J)·K.
    factors: usize,
    /// The model's dimension.
    n: usize,
}

impl Potential<f64, LARGE_DIMENSION> for FactorsOnly<'_> {
    fn potential_and_gradient(
        &self,
        x: &[f64; LARGE_DIMENSION],
        gradient: &mut [f64; LARGE_DIMENSION],
    ) -> f64 {
        let u = self.target.potential_and_gradient(x, gradient);
        gradient[self.factors..self.n].fill(0.0);
        u
    }
}

/// Sets μ and log λ of both sides to their mode given the factors in `x`:
/// μ_k = Σ_i F_ik / (n + β₀) and λ_k = (n/2 + 1/2 + a₀) / (S_k/2 +
/// β₀μ_k²/2 + b₀), S_k = Σ_i (F_ik − μ_k)² (where ∂U/∂μ_k and ∂U/∂log λ_k
/// vanish; `BayesianPmf`'s documentation gives U).
pub fn hyperparameters_at_conditional_mode(model: &BayesianPmf, x: &mut [f64]) {
    let k = model.rank();
    let (a0, b0) = model.precision_prior();
    let beta0 = model.mean_prior_strength();
    let ratings = model.ratings();
    let sides = [
        (ratings.users(), 0, Hyper::MuU, Hyper::LogLambdaU),
        (
            ratings.items(),
            ratings.users() * k,
            Hyper::MuV,
            Hyper::LogLambdaV,
        ),
    ];
    for (count, first, mu_block, theta_block) in sides {
        for d in 0..k {
            let column = (0..count).map(|i| x[first + i * k + d]);
            let mu = column.clone().sum::<f64>() / (count as f64 + beta0);
            let s: f64 = column.map(|f| (f - mu) * (f - mu)).sum();
            let lambda = (0.5 * count as f64 + 0.5 + a0) / (0.5 * s + 0.5 * beta0 * mu * mu + b0);
            x[model.hyper_index(mu_block, d)] = mu;
            x[model.hyper_index(theta_block, d)] = lambda.ln();
        }
    }
}

/// The MAP fit of the factors from the model's initial point (whose
/// hyperparameters are the prior's mean) for at most `max_iterations`
/// L-BFGS iterations, then the hyperparameters' conditional mode. Fails
/// with why when U or ∇U is not finite at the start or the thread cannot be
/// made.
pub fn map_estimate(
    model: &BayesianPmf,
    target: &PaddedModel<'_, LARGE_DIMENSION>,
    max_iterations: u32,
    relative_tolerance: f64,
) -> Result<MapFit, String> {
    const D: usize = LARGE_DIMENSION;
    let start = model.initial_point();
    let n = start.len();
    let factors = FactorsOnly {
        target,
        factors: model.hyper_index(Hyper::MuU, 0),
        n,
    };
    let mut memory = zeroed_box::<LbfgsMemory<f64, D, MAP_MEMORY>>();
    let mut settings = LbfgsSettings::with_max_pairs(MAP_MEMORY);
    settings.scaling = InitialScaling::NewestPair(1.0);
    memory.reset(settings).map_err(|e| e.to_string())?;
    memory.set_dimension(n).map_err(|e| e.to_string())?;
    let clock = Instant::now();
    let mut fit = std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("qnhmc-table3 MAP".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, || {
                let mut x = vec![0.0; D].into_boxed_slice();
                x[..n].copy_from_slice(&start);
                let x: Box<[f64; D]> = x.try_into().expect("the slice has D entries");
                let outcome = minimize(
                    &factors,
                    &x,
                    &mut memory,
                    max_iterations,
                    relative_tolerance,
                )
                .ok_or("U or its gradient is not finite at the start")?;
                Ok::<_, String>(MapFit {
                    position: outcome.position[..n].to_vec(),
                    potential: outcome.potential,
                    iterations: outcome.iterations,
                    gradients: outcome.gradient_evaluations,
                    converged: outcome.converged,
                    seconds: 0.0,
                })
            })
            .map_err(|e| format!("no thread for MAP: {e}"))?;
        worker
            .join()
            .unwrap_or_else(|_| Err("the MAP thread panicked".into()))
    })?;
    hyperparameters_at_conditional_mode(model, &mut fit.position);
    let mut gradient = vec![0.0; n];
    fit.potential = model.potential_and_gradient(&fit.position, &mut gradient);
    fit.seconds = clock.elapsed().as_secs_f64();
    Ok(fit)
}
