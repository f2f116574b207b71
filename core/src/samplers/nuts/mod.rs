//! The No-U-Turn Sampler (Hoffman & Gelman 2014) as Stan and nuts-rs run it
//! today: multinomial sampling inside each new subtree, biased progressive
//! sampling when a subtree joins the trajectory, and the generalised U-turn
//! criterion (Betancourt 2017) with Stan's extra checks across the two halves of
//! every merged tree. Any [`Metric`]: identity, diagonal, dense or the
//! quasi-Newton [`LbfgsMetric`](crate::metric::LbfgsMetric).
//!
//! The tree is built iteratively, leaf by leaf, without recursion: the U-turn
//! checks merge completed subtrees like a binary counter, so the storage is
//! `MAX_DEPTH` spans of five vectors plus two phase points (the ends, each
//! advanced in place by the subtrees that extend it), O(MAX_DEPTH·D),
//! all inside the struct. The exact transition, including the order of the
//! random draws, is written down in `docs/NUTS.md`; an independent dense
//! implementation in `tests/` reproduces the chain from it.
//!
//! Per leapfrog step the metric is applied once, to the new gradient: every
//! phase point carries w = M⁻¹∇U and the velocity is updated as v ← v − (h/2)w.
//!
//! ```
//! use qnmc::metric::DiagonalMetric;
//! use qnmc::{Nuts, NutsSettings, Potential};
//! use rand_core::SeedableRng;
//!
//! /// Independent N(0, 1) and N(0, 100).
//! struct Scaled;
//! impl Potential<f64, 2> for Scaled {
//!     fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
//!         *g = [x[0], x[1] / 100.0];
//!         0.5 * (x[0] * x[0] + x[1] * x[1] / 100.0)
//!     }
//! }
//!
//! let metric = DiagonalMetric::new(&[1.0, 100.0]).unwrap();
//! let mut nuts = Nuts::<f64, 2, _>::new(NutsSettings::new(0.8), metric, [0.0; 2], &Scaled).unwrap();
//! let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(3);
//! let mut second_moment = 0.0;
//! for _ in 0..4000 {
//!     let stats = nuts.step(&Scaled, &mut rng);
//!     assert!(!stats.divergent);
//!     second_moment += nuts.position()[1] * nuts.position()[1] / 4000.0;
//! }
//! assert!((second_moment - 100.0).abs() < 10.0, "{second_moment}");
//! ```

use rand_core::Rng;

use super::sampler::{Sampler, Step};

mod settings;
mod trajectory;

pub use settings::{DEFAULT_MAX_TREE_DEPTH, NutsSettings, NutsStats};
use trajectory::{
    Sample, Span, Subtree, Tally, Weights, leaf_pair_is_valid, merge_is_valid, merge_spans_valid,
    two_mut,
};

use crate::error::{Error, require_positive};
use crate::integrator::{PhasePoint, copy_leading};
use crate::kernels::{at_length, zero_from};
use crate::metric::Metric;
use crate::random::fill_standard_normal_ziggurat;
use crate::real::Real;
use crate::target::Potential;

