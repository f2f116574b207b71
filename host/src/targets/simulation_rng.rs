//! The generator that simulates the built-in data of the hierarchical
//! targets (`stochastic-volatility`, `radon-centered`,
//! `hier-logistic-centered`, `latent-gp-centered`), written so that
//! `compare/nutpie/models.py` reproduces it bit for bit in Python: the PyMC
//! models there must see exactly these data.
//!
//! SplitMix64 (Steele, Lea & Flood 2014): the state advances by the
//! golden-ratio increment 0x9E3779B97F4A7C15 and each output is the state
//! mixed by two xor-shift-multiply rounds. Uniforms are (top 53 bits + 1)/2⁵³,
//! in (0, 1]; standard normals are Box–Muller's cosine branch
//! √(−2 log u₁) cos 2πu₂ of two consecutive uniforms (the sine branch is
//! not used, so every normal takes two outputs). Only IEEE-exact operations
//! and `ln`, `cos`, `sqrt` enter, which Python's `math` evaluates with the
//! same C library.

/// SplitMix64; see the module documentation.
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    /// The generator with state `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64-bit output.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform on (0, 1]: never 0, so its logarithm is finite.
    pub(crate) fn open_uniform(&mut self) -> f64 {
        ((self.next() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal by Box–Muller (cosine branch).
    pub(crate) fn normal(&mut self) -> f64 {
        let u1 = self.open_uniform();
        let u2 = self.open_uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first outputs from seed 0 are SplitMix64's published test vector
    /// (the reference C code's `next()` from state 0), and the uniforms and
    /// normals have mean ≈ 0.5 / 0, variance ≈ 1/12 / 1 over 20 000 draws
    /// (bounds of 4.9, 9.5, 7.1 and 5.0 standard errors).
    #[test]
    fn outputs_and_moments() {
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next(), 0x6E78_9E6A_A1B9_65F4);
        let mut rng = SplitMix64::new(0x5EED);
        let n = 20_000;
        let u: Vec<f64> = (0..n).map(|_| rng.open_uniform()).collect();
        assert!(u.iter().all(|v| *v > 0.0 && *v <= 1.0));
        let m = u.iter().sum::<f64>() / n as f64;
        let v = u.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64;
        assert!(
            (m - 0.5).abs() < 0.01 && (v - 1.0 / 12.0).abs() < 0.005,
            "{m} {v}"
        );
        let e: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
        let m = e.iter().sum::<f64>() / n as f64;
        let v = e.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64;
        assert!(m.abs() < 0.05 && (v - 1.0).abs() < 0.05, "{m} {v}");
    }
}
