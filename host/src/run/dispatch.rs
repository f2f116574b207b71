//! From a run-time dimension to the compile-time sizes of the core samplers.
//!
//! The samplers are const-generic in the dimension D and the L-BFGS memory M.
//! A model of dimension n runs with the smallest D of [`DIMENSIONS`] that is
//! ≥ n, padded with D − n independent N(0, 1) coordinates
//! ([`PaddedModel`](crate::model::PaddedModel)) that are dropped from the
//! output. Every built-in target (1, 2, 6, 7, 8, 10, 14, 15, 25, 100) has its
//! own bucket and runs unpadded, except `stochastic-volatility` (103, in the
//! 128 bucket); the ladder above keeps padding below ~2×.
//! QNHMC's memory of m pairs runs with the smallest M of [`MEMORY_SIZES`] ≥ m
//! (only m pairs are kept); HAMCMC's memory must be one of them.

use super::RunError;

/// Compile-time dimensions, ascending. Larger models are refused.
pub const DIMENSIONS: [usize; 21] = [
    1, 2, 3, 4, 5, 6, 7, 8, 10, 14, 15, 20, 25, 32, 50, 64, 100, 128, 256, 512, 1000,
];

/// Compile-time L-BFGS memory sizes of QNHMC and HAMCMC, ascending.
pub const MEMORY_SIZES: [usize; 3] = [5, 10, 20];

/// The compile-time dimension a model of dimension `n` runs with.
///
/// ```
/// use qnmc_host::run::padded_dimension;
/// assert_eq!(padded_dimension(25).unwrap(), 25);
/// assert_eq!(padded_dimension(9).unwrap(), 10);
/// assert!(padded_dimension(1001).unwrap_err().to_string().contains("1000"));
/// ```
pub fn padded_dimension(n: usize) -> Result<usize, RunError> {
    if n == 0 {
        return Err(RunError::Settings("the target has no coordinates".into()));
    }
    DIMENSIONS
        .iter()
        .copied()
        .find(|&d| d >= n)
        .ok_or(RunError::DimensionTooLarge {
            dimension: n,
            largest: DIMENSIONS[DIMENSIONS.len() - 1],
        })
}

/// The compile-time memory size for `m` pairs (`None` above the largest).
pub fn memory_bucket(m: usize) -> Option<usize> {
    MEMORY_SIZES.iter().copied().find(|&b| b >= m)
}

/// `with_dimension!(d, |D| expr)`: evaluates `expr` with `D` a `const usize`
/// equal to `d`, which must be one of [`DIMENSIONS`] (else `$otherwise`).
macro_rules! with_dimension {
    ($d:expr, |$D:ident| $body:expr, $otherwise:expr) => {
        match $d {
            1 => {
                const $D: usize = 1;
                $body
            }
            2 => {
                const $D: usize = 2;
                $body
            }
            3 => {
                const $D: usize = 3;
                $body
            }
            4 => {
                const $D: usize = 4;
                $body
            }
            5 => {
                const $D: usize = 5;
                $body
            }
            6 => {
                const $D: usize = 6;
                $body
            }
            7 => {
                const $D: usize = 7;
                $body
            }
            8 => {
                const $D: usize = 8;
                $body
            }
            10 => {
                const $D: usize = 10;
                $body
            }
            14 => {
                const $D: usize = 14;
                $body
            }
            15 => {
                const $D: usize = 15;
                $body
            }
            20 => {
                const $D: usize = 20;
                $body
            }
            25 => {
                const $D: usize = 25;
                $body
            }
            32 => {
                const $D: usize = 32;
                $body
            }
            50 => {
                const $D: usize = 50;
                $body
            }
            64 => {
                const $D: usize = 64;
                $body
            }
            100 => {
                const $D: usize = 100;
                $body
            }
            128 => {
                const $D: usize = 128;
                $body
            }
            256 => {
                const $D: usize = 256;
                $body
            }
            512 => {
                const $D: usize = 512;
                $body
            }
            1000 => {
                const $D: usize = 1000;
                $body
            }
            _ => $otherwise,
        }
    };
}

/// `with_memory!(m, |M| expr)`: as [`with_dimension!`] for [`MEMORY_SIZES`].
macro_rules! with_memory {
    ($m:expr, |$M:ident| $body:expr, $otherwise:expr) => {
        match $m {
            5 => {
                const $M: usize = 5;
                $body
            }
            10 => {
                const $M: usize = 10;
                $body
            }
            20 => {
                const $M: usize = 20;
                $body
            }
            _ => $otherwise,
        }
    };
}

pub(crate) use {with_dimension, with_memory};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_size_dispatches_to_itself() {
        for d in DIMENSIONS {
            assert_eq!(with_dimension!(d, |D| D, 0), d);
        }
        assert_eq!(with_dimension!(9, |D| D, 0), 0);
        for m in MEMORY_SIZES {
            assert_eq!(with_memory!(m, |M| M, 0), m);
        }
    }

    #[test]
    fn buckets_are_the_smallest_that_fit() {
        assert!(DIMENSIONS.windows(2).all(|w| w[0] < w[1]));
        for n in 1..=1000 {
            let d = padded_dimension(n).unwrap();
            assert!(d >= n && DIMENSIONS.contains(&d));
            assert!(DIMENSIONS.iter().all(|&b| b < n || b >= d));
        }
        for n in [1, 2, 6, 7, 8, 10, 14, 15, 25, 100] {
            assert_eq!(padded_dimension(n).unwrap(), n, "built-in dimension {n}");
        }
        assert!(matches!(
            padded_dimension(1001),
            Err(RunError::DimensionTooLarge {
                dimension: 1001,
                largest: 1000
            })
        ));
        assert_eq!(memory_bucket(1), Some(5));
        assert_eq!(memory_bucket(11), Some(20));
        assert_eq!(memory_bucket(21), None);
    }
}
