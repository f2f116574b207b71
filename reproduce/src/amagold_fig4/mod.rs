//! `qnmc reproduce amagold-fig4`: AMAGOLD (Zhang, Cooper & De Sa 2020)
//! Fig. 4 and Fig. 8 (App. G.3) — Bayesian logistic regression on the
//! Australian (D = 15, N = 690, minibatch 32) and Heart (D = 14, N = 270,
//! minibatch 16) data sets (§6.2):
//!
//! - Fig. 4a, b: mean squared error between the estimated posterior mean and
//!   the "true" parameters (a long full-batch HMC run) against the step size
//!   ε ∈ \[10⁻⁶, 5·10⁻³\], AMAGOLD vs SGHMC;
//! - Fig. 4c, d: that error against sampling time at ε = 10⁻⁴ for full-batch
//!   HMC, L2MC, SGHMC and AMAGOLD;
//! - Fig. 8: AMAGOLD's Metropolis acceptance rate against ε on Heart
//!   (Australian's is printed too).
//!
//! Every chain is one of the shared samplers
//! ([`Chain`](super::amagold_common::Chain)): each sample costs T gradients,
//! β = 0.25, T = 10, reversible AMAGOLD, HMC with L = T, unit mass. Chains
//! start at w = 0 (the prior mean), discard the first tenth of their samples
//! and average the rest. The truth is the posterior mean of
//! [`reference_posterior`](qnmc_host::run::reference_posterior) at a longer run
//! length; its Monte-Carlo error is printed as the floor of the measure.

mod measure;
mod report;
mod report_text;

pub use measure::{Reference, Run, model, mse, reference, run_chain};

use qnmc::SghmcUpdate;

use super::amagold_common::Kind;
use super::report::mean_interval;
use super::{ReproduceOptions, Reproduction};
use qnmc_host::targets::{LogisticRegression, LogregDataset};

/// SGHMC as the paper's Algorithm 1 (position first).
pub const SGHMC: Kind = Kind::Sghmc(SghmcUpdate::PositionFirst);
/// Step sizes of Fig. 4a, b (the paper: "from 10⁻⁶ to 5 × 10⁻³").
pub const STEP_SIZES: [f64; 7] = [1e-6, 1e-5, 1e-4, 1e-3, 2e-3, 3e-3, 5e-3];
/// The step size of the run-time panels (paper: 10⁻⁴).
pub const RUNTIME_STEP_SIZE: f64 = 1e-4;
/// The samplers of the ε sweep, in column order: the paper's two, then SGHMC
/// without momentum resampling (a setting the paper leaves open).
pub const SWEEP_KINDS: [Kind; 3] = [SGHMC, Kind::Amagold, Kind::SghmcPersistent];
/// The full-batch samplers added in the run-time panels.
pub const FULL_BATCH_KINDS: [Kind; 2] = [Kind::Hmc, Kind::L2mc];
/// Kept samples per stochastic chain (the paper collects 5 × 10⁶; see the
/// report).
pub const SAMPLES: usize = 100_000;
/// Kept samples per stochastic chain with `quick`.
pub const QUICK_SAMPLES: usize = 5_000;
/// Full-batch chains (HMC, L2MC) keep `samples / FULL_BATCH_DIVISOR`: one of
/// their samples costs 10 full-data gradients, about 7× (Australian) and 6×
/// (Heart) an AMAGOLD sample, so they still run longer in wall-clock time.
pub const FULL_BATCH_DIVISOR: usize = 5;
/// Chains per setting, full and quick run.
pub const REPEATS: usize = 3;
/// Kept draws per chain of the 4-chain reference run (full run).
pub const REFERENCE_DRAWS: usize = 25_000;
/// Kept draws per reference chain with `quick`.
pub const QUICK_REFERENCE_DRAWS: usize = 2_000;

/// Run lengths and step sizes of one measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Kept samples per stochastic chain (a tenth more are burned in).
    pub samples: usize,
    /// Chains per (data set, sampler, ε).
    pub repeats: usize,
    /// The step sizes (should contain [`RUNTIME_STEP_SIZE`]).
    pub step_sizes: Vec<f64>,
    /// Kept draws per reference chain.
    pub reference_draws: usize,
}

