//! The runs behind `amagold-fig2`: one chain per (target, sampler, ε, repeat),
//! its symmetric KL on two grids at the end, and its KL and sampling time at
//! log-spaced checkpoints along the way (Figs. 3 and 7 are read off these
//! curves at ε = 0.15, so every figure comes from the same chains).

use std::time::{Duration, Instant};

use qnmc::{MinibatchPotential, Potential};
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

use super::super::amagold_common::{Chain, Kind};
use qnmc_host::targets::{
    AmagoldDist1, AmagoldDist2, AnalyticToy, DensityGrid, Histogram, symmetric_kl_divergence,
};

/// Samples discarded before counting (the paper's double-well burn-in,
/// App. G.1; it prints none for Dist1/Dist2).
pub const BURN_IN: usize = 1000;
/// First checkpoint of the KL curves.
pub const FIRST_CHECKPOINT: usize = 100;

/// A 2-D target of the experiment with exact draws (the iid reference).
pub trait Dist: AnalyticToy<2> + Potential<f64, 2> + MinibatchPotential<f64, 2> {
    /// One exact draw from π.
    fn exact_draw<R: Rng + ?Sized>(&self, rng: &mut R) -> [f64; 2];
    /// The box the KL is measured on (all but a negligible mass of π).
    fn kl_box(&self) -> ([f64; 2], [f64; 2]);
}

fn normal_pair<R: Rng + ?Sized>(rng: &mut R) -> [f64; 2] {
    let mut z = [0.0; 2];
    qnmc::random::fill_standard_normal(rng, &mut z);
    z
}

impl Dist for AmagoldDist1 {
    /// z₂ ~ N(0, 4), then z₁ ~ N(z₂²/4, 1).
    fn exact_draw<R: Rng + ?Sized>(&self, rng: &mut R) -> [f64; 2] {
        let z = normal_pair(rng);
        let z2 = 2.0 * z[1];
        [0.25 * z2 * z2 + z[0], z2]
    }

    /// z₂ within ±3.5 sd; z₁ from 4 below the ridge's lowest point to where
    /// the ridge is at z₂ = ±8.
    fn kl_box(&self) -> ([f64; 2], [f64; 2]) {
        ([-4.0, -7.0], [16.0, 7.0])
    }
}

impl Dist for AmagoldDist2 {
    /// A fair coin picks Σ₊ or Σ₋; then L·z with L the Cholesky factor.
    fn exact_draw<R: Rng + ?Sized>(&self, rng: &mut R) -> [f64; 2] {
        let sign = if rng.next_u64() >> 63 == 0 { 1.0 } else { -1.0 };
        let z = normal_pair(rng);
        // Σ = [[2, c], [c, 2]]: L = [[√2, 0], [c/√2, √(2 − c²/2)]].
        let c = 1.8 * sign;
        let l11 = 2f64.sqrt();
        let l21 = c / l11;
        let l22 = (2.0 - l21 * l21).sqrt();
        [l11 * z[0], l21 * z[0] + l22 * z[1]]
    }

    /// ±6 on both axes (4.2 marginal sds).
    fn kl_box(&self) -> ([f64; 2], [f64; 2]) {
        ([-6.0, -6.0], [6.0, 6.0])
    }
}

/// The grid of `width`-wide square cells on the target's KL box.
pub fn kl_grid<T: Dist>(target: &T, width: f64) -> DensityGrid<2> {
    let (lo, hi) = target.kl_box();
    let bins = [0, 1].map(|i| ((hi[i] - lo[i]) / width).round() as usize);
    DensityGrid::new(lo, hi, bins).expect("valid box")
}

/// A histogram filled one draw at a time.
struct Counter {
    grid: DensityGrid<2>,
    exact: Vec<f64>,
    histogram: Histogram,
}

impl Counter {
    fn new<T: Dist>(target: &T, width: f64) -> Self {
        let grid = kl_grid(target, width);
        let exact = target.cell_probabilities(&grid);
        let histogram = Histogram {
            counts: vec![0.0; grid.cell_count()],
            outside: 0.0,
        };
        Counter {
            grid,
            exact,
            histogram,
        }
    }

    fn add(&mut self, x: &[f64; 2]) {
        match self.grid.cell_index(x) {
            Some(i) => self.histogram.counts[i] += 1.0,
            None => self.histogram.outside += 1.0,
        }
    }

