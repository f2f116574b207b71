//! [`Warmup`]: the step-size warm-up of any [`Sampler`] whose step size is
//! free: dual averaging for the first n draws, then ε̄ for good.

use rand_core::Rng;

use super::dual_averaging::{DualAveraging, DualAveragingSettings, jittered_step_size};
use crate::error::Error;
use crate::real::Real;
use crate::samplers::Sampler;

/// Warm-up driver: dual averaging for the first n draws, then a fixed step size.
///
/// ```
/// use qnmc::adaptation::{DualAveragingSettings, Warmup};
/// use qnmc::{Hmc, HmcSettings, Potential};
/// use rand_core::SeedableRng;
/// # struct Iso;
/// # impl Potential<f64, 2> for Iso {
/// #     fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
/// #         *g = *x;
/// #         0.5 * (x[0] * x[0] + x[1] * x[1])
/// #     }
/// # }
/// let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(1);
/// let mut hmc = Hmc::new(HmcSettings::new(1.0, 5), [0.0; 2], &Iso).unwrap();
/// let mut warmup = Warmup::new(DualAveragingSettings::stan(1.0), 500, 0.0).unwrap();
/// warmup.start(&mut hmc, &mut rng).unwrap();
/// for _ in 0..1500 {
///     let stats = hmc.step(&Iso, &mut rng);
///     let kept = !warmup.is_adapting();
///     warmup.after_draw(&mut hmc, &stats, &mut rng).unwrap();
///     if kept { /* use hmc.position() */ }
/// }
/// assert!(!warmup.is_adapting());
/// ```
#[derive(Debug, Clone)]
pub struct Warmup<T> {
    dual: DualAveraging<T>,
    warmup_draws: u64,
    draws: u64,
    jitter: T,
    fixed: T,
    restart_draw: u64,
}

crate::in_place::zero_valid!(impl[T: Real] Warmup<T> { dual, warmup_draws, draws, jitter, fixed, restart_draw });

impl<T: Real> Warmup<T> {
    /// Dual averaging with `settings` for `warmup_draws` draws, then ε̄; every
    /// step size set is jittered by a factor uniform on (1 − j, 1 + j],
    /// `jitter` = j ∈ [0, 1).
    pub fn new(
        settings: DualAveragingSettings<T>,
        warmup_draws: u64,
        jitter: T,
    ) -> Result<Self, Error> {
        let dual = DualAveraging::new(settings)?;
        if !(jitter.is_finite() && jitter >= T::ZERO && jitter < T::ONE) {
            return Err(Error::invalid("jitter", "in [0, 1)"));
        }
        Ok(Warmup {
            dual,
            warmup_draws,
            draws: 0,
            jitter,
            fixed: settings.initial_step_size,
            restart_draw: 0,
        })
    }

    /// Restarts the dual averaging after warm-up draw `draw` (0 < `draw` <
    /// warm-up length; other values: no restart) from the averaged ε̄ reached
    /// so far, with μ = ln(10 ε̄) — Stan's window restart. Use it when the
    /// kernel changes during warm-up, e.g. a QNHMC memory frozen with
    /// `MemoryUpdate::FreezeAfter(draw)`: the final ε̄ then only averages
    /// draws of the frozen kernel.
    pub fn with_restart(mut self, draw: u64) -> Self {
        self.restart_draw = draw;
        self
    }

    /// Sets the sampler's step size to ε₀ (jittered) before the first draw.
    pub fn start<const D: usize, S: Sampler<T, D> + ?Sized, R: Rng + ?Sized>(
        &mut self,
        sampler: &mut S,
        rng: &mut R,
    ) -> Result<T, Error> {
        let eps = if self.warmup_draws == 0 || self.draws < self.warmup_draws {
            self.dual.step_size()
        } else {
            self.fixed
        };
        let eps = jittered_step_size(eps, self.jitter, rng);
        sampler.set_step_size(eps)?;
        Ok(eps)
    }

    /// Call once after every draw with that draw's statistics: adapts during
    /// warm-up, fixes ε̄ after the last warm-up draw, and sets the step size of
    /// the next draw (returned). On error (a step size the sampler refuses) the
    /// sampler keeps its old step size.
    pub fn after_draw<const D: usize, S: Sampler<T, D> + ?Sized, R: Rng + ?Sized>(
        &mut self,
        sampler: &mut S,
        stats: &crate::StepStats<T>,
        rng: &mut R,
    ) -> Result<T, Error> {
        let eps = if self.draws < self.warmup_draws {
            let mut next = self.dual.update(stats.acceptance_probability);
            self.draws += 1;
            if self.draws == self.restart_draw && self.draws < self.warmup_draws {
                next = self.dual.final_step_size();
                self.dual.restart(next)?;
            }
            if self.draws == self.warmup_draws {
                self.fixed = self.dual.final_step_size();
                self.fixed
            } else {
                next
            }
        } else {
            self.draws = self.draws.saturating_add(1);
            self.fixed
        };
        let eps = jittered_step_size(eps, self.jitter, rng);
        sampler.set_step_size(eps)?;
        Ok(eps)
    }

    /// `true` while the next draw is a warm-up draw (to be discarded).
    pub fn is_adapting(&self) -> bool {
        self.draws < self.warmup_draws
    }

    /// Draws seen so far.
    pub fn draws(&self) -> u64 {
        self.draws
    }

    /// The step size fixed after warm-up (ε₀ until warm-up ends).
    pub fn final_step_size(&self) -> T {
        self.fixed
    }

    /// The dual-averaging state.
    pub fn dual_averaging(&self) -> &DualAveraging<T> {
        &self.dual
    }
}
