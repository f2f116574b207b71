//! [`Ratings`]: a sparse users × items rating matrix, split into training
//! and test ratings, stored as compact arrays.

use super::PmfError;
use super::random::Draws;
use super::synthetic::SyntheticRecipe;
use std::path::PathBuf;

/// The share of the ratings held out as the test set, as in both papers
/// (HAMCMC §4.3: "we randomly select 10% of the data as the test set").
pub const TEST_FRACTION: f64 = 0.1;

/// The seed of the test split of a ratings file ([`Ratings::split`]), so
/// that every fit of the same file tests on the same ratings.
pub const SPLIT_SEED: u64 = 2016;

/// A list of (user, item, rating) triples as three parallel arrays: 0-based
/// `u32` user and item indices and `f32` ratings (12 bytes a rating; the
/// full MovieLens-1M shape takes 12 MB).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Triples {
    users: Vec<u32>,
    items: Vec<u32>,
    ratings: Vec<f32>,
}

impl Triples {
    /// No triples, with room for `capacity`.
    pub fn with_capacity(capacity: usize) -> Self {
        Triples {
            users: Vec::with_capacity(capacity),
            items: Vec::with_capacity(capacity),
            ratings: Vec::with_capacity(capacity),
        }
    }

    /// Appends one rating.
    pub fn push(&mut self, user: u32, item: u32, rating: f32) {
        self.users.push(user);
        self.items.push(item);
        self.ratings.push(rating);
    }

    /// Number of ratings.
    pub fn len(&self) -> usize {
        self.ratings.len()
    }

    /// `true` without ratings.
    pub fn is_empty(&self) -> bool {
        self.ratings.is_empty()
    }

    /// The user index of each rating.
    pub fn users(&self) -> &[u32] {
        &self.users
    }

    /// The item index of each rating.
    pub fn items(&self) -> &[u32] {
        &self.items
    }

    /// The ratings.
    pub fn ratings(&self) -> &[f32] {
        &self.ratings
    }

    /// Rating `n` as (user, item, rating).
    pub fn get(&self, n: usize) -> (usize, usize, f64) {
        (
            self.users[n] as usize,
            self.items[n] as usize,
            f64::from(self.ratings[n]),
        )
    }

    /// The mean rating (0 without ratings).
    pub fn mean(&self) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        self.ratings.iter().map(|&r| f64::from(r)).sum::<f64>() / self.len() as f64
    }

    /// The triples at `indices`, in that order.
    pub(crate) fn select(&self, indices: &[u32]) -> Triples {
        let mut out = Triples::with_capacity(indices.len());
        for &n in indices {
            let n = n as usize;
            out.push(self.users[n], self.items[n], self.ratings[n]);
        }
        out
    }
}

/// Where a set of ratings came from, for `model.json` and messages.
#[derive(Debug, Clone, PartialEq)]
pub enum RatingsSource {
    /// Made by [`SyntheticRecipe::build`].
    Synthetic(SyntheticRecipe),
    /// Read from a MovieLens `ratings.dat` file
    /// ([`read_movielens`](super::read_movielens)).
    MovieLens {
        /// The file.
        path: PathBuf,
        /// SHA-256 of its bytes.
        sha256: String,
        /// The file's `UserID` of each dense user index.
        user_ids: Vec<u32>,
        /// The file's `MovieID` of each dense item index.
        item_ids: Vec<u32>,
    },
    /// Given directly to [`Ratings::split`], with a caller's description.
    Other(String),
}

/// A users × items rating matrix observed at a sparse set of entries, split
/// into training ratings (what the models' likelihood sums over) and test
/// ratings (held out to measure prediction error).
///
/// Both parts keep the order the ratings were given in ([`split`](Self::split)
/// moves nothing but the held-out ratings), so ratings grouped by user stay
/// grouped: a gradient pass then reuses each user's factor row from cache.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratings {
    users: usize,
    items: usize,
    train: Triples,
    test: Triples,
    range: (f64, f64),
    source: RatingsSource,
}

