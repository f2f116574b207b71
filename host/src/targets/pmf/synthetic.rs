//! [`SyntheticRecipe`]: a MovieLens-shaped rating matrix made from a seed,
//! for the matrix-factorisation experiments without the MovieLens files
//! (whose licence forbids passing them on). The recipe is documented on
//! [`SyntheticRecipe`].

use super::PmfError;
use super::random::{Discrete, Draws};
use super::ratings::{Ratings, RatingsSource, TEST_FRACTION, Triples};

/// The rank K of the true factors.
pub const TRUE_RANK: usize = 10;

/// The largest share of the items one user rates.
pub const MAX_SHARE_PER_USER: f64 = 0.6;

/// The fewest ratings a user has, as in MovieLens-1M.
pub const MIN_PER_USER: usize = 20;

/// The seed of the built-in synthetic sets (`--target pmf`, `bpmf`).
pub const SYNTHETIC_SEED: u64 = 2016;

/// Log-normal σ of the users' activity weights.
const ACTIVITY_SIGMA: f64 = 1.2;
/// Log-normal σ of the items' popularity weights.
const POPULARITY_SIGMA: f64 = 1.2;
/// Mean of the latent score.
const SCORE_MEAN: f64 = 3.7;
/// Sd of the item biases.
const ITEM_BIAS_SD: f64 = 0.5;
/// Sd of the user biases.
const USER_BIAS_SD: f64 = 0.4;
/// Sd of each entry of the true factors.
const FACTOR_SD: f64 = 0.46;
/// Sd of the noise of the latent score.
const NOISE_SD: f64 = 0.76;

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
/// 6. **Test split.** [`Ratings::split`] with [`TEST_FRACTION`] (10 %) and
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

    /// Builds the rating matrix, split into training and test ratings.
    /// Fails when the counts cannot be met: `min_per_user` above the number
    /// of items, or N outside [I·min, I·max] ([`max_per_user`](Self::max_per_user)),
    /// or sizes beyond `u32` indices.
    pub fn build(&self) -> Result<Ratings, PmfError> {
        let (users, items) = (self.users, self.items);
        let (min, max) = (self.min_per_user, self.max_per_user());
        if users == 0 || items == 0 || users > u32::MAX as usize || items > u32::MAX as usize {
            return Err(PmfError::new(format!(
                "a synthetic rating matrix needs 1 to 2^32 - 1 users and items, got {users} x {items}"
            )));
        }
        if min > items {
            return Err(PmfError::new(format!(
                "{min} ratings per user do not fit among {items} items"
            )));
        }
        let (least, most) = (users.saturating_mul(min), users.saturating_mul(max));
        if !(least..=most).contains(&self.ratings) {
            return Err(PmfError::new(format!(
                "{users} users with {min} to {max} ratings each have {least} to {most} ratings, \
                 not {}",
                self.ratings
            )));
        }
        let mut draws = Draws::new(self.seed);
        let activity: Vec<f64> = (0..users)
            .map(|_| (ACTIVITY_SIGMA * draws.normal()).exp())
            .collect();
        let counts = ratings_per_user(&activity, self.ratings, min, max);
        let popularity: Vec<f64> = (0..items)
            .map(|_| (POPULARITY_SIGMA * draws.normal()).exp())
            .collect();
        let item_bias: Vec<f64> = (0..items).map(|_| ITEM_BIAS_SD * draws.normal()).collect();
        let user_bias: Vec<f64> = (0..users).map(|_| USER_BIAS_SD * draws.normal()).collect();
        let w: Vec<f64> = (0..users * TRUE_RANK)
            .map(|_| FACTOR_SD * draws.normal())
            .collect();
        let h: Vec<f64> = (0..items * TRUE_RANK)
            .map(|_| FACTOR_SD * draws.normal())
            .collect();

        let mut picker = ItemPicker::new(&popularity);
        let mut all = Triples::with_capacity(self.ratings);
        let mut chosen = Vec::with_capacity(max);
        for (u, &n_u) in counts.iter().enumerate() {
            picker.pick(u, n_u, &mut draws, &mut chosen);
            chosen.sort_unstable();
            let wu = &w[u * TRUE_RANK..(u + 1) * TRUE_RANK];
            for &j in &chosen {
                let hj = &h[j as usize * TRUE_RANK..(j as usize + 1) * TRUE_RANK];
                let product: f64 = wu.iter().zip(hj).map(|(a, b)| a * b).sum();
                let score = SCORE_MEAN
                    + item_bias[j as usize]
                    + user_bias[u]
                    + product
                    + NOISE_SD * draws.normal();
                let rating = score.round().clamp(1.0, 5.0);
                all.push(u as u32, j, rating as f32);
            }
        }
        Ratings::split(
            users,
            items,
            all,
            TEST_FRACTION,
            self.seed.wrapping_add(1),
            RatingsSource::Synthetic(*self),
        )
    }
}

