//! C API of the `no_std` qnmc core (`ffi/include/qnmc.h`, docs/C_API.md).
//!
//! NUTS with its warm-up (`qnmc::adaptation::AdaptiveNuts`, the quasi-Newton,
//! diagonal or identity metric) and plain HMC (`qnmc::Hmc`), in f64 and f32,
//! for a log density and its gradient given as a C function pointer. Nothing
//! allocates: the caller asks for the size and alignment of a state
//! (`qnmc_nuts_state_size`, `qnmc_nuts_state_align`), passes a buffer, and
//! the sampler is built in it in place. The dimension is chosen at run time,
//! up to [`MAX_DIMENSION`]; [`LBFGS_MEMORY`] and [`MAX_TREE_DEPTH`] are fixed
//! at build time too (`build.rs`: `QNMC_FFI_MAX_DIM`, `QNMC_FFI_LBFGS_MEMORY`,
//! `QNMC_FFI_MAX_TREE_DEPTH`).
//!
//! Every entry point checks its pointers (null, alignment), sizes,
//! dimension and settings and returns a status code instead of failing: no
//! input reaches a panic. A non-finite log density or gradient during a draw
//! is a counted divergence (`qnmc_stats::divergent`), as in Rust.
//!
//! The crate builds as an `rlib` (for the Rust tests and for Rust users of the
//! same API). The C library is the same crate built by `cargo rustc
//! --crate-type staticlib` with the feature `panic-handler` and `-C
//! panic=abort` (`ffi/scripts/build-staticlib.sh`).

#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]

use core::ffi::{c_char, c_int};

mod hmc;
mod nuts;
mod state;

pub use hmc::*;
pub use nuts::*;
pub use state::{LogDensity, QnmcStats};

mod limits {
    include!(concat!(env!("OUT_DIR"), "/limits.rs"));
}
pub use limits::{LBFGS_MEMORY, MAX_DIMENSION, MAX_TREE_DEPTH};

/// What a call returns (`qnmc_status` in C; the functions return `int`).
/// 1–4 are the core's `qnmc::Error` variants, 5–10 the API's own checks.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Success.
    Ok = 0,
    /// `qnmc::Error::InvalidSetting`: a setting is out of its domain.
    InvalidSetting = 1,
    /// `qnmc::Error::NonFiniteInitialState`: the log density or its gradient is
    /// not finite at the initial point (or the point is not finite).
    NonFiniteInitialState = 2,
    /// `qnmc::Error::NonFiniteGradient`.
    NonFiniteGradient = 3,
    /// `qnmc::Error::NonFiniteProposal`.
    NonFiniteProposal = 4,
    /// A pointer argument is null.
    NullPointer = 5,
    /// The state buffer (or an output array) is smaller than needed.
    BufferTooSmall = 6,
    /// A pointer is not aligned for its type (the state: `qnmc_*_state_align`).
    Misaligned = 7,
    /// The dimension is 0 or above `qnmc_max_dimension()`.
    InvalidDimension = 8,
    /// An unknown scalar type or metric.
    InvalidArgument = 9,
    /// The buffer holds no sampler of the kind the call expects (never
    /// initialised, its initialisation failed, or another sampler/scalar).
    NotInitialized = 10,
    /// A `qnmc::Error` this API version does not name.
    Other = 11,
}

impl Status {
    /// The code C sees.
    pub const fn code(self) -> c_int {
        self as c_int
    }

    /// Every status, in code order.
    pub const ALL: [Status; 12] = [
        Status::Ok,
        Status::InvalidSetting,
        Status::NonFiniteInitialState,
        Status::NonFiniteGradient,
        Status::NonFiniteProposal,
        Status::NullPointer,
        Status::BufferTooSmall,
        Status::Misaligned,
        Status::InvalidDimension,
        Status::InvalidArgument,
        Status::NotInitialized,
        Status::Other,
    ];

    /// The message of `qnmc_error_message`, NUL-terminated.
    pub const fn message(self) -> &'static core::ffi::CStr {
        match self {
            Status::Ok => c"success",
            Status::InvalidSetting => c"a setting is out of its domain",
            Status::NonFiniteInitialState => {
                c"the log density or its gradient is not finite at the initial point"
            }
            Status::NonFiniteGradient => c"the gradient has a NaN or infinite entry",
            Status::NonFiniteProposal => c"the proposed position has a NaN or infinite entry",
            Status::NullPointer => c"a pointer argument is NULL",
            Status::BufferTooSmall => c"the buffer is smaller than needed",
            Status::Misaligned => c"a pointer is not aligned for its type",
            Status::InvalidDimension => c"the dimension is 0 or above qnmc_max_dimension()",
            Status::InvalidArgument => c"unknown scalar type or metric",
            Status::NotInitialized => c"the state holds no initialised sampler of this kind",
            Status::Other => c"an error of the sampler core without its own code",
        }
    }
}