/// The No-U-Turn Sampler with metric `K`; trees of depth at most `MAX_DEPTH`
/// (default 10, Stan's; the storage grows linearly with it). An exact
/// (π-invariant) sampler for a fixed step size and metric.
///
/// Random numbers per draw: D standard normals (by the ziggurat,
/// [`fill_standard_normal_ziggurat`]), then per doubling one uniform for the
/// direction, one per non-divergent leaf and one after a valid subtree
/// (`docs/NUTS.md`).
///
/// Layout: on x86-64 the sampler, its phase points, spans and samples and
/// the quasi-Newton and diagonal metrics start on 64-byte boundaries and keep
/// their fields in declaration order (`repr(C)`, vectors before scalars), so
/// when `D * size_of::<T>()` is a multiple of 32 every vector is 32-byte aligned
/// and no AVX2 load straddles a cache line: 5–10 % less time per leapfrog
/// step at D = 100 than the default layout (`docs/NUTS.md`). Other targets
/// keep the default layout. Alignment never changes a result.
#[derive(Debug, Clone)]
#[cfg_attr(target_arch = "x86_64", repr(C, align(64)))]
pub struct Nuts<T, const D: usize, K, const MAX_DEPTH: usize = 10> {
    settings: NutsSettings<T>,
    metric: K,
    /// The chain's state and the candidate of the subtree being built:
    /// `samples[current]` and the other one (a valid subtree's candidate is
    /// taken by flipping `current`, not by copying).
    samples: [Sample<T, D>; 2],
    current: usize,
    backward: PhasePoint<T, D>,
    forward: PhasePoint<T, D>,
    /// p and v of the end a new subtree grows from (it grows in place).
    end_momentum: [T; D],
    end_velocity: [T; D],
    rho: [T; D],
    normals: [T; D],
    spans: [Span<T, D>; MAX_DEPTH],
    slot: [usize; MAX_DEPTH],
    /// The coordinates that move, n ≤ D ([`Nuts::set_dimension`]); 0 (the
    /// all-zero value of [`crate::in_place`]) is D. Every vector is zero
    /// from n on.
    dimension: usize,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize, K: crate::in_place::ZeroValid, const MAX_DEPTH: usize] Nuts<T, D, K, MAX_DEPTH> {
    settings, metric, samples, current, backward, forward, end_momentum, end_velocity, rho, normals, spans, slot, dimension
});

impl<T: Real, const D: usize, K: Metric<T, D>, const MAX_DEPTH: usize> Nuts<T, D, K, MAX_DEPTH> {
    /// Validates `settings` and evaluates the target at `initial_position`.
    pub fn new<P: Potential<T, D>>(
        settings: NutsSettings<T>,
        metric: K,
        initial_position: [T; D],
        target: &P,
    ) -> Result<Self, Error> {
        settings.validate(MAX_DEPTH)?;
        if !crate::kernels::all_finite(&initial_position) {
            return Err(Error::NonFiniteInitialState);
        }
        let mut state = Sample::zero();
        state.position = initial_position;
        state.potential = target.potential_and_gradient(&state.position, &mut state.gradient);
        if !state.potential.is_finite() || !crate::kernels::all_finite(&state.gradient) {
            return Err(Error::NonFiniteInitialState);
        }
        let mut slot = [0; MAX_DEPTH];
        for (k, s) in slot.iter_mut().enumerate() {
            *s = k;
        }
        Ok(Nuts {
            settings,
            metric,
            samples: [state, Sample::zero()],
            current: 0,
            backward: PhasePoint::zero(),
            forward: PhasePoint::zero(),
            end_momentum: [T::ZERO; D],
            end_velocity: [T::ZERO; D],
            rho: [T::ZERO; D],
            spans: core::array::from_fn(|_| Span::zero()),
            slot,
            normals: [T::ZERO; D],
            dimension: D,
        })
    }

    /// n: the sampler moves the first n coordinates and keeps the rest at
    /// zero (D unless `set_dimension` (feature `runtime-dimension`) said otherwise).
    #[inline]
    pub fn dimension(&self) -> usize {
        crate::kernels::dimension_in_use::<D>(self.dimension)
    }

