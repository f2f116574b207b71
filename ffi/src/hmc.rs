//! Plain HMC (`qnmc::Hmc`, identity metric, fixed step size and number of
//! leapfrog steps, no warm-up). `Hmc` moves all of its storage, so below
//! [`MAX_DIMENSION`] the coordinates from `dim` on are independent N(0, 1)
//! that the model never sees (they cost O(MAX_DIMENSION) per leapfrog step
//! and use random numbers: the chain equals Rust's `Hmc<T, MAX_DIMENSION>`
//! on the same padded target, bit for bit).

use core::ffi::{c_int, c_void};
use core::mem::{align_of, size_of};
use core::ptr::addr_of_mut;

use qnmc::{Hmc, HmcSettings};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use crate::state::{
    CTarget, FfiReal, Header, KIND_HMC, LogDensity, QnmcStats, check_buffer, check_pointer,
    read_initial, read_magic, tag, to_code, write_position, write_stats,
};
use crate::{MAX_DIMENSION, QNMC_F32, QNMC_F64, Status};

/// An HMC state: header, generator, log p of the current state, sampler.
#[repr(C)]
pub struct HmcState<T> {
    header: Header<T>,
    rng: XorShiftRng,
    log_density: T,
    sampler: Hmc<T, MAX_DIMENSION>,
}

const fn hmc_tag<T: FfiReal>() -> u64 {
    tag(KIND_HMC, T::SCALAR, 0)
}

/// # Safety
/// `buffer` points to `buffer_size` writable bytes, `initial` to `dimension`
/// values; the callback honours its contract.
#[allow(clippy::too_many_arguments)]
unsafe fn init<T: FfiReal>(
    buffer: *mut c_void,
    buffer_size: usize,
    step_size: f64,
    leapfrog_steps: u32,
    seed: u64,
    initial: *const T,
    dimension: usize,
    log_density: Option<LogDensity<T>>,
    context: *mut c_void,
) -> Result<(), Status> {
    check_buffer(
        buffer,
        buffer_size,
        size_of::<HmcState<T>>(),
        align_of::<HmcState<T>>(),
    )?;
    let log_density = log_density.ok_or(Status::NullPointer)?;
    // SAFETY: the caller's contract.
    let start = unsafe { read_initial(initial, dimension)? };
    let header = Header {
        magic: hmc_tag::<T>(),
        dimension,
        log_density: Some(log_density),
        context,
    };
    let target = CTarget::new(&header, log_density, dimension < MAX_DIMENSION);
    let settings = HmcSettings::new(T::from_f64(step_size), leapfrog_steps);
    // `Hmc` has no in-place constructor: it is built on the stack (6 vectors
    // of MAX_DIMENSION) and moved into the buffer.
    let sampler = Hmc::new(settings, start, &target)?;
    let state = buffer.cast::<HmcState<T>>();
    // SAFETY: fields of the checked buffer; the magic goes last.
    unsafe {
        addr_of_mut!((*state).sampler).write(sampler);
        addr_of_mut!((*state).log_density).write(target.last.get());
        addr_of_mut!((*state).rng).write(XorShiftRng::seed_from_u64(seed));
        addr_of_mut!((*state).header).write(header);
    }
    Ok(())
}

/// The state behind `state`, checked.
///
/// # Safety
/// `state` is null or a buffer passed to `qnmc_hmc_init_*`.
unsafe fn state_of<'a, T: FfiReal>(state: *const c_void) -> Result<&'a mut HmcState<T>, Status> {
    // SAFETY: the caller's contract.
    let magic = unsafe { read_magic(state)? };
    if magic != hmc_tag::<T>() {
        return Err(Status::NotInitialized);
    }
    let pointer = state.cast::<HmcState<T>>().cast_mut();
    if !pointer.is_aligned() {
        return Err(Status::Misaligned);
    }
    // SAFETY: the magic says an init of this type succeeded here.
    Ok(unsafe { &mut *pointer })
}

fn step<T: FfiReal>(state: &mut HmcState<T>) -> Result<QnmcStats, Status> {
    let log_density = state.header.log_density.ok_or(Status::NotInitialized)?;
    let target = CTarget::new(
        &state.header,
        log_density,
        state.header.dimension < MAX_DIMENSION,
    );
    let s = state.sampler.step(&target, &mut state.rng);
    // An accepted proposal completed its trajectory: the last evaluation was
    // at the new state.
    if s.accepted {
        state.log_density = target.last.get();
    }
    Ok(QnmcStats {
        step_size: s.step_size.to_f64(),
        acceptance: s.acceptance_probability.to_f64(),
        energy: f64::NAN,
        energy_error: s.energy_error.to_f64(),
        log_density: state.log_density.to_f64(),
        tree_depth: 0,
        leapfrog_steps: state.sampler.settings().leapfrog_steps,
        gradient_evaluations: s.gradient_evaluations,
        divergent: i32::from(s.divergent),
        reached_max_depth: 0,
        accepted: i32::from(s.accepted),
        warmup: 0,
    })
}

