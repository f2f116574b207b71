//! What every state buffer starts with, the C model as a `qnmc::Potential`,
//! and the pointer checks shared by the entry points.

use core::cell::Cell;
use core::ffi::{c_int, c_void};

use qnmc::{Potential, Real};

use crate::{MAX_DIMENSION, QNMC_F32, QNMC_F64, Status};

/// The caller's model: writes ∇ log p(θ) into `grad` (the first `dim`
/// entries) and returns log p(θ) (up to a constant). `theta` and `grad`
/// point to `qnmc_max_dimension()` entries of which the model reads and
/// writes the first `dim`.
pub type LogDensity<T> = unsafe extern "C" fn(*mut c_void, *const T, *mut T) -> T;

/// Per-draw statistics (`qnmc_stats` in C), the same for f64 and f32 states
/// (an f32 value converts to double exactly).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct QnmcStats {
    /// The step size of the draw.
    pub step_size: f64,
    /// NUTS: Stan's `accept_stat__` (what dual averaging adapts to); HMC: the
    /// Metropolis acceptance probability.
    pub acceptance: f64,
    /// NUTS: the Hamiltonian H = −log p + kinetic energy of the new state
    /// (Stan's `energy__`); HMC: NaN.
    pub energy: f64,
    /// H(new) − H(old) of the trajectory's end (NUTS) or proposal (HMC).
    pub energy_error: f64,
    /// log p at the state after the draw, as the callback returned it.
    pub log_density: f64,
    /// NUTS: valid doublings of the tree (`treedepth__`); HMC: 0.
    pub tree_depth: u32,
    /// Leapfrog steps taken.
    pub leapfrog_steps: u32,
    /// Calls of the callback during the draw.
    pub gradient_evaluations: u32,
    /// 1 if the trajectory diverged (energy error above the threshold, or a
    /// non-finite log density, gradient or position), else 0.
    pub divergent: i32,
    /// NUTS: 1 if the tree reached the maximum depth; HMC: 0.
    pub reached_max_depth: i32,
    /// 1 if the state changed (NUTS) or the proposal was accepted (HMC).
    pub accepted: i32,
    /// 1 if this was a warm-up draw (to be discarded), else 0.
    pub warmup: i32,
}

/// The scalars of the API.
pub(crate) trait FfiReal: Real {
    /// `QNMC_F64` or `QNMC_F32`.
    const SCALAR: c_int;
}

impl FfiReal for f64 {
    const SCALAR: c_int = QNMC_F64;
}

impl FfiReal for f32 {
    const SCALAR: c_int = QNMC_F32;
}

/// The first field of every state: which sampler it holds and the model.
#[repr(C)]
pub(crate) struct Header<T> {
    /// [`tag`] of the state's type; 0 while (or after a failed) init.
    pub magic: u64,
    /// The run-time dimension n ≤ [`MAX_DIMENSION`].
    pub dimension: usize,
    /// The callback (never `None` once `magic` is set).
    pub log_density: Option<LogDensity<T>>,
    /// The callback's `ctx`.
    pub context: *mut c_void,
}

/// Sampler kinds in a [`tag`].
pub(crate) const KIND_NUTS: u64 = 1;
pub(crate) const KIND_HMC: u64 = 2;

/// The magic number of a state: "qnmc", sampler kind, scalar, metric.
pub(crate) const fn tag(kind: u64, scalar: c_int, metric: c_int) -> u64 {
    0x716e_6d63_0000_0000 | (kind << 16) | ((scalar as u64 & 0xff) << 8) | (metric as u64 & 0xff)
}

/// The C model as the core's potential U = −log p, ∇U = −∇ log p, over the
/// first `dimension` coordinates. With `pad`, the coordinates from
/// `dimension` on are independent N(0, 1) (HMC moves all of its storage);
/// NUTS never reads them ([`qnmc::Nuts::set_dimension`]).
pub(crate) struct CTarget<T> {
    pub log_density: LogDensity<T>,
    pub context: *mut c_void,
    pub dimension: usize,
    pub pad: bool,
    /// log p of the last evaluation.
    pub last: Cell<T>,
}

impl<T: Real> CTarget<T> {
    pub(crate) fn new<U>(header: &Header<U>, log_density: LogDensity<T>, pad: bool) -> Self {
        CTarget {
            log_density,
            context: header.context,
            dimension: header.dimension,
            pad,
            last: Cell::new(T::ZERO),
        }
    }
}

