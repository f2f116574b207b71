//! SGRLD with a constant dense metric: the recipe (Ma, Chen & Fox 2015) with
//! z = θ, D = G⁻¹ a fixed symmetric positive-definite matrix, Q = 0, B̂ = 0.
//! Γᵢ = Σⱼ ∂ⱼ(G⁻¹)ᵢⱼ vanishes because G⁻¹ does not depend on θ, so one step is
//!
//! ```text
//! θ ← θ − ε G⁻¹ ∇Ũ_Ω(θ) + √(2ε) L w,    L Lᵀ = G⁻¹,  w ~ N(0, I).
//! ```
//!
//! This is the SGRLD baseline of the HAMCMC paper (Şimşekli et al. 2016, §5.1),
//! which preconditions with the inverse expected Fisher information of the
//! full problem; for the linear Gaussian model θ ~ N(0, I),
//! xₙ | θ ~ N(aₙᵀθ, σ²) that matrix is G⁻¹ = (Σₙ aₙaₙᵀ/σ² + I)⁻¹, the
//! posterior covariance. [`Sgrld`](super::Sgrld) is the same sampler with a
//! diagonal, position-dependent metric.
//!
//! **The metric** is a [`DenseMetric`] built from G⁻¹ (its "covariance" is
//! G⁻¹): [`DenseMetric::new`] factors it once by Cholesky and returns an error
//! for a non-finite, asymmetric or non-positive-definite input, so
//! [`DenseSgrld::new`] cannot be handed a bad metric. A step then costs two
//! triangular products for the drift (G⁻¹v = L(Lᵀv)) and one for the noise
//! (L w): O(D²) arithmetic and D² scalars of storage, meant for small D
//! (the paper's point: HAMCMC's L-BFGS metric costs O(MD)).
//!
//! **Convention.** Recipe ε (drift −εG⁻¹∇Ũ, noise N(0, 2εG⁻¹)), which is the
//! HAMCMC paper's eq. (7) with H = G⁻¹; ∇Ũ is the target's minibatch gradient,
//! an unbiased estimate of the full ∇U (N/|Ω|-scaled data term plus prior).
//! **Random numbers per step:** the batch, then D standard normals.
//! **Exactness:** biased O(ε) (Euler discretisation), as SGLD.
//!
//! ```
//! use qnmc::metric::DenseMetric;
//! use qnmc::samplers::recipe::{DenseSgrld, DenseSgrldSettings};
//! use qnmc::{FullBatch, Potential};
//! use rand_core::SeedableRng;
//! use rand_xorshift::XorShiftRng;
//!
//! /// N(0, Σ) with Σ⁻¹ = [[2, -1], [-1, 2]].
//! struct Gaussian;
//! impl Potential<f64, 2> for Gaussian {
//!     fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
//!         *g = [2.0 * x[0] - x[1], 2.0 * x[1] - x[0]];
//!         0.5 * (x[0] * g[0] + x[1] * g[1])
//!     }
//! }
//!
//! // G⁻¹ = Σ, the inverse Fisher information of this target.
//! let metric = DenseMetric::new(&[[2.0 / 3.0, 1.0 / 3.0], [1.0 / 3.0, 2.0 / 3.0]]).unwrap();
//! let mut sampler = DenseSgrld::new(DenseSgrldSettings::new(0.05), [3.0, -3.0], metric).unwrap();
//! let mut rng = XorShiftRng::seed_from_u64(7);
//! let mut sum = 0.0;
//! for _ in 0..20_000 {
//!     sampler.step(&FullBatch(Gaussian), &mut rng).unwrap();
//!     sum += sampler.position()[0] * sampler.position()[1];
//! }
//! // Cov(θ₀, θ₁) = 1/3, plus an O(ε) bias.
//! assert!((sum / 20_000.0 - 1.0 / 3.0).abs() < 0.1);
//! // A metric that is not positive definite is refused when it is built.
//! assert!(DenseMetric::new(&[[1.0, 2.0], [2.0, 1.0]]).is_err());
//! ```

use rand_core::Rng;

use super::engine::{RecipeDynamics, recipe_update};
use super::{begin_step, check_initial};
use crate::error::{Error, require_positive};
use crate::kernels::all_finite;
use crate::metric::DenseMetric;
use crate::real::Real;
use crate::stats::StepStats;
use crate::target::MinibatchPotential;

/// Langevin dynamics with a constant dense diffusion D = L Lᵀ (L lower
/// triangular, row-major, zero above the diagonal): Q = 0, Γ = 0, B̂ = 0.
struct DenseLangevin<'a, T, const D: usize> {
    factor: &'a [[T; D]; D],
}

