//! Groups of directions: the L-BFGS metric's O(rD) operations run over its
//! r directions a few at a time, one pass over the vector per group, so that
//! each group's partial sums stay in registers. How many fit depends on the
//! vector width the program runs with (see [`dispatch`](super::dispatch)):
//! 4 directions per pass on 16-byte vectors or scalars, 10 with AVX2. The
//! bits do not depend on the group size.

use crate::real::Real;

/// Directions per pass of [`LbfgsMetric`](crate::metric::LbfgsMetric)'s O(rD) operations: 4 where the
/// kernels run on 16-byte vectors (SSE2, wasm) or scalars (Cortex-M, RISC-V),
/// whose registers hold 4 directions' partial sums without spilling.
const GROUP: usize = 4;

/// Directions per pass where the kernels run with AVX2 (x86-64): sixteen
/// 32-byte registers hold 10 directions' sums with the vector and a product
/// (12 in use), and more independent additions are in flight. 8 took 45 ns
/// less per leapfrog step than 4 at D = 100 and rank 20; 10 (rank 20 in two
/// passes instead of 8 + 8 + 4) took the standalone velocity from 234–243 to
/// 224–231 ns. With SSE2's registers 8 would spill (100 ns more). Bits do not
/// depend on the group size: each dot product keeps its lanes, each axpy its
/// order.
#[cfg(any(runtime_avx2, all(target_arch = "x86_64", target_feature = "avx2")))]
const WIDE_GROUP: usize = 10;

/// The directions per pass for the kernels this program runs on vectors of
/// length D.
#[inline]
pub(crate) fn group_size<const D: usize>() -> usize {
    #[cfg(runtime_avx2)]
    if D >= super::dispatch::MIN_WIDE_LENGTH && super::dispatch::use_avx2() {
        return WIDE_GROUP;
    }
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    return WIDE_GROUP;
    #[allow(unreachable_code)]
    GROUP
}

/// Runs `$body` with `$u` bound to an array of references to the 1 to
/// [`GROUP`] (x86-64: `WIDE_GROUP`) directions of the slice `$group` (a const length for the
/// kernels); nothing for an empty or longer slice, which the callers never
/// pass.
macro_rules! with_group {
    ($group:expr, |$u:ident| $body:expr) => {
        match $group {
            #[cfg(target_arch = "x86_64")]
            [a, b, c, d, e, f, g, h, i, j] => {
                let $u = [a, b, c, d, e, f, g, h, i, j];
                $body
            }
            #[cfg(target_arch = "x86_64")]
            [a, b, c, d, e, f, g, h, i] => {
                let $u = [a, b, c, d, e, f, g, h, i];
                $body
            }
            #[cfg(target_arch = "x86_64")]
            [a, b, c, d, e, f, g, h] => {
                let $u = [a, b, c, d, e, f, g, h];
                $body
            }
            #[cfg(target_arch = "x86_64")]
            [a, b, c, d, e, f, g] => {
                let $u = [a, b, c, d, e, f, g];
                $body
            }
            #[cfg(target_arch = "x86_64")]
            [a, b, c, d, e, f] => {
                let $u = [a, b, c, d, e, f];
                $body
            }
            #[cfg(target_arch = "x86_64")]
            [a, b, c, d, e] => {
                let $u = [a, b, c, d, e];
                $body
            }
            [a, b, c, d] => {
                let $u = [a, b, c, d];
                $body
            }
            [a, b, c] => {
                let $u = [a, b, c];
                $body
            }
            [a, b] => {
                let $u = [a, b];
                $body
            }
            [a] => {
                let $u = [a];
                $body
            }
            _ => {}
        }
    };
}

pub(crate) use with_group;

/// `out` ← `values` (equal lengths by construction; no panic path).
#[inline]
pub(crate) fn store_group<T: Copy, const K: usize>(out: &mut [T], values: [T; K]) {
    for (o, v) in out.iter_mut().zip(values) {
        *o = v;
    }
}

/// The first K coefficients of a group as an array (missing ones zero).
#[inline]
pub(crate) fn group_coefficients<T: Real, const K: usize>(c: &[T]) -> [T; K] {
    core::array::from_fn(|k| c.get(k).copied().unwrap_or(T::ZERO))
}
