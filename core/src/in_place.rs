//! Building a sampler where it will live, so that it never crosses the stack
//! whole.
//!
//! A sampler is a struct of fixed-size arrays: `AdaptiveNuts<f64, 100,
//! LbfgsEstimator<f64, 100, 20>>` is 387 KB, 2.5 MB at D = 1000. A
//! constructor that returns it by value builds it on the stack and copies it
//! out, and a debug build keeps every copy: `AdaptiveNuts::new` at D = 100
//! needs about 2 MB of stack there, more than a default 2 MiB thread has
//! left, so `AdaptiveNuts::new` refuses at compile time a sampler larger
//! than `adaptation::NEW_MAX_BYTES`. The in-place constructors (`AdaptiveNuts::init_in_place`,
//! `AdaptiveNuts::new_boxed` with the `alloc` feature, `AdaptiveNuts::reset`
//! on a sampler that exists already) write into the caller's storage instead:
//! a `static`, a `MaybeUninit` on the stack or a `Box`.
//!
//! What a default sampler needs, by dimension: the table at
//! `AdaptiveNuts::new_boxed`.
//!
//! The in-place constructors start from all-zero bytes, a valid value of every type that
//! implements [`ZeroValid`] (numbers, `bool`, arrays and structs of them),
//! and then set the fields that do not start at zero. This file holds the
//! core's only `unsafe` operations outside `kernels/dispatch.rs`: the zero
//! fill, the bytewise swap and the allocation behind `zeroed_box` (feature
//! `alloc`). The other `unsafe` of the core is declarations: `unsafe impl
//! ZeroValid`, written by the `zero_valid!` macro (which checks every field)
//! or by hand for types with a defined layout (`Square`, `InitialScaling`,
//! and `repr(u8)` enums whose first variant is the zero byte, such as
//! `AcceptanceStatistic` or the recipe's `Correction`), each with its
//! SAFETY comment.

#![allow(unsafe_code)]

use core::mem::MaybeUninit;

/// A type for which all-zero bytes are a valid value.
///
/// # Safety
///
/// Every field (every byte of the type that is not padding) must be valid
/// when all its bytes are zero, and the type must not need dropping: numbers,
/// `bool`, arrays of such types, and structs whose every field is `ZeroValid`
/// qualify; references, `NonZero*`, `char`, `Option` and enums without a
/// defined representation do not. The core implements it with the
/// `zero_valid!` macro, which names every field of the struct in a
/// destructuring pattern, so adding a field fails to compile until it is
/// checked too.
///
/// Such a type is plain data, so it is also [`SavedState`]: its fields can
/// be saved as bytes and restored ([`crate::saved_state`]); `zero_valid!`
/// writes both impls.
///
/// [`SavedState`]: crate::saved_state::SavedState
pub unsafe trait ZeroValid: crate::saved_state::SavedState {}

macro_rules! zero_valid_primitive {
    ($($t:ty),*) => {
        $(
            // SAFETY: every bit pattern, all-zero included, is a valid value.
            unsafe impl ZeroValid for $t {}
        )*
    };
}

