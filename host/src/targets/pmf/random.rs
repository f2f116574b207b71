//! The few samplers the synthetic ratings and the test split need, on the
//! crate's [`ModelRng`] (xorshift): uniforms, standard normals, whole
//! numbers below a bound, and draws from fixed discrete weights.
//!
//! They are written here, not taken from a crate, so that a data set built
//! from a seed stays the same whatever version of a distributions crate is
//! in use.

use crate::model::ModelRng;
use rand_core::{Rng, SeedableRng};

/// A seeded generator with the draws the data recipes use.
pub(crate) struct Draws {
    rng: ModelRng,
    /// The second normal of the last Box–Muller pair, not yet handed out.
    spare: Option<f64>,
}

impl Draws {
    /// A generator seeded with `seed` (xorshift, seeded through
    /// [`SeedableRng::seed_from_u64`]).
    pub(crate) fn new(seed: u64) -> Self {
        Draws {
            rng: ModelRng::seed_from_u64(seed),
            spare: None,
        }
    }

    /// Uniform on (0, 1] from the top 53 bits: never 0, so its logarithm is
    /// finite.
    pub(crate) fn open_uniform(&mut self) -> f64 {
        ((self.rng.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal by Box–Muller, √(−2 log u₁)·(cos 2πu₂, sin 2πu₂):
    /// the cosine now, the sine at the next call.
    pub(crate) fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let radius = (-2.0 * self.open_uniform().ln()).sqrt();
        let (sin, cos) = (std::f64::consts::TAU * self.open_uniform()).sin_cos();
        self.spare = Some(radius * sin);
        radius * cos
    }

    /// A whole number uniform in `0..n` (`n ≥ 1`): the top 64 bits of a
    /// 64 × 64-bit product (multiply-shift), whose bias is below n/2⁶⁴.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.rng.next_u64()) * n as u128) >> 64) as usize
    }
}

/// Draws an index with probability proportional to fixed non-negative
/// weights: binary search in the cumulative sums (O(log n) a draw).
pub(crate) struct Discrete {
    cumulative: Vec<f64>,
}

impl Discrete {
    /// The distribution ∝ `weights` (finite, non-negative, positive sum).
    pub(crate) fn new(weights: &[f64]) -> Self {
        let mut total = 0.0;
        let cumulative = weights
            .iter()
            .map(|&w| {
                total += w;
                total
            })
            .collect();
        Discrete { cumulative }
    }

    /// One index: the first whose cumulative weight exceeds u·total.
    pub(crate) fn draw(&self, draws: &mut Draws) -> usize {
        let total = self.cumulative[self.cumulative.len() - 1];
        let target = (1.0 - draws.open_uniform()) * total;
        self.cumulative
            .partition_point(|&c| c <= target)
            .min(self.cumulative.len() - 1)
    }
}
