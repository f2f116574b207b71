//! HMC-BFGS and MH-BFGS: the ensemble-chain-adaptation (ECA) samplers of
//! Zhang & Sutton, *Quasi-Newton Methods for Markov Chain Monte Carlo* (NIPS 2011),
//! §3–§4, Algorithm 1 (HMC-BFGS) and §4.1, eq. 14 (MH-BFGS); ALGORITHMS.md §4.
//!
//! # The scheme
//!
//! The sampler holds K chains x₁ … x_K (const generic `K ≥ 3`) and, for each,
//! U(x_k) and ∇U(x_k). One call to `step` updates **one** chain, round-robin:
//! chain 0, 1, …, K−1, 0, … ([`HmcBfgs::next_chain`] tells which comes next).
//! This is the paper's Algorithm 1, which always updates the oldest member of
//! the window and moves it to the end (lines 5–9): relabelling the window slots
//! as fixed chain indices makes that a round-robin sweep, i.e. the composition
//! T = T₁ ∘ … ∘ T_K of eq. 13. One full sweep is K calls.
//!
//! To update chain i, the metric is built from the **other** K − 1 states only
//! (the paper's H_BFGS(x_{1:K∖i}), §3 last paragraph):
//! 1. sort the K − 1 states by L(x) = −U(x) in ascending order, i.e. by U
//!    descending (ties keep chain order), so the pairs run towards the mode and
//!    the newest L-BFGS pair is the one with the lowest U;
//! 2. walk the sorted list with an anchor a (first the highest-U state): for the
//!    next state c, s = x_c − x_a, y = ∇U(x_c) − ∇U(x_a); if the pair passes the
//!    curvature policy (the paper: sᵀy > 0) it enters the memory and c becomes the
//!    anchor; otherwise c is removed from the pseudo-memory (the paper: "remove
//!    the point x_{i+1} … and recompute s_i, y_i using x_{i+2}") and counted in
//!    [`StepStats::pairs_skipped`](crate::StepStats::pairs_skipped);
//! 3. the pairs go, oldest first, into an [`LbfgsMemory`]
//!    that is cleared before every update. K − 1 states give at most K − 2
//!    pairs, so the const generic pair capacity must satisfy `M ≥ K − 2`
//!    (checked at construction; `M = K − 2` is enough).
//!
//! γ of H⁰ = γI: the paper leaves it free ("γI for some γ"). The default is
//! [`InitialScaling::NewestPair`]`(1)`:
//! γ = sᵀy / yᵀy of the newest (lowest-U) pair, 1 when no pair survives.
//! The default curvature policy is the paper's rule exactly: skip iff sᵀy ≤ 0
//! (`min_relative_curvature = 0`, no trust region); set ε > 0 for targets with
//! regions of negative curvature.
//!
//! # Exactness
//!
//! Both samplers are **exact**: the metric used to update chain i is a function
//! of the other chains only, so with those held fixed the update is an ordinary
//! π-invariant HMC (resp. Metropolis–Hastings) kernel on x_i, and the ensemble
//! is a valid MCMC on the product space with invariant density ∏_k π(x_k)
//! (the paper's eq. 12–13 argument). Every chain is marginally a draw of π at
//! stationarity; the chains are not independent of each other. The momenta are
//! not part of the invariant state (the paper, end of §4.2): they are redrawn at
//! every update and discarded.
//!
//! Non-finite U or ∇U (or a non-finite proposed position) is a rejected,
//! counted divergence; the chain stays where it was.
//!
//! # Cost and use
//!
//! Per update: the metric, O(K² + K·D + (K − 2)²·D + (K − 2)³) (insertion
//! sort, pairs, their Gram matrix, product-form factors), then L gradients
//! (HMC-BFGS) or one gradient (MH-BFGS; ∇U is needed because every accepted
//! state feeds the other chains' metrics). Storage: K states, U and ∇U, plus an L-BFGS memory of M
//! pairs. Each chain only moves once per K updates, so K should stay small
//! (K − 2 pairs of curvature information); the paper, like the tests here, finds
//! the random-walk MH-BFGS slow in high dimension — prefer HMC-BFGS there.
//!
//! Both samplers implement [`Sampler`](crate::Sampler) and [`Step`](crate::Step),
//! so the warm-up driver can tune ε from the acceptance probability of every
//! update (warm-up draws are then discarded, as for every adapted sampler).
//!
//! # Example
//!
//! ```
//! use qnmc::Potential;
//! use qnmc::samplers::ensemble::{HmcBfgs, HmcBfgsSettings};
//! use rand_core::SeedableRng;
//! use rand_xorshift::XorShiftRng;
//!
//! /// U(θ) = ½ θᵀ diag(1, 100) θ: badly scaled, which the metric fixes.
//! struct Scaled;
//! impl Potential<f64, 2> for Scaled {
//!     fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
//!         g[0] = x[0];
//!         g[1] = 100.0 * x[1];
//!         0.5 * (x[0] * g[0] + x[1] * g[1])
//!     }
//! }
//!
//! // K = 6 chains, pair capacity M = 4 = K − 2.
//! let starts = [[1.0, 0.1], [-1.0, 0.05], [0.5, -0.1], [2.0, 0.0], [-0.3, 0.2], [0.0, -0.05]];
//! let mut sampler =
//!     HmcBfgs::<f64, 2, 6, 4>::new(HmcBfgsSettings::new(0.8, 3), starts, &Scaled).unwrap();
//! let mut rng = XorShiftRng::seed_from_u64(1);
//! let (mut accepted, mut sum_sq) = (0, 0.0);
//! for sweep in 0..2000 {
//!     for _ in 0..6 {
//!         accepted += sampler.step(&Scaled, &mut rng).accepted as u32;
//!     }
//!     if sweep >= 200 {
//!         sum_sq += sampler.positions().iter().map(|x| x[0] * x[0]).sum::<f64>();
//!     }
//! }
//! assert!(accepted > 6000);
//! let variance = sum_sq / (1800.0 * 6.0); // Var θ₀ = 1
//! assert!((variance - 1.0).abs() < 0.2, "{variance}");
//! ```