    /// Moves only the first `n` coordinates (1 ≤ n ≤ D) from now on (feature
    /// `runtime-dimension`): a model
    /// of run-time dimension n in storage of compile-time size D. The others
    /// stay exactly zero and are never read, drawn or written: momenta are n
    /// normals, and every pass over the vectors (leapfrog, metric, U-turn
    /// checks, copies) stops at n, so a draw costs what dimension n costs,
    /// and the chain is bit for bit the chain of a sampler of size n on the
    /// same n coordinates (with a metric that maps vectors zero from n on to
    /// vectors zero from n on, as every metric of [`crate::metric`] does when
    /// learned from such vectors). The target is evaluated at positions zero
    /// from n on; what it writes to the gradient there is ignored. The current
    /// position must be zero from n on; on error nothing changes.
    ///
    /// ```
    /// use qnmc::{Nuts, NutsSettings, Potential, metric::IdentityMetric};
    /// use rand_core::SeedableRng;
    ///
    /// /// U = ½|θ|², in storage for up to 8 coordinates.
    /// struct Normal;
    /// impl Potential<f64, 8> for Normal {
    ///     fn potential_and_gradient(&self, x: &[f64; 8], g: &mut [f64; 8]) -> f64 {
    ///         *g = *x;
    ///         0.5 * x.iter().map(|v| v * v).sum::<f64>()
    ///     }
    /// }
    /// let mut nuts = Nuts::<f64, 8, _>::new(
    ///     NutsSettings::new(0.5), IdentityMetric, [0.0; 8], &Normal).unwrap();
    /// nuts.set_dimension(3).unwrap();
    /// let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(1);
    /// for _ in 0..10 {
    ///     nuts.step(&Normal, &mut rng);
    /// }
    /// assert!(nuts.position()[..3].iter().all(|&v| v != 0.0));
    /// assert!(nuts.position()[3..].iter().all(|&v| v == 0.0));
    /// assert!(nuts.set_dimension(9).is_err());
    /// ```
    #[cfg(feature = "runtime-dimension")]
    pub fn set_dimension(&mut self, n: usize) -> Result<(), Error> {
        if n == 0 || n > D {
            return Err(Error::invalid("dimension", ">= 1 and at most D"));
        }
        if !zero_from(self.position(), n) {
            return Err(Error::invalid(
                "dimension",
                "at least the position's last nonzero coordinate",
            ));
        }
        self.dimension = n;
        // Scratch and trajectory storage restart from zero, so that nothing
        // left from n on by a larger dimension is ever read.
        crate::in_place::zero(&mut self.samples[(self.current ^ 1) & 1]);
        crate::in_place::zero(&mut self.backward);
        crate::in_place::zero(&mut self.forward);
        crate::in_place::zero(&mut self.end_momentum);
        crate::in_place::zero(&mut self.end_velocity);
        crate::in_place::zero(&mut self.rho);
        crate::in_place::zero(&mut self.normals);
        crate::in_place::zero(&mut self.spans);
        let n = self.dimension();
        let state = self.state_mut();
        state.gradient[n..].iter_mut().for_each(|g| *g = T::ZERO);
        Ok(())
    }

    /// In place, the state of [`Nuts::new`] with `settings` at
    /// `initial_position`, keeping the metric: nothing of the sampler is
    /// copied onto the stack (it can be large; [`crate::in_place`]). On
    /// error (invalid settings, a start that is not finite or where U or ∇U
    /// is not finite) nothing changes.
    pub fn reset<P: Potential<T, D>>(
        &mut self,
        settings: NutsSettings<T>,
        initial_position: &[T; D],
        target: &P,
    ) -> Result<(), Error> {
        settings.validate(MAX_DEPTH)?;
        if !crate::kernels::all_finite(initial_position) {
            return Err(Error::NonFiniteInitialState);
        }
        let n = self.dimension();
        // Built in place (all zero): the dimension is D, as `new` stores it.
        self.dimension = n;
        if !zero_from(initial_position, n) {
            return Err(Error::invalid(
                "initial_position",
                "zero from the sampler's dimension on",
            ));
        }
        // The gradient goes to scratch storage first (`normals` is refilled
        // at every draw), so that a failure leaves the chain as it was.
        let potential = target.potential_and_gradient(initial_position, &mut self.normals);
        if !potential.is_finite() || !crate::kernels::all_finite(&self.normals) {
            return Err(Error::NonFiniteInitialState);
        }
        crate::in_place::zero(&mut self.samples[1]);
        let state = &mut self.samples[0];
        state.position = *initial_position;
        state.gradient = self.normals;
        state.gradient[n..].iter_mut().for_each(|g| *g = T::ZERO);
        state.potential = potential;
        state.energy = T::ZERO;
        self.settings = settings;
        self.current = 0;
        crate::in_place::zero(&mut self.backward);
        crate::in_place::zero(&mut self.forward);
        crate::in_place::zero(&mut self.end_momentum);
        crate::in_place::zero(&mut self.end_velocity);
        crate::in_place::zero(&mut self.rho);
        crate::in_place::zero(&mut self.normals);
        crate::in_place::zero(&mut self.spans);
        for (k, s) in self.slot.iter_mut().enumerate() {
            *s = k;
        }
        Ok(())
    }

