//! The quasi-Newton metric's warm-up: how NUTS learns an
//! [`LbfgsMetric`](crate::metric::LbfgsMetric) from its own draws
//! (docs/NUTS.md, "The quasi-Newton metric and how the warm-up learns it").
//!
//! - `lbfgs_estimator/`: [`LbfgsEstimator`], the estimator and its window end
//!   (`mod.rs`), the start from an L-BFGS optimum (`optimum.rs`), the pool of
//!   curvature pairs and the probes along power-iteration directions
//!   (`pair_pool.rs`), the contest of candidate metrics on held-out draws
//!   (`metric_contest.rs`);
//! - `lbfgs_start.rs`: the L-BFGS start the estimator and
//!   [`LbfgsStartDiagonalEstimator`] (`--metric diag`) share;
//! - `window_covariance.rs`: a window's covariances of θ and ∇U and their
//!   geometric mean as conjugate pairs, the fourth candidate;
//! - `covariance_product.rs`: Ĉov(x)·q streamed in O(D);
//! - `scale_shrinkage.rs`: James–Stein shrinkage of a diagonal's log scales.

mod covariance_product;
mod lbfgs_estimator;
mod lbfgs_start;
mod scale_shrinkage;
mod window_covariance;

pub use lbfgs_estimator::{
    DEFAULT_RANK_TOLERANCE, LbfgsEstimator, LbfgsEstimatorSettings, MIN_GRADIENT_LINEARITY,
};
pub use lbfgs_start::LbfgsStartDiagonalEstimator;
