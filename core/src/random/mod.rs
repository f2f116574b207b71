//! Random variates the samplers need: uniform (0, 1] and standard normal.
//!
//! Two normal generators, both in the working precision (an `f32` chain never
//! touches `f64`) and both giving the same numbers from the same seed on every
//! target:
//! - [`fill_standard_normal`]: the Box–Muller transform (libm's `log`, `sqrt`
//!   and `sincos`, or their `f32` forms). Each pair of normals consumes exactly
//!   two uniforms, which keeps the random stream easy to replay in reference
//!   implementations; every sampler but NUTS draws its normals this way.
//! - [`fill_standard_normal_ziggurat`] ([`ziggurat`]): 1.4–1.8× faster, a variable
//!   number of words per normal. NUTS draws its momenta this way.

use rand_core::Rng;

use crate::real::Real;

pub mod ziggurat;
pub(crate) mod ziggurat_tables;

pub use ziggurat::{fill_standard_normal_ziggurat, standard_normal_ziggurat};

/// One pair of independent standard normal draws.
#[inline]
pub fn standard_normal_pair<T: Real, R: Rng + ?Sized>(rng: &mut R) -> (T, T) {
    let u1 = T::uniform_open_closed(rng);
    let u2 = T::uniform_open_closed(rng);
    // u1 ∈ (0, 1], so ln(u1) is finite and radius is finite and non-negative.
    let radius = (-T::TWO * u1.ln()).sqrt();
    let (sin, cos) = (T::two_pi() * u2).sin_cos();
    (radius * cos, radius * sin)
}

/// One standard normal draw (the second of the Box–Muller pair is discarded).
#[inline]
pub fn standard_normal<T: Real, R: Rng + ?Sized>(rng: &mut R) -> T {
    standard_normal_pair::<T, R>(rng).0
}

/// Fills `out` with independent standard normal draws, two per Box–Muller pair;
/// for an odd length the last pair's second value is discarded.
pub fn fill_standard_normal<T: Real, R: Rng + ?Sized>(rng: &mut R, out: &mut [T]) {
    let mut chunks = out.chunks_exact_mut(2);
    for pair in &mut chunks {
        let (a, b) = standard_normal_pair::<T, R>(rng);
        pair[0] = a;
        pair[1] = b;
    }
    if let [last] = chunks.into_remainder() {
        *last = standard_normal(rng);
    }
}

/// Test support shared by the normal generators' tests: running sums of x, x²
/// and x⁴ checked against the standard normal's 0, 1 and 3.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct MomentSums {
    n: f64,
    m1: f64,
    m2: f64,
    m4: f64,
}

#[cfg(test)]
impl MomentSums {
    /// Adds one draw.
    pub(crate) fn add(&mut self, x: f64) {
        self.n += 1.0;
        self.m1 += x;
        self.m2 += x * x;
        self.m4 += x * x * x * x;
    }

    /// Mean, variance and fourth moment within five Monte-Carlo standard
    /// errors of 0, 1 and 3 (the sd of x, x² and x⁴ are 1, √2 and √96).
    pub(crate) fn assert_standard_normal(&self, label: &str) {
        let se = 1.0 / self.n.sqrt();
        let (mean, var, m4) = (self.m1 / self.n, self.m2 / self.n, self.m4 / self.n);
        assert!(mean.abs() < 5.0 * se, "{label}: mean {mean}");
        assert!(
            (var - 1.0).abs() < 5.0 * 2f64.sqrt() * se,
            "{label}: var {var}"
        );
        assert!(
            (m4 - 3.0).abs() < 5.0 * 96f64.sqrt() * se,
            "{label}: m4 {m4}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xorshift::XorShiftRng;

    /// Mean, variance and fourth moment of 200 000 draws against 0, 1 and 3, with
    /// bounds of five Monte-Carlo standard errors ([`MomentSums`]).
    fn check_moments<T: Real>(seed: u64) {
        let mut rng = XorShiftRng::seed_from_u64(seed);
        let mut buf = [T::ZERO; 101];
        let mut sums = MomentSums::default();
        while sums.n < 200_000.0 {
            fill_standard_normal(&mut rng, &mut buf);
            for x in buf {
                sums.add(x.to_f64());
            }
        }
        sums.assert_standard_normal(&format!("Box-Muller, seed {seed}"));
    }

    #[test]
    fn normal_moments_f64() {
        for seed in 0..4 {
            check_moments::<f64>(seed);
        }
    }

    #[test]
    fn normal_moments_f32() {
        for seed in 10..14 {
            check_moments::<f32>(seed);
        }
    }

    #[test]
    fn same_seed_same_stream() {
        let mut a = XorShiftRng::seed_from_u64(3);
        let mut b = XorShiftRng::seed_from_u64(3);
        let mut x = [0.0f64; 7];
        let mut y = [0.0f64; 7];
        fill_standard_normal(&mut a, &mut x);
        fill_standard_normal(&mut b, &mut y);
        assert_eq!(x, y);
    }
}