impl Settings {
    /// The full or the quick settings.
    pub fn of(options: &ReproduceOptions) -> Self {
        Settings {
            samples: if options.quick {
                QUICK_SAMPLES
            } else {
                SAMPLES
            },
            repeats: REPEATS,
            step_sizes: STEP_SIZES.to_vec(),
            reference_draws: if options.quick {
                QUICK_REFERENCE_DRAWS
            } else {
                REFERENCE_DRAWS
            },
        }
    }
}

/// The chains of one (sampler, ε).
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The sampler.
    pub kind: Kind,
    /// The step size.
    pub step_size: f64,
    /// One entry per repeat.
    pub runs: Vec<Run>,
}

impl Cell {
    /// Mean over the repeats of `f` and the half-width of its 95 % Student-t
    /// interval.
    pub fn interval(&self, f: impl Fn(&Run) -> f64) -> (f64, f64) {
        let v: Vec<f64> = self.runs.iter().map(f).collect();
        mean_interval(&v)
    }

    /// Mean over the repeats of `f`.
    pub fn mean(&self, f: impl Fn(&Run) -> f64) -> f64 {
        self.runs.iter().map(f).sum::<f64>() / self.runs.len() as f64
    }

    /// The Monte-Carlo part of one chain's MSE: the between-repeat variance
    /// of the estimates, averaged over coordinates (NaN for one repeat).
    pub fn between_variance(&self) -> f64 {
        let r = self.runs.len();
        if r < 2 {
            return f64::NAN;
        }
        let d = self.runs[0].estimate.len();
        let avg = self.average_estimate();
        (0..d)
            .map(|j| {
                self.runs
                    .iter()
                    .map(|run| (run.estimate[j] - avg[j]).powi(2))
                    .sum::<f64>()
                    / (r - 1) as f64
            })
            .sum::<f64>()
            / d as f64
    }

    /// The estimate averaged over the repeats.
    pub fn average_estimate(&self) -> Vec<f64> {
        let d = self.runs[0].estimate.len();
        (0..d)
            .map(|j| self.mean(|r| r.estimate[j]))
            .collect::<Vec<f64>>()
    }

    /// The systematic part of one chain's MSE: the squared error of the
    /// repeat-averaged estimate less the variance left in that average,
    /// ‖ē − truth‖²/D − V/R (the bias of the sampler plus the part of the
    /// start-up transient every chain shares).
    pub fn systematic(&self, truth: &[f64]) -> f64 {
        mse(&self.average_estimate(), truth) - self.between_variance() / self.runs.len() as f64
    }

    /// The MSE curve averaged over the repeats at each checkpoint:
    /// (samples, mean MSE, mean seconds).
    pub fn mean_curve(&self) -> Vec<(f64, f64, f64)> {
        let n = self.runs.len() as f64;
        let first = &self.runs[0].curve;
        (0..first.len())
            .map(|j| {
                let e = self.runs.iter().map(|r| r.curve[j].1).sum::<f64>() / n;
                let s = self.runs.iter().map(|r| r.curve[j].2).sum::<f64>() / n;
                (first[j].0, e, s)
            })
            .collect()
    }
}

/// Everything measured on one data set.
#[derive(Debug, Clone, PartialEq)]
pub struct DataNumbers {
    /// The data set.
    pub dataset: LogregDataset,
    /// "Australian" or "Heart".
    pub label: &'static str,
    /// Minibatch size.
    pub batch: usize,
    /// The "true" parameters.
    pub reference: Reference,
    /// Per sampler (in [`SWEEP_KINDS`] order), per step size.
    pub sweep: Vec<Vec<Cell>>,
    /// HMC and L2MC at [`RUNTIME_STEP_SIZE`] (the run-time panels).
    pub full_batch: Vec<Cell>,
}

impl DataNumbers {
    /// The cell of `kind` at `step_size`, if measured.
    pub fn cell(&self, kind: Kind, step_size: f64) -> Option<&Cell> {
        if let Some(k) = SWEEP_KINDS.iter().position(|&x| x == kind) {
            return self.sweep[k].iter().find(|c| c.step_size == step_size);
        }
        self.full_batch
            .iter()
            .find(|c| c.kind == kind && c.step_size == step_size)
    }

