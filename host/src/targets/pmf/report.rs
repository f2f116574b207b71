//! The quantities both factorisation models report for each draw, in
//! place of their hundreds of thousands of coordinates (the runner keeps
//! every reported quantity of every draw): prediction errors and two
//! predicted entries, which, unlike single factor coordinates, do not
//! depend on the factors' rotation or sign.

use super::factors::{Layout, clipped_rmse, even_subsample};
use super::ratings::Ratings;

/// Most training ratings whose RMSE is reported (`rmse_train`).
pub const TRAIN_RMSE_SAMPLE: usize = 10_000;

/// Which ratings the reported errors and predictions are about.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Report {
    /// Training indices of the `rmse_train` subsample.
    train_sample: Vec<u32>,
    /// (user, item) of the first two test ratings, reported as `X[u,j]`.
    entries: Vec<(usize, usize)>,
    has_test: bool,
}

impl Report {
    pub fn new(ratings: &Ratings) -> Self {
        let test = ratings.test();
        Report {
            train_sample: even_subsample(ratings.train().len(), TRAIN_RMSE_SAMPLE),
            entries: (0..test.len().min(2))
                .map(|n| {
                    let (u, j, _) = test.get(n);
                    (u, j)
                })
                .collect(),
            has_test: !test.is_empty(),
        }
    }

    /// `rmse_test` (with test ratings), `rmse_train`, `X[u,j]` (1-based).
    pub fn names(&self) -> Vec<String> {
        let mut names = Vec::new();
        if self.has_test {
            names.push("rmse_test".to_owned());
        }
        names.push("rmse_train".to_owned());
        for &(u, j) in &self.entries {
            names.push(format!("X[{},{}]", u + 1, j + 1));
        }
        names
    }

    /// Writes the values of [`names`](Self::names) at the start of `out`
    /// and returns how many.
    pub fn write(
        &self,
        layout: Layout,
        x: &[f64],
        ratings: &Ratings,
        offset: f64,
        out: &mut [f64],
    ) -> usize {
        let range = ratings.range();
        let mut n = 0;
        if self.has_test {
            let test = ratings.test();
            out[n] = clipped_rmse(layout, x, test, 0..test.len(), offset, range);
            n += 1;
        }
        let sample = self.train_sample.iter().map(|&i| i as usize);
        out[n] = clipped_rmse(layout, x, ratings.train(), sample, offset, range);
        n += 1;
        for &(u, j) in &self.entries {
            out[n] = offset + layout.product(x, u, j);
            n += 1;
        }
        n
    }

    /// How the reported quantities are defined, for `model.json`.
    pub fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "rmse_test": "RMSE on the test ratings of this draw's predictions offset + W_u.H_j, \
                          each clipped to the rating range",
            "rmse_train": format!(
                "the same on {} training ratings (every k-th)",
                self.train_sample.len()
            ),
            "X[u,j]": "this draw's prediction offset + W_u.H_j (not clipped) of the first two \
                       test ratings' entries (1-based dense user and item indices)",
        })
    }
}
