//! The browser API (feature `web` on wasm32; always compiled on the host):
//! NUTS with its warm-up and the quasi-Newton metric (`AdaptiveNuts` with
//! `LbfgsEstimator`, the C API's defaults, `docs/C_API.md`) on a model of
//! run-time dimension `dim` ≤ [`MAX_DIMENSION`], in a `static` buffer of the
//! module (no allocator), through plain `extern "C"` exports that
//! `web/qnmc.js` wraps.
//!
//! Models ([`MODEL_JS`], [`MODEL_BANANA`], [`MODEL_GAUSSIAN`]): the first is
//! written in JavaScript and reached through the imported function
//! `env.log_density(theta, grad, dim) -> f64` (byte offsets of `dim` f64 in
//! the module's memory: it reads θ, writes ∇ log p(θ) into `grad`, zeroed
//! before the call, and returns log p(θ) up to a constant); the others are
//! compiled into the module. The import exists only in the wasm32 build with
//! the feature; elsewhere [`web_init`] answers [`STATUS_NO_JS_MODEL`].
//!
//! Memory: one chain, [`web_state_size`] bytes (≈ 38 KB) in `.bss`, plus a
//! scratch vector (the initial point in, the position out) and the last
//! draw's statistics, read by JS through [`web_io_ptr`] and
//! [`web_stats_ptr`]. The module is single-threaded: every export checks
//! that no other export is running (a JS model calling back into the module
//! gets [`STATUS_BUSY`]).

use core::cell::UnsafeCell;
use core::mem::{MaybeUninit, size_of};

use qnmc::adaptation::{AdaptiveNuts, LbfgsEstimator, LbfgsEstimatorSettings, WarmupSchedule};
use qnmc::{NutsSettings, Potential};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

/// Largest model dimension the module holds (fixed at build time).
pub const MAX_DIMENSION: usize = 16;
/// Curvature pairs M of the quasi-Newton metric (the C API's default).
pub const LBFGS_MEMORY: usize = 5;
/// Deepest NUTS tree (Stan's default): at most 1023 leapfrog steps a draw.
pub const MAX_TREE_DEPTH: usize = 10;

/// The model written in JavaScript (imported `env.log_density`).
pub const MODEL_JS: u32 = 0;
/// A 2-D banana: θ₁ ~ N(0, 1), θ₂ | θ₁ ~ N(θ₁², 1); mean (0, 1), sd
/// (1, √3) ([`web_model_mean`], [`web_model_sd`]).
pub const MODEL_BANANA: u32 = 1;
/// A correlated Gaussian of any dimension: mean μᵢ = (−1)ⁱ(1 + i/4), sd
/// sᵢ = 1 + (i mod 2)/2, correlation 0.9^|i−j| (AR(1)).
pub const MODEL_GAUSSIAN: u32 = 2;

/// Success.
pub const STATUS_OK: i32 = 0;
/// `qnmc::Error::InvalidSetting` (e.g. 0 warm-up draws are allowed, but not
/// a warm-up the schedule rejects).
pub const STATUS_INVALID_SETTING: i32 = 1;
/// `qnmc::Error::NonFiniteInitialState`: log p or its gradient is not finite
/// at the initial point.
pub const STATUS_NON_FINITE_INITIAL_STATE: i32 = 2;
/// `qnmc::Error::NonFiniteGradient`.
pub const STATUS_NON_FINITE_GRADIENT: i32 = 3;
/// `qnmc::Error::NonFiniteProposal`.
pub const STATUS_NON_FINITE_PROPOSAL: i32 = 4;
/// `dim` is 0, above [`MAX_DIMENSION`], or not the model's (banana: 2).
pub const STATUS_INVALID_DIMENSION: i32 = 8;
/// An unknown model number.
pub const STATUS_INVALID_ARGUMENT: i32 = 9;
/// No chain yet (or its initialisation failed).
pub const STATUS_NOT_INITIALIZED: i32 = 10;
/// A `qnmc::Error` this version does not name.
pub const STATUS_OTHER: i32 = 11;
/// The JS model was asked for but the module has no `env.log_density`
/// import (built without the feature `web`, or on the host).
pub const STATUS_NO_JS_MODEL: i32 = 12;
/// An export was called while another was running (from the JS model).
pub const STATUS_BUSY: i32 = 13;