zero_valid_primitive!(f32, f64, u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

// SAFETY: the zero byte is `false`.
unsafe impl ZeroValid for bool {}

// SAFETY: an array has no bytes other than its elements'.
unsafe impl<Z: ZeroValid, const N: usize> ZeroValid for [Z; N] {}

/// Implements [`ZeroValid`] for a struct whose every field is `ZeroValid`:
/// `zero_valid!(impl[T: Real, const D: usize] Welford<T, D> { count, mean });`
/// The generated check destructures the struct naming every field, so a
/// field added later breaks the build until it is listed (and checked).
macro_rules! zero_valid {
    (impl[$($g:tt)*] $name:ident $(<$($a:tt),*>)? $(where [$($w:tt)*])? { $($field:ident),* $(,)? }) => {
        // SAFETY: every field is `ZeroValid`, which the function below checks
        // at compile time (it names them all), and a struct of plain data
        // needs no drop.
        #[allow(unsafe_code)]
        unsafe impl<$($g)*> $crate::in_place::ZeroValid for $name $(<$($a),*>)? $(where $($w)*)? {}

        const _: () = {
            #[allow(dead_code, clippy::extra_unused_type_parameters)]
            fn every_field_is_zero_valid<$($g)*>(value: &$name $(<$($a),*>)?) $(where $($w)*)? {
                let $name { $($field),* } = value;
                $( $crate::in_place::require_zero_valid($field); )*
            }
        };

        // The fields in declaration order (the destructuring names them
        // all, so a field added later is saved too or fails to compile).
        #[allow(unused_variables)]
        impl<$($g)*> $crate::saved_state::SavedState for $name $(<$($a),*>)? $(where $($w)*)? {
            fn save_state(
                &self,
                out: &mut $crate::saved_state::StateWriter<'_>,
            ) -> Result<(), $crate::saved_state::StateError> {
                let $name { $($field),* } = self;
                $( $crate::saved_state::SavedState::save_state($field, out)?; )*
                Ok(())
            }
            fn restore_state(
                &mut self,
                input: &mut $crate::saved_state::StateReader<'_>,
            ) -> Result<(), $crate::saved_state::StateError> {
                let $name { $($field),* } = self;
                $( $crate::saved_state::SavedState::restore_state($field, input)?; )*
                Ok(())
            }
        }
    };
}
pub(crate) use zero_valid;

/// Compile-time check used by `zero_valid!`.
#[inline(always)]
pub(crate) fn require_zero_valid<Z: ZeroValid + ?Sized>(_: &Z) {}

/// Fills `slot` with zero bytes and returns it as a value of `Z`.
///
/// ```
/// use core::mem::MaybeUninit;
/// let mut slot = MaybeUninit::<[f64; 4]>::uninit();
/// assert_eq!(*qnmc::in_place::zeroed(&mut slot), [0.0; 4]);
/// ```
pub fn zeroed<Z: ZeroValid>(slot: &mut MaybeUninit<Z>) -> &mut Z {
    // SAFETY: the write covers the whole slot, and all-zero bytes are a valid
    // `Z` (the contract of `ZeroValid`), so the slot is initialised.
    unsafe {
        slot.as_mut_ptr().write_bytes(0, 1);
        slot.assume_init_mut()
    }
}

/// Overwrites `value` with zero bytes in place (no copy of it on the stack).
pub(crate) fn zero<Z: ZeroValid>(value: &mut Z) {
    // SAFETY: `value` is a valid, exclusive `Z`; all-zero bytes are a valid
    // `Z` and `ZeroValid` types need no drop, so nothing leaks or dangles.
    unsafe { (value as *mut Z).write_bytes(0, 1) }
}

/// Swaps two values in place, a few bytes at a time: `core::mem::swap` of a
/// large value keeps a whole copy of it on the stack in a debug build.
pub(crate) fn swap<Z: ZeroValid>(a: &mut Z, b: &mut Z) {
    let bytes = core::mem::size_of::<Z>();
    // SAFETY: `a` and `b` are distinct exclusive references, so they do not
    // overlap; both cover `bytes` bytes, which are swapped as possibly
    // uninitialised bytes (padding included), leaving each a valid `Z` (the
    // other's value). `ZeroValid` types hold no pointers into themselves.
    unsafe {
        core::ptr::swap_nonoverlapping(
            (a as *mut Z).cast::<MaybeUninit<u8>>(),
            (b as *mut Z).cast::<MaybeUninit<u8>>(),
            bytes,
        );
    }
}

/// A `Box<Z>` of zero bytes, allocated zeroed on the heap: the value never
/// exists on the stack (`Box::new(value)` would build it there first).
///
/// ```
/// let b = qnmc::in_place::zeroed_box::<[f64; 1_000_000]>();
/// assert!(b.iter().all(|x| *x == 0.0));
/// ```
#[cfg(feature = "alloc")]
pub fn zeroed_box<Z: ZeroValid>() -> alloc::boxed::Box<Z> {
    use alloc::alloc::{Layout, alloc_zeroed, handle_alloc_error};
    use alloc::boxed::Box;
    let layout = Layout::new::<Z>();
    if layout.size() == 0 {
        // SAFETY: a zero-sized `Z` needs no allocation; a dangling, aligned
        // pointer is a valid `Box` of it, and it has no bytes to be zero.
        return unsafe { Box::from_raw(core::ptr::NonNull::<Z>::dangling().as_ptr()) };
    }
    // SAFETY: the layout has a non-zero size; a null result is handled; the
    // allocation has `Z`'s layout and holds zero bytes, a valid `Z`, so the
    // global allocator may free it as a `Box<Z>`.
    unsafe {
        let pointer = alloc_zeroed(layout);
        if pointer.is_null() {
            handle_alloc_error(layout);
        }
        Box::from_raw(pointer.cast::<Z>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Pair<T, const N: usize> {
        a: [T; N],
        b: u64,
        c: bool,
    }
    zero_valid!(impl[T: ZeroValid, const N: usize] Pair<T, N> { a, b, c });

    #[test]
    fn a_zeroed_struct_is_all_zero() {
        let mut slot = MaybeUninit::<Pair<f32, 3>>::uninit();
        let value = zeroed(&mut slot);
        assert_eq!(
            *value,
            Pair {
                a: [0.0; 3],
                b: 0,
                c: false
            }
        );
        value.a[1] = 2.5;
        value.b = 7;
        zero(value);
        assert_eq!(value.a, [0.0; 3]);
        assert_eq!(value.b, 0);
    }
}
