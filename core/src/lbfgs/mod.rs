//! The L-BFGS engine shared by every quasi-Newton sampler (ALGORITHMS.md §1).
//!
//! - [`PairRing`] (`pair_ring.rs`): fixed-capacity ring buffer of (s, y) pairs;
//! - [`CurvaturePolicy`] (`curvature.rs`): which pairs may enter;
//! - [`LbfgsMemory`] (`memory.rs`): the pairs, γ and the counters;
//! - `two_loop.rs`: H·v; `factors.rs`: the product-form factors of H and B
//!   (ALGORITHMS.md §1's corrected formulas, compact form);
//!   `square_root_operators.rs`: S·z, C·z, B·v, log det H on them;
//! - [`minimize`] (`minimize.rs`): L-BFGS minimisation of U with a backtracking line search;
//!   [`minimize_observed`] hands each iterate and the memory to an observer
//!   that may stop it;
//! - [`elbo_estimate`] (`elbo.rs`): the ELBO of the Gaussian the memory describes at a point.
//!
//! Imports run one way: the memory uses the factors, the operators use
//! both, so no two files import each other. The engine never knows which
//! sampler uses it: its users are the samplers, the warm-up and
//! [`LbfgsMetric`](crate::metric::LbfgsMetric), never the other way round.

mod curvature;
mod elbo;
mod factors;
mod memory;
mod minimize;
mod pair_ring;
mod square_root_operators;
mod two_loop;

pub use curvature::CurvaturePolicy;
pub use elbo::{ELBO_DRAWS, elbo_estimate};
pub use memory::{InitialScaling, LbfgsMemory, LbfgsSettings};
pub use minimize::{MinimizeOutcome, minimize, minimize_observed, minimize_within};
pub use pair_ring::PairRing;
