//! `qnmc reproduce amagold-fig2`: AMAGOLD (Zhang, Cooper & De Sa 2020)
//! Figs. 2, 3 and 7 — on the paper's 2-D targets Dist1 (a banana) and Dist2
//! (an X-shaped mixture, [`AmagoldDist1`], [`AmagoldDist2`]) with
//! ∇Ũ = ∇U + N(0, I) for the stochastic samplers (§6.1):
//!
//! - Fig. 2: symmetric KL between the estimated and the true density against
//!   the step size ε ∈ [0.01, 0.25], for HMC, L2MC, SGHMC and AMAGOLD;
//! - Fig. 3: symmetric KL against iterations, AMAGOLD vs L2MC on Dist1 at
//!   ε = 0.15 (Dist2 drawn too);
//! - Fig. 7 (App. G.2.2): symmetric KL against sampling time, SGHMC vs
//!   AMAGOLD at ε = 0.15 on both targets.
//!
//! Every chain is one of the shared samplers ([`Chain`](super::amagold_common::Chain)): each sample costs T
//! gradients, β = 0.25, T = 10, reversible AMAGOLD, HMC with L = T. The
//! density estimate is a histogram of 0.5-wide square cells on a box holding
//! all but a negligible part of π, add-½ smoothed, against the exact cell
//! probabilities (the double-well measure of `amagold-fig1` in 2-D); a finer
//! grid (0.25) is kept for sensitivity, and exact iid draws give the
//! Monte-Carlo floor of the measure at the same sample size.

mod measure;
mod report;

pub use measure::{BURN_IN, Dist, Run, checkpoints, iid_reference, kl_grid, run_chain};

use qnmc::SghmcUpdate;

use super::amagold_common::Kind;
use super::{ReproduceOptions, Reproduction};
use qnmc_host::targets::{AmagoldDist1, AmagoldDist2};

/// Step sizes of Fig. 2 (the paper: "varies from 0.01 to 0.25"; the grid of
/// the double-well figure).
pub const STEP_SIZES: [f64; 6] = [0.01, 0.05, 0.1, 0.15, 0.2, 0.25];
/// The step size of Figs. 3 and 7 (paper: 0.15).
pub const CURVE_STEP_SIZE: f64 = 0.15;
/// The samplers of Fig. 2, in column order (their index fixes their seeds).
pub const KINDS: [Kind; 4] = [
    Kind::Hmc,
    Kind::L2mc,
    Kind::Sghmc(SghmcUpdate::PositionFirst),
    Kind::Amagold,
];
/// Kept samples per chain (the paper draws 5 × 10⁶; see the report).
pub const SAMPLES: usize = 1_000_000;
/// Kept samples per chain with `quick`.
pub const QUICK_SAMPLES: usize = 20_000;
/// Chains per setting (full run; quick runs one).
pub const REPEATS: usize = 3;
/// Cell width of the KL grid.
pub const CELL_WIDTH: f64 = 0.5;
/// Cell width of the sensitivity grid.
pub const FINE_CELL_WIDTH: f64 = 0.25;

/// Run lengths and step sizes of one measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Kept samples per chain.
    pub samples: usize,
    /// Chains per (target, sampler, ε).
    pub repeats: usize,
    /// The step sizes (must contain [`CURVE_STEP_SIZE`] for Figs. 3 and 7).
    pub step_sizes: Vec<f64>,
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
            repeats: if options.quick { 1 } else { REPEATS },
            step_sizes: STEP_SIZES.to_vec(),
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
    /// Mean, min and max over the repeats of `f`.
    pub fn summary(&self, f: impl Fn(&Run) -> f64) -> (f64, f64, f64) {
        let v: Vec<f64> = self.runs.iter().map(f).collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let min = v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (mean, min, max)
    }

    /// The KL curve averaged over the repeats at each checkpoint:
    /// (samples, mean KL, mean seconds).
    pub fn mean_curve(&self) -> Vec<(f64, f64, f64)> {
        let n = self.runs.len() as f64;
        let first = &self.runs[0].curve;
        (0..first.len())
            .map(|j| {
                let kl = self.runs.iter().map(|r| r.curve[j].1).sum::<f64>() / n;
                let s = self.runs.iter().map(|r| r.curve[j].2).sum::<f64>() / n;
                (first[j].0, kl, s)
            })
            .collect()
    }
}