impl<T: Real> Potential<T, MAX_DIMENSION> for CTarget<T> {
    fn potential_and_gradient(
        &self,
        position: &[T; MAX_DIMENSION],
        gradient: &mut [T; MAX_DIMENSION],
    ) -> T {
        let n = self.dimension.min(MAX_DIMENSION);
        gradient[..n].iter_mut().for_each(|g| *g = T::ZERO);
        // SAFETY: the callback's contract (qnmc.h): it reads `theta[0..n)`
        // and writes `grad[0..n)`, both arrays of MAX_DIMENSION entries here.
        let log_p =
            unsafe { (self.log_density)(self.context, position.as_ptr(), gradient.as_mut_ptr()) };
        self.last.set(log_p);
        gradient[..n].iter_mut().for_each(|g| *g = -*g);
        let mut potential = -log_p;
        if self.pad {
            for i in n..MAX_DIMENSION {
                gradient[i] = position[i];
                potential += T::HALF * position[i] * position[i];
            }
        }
        potential
    }
}

/// Checks a state buffer for `init`: not null, aligned, large enough.
pub(crate) fn check_buffer(
    buffer: *mut c_void,
    buffer_size: usize,
    size: usize,
    align: usize,
) -> Result<(), Status> {
    if buffer.is_null() {
        return Err(Status::NullPointer);
    }
    if (buffer as usize) % align != 0 {
        return Err(Status::Misaligned);
    }
    if buffer_size < size {
        // Too small for the sampler, but an old state in it must not stay
        // usable after a failed init: clear its magic if it has room.
        if buffer_size >= core::mem::size_of::<u64>() {
            // SAFETY: aligned (align ≥ 8) and at least 8 writable bytes.
            unsafe { buffer.cast::<u64>().write(0) };
        }
        return Err(Status::BufferTooSmall);
    }
    // SAFETY: as above; the state is not valid until init writes its magic.
    unsafe { buffer.cast::<u64>().write(0) };
    Ok(())
}

/// The magic of an initialised state (checked for null and alignment).
///
/// # Safety
/// `state` is null or points to at least 8 readable bytes (a buffer passed
/// to an init function).
pub(crate) unsafe fn read_magic(state: *const c_void) -> Result<u64, Status> {
    if state.is_null() {
        return Err(Status::NullPointer);
    }
    if !state.cast::<u64>().is_aligned() {
        return Err(Status::Misaligned);
    }
    // SAFETY: non-null and aligned; readable by the caller's contract.
    Ok(unsafe { state.cast::<u64>().read() })
}

/// Checks an output or input pointer of `T`.
pub(crate) fn check_pointer<T>(pointer: *const T) -> Result<(), Status> {
    if pointer.is_null() {
        Err(Status::NullPointer)
    } else if !pointer.is_aligned() {
        Err(Status::Misaligned)
    } else {
        Ok(())
    }
}

/// Checks a run-time dimension.
pub(crate) fn check_dimension(dimension: usize) -> Result<(), Status> {
    if dimension == 0 || dimension > MAX_DIMENSION {
        Err(Status::InvalidDimension)
    } else {
        Ok(())
    }
}

/// Copies the initial point (`dimension` entries, checked) into storage of
/// [`MAX_DIMENSION`], zero beyond.
///
/// # Safety
/// `initial` points to `dimension` readable values (checked non-null and
/// aligned here).
pub(crate) unsafe fn read_initial<T: Real>(
    initial: *const T,
    dimension: usize,
) -> Result<[T; MAX_DIMENSION], Status> {
    check_pointer(initial)?;
    check_dimension(dimension)?;
    let mut start = [T::ZERO; MAX_DIMENSION];
    // SAFETY: the caller's contract; `dimension` ≤ MAX_DIMENSION (checked).
    let given = unsafe { core::slice::from_raw_parts(initial, dimension) };
    start[..dimension].copy_from_slice(given);
    Ok(start)
}

/// Copies the first `dimension` coordinates of `position` out.
///
/// # Safety
/// `out` points to `len` writable values.
pub(crate) unsafe fn write_position<T: Real>(
    position: &[T; MAX_DIMENSION],
    dimension: usize,
    out: *mut T,
    len: usize,
) -> Result<(), Status> {
    check_pointer(out.cast_const())?;
    if len < dimension {
        return Err(Status::BufferTooSmall);
    }
    let n = dimension.min(MAX_DIMENSION);
    // SAFETY: `out` holds `len` ≥ n values (the caller's contract); `copy`
    // allows even an `out` inside the state.
    unsafe { core::ptr::copy(position.as_ptr(), out, n) };
    Ok(())
}

/// Writes the statistics of a draw.
///
/// # Safety
/// `out` was checked by [`check_pointer`] and points to a writable
/// `qnmc_stats`.
pub(crate) unsafe fn write_stats(out: *mut QnmcStats, stats: QnmcStats) {
    // SAFETY: the caller's contract.
    unsafe { out.write(stats) }
}

/// A status as the C return value.
pub(crate) fn to_code(result: Result<(), Status>) -> c_int {
    match result {
        Ok(()) => Status::Ok.code(),
        Err(status) => status.code(),
    }
}
