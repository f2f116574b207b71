//! Wider vector instructions for the hot kernels, chosen when the program
//! runs, with the same bits as the portable code.
//!
//! The kernels of [`crate::kernels`], the NUTS leapfrog and U-turn passes and
//! the metrics are plain loops in a fixed order, and Rust never contracts
//! `a * b + c` into a fused multiply-add on its own. So the same loop compiled
//! for AVX2 (four `f64` or eight `f32` per instruction instead of SSE2's two
//! or four) does exactly the same roundings in the same order: the results
//! are bit for bit those of the portable build, on this machine and on
//! Cortex-M, RISC-V and wasm32. Only the speed changes.
//!
//! A build for x86-64 without `-C target-feature=+avx2` (the default target)
//! may only use SSE2. With the `runtime-avx2` feature (alias `std`) on such a
//! build (the cfg `runtime_avx2`, set by `core/build.rs`), each kernel is
//! compiled twice, portable and with AVX2 enabled, and picks the AVX2 copy
//! when the processor reports AVX2 (`std::is_x86_feature_detected!`, checked
//! once and cached). Without `std` (`no_std` users, microcontrollers, wasm),
//! or when the build already targets AVX2, there is only one copy and no
//! check. [`set_avx2_allowed`] turns the AVX2 copies off, to measure them or
//! to compare their bits with the portable ones.
//!
//! A kernel is written once inside `vector_kernel!`, which makes both
//! copies; calling the AVX2 copy is the core's only `unsafe` operation
//! outside `in_place.rs`. This file also holds the run-time
//! dimension's two helpers: `at_length!`, which compiles a loop body once
//! for the constant D and once for a run-time length n < D, and
//! `dimension_in_use`, the one reading of a stored run-time dimension
//! (its all-zero value means D).

/// `true` when this build chooses between the portable and the AVX2 copies
/// of the kernels at run time.
pub const RUNTIME_DISPATCH: bool = cfg!(runtime_avx2);

#[cfg(runtime_avx2)]
mod runtime {
    use core::sync::atomic::{AtomicU8, Ordering::Relaxed};

    const UNDECIDED: u8 = 0;
    const PORTABLE: u8 = 1;
    const AVX2: u8 = 2;

    /// The copy the kernels use, decided on first use.
    static CHOICE: AtomicU8 = AtomicU8::new(UNDECIDED);

    #[inline]
    pub(crate) fn use_avx2() -> bool {
        match CHOICE.load(Relaxed) {
            AVX2 => true,
            PORTABLE => false,
            _ => decide(true),
        }
    }

    #[cold]
    pub(crate) fn decide(allowed: bool) -> bool {
        let avx2 = allowed && std::is_x86_feature_detected!("avx2");
        CHOICE.store(if avx2 { AVX2 } else { PORTABLE }, Relaxed);
        avx2
    }
}

#[cfg(runtime_avx2)]
pub(crate) use runtime::use_avx2;

/// Allows (the default) or forbids the AVX2 copies of the kernels for the
/// whole program. Results do not change either way; this only changes speed.
/// Forbidding is useful to measure the difference or to check that the two
/// copies agree. Has no effect (and returns `false`) when the build has no
/// run-time choice ([`RUNTIME_DISPATCH`] is `false`).
///
/// Returns whether the AVX2 copies are now in use: `false` when forbidden or
/// when the processor lacks AVX2.
pub fn set_avx2_allowed(allowed: bool) -> bool {
    #[cfg(runtime_avx2)]
    {
        runtime::decide(allowed)
    }
    #[cfg(not(runtime_avx2))]
    {
        let _ = allowed;
        false
    }
}

/// Which copy of the kernels runs: `"avx2 (chosen at run time)"`,
/// `"avx2 (built in)"` or `"portable"`, for reports and benchmarks.
pub fn kernels_in_use() -> &'static str {
    #[cfg(runtime_avx2)]
    if use_avx2() {
        return "avx2 (chosen at run time)";
    }
    if cfg!(all(target_arch = "x86_64", target_feature = "avx2")) {
        "avx2 (built in)"
    } else {
        "portable"
    }
}