/// The public methods the two samplers share word for word, written once: the
/// settings in force and replacing them, the step size, the ensemble's states,
/// potentials, gradients, cursor and metric memory, the run-time dimension,
/// the in-place constructors (`init_in_place`, `new_boxed`, `reset`, on
/// `initialize_zeroed` and `check_reset` as in
/// `samplers/in_place_constructors.rs`), and the
/// [`Sampler`](crate::Sampler) and [`Step`](crate::Step) impls. `$sampler` must hold `settings:
/// $settings<T>` and `ensemble: Ensemble<T, D, K, M>`; `$settings` must have
/// `step_size`, `scaling`, `curvature` and `validate`. The doc attributes given
/// go on `set_step_size`.
macro_rules! shared_methods {
    ($sampler:ident, $settings:ident, $(#[$set_step_size_doc:meta])*) => {
        impl<T: $crate::Real, const D: usize, const K: usize, const M: usize>
            $sampler<T, D, K, M>
        {
            /// Replaces the settings; on error the old settings stay.
            pub fn set_settings(
                &mut self,
                settings: $settings<T>,
            ) -> Result<(), $crate::error::Error> {
                settings.validate()?;
                self.ensemble
                    .set_metric(settings.scaling, settings.curvature)?;
                self.settings = settings;
                Ok(())
            }

            $(#[$set_step_size_doc])*
            pub fn set_step_size(&mut self, step_size: T) -> Result<(), $crate::error::Error> {
                $crate::error::require_positive(step_size, "step_size")?;
                self.settings.step_size = step_size;
                Ok(())
            }

            /// The settings in force.
            pub fn settings(&self) -> &$settings<T> {
                &self.settings
            }

            /// The current state of every chain.
            pub fn positions(&self) -> &[[T; D]; K] {
                &self.ensemble.positions
            }

            /// The current state of chain `chain`, `None` if `chain ≥ K`.
            pub fn position(&self, chain: usize) -> Option<&[T; D]> {
                self.ensemble.positions.get(chain)
            }

            /// U at every chain's state.
            pub fn potentials(&self) -> &[T; K] {
                &self.ensemble.potentials
            }

            /// ∇U at every chain's state.
            pub fn gradients(&self) -> &[[T; D]; K] {
                &self.ensemble.gradients
            }

            /// The chain the next `step` updates.
            pub fn next_chain(&self) -> usize {
                self.ensemble.next
            }

            /// The metric memory of the most recent update (empty before the first).
            pub fn memory(&self) -> &$crate::lbfgs::LbfgsMemory<T, D, M> {
                &self.ensemble.memory
            }

            /// n: every chain moves its first n coordinates and keeps the
            /// rest at zero (D unless `set_dimension` said otherwise).
            #[inline]
            pub fn dimension(&self) -> usize {
                self.ensemble.dimension()
            }

            /// Moves only the first `n` coordinates of every chain (1 ≤ n ≤
            /// D; feature `runtime-dimension`; before the first update,
            /// every start zero from n on): a model of run-time dimension n
            /// in storage for D. Each update draws n normals and every pass
            /// (the pairs, the metric, the integrator or proposal) stops at
            /// n, so an update costs what dimension n costs and the chains
            /// are bit for bit those of the sampler compiled for n. On error
            /// nothing changes.
            #[cfg(feature = "runtime-dimension")]
            pub fn set_dimension(&mut self, n: usize) -> Result<(), $crate::error::Error> {
                self.ensemble.set_dimension(n)
            }

            /// The state of `new` on an all-zero sampler.
            fn initialize_zeroed<P: $crate::target::Potential<T, D>>(
                &mut self,
                settings: $settings<T>,
                initial_positions: &[[T; D]; K],
                target: &P,
            ) -> Result<(), $crate::error::Error> {
                settings.validate()?;
                self.ensemble.initialize_zeroed(
                    settings.scaling,
                    settings.curvature,
                    initial_positions,
                    target,
                )?;
                self.settings = settings;
                Ok(())
            }

            /// The checks of `initialize_zeroed`, changing nothing
            /// observable.
            fn check_reset<P: $crate::target::Potential<T, D>>(
                &mut self,
                settings: &$settings<T>,
                initial_positions: &[[T; D]; K],
                target: &P,
            ) -> Result<(), $crate::error::Error> {
                settings.validate()?;
                self.ensemble.check_reset(
                    settings.scaling,
                    settings.curvature,
                    initial_positions,
                    target,
                )
            }

            /// `new` written into `slot` ([`crate::in_place`]): nothing of
            /// the sampler crosses the stack. `initial_positions` is read
            /// by reference (at a large D, put it in a zeroed allocation
            /// too: `qnmc::in_place::zeroed_box`, feature `alloc`).
            pub fn init_in_place<'s, P: $crate::target::Potential<T, D>>(
                slot: &'s mut core::mem::MaybeUninit<Self>,
                settings: $settings<T>,
                initial_positions: &[[T; D]; K],
                target: &P,
            ) -> Result<&'s mut Self, $crate::error::Error> {
                let sampler = $crate::in_place::zeroed(slot);
                sampler.initialize_zeroed(settings, initial_positions, target)?;
                Ok(sampler)
            }

            /// `new` in a `Box` allocated zeroed (feature `alloc`): only
            /// the pages the chains write are ever touched, so a sampler
            /// compiled for a large D and run at a smaller
            /// [`dimension`](Self::dimension) costs the memory of that
            /// dimension.
            #[cfg(feature = "alloc")]
            pub fn new_boxed<P: $crate::target::Potential<T, D>>(
                settings: $settings<T>,
                initial_positions: &[[T; D]; K],
                target: &P,
            ) -> Result<alloc::boxed::Box<Self>, $crate::error::Error> {
                let mut sampler = $crate::in_place::zeroed_box::<Self>();
                sampler.initialize_zeroed(settings, initial_positions, target)?;
                Ok(sampler)
            }

            /// In place, the state of `new` with `settings` at
            /// `initial_positions` (nothing of the sampler crosses the
            /// stack; the run-time dimension goes back to D). On error
            /// nothing changes.
            pub fn reset<P: $crate::target::Potential<T, D>>(
                &mut self,
                settings: $settings<T>,
                initial_positions: &[[T; D]; K],
                target: &P,
            ) -> Result<(), $crate::error::Error> {
                self.check_reset(&settings, initial_positions, target)?;
                $crate::in_place::zero(self);
                self.initialize_zeroed(settings, initial_positions, target)
            }
        }

        /// The ensemble as one chain: its state is walker 0's, and a
        /// [`step`]($crate::Step::step) moves the next walker.
        impl<T: $crate::Real, const D: usize, const K: usize, const M: usize>
            $crate::Sampler<T, D> for $sampler<T, D, K, M>
        {
            type Settings = $settings<T>;
            fn settings(&self) -> &$settings<T> {
                &self.settings
            }
            fn set_step_size(&mut self, step_size: T) -> Result<(), $crate::error::Error> {
                $sampler::set_step_size(self, step_size)
            }
            fn position(&self) -> &[T; D] {
                &self.ensemble.positions[0]
            }
            fn potential(&self) -> Option<T> {
                Some(self.ensemble.potentials[0])
            }
            fn dimension(&self) -> usize {
                self.ensemble.dimension()
            }
        }

        impl<T: $crate::Real, const D: usize, const K: usize, const M: usize, P>
            $crate::Step<T, D, P> for $sampler<T, D, K, M>
        where
            P: $crate::target::Potential<T, D>,
        {
            type Stats = $crate::stats::StepStats<T>;
            fn step<R: rand_core::Rng + ?Sized>(
                &mut self,
                target: &P,
                rng: &mut R,
            ) -> Result<$crate::stats::StepStats<T>, $crate::error::Error> {
                Ok($sampler::step(self, target, rng))
            }
        }
    };
}

