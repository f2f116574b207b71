//! [`CurvaturePolicy`]: which (s, y) pairs may enter the L-BFGS memory.
//!
//! A pair is only usable when sᵀy > 0 (ALGORITHMS.md §1). The policy offers the
//! papers' remedies as explicit options, never as silent fix-ups:
//! - the HAMCMC trust region, y ← y + λ s (`trust_region = λ`);
//! - the standard skip rule, sᵀy ≤ ε‖s‖‖y‖ ⇒ skip (`min_relative_curvature = ε`).
//!
//! A pair with a non-finite entry, or with sᵀy ≤ 0 after the trust-region shift,
//! is always skipped. Every skip is counted by the memory and reported in the
//! step statistics.

use crate::error::{Error, require_non_negative};
use crate::kernels::{axpy_leading, dot_leading};
use crate::real::Real;

/// The admission rule for new L-BFGS pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvaturePolicy<T> {
    /// λ ≥ 0: the pair enters as (s, y + λ s), so L-BFGS approximates
    /// (∇²U + λI)⁻¹ (HAMCMC's trust region). 0 disables it.
    pub trust_region: T,
    /// ε ≥ 0: skip the pair when sᵀy ≤ ε‖s‖‖y‖ (after the trust-region shift;
    /// evaluated without overflow, so ε = 0 is exactly the rule sᵀy > 0).
    pub min_relative_curvature: T,
}

crate::in_place::zero_valid!(impl[T: Real] CurvaturePolicy<T> { trust_region, min_relative_curvature });

impl<T: Real> Default for CurvaturePolicy<T> {
    /// No trust region, ε = 1e-8.
    fn default() -> Self {
        CurvaturePolicy {
            trust_region: T::ZERO,
            min_relative_curvature: T::from_f64(1e-8),
        }
    }
}

impl<T: Real> CurvaturePolicy<T> {
    /// Checks both settings are finite and non-negative.
    pub fn validate(&self) -> Result<(), Error> {
        require_non_negative(self.trust_region, "trust_region")?;
        require_non_negative(self.min_relative_curvature, "min_relative_curvature")
    }

    /// Applies the trust-region shift to `y` in place and returns sᵀy if the pair
    /// is admitted, `None` if it must be skipped.
    pub fn admit<const D: usize>(&self, s: &[T; D], y: &mut [T; D]) -> Option<T> {
        self.admit_leading(s, y, D)
    }

    /// [`admit`](Self::admit) on the first `len` entries of s and y (at most
    /// D; the rest of `y` is left as it is): bit for bit the same decision
    /// and sᵀy as on vectors of length `len`. Nothing of length D is copied.
    pub(crate) fn admit_leading<const D: usize>(
        &self,
        s: &[T; D],
        y: &mut [T; D],
        len: usize,
    ) -> Option<T> {
        let len = len.min(D);
        if self.trust_region != T::ZERO {
            axpy_leading(self.trust_region, s, y, len);
        }
        let sy = dot_leading(s, y, len);
        // A finite sᵀy implies every sᵢ and (shifted) yᵢ is finite: a NaN
        // entry, ∞·0 or ∞·x makes the sum NaN or ±∞. No separate scans.
        if !(sy.is_finite() && sy > T::ZERO) {
            return None;
        }
        if self.min_relative_curvature == T::ZERO {
            return Some(sy);
        }
        // The common case, as cheap as before: the bound is a normal number.
        let bound = self.min_relative_curvature
            * dot_leading(s, s, len).sqrt()
            * dot_leading(y, y, len).sqrt();
        if bound.is_finite() && bound > T::ZERO {
            return if sy > bound { Some(sy) } else { None };
        }
        // The norms overflowed or underflowed: compare
        // sᵀy > ε‖s‖‖y‖ on s/max|sᵢ| and y/max|yᵢ| (both sides divided by the
        // two maxima): every entry is at most 1 in magnitude, so neither the
        // norms nor their product can overflow or underflow. Unscaled, a pair
        // with ‖y‖² above the largest finite value made the bound ∞ (or 0·∞ =
        // NaN for ε = 0) and was skipped although sᵀy > ε‖s‖‖y‖. The scaled
        // entries are formed on the fly (no copy of length D on the stack).
        let (s, y) = (&s[..len], &y[..len]);
        let (s_max, y_max) = (largest_magnitude(s), largest_magnitude(y));
        let unit = |v: T, max: T| if max > T::ZERO { v / max } else { v };
        let (mut ss, mut yy, mut sy_unit) = (T::ZERO, T::ZERO, T::ZERO);
        for (&si, &yi) in s.iter().zip(y) {
            let (a, b) = (unit(si, s_max), unit(yi, y_max));
            ss += a * a;
            yy += b * b;
            sy_unit += a * b;
        }
        let bound = self.min_relative_curvature * ss.sqrt() * yy.sqrt();
        if sy_unit > bound { Some(sy) } else { None }
    }
}

