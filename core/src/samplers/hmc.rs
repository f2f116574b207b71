//! Hamiltonian Monte Carlo (Neal 2011) over any [`Metric`]: the baseline
//! every quasi-Newton sampler is measured against.

use rand_core::Rng;

use super::sampler::{Sampler, Step};

use super::in_place_constructors::evaluate_start;
use super::metropolis::metropolis;
use crate::error::{Error, require_positive};
use crate::integrator::PhasePoint;
use crate::kernels::all_finite;
use crate::metric::{IdentityMetric, Metric};
use crate::random::fill_standard_normal;
use crate::real::Real;
use crate::stats::StepStats;
use crate::target::Potential;

/// Settings of [`Hmc`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HmcSettings<T> {
    /// Leapfrog step size ε > 0.
    pub step_size: T,
    /// Leapfrog steps per proposal, L ≥ 1.
    pub leapfrog_steps: u32,
}

crate::in_place::zero_valid!(impl[T: Real] HmcSettings<T> { step_size, leapfrog_steps });

impl<T: Real> HmcSettings<T> {
    /// Step size ε and L leapfrog steps.
    pub fn new(step_size: T, leapfrog_steps: u32) -> Self {
        HmcSettings {
            step_size,
            leapfrog_steps,
        }
    }

    /// Checks every setting.
    pub fn validate(&self) -> Result<(), Error> {
        require_positive(self.step_size, "step_size")?;
        if self.leapfrog_steps == 0 {
            return Err(Error::invalid("leapfrog_steps", ">= 1"));
        }
        Ok(())
    }
}

/// Hamiltonian Monte Carlo: L leapfrog steps of the shared integrator with
/// kinetic energy ½ pᵀM⁻¹p for the metric `K` (M = I by default; a
/// [`DiagonalMetric`](crate::metric::DiagonalMetric) of the posterior
/// variances is the usual choice), then one Metropolis test per draw. An
/// exact (π-invariant) sampler.
///
/// Random numbers per draw: D standard normals
/// ([`fill_standard_normal`](crate::random::fill_standard_normal), the
/// momentum p = M^{1/2} z), then one uniform (the Metropolis test, drawn even
/// for a divergent trajectory).
///
/// ```
/// use qnmc::metric::DiagonalMetric;
/// use qnmc::{Hmc, HmcSettings, Potential};
/// use rand_core::SeedableRng;
///
/// /// Independent N(0, 1) and N(0, 100).
/// struct Scaled;
/// impl Potential<f64, 2> for Scaled {
///     fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
///         *g = [x[0], x[1] / 100.0];
///         0.5 * (x[0] * x[0] + x[1] * x[1] / 100.0)
///     }
/// }
///
/// let metric = DiagonalMetric::new(&[1.0, 100.0]).unwrap();
/// let settings = HmcSettings::new(0.9, 3);
/// let mut hmc = Hmc::with_metric(settings, metric, [0.0; 2], &Scaled).unwrap();
/// let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(5);
/// let mut second_moment = 0.0;
/// for _ in 0..4000 {
///     hmc.step(&Scaled, &mut rng);
///     second_moment += hmc.position()[1] * hmc.position()[1] / 4000.0;
/// }
/// assert!((second_moment - 100.0).abs() < 12.0, "{second_moment}");
/// ```
#[derive(Debug, Clone)]
pub struct Hmc<T, const D: usize, K = IdentityMetric> {
    settings: HmcSettings<T>,
    metric: K,
    position: [T; D],
    potential: T,
    gradient: [T; D],
    /// The trajectory.
    point: PhasePoint<T, D>,
    /// The standard normals of the momentum.
    normals: [T; D],
    /// The coordinates that move, n ≤ D ([`Hmc::set_dimension`]); 0 (the
    /// all-zero value of [`crate::in_place`]) is D.
    dimension: usize,
    /// A draw was taken.
    started: bool,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize, K: crate::in_place::ZeroValid] Hmc<T, D, K> {
    settings, metric, position, potential, gradient, point, normals, dimension, started
});