impl Ratings {
    /// Splits `all` (a `users` × `items` matrix) into test and training
    /// ratings: round(`test_fraction` · N) ratings are held out, chosen by a
    /// partial Fisher–Yates shuffle of 0..N driven by `seed`; the rest,
    /// in their given order, are the training set, and the test set keeps the
    /// given order too. The same triples, fraction and seed give the same
    /// split.
    ///
    /// Fails when a user or item index is out of range, a rating is not
    /// finite, `test_fraction` is outside [0, 1), or no rating would be
    /// left for training. Duplicate (user, item) pairs are not looked for
    /// here (the loaders and the synthetic recipe never make them).
    pub fn split(
        users: usize,
        items: usize,
        all: Triples,
        test_fraction: f64,
        seed: u64,
        source: RatingsSource,
    ) -> Result<Self, PmfError> {
        if users == 0 || items == 0 || users > u32::MAX as usize || items > u32::MAX as usize {
            return Err(PmfError::new(format!(
                "a rating matrix needs 1 to 2^32 - 1 users and items, got {users} x {items}"
            )));
        }
        if !(0.0..1.0).contains(&test_fraction) {
            return Err(PmfError::new(format!(
                "the test fraction must be in [0, 1), got {test_fraction}"
            )));
        }
        for n in 0..all.len() {
            let (u, i, r) = all.get(n);
            if u >= users || i >= items || !r.is_finite() {
                return Err(PmfError::new(format!(
                    "rating {n} (user {u}, item {i}, rating {r}) is outside the {users} x {items} \
                     matrix or not finite"
                )));
            }
        }
        let n = all.len();
        let held_out = (test_fraction * n as f64).round() as usize;
        if held_out >= n {
            return Err(PmfError::new(format!(
                "{n} ratings leave none for training after holding out {held_out}"
            )));
        }
        let mut order: Vec<u32> = (0..n as u32).collect();
        let mut draws = Draws::new(seed);
        for k in 0..held_out {
            let pick = k + draws.below(n - k);
            order.swap(k, pick);
        }
        let mut is_test = vec![false; n];
        for &t in &order[..held_out] {
            is_test[t as usize] = true;
        }
        let (test, train): (Vec<u32>, Vec<u32>) = (0..n as u32).partition(|&t| is_test[t as usize]);
        let range = all
            .ratings()
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &r| {
                (lo.min(f64::from(r)), hi.max(f64::from(r)))
            });
        Ok(Ratings {
            users,
            items,
            train: all.select(&train),
            test: all.select(&test),
            range,
            source,
        })
    }

    /// Number of users I (rows).
    pub fn users(&self) -> usize {
        self.users
    }

    /// Number of items J (columns).
    pub fn items(&self) -> usize {
        self.items
    }

    /// The training ratings.
    pub fn train(&self) -> &Triples {
        &self.train
    }

    /// The held-out test ratings.
    pub fn test(&self) -> &Triples {
        &self.test
    }

    /// Number of ratings, training and test.
    pub fn len(&self) -> usize {
        self.train.len() + self.test.len()
    }

    /// `true` without ratings (never for a set that was split).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The share of the I·J entries that are observed (training or test).
    pub fn density(&self) -> f64 {
        self.len() as f64 / (self.users as f64 * self.items as f64)
    }

    /// The smallest and largest rating of the whole set: the scale that
    /// predictions are clipped to ([`clip`](Self::clip)).
    pub fn range(&self) -> (f64, f64) {
        self.range
    }

    /// `prediction` clipped to [`range`](Self::range), as Salakhutdinov and
    /// Mnih's code clips its predictions to [1, 5] before scoring them.
    pub fn clip(&self, prediction: f64) -> f64 {
        prediction.clamp(self.range.0, self.range.1)
    }

    /// Where the ratings came from.
    pub fn source(&self) -> &RatingsSource {
        &self.source
    }

    /// The data as `model.json` records them: source (recipe, or file and
    /// SHA-256), shape, counts, rating range and split.
    pub fn describe(&self) -> serde_json::Value {
        let source = match &self.source {
            RatingsSource::Synthetic(recipe) => serde_json::json!({
                "kind": "synthetic (qnmc_host::targets::SyntheticRecipe)",
                "users": recipe.users,
                "items": recipe.items,
                "ratings": recipe.ratings,
                "min_per_user": recipe.min_per_user,
                "seed": recipe.seed,
                "test_split_seed": recipe.seed.wrapping_add(1),
            }),
            RatingsSource::MovieLens { path, sha256, .. } => serde_json::json!({
                "kind": "MovieLens ratings.dat",
                "file": path.display().to_string(),
                "absolute_path": std::fs::canonicalize(path).ok().map(|p| p.display().to_string()),
                "sha256": sha256,
                "ids": "user and movie ids mapped to dense indices in increasing id order (1-based in the reported names)",
                "test_split_seed": SPLIT_SEED,
            }),
            RatingsSource::Other(what) => serde_json::json!({ "kind": what }),
        };
        serde_json::json!({
            "source": source,
            "users": self.users,
            "items": self.items,
            "ratings": self.len(),
            "train_ratings": self.train.len(),
            "test_ratings": self.test.len(),
            "density": self.density(),
            "rating_range": [self.range.0, self.range.1],
            "train_mean": self.train.mean(),
            "test_split": "a seeded partial Fisher-Yates shuffle holds out round(fraction * N) ratings",
        })
    }

    /// Root-mean-square error of `predictions` (one per test rating, in
    /// [`test`](Self::test) order) against the test ratings, as given
    /// (clip them first to score clipped predictions). NaN without test
    /// ratings.
    pub fn test_rmse(&self, predictions: &[f64]) -> f64 {
        assert_eq!(predictions.len(), self.test.len());
        let sum: f64 = predictions
            .iter()
            .zip(self.test.ratings())
            .map(|(&p, &r)| (p - f64::from(r)).powi(2))
            .sum();
        (sum / predictions.len() as f64).sqrt()
    }
}