#[cfg(all(test, feature = "runtime-dimension"))]
mod dimension_tests;
mod hmc_bfgs;
mod mh_bfgs;

pub use hmc_bfgs::{HmcBfgs, HmcBfgsSettings};
pub use mh_bfgs::{MhBfgs, MhBfgsProposal, MhBfgsSettings};

use rand_core::Rng;

use crate::error::{Error, require_positive};
use crate::kernels::difference_leading;
use crate::lbfgs::{CurvaturePolicy, InitialScaling, LbfgsMemory, LbfgsSettings};
use crate::metric::Metric;
use crate::real::Real;
use crate::samplers::metropolis::metropolis;
use crate::stats::StepStats;
use crate::target::Potential;

/// The paper's curvature rule: skip iff sᵀy ≤ 0, no trust region.
pub(crate) fn paper_curvature<T: Real>() -> CurvaturePolicy<T> {
    CurvaturePolicy {
        trust_region: T::ZERO,
        min_relative_curvature: T::ZERO,
    }
}

/// The K states with their potentials and gradients, the metric memory and the
/// round-robin cursor, shared by both samplers.
#[derive(Debug, Clone)]
pub(crate) struct Ensemble<T, const D: usize, const K: usize, const M: usize> {
    pub(crate) positions: [[T; D]; K],
    pub(crate) potentials: [T; K],
    pub(crate) gradients: [[T; D]; K],
    pub(crate) memory: LbfgsMemory<T, D, M>,
    pub(crate) next: usize,
    s: [T; D],
    y: [T; D],
    /// The coordinates that move, n ≤ D (`set_dimension`); 0 (the all-zero
    /// value of [`crate::in_place`]) is D. The memory works on the same n.
    dimension: usize,
    /// A chain was updated.
    pub(crate) started: bool,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize, const K: usize, const M: usize] Ensemble<T, D, K, M> {
    positions, potentials, gradients, memory, next, s, y, dimension, started
});