fn step_any(state: *mut c_void, stats: *mut QnmcStats) -> Result<(), Status> {
    check_pointer(stats.cast_const())?;
    // SAFETY: the caller's contract.
    let magic = unsafe { read_magic(state)? };
    let result = if magic == hmc_tag::<f32>() {
        // SAFETY: the caller's contract.
        step(unsafe { state_of::<f32>(state)? })?
    } else {
        // SAFETY: the caller's contract.
        step(unsafe { state_of::<f64>(state)? })?
    };
    // SAFETY: checked above; the caller's contract.
    unsafe { write_stats(stats, result) };
    Ok(())
}

/// Size in bytes of an HMC state of `scalar`; 0 for an unknown scalar.
#[unsafe(no_mangle)]
pub extern "C" fn qnmc_hmc_state_size(scalar: c_int) -> usize {
    match scalar {
        QNMC_F64 => size_of::<HmcState<f64>>(),
        QNMC_F32 => size_of::<HmcState<f32>>(),
        _ => 0,
    }
}

/// Alignment in bytes an HMC state buffer needs; 0 for an unknown scalar.
#[unsafe(no_mangle)]
pub extern "C" fn qnmc_hmc_state_align(scalar: c_int) -> usize {
    match scalar {
        QNMC_F64 => align_of::<HmcState<f64>>(),
        QNMC_F32 => align_of::<HmcState<f32>>(),
        _ => 0,
    }
}

macro_rules! hmc_functions {
    ($(#[$doc:meta])* $init:ident, $position:ident, $t:ty) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// `buffer` points to `buffer_size` writable bytes, `initial` to `dim`
        /// values; `log_density` honours its contract (`qnmc.h`).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $init(
            buffer: *mut c_void,
            buffer_size: usize,
            step_size: f64,
            leapfrog_steps: u32,
            seed: u64,
            initial: *const $t,
            dim: usize,
            log_density: Option<LogDensity<$t>>,
            ctx: *mut c_void,
        ) -> c_int {
            // SAFETY: the caller's contract, passed on.
            to_code(unsafe {
                init::<$t>(
                    buffer,
                    buffer_size,
                    step_size,
                    leapfrog_steps,
                    seed,
                    initial,
                    dim,
                    log_density,
                    ctx,
                )
            })
        }

        /// Copies the current position (`dim` values; `len` ≥ `dim`) to `out`.
        ///
        /// # Safety
        /// `state` is null or a buffer passed to `qnmc_hmc_init_*`; `out` is
        /// null or points to `len` writable values.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $position(state: *const c_void, out: *mut $t, len: usize) -> c_int {
            let run = || -> Result<(), Status> {
                // SAFETY: the caller's contract.
                let s = unsafe { state_of::<$t>(state)? };
                // SAFETY: the caller's contract.
                unsafe { write_position(s.sampler.position(), s.header.dimension, out, len) }
            };
            to_code(run())
        }
    };
}

hmc_functions!(
    /// Builds HMC (identity metric, step size `step_size`, `leapfrog_steps`
    /// steps per draw) for an f64 model of dimension `dim` in `buffer` (at
    /// least `qnmc_hmc_state_size(QNMC_F64)` bytes, aligned to
    /// `qnmc_hmc_state_align`), started at `initial`, seeded by `seed`.
    qnmc_hmc_init_f64,
    qnmc_hmc_position_f64,
    f64
);
hmc_functions!(
    /// [`qnmc_hmc_init_f64`] for an f32 model.
    qnmc_hmc_init_f32,
    qnmc_hmc_position_f32,
    f32
);

/// One HMC draw (f64 and f32 states alike), its statistics written to `stats`.
///
/// # Safety
/// `state` is null or a buffer passed to `qnmc_hmc_init_*`; `stats` is null
/// or points to a writable `qnmc_stats`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qnmc_hmc_step(state: *mut c_void, stats: *mut QnmcStats) -> c_int {
    to_code(step_any(state, stats))
}