    /// Symmetric KL between the add-½ smoothed histogram and the exact cell
    /// probabilities passed through the same smoothing at the same n,
    /// (n·p + ½)/(n + ½·cells): cells π (almost) never reaches then add
    /// nothing, where against the raw p every such cell's ½ pseudo-count
    /// would add ½/n·log(½/(n·p)) — on Dist1's box, mostly empty around the
    /// banana, that term alone is 10× the multinomial noise.
    fn kl(&self) -> f64 {
        smoothed_kl(&self.exact, &self.histogram)
    }
}

/// The symmetric KL of `histogram` against `exact` smoothed like it (see
/// `Counter::kl`).
pub fn smoothed_kl(exact: &[f64], histogram: &Histogram) -> f64 {
    let n = histogram.total();
    let k = exact.len() as f64;
    let truth: Vec<f64> = exact
        .iter()
        .map(|p| (n * p + 0.5) / (n + 0.5 * k))
        .collect();
    symmetric_kl_divergence(&truth, &histogram.smoothed_probabilities())
}

/// One chain's results.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Symmetric KL on the main grid over all kept samples.
    pub kl: f64,
    /// Symmetric KL on the fine grid (sensitivity to the cell width).
    pub kl_fine: f64,
    /// Fraction of proposals accepted (1 for SGHMC).
    pub acceptance: f64,
    /// Fraction of kept samples outside the KL box.
    pub outside: f64,
    /// SGHMC steps refused (non-finite gradient or proposal).
    pub failures: usize,
    /// Sampling time of the kept samples (KL evaluations excluded), seconds.
    pub seconds: f64,
    /// (samples, symmetric KL on the main grid, sampling seconds so far).
    pub curve: Vec<(f64, f64, f64)>,
}

/// The checkpoints of the KL curves: about 5 per decade from
/// `FIRST_CHECKPOINT` to `samples`, `samples` included.
pub fn checkpoints(samples: usize) -> Vec<usize> {
    super::super::report::log_spaced(samples, 5)
        .into_iter()
        .filter(|&n| n >= FIRST_CHECKPOINT.min(samples))
        .collect()
}

/// Runs `kind` at step size ε for [`BURN_IN`] + `samples` samples from the
/// target's starting point.
pub fn run_chain<T: Dist>(
    target: &T,
    kind: Kind,
    step_size: f64,
    samples: usize,
    widths: (f64, f64),
    seed: u64,
) -> Run {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let mut chain = Chain::new(kind, step_size, target.starting_point(), target);
    for _ in 0..BURN_IN {
        let _ = chain.advance(target, &mut rng);
    }
    let mut main = Counter::new(target, widths.0);
    let mut fine = Counter::new(target, widths.1);
    let marks = checkpoints(samples);
    let mut next = 0;
    let mut curve = Vec::with_capacity(marks.len());
    let (mut accepted, mut failures) = (0usize, 0usize);
    let mut elapsed = Duration::ZERO;
    let mut started = Instant::now();
    for k in 1..=samples {
        let a = chain.advance(target, &mut rng);
        accepted += a.accepted as usize;
        failures += a.failures;
        main.add(chain.position());
        fine.add(chain.position());
        if next < marks.len() && marks[next] == k {
            elapsed += started.elapsed();
            curve.push((k as f64, main.kl(), elapsed.as_secs_f64()));
            next += 1;
            started = Instant::now();
        }
    }
    Run {
        kl: main.kl(),
        kl_fine: fine.kl(),
        acceptance: accepted as f64 / samples.max(1) as f64,
        outside: main.histogram.outside / samples.max(1) as f64,
        failures,
        seconds: elapsed.as_secs_f64(),
        curve,
    }
}

/// The same measurements for `samples` exact iid draws: the Monte-Carlo floor
/// of the histogram KL at each sample size.
pub fn iid_reference<T: Dist>(target: &T, samples: usize, widths: (f64, f64), seed: u64) -> Run {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let mut main = Counter::new(target, widths.0);
    let mut fine = Counter::new(target, widths.1);
    let marks = checkpoints(samples);
    let mut next = 0;
    let mut curve = Vec::new();
    for k in 1..=samples {
        let x = target.exact_draw(&mut rng);
        main.add(&x);
        fine.add(&x);
        if next < marks.len() && marks[next] == k {
            curve.push((k as f64, main.kl(), 0.0));
            next += 1;
        }
    }
    Run {
        kl: main.kl(),
        kl_fine: fine.kl(),
        acceptance: 1.0,
        outside: main.histogram.outside / samples.max(1) as f64,
        failures: 0,
        seconds: 0.0,
        curve,
    }
}
