//! NUTS with its warm-up: `qnmc::adaptation::AdaptiveNuts` in storage of
//! [`MAX_DIMENSION`], moving the caller's `dim` coordinates
//! (`AdaptiveNuts::set_dimension`), built in the caller's buffer
//! (`AdaptiveNuts::init_in_place`).

use core::ffi::{c_int, c_void};
use core::mem::{MaybeUninit, align_of, size_of};
use core::ptr::addr_of_mut;

use qnmc::NutsSettings;
use qnmc::adaptation::{
    AdaptiveNuts, DiagonalEstimator, IdentityEstimator, LbfgsEstimator, LbfgsEstimatorSettings,
    MetricEstimator, WarmupSchedule,
};
use qnmc::in_place::ZeroValid;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use crate::state::{
    CTarget, FfiReal, Header, KIND_NUTS, LogDensity, QnmcStats, check_buffer, check_pointer,
    read_initial, read_magic, tag, to_code, write_position, write_stats,
};
use crate::{
    LBFGS_MEMORY, MAX_DIMENSION, MAX_TREE_DEPTH, QNMC_F32, QNMC_F64, QNMC_METRIC_DIAGONAL,
    QNMC_METRIC_IDENTITY, QNMC_METRIC_QUASI_NEWTON, Status,
};

/// Settings of NUTS and its warm-up (`qnmc_nuts_settings` in C); start from
/// [`qnmc_nuts_settings_default`].
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QnmcNutsSettings {
    /// `QNMC_METRIC_QUASI_NEWTON` (default), `QNMC_METRIC_DIAGONAL` or
    /// `QNMC_METRIC_IDENTITY`.
    pub metric: c_int,
    /// Warm-up draws (Stan's windows: buffers 75 and 50, first slow window
    /// 25); 0: no adaptation, the initial step size and M = I are kept.
    pub warmup_draws: u32,
    /// At most 2^depth − 1 leapfrog steps per draw, 1..=`qnmc_max_tree_depth()`.
    pub max_tree_depth: u32,
    /// Quasi-Newton metric: most curvature pairs used, 1..=`qnmc_lbfgs_memory()`
    /// (more is clamped to it).
    pub max_pairs: u32,
    /// Quasi-Newton metric: 1 to start the warm-up with an L-BFGS
    /// optimisation from the initial point, 0 not to.
    pub optimize: c_int,
    /// Warm-up ends early after this many quiet slow windows kept the metric
    /// (0: never).
    pub early_end_windows: u32,
    /// First step size (a guess: the warm-up searches from it), > 0.
    pub initial_step_size: f64,
    /// Target acceptance δ of dual averaging, in (0, 1).
    pub target_acceptance: f64,
    /// An energy error above this (> 0) is a divergence.
    pub max_energy_error: f64,
    /// Quasi-Newton metric: directions that change the metric by less than
    /// a factor e^tolerance are dropped (≥ 0).
    pub rank_tolerance: f64,
    /// After warm-up, each step size uniform on ((1 − j)ε, (1 + j)ε], j in [0, 1).
    pub jitter: f64,
}

impl Default for QnmcNutsSettings {
    /// The firmware example's NUTS (`firmware-example/src/job.rs`): quasi-
    /// Newton metric learned by `LbfgsEstimatorSettings::new(0)` (rank
    /// tolerance 0, every pair, L-BFGS start), Stan's windows, first step
    /// size 0.5, δ = 0.8, divergence threshold 1000, no jitter, no early
    /// end; 1000 warm-up draws and Stan's maximum tree depth 10 (the
    /// firmware uses 6 to fit 16 KiB of RAM).
    fn default() -> Self {
        QnmcNutsSettings {
            metric: QNMC_METRIC_QUASI_NEWTON,
            warmup_draws: 1000,
            max_tree_depth: 10.min(MAX_TREE_DEPTH as u32),
            max_pairs: LBFGS_MEMORY as u32,
            optimize: 1,
            early_end_windows: 0,
            initial_step_size: 0.5,
            target_acceptance: 0.8,
            max_energy_error: 1000.0,
            rank_tolerance: 0.0,
            jitter: 0.0,
        }
    }
}

