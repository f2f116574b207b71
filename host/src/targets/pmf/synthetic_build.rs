//! `SyntheticRecipe::build`: the rating matrix of a
//! [`SyntheticRecipe`](super::SyntheticRecipe), split into training and test
//! ratings (the recipe is documented on the type, in `synthetic.rs`).

use super::PmfError;
use super::random::{Discrete, Draws};
use super::ratings::{Ratings, RatingsSource, TEST_FRACTION, Triples};
use super::synthetic::*;

impl SyntheticRecipe {
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
