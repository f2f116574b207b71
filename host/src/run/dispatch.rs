//! From a run-time dimension to the compile-time sizes of the core samplers.
//!
//! The samplers are const-generic in the dimension D and the L-BFGS memory M.
//! A model of dimension n runs with the smallest D of [`DIMENSIONS`] that is
//! ≥ n (NUTS: of [`NUTS_DIMENSIONS`], which go on to 16 384).
//!
//! - NUTS runs with the run-time dimension n
//!   ([`AdaptiveNuts::set_dimension`](qnmc::adaptation::AdaptiveNuts::set_dimension)):
//!   coordinates n.. stay exactly zero and every pass over the vectors stops
//!   at n, so a draw costs what dimension n costs, and the chain is bit for
//!   bit the one a size-n sampler would draw. D only sets the storage.
//! - The samplers of any dimension
//!   ([`SamplerKind::runs_any_dimension`](super::SamplerKind::runs_any_dimension):
//!   HMC, QNHMC, HAMCMC, AMAGOLD, L2MC, SGLD, pSGLD, SGRLD, SGHMC, SGNHT,
//!   SGRHMC) run a model of more than
//!   1000 coordinates in the one storage size [`LARGE_DIMENSION`] (2²⁰),
//!   with its run-time dimension n as NUTS does: built in place in a
//!   zeroed allocation, so only the pages of n coordinates are ever
//!   touched, and every pass stops at n. One size rather than a ladder:
//!   each size compiles these samplers once more, and a larger one costs
//!   nothing at run time.
//!   Up to 1000 coordinates they run in the next size of [`DIMENSIONS`],
//!   moving the model's n coordinates only, like NUTS.
//! - The other samplers (the ensembles) pad the model with D − n independent N(0, 1)
//!   coordinates ([`PaddedModel`](crate::model::PaddedModel)), dropped from
//!   the output; they cost dimension D (at most 1.6 n) and are offered up to
//!   1000.
//!
//! Every built-in target (1, 2, 6, 7, 8, 10, 14, 15, 25, 100) has its own
//! bucket, except `stochastic-volatility` (103, in the 128 bucket).
//! QNHMC's memory of m pairs runs with the smallest M of [`MEMORY_SIZES`] ≥ m
//! (only m pairs are kept); HAMCMC's memory must be one of them.

use super::{RunError, SamplerKind};

/// Compile-time dimensions of every sampler, ascending. Larger models are
/// refused, except by NUTS ([`NUTS_DIMENSIONS`]).
pub const DIMENSIONS: [usize; 21] = [
    1, 2, 3, 4, 5, 6, 7, 8, 10, 14, 15, 20, 25, 32, 50, 64, 100, 128, 256, 512, 1000,
];

/// The compile-time dimensions NUTS alone has beyond [`DIMENSIONS`],
/// ascending: storage for models up to 16 384 coordinates, which NUTS runs at
/// the cost of their own dimension. (Each size compiles NUTS with the
/// identity, diagonal and quasi-Newton metrics once more.)
pub const NUTS_DIMENSIONS: [usize; 4] = [2048, 4096, 8192, 16384];

/// The storage (compile-time dimension) of the samplers of any dimension
/// for a model of more than 1000 coordinates: 2²⁰ = 1 048 576, the largest
/// model they run. Virtual memory only: a sampler is allocated zeroed and
/// touches the pages of the model's n coordinates (QNHMC with 20 pairs
/// reserves 8·(4·20 + 9)·2²⁰ bytes = 746 MB of address space per chain).
pub const LARGE_DIMENSION: usize = 1 << 20;

/// The L-BFGS memory NUTS's quasi-Newton metric is compiled with in the
/// sizes of [`NUTS_DIMENSIONS`]; `--memory m` keeps m ≤ 20 pairs in it.
pub const NUTS_LARGE_MEMORY: usize = 20;

/// The L-BFGS storage NUTS's quasi-Newton metric gets in the 32 bucket
/// (models of 26–32 coordinates) with `--memory` ≤ 20 and the window
/// covariance on: the window's covariance metric needs n ≤ M pairs. Only
/// `--memory` pairs between draws are kept in it, as elsewhere. On
/// posteriordb's diamonds (D = 26, seeds 1–3) ESS per gradient against
/// nuts-rs low-rank rose from 0.35× to 1.24× on the kept draws and from
/// 0.26× to 0.62× including warm-up. The 25 bucket keeps M = 20: German
/// credit (D = 25, seeds 1–20) gained bulk ESS per kept gradient (0.92× →
/// 1.10×) but lost tail ESS (1.82× → 1.41× including warm-up)
/// (docs/NUTS.md, "The linearity gate"), so models of 21–25 coordinates get
/// this storage too but the covariance metric only where their start found
/// no optimum, and no secants at an optimum ([`NUTS_NO_OPTIMUM_COVARIANCE_BUCKET`]).
pub const NUTS_WINDOW_COVARIANCE_MEMORY: usize = 32;