/// The quasi-Newton metric's estimator.
pub type QuasiNewton<T> = LbfgsEstimator<T, MAX_DIMENSION, LBFGS_MEMORY>;
/// The diagonal metric's estimator.
pub type Diagonal<T> = DiagonalEstimator<T, MAX_DIMENSION>;
/// The sampler a state holds.
pub type Chain<T, E> = AdaptiveNuts<T, MAX_DIMENSION, E, MAX_TREE_DEPTH>;

/// A NUTS state: header, generator, sampler.
#[repr(C)]
pub struct NutsState<T, E: MetricEstimator<T, MAX_DIMENSION>>
where
    T: qnmc::Real,
{
    header: Header<T>,
    rng: XorShiftRng,
    chain: Chain<T, E>,
}

/// The metric estimators of the API.
pub(crate) trait FfiEstimator<T: FfiReal>:
    MetricEstimator<T, MAX_DIMENSION> + ZeroValid + Sized
{
    const METRIC: c_int;
    fn settings(settings: &QnmcNutsSettings) -> Result<Self::Settings, Status>;
}

impl<T: FfiReal> FfiEstimator<T> for QuasiNewton<T> {
    const METRIC: c_int = QNMC_METRIC_QUASI_NEWTON;
    fn settings(s: &QnmcNutsSettings) -> Result<LbfgsEstimatorSettings<T>, Status> {
        if s.max_pairs == 0 || !(s.optimize == 0 || s.optimize == 1) {
            return Err(Status::InvalidSetting);
        }
        let mut settings = LbfgsEstimatorSettings::new(T::from_f64(s.rank_tolerance));
        settings.max_pairs = s.max_pairs as usize;
        settings.optimize = s.optimize == 1;
        Ok(settings)
    }
}

impl<T: FfiReal> FfiEstimator<T> for Diagonal<T> {
    const METRIC: c_int = QNMC_METRIC_DIAGONAL;
    fn settings(_: &QnmcNutsSettings) -> Result<(), Status> {
        Ok(())
    }
}

impl<T: FfiReal> FfiEstimator<T> for IdentityEstimator {
    const METRIC: c_int = QNMC_METRIC_IDENTITY;
    fn settings(_: &QnmcNutsSettings) -> Result<(), Status> {
        Ok(())
    }
}

const fn nuts_tag<T: FfiReal, E: FfiEstimator<T> + MetricEstimator<T, MAX_DIMENSION>>() -> u64 {
    tag(KIND_NUTS, T::SCALAR, E::METRIC)
}

/// Builds the sampler in `buffer` (checked here).
///
/// # Safety
/// `buffer` points to `buffer_size` writable bytes, `initial` to `dimension`
/// values; the callback honours its contract.
#[allow(clippy::too_many_arguments)]
unsafe fn init<T: FfiReal, E: FfiEstimator<T> + MetricEstimator<T, MAX_DIMENSION>>(
    buffer: *mut c_void,
    buffer_size: usize,
    settings: &QnmcNutsSettings,
    seed: u64,
    initial: *const T,
    dimension: usize,
    log_density: Option<LogDensity<T>>,
    context: *mut c_void,
) -> Result<(), Status>
where
    <E as MetricEstimator<T, MAX_DIMENSION>>::Metric: ZeroValid,
{
    check_buffer(
        buffer,
        buffer_size,
        size_of::<NutsState<T, E>>(),
        align_of::<NutsState<T, E>>(),
    )?;
    let log_density = log_density.ok_or(Status::NullPointer)?;
    // SAFETY: the caller's contract.
    let start = unsafe { read_initial(initial, dimension)? };
    let estimator = E::settings(settings)?;
    let mut nuts_settings = NutsSettings::new(T::from_f64(settings.initial_step_size));
    nuts_settings.max_tree_depth = settings.max_tree_depth;
    nuts_settings.max_energy_error = T::from_f64(settings.max_energy_error);
    let schedule = WarmupSchedule::stan(u64::from(settings.warmup_draws))?;
    let state = buffer.cast::<NutsState<T, E>>();
    let header = Header {
        magic: nuts_tag::<T, E>(),
        dimension,
        log_density: Some(log_density),
        context,
    };
    let target = CTarget::new(&header, log_density, false);
    // SAFETY: `state` is aligned and large enough (checked); the slot is the
    // `chain` field, which `init_in_place` fills before it is read.
    let slot = unsafe { &mut *addr_of_mut!((*state).chain).cast::<MaybeUninit<Chain<T, E>>>() };
    let chain =
        Chain::<T, E>::init_in_place(slot, nuts_settings, schedule, estimator, &start, &target)?;
    chain.set_dimension(dimension)?;
    chain.set_target_acceptance(T::from_f64(settings.target_acceptance))?;
    chain.set_jitter(T::from_f64(settings.jitter))?;
    chain.set_early_end(settings.early_end_windows);
    // SAFETY: fields of the checked buffer; the magic goes last.
    unsafe {
        addr_of_mut!((*state).rng).write(XorShiftRng::seed_from_u64(seed));
        addr_of_mut!((*state).header).write(header);
    }
    Ok(())
}

