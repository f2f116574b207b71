//! The jobs the firmware runs, shared verbatim by the host build of the firmware,
//! the WebAssembly module (`qnmc-wasm-example`) and the host tests
//! (`tests/tests/{posteriors,reference_chains}/embedded.rs` include this file with `#[path]`).
//!
//! Everything here is `no_std`, allocation-free and generic over [`Real`], so the
//! very same code runs on a Cortex-M4F (f32 in hardware, f64 in software), a
//! Cortex-M0/M3 and a RV32IMAC (both in software), WebAssembly and x86-64.
//!
//! 1. **On-device inference** ([`qnhmc_posterior`], [`hamcmc_posterior`],
//!    [`nuts_posterior`]): Bayesian logistic regression, D = 3 (intercept + two
//!    sensor features), on the N = 48 labelled readings of [`FEATURES`]/[`LABELS`]
//!    built into the flash, prior β ~ N(0, 2² I). QNHMC and NUTS (Stan's warm-up,
//!    diagonal or L-BFGS metric) run on the full data, HAMCMC on minibatches of
//!    [`BATCH`] readings. The posterior means and standard deviations are checked
//!    against [`POSTERIOR_MEAN`]/[`POSTERIOR_SD`], computed on the host by
//!    deterministic 3-D quadrature (`tests/tests/posteriors/embedded.rs`
//!    recomputes them and asserts the baked numbers are still right).
//! 2. **Bit identity** ([`bit_identity`]): 200 draws of QNHMC (adaptive memory,
//!    which amplifies any round-off difference), of HAMCMC and of NUTS with both
//!    metrics (150 of them warm-up: dual averaging, a metric update, step-size
//!    searches, and for the L-BFGS metric the start-up optimisation and the
//!    Jacobi eigen-decomposition) on the same model, from fixed `XorShiftRng`
//!    seeds; an FNV-1a hash of the bits of every draw and every accept flag
//!    (NUTS: tree depth, leapfrog steps and the step size). Every target must
//!    print the host's hash ([`EXPECTED_BIT_IDENTITY_F64`],
//!    [`EXPECTED_BIT_IDENTITY_F32`]).
//! 3. **Step cost** ([`step_costs`], [`nuts_step_costs`]): instructions of one
//!    draw of each sampler after warm-up, read from a caller-supplied counter.

// Numeric kernels index parallel arrays; index loops say that best (as in the core).
#![allow(clippy::needless_range_loop)]

use core::mem::MaybeUninit;

use qnmc::adaptation::{
    AdaptiveNuts, DiagonalEstimator, LbfgsEstimator, LbfgsEstimatorSettings, MetricEstimator,
    WarmupSchedule,
};
use qnmc::lbfgs::{CurvaturePolicy, InitialScaling, LbfgsSettings};
use qnmc::metric::{DiagonalMetric, LbfgsMetric};
use qnmc::{
    Hamcmc, HamcmcSettings, MemoryUpdate, MinibatchPotential, Nuts, NutsSettings, NutsStats,
    Potential, Qnhmc, QnhmcMass, QnhmcSettings, Real, StepSizeSchedule, StepStats,
};
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

/// Number of labelled readings built into the flash.
pub const N: usize = 48;
/// Parameters: intercept and two feature weights.
pub const D: usize = 3;
/// HAMCMC minibatch size.
pub const BATCH: usize = 8;
/// L-BFGS pairs kept by QNHMC.
pub const QNHMC_MEMORY: usize = 4;
/// HAMCMC memory M (M draws, M − 1 pairs).
pub const HAMCMC_MEMORY: usize = 3;
/// Deepest NUTS tree (the sampler's const `MAX_DEPTH` and its setting): at
/// most 2⁶ − 1 = 63 leapfrog steps per draw; the storage grows linearly with it.
pub const NUTS_MAX_DEPTH: usize = 6;
/// Curvature pairs of NUTS's L-BFGS metric. One pair (a rank-≤ 2 correction
/// of the diagonal base), chosen when building the f64 sampler with
/// `AdaptiveNuts::new` needed about 17 KiB of stack at M = 2; built in place
/// it needs far less (docs/EMBEDDED.md, "NUTS in 16 KiB of RAM"), so M = 2
/// would now fit, at the price of new bit-identity hashes. With
/// one pair the current `LbfgsEstimator` ends every window on the diagonal
/// base alone (its Fisher criterion keeps only the last M draws and accepts
/// every candidate with fewer than 2), so only the start-up optimisation's
/// metric has curvature directions.
pub const NUTS_LBFGS_MEMORY: usize = 1;
/// Prior variance of every coefficient.
pub const PRIOR_VARIANCE: f64 = 4.0;