type Chain = AdaptiveNuts<
    f64,
    MAX_DIMENSION,
    LbfgsEstimator<f64, MAX_DIMENSION, LBFGS_MEMORY>,
    MAX_TREE_DEPTH,
>;

/// Per-draw statistics as JS reads them at [`web_stats_ptr`] (byte offsets
/// in parentheses; `web/qnmc.js` has the same table).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WebStats {
    /// (byte 0) The step size of the draw.
    pub step_size: f64,
    /// (byte 8) Stan's `accept_stat__`.
    pub acceptance: f64,
    /// (byte 16) The Hamiltonian of the new state (Stan's `energy__`).
    pub energy: f64,
    /// (byte 24) H(new) − H(old) at the end of the trajectory.
    pub energy_error: f64,
    /// (byte 32) log p at the new state.
    pub log_density: f64,
    /// (byte 40) Valid doublings of the tree (`treedepth__`).
    pub tree_depth: u32,
    /// (byte 44) Leapfrog steps taken.
    pub leapfrog_steps: u32,
    /// (byte 48) Model evaluations during the draw.
    pub gradient_evaluations: u32,
    /// (byte 52) 1 if the trajectory diverged.
    pub divergent: u32,
    /// (byte 56) 1 if the tree reached [`MAX_TREE_DEPTH`].
    pub reached_max_depth: u32,
    /// (byte 60) 1 if the state changed.
    pub moved: u32,
    /// (byte 64) 1 if this was a warm-up draw (to be discarded).
    pub warmup: u32,
    /// (byte 68) Kept draws so far (after this one).
    pub kept: u32,
}

const NO_STATS: WebStats = WebStats {
    step_size: f64::NAN,
    acceptance: f64::NAN,
    energy: f64::NAN,
    energy_error: f64::NAN,
    log_density: f64::NAN,
    tree_depth: 0,
    leapfrog_steps: 0,
    gradient_evaluations: 0,
    divergent: 0,
    reached_max_depth: 0,
    moved: 0,
    warmup: 0,
    kept: 0,
};

/// The model of a chain, as the core's potential U = −log p.
#[derive(Debug, Clone, Copy)]
struct Target {
    model: u32,
    dimension: usize,
}

const GAUSSIAN_RHO: f64 = 0.9;
const BANANA_CURVATURE: f64 = 1.0;
const BANANA_SD: f64 = 1.0;

fn gaussian_mean(i: usize) -> f64 {
    let magnitude = 1.0 + i as f64 / 4.0;
    if i % 2 == 0 { magnitude } else { -magnitude }
}

fn gaussian_sd(i: usize) -> f64 {
    1.0 + (i % 2) as f64 / 2.0
}

#[cfg(all(target_arch = "wasm32", feature = "web"))]
mod js {
    #[link(wasm_import_module = "env")]
    unsafe extern "C" {
        /// The JS model: reads θ at `theta`, writes ∇ log p at `grad` (`dim`
        /// f64 each, byte offsets into the module's memory), returns log p.
        pub fn log_density(theta: *const f64, grad: *mut f64, dim: usize) -> f64;
    }
}

const HAS_JS_MODEL: bool = cfg!(all(target_arch = "wasm32", feature = "web"));