/// The bucket (models of 21–25 coordinates) that runs NUTS's quasi-Newton
/// metric in the storage of the 32 bucket ([`NUTS_WINDOW_COVARIANCE_MEMORY`]
/// pairs, compile-time dimension 32) with the window's covariance metric
/// only in chains whose L-BFGS start found no optimum
/// (`LbfgsEstimatorSettings::covariance_without_optimum_only`) and without
/// secants at an optimum: a chain that finds one runs as with 20 pairs.
/// On `radon-centered` (n = 24, a centred hierarchy: no optimum) ESS per
/// gradient including warm-up rose 1.63× [1.43, 1.86] (seeds 1–20,
/// docs/HIERARCHICAL.md); German credit (n = 25) keeps every draw.
pub const NUTS_NO_OPTIMUM_COVARIANCE_BUCKET: usize = 25;

/// The L-BFGS storage (the const M) NUTS's quasi-Newton metric runs with in
/// compiled size `d` for `--memory` bucket `memory` (`None`: no bucket):
/// [`NUTS_WINDOW_COVARIANCE_MEMORY`] in the 32 and 25 buckets with the
/// default bucket and the window covariance on (the 25 bucket then runs in
/// the 32 bucket's storage), [`NUTS_LARGE_MEMORY`] beyond
/// [`DIMENSIONS`], else the memory bucket. The window's covariance metric
/// applies to a model of dimension n ≤ this.
///
/// ```
/// use qnmc_host::run::nuts_lbfgs_storage;
/// assert_eq!(nuts_lbfgs_storage(32, Some(20), true), Some(32));
/// assert_eq!(nuts_lbfgs_storage(25, Some(20), true), Some(32));
/// assert_eq!(nuts_lbfgs_storage(25, Some(20), false), Some(20));
/// assert_eq!(nuts_lbfgs_storage(32, Some(20), false), Some(20));
/// assert_eq!(nuts_lbfgs_storage(32, Some(10), true), Some(10));
/// assert_eq!(nuts_lbfgs_storage(2048, None, true), Some(20));
/// ```
pub fn nuts_lbfgs_storage(
    d: usize,
    memory: Option<usize>,
    window_covariance: bool,
) -> Option<usize> {
    if d > DIMENSIONS[DIMENSIONS.len() - 1] {
        Some(NUTS_LARGE_MEMORY)
    } else if window_covariance
        && (d == NUTS_WINDOW_COVARIANCE_MEMORY || d == NUTS_NO_OPTIMUM_COVARIANCE_BUCKET)
        && memory == Some(NUTS_LARGE_MEMORY)
    {
        Some(NUTS_WINDOW_COVARIANCE_MEMORY)
    } else {
        memory
    }
}

/// Compile-time L-BFGS memory sizes of QNHMC and HAMCMC, ascending.
pub const MEMORY_SIZES: [usize; 3] = [5, 10, 20];

/// The compile-time dimension a model of dimension `n` runs with (every
/// sampler but NUTS; see [`nuts_dimension`]).
///
/// ```
/// use qnmc_host::run::padded_dimension;
/// assert_eq!(padded_dimension(25).unwrap(), 25);
/// assert_eq!(padded_dimension(9).unwrap(), 10);
/// assert!(padded_dimension(1001).unwrap_err().to_string().contains("1000"));
/// ```
pub fn padded_dimension(n: usize) -> Result<usize, RunError> {
    bucket(n, DIMENSIONS.iter().copied())
}

/// The compile-time dimension (storage) NUTS runs a model of dimension `n`
/// in: that of [`padded_dimension`] up to 1000, then the smallest of
/// [`NUTS_DIMENSIONS`] ≥ n.
///
/// ```
/// use qnmc_host::run::nuts_dimension;
/// assert_eq!(nuts_dimension(300).unwrap(), 512);
/// assert_eq!(nuts_dimension(5000).unwrap(), 8192);
/// assert_eq!(nuts_dimension(10_000).unwrap(), 16384);
/// assert!(nuts_dimension(16385).unwrap_err().to_string().contains("16384"));
/// ```
pub fn nuts_dimension(n: usize) -> Result<usize, RunError> {
    bucket(n, DIMENSIONS.iter().chain(&NUTS_DIMENSIONS).copied())
}