    /// ‖truth‖²/D: the MSE of a chain that never leaves w = 0.
    pub fn start_mse(&self) -> f64 {
        let zero = vec![0.0; self.reference.mean.len()];
        mse(&zero, &self.reference.mean)
    }
}

/// Everything the report prints.
#[derive(Debug, Clone, PartialEq)]
pub struct Fig4Numbers {
    /// Australian, then Heart.
    pub data: Vec<DataNumbers>,
    /// The settings measured.
    pub settings: Settings,
    /// Wall-clock seconds of the whole measurement.
    pub total_seconds: f64,
}

fn seed_of(base: u64, data: usize, kind: usize, step: usize, rep: usize) -> u64 {
    base ^ ((data as u64 + 1) << 48)
        ^ ((kind as u64 + 1) << 40)
        ^ ((step as u64) << 20)
        ^ rep as u64
}

fn cell<const D: usize, const B: usize>(
    target: &LogisticRegression<D, B>,
    truth: &Reference,
    kind: Kind,
    step_size: f64,
    samples: usize,
    settings: &Settings,
    seed: impl Fn(usize) -> u64,
) -> Cell {
    Cell {
        kind,
        step_size,
        runs: (0..settings.repeats)
            .map(|rep| {
                run_chain(
                    target,
                    truth,
                    kind,
                    step_size,
                    samples / 10,
                    samples,
                    seed(rep),
                )
            })
            .collect(),
    }
}

fn measure<const D: usize, const B: usize>(
    dataset: LogregDataset,
    index: usize,
    label: &'static str,
    settings: &Settings,
    seed: u64,
) -> DataNumbers {
    let target = model::<D, B>(dataset);
    let reference = reference(dataset, settings.reference_draws, seed ^ 0x5EF0_2E4C);
    let sweep = SWEEP_KINDS
        .iter()
        .enumerate()
        .map(|(k, &kind)| {
            settings
                .step_sizes
                .iter()
                .enumerate()
                .map(|(i, &eps)| {
                    cell(
                        &target,
                        &reference,
                        kind,
                        eps,
                        settings.samples,
                        settings,
                        |r| seed_of(seed, index, k, i, r),
                    )
                })
                .collect()
        })
        .collect();
    let full_batch = FULL_BATCH_KINDS
        .iter()
        .enumerate()
        .map(|(k, &kind)| {
            cell(
                &target,
                &reference,
                kind,
                RUNTIME_STEP_SIZE,
                settings.samples / FULL_BATCH_DIVISOR,
                settings,
                |r| seed_of(seed, index, 8 + k, 0, r),
            )
        })
        .collect();
    DataNumbers {
        dataset,
        label,
        batch: B,
        reference,
        sweep,
        full_batch,
    }
}

/// Measures both data sets at `settings`.
pub fn numbers_with(settings: &Settings, seed: u64) -> Fig4Numbers {
    let started = std::time::Instant::now();
    let data = vec![
        measure::<15, 32>(LogregDataset::Australian, 0, "Australian", settings, seed),
        measure::<14, 16>(LogregDataset::Heart, 1, "Heart", settings, seed),
    ];
    Fig4Numbers {
        data,
        settings: settings.clone(),
        total_seconds: started.elapsed().as_secs_f64(),
    }
}

/// The numbers of a run at the options' settings.
pub fn numbers(options: &ReproduceOptions) -> Fig4Numbers {
    numbers_with(&Settings::of(options), options.seed)
}

/// Runs the reproduction (quick: 5000 samples per chain, seconds; full:
/// 10⁵, a few minutes).
///
/// ```no_run
/// use qnmc_reproduce::{ReproduceOptions, amagold_fig4};
/// let r = amagold_fig4::run(&ReproduceOptions { seed: 2016, quick: true });
/// println!("{}", r.markdown);
/// ```
pub fn run(options: &ReproduceOptions) -> Reproduction {
    let n = numbers(options);
    Reproduction {
        name: "amagold-fig4".into(),
        title: "AMAGOLD (Zhang, Cooper & De Sa 2020), Figs. 4 and 8: Bayesian logistic \
                regression on Australian and Heart, error vs step size and time, acceptance"
            .into(),
        markdown: report::markdown(&n, options),
        charts: report::charts(&n),
        skipped: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
