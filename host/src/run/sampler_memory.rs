//! The L-BFGS memory of a sampler, as its registry row declares it.

/// The L-BFGS memory a sampler keeps, and how `--memory` is checked and
/// compiled for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SamplerMemory {
    /// No memory (`--memory` is not among its options).
    None,
    /// Up to `MAX_QNHMC_MEMORY` pairs, compiled in the buckets of
    /// [`MEMORY_SIZES`](crate::run::MEMORY_SIZES).
    Pairs {
        /// Pairs without `--memory`.
        default: usize,
    },
    /// Exactly one of `sizes` pairs, each compiled.
    Sizes {
        /// Pairs without `--memory`.
        default: usize,
        /// The sizes offered.
        sizes: &'static [usize],
    },
    /// NUTS: pairs of its quasi-Newton metric (`--metric lbfgs` only,
    /// checked with the NUTS options).
    NutsMetric {
        /// Pairs without `--memory`.
        default: usize,
    },
}
