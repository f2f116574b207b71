//! What the 1-D and 2-D toy targets of the AMAGOLD and recipe papers share:
//! an analytic U and ∇U, artificial Gaussian gradient noise
//! ∇Ũ = ∇U + σ·N(0, I) (the papers' stochastic-gradient model), and an exact
//! normalised density on a box that holds all but a negligible part of the mass.
//!
//! [`AnalyticToy`] is the interface; `toy_target_impls!` derives from it the
//! run-time [`Model`](crate::model::Model) and the core's
//! [`Potential`](qnmc::Potential) and [`MinibatchPotential`](qnmc::MinibatchPotential)
//! (batch = the D standard normals of the noise), so the core samplers run the
//! toys directly with const D.

use super::density_grid::DensityGrid;
use crate::model::KnownPosterior;

/// A low-dimensional target with U, ∇U by hand, Gaussian gradient noise and a
/// known normalising constant.
pub trait AnalyticToy<const D: usize> {
    /// The `--target` name.
    fn target_name(&self) -> &'static str;

    /// U(x) and ∇U(x).
    fn energy_and_gradient(&self, x: &[f64; D], gradient: &mut [f64; D]) -> f64;

    /// σ of the gradient noise: ∇Ũ = ∇U + σ·N(0, I).
    fn gradient_noise_sd(&self) -> f64;

    /// log Z with π(x) = exp(−U(x))/Z.
    fn log_normaliser(&self) -> f64;

    /// A box [lower, upper] outside which π has negligible mass (< 1e-9),
    /// used for quadrature and plots.
    fn bounding_box(&self) -> ([f64; D], [f64; D]);

    /// Where chains start: the origin unless the toy says otherwise.
    fn starting_point(&self) -> [f64; D] {
        [0.0; D]
    }

    /// The exact normalised density π(x).
    fn density(&self, x: &[f64; D]) -> f64 {
        let mut g = [0.0; D];
        (-self.energy_and_gradient(x, &mut g) - self.log_normaliser()).exp()
    }

    /// A regular grid with `bins` cells per axis on [`AnalyticToy::bounding_box`].
    fn grid(&self, bins: usize) -> DensityGrid<D> {
        let (lo, hi) = self.bounding_box();
        DensityGrid::new(lo, hi, [bins.max(1); D]).expect("toy boxes are non-empty and finite")
    }

    /// Exact probability of each cell of `grid` (midpoint rule, 8 sub-points
    /// per axis), renormalised to sum to 1 on the grid.
    fn cell_probabilities(&self, grid: &DensityGrid<D>) -> Vec<f64> {
        let mut p = grid.cell_probabilities(|x| self.density(x), 8);
        let total: f64 = p.iter().sum();
        for v in p.iter_mut() {
            *v /= total;
        }
        p
    }
}

/// log ∫ exp(−U) over the toy's box by the midpoint rule on `bins` cells per
/// axis, with the largest exponent factored out (no overflow or underflow).
pub(crate) fn quadrature_log_normaliser<const D: usize>(
    energy: impl Fn(&[f64; D]) -> f64,
    lower: [f64; D],
    upper: [f64; D],
    bins: usize,
) -> f64 {
    let grid = DensityGrid::new(lower, upper, [bins; D]).expect("toy boxes are valid");
    let volume: f64 = grid.cell_width().iter().product();
    let energies: Vec<f64> = (0..grid.cell_count())
        .map(|c| energy(&grid.cell_center(c)))
        .collect();
    let min = energies.iter().copied().fold(f64::INFINITY, f64::min);
    let sum: f64 = energies.iter().map(|u| (min - u).exp()).sum();
    -min + (sum * volume).ln()
}