impl<T: Real, const D: usize> Hmc<T, D, IdentityMetric> {
    /// HMC with M = I: validates `settings` and evaluates the target at
    /// `initial_position`.
    pub fn new<P: Potential<T, D>>(
        settings: HmcSettings<T>,
        initial_position: [T; D],
        target: &P,
    ) -> Result<Self, Error> {
        Self::with_metric(settings, IdentityMetric, initial_position, target)
    }

    /// The checks of [`initialize_zeroed`](Self::initialize_zeroed),
    /// changing nothing observable: the target is evaluated into the
    /// trajectory's scratch point.
    fn check_reset<P: Potential<T, D>>(
        &mut self,
        settings: &HmcSettings<T>,
        initial_position: &[T; D],
        target: &P,
    ) -> Result<(), Error> {
        settings.validate()?;
        let point = &mut self.point;
        evaluate_start(
            initial_position,
            target,
            &mut point.position,
            &mut point.gradient,
        )?;
        Ok(())
    }

    /// The state of [`Hmc::new`] on an all-zero sampler.
    fn initialize_zeroed<P: Potential<T, D>>(
        &mut self,
        settings: HmcSettings<T>,
        initial_position: &[T; D],
        target: &P,
    ) -> Result<(), Error> {
        settings.validate()?;
        let potential = evaluate_start(
            initial_position,
            target,
            &mut self.position,
            &mut self.gradient,
        )?;
        self.settings = settings;
        self.potential = potential;
        self.dimension = D;
        Ok(())
    }
}

impl<T: Real, const D: usize, K: Metric<T, D>> Hmc<T, D, K> {
    /// HMC with the metric `metric`: validates `settings` and evaluates the
    /// target at `initial_position`.
    pub fn with_metric<P: Potential<T, D>>(
        settings: HmcSettings<T>,
        metric: K,
        initial_position: [T; D],
        target: &P,
    ) -> Result<Self, Error> {
        settings.validate()?;
        if !all_finite(&initial_position) {
            return Err(Error::NonFiniteInitialState);
        }
        let mut gradient = [T::ZERO; D];
        let potential = target.potential_and_gradient(&initial_position, &mut gradient);
        if !potential.is_finite() || !all_finite(&gradient) {
            return Err(Error::NonFiniteInitialState);
        }
        Ok(Hmc {
            settings,
            metric,
            position: initial_position,
            potential,
            gradient,
            point: PhasePoint::zero(),
            normals: [T::ZERO; D],
            dimension: D,
            started: false,
        })
    }

    /// n: the sampler moves the first n coordinates and keeps the rest at
    /// zero (D unless `set_dimension` said otherwise).
    #[inline]
    pub fn dimension(&self) -> usize {
        super::dimension::in_use::<D>(self.dimension)
    }

    /// Moves only the first `n` coordinates (1 ≤ n ≤ D; feature
    /// `runtime-dimension`; before the first draw): a model of run-time
    /// dimension n in storage for D. Momenta are n normals and every pass
    /// of the leapfrog and the metric stops at n, so a draw costs what
    /// dimension n costs and the chain is bit for bit that of an
    /// `Hmc<T, n, K>` on the same coordinates (with a metric that maps
    /// vectors zero from n on to such vectors, as every metric of
    /// [`crate::metric`] built from them does). The target is evaluated at
    /// positions zero from n on; what it writes to the gradient there is
    /// ignored. The position must be zero from n on; on error nothing
    /// changes.
    #[cfg(feature = "runtime-dimension")]
    pub fn set_dimension(&mut self, n: usize) -> Result<(), Error> {
        super::dimension::check_new(n, self.started, &self.position)?;
        self.dimension = n;
        self.gradient[n..].iter_mut().for_each(|g| *g = T::ZERO);
        Ok(())
    }

    /// Replaces the settings (e.g. a step size from adaptation); on error the
    /// old settings stay.
    pub fn set_settings(&mut self, settings: HmcSettings<T>) -> Result<(), Error> {
        settings.validate()?;
        self.settings = settings;
        Ok(())
    }