impl Potential<f64, MAX_DIMENSION> for Target {
    fn potential_and_gradient(
        &self,
        x: &[f64; MAX_DIMENSION],
        g: &mut [f64; MAX_DIMENSION],
    ) -> f64 {
        let n = self.dimension.min(MAX_DIMENSION);
        match self.model {
            MODEL_BANANA => {
                // U = θ₁²/2 + (θ₂ − bθ₁²)²/(2s²)
                let r = (x[1] - BANANA_CURVATURE * x[0] * x[0]) / (BANANA_SD * BANANA_SD);
                let residual = x[1] - BANANA_CURVATURE * x[0] * x[0];
                g[0] = x[0] - 2.0 * BANANA_CURVATURE * x[0] * r;
                g[1] = r;
                0.5 * x[0] * x[0] + 0.5 * residual * r
            }
            MODEL_GAUSSIAN => {
                // z = (θ − μ)/s, U = zᵀQz/2 with Q the AR(1) precision:
                // (1 − ρ²)Q is tridiagonal, 1 + ρ² inside, 1 at both ends, −ρ off.
                let rho = GAUSSIAN_RHO;
                let scale = 1.0 / (1.0 - rho * rho);
                let z = |i: usize| (x[i] - gaussian_mean(i)) / gaussian_sd(i);
                let mut potential = 0.0;
                for (i, gi) in g.iter_mut().enumerate().take(n) {
                    let zi = z(i);
                    let inner = if i == 0 || i + 1 == n {
                        1.0
                    } else {
                        1.0 + rho * rho
                    };
                    let mut qz = inner * zi;
                    if i > 0 {
                        qz -= rho * z(i - 1);
                    }
                    if i + 1 < n {
                        qz -= rho * z(i + 1);
                    }
                    if n == 1 {
                        qz = zi * (1.0 - rho * rho);
                    }
                    qz *= scale;
                    *gi = qz / gaussian_sd(i);
                    potential += 0.5 * zi * qz;
                }
                potential
            }
            _ => js_potential(x, g, n),
        }
    }
}

#[cfg(all(target_arch = "wasm32", feature = "web"))]
fn js_potential(x: &[f64; MAX_DIMENSION], g: &mut [f64; MAX_DIMENSION], n: usize) -> f64 {
    g[..n].iter_mut().for_each(|v| *v = 0.0);
    // SAFETY: the import reads n ≤ MAX_DIMENSION values at `x` and writes n
    // at `g` (the contract of `env.log_density` above); it cannot reach the
    // chain through an export while this runs (`STATUS_BUSY`).
    let log_p = unsafe { js::log_density(x.as_ptr(), g.as_mut_ptr(), n) };
    g[..n].iter_mut().for_each(|v| *v = -*v);
    -log_p
}

#[cfg(not(all(target_arch = "wasm32", feature = "web")))]
fn js_potential(_: &[f64; MAX_DIMENSION], _: &mut [f64; MAX_DIMENSION], _: usize) -> f64 {
    f64::NAN
}

/// Everything the module keeps between calls.
struct State {
    /// True while an export runs.
    busy: bool,
    /// True once `chain` holds a sampler.
    ready: bool,
    target: Target,
    rng: Option<XorShiftRng>,
    kept: u32,
    /// The initial point in, the position out (JS: `web_io_ptr`).
    io: [f64; MAX_DIMENSION],
    stats: WebStats,
    chain: MaybeUninit<Chain>,
}

struct Global(UnsafeCell<State>);

// SAFETY: wasm32 (without the atomics feature) has one thread; on the host
// the exports are `unsafe` with the contract "never concurrently", and the
// `busy` flag turns a re-entrant call into `STATUS_BUSY`.
unsafe impl Sync for Global {}

static STATE: Global = Global(UnsafeCell::new(State {
    busy: false,
    ready: false,
    target: Target {
        model: MODEL_GAUSSIAN,
        dimension: 2,
    },
    rng: None,
    kept: 0,
    io: [0.0; MAX_DIMENSION],
    stats: NO_STATS,
    chain: MaybeUninit::uninit(),
}));

/// Runs `f` on the state unless another export is running.
fn with_state<R>(busy: R, f: impl FnOnce(&mut State) -> R) -> R {
    let raw = STATE.0.get();
    // SAFETY: single-threaded (see `Global`); the flag is read and written
    // through the raw pointer, never while a `&mut State` exists.
    unsafe {
        if (*raw).busy {
            return busy;
        }
        (*raw).busy = true;
    }
    // SAFETY: the only reference to the state while `busy` is set; a JS
    // model that calls back into an export during `f` returns above.
    let result = f(unsafe { &mut *raw });
    // SAFETY: as above; the reference given to `f` is gone.
    unsafe { (*raw).busy = false };
    result
}