impl From<qnmc::Error> for Status {
    fn from(error: qnmc::Error) -> Status {
        match error {
            qnmc::Error::InvalidSetting { .. } => Status::InvalidSetting,
            qnmc::Error::NonFiniteInitialState => Status::NonFiniteInitialState,
            qnmc::Error::NonFiniteGradient => Status::NonFiniteGradient,
            qnmc::Error::NonFiniteProposal => Status::NonFiniteProposal,
            _ => Status::Other,
        }
    }
}

/// `QNMC_F64`: states and callbacks in `double`.
pub const QNMC_F64: c_int = 0;
/// `QNMC_F32`: states and callbacks in `float`.
pub const QNMC_F32: c_int = 1;
/// `QNMC_METRIC_QUASI_NEWTON`: the learned L-BFGS metric (the default).
pub const QNMC_METRIC_QUASI_NEWTON: c_int = 0;
/// `QNMC_METRIC_DIAGONAL`: a learned diagonal metric.
pub const QNMC_METRIC_DIAGONAL: c_int = 1;
/// `QNMC_METRIC_IDENTITY`: no metric adaptation (M = I).
pub const QNMC_METRIC_IDENTITY: c_int = 2;

/// The message of a status code; any `code`, known or not, gives a valid
/// static NUL-terminated string.
#[unsafe(no_mangle)]
pub extern "C" fn qnmc_error_message(code: c_int) -> *const c_char {
    match Status::ALL.iter().find(|s| s.code() == code) {
        Some(status) => status.message().as_ptr(),
        None => c"unknown qnmc status code".as_ptr(),
    }
}

/// The largest dimension a state of this build holds.
#[unsafe(no_mangle)]
pub extern "C" fn qnmc_max_dimension() -> usize {
    MAX_DIMENSION
}

/// The curvature pairs M of the quasi-Newton metric in this build.
#[unsafe(no_mangle)]
pub extern "C" fn qnmc_lbfgs_memory() -> usize {
    LBFGS_MEMORY
}

/// The deepest NUTS tree this build's states hold.
#[unsafe(no_mangle)]
pub extern "C" fn qnmc_max_tree_depth() -> u32 {
    MAX_TREE_DEPTH as u32
}

/// On a hosted target the precompiled `core` comes built for unwinding, and
/// its unwind tables name `rust_eh_personality`, which only `std` defines.
/// The static library is built with `-C panic=abort`, so nothing ever
/// unwinds and the personality routine is never called: this empty one only
/// satisfies the linker (feature `panic-handler`, hosted targets only).
#[cfg(all(feature = "panic-handler", not(test), not(target_os = "none")))]
#[unsafe(no_mangle)]
pub extern "C" fn rust_eh_personality() {}

/// The static library's panic handler (feature `panic-handler`). No input
/// reaches a panic (every entry point checks its arguments); should one
/// happen all the same, the program stops: `abort()` from the C library on a
/// hosted target, a trap instruction on bare metal (a HardFault on
/// Cortex-M, an illegal-instruction exception on RISC-V).
#[cfg(all(feature = "panic-handler", not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    #[cfg(not(target_os = "none"))]
    {
        unsafe extern "C" {
            fn abort() -> !;
        }
        // SAFETY: `abort` takes nothing and never returns.
        unsafe { abort() }
    }
    #[cfg(target_os = "none")]
    {
        #[cfg(target_arch = "arm")]
        // SAFETY: a permanently undefined instruction: it only traps.
        unsafe {
            core::arch::asm!("udf #0", options(noreturn))
        }
        #[cfg(target_arch = "riscv32")]
        // SAFETY: the defined illegal instruction: it only traps.
        unsafe {
            core::arch::asm!("unimp", options(noreturn))
        }
        #[cfg(not(any(target_arch = "arm", target_arch = "riscv32")))]
        loop {
            core::hint::spin_loop();
        }
    }
}
