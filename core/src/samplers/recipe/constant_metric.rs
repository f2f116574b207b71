//! [`ConstantInverseMetric`]: a constant diagonal G⁻¹ for [`super::Sgrld`]
//! and [`super::Sgrhmc`] that the in-place constructors accept at any D.
//!
//! The in-place constructors of the samplers that own a metric move it into
//! the sampler, so the metric crosses the stack, and it must be
//! [`ZeroValid`](crate::in_place::ZeroValid) (the sampler is built from
//! zero bytes). A metric of D values would cross the stack whole at a large
//! D (8 MB at D = 2²⁰ in f64); this one holds `M` values, chosen apart from
//! D, and is the identity beyond them.

use super::DiagonalRiemannianMetric;
use crate::real::Real;

/// G⁻¹ = diag(`inverse`) on the first `M` coordinates and the identity on the
/// rest; ∂G⁻¹ = 0 (a constant metric: SGRLD is then preconditioned SGLD with
/// a fixed diagonal). `M` need not be the sampler's D: a model of up to `M`
/// coordinates in storage of any D takes its metric from `inverse`.
///
/// Its all-zero value (G⁻¹ = 0 on the first `M` coordinates) is not a
/// metric: a step with it returns
/// [`Error::NonFiniteGradient`](crate::Error::NonFiniteGradient). Use
/// [`identity`](Self::identity) or
/// [`from_leading`](Self::from_leading).
///
/// ```
/// use qnmc::samplers::recipe::{ConstantInverseMetric, DiagonalRiemannianMetric};
///
/// let metric = ConstantInverseMetric::<f64, 2>::from_leading(&[4.0]);
/// let (mut inverse, mut derivative) = ([0.0; 3], [9.0; 3]);
/// metric.inverse_metric(&[0.0; 3], &mut inverse, &mut derivative);
/// assert_eq!((inverse, derivative), ([4.0, 1.0, 1.0], [0.0; 3]));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConstantInverseMetric<T, const M: usize> {
    /// (G⁻¹)ᵢᵢ for i < M (finite and > 0 for a valid metric).
    pub inverse: [T; M],
}

crate::in_place::zero_valid!(impl[T: Real, const M: usize] ConstantInverseMetric<T, M> { inverse });

impl<T: Real, const M: usize> ConstantInverseMetric<T, M> {
    /// G = I.
    pub fn identity() -> Self {
        ConstantInverseMetric {
            inverse: [T::ONE; M],
        }
    }

    /// G⁻¹ = diag(`leading`) on the first `leading.len()` coordinates (at
    /// most `M` are read), the identity after them.
    pub fn from_leading(leading: &[T]) -> Self {
        let mut metric = Self::identity();
        for (o, &g) in metric.inverse.iter_mut().zip(leading) {
            *o = g;
        }
        metric
    }

    /// Writes the first `n` entries of G⁻¹ and ∂G⁻¹ = 0.
    fn write(&self, n: usize, inverse: &mut [T], derivative: &mut [T]) {
        let stored = n.min(M);
        inverse[..stored].copy_from_slice(&self.inverse[..stored]);
        inverse[stored..n].fill(T::ONE);
        derivative[..n].fill(T::ZERO);
    }
}

impl<T: Real, const M: usize, const D: usize> DiagonalRiemannianMetric<T, D>
    for ConstantInverseMetric<T, M>
{
    fn inverse_metric(&self, _position: &[T; D], inverse: &mut [T; D], derivative: &mut [T; D]) {
        self.write(D, inverse, derivative);
    }

    fn leading_inverse_metric(
        &self,
        n: usize,
        _position: &[T; D],
        inverse: &mut [T; D],
        derivative: &mut [T; D],
    ) {
        self.write(n.min(D), inverse, derivative);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_leading_entries_are_those_of_the_whole() {
        let metric = ConstantInverseMetric::<f64, 3>::from_leading(&[2.0, 0.5, 3.0, 7.0]);
        assert_eq!(metric.inverse, [2.0, 0.5, 3.0]);
        let (mut whole, mut d_whole) = ([0.0; 5], [1.0; 5]);
        metric.inverse_metric(&[0.0; 5], &mut whole, &mut d_whole);
        assert_eq!(whole, [2.0, 0.5, 3.0, 1.0, 1.0]);
        assert_eq!(d_whole, [0.0; 5]);
        for n in 1..=5 {
            let (mut leading, mut d_leading) = ([-1.0; 5], [-1.0; 5]);
            metric.leading_inverse_metric(n, &[0.0; 5], &mut leading, &mut d_leading);
            assert_eq!(leading[..n], whole[..n]);
            assert_eq!(d_leading[..n], d_whole[..n]);
            assert!(
                leading[n..]
                    .iter()
                    .chain(&d_leading[n..])
                    .all(|&v| v == -1.0)
            );
        }
    }
}
