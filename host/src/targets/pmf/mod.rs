//! Matrix factorisation on rating data, for the papers' experiments:
//! [`GaussianPmf`] (HAMCMC §4.3, eq. 17, K = 50, with the block schedule of
//! its Fig. 5) and [`BayesianPmf`] (QNHMC §5.3, Table 3, K = 10).
//!
//! - [`Ratings`]: users × items ratings as compact (u32, u32, f32) arrays,
//!   split 90/10 into training and test ratings ([`Triples`]);
//! - [`SyntheticRecipe`]: a MovieLens-1M-shaped set made from a seed
//!   (6040 × 3883, 1 000 209 ratings), and smaller ones by the same recipe;
//! - [`read_movielens`]: MovieLens's own `ratings.dat`, which may not be
//!   passed on and so is never in the repository;
//! - [`BlockPartition`]: the B × B block grid and its B diagonal parts.
//!
//! Both models put each user's and each item's K factors in consecutive
//! coordinates (users first) and report prediction errors and a few
//! coordinates, not their hundreds of thousands of coordinates.

mod bayesian_pmf;
mod blocks;
mod factors;
mod gaussian_pmf;
mod movielens;
mod random;
mod ratings;
mod report;
mod synthetic;
mod synthetic_build;

#[cfg(test)]
mod data_tests;
#[cfg(test)]
mod tests;

pub use bayesian_pmf::{BayesianPmf, Hyper};
pub use blocks::BlockPartition;
pub use factors::dot as factor_dot;
pub use gaussian_pmf::GaussianPmf;
pub use movielens::read_movielens;
pub use ratings::{Ratings, RatingsSource, SPLIT_SEED, TEST_FRACTION, Triples};
pub use report::TRAIN_RMSE_SAMPLE;
pub use synthetic::{MAX_SHARE_PER_USER, MIN_PER_USER, SYNTHETIC_SEED, SyntheticRecipe, TRUE_RANK};

/// Settings or sizes a rating set or factorisation model cannot have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PmfError(String);

impl PmfError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        PmfError(message.into())
    }
}

impl std::fmt::Display for PmfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PmfError {}
