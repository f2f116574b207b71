//! The run-time dimension every sampler shares (feature
//! `runtime-dimension`): a model of n coordinates in storage compiled for D
//! ≥ n. The sampler keeps n in a field whose all-zero value means D, moves
//! only the first n coordinates and stops every pass at n, so a draw costs
//! what dimension n costs and the chain is bit for bit that of a sampler
//! compiled for n. Without the feature every length is the constant D and
//! the code is that of a const-generic sampler.
//!
//! This file holds what the stored value means and the checks of
//! `set_dimension`. The bit-identity tests (a sampler at n inside D against
//! one compiled for n) are `samplers/dimension_tests.rs` for every sampler
//! but NUTS and the ensembles, `samplers/ensemble/dimension_tests.rs` for
//! the ensembles, and `adaptation/dimension_tests.rs` for the NUTS warm-up.

use crate::error::Error;
use crate::kernels::zero_from;
use crate::real::Real;

pub(crate) use crate::kernels::dimension_in_use as in_use;

/// Checks a new run-time dimension `n` for a sampler at `position` that has
/// (`started`) or has not yet taken a step: 1 ≤ n ≤ D, before the first
/// step, and the position zero from n on.
#[cfg_attr(not(feature = "runtime-dimension"), allow(dead_code))]
pub(crate) fn check_new<T: Real, const D: usize>(
    n: usize,
    started: bool,
    position: &[T; D],
) -> Result<(), Error> {
    if n == 0 || n > D {
        return Err(Error::invalid("dimension", ">= 1 and at most D"));
    }
    if started {
        return Err(Error::invalid("dimension", "set before the first step"));
    }
    if !zero_from(position, n) {
        return Err(Error::invalid(
            "dimension",
            "at least the position's last nonzero coordinate",
        ));
    }
    Ok(())
}