    /// The chain's state.
    #[inline]
    fn state(&self) -> &Sample<T, D> {
        &self.samples[self.current & 1]
    }

    #[inline]
    fn state_mut(&mut self) -> &mut Sample<T, D> {
        &mut self.samples[self.current & 1]
    }

    /// Sets a new step size (e.g. from adaptation); on error nothing changes.
    pub fn set_step_size(&mut self, step_size: T) -> Result<(), Error> {
        require_positive(step_size, "step_size")?;
        self.settings.step_size = step_size;
        Ok(())
    }

    /// Replaces the settings; on error the old ones stay.
    pub fn set_settings(&mut self, settings: NutsSettings<T>) -> Result<(), Error> {
        settings.validate(MAX_DEPTH)?;
        self.settings = settings;
        Ok(())
    }

    /// The settings in force.
    pub fn settings(&self) -> &NutsSettings<T> {
        &self.settings
    }

    /// The metric.
    pub fn metric(&self) -> &K {
        &self.metric
    }

    /// The metric, to change it between draws (warm-up).
    pub fn metric_mut(&mut self) -> &mut K {
        &mut self.metric
    }

    /// The state's position and gradient with the metric to change from
    /// them, borrowed together (no copy of the state on the stack).
    pub(crate) fn state_and_metric_mut(&mut self) -> (&[T; D], &[T; D], &mut K) {
        let state = &self.samples[self.current & 1];
        (&state.position, &state.gradient, &mut self.metric)
    }

    /// The current state θ.
    pub fn position(&self) -> &[T; D] {
        &self.state().position
    }

    /// U at the current state.
    pub fn potential(&self) -> T {
        self.state().potential
    }

    /// ∇U at the current state.
    pub fn gradient(&self) -> &[T; D] {
        &self.state().gradient
    }

    /// Moves the chain to `position` (e.g. a warm-up's starting point); on a
    /// non-finite position, U or ∇U returns [`Error::NonFiniteInitialState`]
    /// and the chain stays where it was.
    pub fn set_position<P: Potential<T, D>>(
        &mut self,
        position: &[T; D],
        target: &P,
    ) -> Result<(), Error> {
        if !crate::kernels::all_finite(position) {
            return Err(Error::NonFiniteInitialState);
        }
        let n = self.dimension();
        if !zero_from(position, n) {
            return Err(Error::invalid(
                "position",
                "zero from the sampler's dimension on",
            ));
        }
        let mut gradient = [T::ZERO; D];
        let potential = target.potential_and_gradient(position, &mut gradient);
        if !potential.is_finite() || !crate::kernels::all_finite(&gradient[..n]) {
            return Err(Error::NonFiniteInitialState);
        }
        gradient[n..].iter_mut().for_each(|g| *g = T::ZERO);
        let state = self.state_mut();
        state.position = *position;
        state.gradient = gradient;
        state.potential = potential;
        Ok(())
    }

    /// Stan's heuristic for a first step size (`init_stepsize`): from the
    /// current state, one leapfrog step with a fresh momentum; the step size
    /// doubles while exp(H₀ − H) > 0.8, or halves while it is below, until
    /// that crosses 0.8 (at most 50 trials). Sets the result and returns it
    /// with the gradient evaluations spent; draws D normals per trial. The
    /// state does not move.
    pub fn find_reasonable_step_size<P: Potential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> (T, u32) {
        let mut evaluations = 0u32;
        let threshold = T::from_f64(0.8).ln();
        let mut eps = self.settings.step_size;
        let mut direction = 0i8;
        let n = self.dimension();
        for _ in 0..50 {
            fill_standard_normal_ziggurat(rng, &mut self.normals[..n]);
            // `forward` is free between draws: step() starts it afresh.
            let point = &mut self.forward;
            let state = &self.samples[self.current & 1];
            copy_leading(&mut point.position, &state.position, n);
            copy_leading(&mut point.gradient, &state.gradient, n);
            point.potential = state.potential;
            point.start(&self.normals, &self.metric, n);
            let h0 = point.energy;
            if point.leapfrog(eps, &self.metric, target, n) {
                evaluations += 1;
            }
            let delta = h0 - point.energy;
            // NaN (a divergence) counts as "too large".
            let above = delta > threshold;
            if direction == 0 {
                direction = if above { 1 } else { -1 };
            } else if (direction == 1) != above {
                break;
            }
            let next = if direction == 1 {
                eps * T::TWO
            } else {
                eps * T::HALF
            };
            if !(next.is_finite() && next > T::ZERO) || next > T::from_f64(1e7) {
                break;
            }
            eps = next;
        }
        self.settings.step_size = eps;
        (eps, evaluations)
    }