/// Checks the metric settings both samplers share: γ of H⁰ = γI finite and > 0
/// (error names `scaling`), then the curvature policy.
pub(crate) fn validate_metric<T: Real>(
    scaling: InitialScaling<T>,
    curvature: &CurvaturePolicy<T>,
) -> Result<(), Error> {
    let gamma = match scaling {
        InitialScaling::Fixed(g) | InitialScaling::NewestPair(g) => g,
    };
    require_positive(gamma, "scaling")?;
    curvature.validate()
}

/// The Metropolis test on H(current) = `h0`, H(proposal) = `h1` (one uniform,
/// drawn even for a divergence); records the decision in `stats` and returns
/// whether the proposal was accepted.
pub(crate) fn accept_or_reject<T: Real, R: Rng + ?Sized>(
    h0: T,
    h1: T,
    rng: &mut R,
    stats: &mut StepStats<T>,
) -> bool {
    let decision = metropolis(h0, h1, rng);
    stats.accepted = decision.accepted;
    stats.acceptance_probability = decision.probability;
    stats.energy_error = decision.energy_error;
    stats.divergent = decision.divergent;
    decision.accepted
}

/// HMC-BFGS's metric: M⁻¹ = H, the memory's inverse Hessian, with momenta
/// p = C z (C Cᵀ = B = H⁻¹). Built only through [`new`](Self::new), which
/// brings the product-form factors up to date; the shared borrow keeps them
/// so while the metric lives.
pub(crate) struct InverseHessianMetric<'a, T, const D: usize, const M: usize> {
    memory: &'a LbfgsMemory<T, D, M>,
}