/// Features (x₁, x₂) of the readings: standardised temperature deviation and
/// vibration level of a machine, two decimals as a logger would store them.
#[rustfmt::skip]
pub const FEATURES: [[f32; 2]; N] = [
    [-0.26, 0.51], [1.11, 0.54], [1.11, 0.42], [-0.35, 0.15],
    [-1.67, 0.86], [0.24, 1.39], [-0.89, -0.47], [1.89, 0.57],
    [0.31, 0.39], [0.25, -0.58], [-0.62, -0.74], [0.32, 0.13],
    [-0.45, -0.96], [-0.94, -0.56], [0.43, -1.49], [-1.09, -0.55],
    [-0.11, -0.82], [0.77, 0.70], [0.67, 0.95], [-0.84, -1.48],
    [0.62, -0.61], [-1.09, -0.74], [1.29, -2.03], [-0.18, -0.30],
    [-1.90, -2.52], [-0.21, 0.96], [1.10, 0.16], [0.26, 0.23],
    [0.52, 0.55], [0.28, -0.30], [-1.97, -0.63], [0.53, -0.61],
    [-1.31, 1.61], [0.36, 0.51], [0.12, 1.15], [-0.01, 0.09],
    [-0.88, 0.95], [-0.44, -1.12], [-0.15, -0.30], [0.38, -2.00],
    [-0.79, 0.63], [-0.24, -0.27], [0.15, 0.58], [0.02, 0.01],
    [0.76, 0.57], [0.97, -0.98], [-0.01, 0.92], [1.39, 1.36],
];

/// Labels: 1 = a fault followed the reading.
pub const LABELS: [u8; N] = [
    0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1,
    0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 1, 1, 0, 0,
];

include!("expected.rs");

/// Seed of the bit-identity chains.
pub const BIT_IDENTITY_SEED: u64 = 2024;
/// Draws of each bit-identity chain.
pub const BIT_IDENTITY_STEPS: u32 = 200;
/// Seed of the on-device inference job.
pub const POSTERIOR_SEED: u64 = 7;

/// Warm-up draws of QNHMC (memory adapts, then freezes: later draws are exact).
pub const QNHMC_WARMUP: u32 = 300;
/// Draws of QNHMC kept after warm-up.
pub const QNHMC_DRAWS: u32 = 2000;
/// HAMCMC draws discarded (burn-in, includes the SGLD start-up).
pub const HAMCMC_BURN_IN: u32 = 1000;
/// HAMCMC draws kept.
pub const HAMCMC_DRAWS: u32 = 20000;

/// NUTS warm-up draws (Stan's windows: 75 fast, slow windows ending at draws
/// 100, 150 and 250 with a metric update each, 50 fast).
pub const NUTS_WARMUP: u32 = 300;
/// NUTS draws kept after warm-up (fixed step size and metric: exact).
pub const NUTS_DRAWS: u32 = 1000;
/// Warm-up draws of the NUTS bit-identity chains (one slow window ending at
/// draw 100; then the terminal buffer and the final step size).
pub const NUTS_BIT_IDENTITY_WARMUP: u32 = 150;
/// First guess of the NUTS step size (the warm-up replaces it at once by
/// Stan's heuristic from the starting point).
pub const NUTS_INITIAL_STEP_SIZE: f64 = 0.5;

/// Tolerance of the mean check, in posterior standard deviations. QNHMC
/// (exact after warm-up): 2000 draws with an ESS of several hundred give an MCSE
/// of about 0.05 sd (measured over 16 seeds in `tests/tests/posteriors/embedded.rs`),
/// so 0.3 sd is ≥ 5 MCSE.
pub const QNHMC_MEAN_TOLERANCE: f64 = 0.3;
/// Tolerance of the sd check (relative) for QNHMC.
pub const QNHMC_SD_TOLERANCE: f64 = 0.25;
/// HAMCMC runs with a constant step and minibatch gradients, so it is biased:
/// its tolerance covers a bias allowance of 0.1 sd (the measured pooled bias
/// over 12 seeds is below it) plus 4 × the median MCSE (≈ 0.08 sd; see the
/// host test, which treats the draws as M interleaved chains for the ESS).
pub const HAMCMC_MEAN_TOLERANCE: f64 = 0.5;
/// Tolerance of the sd check (relative) for HAMCMC.
pub const HAMCMC_SD_TOLERANCE: f64 = 0.25;
/// NUTS (exact after warm-up): 1000 kept draws; over 12 seeds × f32/f64 ×
/// both metrics the largest MCSE of a mean is 0.053 sd (ESS ≥ 350), so 0.3 sd
/// is ≥ 5 MCSE (`tests/tests/posteriors/embedded.rs` measures it and asserts
/// the margin and every |z| < 4.5).
pub const NUTS_MEAN_TOLERANCE: f64 = 0.3;
/// Tolerance of the sd check (relative) for NUTS: the largest MCSE of an sd
/// over the same runs is 0.048 sd, so 0.25 is ≥ 5 MCSE.
pub const NUTS_SD_TOLERANCE: f64 = 0.25;

/// The logistic-regression posterior: U(β) = Σₙ [log(1 + e^ηₙ) − yₙ ηₙ] + |β|²/(2σ²),
/// ηₙ = β₀ + β₁ x₁ₙ + β₂ x₂ₙ.
#[derive(Debug, Clone, Copy, Default)]
pub struct Logistic;

/// log(1 + e^η) and σ(η) = 1/(1 + e^−η), stable for either sign of η.
fn softplus_sigmoid<T: Real>(eta: T) -> (T, T) {
    if eta > T::ZERO {
        let e = (-eta).exp();
        (eta + (T::ONE + e).ln(), T::ONE / (T::ONE + e))
    } else {
        let e = eta.exp();
        ((T::ONE + e).ln(), e / (T::ONE + e))
    }
}