/// Mean and standard deviation of each coordinate under the toy's density, by
/// the midpoint rule on a grid of `bins` cells per axis.
pub(crate) fn quadrature_posterior<const D: usize, T: AnalyticToy<D> + ?Sized>(
    toy: &T,
    bins: usize,
) -> KnownPosterior {
    let grid = toy.grid(bins);
    let p = grid.cell_probabilities(|x| toy.density(x), 1);
    let total: f64 = p.iter().sum();
    let mut m1 = [0.0; D];
    let mut m2 = [0.0; D];
    for (cell, pc) in p.iter().enumerate() {
        let c = grid.cell_center(cell);
        for i in 0..D {
            m1[i] += pc * c[i] / total;
            m2[i] += pc * c[i] * c[i] / total;
        }
    }
    KnownPosterior {
        source: format!("quadrature of the exact density ({bins} cells per axis)"),
        mean: m1.to_vec(),
        sd: (0..D).map(|i| (m2[i] - m1[i] * m1[i]).sqrt()).collect(),
        mean_mcse: None,
        sd_mcse: None,
        gaussian_marginals: false,
    }
}

/// Implements `Model`, `Potential<f64, D>` and `MinibatchPotential<f64, D>`
/// for a type implementing [`AnalyticToy<D>`], with quadrature on `$bins`
/// cells per axis for `known_posterior`.
macro_rules! toy_target_impls {
    ($toy:ty, $d:literal, $bins:literal) => {
        impl $crate::model::Model for $toy {
            fn name(&self) -> String {
                $crate::targets::AnalyticToy::<$d>::target_name(self).into()
            }

            fn dimension(&self) -> usize {
                $d
            }

            fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
                let mut xa = [0.0; $d];
                xa.copy_from_slice(x);
                let mut ga = [0.0; $d];
                let u = $crate::targets::AnalyticToy::<$d>::energy_and_gradient(self, &xa, &mut ga);
                gradient.copy_from_slice(&ga);
                u
            }

            fn stochastic_gradient_is_exact(&self) -> bool {
                false
            }

            fn stochastic_gradient(
                &self,
                x: &[f64],
                _batch_size: usize,
                rng: &mut $crate::model::ModelRng,
                gradient: &mut [f64],
            ) {
                let _ = $crate::model::Model::potential_and_gradient(self, x, gradient);
                let sd = $crate::targets::AnalyticToy::<$d>::gradient_noise_sd(self);
                let mut noise = [0.0f64; $d];
                qnmc::random::fill_standard_normal(rng, &mut noise);
                for (g, z) in gradient.iter_mut().zip(noise) {
                    *g += sd * z;
                }
            }

            fn initial_point(&self) -> Vec<f64> {
                $crate::targets::AnalyticToy::<$d>::starting_point(self).to_vec()
            }

            fn known_posterior(&self) -> Option<$crate::model::KnownPosterior> {
                Some($crate::targets::analytic_toy::quadrature_posterior::<$d, _>(self, $bins))
            }
        }

        impl qnmc::Potential<f64, $d> for $toy {
            fn potential_and_gradient(&self, x: &[f64; $d], gradient: &mut [f64; $d]) -> f64 {
                $crate::targets::AnalyticToy::<$d>::energy_and_gradient(self, x, gradient)
            }
        }

        impl qnmc::MinibatchPotential<f64, $d> for $toy {
            type Batch = [f64; $d];

            fn draw_batch<R: rand_core::Rng + ?Sized>(&self, rng: &mut R) -> [f64; $d] {
                let mut noise = [0.0; $d];
                qnmc::random::fill_standard_normal(rng, &mut noise);
                noise
            }

            fn minibatch_gradient(
                &self,
                noise: &[f64; $d],
                x: &[f64; $d],
                gradient: &mut [f64; $d],
            ) {
                let _ = $crate::targets::AnalyticToy::<$d>::energy_and_gradient(self, x, gradient);
                let sd = $crate::targets::AnalyticToy::<$d>::gradient_noise_sd(self);
                for (g, z) in gradient.iter_mut().zip(noise) {
                    *g += sd * z;
                }
            }
        }
    };
}

pub(crate) use toy_target_impls;

/// A gradient-noise standard deviation that is negative or not finite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InvalidNoise(pub f64);

impl core::fmt::Display for InvalidNoise {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "the gradient-noise standard deviation must be finite and >= 0 (got {})",
            self.0
        )
    }
}

impl std::error::Error for InvalidNoise {}

/// `Ok(sd)` for a finite sd ≥ 0.
pub(crate) fn check_noise(sd: f64) -> Result<f64, InvalidNoise> {
    if sd.is_finite() && sd >= 0.0 {
        Ok(sd)
    } else {
        Err(InvalidNoise(sd))
    }
}
