//! The runs behind `amagold-fig4`: the reference posterior mean of each data
//! set (a long full-batch HMC run), and one chain per (data set, sampler, ε,
//! repeat) whose running posterior-mean estimate is scored by its mean squared
//! error against that reference at log-spaced checkpoints, with the sampling
//! time so far (panels (c, d) of Fig. 4 are read off these curves).

use std::time::{Duration, Instant};

use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use super::super::amagold_common::{Chain, Kind};
use qnmc_host::model::Model;
use qnmc_host::run::{Progress, ReferenceSettings, reference_posterior};
use qnmc_host::targets::{LogisticRegression, LogisticRegressionModel, LogregDataset};

/// The data set's model with a compile-time dimension `D` and minibatch size
/// `B`: the built-in data, standardised covariates, intercept first, prior
/// N(0, 100·I) (the same arithmetic as the command line's
/// `logreg-australian` / `logreg-heart`).
///
/// # Panics
/// If `D` is not the data set's dimension (a programming error).
pub fn model<const D: usize, const B: usize>(dataset: LogregDataset) -> LogisticRegression<D, B> {
    let m = LogisticRegressionModel::builtin(dataset).expect("Australian and Heart are built in");
    assert_eq!(m.dimension(), D, "dimension of {dataset}");
    let design = (0..m.len())
        .map(|n| {
            let mut x = [0.0; D];
            x.copy_from_slice(m.design_row(n));
            x
        })
        .collect();
    LogisticRegression::new(design, m.labels().to_vec(), m.prior_variance())
}

/// The "true" parameters: the posterior mean from a long full-batch HMC run.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// Posterior mean of each coefficient.
    pub mean: Vec<f64>,
    /// Posterior standard deviation of each coefficient.
    pub sd: Vec<f64>,
    /// Monte-Carlo standard error of each mean.
    pub mcse: Vec<f64>,
    /// Kept draws in all (chains × draws).
    pub draws: usize,
    /// Wall-clock seconds of the reference run.
    pub seconds: f64,
}

impl Reference {
    /// The reference's own error floor in the MSE: mean over coordinates of
    /// MCSE² (what an exact estimate would still score against it).
    pub fn mse_floor(&self) -> f64 {
        self.mcse.iter().map(|s| s * s).sum::<f64>() / self.mcse.len() as f64
    }
}

/// The reference posterior of `dataset` ([`reference_posterior`]: HMC with
/// L = 10 and dual averaging, 4 chains × `draws` after min(1000, `draws`)
/// warm-up).
pub fn reference(dataset: LogregDataset, draws: usize, seed: u64) -> Reference {
    let started = Instant::now();
    let m = LogisticRegressionModel::builtin(dataset).expect("Australian and Heart are built in");
    let settings = ReferenceSettings {
        chains: 4,
        warmup: draws.min(1000),
        draws,
        seed,
    };
    let known = reference_posterior(&m, &settings, &Progress::hidden())
        .expect("HMC runs on the built-in logistic regressions");
    Reference {
        mcse: known
            .mean_mcse
            .clone()
            .expect("estimated posteriors carry MCSEs"),
        mean: known.mean,
        sd: known.sd,
        draws: settings.chains * draws,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// Mean over coordinates of (estimate − truth)².
pub fn mse(estimate: &[f64], truth: &[f64]) -> f64 {
    estimate
        .iter()
        .zip(truth)
        .map(|(a, b)| (a - b).powi(2))
        .sum::<f64>()
        / truth.len() as f64
}

/// One chain's results.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Posterior-mean estimate: the average of the kept samples.
    pub estimate: Vec<f64>,
    /// [`mse`] of `estimate` against the reference.
    pub mse: f64,
    /// Standard deviation of the kept samples over the reference's posterior
    /// sd, averaged over coordinates (1 for an exact sampler that mixed; a
    /// sampler running hot is above 1, one that has not mixed below).
    pub sd_ratio: f64,
    /// Fraction of Metropolis tests accepted (1 for SGHMC), kept samples.
    pub acceptance: f64,
    /// SGHMC steps refused (non-finite gradient or proposal).
    pub failures: usize,
    /// Sampling seconds, burn-in included (MSE evaluations excluded).
    pub seconds: f64,
    /// (kept samples, MSE of the running mean, sampling seconds so far,
    /// burn-in included), about 5 checkpoints per decade.
    pub curve: Vec<(f64, f64, f64)>,
}

/// Runs `kind` at step size ε from w = 0: `burn_in` samples discarded, then
/// `samples` kept and averaged.
pub fn run_chain<const D: usize, const B: usize>(
    target: &LogisticRegression<D, B>,
    truth: &Reference,
    kind: Kind,
    step_size: f64,
    burn_in: usize,
    samples: usize,
    seed: u64,
) -> Run {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let started = Instant::now();
    let mut chain = Chain::new(kind, step_size, [0.0; D], target);
    for _ in 0..burn_in {
        let _ = chain.advance(target, &mut rng);
    }
    let mut elapsed = started.elapsed();
    let marks = super::super::report::log_spaced(samples, 5);
    let mut next = 0;
    let mut curve = Vec::with_capacity(marks.len());
    let mut sum = [0.0; D];
    let mut sum_sq = [0.0; D];
    let (mut accepted, mut failures) = (0usize, 0usize);
    let mut lap = Instant::now();
    for k in 1..=samples {
        let a = chain.advance(target, &mut rng);
        accepted += a.accepted as usize;
        failures += a.failures;
        for ((s, q), x) in sum.iter_mut().zip(sum_sq.iter_mut()).zip(chain.position()) {
            *s += x;
            *q += x * x;
        }
        if next < marks.len() && marks[next] == k {
            elapsed += lap.elapsed();
            let mean: Vec<f64> = sum.iter().map(|s| s / k as f64).collect();
            curve.push((k as f64, mse(&mean, &truth.mean), elapsed.as_secs_f64()));
            next += 1;
            lap = Instant::now();
        }
    }
    if samples == 0 {
        elapsed += lap.elapsed();
    }
    let n = samples.max(1) as f64;
    let estimate: Vec<f64> = sum.iter().map(|s| s / n).collect();
    let sd_ratio = (0..D)
        .map(|j| (sum_sq[j] / n - estimate[j] * estimate[j]).max(0.0).sqrt() / truth.sd[j])
        .sum::<f64>()
        / D as f64;
    Run {
        mse: mse(&estimate, &truth.mean),
        sd_ratio,
        estimate,
        acceptance: accepted as f64 / samples.max(1) as f64,
        failures,
        seconds: Duration::as_secs_f64(&elapsed),
        curve,
    }
}