impl Logistic {
    /// Adds `weight` × (the likelihood term of reading `n`) to `gradient` and
    /// returns its potential contribution.
    fn add_reading<T: Real>(n: usize, beta: &[T; D], weight: T, gradient: &mut [T; D]) -> T {
        let (x, label) = match (FEATURES.get(n), LABELS.get(n)) {
            (Some(x), Some(l)) => (x, *l),
            _ => return T::ZERO,
        };
        let x1 = T::from_f64(x[0] as f64);
        let x2 = T::from_f64(x[1] as f64);
        let y = if label == 1 { T::ONE } else { T::ZERO };
        let eta = beta[0] + beta[1] * x1 + beta[2] * x2;
        let (softplus, sigmoid) = softplus_sigmoid(eta);
        let r = weight * (sigmoid - y);
        gradient[0] += r;
        gradient[1] += r * x1;
        gradient[2] += r * x2;
        weight * (softplus - y * eta)
    }

    fn prior<T: Real>(beta: &[T; D], gradient: &mut [T; D]) -> T {
        let inv = T::ONE / T::from_f64(PRIOR_VARIANCE);
        let mut u = T::ZERO;
        for i in 0..D {
            gradient[i] = beta[i] * inv;
            u += T::HALF * beta[i] * beta[i] * inv;
        }
        u
    }
}

impl<T: Real> Potential<T, D> for Logistic {
    fn potential_and_gradient(&self, beta: &[T; D], gradient: &mut [T; D]) -> T {
        let mut u = Self::prior(beta, gradient);
        for n in 0..N {
            u += Self::add_reading(n, beta, T::ONE, gradient);
        }
        u
    }
}

impl<T: Real> MinibatchPotential<T, D> for Logistic {
    type Batch = [u8; BATCH];

    /// `BATCH` indices drawn with replacement, one `next_u32` each (index =
    /// word mod N; the modulo bias is 48/2³² and irrelevant here).
    fn draw_batch<R: Rng + ?Sized>(&self, rng: &mut R) -> [u8; BATCH] {
        let mut batch = [0u8; BATCH];
        for b in batch.iter_mut() {
            *b = (rng.next_u32() % N as u32) as u8;
        }
        batch
    }

    fn minibatch_gradient(&self, batch: &[u8; BATCH], beta: &[T; D], gradient: &mut [T; D]) {
        let _ = Self::prior(beta, gradient);
        let weight = T::from_f64(N as f64 / BATCH as f64);
        for &n in batch {
            let _ = Self::add_reading(n as usize, beta, weight, gradient);
        }
    }
}

/// QNHMC as the jobs configure it: M = C (effective inverse metric H), γ = 0.1,
/// 4 pairs, ε = 0.6 jittered, 5 leapfrog steps.
pub fn qnhmc_settings<T: Real>(freeze_after: Option<u64>) -> QnhmcSettings<T> {
    let mut settings = QnhmcSettings::new(T::from_f64(0.6), 5, QNHMC_MEMORY);
    settings.mass = QnhmcMass::InverseHessian;
    settings.lbfgs = LbfgsSettings {
        max_pairs: QNHMC_MEMORY,
        scaling: InitialScaling::Fixed(T::from_f64(0.1)),
        curvature: CurvaturePolicy::default(),
    };
    settings.memory_update = match freeze_after {
        Some(n) => MemoryUpdate::FreezeAfter(n),
        None => MemoryUpdate::Adaptive,
    };
    settings
}

/// HAMCMC as the jobs configure it: constant ε = 0.03, γ = 0.1, λ = 1.
pub fn hamcmc_settings<T: Real>() -> HamcmcSettings<T> {
    HamcmcSettings::new(
        StepSizeSchedule::Constant(T::from_f64(0.03)),
        T::from_f64(0.1),
        T::ONE,
    )
}

/// A QNHMC step size jittered uniformly in [0.7, 1.3]·ε (one `next_u32`), as the
/// sampler's docs advise against periodic trajectories.
fn jittered<T: Real, R: Rng>(rng: &mut R) -> T {
    let u = T::from_f64((rng.next_u32() >> 8) as f64 / 16_777_216.0);
    T::from_f64(0.6) * (T::from_f64(0.7) + T::from_f64(0.6) * u)
}

/// The metric NUTS runs with (and the estimator its warm-up tunes it with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NutsMetric {
    /// [`DiagonalMetric`] learned by [`DiagonalEstimator`] (σᵢ² from the draws'
    /// and the gradients' variances).
    Diagonal,
    /// [`LbfgsMetric`] with [`NUTS_LBFGS_MEMORY`] pairs, learned by
    /// [`LbfgsEstimator`] (L-BFGS optimisation at the start, then the diagonal
    /// base plus conjugated pairs between draws of each slow window).
    Lbfgs,
}

impl NutsMetric {
    /// Both metrics, in the order of the logs and hashes.
    pub const ALL: [NutsMetric; 2] = [NutsMetric::Diagonal, NutsMetric::Lbfgs];

    /// Name in the logs.
    pub const fn name(self) -> &'static str {
        match self {
            NutsMetric::Diagonal => "nuts-diag",
            NutsMetric::Lbfgs => "nuts-lbfgs",
        }
    }
}