fn stats_of<T: FfiReal, E: FfiEstimator<T> + MetricEstimator<T, MAX_DIMENSION>>(
    state: &mut NutsState<T, E>,
    log_density: LogDensity<T>,
) -> QnmcStats {
    let target = CTarget::new(&state.header, log_density, false);
    let warmup = state.chain.is_warming_up();
    let s = state.chain.step(&target, &mut state.rng);
    QnmcStats {
        step_size: s.step_size.to_f64(),
        acceptance: s.acceptance_statistic.to_f64(),
        energy: s.energy.to_f64(),
        energy_error: s.energy_error.to_f64(),
        log_density: (-state.chain.sampler().potential()).to_f64(),
        tree_depth: s.tree_depth,
        leapfrog_steps: s.leapfrog_steps,
        gradient_evaluations: s.gradient_evaluations,
        divergent: i32::from(s.divergent),
        reached_max_depth: i32::from(s.reached_max_depth),
        accepted: i32::from(s.moved),
        warmup: i32::from(warmup),
    }
}

/// Calls `$f::<T, E>($state as &mut NutsState<T, E>, ...)` for the state's
/// type, after checking its magic and alignment.
macro_rules! dispatch {
    ($state:expr, $scalar:ty, |$s:ident| $body:expr) => {{
        // SAFETY: the caller's contract (a buffer passed to an init function).
        let magic = unsafe { read_magic($state)? };
        dispatch!(@arm magic, $state, $scalar, QuasiNewton<$scalar>, |$s| $body,
            dispatch!(@arm magic, $state, $scalar, Diagonal<$scalar>, |$s| $body,
                dispatch!(@arm magic, $state, $scalar, IdentityEstimator, |$s| $body,
                    Err(Status::NotInitialized))))
    }};
    (@arm $magic:ident, $state:expr, $scalar:ty, $e:ty, |$s:ident| $body:expr, $else:expr) => {
        if $magic == nuts_tag::<$scalar, $e>() {
            let pointer = $state.cast::<NutsState<$scalar, $e>>();
            if !pointer.is_aligned() {
                return Err(Status::Misaligned);
            }
            // SAFETY: the magic says an init of this type succeeded here.
            let $s = unsafe { &mut *pointer.cast_mut() };
            $body
        } else {
            $else
        }
    };
}

/// Both scalars: `$body` with `$s` the state, whichever its scalar.
macro_rules! dispatch_any {
    ($state:expr, |$s:ident| $body:expr) => {{
        // SAFETY: the caller's contract.
        let magic = unsafe { read_magic($state)? };
        if magic & 0xff00 == (QNMC_F32 as u64) << 8 {
            dispatch!($state, f32, |$s| $body)
        } else {
            dispatch!($state, f64, |$s| $body)
        }
    }};
}

