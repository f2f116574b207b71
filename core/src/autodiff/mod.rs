//! Gradients without deriving them: write U(θ) once, generic over
//! [`Scalar`], and get a [`Potential`](crate::Potential) with an exact ∇U.
//!
//! - [`AutodiffModel`]: the model, `fn potential<S: Scalar>(&self, θ: &[S; D]) -> S`;
//! - [`ForwardGradient`]: forward mode on [`Dual`] numbers with `N` tangents,
//!   ⌈D/N⌉ evaluations of U per gradient, nothing but the stack; best for small
//!   D (≲ 10–20) or where no tape fits;
//! - [`ReverseGradient`]: reverse mode on a fixed-capacity [`Tape`] of
//!   [`Var`]s, one recorded evaluation and one backward sweep per gradient
//!   whatever D; best for large D, if the tape (32 bytes per operation in
//!   `f64`) fits in memory.
//!
//! Both are exact to rounding (no finite differences), give U bit for bit as
//! the model computes it on `f32`/`f64`, allocate nothing, use no fused
//! multiply-add and never panic: a NaN or an infinity in the model
//! propagates to U and ∇U (a counted divergence in the samplers); a tape too
//! small gives U = NaN through [`Potential`](crate::Potential), or
//! [`Error::TapeFull`](crate::Error::TapeFull) from
//! [`ReverseGradient::try_potential_and_gradient`].
//!
//! Data enter the model as constants ([`Scalar::from_f64`]): they have no
//! derivative and take no tape entry. A model may branch on values
//! (comparisons look at the value); the gradient is that of the branch taken.
//!
//! Both wrappers are seen from outside only as a [`Potential`](crate::Potential):
//! no sampler or warm-up depends on this module, and it uses only the
//! scalars and the model interface.
//!
//! # Example
//!
//! A logistic regression on four points, written once and sampled with
//! adaptive NUTS:
//!
//! ```
//! use qnmc::adaptation::{AdaptiveNuts, DiagonalEstimator, WarmupSchedule};
//! use qnmc::autodiff::{AutodiffModel, ForwardGradient, ReverseGradient};
//! use qnmc::metric::DiagonalMetric;
//! use qnmc::{NutsSettings, Potential, Scalar};
//! use rand_core::SeedableRng;
//!
//! /// U(w) = Σₙ [log(1 + e^{fₙ}) − tₙ fₙ] + ‖w‖²/2, fₙ = w₀ + w₁ xₙ.
//! struct Logistic;
//! const DATA: [(f64, f64); 4] = [(-1.0, 0.0), (-0.5, 1.0), (0.5, 0.0), (2.0, 1.0)];
//!
//! impl AutodiffModel<2> for Logistic {
//!     fn potential<S: Scalar>(&self, w: &[S; 2]) -> S {
//!         let mut u = S::from_f64(0.5) * (w[0] * w[0] + w[1] * w[1]);
//!         for (x, t) in DATA {
//!             let f = w[0] + w[1] * S::from_f64(x);
//!             u += f.softplus() - S::from_f64(t) * f;
//!         }
//!         u
//!     }
//! }
//!
//! // Both modes agree with each other (and with the derivative by hand).
//! let forward = ForwardGradient::<_, 2>::new(Logistic);
//! let reverse = ReverseGradient::<_, f64, 64>::new(Logistic);
//! let (mut g1, mut g2) = ([0.0; 2], [0.0; 2]);
//! let u = forward.potential_and_gradient(&[0.3, -0.2], &mut g1);
//! assert_eq!(u, reverse.potential_and_gradient(&[0.3, -0.2], &mut g2));
//! assert!((g1[0] - g2[0]).abs() < 1e-15 && (g1[1] - g2[1]).abs() < 1e-15);
//! assert!(reverse.tape().len() <= 64);
//!
//! let mut chain = AdaptiveNuts::<f64, 2, _>::new(
//!     NutsSettings::new(0.5),
//!     WarmupSchedule::stan(300).unwrap(),
//!     DiagonalMetric::identity(),
//!     DiagonalEstimator::new(),
//!     [0.0, 0.0],
//!     &forward,
//! )
//! .unwrap();
//! let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(3);
//! let (mut mean, mut divergences) = ([0.0; 2], 0);
//! for _ in 0..1300 {
//!     let kept = !chain.is_warming_up();
//!     let stats = chain.step(&forward, &mut rng);
//!     if kept {
//!         for i in 0..2 {
//!             mean[i] += chain.position()[i] / 1000.0;
//!         }
//!         divergences += stats.divergent as u32;
//!     }
//! }
//! assert_eq!(divergences, 0);
//! assert!(mean[0].abs() < 1.0 && mean[1] > 0.0 && mean[1] < 2.0, "{mean:?}");
//! ```

mod forward;
mod reverse;
#[cfg(test)]
mod tests;

pub use forward::{Dual, ForwardGradient};
pub use reverse::{ReverseGradient, Tape, Var};

pub use crate::scalar::Scalar;

/// A model whose potential U(θ) = −log π(θ) (up to a constant) is written
/// once, generic over the [`Scalar`] it is evaluated on: `f32`/`f64` for a
/// value, [`Dual`] or [`Var`] for a gradient ([`ForwardGradient`],
/// [`ReverseGradient`]).
pub trait AutodiffModel<const D: usize> {
    /// U(`theta`).
    fn potential<S: Scalar>(&self, theta: &[S; D]) -> S;
}

impl<const D: usize, M: AutodiffModel<D> + ?Sized> AutodiffModel<D> for &M {
    #[inline]
    fn potential<S: Scalar>(&self, theta: &[S; D]) -> S {
        (**self).potential(theta)
    }
}