impl<'a, T: Real, const D: usize, const M: usize> InverseHessianMetric<'a, T, D, M> {
    pub(crate) fn new(memory: &'a mut LbfgsMemory<T, D, M>) -> Self {
        memory.refresh_factors();
        InverseHessianMetric { memory }
    }
}

impl<T: Real, const D: usize, const M: usize> Metric<T, D> for InverseHessianMetric<'_, T, D, M> {
    #[inline]
    fn momentum_from_normals(&self, z: &[T; D], p: &mut [T; D]) {
        self.memory.apply_sqrt_hessian_refreshed(z, p);
    }

    #[inline]
    fn velocity(&self, p: &[T; D], v: &mut [T; D]) {
        self.memory.apply_inverse_hessian(p, v);
    }
}

/// Checks `K ≥ 3` and `M ≥ K − 2`, and gives the metric memory's settings
/// (K − 2 pairs); the memory checks the rest when it is built.
fn memory_settings<T: Real, const K: usize, const M: usize>(
    scaling: InitialScaling<T>,
    curvature: CurvaturePolicy<T>,
) -> Result<LbfgsSettings<T>, Error> {
    if K < 3 {
        return Err(Error::invalid("K", ">= 3 chains"));
    }
    if M < K - 2 {
        return Err(Error::invalid("M", ">= K - 2 pairs"));
    }
    Ok(LbfgsSettings {
        max_pairs: K - 2,
        scaling,
        curvature,
    })
}

/// U and ∇U at every state of `initial`, into `positions`, `gradients` and
/// `potentials` ([`Error::NonFiniteInitialState`] at the first state, U or
/// ∇U that is not finite).
fn evaluate_starts<T: Real, const D: usize, const K: usize, P: Potential<T, D>>(
    initial: &[[T; D]; K],
    target: &P,
    positions: &mut [[T; D]; K],
    gradients: &mut [[T; D]; K],
    potentials: &mut [T; K],
) -> Result<(), Error> {
    for k in 0..K {
        potentials[k] = super::in_place_constructors::evaluate_start(
            &initial[k],
            target,
            &mut positions[k],
            &mut gradients[k],
        )?;
    }
    Ok(())
}

impl<T: Real, const D: usize, const K: usize, const M: usize> Ensemble<T, D, K, M> {
    /// Checks `K ≥ 3` and `M ≥ K − 2` (errors name `K` and `M`), builds the metric
    /// memory and evaluates the target at every initial state.
    pub(crate) fn new<P: Potential<T, D>>(
        scaling: InitialScaling<T>,
        curvature: CurvaturePolicy<T>,
        initial: [[T; D]; K],
        target: &P,
    ) -> Result<Self, Error> {
        let mut ensemble = Ensemble {
            positions: [[T::ZERO; D]; K],
            potentials: [T::ZERO; K],
            gradients: [[T::ZERO; D]; K],
            memory: LbfgsMemory::new(memory_settings::<T, K, M>(scaling, curvature)?)?,
            next: 0,
            s: [T::ZERO; D],
            y: [T::ZERO; D],
            dimension: D,
            started: false,
        };
        evaluate_starts(
            &initial,
            target,
            &mut ensemble.positions,
            &mut ensemble.gradients,
            &mut ensemble.potentials,
        )?;
        Ok(ensemble)
    }

    /// The state of [`Ensemble::new`] on an all-zero ensemble, built where
    /// it lives (nothing of length D crosses the stack).
    pub(crate) fn initialize_zeroed<P: Potential<T, D>>(
        &mut self,
        scaling: InitialScaling<T>,
        curvature: CurvaturePolicy<T>,
        initial: &[[T; D]; K],
        target: &P,
    ) -> Result<(), Error> {
        self.memory
            .initialize_zeroed(memory_settings::<T, K, M>(scaling, curvature)?)?;
        evaluate_starts(
            initial,
            target,
            &mut self.positions,
            &mut self.gradients,
            &mut self.potentials,
        )?;
        self.dimension = D;
        Ok(())
    }