fn step_any(state: *mut c_void, stats: *mut QnmcStats) -> Result<(), Status> {
    check_pointer(stats.cast_const())?;
    let result = dispatch_any!(state.cast_const(), |s| {
        let log_density = s.header.log_density.ok_or(Status::NotInitialized)?;
        Ok(stats_of(s, log_density))
    })?;
    // SAFETY: checked above; the caller's contract.
    unsafe { write_stats(stats, result) };
    Ok(())
}

fn is_warming_up(state: *const c_void, out: *mut c_int) -> Result<(), Status> {
    check_pointer(out.cast_const())?;
    let warm = dispatch_any!(state, |s| Ok(s.chain.is_warming_up()))?;
    // SAFETY: checked above; the caller's contract.
    unsafe { out.write(c_int::from(warm)) };
    Ok(())
}

/// Size in bytes of a NUTS state of `scalar` (`QNMC_F64`, `QNMC_F32`) and
/// `metric`; 0 for an unknown scalar or metric.
#[unsafe(no_mangle)]
pub extern "C" fn qnmc_nuts_state_size(scalar: c_int, metric: c_int) -> usize {
    layout(scalar, metric).0
}

/// Alignment in bytes a NUTS state buffer needs; 0 for an unknown scalar or
/// metric.
#[unsafe(no_mangle)]
pub extern "C" fn qnmc_nuts_state_align(scalar: c_int, metric: c_int) -> usize {
    layout(scalar, metric).1
}

fn layout(scalar: c_int, metric: c_int) -> (usize, usize) {
    fn of<T>() -> (usize, usize) {
        (size_of::<T>(), align_of::<T>())
    }
    match (scalar, metric) {
        (QNMC_F64, QNMC_METRIC_QUASI_NEWTON) => of::<NutsState<f64, QuasiNewton<f64>>>(),
        (QNMC_F64, QNMC_METRIC_DIAGONAL) => of::<NutsState<f64, Diagonal<f64>>>(),
        (QNMC_F64, QNMC_METRIC_IDENTITY) => of::<NutsState<f64, IdentityEstimator>>(),
        (QNMC_F32, QNMC_METRIC_QUASI_NEWTON) => of::<NutsState<f32, QuasiNewton<f32>>>(),
        (QNMC_F32, QNMC_METRIC_DIAGONAL) => of::<NutsState<f32, Diagonal<f32>>>(),
        (QNMC_F32, QNMC_METRIC_IDENTITY) => of::<NutsState<f32, IdentityEstimator>>(),
        _ => (0, 0),
    }
}

/// Writes the default settings ([`QnmcNutsSettings::default`]).
///
/// # Safety
/// `settings` is null (an error) or points to a writable `qnmc_nuts_settings`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qnmc_nuts_settings_default(settings: *mut QnmcNutsSettings) -> c_int {
    to_code(check_pointer(settings.cast_const()).map(|()| {
        // SAFETY: checked; the caller's contract.
        unsafe { settings.write(QnmcNutsSettings::default()) }
    }))
}

fn read_settings(settings: *const QnmcNutsSettings) -> Result<QnmcNutsSettings, Status> {
    if settings.is_null() {
        return Ok(QnmcNutsSettings::default());
    }
    check_pointer(settings)?;
    // SAFETY: checked; the caller's contract (any bits are valid settings).
    Ok(unsafe { settings.read() })
}

/// [`init`] for the metric the settings name.
///
/// # Safety
/// As [`init`]; `settings` is null or points to a `qnmc_nuts_settings`.
macro_rules! init_metric {
    ($name:ident, $t:ty) => {
        #[allow(clippy::too_many_arguments)]
        unsafe fn $name(
            buffer: *mut c_void,
            buffer_size: usize,
            settings: *const QnmcNutsSettings,
            seed: u64,
            initial: *const $t,
            dimension: usize,
            log_density: Option<LogDensity<$t>>,
            context: *mut c_void,
        ) -> Result<(), Status> {
            let s = read_settings(settings)?;
            let (b, n, x, f, c) = (buffer, buffer_size, initial, log_density, context);
            // SAFETY: the caller's contract, passed on.
            unsafe {
                match s.metric {
                    QNMC_METRIC_QUASI_NEWTON => {
                        init::<$t, QuasiNewton<$t>>(b, n, &s, seed, x, dimension, f, c)
                    }
                    QNMC_METRIC_DIAGONAL => {
                        init::<$t, Diagonal<$t>>(b, n, &s, seed, x, dimension, f, c)
                    }
                    QNMC_METRIC_IDENTITY => {
                        init::<$t, IdentityEstimator>(b, n, &s, seed, x, dimension, f, c)
                    }
                    _ => {
                        // An old state in the buffer must not stay usable.
                        let _ = check_buffer(buffer, buffer_size, usize::MAX, align_of::<u64>());
                        Err(Status::InvalidArgument)
                    }
                }
            }
        }
    };
}