/// Shares `total` ratings among users ∝ `weights` with between `min` and
/// `max` each (step 1 of the recipe). Needs users·min ≤ total ≤ users·max.
fn ratings_per_user(weights: &[f64], total: usize, min: usize, max: usize) -> Vec<usize> {
    let n = weights.len();
    let room = max - min;
    let mut extra = vec![0usize; n];
    let mut held = vec![false; n];
    let mut remaining = total - n * min;
    // Hold at `room` every user whose share would pass it, until none does.
    loop {
        let free_weight: f64 = (0..n).filter(|&u| !held[u]).map(|u| weights[u]).sum();
        if free_weight <= 0.0 {
            break;
        }
        let scale = remaining as f64 / free_weight;
        let mut changed = false;
        for u in 0..n {
            if !held[u] && scale * weights[u] >= room as f64 {
                held[u] = true;
                extra[u] = room;
                remaining -= room;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let free: Vec<usize> = (0..n).filter(|&u| !held[u]).collect();
    let free_weight: f64 = free.iter().map(|&u| weights[u]).sum();
    let mut fractions = Vec::with_capacity(free.len());
    let mut given = 0;
    for &u in &free {
        let share = remaining as f64 * weights[u] / free_weight;
        let whole = (share.floor() as usize).min(room);
        extra[u] = whole;
        given += whole;
        fractions.push((share - whole as f64, u));
    }
    // Largest fractional parts first, ties to the lower index.
    fractions.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut left = remaining - given;
    for &(_, u) in fractions.iter().cycle() {
        if left == 0 {
            break;
        }
        if extra[u] < room {
            extra[u] += 1;
            left -= 1;
        }
    }
    extra.iter().map(|e| min + e).collect()
}

/// Step 4 of the recipe: distinct items ∝ popularity for one user.
struct ItemPicker<'a> {
    popularity: &'a [f64],
    discrete: Discrete,
    /// `taken[j] == u + 1` when user u has drawn item j.
    taken: Vec<u32>,
    clocks: Vec<(f64, u32)>,
}

impl<'a> ItemPicker<'a> {
    fn new(popularity: &'a [f64]) -> Self {
        ItemPicker {
            popularity,
            discrete: Discrete::new(popularity),
            taken: vec![0; popularity.len()],
            clocks: Vec::with_capacity(popularity.len()),
        }
    }

    /// Replaces `chosen` with `count` distinct items for user `user`.
    fn pick(&mut self, user: usize, count: usize, draws: &mut Draws, chosen: &mut Vec<u32>) {
        chosen.clear();
        let items = self.popularity.len();
        if count * 4 <= items {
            let stamp = user as u32 + 1;
            while chosen.len() < count {
                let j = self.discrete.draw(draws);
                if self.taken[j] != stamp {
                    self.taken[j] = stamp;
                    chosen.push(j as u32);
                }
            }
        } else {
            self.clocks.clear();
            for (j, &p) in self.popularity.iter().enumerate() {
                let clock = -draws.open_uniform().ln() / p;
                self.clocks.push((clock, j as u32));
            }
            if count < items {
                self.clocks
                    .select_nth_unstable_by(count, |a, b| a.0.total_cmp(&b.0));
            }
            chosen.extend(self.clocks[..count].iter().map(|&(_, j)| j));
        }
    }
}
