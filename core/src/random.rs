//! Random variates the samplers need: uniform (0, 1] and standard normal.
//!
//! Normal draws use the Box–Muller transform in the working precision (libm's
//! `log`, `sqrt` and `sincos`, or their `f32` forms), so an `f32` chain never
//! touches `f64` and every target produces the same numbers from the same seed.
//! Each pair of normals consumes exactly two uniforms, which keeps the random
//! stream easy to replay in reference implementations.

use rand_core::Rng;

use crate::Real;

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

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xorshift::XorShiftRng;

    /// Mean, variance and fourth moment of 200 000 draws against 0, 1 and 3, with
    /// bounds of five Monte-Carlo standard errors (sd of x, x², x⁴ are 1, √2, √96).
    fn check_moments<T: Real>(seed: u64) {
        let mut rng = XorShiftRng::seed_from_u64(seed);
        let n = 200_000usize;
        let mut buf = [T::ZERO; 101];
        let (mut m1, mut m2, mut m4) = (0.0f64, 0.0f64, 0.0f64);
        let mut count = 0usize;
        while count < n {
            fill_standard_normal(&mut rng, &mut buf);
            for x in buf {
                let x = x.to_f64();
                m1 += x;
                m2 += x * x;
                m4 += x * x * x * x;
            }
            count += buf.len();
        }
        let nf = count as f64;
        let se = 1.0 / nf.sqrt();
        assert!((m1 / nf).abs() < 5.0 * se, "mean {}", m1 / nf);
        assert!(
            (m2 / nf - 1.0).abs() < 5.0 * 2f64.sqrt() * se,
            "var {}",
            m2 / nf
        );
        assert!(
            (m4 / nf - 3.0).abs() < 5.0 * 96f64.sqrt() * se,
            "m4 {}",
            m4 / nf
        );
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