/// The compile-time dimension (storage) `kind` runs a model of dimension `n`
/// in: [`nuts_dimension`] for NUTS; for a sampler of any dimension that of
/// [`padded_dimension`] up to 1000, then [`LARGE_DIMENSION`]; for the others
/// [`padded_dimension`].
///
/// ```
/// use qnmc_host::run::{LARGE_DIMENSION, SamplerKind, dimension_for};
/// assert_eq!(dimension_for(SamplerKind::Sgld, 784).unwrap(), 1000);
/// assert_eq!(dimension_for(SamplerKind::Hamcmc, 496_150).unwrap(), LARGE_DIMENSION);
/// assert_eq!(dimension_for(SamplerKind::Nuts, 5000).unwrap(), 8192);
/// let refused = dimension_for(SamplerKind::MhBfgs, 5000).unwrap_err().to_string();
/// assert!(refused.contains("mh-bfgs") && refused.contains("1000"), "{refused}");
/// assert!(dimension_for(SamplerKind::Sgld, LARGE_DIMENSION + 1).is_err());
/// ```
pub fn dimension_for(kind: SamplerKind, n: usize) -> Result<usize, RunError> {
    let largest_padded = DIMENSIONS[DIMENSIONS.len() - 1];
    if kind == SamplerKind::Nuts {
        return nuts_dimension(n);
    }
    if kind.runs_any_dimension() && n > largest_padded {
        return bucket(n, [LARGE_DIMENSION].into_iter());
    }
    padded_dimension(n).map_err(|e| match e {
        RunError::DimensionTooLarge { dimension, largest } => {
            let any: Vec<&str> = SamplerKind::ALL
                .iter()
                .filter(|k| k.runs_any_dimension())
                .map(|k| k.name())
                .collect();
            RunError::Settings(format!(
                "the target has dimension {dimension}; {kind} is compiled for at most {largest} \
                 (nuts, the default sampler, for up to {}; {} for up to {LARGE_DIMENSION})",
                NUTS_DIMENSIONS[NUTS_DIMENSIONS.len() - 1],
                any.join(", ")
            ))
        }
        other => other,
    })
}

fn bucket(n: usize, sizes: impl Iterator<Item = usize> + Clone) -> Result<usize, RunError> {
    if n == 0 {
        return Err(RunError::Settings("the target has no coordinates".into()));
    }
    let largest = sizes.clone().max().unwrap_or(0);
    sizes
        .filter(|&d| d >= n)
        .min()
        .ok_or(RunError::DimensionTooLarge {
            dimension: n,
            largest,
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

/// `with_nuts_dimension!(d, |D| expr)`: as [`with_dimension!`] for
/// [`NUTS_DIMENSIONS`].
macro_rules! with_nuts_dimension {
    ($d:expr, |$D:ident| $body:expr, $otherwise:expr) => {
        match $d {
            2048 => {
                const $D: usize = 2048;
                $body
            }
            4096 => {
                const $D: usize = 4096;
                $body
            }
            8192 => {
                const $D: usize = 8192;
                $body
            }
            16384 => {
                const $D: usize = 16384;
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

pub(crate) use {with_dimension, with_memory, with_nuts_dimension};

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
        for d in NUTS_DIMENSIONS {
            assert_eq!(with_nuts_dimension!(d, |D| D, 0), d);
        }
        assert_eq!(with_nuts_dimension!(1000, |D| D, 0), 0);
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
        assert!(NUTS_DIMENSIONS.windows(2).all(|w| w[0] < w[1]));
        assert!(NUTS_DIMENSIONS[0] > DIMENSIONS[DIMENSIONS.len() - 1]);
        for n in [1, 9, 300, 1000] {
            assert_eq!(nuts_dimension(n).unwrap(), padded_dimension(n).unwrap());
        }
        for (n, d) in [(1001, 2048), (2048, 2048), (2049, 4096), (10_000, 16384)] {
            assert_eq!(nuts_dimension(n).unwrap(), d, "{n}");
        }
        assert!(matches!(
            nuts_dimension(16385),
            Err(RunError::DimensionTooLarge {
                dimension: 16385,
                largest: 16384
            })
        ));
        assert!(nuts_dimension(0).is_err());
        assert_eq!(memory_bucket(1), Some(5));
        assert_eq!(memory_bucket(11), Some(20));
        assert_eq!(memory_bucket(21), None);
    }
}
