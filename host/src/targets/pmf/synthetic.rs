//! [`SyntheticRecipe`]: a MovieLens-shaped rating matrix made from a seed,
//! for the matrix-factorisation experiments without the MovieLens files
//! (whose licence forbids passing them on). The recipe is documented on
//! [`SyntheticRecipe`]; building it (`SyntheticRecipe::build`) is in
//! `synthetic_build.rs`, so that `ratings.rs` can name the recipe as a
//! source without an import loop.

/// The rank K of the true factors.
pub const TRUE_RANK: usize = 10;

/// The largest share of the items one user rates.
pub const MAX_SHARE_PER_USER: f64 = 0.6;

/// The fewest ratings a user has, as in MovieLens-1M.
pub const MIN_PER_USER: usize = 20;

/// The seed of the built-in synthetic sets (`--target pmf`, `bpmf`).
pub const SYNTHETIC_SEED: u64 = 2016;

/// Log-normal σ of the users' activity weights.
pub(super) const ACTIVITY_SIGMA: f64 = 1.2;
/// Log-normal σ of the items' popularity weights.
pub(super) const POPULARITY_SIGMA: f64 = 1.2;
/// Mean of the latent score.
pub(super) const SCORE_MEAN: f64 = 3.7;
/// Sd of the item biases.
pub(super) const ITEM_BIAS_SD: f64 = 0.5;
/// Sd of the user biases.
pub(super) const USER_BIAS_SD: f64 = 0.4;
/// Sd of each entry of the true factors.
pub(super) const FACTOR_SD: f64 = 0.46;
/// Sd of the noise of the latent score.
pub(super) const NOISE_SD: f64 = 0.76;

/// The size and seed of a synthetic rating matrix; [`build`](Self::build)
/// makes it by the recipe below.
///
/// # The recipe
///
/// Everything is drawn from one xorshift generator ([`ModelRng`]) seeded
/// with `seed`, in this order:
///
/// 1. **User activity.** User u rates n_u = m + e_u items: m =
///    [`min_per_user`](SyntheticRecipe::min_per_user) (20, MovieLens's
///    minimum) plus a share e_u of the N − I·m remaining ratings
///    proportional to a log-normal weight exp(1.2·z_u), z_u ~ N(0, 1). No
///    user rates more than [`MAX_SHARE_PER_USER`] of the items (60 %;
///    MovieLens-1M's busiest user rated 62 % of the rated movies): weights
///    whose share would pass that are held at it and the rest shared again
///    until none does; the real shares are rounded down and the ratings
///    left over go one each to the users with the largest fractional parts
///    (ties to the lower index). So Σ n_u = N exactly, and the counts are
///    heavy-tailed: the full set (seed 2016) has median 96 and maximum
///    2330 per user (MovieLens-1M: 96 and 2314; the mean, 166, is N/I in
///    both).
/// 2. **Item popularity.** Item j gets weight p_j = exp(1.2·z_j). The
///    full set (seed 2016) has median 159 and maximum 3561 ratings per
///    item (MovieLens-1M: 124 and 3428).
/// 3. **True model.** Item and user biases b_j ~ N(0, 0.5²), c_u ~ N(0,
///    0.4²); factors W_u, H_j ∈ ℝ¹⁰ with entries N(0, 0.46²), so that
///    W_u·H_j has variance 10·0.46⁴ ≈ 0.45 ([`TRUE_RANK`]).
/// 4. **Who rated what.** For each user in turn, n_u distinct items, drawn
///    one after another with probability ∝ p_j among the items not yet
///    drawn (weighted sampling without replacement, so no (user, item)
///    pair repeats). Users with n_u ≤ J/4 draw from the cumulative weights
///    and redraw an item already taken; busier users take the n_u smallest
///    exponential clocks E_j/p_j (Efraimidis and Spirakis), which has the
///    same law without the redraws. Each user's items are then sorted, so
///    the ratings are ordered by (user, item).
/// 5. **Ratings.** Rating = round(3.7 + b_j + c_u + W_u·H_j + ε) clipped to
///    1..=5, ε ~ N(0, 0.76²), one score per (user, item) in the order of
///    step 4. The latent score has sd ≈ 1.2 (0.25 + 0.16 + 0.45 + 0.58 =
///    1.44), chosen so that the rounded and clipped ratings have a
///    MovieLens-like histogram and mean: the full set (seed 2016) has
///    shares 3/13/28/31/25 % for 1…5 and mean 3.61 (MovieLens-1M:
///    6/11/26/35/23 %, 3.58). Noise and rounding alone (variance 0.58 + 1/12) leave the true
///    scores an RMSE of about 0.8 before clipping, near the 0.84–0.87 the
///    papers' samplers reach on MovieLens-1M.
/// 6. **Test split.** [`Ratings::split`](super::Ratings::split) with [`TEST_FRACTION`](super::TEST_FRACTION) (10 %) and
///    seed `seed + 1` (wrapping).
///
/// [`SyntheticRecipe::movielens_1m`] is MovieLens-1M's shape: 6040 users ×
/// 3883 items, 1 000 209 ratings (4.26 % observed). [`SyntheticRecipe::new`]
/// makes other sizes with the same recipe (tests, quick runs).
///
/// [`ModelRng`]: crate::model::ModelRng
///
/// ```
/// use qnmc_host::targets::SyntheticRecipe;
///
/// let ratings = SyntheticRecipe::new(50, 60, 1500, 7).build().unwrap();
/// assert_eq!(ratings.len(), 1500);
/// assert_eq!(ratings.test().len(), 150);
/// assert_eq!((ratings.users(), ratings.items()), (50, 60));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyntheticRecipe {
    /// Number of users I.
    pub users: usize,
    /// Number of items J.
    pub items: usize,
    /// Number of ratings N, training and test.
    pub ratings: usize,
    /// The fewest ratings a user has ([`MIN_PER_USER`] unless changed).
    pub min_per_user: usize,
    /// The generator's seed.
    pub seed: u64,
}

impl SyntheticRecipe {
    /// MovieLens-1M's shape: 6040 users, 3883 items, 1 000 209 ratings.
    pub fn movielens_1m(seed: u64) -> Self {
        SyntheticRecipe::new(6040, 3883, 1_000_209, seed)
    }

    /// A smaller set with MovieLens-1M's density doubled: a tenth of its
    /// users and items (604 × 388) and 20 004 ratings (a fiftieth, 8.5 %
    /// observed; a hundredth would leave fewer than 20 per user). The data
    /// of `pmf-small` and `bpmf-small`.
    pub fn movielens_1m_tenth(seed: u64) -> Self {
        SyntheticRecipe::new(604, 388, 20_004, seed)
    }

    /// `users` × `items` with `ratings` ratings, at least
    /// [`MIN_PER_USER`] per user.
    pub fn new(users: usize, items: usize, ratings: usize, seed: u64) -> Self {
        SyntheticRecipe {
            users,
            items,
            ratings,
            min_per_user: MIN_PER_USER,
            seed,
        }
    }

    /// The same recipe with at least `min_per_user` ratings per user.
    pub fn with_min_per_user(mut self, min_per_user: usize) -> Self {
        self.min_per_user = min_per_user;
        self
    }

    /// The most ratings one user gets: 60 % of the items, rounded up, but at
    /// least `min_per_user` and at most every item.
    pub fn max_per_user(&self) -> usize {
        ((MAX_SHARE_PER_USER * self.items as f64).ceil() as usize)
            .max(self.min_per_user)
            .min(self.items)
    }
}