fn largest_magnitude<T: Real>(x: &[T]) -> T {
    let mut largest = T::ZERO;
    for v in x {
        if v.abs() > largest {
            largest = v.abs();
        }
    }
    largest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admission_rules() {
        let plain = CurvaturePolicy::<f64> {
            trust_region: 0.0,
            min_relative_curvature: 0.0,
        };
        let mut y = [1.0, 0.0];
        assert_eq!(plain.admit(&[2.0, 0.0], &mut y), Some(2.0));
        let mut y = [-1.0, 0.0];
        assert_eq!(plain.admit(&[2.0, 0.0], &mut y), None);
        let mut y = [0.0, 1.0];
        assert_eq!(plain.admit(&[1.0, 0.0], &mut y), None, "sᵀy = 0 is skipped");
        let mut y = [f64::NAN, 1.0];
        assert_eq!(plain.admit(&[1.0, 0.0], &mut y), None);

        // Trust region turns negative curvature into positive: y + 2s.
        let tr = CurvaturePolicy::<f64> {
            trust_region: 2.0,
            min_relative_curvature: 0.0,
        };
        let mut y = [-1.0, 0.0];
        assert_eq!(tr.admit(&[1.0, 0.0], &mut y), Some(1.0));
        assert_eq!(y, [1.0, 0.0]);

        // Relative rule: angle between s and y too wide.
        let rel = CurvaturePolicy::<f64> {
            trust_region: 0.0,
            min_relative_curvature: 0.5,
        };
        let mut y = [1.0, 10.0];
        assert_eq!(rel.admit(&[1.0, 0.0], &mut y), None);
        let mut y = [1.0, 0.1];
        assert!(rel.admit(&[1.0, 0.0], &mut y).is_some());

        // ‖s‖² or ‖y‖² over- or underflows; the rule is evaluated without it
        // (proptest regressions: s = (0, 0, −1e200), y = (0, 0, −4.05) with
        // ε = 0 was skipped; in f32, y = (0, 1e-40, 1e-200) has ‖y‖² = 0).
        let mut y = [0.0, 1e200];
        assert_eq!(plain.admit(&[1e-200, 1e40], &mut y), Some(1e240));
        // sᵀy = 1e200 > 0.5‖s‖‖y‖ = 0.5·√2·1e200.
        let mut y = [1e200, 1e200];
        assert_eq!(rel.admit(&[1.0, 0.0], &mut y), Some(1e200));
        // sᵀy = 1e-300 ≤ 0.5‖s‖‖y‖ = 0.5·1e-200·√2·1e100, though ‖s‖² underflows.
        let mut y = [1e-100, 1e100];
        assert_eq!(rel.admit(&[1e-200, 0.0], &mut y), None);
    }

    #[test]
    fn validation() {
        assert!(CurvaturePolicy::<f32>::default().validate().is_ok());
        let bad = CurvaturePolicy::<f32> {
            trust_region: -1.0,
            min_relative_curvature: 0.0,
        };
        assert!(bad.validate().is_err());
        let bad = CurvaturePolicy::<f32> {
            trust_region: 0.0,
            min_relative_curvature: f32::NAN,
        };
        assert!(bad.validate().is_err());
    }
}