    /// One NUTS transition (`docs/NUTS.md`). Never fails: a non-finite
    /// energy or position ends the trajectory as a counted divergence, and the
    /// chain keeps a finite state.
    pub fn step<P: Potential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> NutsStats<T> {
        // Two copies of the transition: with n the constant D (every length
        // folds, the code of a const-generic sampler) and with a run-time n.
        let n = self.dimension();
        if n >= D {
            self.step_in(target, rng, D)
        } else {
            self.step_in(target, rng, n)
        }
    }

    /// [`step`](Self::step) moving the first `n` coordinates: the initial
    /// point ([`start_trajectory`](Self::start_trajectory)), then doublings
    /// of the tree, each a subtree ([`build_subtree`](Self::build_subtree))
    /// that may hold the new state and is joined to the trajectory
    /// ([`join_subtree`](Self::join_subtree)), until a subtree is invalid,
    /// the trajectory turns or the depth reaches the maximum.
    #[inline(always)]
    fn step_in<P: Potential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
        n: usize,
    ) -> NutsStats<T> {
        let eps = self.settings.step_size;
        let max_depth = (self.settings.max_tree_depth as usize).min(MAX_DEPTH);

        let h0 = self.start_trajectory(rng, n);
        let mut tally = Tally {
            leapfrog_steps: 0,
            gradient_evaluations: 0,
            acceptance_sum: T::ZERO,
            symmetric_acceptance_sum: T::ZERO,
            divergent: false,
        };
        let mut stats = NutsStats {
            tree_depth: 0,
            leapfrog_steps: 0,
            gradient_evaluations: 0,
            acceptance_statistic: T::ZERO,
            symmetric_acceptance_statistic: T::ZERO,
            energy: h0,
            energy_error: T::ZERO,
            divergent: false,
            reached_max_depth: false,
            moved: false,
            step_size: eps,
        };
        if !h0.is_finite() {
            // Only a metric that overflows can get here: nothing to integrate.
            stats.divergent = true;
            stats.energy_error = T::INFINITY;
            return stats;
        }

        let mut weights = Weights {
            reference: h0,
            tree: T::ONE,
            subtree: T::ZERO,
        };
        let mut depth = 0usize;
        let mut turned = false;
        while depth < max_depth {
            let forward = T::uniform_open_closed(rng) > T::HALF;
            let h = if forward { eps } else { -eps };
            // The subtree grows from the end it extends, in place; the check of
            // the whole trajectory below needs that end's p and v as they were.
            {
                let end = if forward {
                    &self.forward
                } else {
                    &self.backward
                };
                copy_leading(&mut self.end_momentum, &end.momentum, n);
                copy_leading(&mut self.end_velocity, &end.velocity, n);
            }
            let outcome = self.build_subtree(
                depth,
                forward,
                h,
                h0,
                target,
                rng,
                &mut tally,
                &mut weights,
                n,
            );
            let Subtree::Valid = outcome else {
                break;
            };
            depth += 1;
            // u ≤ W_s / W, as u ≤ exp(log W_s − log W) (docs/NUTS.md).
            let u = T::uniform_open_closed(rng);
            if u * weights.tree <= weights.subtree {
                self.current ^= 1;
                stats.moved = true;
            }
            weights.tree += weights.subtree;
            if !self.join_subtree(forward, depth - 1, n) {
                turned = true;
                break;
            }
        }

        self.finish_stats(&mut stats, &tally, depth, max_depth, turned, h0);
        stats
    }

    /// The initial point of a transition: the momentum from `n` standard
    /// normals, then velocity and energy H₀ at the state; both ends of the
    /// trajectory start there and ρ is its momentum. Returns H₀ (also
    /// stored as the state's energy).
    #[inline(always)]
    fn start_trajectory<R: Rng + ?Sized>(&mut self, rng: &mut R, n: usize) -> T {
        fill_standard_normal_ziggurat(rng, &mut self.normals[..n]);
        {
            let start = &mut self.backward;
            let state = &self.samples[self.current & 1];
            copy_leading(&mut start.position, &state.position, n);
            copy_leading(&mut start.gradient, &state.gradient, n);
            start.potential = state.potential;
            start.start(&self.normals, &self.metric, n);
        }
        let h0 = self.backward.energy;
        self.state_mut().energy = h0;
        self.forward.copy_leading(&self.backward, n);
        copy_leading(&mut self.rho, &self.backward.momentum, n);
        h0
    }

    /// Joins the valid subtree just built at `depth` (its span in
    /// `self.spans[self.slot[depth]]`) to the trajectory in trajectory
    /// order, on the side given by `forward`, and adds its ρ; `true` if the
    /// whole trajectory passes the U-turn checks (`self.end_momentum` and
    /// `self.end_velocity` hold the extended end as it was before the
    /// subtree).
    #[inline(always)]
    fn join_subtree(&mut self, forward: bool, depth: usize, n: usize) -> bool {
        let span = &self.spans[self.slot[depth]];
        let valid = if forward {
            merge_is_valid(
                &self.rho,
                &self.end_momentum,
                &self.backward.velocity,
                &self.end_velocity,
                &span.rho,
                &span.momentum_begin,
                &span.velocity_begin,
                &span.velocity_end,
                n,
            )
        } else {
            merge_is_valid(
                &span.rho,
                &span.momentum_begin,
                &span.velocity_end,
                &span.velocity_begin,
                &self.rho,
                &self.end_momentum,
                &self.end_velocity,
                &self.forward.velocity,
                n,
            )
        };
        at_length!(n, D, |n| {
            for i in 0..n {
                self.rho[i] += span.rho[i];
            }
        });
        valid
    }

    /// Fills `stats` at the end of a transition from the `tally` of its
    /// leaves, the `depth` reached (of at most `max_depth`), whether the
    /// trajectory `turned`, and H₀ `h0`.
    #[inline(always)]
    fn finish_stats(
        &self,
        stats: &mut NutsStats<T>,
        tally: &Tally<T>,
        depth: usize,
        max_depth: usize,
        turned: bool,
        h0: T,
    ) {
        stats.tree_depth = depth as u32;
        stats.leapfrog_steps = tally.leapfrog_steps;
        stats.gradient_evaluations = tally.gradient_evaluations;
        stats.divergent = tally.divergent;
        if tally.leapfrog_steps > 0 {
            let n = T::from_u64(tally.leapfrog_steps as u64);
            stats.acceptance_statistic = tally.acceptance_sum / n;
            stats.symmetric_acceptance_statistic = tally.symmetric_acceptance_sum / n;
        }
        stats.energy = self.state().energy;
        stats.energy_error = self.state().energy - h0;
        stats.reached_max_depth = depth == max_depth && !turned && !tally.divergent;
    }

    /// Builds a subtree of 2^depth leaves from the end `self.forward` (or
    /// `self.backward`), advancing it in place with signed step `h`; its
    /// candidate goes to the sample that is not the state, its span to
    /// `self.spans[self.slot[depth]]`.
    /// Only the first `n` coordinates move (inlined into each copy of
    /// [`step_in`](Self::step_in), so that n = D folds).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn build_subtree<P: Potential<T, D>, R: Rng + ?Sized>(
        &mut self,
        depth: usize,
        forward: bool,
        h: T,
        h0: T,
        target: &P,
        rng: &mut R,
        tally: &mut Tally<T>,
        weights: &mut Weights<T>,
        n: usize,
    ) -> Subtree {
        let Nuts {
            settings,
            metric,
            forward: forward_end,
            backward: backward_end,
            samples,
            current,
            spans,
            slot,
            ..
        } = self;
        let candidate = &mut samples[(*current ^ 1) & 1];
        let point = if forward { forward_end } else { backward_end };
        let leaves = 1usize << depth;
        let threshold = settings.max_energy_error;
        weights.subtree = T::ZERO;
        for leaf in 0..leaves {
            let finite_position = point.leapfrog(h, metric, target, n);
            tally.leapfrog_steps += 1;
            if finite_position {
                tally.gradient_evaluations += 1;
            }
            let energy_error = point.energy - h0;
            if !(energy_error.is_finite() && energy_error <= threshold) {
                if energy_error.is_finite() {
                    tally.acceptance_sum += (-energy_error).exp();
                }
                tally.divergent = true;
                return Subtree::Invalid;
            }
            let ratio = (-energy_error).exp();
            let accept = if energy_error <= T::ZERO {
                T::ONE
            } else {
                ratio
            };
            tally.acceptance_sum += accept;
            tally.symmetric_acceptance_sum += T::TWO * accept / (T::ONE + ratio);
            // The leaf becomes the candidate with probability w / W_s (as
            // u ≤ exp(−ΔH − log W_s); always for the first leaf).
            let weight = weights.leaf(h0, point.energy, ratio);
            weights.subtree += weight;
            let u = T::uniform_open_closed(rng);
            if u * weights.subtree <= weight {
                candidate.take(point, n);
            }

            // Merge completed trees like a binary counter (docs/NUTS.md 2.3).
            // The slot at index `depth` holds the tree being merged upwards. An
            // even leaf keeps only its p and v (the begin of a pair); the odd
            // leaf after it merges with it at once, straight from the moving
            // point, and completes the pair's span.
            let mut level = 0;
            if depth == 0 {
                if let Some(span) = spans.get_mut(slot[0]) {
                    span.set_leaf(point, n);
                }
            } else if leaf & 1 == 0 {
                if let Some(span) = spans.get_mut(slot[depth]) {
                    copy_leading(&mut span.momentum_begin, &point.momentum, n);
                    copy_leading(&mut span.velocity_begin, &point.velocity, n);
                }
            } else {
                let Some(pair) = spans.get_mut(slot[0]) else {
                    return Subtree::Invalid;
                };
                if !leaf_pair_is_valid(
                    &pair.momentum_begin,
                    &pair.velocity_begin,
                    &point.momentum,
                    &point.velocity,
                    &mut pair.rho,
                    n,
                ) {
                    return Subtree::Invalid;
                }
                copy_leading(&mut pair.momentum_end, &point.momentum, n);
                copy_leading(&mut pair.velocity_end, &point.velocity, n);
                slot.swap(0, depth);
                level = 1;
            }
            while (leaf >> level) & 1 == 1 {
                let left = slot[level];
                let Some((left_span, right_span)) = two_mut(spans, left, slot[depth]) else {
                    return Subtree::Invalid;
                };
                if !merge_spans_valid(left_span, right_span, n) {
                    return Subtree::Invalid;
                }
                left_span.absorb(right_span, n);
                slot.swap(level, depth);
                level += 1;
            }
            if leaf + 1 < leaves {
                slot.swap(level, depth);
            }
        }
        Subtree::Valid
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod layout_tests;

impl<T: Real, const D: usize, K: Metric<T, D>, const MAX_DEPTH: usize> Sampler<T, D>
    for Nuts<T, D, K, MAX_DEPTH>
{
    type Settings = NutsSettings<T>;
    fn settings(&self) -> &NutsSettings<T> {
        Nuts::settings(self)
    }
    fn set_step_size(&mut self, step_size: T) -> Result<(), Error> {
        Nuts::set_step_size(self, step_size)
    }
    fn position(&self) -> &[T; D] {
        Nuts::position(self)
    }
    fn potential(&self) -> Option<T> {
        Some(Nuts::potential(self))
    }
    fn dimension(&self) -> usize {
        Nuts::dimension(self)
    }
}

impl<T: Real, const D: usize, K: Metric<T, D>, const MAX_DEPTH: usize, P: Potential<T, D>>
    Step<T, D, P> for Nuts<T, D, K, MAX_DEPTH>
{
    type Stats = NutsStats<T>;
    fn step<R: Rng + ?Sized>(&mut self, target: &P, rng: &mut R) -> Result<NutsStats<T>, Error> {
        Ok(Nuts::step(self, target, rng))
    }
}