/// Everything measured on one target.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetNumbers {
    /// `amagold-dist1` or `amagold-dist2`.
    pub name: &'static str,
    /// "Dist1" or "Dist2".
    pub label: &'static str,
    /// Per sampler (in [`KINDS`] order), per step size.
    pub cells: Vec<Vec<Cell>>,
    /// Exact iid draws, one run per repeat.
    pub iid: Vec<Run>,
    /// Mass of π inside the KL box.
    pub box_mass: f64,
    /// Cells of the main and the fine grid.
    pub grid_cells: (usize, usize),
    /// The KL box.
    pub kl_box: ([f64; 2], [f64; 2]),
}

impl TargetNumbers {
    /// The cell of `kind` at `step_size`, if measured.
    pub fn cell(&self, kind: Kind, step_size: f64) -> Option<&Cell> {
        let k = KINDS.iter().position(|&x| x == kind)?;
        self.cells[k].iter().find(|c| c.step_size == step_size)
    }

    /// Mean iid KL on the main grid.
    pub fn iid_kl(&self) -> f64 {
        self.iid.iter().map(|r| r.kl).sum::<f64>() / self.iid.len() as f64
    }
}

/// Everything the report prints.
#[derive(Debug, Clone, PartialEq)]
pub struct Fig2Numbers {
    /// Dist1, then Dist2.
    pub targets: Vec<TargetNumbers>,
    /// The settings measured.
    pub settings: Settings,
    /// Wall-clock seconds of the whole measurement.
    pub total_seconds: f64,
}

fn seed_of(base: u64, target: usize, kind: usize, step: usize, rep: usize) -> u64 {
    base ^ ((target as u64 + 1) << 48)
        ^ ((kind as u64 + 1) << 40)
        ^ ((step as u64) << 20)
        ^ rep as u64
}

fn measure_target<T: Dist>(
    target: &T,
    index: usize,
    label: &'static str,
    settings: &Settings,
    seed: u64,
) -> TargetNumbers {
    let widths = (CELL_WIDTH, FINE_CELL_WIDTH);
    let cells = KINDS
        .iter()
        .enumerate()
        .map(|(k, &kind)| {
            settings
                .step_sizes
                .iter()
                .enumerate()
                .map(|(i, &eps)| Cell {
                    kind,
                    step_size: eps,
                    runs: (0..settings.repeats)
                        .map(|rep| {
                            let s = seed_of(seed, index, k, i, rep);
                            run_chain(target, kind, eps, settings.samples, widths, s)
                        })
                        .collect(),
                })
                .collect()
        })
        .collect();
    let iid = (0..settings.repeats)
        .map(|rep| {
            iid_reference(
                target,
                settings.samples,
                widths,
                seed_of(seed, index, 15, 0, rep),
            )
        })
        .collect();
    let grid = kl_grid(target, CELL_WIDTH);
    let fine = kl_grid(target, FINE_CELL_WIDTH);
    let box_mass = grid
        .cell_probabilities(|x| target.density(x), 8)
        .iter()
        .sum();
    TargetNumbers {
        name: target.target_name(),
        label,
        cells,
        iid,
        box_mass,
        grid_cells: (grid.cell_count(), fine.cell_count()),
        kl_box: target.kl_box(),
    }
}

/// Measures both targets at `settings`.
pub fn numbers_with(settings: &Settings, seed: u64) -> Fig2Numbers {
    let started = std::time::Instant::now();
    let targets = vec![
        measure_target(&AmagoldDist1::paper(), 0, "Dist1", settings, seed),
        measure_target(&AmagoldDist2::paper(), 1, "Dist2", settings, seed),
    ];
    Fig2Numbers {
        targets,
        settings: settings.clone(),
        total_seconds: started.elapsed().as_secs_f64(),
    }
}

/// The numbers of a run at the options' settings.
pub fn numbers(options: &ReproduceOptions) -> Fig2Numbers {
    numbers_with(&Settings::of(options), options.seed)
}

/// Runs the reproduction (quick: 2 × 10⁴ samples, one repeat, about a
/// second; full: 10⁶ samples, three repeats, a few minutes).
///
/// ```no_run
/// use qnmc_reproduce::{ReproduceOptions, amagold_fig2};
/// let r = amagold_fig2::run(&ReproduceOptions { seed: 2016, quick: true });
/// println!("{}", r.markdown);
/// ```
pub fn run(options: &ReproduceOptions) -> Reproduction {
    let n = numbers(options);
    Reproduction {
        name: "amagold-fig2".into(),
        title: "AMAGOLD (Zhang, Cooper & De Sa 2020), Figs. 2, 3 and 7: Dist1 and Dist2, \
                density error vs step size, iterations and time"
            .into(),
        markdown: report::markdown(&n, options),
        charts: report::charts(&n),
        skipped: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
