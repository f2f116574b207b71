//! The arithmetic both factorisation models share: where each factor
//! vector sits in the coordinate vector, the Gaussian likelihood of a set
//! of ratings with its gradient, and predictions.
//!
//! Layout: the I user vectors first, user u at `u·K..(u + 1)·K`, then the J
//! item vectors, item j at `(I + j)·K..(I + j + 1)·K` (W row-major, H
//! column by column). A rating touches two contiguous K-vectors, and the
//! ratings are grouped by user, so a pass reads x and writes ∇U almost in
//! order on the user side and within a few megabytes on the item side.

use super::ratings::Triples;

/// Where the factor vectors of an I × J matrix of rank K are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    pub users: usize,
    pub items: usize,
    pub rank: usize,
}

impl Layout {
    /// Number of factor coordinates (I + J)·K.
    pub fn len(&self) -> usize {
        (self.users + self.items) * self.rank
    }

    /// First coordinate of the item vectors, I·K.
    pub fn item_start(&self) -> usize {
        self.users * self.rank
    }

    /// Coordinate of W_{u,k}.
    pub fn user(&self, u: usize, k: usize) -> usize {
        u * self.rank + k
    }

    /// Coordinate of H_{k,j}.
    pub fn item(&self, j: usize, k: usize) -> usize {
        (self.users + j) * self.rank + k
    }

    /// W_u·H_j at `x`.
    pub fn product(&self, x: &[f64], u: usize, j: usize) -> f64 {
        let k = self.rank;
        let w = &x[u * k..(u + 1) * k];
        let start = self.item_start() + j * k;
        dot(w, &x[start..start + k])
    }
}

/// a·b with four partial sums (so the compiler can keep them in vector
/// registers: floating-point addition is not reassociated for it). Public
/// as [`factor_dot`](crate::targets::factor_dot): a factorisation computed
/// elsewhere (a node of a distributed run) that sums in this order gets
/// [`GaussianPmf`](super::GaussianPmf)'s gradients bit for bit.
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut s = [0.0f64; 4];
    let (a4, a_rest) = a.split_at(a.len() / 4 * 4);
    let (b4, b_rest) = b.split_at(a4.len());
    for (x, y) in a4.chunks_exact(4).zip(b4.chunks_exact(4)) {
        s[0] += x[0] * y[0];
        s[1] += x[1] * y[1];
        s[2] += x[2] * y[2];
        s[3] += x[3] * y[3];
    }
    let rest: f64 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    (s[0] + s[1]) + (s[2] + s[3]) + rest
}

/// A Gaussian likelihood r ~ N(offset + W_u·H_j, 1/precision) over ratings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Likelihood<'a> {
    pub layout: Layout,
    pub data: &'a Triples,
    pub offset: f64,
    pub precision: f64,
}

impl Likelihood<'_> {
    /// Adds `weight` · ∇ of Σₙ (precision/2)(W_u·H_j + offset − rₙ)² over the
    /// ratings `which` to `gradient`, and returns that sum (unweighted).
    pub fn add(
        &self,
        x: &[f64],
        gradient: &mut [f64],
        which: impl Iterator<Item = usize>,
        weight: f64,
    ) -> f64 {
        let k = self.layout.rank;
        let split = self.layout.item_start();
        let end = self.layout.len();
        let (xw, xh) = x[..end].split_at(split);
        let (gw, gh) = gradient[..end].split_at_mut(split);
        let (users, items, ratings) = (self.data.users(), self.data.items(), self.data.ratings());
        let mut sum = 0.0;
        for n in which {
            let a = users[n] as usize * k;
            let b = items[n] as usize * k;
            let w = &xw[a..a + k];
            let h = &xh[b..b + k];
            let residual = dot(w, h) + self.offset - f64::from(ratings[n]);
            sum += residual * residual;
            let c = weight * self.precision * residual;
            for (g, &v) in gw[a..a + k].iter_mut().zip(h) {
                *g += c * v;
            }
            for (g, &v) in gh[b..b + k].iter_mut().zip(w) {
                *g += c * v;
            }
        }
        0.5 * self.precision * sum
    }

    /// The prediction offset + W_u·H_j of each rating, in order.
    pub fn predict(&self, x: &[f64], out: &mut [f64]) {
        assert_eq!(out.len(), self.data.len());
        for (n, p) in out.iter_mut().enumerate() {
            let (u, j, _) = self.data.get(n);
            *p = self.offset + self.layout.product(x, u, j);
        }
    }
}

/// Draws `batch` rating indices uniformly from 0..`n` with replacement, by
/// multiply-shift of a u32 (the crate's minibatch draw).
pub(crate) fn uniform_indices<'r>(
    n: usize,
    batch: usize,
    rng: &'r mut crate::model::ModelRng,
) -> impl Iterator<Item = usize> + 'r {
    use rand_core::Rng;
    let n = n as u64;
    (0..batch).map(move |_| ((u64::from(rng.next_u32()) * n) >> 32) as usize)
}

/// Root-mean-square error of `offset + W_u·H_j`, clipped to `range`,
/// against the ratings `which` of `data`.
pub(crate) fn clipped_rmse(
    layout: Layout,
    x: &[f64],
    data: &Triples,
    which: impl Iterator<Item = usize>,
    offset: f64,
    range: (f64, f64),
) -> f64 {
    let mut sum = 0.0;
    let mut count = 0usize;
    for n in which {
        let (u, j, r) = data.get(n);
        let p = (offset + layout.product(x, u, j)).clamp(range.0, range.1);
        sum += (p - r) * (p - r);
        count += 1;
    }
    (sum / count as f64).sqrt()
}

/// Up to `count` indices spread evenly over 0..`n` (every ⌈n/count⌉-th):
/// the fixed training subsample whose RMSE is reported.
pub(crate) fn even_subsample(n: usize, count: usize) -> Vec<u32> {
    let step = n.div_ceil(count.max(1)).max(1);
    (0..n).step_by(step).map(|i| i as u32).collect()
}