fn code(error: qnmc::Error) -> i32 {
    match error {
        qnmc::Error::InvalidSetting { .. } => STATUS_INVALID_SETTING,
        qnmc::Error::NonFiniteInitialState => STATUS_NON_FINITE_INITIAL_STATE,
        qnmc::Error::NonFiniteGradient => STATUS_NON_FINITE_GRADIENT,
        qnmc::Error::NonFiniteProposal => STATUS_NON_FINITE_PROPOSAL,
        _ => STATUS_OTHER,
    }
}

fn init(state: &mut State, model: u32, dim: u32, seed: u64, warmup: u32, delta: f64) -> i32 {
    state.ready = false;
    state.kept = 0;
    state.stats = NO_STATS;
    let dimension = dim as usize;
    match model {
        MODEL_JS if !HAS_JS_MODEL => return STATUS_NO_JS_MODEL,
        MODEL_JS | MODEL_GAUSSIAN => {
            if dimension == 0 || dimension > MAX_DIMENSION {
                return STATUS_INVALID_DIMENSION;
            }
        }
        MODEL_BANANA => {
            if dimension != 2 {
                return STATUS_INVALID_DIMENSION;
            }
        }
        _ => return STATUS_INVALID_ARGUMENT,
    }
    let target = Target { model, dimension };
    let mut start = [0.0; MAX_DIMENSION];
    start[..dimension].copy_from_slice(&state.io[..dimension]);
    let schedule = match WarmupSchedule::stan(u64::from(warmup)) {
        Ok(schedule) => schedule,
        Err(error) => return code(error),
    };
    let estimator = LbfgsEstimatorSettings::new(0.0);
    let built = Chain::init_in_place(
        &mut state.chain,
        NutsSettings::new(0.5),
        schedule,
        estimator,
        &start,
        &target,
    );
    let chain = match built {
        Ok(chain) => chain,
        Err(error) => return code(error),
    };
    if let Err(error) = chain
        .set_dimension(dimension)
        .and_then(|()| chain.set_target_acceptance(delta))
    {
        return code(error);
    }
    state.target = target;
    state.rng = Some(XorShiftRng::seed_from_u64(seed));
    state.ready = true;
    STATUS_OK
}

fn step(state: &mut State) -> i32 {
    if !state.ready {
        return STATUS_NOT_INITIALIZED;
    }
    let Some(rng) = state.rng.as_mut() else {
        return STATUS_NOT_INITIALIZED;
    };
    // SAFETY: `ready` is set only after `init_in_place` built the chain in
    // this slot.
    let chain = unsafe { state.chain.assume_init_mut() };
    let warmup = chain.is_warming_up();
    let s = chain.step(&state.target, rng);
    if !warmup {
        state.kept = state.kept.saturating_add(1);
    }
    let n = state.target.dimension;
    state.io[..n].copy_from_slice(&chain.position()[..n]);
    state.stats = WebStats {
        step_size: s.step_size,
        acceptance: s.acceptance_statistic,
        energy: s.energy,
        energy_error: s.energy_error,
        log_density: -chain.sampler().potential(),
        tree_depth: s.tree_depth,
        leapfrog_steps: s.leapfrog_steps,
        gradient_evaluations: s.gradient_evaluations,
        divergent: u32::from(s.divergent),
        reached_max_depth: u32::from(s.reached_max_depth),
        moved: u32::from(s.moved),
        warmup: u32::from(warmup),
        kept: state.kept,
    };
    STATUS_OK
}

/// Builds a chain for `model` of dimension `dim`, started at the first `dim`
/// values of the scratch vector ([`web_io_ptr`]), with `warmup` warm-up
/// draws (Stan's windows, the quasi-Newton metric learned from an L-BFGS
/// start), first step size 0.5, target acceptance `delta` in (0, 1) (Stan:
/// 0.8), the generator
/// `XorShiftRng::seed_from_u64(seed)` (a `BigInt` in JS). Replaces any
/// earlier chain; on error no chain is left.
///
/// # Safety
/// Never called concurrently (wasm32: always true).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn web_init(model: u32, dim: u32, seed: u64, warmup: u32, delta: f64) -> i32 {
    with_state(STATUS_BUSY, |state| {
        init(state, model, dim, seed, warmup, delta)
    })
}