    /// The checks of [`initialize_zeroed`](Self::initialize_zeroed),
    /// changing nothing observable: the target is evaluated at each start
    /// into the pair scratch vectors `s` and `y`.
    pub(crate) fn check_reset<P: Potential<T, D>>(
        &mut self,
        scaling: InitialScaling<T>,
        curvature: CurvaturePolicy<T>,
        initial: &[[T; D]; K],
        target: &P,
    ) -> Result<(), Error> {
        LbfgsMemory::<T, D, M>::validate(&memory_settings::<T, K, M>(scaling, curvature)?)?;
        for start in initial {
            super::in_place_constructors::evaluate_start(start, target, &mut self.s, &mut self.y)?;
        }
        Ok(())
    }

    /// n: the coordinates that move (D unless `set_dimension` said
    /// otherwise).
    #[inline]
    pub(crate) fn dimension(&self) -> usize {
        super::dimension::in_use::<D>(self.dimension)
    }

    /// Moves only the first `n` coordinates of every chain (before the first
    /// update; every start zero from n on); the memory works on n too.
    #[cfg(feature = "runtime-dimension")]
    pub(crate) fn set_dimension(&mut self, n: usize) -> Result<(), Error> {
        for position in &self.positions {
            super::dimension::check_new(n, self.started, position)?;
        }
        self.memory.set_dimension(n)?;
        self.dimension = n;
        Ok(())
    }

    /// Replaces the metric memory with an empty one for new metric settings
    /// (in place, on the same run-time dimension); on error the old memory
    /// stays.
    pub(crate) fn set_metric(
        &mut self,
        scaling: InitialScaling<T>,
        curvature: CurvaturePolicy<T>,
    ) -> Result<(), Error> {
        self.memory
            .reset(memory_settings::<T, K, M>(scaling, curvature)?)?;
        #[cfg(feature = "runtime-dimension")]
        self.memory.set_dimension(self.dimension())?;
        Ok(())
    }

    /// x, ∇U and U of chain `chain`, `None` if `chain ≥ K`.
    pub(crate) fn state(&self, chain: usize) -> Option<(&[T; D], &[T; D], T)> {
        Some((
            self.positions.get(chain)?,
            self.gradients.get(chain)?,
            *self.potentials.get(chain)?,
        ))
    }

    /// Makes (x, ∇U, U) the state of chain `chain` (an accepted proposal;
    /// the first n coordinates).
    pub(crate) fn set_state(&mut self, chain: usize, x: &[T; D], g: &[T; D], u: T) {
        let n = self.dimension();
        if let (Some(xs), Some(gs), Some(us)) = (
            self.positions.get_mut(chain),
            self.gradients.get_mut(chain),
            self.potentials.get_mut(chain),
        ) {
            xs[..n].copy_from_slice(&x[..n]);
            gs[..n].copy_from_slice(&g[..n]);
            *us = u;
        }
    }

    /// Rebuilds the memory from every chain but `chain` (steps 1–3 of the module
    /// docs) and returns the number of states removed by the curvature filter.
    pub(crate) fn build_metric(&mut self, chain: usize) -> u32 {
        // Indices of the other chains, insertion-sorted by U descending (stable).
        let mut order = [0usize; K];
        let mut n = 0usize;
        for k in 0..K {
            if k == chain {
                continue;
            }
            let mut j = n;
            while j > 0 && self.potentials[order[j - 1]] < self.potentials[k] {
                order[j] = order[j - 1];
                j -= 1;
            }
            order[j] = k;
            n += 1;
        }
        self.memory.clear();
        self.started = true;
        let len = self.dimension();
        let mut skipped = 0u32;
        let Some(&first) = order.first() else {
            return 0;
        };
        let mut anchor = first;
        for &c in order.iter().take(n).skip(1) {
            difference_leading(
                &self.positions[c],
                &self.positions[anchor],
                &mut self.s,
                len,
            );
            difference_leading(
                &self.gradients[c],
                &self.gradients[anchor],
                &mut self.y,
                len,
            );
            // y is scratch: the trust region may shift it in place.
            if self.memory.try_push_in_place(&self.s, &mut self.y) {
                anchor = c;
            } else {
                skipped += 1;
            }
        }
        skipped
    }

    /// Returns the chain under the cursor and moves the cursor to the next one.
    pub(crate) fn take_next(&mut self) -> usize {
        let chain = self.next;
        self.next = if self.next + 1 >= K { 0 } else { self.next + 1 };
        chain
    }
}