/// Vectors shorter than this run the portable copy even when AVX2 is
/// there: the call into the AVX2 copy (which cannot be inlined into code
/// built without AVX2) costs more than the wider registers save. Measured
/// per NUTS leapfrog step (`nuts_per_leapfrog`, diagonal metric): at D = 6
/// the AVX2 copies took 83 ns against 77 ns for the inlined portable loops;
/// at D = 25, 145 against 150 ns; at D = 100, 331 against 406 ns. For a
/// const-generic length the comparison folds away when compiling.
pub const MIN_WIDE_LENGTH: usize = 16;

/// Defines a kernel function compiled twice when [`RUNTIME_DISPATCH`] is on:
/// a portable copy and one with AVX2 enabled, chosen by the running
/// processor when the vectors have at least [`MIN_WIDE_LENGTH`] entries
/// (`length(…)`, an expression of the generics or arguments). Generic
/// parameters go in square brackets:
///
/// ```text
/// vector_kernel! {
///     /// docs
///     #[inline(never)]
///     pub(crate) fn name[T: Real, const D: usize](x: &[T; D], y: &mut [T; D]) -> T
///     where length(D)
///     { body }
/// }
/// ```
///
/// Every generic parameter must be inferable from the arguments. The body
/// must be a plain loop without target-specific code: the two copies then
/// give the same bits (see the module documentation).
macro_rules! vector_kernel {
    (
        $(#[$attr:meta])*
        $vis:vis fn $name:ident [$($generics:tt)*] ($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?
        where length($length:expr)
        $body:block
    ) => {
        $(#[$attr])*
        $vis fn $name<$($generics)*>($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn portable<$($generics)*>($($arg: $ty),*) $(-> $ret)? $body

            #[cfg(runtime_avx2)]
            {
                /// The portable body compiled with AVX2 enabled.
                #[target_feature(enable = "avx2")]
                #[allow(unsafe_code)]
                unsafe fn avx2<$($generics)*>($($arg: $ty),*) $(-> $ret)? {
                    portable($($arg),*)
                }
                if $length >= $crate::kernels::MIN_WIDE_LENGTH
                    && $crate::kernels::use_avx2()
                {
                    // SAFETY: `use_avx2` is true only after
                    // `is_x86_feature_detected!("avx2")` said this processor
                    // has AVX2, the one requirement of `avx2`.
                    #[allow(unsafe_code)]
                    return unsafe { avx2($($arg),*) };
                }
            }
            portable($($arg),*)
        }
    };
}

pub(crate) use vector_kernel;

/// `at_length!(len, D, |n| body)`: `body` with `n` = `len` (at most `D`),
/// compiled twice: once with `n` the constant `D`, taken when `len ≥ D` (the
/// code a const-generic length gives: loops unrolled or vectorised without
/// bounds checks, as before the kernels took a length), and once with the
/// run-time length (a sampler moving fewer coordinates than its storage
/// holds, `Nuts::set_dimension`, feature `runtime-dimension`). Both compute
/// the same thing; the second costs a little more per entry.
///
/// Without the `runtime-dimension` feature `n` is always `D` (one copy; a
/// caller passes a shorter `len` only for vectors that are zero from `len`
/// on, so the result is the same).
#[cfg(feature = "runtime-dimension")]
macro_rules! at_length {
    ($len:expr, $d:expr, |$n:ident| $body:expr) => {{
        let length: usize = $len;
        if length >= $d {
            let $n: usize = $d;
            $body
        } else {
            let $n: usize = length;
            $body
        }
    }};
}

#[cfg(not(feature = "runtime-dimension"))]
macro_rules! at_length {
    ($len:expr, $d:expr, |$n:ident| $body:expr) => {{
        let _ = $len;
        let $n: usize = $d;
        $body
    }};
}

pub(crate) use at_length;

/// The run-time dimension in use for a stored value `stored` (0, the
/// all-zero value of [`crate::in_place`], or anything ≥ D: D). Without the
/// `runtime-dimension` feature every length is the constant D. Every
/// structure with a run-time dimension (NUTS, `LbfgsMemory`, the samplers of
/// `samplers/dimension.rs`) reads its stored value through this.
#[inline]
pub(crate) fn dimension_in_use<const D: usize>(stored: usize) -> usize {
    if cfg!(feature = "runtime-dimension") && stored != 0 && stored < D {
        stored
    } else {
        D
    }
}