impl<T: Real, const D: usize> RecipeDynamics<T> for DenseLangevin<'_, T, D> {
    fn state_len(&self) -> usize {
        D
    }
    fn noise_len(&self) -> usize {
        D
    }
    fn hamiltonian_gradient(&self, _z: &[T], g: &[T], out: &mut [T]) {
        for (o, &gi) in out.iter_mut().zip(g) {
            *o = gi;
        }
    }
    /// out = L (Lᵀ v): first Lᵀ v accumulated row by row of L, then L times it
    /// in place from the last row up (row i reads entries 0…i, which the rows
    /// below it have not overwritten yet).
    fn apply_diffusion(&self, _z: &[T], v: &[T], out: &mut [T]) {
        out.fill(T::ZERO);
        for (i, (row, &vi)) in self.factor.iter().zip(v).enumerate() {
            for (o, &l) in out.iter_mut().zip(row).take(i + 1) {
                *o += l * vi;
            }
        }
        for (i, row) in self.factor.iter().enumerate().rev() {
            let mut sum = T::ZERO;
            for (&l, &w) in row.iter().zip(out.iter()).take(i + 1) {
                sum += l * w;
            }
            if let Some(o) = out.get_mut(i) {
                *o = sum;
            }
        }
    }
    fn apply_curl(&self, _z: &[T], _v: &[T], out: &mut [T]) {
        out.fill(T::ZERO);
    }
    fn correction(&self, _z: &[T], out: &mut [T]) {
        out.fill(T::ZERO);
    }
    /// out = √2 · L w (L Lᵀ = D, so Cov(out) = 2D; B̂ = 0).
    fn apply_noise_factor(&self, _z: &[T], _eps: T, w: &[T], out: &mut [T]) {
        let root_two = T::TWO.sqrt();
        for (i, (o, row)) in out.iter_mut().zip(self.factor.iter()).enumerate() {
            let mut sum = T::ZERO;
            for (&l, &wj) in row.iter().zip(w).take(i + 1) {
                sum += l * wj;
            }
            *o = root_two * sum;
        }
    }
}

/// Settings of [`DenseSgrld`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DenseSgrldSettings<T> {
    /// ε > 0 (recipe convention).
    pub step_size: T,
}

impl<T: Real> DenseSgrldSettings<T> {
    /// SGRLD with step size ε.
    pub fn new(step_size: T) -> Self {
        DenseSgrldSettings { step_size }
    }

    /// Checks every setting.
    pub fn validate(&self) -> Result<(), Error> {
        require_positive(self.step_size, "step_size")
    }
}

/// SGRLD with a constant dense metric G in dimension `D`, held as the
/// Cholesky factor of G⁻¹ (see the module documentation).
#[derive(Debug, Clone)]
pub struct DenseSgrld<T, const D: usize> {
    settings: DenseSgrldSettings<T>,
    metric: DenseMetric<T, D>,
    position: [T; D],
    proposal: [T; D],
    gradient: [T; D],
    normals: [T; D],
    work: [[T; D]; 2],
}

impl<T: Real, const D: usize> DenseSgrld<T, D> {
    /// Validates `settings` and starts at `initial_position` (finite,
    /// D ≥ 1), with `inverse_metric` holding G⁻¹ (build it with
    /// [`DenseMetric::new`]`(&G⁻¹)`, which checks it).
    pub fn new(
        settings: DenseSgrldSettings<T>,
        initial_position: [T; D],
        inverse_metric: DenseMetric<T, D>,
    ) -> Result<Self, Error> {
        settings.validate()?;
        check_initial(&initial_position)?;
        Ok(DenseSgrld {
            settings,
            metric: inverse_metric,
            position: initial_position,
            proposal: [T::ZERO; D],
            gradient: [T::ZERO; D],
            normals: [T::ZERO; D],
            work: [[T::ZERO; D]; 2],
        })
    }

    /// One step. A non-finite gradient returns
    /// [`Error::NonFiniteGradient`], a non-finite proposal
    /// [`Error::NonFiniteProposal`]; the sampler is then exactly as before
    /// the call (the generator has advanced).
    pub fn step<P, R>(&mut self, target: &P, rng: &mut R) -> Result<StepStats<T>, Error>
    where
        P: MinibatchPotential<T, D>,
        R: Rng + ?Sized,
    {
        let eps = self.settings.step_size;
        let (stats, _) = begin_step(
            target,
            rng,
            eps,
            &self.position,
            &mut self.normals,
            &mut self.gradient,
            D,
        )?;
        let dynamics = DenseLangevin {
            factor: self.metric.covariance_factor(),
        };
        recipe_update(
            &dynamics,
            &self.position,
            &self.gradient,
            eps,
            &self.normals,
            self.work.as_flattened_mut(),
            &mut self.proposal,
        )?;
        if !all_finite(&self.proposal) {
            return Err(Error::NonFiniteProposal);
        }
        self.position = self.proposal;
        Ok(stats)
    }