    /// Sets a new step size (e.g. from adaptation); on error nothing changes.
    pub fn set_step_size(&mut self, step_size: T) -> Result<(), Error> {
        require_positive(step_size, "step_size")?;
        self.settings.step_size = step_size;
        Ok(())
    }

    /// The settings in force.
    pub fn settings(&self) -> &HmcSettings<T> {
        &self.settings
    }

    /// The metric in force.
    pub fn metric(&self) -> &K {
        &self.metric
    }

    /// The metric, to change between draws (e.g. by warm-up); the state
    /// stays valid whatever it becomes, as every metric is positive definite.
    pub fn metric_mut(&mut self) -> &mut K {
        &mut self.metric
    }

    /// The current state θ.
    pub fn position(&self) -> &[T; D] {
        &self.position
    }

    /// U at the current state.
    pub fn potential(&self) -> T {
        self.potential
    }

    /// ∇U at the current state.
    pub fn gradient(&self) -> &[T; D] {
        &self.gradient
    }

    /// One draw: momentum, L leapfrog steps, Metropolis test. A non-finite
    /// potential, gradient or position (an overflowing drift, which is not
    /// evaluated) ends the trajectory as a rejected divergence.
    pub fn step<P: Potential<T, D>, R: Rng + ?Sized>(
        &mut self,
        target: &P,
        rng: &mut R,
    ) -> StepStats<T> {
        let eps = self.settings.step_size;
        let n = self.dimension();
        let mut stats = StepStats::new(eps);
        self.started = true;
        let point = &mut self.point;
        point.position[..n].copy_from_slice(&self.position[..n]);
        point.gradient[..n].copy_from_slice(&self.gradient[..n]);
        point.potential = self.potential;
        fill_standard_normal(rng, &mut self.normals[..n]);
        point.start(&self.normals, &self.metric, n);
        let h0 = point.energy;
        stats.gradient_evaluations =
            point.leapfrog_steps(eps, self.settings.leapfrog_steps, &self.metric, target, n);
        let h1 = if point.energy.is_finite() {
            point.energy
        } else {
            T::INFINITY
        };
        let decision = metropolis(h0, h1, rng);
        stats.accepted = decision.accepted;
        stats.acceptance_probability = decision.probability;
        stats.energy_error = decision.energy_error;
        stats.divergent = decision.divergent;
        stats.energy = Some(if decision.accepted { h1 } else { h0 });
        if decision.accepted {
            self.position[..n].copy_from_slice(&point.position[..n]);
            self.gradient[..n].copy_from_slice(&point.gradient[..n]);
            self.potential = point.potential;
        }
        stats
    }
}

super::in_place_constructors::in_place_constructors!(
    impl[T: Real, const D: usize] Hmc<T, D, IdentityMetric> {
        settings: HmcSettings<T>, target: target: P
    }
);

impl<T: Real, const D: usize, K: Metric<T, D>> Sampler<T, D> for Hmc<T, D, K> {
    type Settings = HmcSettings<T>;
    fn settings(&self) -> &HmcSettings<T> {
        Hmc::settings(self)
    }
    fn set_step_size(&mut self, step_size: T) -> Result<(), Error> {
        Hmc::set_step_size(self, step_size)
    }
    fn position(&self) -> &[T; D] {
        Hmc::position(self)
    }
    fn potential(&self) -> Option<T> {
        Some(Hmc::potential(self))
    }
    fn dimension(&self) -> usize {
        Hmc::dimension(self)
    }
}

impl<T: Real, const D: usize, K: Metric<T, D>, P: Potential<T, D>> Step<T, D, P> for Hmc<T, D, K> {
    type Stats = StepStats<T>;
    fn step<R: Rng + ?Sized>(&mut self, target: &P, rng: &mut R) -> Result<StepStats<T>, Error> {
        Ok(Hmc::step(self, target, rng))
    }
}
