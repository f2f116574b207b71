//! The ratings of the matrix-factorisation reproductions (`hamcmc-fig5`,
//! `qnhmc-table3`): the MovieLens-1M-shaped synthetic set
//! ([`SyntheticRecipe::movielens_1m`]: 6040 users × 3883 items, 1 000 209
//! ratings, 10 % held out), its tenth (`pmf-small`'s 604 × 388) for quick
//! runs, or the real `ratings.dat` when [`RATINGS_VARIABLE`] names it
//! (MovieLens's licence forbids shipping it).

use super::ReproduceOptions;
use qnmc_host::targets::{Ratings, SYNTHETIC_SEED, SyntheticRecipe, read_movielens};

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

/// The running average of the test predictions of the draws kept so far,
/// and its test RMSE (each averaged prediction clipped to the rating
/// range): the estimate both matrix-factorisation reproductions plot.
#[derive(Debug, Clone, PartialEq)]
pub struct AveragedPredictions {
    sum: Vec<f64>,
    averaged: Vec<f64>,
    kept: usize,
}

impl AveragedPredictions {
    /// No draw kept yet, for `tests` test ratings.
    pub fn new(tests: usize) -> Self {
        AveragedPredictions {
            sum: vec![0.0; tests],
            averaged: vec![0.0; tests],
            kept: 0,
        }
    }

    /// Keeps one draw's unclipped `predictions` and returns the test RMSE
    /// of the average of every draw kept.
    pub fn keep(&mut self, ratings: &Ratings, predictions: &[f64]) -> f64 {
        self.kept += 1;
        let kept = self.kept as f64;
        for ((s, a), &p) in self.sum.iter_mut().zip(&mut self.averaged).zip(predictions) {
            *s += p;
            *a = ratings.clip(*s / kept);
        }
        ratings.test_rmse(&self.averaged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The average of the draws kept, clipped, is what is scored: two draws
    /// predicting 0 and 8 average to 4 (inside [1, 5]); one more at 8 gives
    /// 16/3, clipped to 5.
    #[test]
    fn kept_draws_are_averaged_then_clipped() {
        let ratings = qnmc_host::targets::SyntheticRecipe::new(30, 20, 300, 4)
            .with_min_per_user(5)
            .build()
            .unwrap();
        let n = ratings.test().len();
        let mut average = AveragedPredictions::new(n);
        let _ = average.keep(&ratings, &vec![0.0; n]);
        let rmse = average.keep(&ratings, &vec![8.0; n]);
        assert_eq!(rmse, ratings.test_rmse(&vec![4.0; n]));
        let rmse = average.keep(&ratings, &vec![8.0; n]);
        assert_eq!(rmse, ratings.test_rmse(&vec![5.0; n]));
    }
}