/// NUTS with the diagonal metric and its warm-up, as the jobs instantiate it.
pub type NutsDiagonal<T> = AdaptiveNuts<T, D, DiagonalEstimator<T, D>, NUTS_MAX_DEPTH>;
/// NUTS with the L-BFGS metric and its warm-up, as the jobs instantiate it.
pub type NutsLbfgs<T> = AdaptiveNuts<T, D, LbfgsEstimator<T, D, NUTS_LBFGS_MEMORY>, NUTS_MAX_DEPTH>;

/// NUTS settings of the jobs: ε = [`NUTS_INITIAL_STEP_SIZE`] (a first guess),
/// depth ≤ [`NUTS_MAX_DEPTH`], Stan's divergence threshold 1000.
pub fn nuts_settings<T: Real>() -> NutsSettings<T> {
    let mut settings = NutsSettings::new(T::from_f64(NUTS_INITIAL_STEP_SIZE));
    settings.max_tree_depth = NUTS_MAX_DEPTH as u32;
    settings
}

/// Builds the diagonal-metric NUTS of the jobs (Stan's warm-up over `warmup`
/// draws, M⁻¹ = I at first, which the estimator rescales from the initial
/// gradient) in this function's frame, in place
/// ([`AdaptiveNuts::init_in_place`]: the sampler is written once, never built
/// elsewhere and copied), and lends it to `f`; `false` if it could not be
/// built. Never inlined, so that only one NUTS sampler is on the stack at a
/// time (docs/EMBEDDED.md).
#[inline(never)]
pub fn with_nuts_diagonal<T: Real>(
    warmup: u32,
    initial: [T; D],
    f: &mut dyn FnMut(&mut NutsDiagonal<T>),
) -> bool {
    let Ok(schedule) = WarmupSchedule::stan(warmup as u64) else {
        return false;
    };
    let mut slot = MaybeUninit::uninit();
    match NutsDiagonal::<T>::init_in_place(
        &mut slot,
        nuts_settings(),
        schedule,
        (),
        &initial,
        &Logistic,
    ) {
        Ok(chain) => {
            f(chain);
            true
        }
        Err(_) => false,
    }
}

/// The L-BFGS-metric NUTS of the jobs (rank tolerance 0: every direction
/// kept; start-up optimisation on), as [`with_nuts_diagonal`].
#[inline(never)]
pub fn with_nuts_lbfgs<T: Real>(
    warmup: u32,
    initial: [T; D],
    f: &mut dyn FnMut(&mut NutsLbfgs<T>),
) -> bool {
    let Ok(schedule) = WarmupSchedule::stan(warmup as u64) else {
        return false;
    };
    let estimator = LbfgsEstimatorSettings::new(T::ZERO);
    let mut slot = MaybeUninit::uninit();
    match NutsLbfgs::<T>::init_in_place(
        &mut slot,
        nuts_settings(),
        schedule,
        estimator,
        &initial,
        &Logistic,
    ) {
        Ok(chain) => {
            f(chain);
            true
        }
        Err(_) => false,
    }
}

/// What the NUTS drivers hand each draw to: the new position, the draw's
/// statistics, and whether it was a warm-up draw.
pub type NutsDrawHandler<'a, T> = dyn FnMut(&[T; D], &NutsStats<T>, bool) + 'a;

/// Runs `draws` draws of `chain` from `XorShiftRng::seed_from_u64(seed)`,
/// passing each new position, its statistics and whether the draw was a
/// warm-up draw to `on_draw`.
fn drive_nuts<T: Real, E: MetricEstimator<T, D>>(
    chain: &mut AdaptiveNuts<T, D, E, NUTS_MAX_DEPTH>,
    seed: u64,
    draws: u32,
    on_draw: &mut NutsDrawHandler<'_, T>,
) {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    for _ in 0..draws {
        let warming_up = chain.is_warming_up();
        let stats = chain.step(&Logistic, &mut rng);
        on_draw(chain.position(), &stats, warming_up);
    }
}

/// A NUTS chain of `warmup` warm-up draws and `draws − warmup` kept draws with
/// `metric`, from `initial` and `seed`; every draw goes to `on_draw` (see
/// [`drive_nuts`]). Nothing runs if the sampler cannot be built.
pub fn nuts_run<T: Real>(
    metric: NutsMetric,
    warmup: u32,
    draws: u32,
    initial: [T; D],
    seed: u64,
    on_draw: &mut NutsDrawHandler<'_, T>,
) {
    nuts_run_traced(metric, warmup, draws, initial, seed, &mut || {}, on_draw);
}

/// [`nuts_run`], calling `on_built` once the sampler is built, before its
/// first draw (the firmware measures the stack of building and of drawing
/// separately).
pub fn nuts_run_traced<T: Real>(
    metric: NutsMetric,
    warmup: u32,
    draws: u32,
    initial: [T; D],
    seed: u64,
    on_built: &mut dyn FnMut(),
    on_draw: &mut NutsDrawHandler<'_, T>,
) {
    let _ = match metric {
        NutsMetric::Diagonal => with_nuts_diagonal::<T>(warmup, initial, &mut |chain| {
            on_built();
            drive_nuts(chain, seed, draws, on_draw)
        }),
        NutsMetric::Lbfgs => with_nuts_lbfgs::<T>(warmup, initial, &mut |chain| {
            on_built();
            drive_nuts(chain, seed, draws, on_draw)
        }),
    };
}

/// 64-bit FNV-1a, fed one 64-bit word at a time (little-endian bytes).
#[derive(Debug, Clone, Copy)]
pub struct Fnv(pub u64);