/// One draw (a warm-up draw while [`web_is_warming_up`] says so): the new
/// position is copied to the scratch vector ([`web_io_ptr`]), the draw's
/// statistics to [`web_stats_ptr`]. A divergence is a statistic, not an
/// error.
///
/// # Safety
/// Never called concurrently (wasm32: always true).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn web_step() -> i32 {
    with_state(STATUS_BUSY, step)
}

/// 1 while the next draw is a warm-up draw, 0 after (and without a chain).
///
/// # Safety
/// Never called concurrently (wasm32: always true).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn web_is_warming_up() -> i32 {
    with_state(0, |state| {
        if !state.ready {
            return 0;
        }
        // SAFETY: `ready`: built by `init_in_place`.
        i32::from(unsafe { state.chain.assume_init_ref() }.is_warming_up())
    })
}

/// Byte offset of the scratch vector ([`MAX_DIMENSION`] f64): write the
/// initial point there before [`web_init`]; it holds the position after
/// every [`web_step`].
///
/// # Safety
/// Never called concurrently (wasm32: always true).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn web_io_ptr() -> *mut f64 {
    // SAFETY: a field address, no reference is formed.
    unsafe { core::ptr::addr_of_mut!((*STATE.0.get()).io).cast() }
}

/// Byte offset of the last draw's [`WebStats`].
///
/// # Safety
/// Never called concurrently (wasm32: always true).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn web_stats_ptr() -> *const WebStats {
    // SAFETY: a field address, no reference is formed.
    unsafe { core::ptr::addr_of!((*STATE.0.get()).stats) }
}

/// `size_of` [`WebStats`] (72), for the JS side to check its offsets.
#[unsafe(no_mangle)]
pub extern "C" fn web_stats_size() -> u32 {
    size_of::<WebStats>() as u32
}

/// `size_of` the chain's state (the sampler, its warm-up and metric).
#[unsafe(no_mangle)]
pub extern "C" fn web_state_size() -> u32 {
    size_of::<Chain>() as u32
}

/// [`MAX_DIMENSION`].
#[unsafe(no_mangle)]
pub extern "C" fn web_max_dimension() -> u32 {
    MAX_DIMENSION as u32
}

/// [`LBFGS_MEMORY`].
#[unsafe(no_mangle)]
pub extern "C" fn web_lbfgs_memory() -> u32 {
    LBFGS_MEMORY as u32
}

/// [`MAX_TREE_DEPTH`].
#[unsafe(no_mangle)]
pub extern "C" fn web_max_tree_depth() -> u32 {
    MAX_TREE_DEPTH as u32
}

/// 1 if the module imports `env.log_density` (the JS model), else 0.
#[unsafe(no_mangle)]
pub extern "C" fn web_has_js_model() -> u32 {
    u32::from(HAS_JS_MODEL)
}

/// The exact posterior mean of coordinate `i` of a Rust model of dimension
/// `dim` (NaN for the JS model or out of range).
#[unsafe(no_mangle)]
pub extern "C" fn web_model_mean(model: u32, dim: u32, i: u32) -> f64 {
    match (model, dim, i) {
        (MODEL_BANANA, 2, 0) => 0.0,
        // E θ₂ = b E θ₁² = b
        (MODEL_BANANA, 2, 1) => BANANA_CURVATURE,
        (MODEL_GAUSSIAN, _, _) if i < dim && dim as usize <= MAX_DIMENSION => {
            gaussian_mean(i as usize)
        }
        _ => f64::NAN,
    }
}

/// The exact posterior sd of coordinate `i` (NaN as [`web_model_mean`]).
#[unsafe(no_mangle)]
pub extern "C" fn web_model_sd(model: u32, dim: u32, i: u32) -> f64 {
    match (model, dim, i) {
        (MODEL_BANANA, 2, 0) => 1.0,
        // Var θ₂ = b² Var θ₁² + s² = 2b² + s² = 3 (b = 1, s = 1)
        (MODEL_BANANA, 2, 1) => 1.732_050_807_568_877_2,
        (MODEL_GAUSSIAN, _, _) if i < dim && dim as usize <= MAX_DIMENSION => {
            gaussian_sd(i as usize)
        }
        _ => f64::NAN,
    }
}