    /// The current θ.
    pub fn position(&self) -> &[T; D] {
        &self.position
    }

    /// The settings in force.
    pub fn settings(&self) -> &DenseSgrldSettings<T> {
        &self.settings
    }

    /// Changes ε (e.g. the decaying ε_t = (a/t)^κ of the HAMCMC paper).
    pub fn set_step_size(&mut self, step_size: T) -> Result<(), Error> {
        require_positive(step_size, "step_size")?;
        self.settings.step_size = step_size;
        Ok(())
    }

    /// The metric: G⁻¹ and its Cholesky factor.
    pub fn inverse_metric(&self) -> &DenseMetric<T, D> {
        &self.metric
    }

    /// Replaces G⁻¹ (a metric that changes between steps; within a step it is
    /// constant, so no Γ term is added: the caller must know that a metric
    /// depending on θ needs one).
    pub fn set_inverse_metric(&mut self, inverse_metric: DenseMetric<T, D>) {
        self.metric = inverse_metric;
    }
}

recipe_sampler_traits!(DenseSgrld, DenseSgrldSettings);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::fill_standard_normal;
    use crate::samplers::recipe::{Sgld, SgldSettings};
    use crate::target::{FullBatch, Potential};
    use rand_core::SeedableRng;
    use rand_xorshift::XorShiftRng;

    /// N(μ, Σ), μ = (1, −2), Σ = [[1, 0.8], [0.8, 1]] (correlation 0.8).
    struct Correlated;
    const MEAN: [f64; 2] = [1.0, -2.0];
    const COVARIANCE: [[f64; 2]; 2] = [[1.0, 0.8], [0.8, 1.0]];

    impl Potential<f64, 2> for Correlated {
        fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
            // Σ⁻¹ = [[1, −0.8], [−0.8, 1]] / 0.36.
            let d = [x[0] - MEAN[0], x[1] - MEAN[1]];
            *g = [(d[0] - 0.8 * d[1]) / 0.36, (d[1] - 0.8 * d[0]) / 0.36];
            0.5 * (d[0] * g[0] + d[1] * g[1])
        }
    }

    #[test]
    fn one_step_by_hand() {
        // G⁻¹ = [[4, 2], [2, 2]] = L Lᵀ, L = [[2, 0], [1, 1]].
        let inverse = [[4.0, 2.0], [2.0, 2.0]];
        let metric = DenseMetric::new(&inverse).unwrap();
        let start = [0.5, -0.25];
        let eps = 0.1;
        let mut sampler = DenseSgrld::new(DenseSgrldSettings::new(eps), start, metric).unwrap();
        let mut rng = XorShiftRng::seed_from_u64(3);
        sampler.step(&FullBatch(Correlated), &mut rng).unwrap();

        let mut replay = XorShiftRng::seed_from_u64(3);
        let mut w = [0.0; 2];
        fill_standard_normal(&mut replay, &mut w);
        let mut g = [0.0; 2];
        Correlated.potential_and_gradient(&start, &mut g);
        let noise = [2.0 * w[0], w[0] + w[1]];
        for i in 0..2 {
            let drift = inverse[i][0] * g[0] + inverse[i][1] * g[1];
            let expected = start[i] - eps * drift + (2.0 * eps).sqrt() * noise[i];
            assert!(
                (sampler.position()[i] - expected).abs() < 1e-12,
                "{:?} against {expected}",
                sampler.position()
            );
        }
    }

    #[test]
    fn identity_metric_is_sgld() {
        let metric = DenseMetric::<f64, 2>::identity();
        let settings = DenseSgrldSettings::new(0.03);
        let mut dense = DenseSgrld::new(settings, [2.0, 1.0], metric).unwrap();
        let mut sgld = Sgld::<f64, 2>::new(SgldSettings::new(0.03), [2.0, 1.0]).unwrap();
        let (mut r1, mut r2) = (
            XorShiftRng::seed_from_u64(11),
            XorShiftRng::seed_from_u64(11),
        );
        for _ in 0..200 {
            dense.step(&FullBatch(Correlated), &mut r1).unwrap();
            sgld.step(&FullBatch(Correlated), &mut r2).unwrap();
            for i in 0..2 {
                assert!((dense.position()[i] - sgld.position()[i]).abs() < 1e-10);
            }
        }
    }

    #[test]
    fn bad_inputs_are_errors() {
        let metric = DenseMetric::<f64, 2>::identity();
        assert!(DenseSgrld::new(DenseSgrldSettings::new(0.0), [0.0; 2], metric.clone()).is_err());
        assert!(
            DenseSgrld::new(DenseSgrldSettings::new(f64::NAN), [0.0; 2], metric.clone()).is_err()
        );
        assert!(
            DenseSgrld::new(
                DenseSgrldSettings::new(0.1),
                [f64::NAN, 0.0],
                metric.clone()
            )
            .is_err()
        );
        // Not positive definite, not symmetric, not finite: refused when built.
        assert!(DenseMetric::new(&[[1.0, 2.0], [2.0, 1.0]]).is_err());
        assert!(DenseMetric::new(&[[1.0, 0.5], [0.0, 1.0]]).is_err());
        assert!(DenseMetric::new(&[[f64::INFINITY, 0.0], [0.0, 1.0]]).is_err());
        // A non-finite gradient leaves the sampler where it was.
        struct Bad;
        impl Potential<f64, 2> for Bad {
            fn potential_and_gradient(&self, _x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
                *g = [f64::NAN, 0.0];
                0.0
            }
        }
        let mut sampler =
            DenseSgrld::new(DenseSgrldSettings::new(0.1), [0.5, 0.5], metric).unwrap();
        let mut rng = XorShiftRng::seed_from_u64(1);
        assert_eq!(
            sampler.step(&FullBatch(Bad), &mut rng),
            Err(Error::NonFiniteGradient)
        );
        assert_eq!(sampler.position(), &[0.5, 0.5]);
        assert!(sampler.set_step_size(-1.0).is_err());
    }

    /// Mean and covariance on the correlated Gaussian, with a metric that is
    /// *not* the target's (G⁻¹ = [[2, 1], [1, 1.5]]), so the test does not
    /// rely on a perfectly conditioned chain. Each estimate is checked with
    /// a z-score against its Monte-Carlo standard error from 100 batch means
    /// of 2000 draws (|z| < 4.5 for all 5 statistics). The Euler bias at
    /// ε = 0.01 is about ε·λ/2 ≈ 2 % of Σ (λ ≤ 3.9, the largest eigenvalue
    /// of G⁻¹Σ⁻¹), below the standard errors of the second moments (≈ 4 %).
    #[test]
    fn gaussian_mean_and_covariance_within_monte_carlo_error() {
        let metric = DenseMetric::new(&[[2.0, 1.0], [1.0, 1.5]]).unwrap();
        let mut sampler = DenseSgrld::new(DenseSgrldSettings::new(0.01), MEAN, metric).unwrap();
        let mut rng = XorShiftRng::seed_from_u64(2016);
        for _ in 0..2_000 {
            sampler.step(&FullBatch(Correlated), &mut rng).unwrap();
        }
        const BATCHES: usize = 100;
        const PER_BATCH: usize = 2_000;
        // Statistics: θ₀, θ₁, (θ₀−μ₀)², (θ₁−μ₁)², (θ₀−μ₀)(θ₁−μ₁).
        let truth = [
            MEAN[0],
            MEAN[1],
            COVARIANCE[0][0],
            COVARIANCE[1][1],
            COVARIANCE[0][1],
        ];
        let mut means = [[0.0; 5]; BATCHES];
        for batch in means.iter_mut() {
            for _ in 0..PER_BATCH {
                sampler.step(&FullBatch(Correlated), &mut rng).unwrap();
                let x = sampler.position();
                let d = [x[0] - MEAN[0], x[1] - MEAN[1]];
                let s = [x[0], x[1], d[0] * d[0], d[1] * d[1], d[0] * d[1]];
                for k in 0..5 {
                    batch[k] += s[k] / PER_BATCH as f64;
                }
            }
        }
        for k in 0..5 {
            let m = means.iter().map(|b| b[k]).sum::<f64>() / BATCHES as f64;
            let var =
                means.iter().map(|b| (b[k] - m) * (b[k] - m)).sum::<f64>() / (BATCHES - 1) as f64;
            let se = (var / BATCHES as f64).sqrt();
            let z = (m - truth[k]) / se;
            assert!(
                z.abs() < 4.5,
                "statistic {k}: {m} against {} (se {se}, z {z})",
                truth[k]
            );
        }
    }
}