impl Fnv {
    /// The FNV offset basis.
    pub const fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    /// Mixes in one word.
    pub fn word(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    /// Mixes in the exact bits of a draw (f32 → f64 is exact).
    pub fn real<T: Real>(&mut self, x: T) {
        self.word(x.to_f64().to_bits());
    }
}

impl Default for Fnv {
    fn default() -> Self {
        Self::new()
    }
}

/// Hashes of the four bit-identity chains: `[qnhmc, hamcmc, nuts-diag, nuts-lbfgs]`.
///
/// QNHMC (adaptive memory, fixed ε = 0.6 so no extra draws) from `[0.5, -0.5, 0.5]`
/// with `XorShiftRng::seed_from_u64(seed)`; HAMCMC from `[0, 0, 0]` with
/// `seed + 1`. A HAMCMC step error is hashed as a marker word and the chain goes on.
/// NUTS ([`nuts_bit_identity`]) with `seed + 2` (diagonal) and `seed + 3` (L-BFGS).
pub fn bit_identity<T: Real>(seed: u64, steps: u32) -> [u64; 4] {
    [
        qnhmc_bit_identity::<T>(seed, steps),
        hamcmc_bit_identity::<T>(seed.wrapping_add(1), steps),
        nuts_bit_identity::<T>(NutsMetric::Diagonal, seed.wrapping_add(2), steps),
        nuts_bit_identity::<T>(NutsMetric::Lbfgs, seed.wrapping_add(3), steps),
    ]
}

/// Hash of the QNHMC bit-identity chain (see [`bit_identity`]). Not inlined,
/// like the other chains, so that their samplers never share a stack frame.
#[inline(never)]
pub fn qnhmc_bit_identity<T: Real>(seed: u64, steps: u32) -> u64 {
    let mut hash = Fnv::new();
    let init = [T::HALF, -T::HALF, T::HALF];
    if let Ok(mut q) = Qnhmc::<T, D, QNHMC_MEMORY>::new(qnhmc_settings(None), init, &Logistic) {
        let mut rng = XorShiftRng::seed_from_u64(seed);
        for _ in 0..steps {
            let stats = q.step(&Logistic, &mut rng);
            hash.word(stats.accepted as u64);
            for &x in q.position() {
                hash.real(x);
            }
        }
    }
    hash.0
}

/// Hash of the HAMCMC bit-identity chain (see [`bit_identity`]; `seed` is
/// used as given).
#[inline(never)]
pub fn hamcmc_bit_identity<T: Real>(seed: u64, steps: u32) -> u64 {
    let mut hash = Fnv::new();
    if let Ok(mut h) = Hamcmc::<T, D, HAMCMC_MEMORY>::new(hamcmc_settings(), [T::ZERO; D]) {
        let mut rng = XorShiftRng::seed_from_u64(seed);
        for _ in 0..steps {
            match h.step(&Logistic, &mut rng) {
                Ok(_) => {
                    for &x in h.position() {
                        hash.real(x);
                    }
                }
                Err(_) => hash.word(0xdead),
            }
        }
    }
    hash.0
}

/// Hash of a NUTS bit-identity chain: `steps` draws, the first
/// [`NUTS_BIT_IDENTITY_WARMUP`] of them Stan's warm-up (so dual averaging, one
/// metric update and the step-size searches are all hashed), from
/// `[0.5, -0.5, 0.5]` and `XorShiftRng::seed_from_u64(seed)`. Per draw: one
/// word of tree depth, leapfrog steps and the divergent/moved flags, the step
/// size used, and the new position. A sampler that cannot be built hashes as
/// the empty chain.
pub fn nuts_bit_identity<T: Real>(metric: NutsMetric, seed: u64, steps: u32) -> u64 {
    nuts_bit_identity_traced::<T>(metric, seed, steps, &mut || {})
}

/// [`nuts_bit_identity`], calling `on_built` before the first draw.
pub fn nuts_bit_identity_traced<T: Real>(
    metric: NutsMetric,
    seed: u64,
    steps: u32,
    on_built: &mut dyn FnMut(),
) -> u64 {
    let mut hash = Fnv::new();
    let init = [T::HALF, -T::HALF, T::HALF];
    nuts_run_traced::<T>(
        metric,
        NUTS_BIT_IDENTITY_WARMUP,
        steps,
        init,
        seed,
        on_built,
        &mut |x, stats, _| {
            hash.word(
                stats.leapfrog_steps as u64
                    | (stats.tree_depth as u64) << 32
                    | (stats.divergent as u64) << 40
                    | (stats.moved as u64) << 41,
            );
            hash.real(stats.step_size);
            for &v in x {
                hash.real(v);
            }
        },
    );
    hash.0
}

/// Running mean and variance (Welford) of the draws, in f64 whatever `T` is.
#[derive(Debug, Clone, Copy, Default)]
pub struct Moments {
    /// Draws seen.
    pub count: u32,
    /// Running mean.
    pub mean: [f64; D],
    m2: [f64; D],
}

impl Moments {
    /// Adds one draw.
    pub fn push<T: Real>(&mut self, x: &[T; D]) {
        self.count += 1;
        let n = self.count as f64;
        for i in 0..D {
            let v = x[i].to_f64();
            let delta = v - self.mean[i];
            self.mean[i] += delta / n;
            self.m2[i] += delta * (v - self.mean[i]);
        }
    }
    /// Sample standard deviations.
    pub fn sd(&self) -> [f64; D] {
        let mut sd = [0.0; D];
        if self.count > 1 {
            for i in 0..D {
                sd[i] = Real::sqrt(self.m2[i] / (self.count - 1) as f64);
            }
        }
        sd
    }
}

/// The outcome of one on-device inference job.
#[derive(Debug, Clone, Copy)]
pub struct PosteriorCheck {
    /// Which sampler ran.
    pub sampler: &'static str,
    /// Posterior mean and sd estimated from the kept draws.
    pub moments: Moments,
    /// Accepted proposals among the kept draws (all of them for HAMCMC).
    pub accepted: u32,
    /// Draws that failed (divergences for QNHMC, step errors for HAMCMC).
    pub failures: u32,
    /// (estimate − truth)/truth_sd for each coordinate.
    pub mean_error_in_sd: [f64; D],
    /// estimate_sd/truth_sd − 1 for each coordinate.
    pub sd_relative_error: [f64; D],
    /// Every check passed.
    pub passed: bool,
}

/// Judges estimated moments against a reference posterior: every mean within
/// `mean_tol` reference sds, every sd within `sd_tol` (relative). NaN fails.
#[allow(clippy::too_many_arguments)]
pub fn judge(
    sampler: &'static str,
    moments: Moments,
    accepted: u32,
    failures: u32,
    mean_tol: f64,
    sd_tol: f64,
    truth_mean: &[f64; D],
    truth_sd: &[f64; D],
) -> PosteriorCheck {
    let sd = moments.sd();
    let mut mean_error_in_sd = [0.0; D];
    let mut sd_relative_error = [0.0; D];
    let mut passed = moments.count > 0;
    for i in 0..D {
        mean_error_in_sd[i] = (moments.mean[i] - truth_mean[i]) / truth_sd[i];
        sd_relative_error[i] = sd[i] / truth_sd[i] - 1.0;
        // Written so that NaN fails.
        passed &= Real::abs(mean_error_in_sd[i]) <= mean_tol;
        passed &= Real::abs(sd_relative_error[i]) <= sd_tol;
    }
    PosteriorCheck {
        sampler,
        moments,
        accepted,
        failures,
        mean_error_in_sd,
        sd_relative_error,
        passed,
    }
}

/// The QNHMC inference chain: [`QNHMC_WARMUP`] adaptive draws, then the memory
/// freezes and [`QNHMC_DRAWS`] exact draws are passed to `on_draw` with their
/// statistics. Random numbers per draw: one `next_u32` for the step-size
/// jitter, then the sampler's own (D normals, one uniform).
pub fn qnhmc_chain<T: Real>(seed: u64, on_draw: &mut dyn FnMut(&[T; D], &StepStats<T>)) {
    let settings = qnhmc_settings::<T>(Some(QNHMC_WARMUP as u64));
    if let Ok(mut q) = Qnhmc::<T, D, QNHMC_MEMORY>::new(settings, [T::ZERO; D], &Logistic) {
        let mut rng = XorShiftRng::seed_from_u64(seed);
        for t in 0..QNHMC_WARMUP + QNHMC_DRAWS {
            let _ = q.set_step_size(jittered(&mut rng));
            let stats = q.step(&Logistic, &mut rng);
            if t >= QNHMC_WARMUP {
                on_draw(q.position(), &stats);
            }
        }
    }
}

/// The HAMCMC inference chain on minibatches of [`BATCH`] readings: constant
/// step, [`HAMCMC_BURN_IN`] draws discarded, then [`HAMCMC_DRAWS`] draws passed
/// to `on_draw` (`None` for a step error).
pub fn hamcmc_chain<T: Real>(seed: u64, on_draw: &mut dyn FnMut(Option<&[T; D]>)) {
    if let Ok(mut h) = Hamcmc::<T, D, HAMCMC_MEMORY>::new(hamcmc_settings(), [T::ZERO; D]) {
        let mut rng = XorShiftRng::seed_from_u64(seed);
        for t in 0..HAMCMC_BURN_IN + HAMCMC_DRAWS {
            let ok = h.step(&Logistic, &mut rng).is_ok();
            if t >= HAMCMC_BURN_IN {
                on_draw(if ok { Some(h.position()) } else { None });
            }
        }
    }
}

/// Online inference with QNHMC ([`qnhmc_chain`]), judged against the baked
/// posterior with [`QNHMC_MEAN_TOLERANCE`] and [`QNHMC_SD_TOLERANCE`].
pub fn qnhmc_posterior<T: Real>(seed: u64) -> PosteriorCheck {
    let mut moments = Moments::default();
    let (mut accepted, mut failures) = (0, 0);
    qnhmc_chain::<T>(seed, &mut |x, stats| {
        moments.push(x);
        accepted += stats.accepted as u32;
        failures += stats.divergent as u32;
    });
    judge(
        "qnhmc",
        moments,
        accepted,
        failures,
        QNHMC_MEAN_TOLERANCE,
        QNHMC_SD_TOLERANCE,
        &POSTERIOR_MEAN,
        &POSTERIOR_SD,
    )
}

/// Online inference with HAMCMC ([`hamcmc_chain`]; equal weights, ε is
/// constant), judged with [`HAMCMC_MEAN_TOLERANCE`] and [`HAMCMC_SD_TOLERANCE`].
pub fn hamcmc_posterior<T: Real>(seed: u64) -> PosteriorCheck {
    let mut moments = Moments::default();
    let mut failures = 0;
    hamcmc_chain::<T>(seed, &mut |x| match x {
        Some(x) => moments.push(x),
        None => failures += 1,
    });
    let accepted = moments.count;
    judge(
        "hamcmc",
        moments,
        accepted,
        failures,
        HAMCMC_MEAN_TOLERANCE,
        HAMCMC_SD_TOLERANCE,
        &POSTERIOR_MEAN,
        &POSTERIOR_SD,
    )
}

/// The NUTS inference chain with `metric`: [`NUTS_WARMUP`] warm-up draws from
/// β = 0, then [`NUTS_DRAWS`] kept draws passed to `on_draw` with their
/// statistics.
pub fn nuts_chain<T: Real>(
    metric: NutsMetric,
    seed: u64,
    on_draw: &mut dyn FnMut(&[T; D], &NutsStats<T>),
) {
    nuts_run::<T>(
        metric,
        NUTS_WARMUP,
        NUTS_WARMUP + NUTS_DRAWS,
        [T::ZERO; D],
        seed,
        &mut |x, stats, warming_up| {
            if !warming_up {
                on_draw(x, stats);
            }
        },
    );
}

/// Online inference with NUTS ([`nuts_chain`]), judged with
/// [`NUTS_MEAN_TOLERANCE`] and [`NUTS_SD_TOLERANCE`]; `accepted` counts the
/// draws that moved, `failures` the divergent ones.
pub fn nuts_posterior<T: Real>(metric: NutsMetric, seed: u64) -> PosteriorCheck {
    let mut moments = Moments::default();
    let (mut accepted, mut failures) = (0, 0);
    nuts_chain::<T>(metric, seed, &mut |x, stats| {
        moments.push(x);
        accepted += stats.moved as u32;
        failures += stats.divergent as u32;
    });
    judge(
        metric.name(),
        moments,
        accepted,
        failures,
        NUTS_MEAN_TOLERANCE,
        NUTS_SD_TOLERANCE,
        &POSTERIOR_MEAN,
        &POSTERIOR_SD,
    )
}

/// Counter readings around `steps` draws of each sampler after `warmup` draws:
/// `[qnhmc_total, hamcmc_total]` (differences of `counter()`; the counter call
/// itself is included once per step and can be calibrated away by the caller).
pub fn step_costs<T: Real>(counter: &mut dyn FnMut() -> u64, warmup: u32, steps: u32) -> [u64; 2] {
    let mut total = [0u64; 2];
    let settings = qnhmc_settings::<T>(Some(warmup as u64));
    if let Ok(mut q) = Qnhmc::<T, D, QNHMC_MEMORY>::new(settings, [T::ZERO; D], &Logistic) {
        let mut rng = XorShiftRng::seed_from_u64(11);
        for _ in 0..warmup {
            let _ = q.step(&Logistic, &mut rng);
        }
        for _ in 0..steps {
            let start = counter();
            let _ = q.step(&Logistic, &mut rng);
            total[0] = total[0].wrapping_add(counter().wrapping_sub(start));
        }
    }
    if let Ok(mut h) = Hamcmc::<T, D, HAMCMC_MEMORY>::new(hamcmc_settings(), [T::ZERO; D]) {
        let mut rng = XorShiftRng::seed_from_u64(12);
        for _ in 0..warmup {
            let _ = h.step(&Logistic, &mut rng);
        }
        for _ in 0..steps {
            let start = counter();
            let _ = h.step(&Logistic, &mut rng);
            total[1] = total[1].wrapping_add(counter().wrapping_sub(start));
        }
    }
    total
}

/// Counter readings around `steps` NUTS draws after a warm-up of `warmup`
/// draws (Stan's windows, so the step size and metric are the tuned ones), for
/// each [`NutsMetric`]: `[[total, leapfrog steps]; 2]` (the counter call is
/// included once per draw, as in [`step_costs`]).
pub fn nuts_step_costs<T: Real>(
    counter: &mut dyn FnMut() -> u64,
    warmup: u32,
    steps: u32,
) -> [[u64; 2]; 2] {
    let mut out = [[0u64; 2]; 2];
    let [diagonal, lbfgs] = &mut out;
    let _ = with_nuts_diagonal::<T>(warmup, [T::ZERO; D], &mut |chain| {
        *diagonal = time_nuts(chain, counter, 13, warmup, steps)
    });
    let _ = with_nuts_lbfgs::<T>(warmup, [T::ZERO; D], &mut |chain| {
        *lbfgs = time_nuts(chain, counter, 14, warmup, steps)
    });
    out
}

fn time_nuts<T: Real, E: MetricEstimator<T, D>>(
    chain: &mut AdaptiveNuts<T, D, E, NUTS_MAX_DEPTH>,
    counter: &mut dyn FnMut() -> u64,
    seed: u64,
    warmup: u32,
    steps: u32,
) -> [u64; 2] {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    for _ in 0..warmup {
        let _ = chain.step(&Logistic, &mut rng);
    }
    let (mut total, mut leapfrogs) = (0u64, 0u64);
    for _ in 0..steps {
        let start = counter();
        let stats = chain.step(&Logistic, &mut rng);
        total = total.wrapping_add(counter().wrapping_sub(start));
        leapfrogs += stats.leapfrog_steps as u64;
    }
    [total, leapfrogs]
}

/// `size_of` the two samplers as the jobs instantiate them, `[qnhmc, hamcmc]`,
/// for `T`.
pub fn sampler_sizes<T: Real>() -> [usize; 2] {
    [
        core::mem::size_of::<Qnhmc<T, D, QNHMC_MEMORY>>(),
        core::mem::size_of::<Hamcmc<T, D, HAMCMC_MEMORY>>(),
    ]
}

/// The least state each algorithm needs, in scalars of `T` (see docs/EMBEDDED.md):
/// QNHMC: M pairs (2MD) + the trajectory's tentative pairs (2MD, needed because
/// pairs enter only on acceptance) + θ, ∇U, p, θ′, ∇U′ (5D) + U;
/// HAMCMC: M draws (MD) + M − 1 pairs (2(M−1)D) + g = ∇Ũ(θ_{t−M}) (D).
pub const fn minimum_scalars() -> [usize; 2] {
    let m = QNHMC_MEMORY;
    let h = HAMCMC_MEMORY;
    [4 * m * D + 5 * D + 1, h * D + 2 * (h - 1) * D + D]
}

/// `size_of` the NUTS samplers as the jobs instantiate them, for `T`:
/// `[Nuts<T, D, DiagonalMetric, MAX_DEPTH>, NutsDiagonal<T>,
/// Nuts<T, D, LbfgsMetric<T, D, M>, MAX_DEPTH>, NutsLbfgs<T>]` (the kernel,
/// then the kernel with its warm-up).
pub fn nuts_sizes<T: Real>() -> [usize; 4] {
    [
        core::mem::size_of::<Nuts<T, D, DiagonalMetric<T, D>, NUTS_MAX_DEPTH>>(),
        core::mem::size_of::<NutsDiagonal<T>>(),
        core::mem::size_of::<Nuts<T, D, LbfgsMetric<T, D, NUTS_LBFGS_MEMORY>, NUTS_MAX_DEPTH>>(),
        core::mem::size_of::<NutsLbfgs<T>>(),
    ]
}

/// The least state of the NUTS kernels and their warm-ups, in scalars of `T`
/// (see docs/EMBEDDED.md), in the order of [`nuts_sizes`].
///
/// Kernel (iterative tree, Stan's three U-turn checks per merge, velocities
/// recomputed from momenta): the state θ, ∇U, U (2D + 1); the trajectory's two
/// ends and the leaf being built, θ, p, ∇U, U each (3 (3D + 1)); the
/// subtree's candidate θ, ∇U, U (2D + 1); the trajectory's ρ (D); per level of
/// the subtree's binary counter ρ and the momenta at its two ends (3D ×
/// MAX_DEPTH); and the metric: σ² (D) for the diagonal one, the base b (D),
/// the r ≤ 2M orthonormal directions (2MD) and their eigenvalues (2M) for the
/// L-BFGS one.
///
/// Warm-up: dual averaging (μ, H̄, x̄, its count: 4); the diagonal estimate,
/// Welford mean and M2 of θ and of ∇U and a count (4D + 1); for the L-BFGS
/// estimator also the previous θ and ∇U (2D), a pool of M pairs (2MD), the
/// window's last M draws and gradients for the Fisher criterion (2MD) and the
/// candidate metric (D + 2MD + 2M).
pub const fn nuts_minimum_scalars() -> [usize; 4] {
    let m = NUTS_LBFGS_MEMORY;
    let kernel = (2 * D + 1) + 3 * (3 * D + 1) + (2 * D + 1) + D + 3 * D * NUTS_MAX_DEPTH;
    let diagonal = kernel + D;
    let lbfgs = kernel + D + 2 * m * D + 2 * m;
    let warmup = 4 + 4 * D + 1;
    [
        diagonal,
        diagonal + warmup,
        lbfgs,
        lbfgs + warmup + 2 * D + 2 * m * D + 2 * m * D + (D + 2 * m * D + 2 * m),
    ]
}

/// The WebAssembly example's statistic: the mean of β₁ over `steps` QNHMC draws
/// (memory adapting for the first quarter, then frozen; jittered ε as in
/// [`qnhmc_chain`]) from `XorShiftRng::seed_from_u64(seed)`, in `T`'s chain and
/// an f64 running mean.
pub fn chain_mean<T: Real>(seed: u64, steps: u32) -> f64 {
    let settings = qnhmc_settings::<T>(Some((steps / 4) as u64));
    let mut moments = Moments::default();
    if let Ok(mut q) = Qnhmc::<T, D, QNHMC_MEMORY>::new(settings, [T::ZERO; D], &Logistic) {
        let mut rng = XorShiftRng::seed_from_u64(seed);
        for _ in 0..steps {
            let _ = q.set_step_size(jittered(&mut rng));
            let _ = q.step(&Logistic, &mut rng);
            moments.push(q.position());
        }
    }
    moments.mean[1]
}

/// The (seed, steps) pairs `tests/node/expected.json` records [`chain_mean`] for.
pub const WASM_CASES: [(u64, u32); 3] = [(1, 500), (2, 2000), (12345, 300)];
