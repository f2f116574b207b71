//! [`elbo_estimate`]: the ELBO of the Gaussian an L-BFGS memory describes
//! at a point, as Pathfinder (Zhang et al. 2022) scores the points of its
//! optimisation path. The NUTS warm-up's start uses it to refuse an optimum
//! in a funnel's neck (`adaptation/quasi_newton/lbfgs_start.rs`).

use super::memory::LbfgsMemory;
use crate::kernels::all_finite;
use crate::real::Real;
use crate::target::Potential;

/// Target evaluations behind each [`elbo_estimate`]: two antithetic pairs
/// (±z and ±w, w a signed rotation of z), so a linear term of U cancels
/// exactly; made from one vector of normals, the same draws can score every
/// point of a path (common random numbers: differences between points are
/// what decides). Pathfinder uses 5 independent draws.
pub const ELBO_DRAWS: u32 = 4;

/// The ELBO of N(`position`, H) with H the memory's inverse Hessian, up to
/// the constant (n/2)(1 + log 2π): the mean of −U over [`ELBO_DRAWS`] draws
/// made from `normals`, plus ½ log det H; −∞ where U is not finite at a
/// draw. Returns the estimate and the evaluations spent.
///
/// `normals` are standard normals in the first `moved` entries (zero after
/// them); the draws are x + S·(±z), x + S·(±w) with S Sᵀ = H
/// ([`LbfgsMemory::apply_sqrt_inverse_hessian`]). `moved` is the dimension
/// of the target's own coordinates, less than the memory's for a sampler of
/// run-time dimension n in storage of D whose memory spans all D (the
/// padding, where the path's pairs are zero, is left out: the estimate
/// does not depend on D); otherwise the memory's
/// [`dimension`](LbfgsMemory::dimension). The memory is taken `&mut` only
/// to bring its factors up to date: its pairs are not changed.
///
/// ```
/// use qnmc::Potential;
/// use qnmc::lbfgs::{LbfgsMemory, LbfgsSettings, elbo_estimate};
///
/// /// U = x²/(2·4): N(0, 4).
/// struct Wide;
/// impl Potential<f64, 1> for Wide {
///     fn potential_and_gradient(&self, x: &[f64; 1], g: &mut [f64; 1]) -> f64 {
///         g[0] = x[0] / 4.0;
///         x[0] * x[0] / 8.0
///     }
/// }
/// // One secant pair gives H = 4, the exact variance.
/// let mut memory = LbfgsMemory::<f64, 1, 2>::new(LbfgsSettings::with_max_pairs(2)).unwrap();
/// assert!(memory.try_push(&[2.0], &[0.5]));
/// let (exact, _) = elbo_estimate(&Wide, &[0.0], &mut memory, &[1.0], 1);
/// // −½z² + ½ log 4 for the exact Gaussian; one centred 3 sds off scores lower.
/// assert!((exact - (-0.5 + 0.5 * 4f64.ln())).abs() < 1e-12);
/// let (off, _) = elbo_estimate(&Wide, &[6.0], &mut memory, &[1.0], 1);
/// assert!(off < exact - 4.0);
/// ```
pub fn elbo_estimate<T: Real, const D: usize, const M: usize, P: Potential<T, D>>(
    target: &P,
    position: &[T; D],
    memory: &mut LbfgsMemory<T, D, M>,
    normals: &[T; D],
    moved: usize,
) -> (T, u32) {
    let stored = memory.dimension();
    let n = moved.clamp(1, stored.max(1));
    // Coordinates n.. are the padding of a run-time dimension: the path's
    // pairs are zero there, so H is γ·I on them; the draws leave them at
    // `position` and their γ is taken out of log det H.
    let padding = T::from_u64((stored - n) as u64) * memory.gamma().ln();
    let log_det = memory.log_det_inverse_hessian() - padding;
    let mut z = [T::ZERO; D];
    let mut step = [T::ZERO; D];
    let mut x = [T::ZERO; D];
    let mut gradient = [T::ZERO; D];
    let mut sum = T::ZERO;
    for draw in 0..ELBO_DRAWS {
        for i in 0..n {
            let v = if draw < 2 {
                normals[i]
            } else if i % 2 == 0 {
                normals[(i + n / 2) % n]
            } else {
                -normals[(i + n / 2) % n]
            };
            z[i] = if draw % 2 == 0 { v } else { -v };
        }
        memory.apply_sqrt_inverse_hessian(&z, &mut step);
        for i in 0..n {
            x[i] = position[i] + step[i];
        }
        if !all_finite(&x) {
            return (-T::INFINITY, draw);
        }
        let u = target.potential_and_gradient(&x, &mut gradient);
        if !u.is_finite() {
            return (-T::INFINITY, draw + 1);
        }
        sum -= u;
    }
    let elbo = sum / T::from_u64(ELBO_DRAWS as u64) + T::HALF * log_det;
    if elbo.is_finite() {
        (elbo, ELBO_DRAWS)
    } else {
        (-T::INFINITY, ELBO_DRAWS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lbfgs::LbfgsSettings;

    use crate::test_targets::{Scales, VARIANCES};

    /// For the exact Gaussian (three conjugate pairs make H = Σ) the
    /// estimate is −½‖z‖² + ½ log det Σ to rounding: U is quadratic and the
    /// draws' mean ½ of (‖z‖² + ‖w‖²)/2, with ‖w‖ = ‖z‖. Its expectation over
    /// z, −n/2 + ½ log det Σ, is log Z less the constant the estimate
    /// leaves out.
    #[test]
    fn the_exact_gaussian_scores_its_draws_norm_and_log_det() {
        let mut memory = LbfgsMemory::<f64, 3, 5>::new(LbfgsSettings::with_max_pairs(5)).unwrap();
        for i in 0..3 {
            let mut s = [0.0; 3];
            s[i] = VARIANCES[i].sqrt();
            let mut y = [0.0; 3];
            Scales.potential_and_gradient(&s, &mut y);
            assert!(memory.try_push(&s, &y));
        }
        let normals = [0.3, -1.2, 0.7];
        let (elbo, spent) = elbo_estimate(&Scales, &[0.0; 3], &mut memory, &normals, 3);
        assert_eq!(spent, ELBO_DRAWS);
        let half_log_det: f64 = VARIANCES.iter().map(|v| 0.5 * v.ln()).sum();
        let z2: f64 = normals.iter().map(|z| z * z).sum();
        let expected = -0.5 * z2 + half_log_det;
        assert!(
            (elbo - expected).abs() < 1e-9 * expected.abs().max(1.0),
            "{elbo} vs {expected}"
        );
    }

    /// The same Gaussian in storage of 5 with coordinates 3 and 4 as
    /// padding (zero gradient, zero in every pair; the memory's H is γ·I
    /// there, γ = 10⁴ from the newest pair) scores what it scores in
    /// storage of 3 when `moved` is 3: the padding's log γ is taken out and
    /// the draws leave it alone. With `moved` = 5 the estimate is off by
    /// (5 − 3)·½ log γ = 9.2 (the control).
    #[test]
    fn padding_does_not_change_the_estimate() {
        struct Padded;
        impl Potential<f64, 5> for Padded {
            fn potential_and_gradient(&self, x: &[f64; 5], g: &mut [f64; 5]) -> f64 {
                let mut small = [0.0; 3];
                let u = Scales.potential_and_gradient(&[x[0], x[1], x[2]], &mut small);
                *g = [small[0], small[1], small[2], 0.0, 0.0];
                u
            }
        }
        let mut settings = LbfgsSettings::with_max_pairs(5);
        settings.scaling = crate::lbfgs::InitialScaling::NewestPair(1.0);
        let mut three = LbfgsMemory::<f64, 3, 5>::new(settings).unwrap();
        let mut five = LbfgsMemory::<f64, 5, 5>::new(settings).unwrap();
        for i in 0..3 {
            let mut s = [0.0; 3];
            s[i] = VARIANCES[i].sqrt();
            let mut y = [0.0; 3];
            Scales.potential_and_gradient(&s, &mut y);
            assert!(three.try_push(&s, &y));
            assert!(five.try_push(&[s[0], s[1], s[2], 0.0, 0.0], &[y[0], y[1], y[2], 0.0, 0.0]));
        }
        assert!((five.gamma() - 1e4).abs() < 1e-6, "{}", five.gamma());
        let normals = [0.3, -1.2, 0.7];
        let (small, _) = elbo_estimate(&Scales, &[0.1, 0.2, 0.3], &mut three, &normals, 3);
        let position = [0.1, 0.2, 0.3, 0.0, 0.0];
        let normals5 = [0.3, -1.2, 0.7, 0.0, 0.0];
        let (padded, _) = elbo_estimate(&Padded, &position, &mut five, &normals5, 3);
        assert!(
            (padded - small).abs() < 1e-9 * small.abs().max(1.0),
            "{padded} vs {small}"
        );
        let (whole, _) = elbo_estimate(&Padded, &position, &mut five, &normals5, 5);
        assert!((whole - small).abs() > 5.0, "{whole} vs {small}");
    }

    /// −∞ where U is not finite at a draw or the point is not finite.
    #[test]
    fn a_draw_without_a_density_gives_minus_infinity() {
        struct Pinhole;
        impl Potential<f64, 3> for Pinhole {
            fn potential_and_gradient(&self, x: &[f64; 3], g: &mut [f64; 3]) -> f64 {
                *g = *x;
                if x.iter().all(|v| v.abs() < 1e-9) {
                    0.0
                } else {
                    f64::INFINITY
                }
            }
        }
        let mut memory = LbfgsMemory::<f64, 3, 5>::new(LbfgsSettings::with_max_pairs(5)).unwrap();
        let normals = [0.3, -1.2, 0.7];
        assert_eq!(
            elbo_estimate(&Pinhole, &[0.0; 3], &mut memory, &normals, 3),
            (f64::NEG_INFINITY, 1)
        );
        assert_eq!(
            elbo_estimate(
                &Scales,
                &[f64::INFINITY, 0.0, 0.0],
                &mut memory,
                &normals,
                3
            ),
            (f64::NEG_INFINITY, 0)
        );
    }
}
