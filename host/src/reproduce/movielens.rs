//! The ratings of the matrix-factorisation reproductions (`hamcmc-fig5`,
//! `qnhmc-table3`): the MovieLens-1M-shaped synthetic set
//! ([`SyntheticRecipe::movielens_1m`]: 6040 users × 3883 items, 1 000 209
//! ratings, 10 % held out), its tenth (`pmf-small`'s 604 × 388) for quick
//! runs, or the real `ratings.dat` when [`RATINGS_VARIABLE`] names it
//! (MovieLens's licence forbids shipping it).

use super::ReproduceOptions;
use crate::targets::{Ratings, SYNTHETIC_SEED, SyntheticRecipe, read_movielens};

/// Environment variable naming a MovieLens-1M `ratings.dat` to run on
/// instead of the synthetic set.
pub const RATINGS_VARIABLE: &str = "QNMC_MOVIELENS_RATINGS";

/// The ratings a run uses and a phrase saying where they came from: the
/// tenth-size synthetic set in a quick run, else the file
/// [`RATINGS_VARIABLE`] names, else the full synthetic set.
pub fn ratings(options: &ReproduceOptions) -> Result<(Ratings, String), String> {
    if options.quick {
        let recipe = SyntheticRecipe::movielens_1m_tenth(SYNTHETIC_SEED);
        return recipe
            .build()
            .map(|r| (r, "the synthetic set of `pmf-small` (604 × 388)".into()))
            .map_err(|e| e.to_string());
    }
    if let Some(path) = std::env::var_os(RATINGS_VARIABLE) {
        let shown = std::path::Path::new(&path).display().to_string();
        return read_movielens(&path)
            .map(|r| (r, format!("MovieLens-1M `{shown}`")))
            .map_err(|e| e.to_string());
    }
    SyntheticRecipe::movielens_1m(SYNTHETIC_SEED)
        .build()
        .map(|r| {
            (
                r,
                "the MovieLens-1M-shaped synthetic set of `pmf` (6040 × 3883)".into(),
            )
        })
        .map_err(|e| e.to_string())
}