init_metric!(init_metric_f64, f64);
init_metric!(init_metric_f32, f32);

macro_rules! nuts_init {
    ($(#[$doc:meta])* $name:ident, $init_metric:ident, $t:ty) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// `buffer` points to `buffer_size` writable bytes, `initial` to `dim`
        /// values, `settings` is null or points to a `qnmc_nuts_settings`;
        /// `log_density` honours its contract (`qnmc.h`).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            buffer: *mut c_void,
            buffer_size: usize,
            settings: *const QnmcNutsSettings,
            seed: u64,
            initial: *const $t,
            dim: usize,
            log_density: Option<LogDensity<$t>>,
            ctx: *mut c_void,
        ) -> c_int {
            // SAFETY: the caller's contract, passed on.
            let run = unsafe {
                $init_metric(buffer, buffer_size, settings, seed, initial, dim, log_density, ctx)
            };
            to_code(run)
        }
    };
}

nuts_init!(
    /// Builds NUTS with its warm-up for an f64 model of dimension `dim` in
    /// `buffer` (at least `qnmc_nuts_state_size(QNMC_F64, metric)` bytes,
    /// aligned to `qnmc_nuts_state_align`), started at `initial`, with the
    /// generator seeded by `seed`; `settings` null means the defaults. The
    /// callback is evaluated at `initial`.
    qnmc_nuts_init_f64,
    init_metric_f64,
    f64
);
nuts_init!(
    /// [`qnmc_nuts_init_f64`] for an f32 model.
    qnmc_nuts_init_f32,
    init_metric_f32,
    f32
);

/// One draw (a warm-up draw while `qnmc_nuts_is_warming_up` says so), its
/// statistics written to `stats`. f64 and f32 states alike.
///
/// # Safety
/// `state` is null or a buffer passed to `qnmc_nuts_init_*`; `stats` is null
/// or points to a writable `qnmc_stats`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qnmc_nuts_step(state: *mut c_void, stats: *mut QnmcStats) -> c_int {
    to_code(step_any(state, stats))
}

/// Writes 1 to `warming_up` if the next draw is a warm-up draw, else 0.
///
/// # Safety
/// `state` is null or a buffer passed to `qnmc_nuts_init_*`; `warming_up` is
/// null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qnmc_nuts_is_warming_up(
    state: *const c_void,
    warming_up: *mut c_int,
) -> c_int {
    to_code(is_warming_up(state, warming_up))
}

macro_rules! nuts_position {
    ($(#[$doc:meta])* $name:ident, $t:ty) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// `state` is null or a buffer passed to `qnmc_nuts_init_*`; `out` is
        /// null or points to `len` writable values.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(state: *const c_void, out: *mut $t, len: usize) -> c_int {
            let run = || -> Result<(), Status> {
                dispatch!(state, $t, |s| {
                    // SAFETY: the caller's contract.
                    unsafe { write_position(s.chain.position(), s.header.dimension, out, len) }
                })
            };
            to_code(run())
        }
    };
}

nuts_position!(
    /// Copies the current position (`dim` values; `len` ≥ `dim`) of an f64
    /// state to `out`.
    qnmc_nuts_position_f64,
    f64
);
nuts_position!(
    /// Copies the current position of an f32 state to `out`.
    qnmc_nuts_position_f32,
    f32
);
