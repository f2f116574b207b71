//! What the AMAGOLD reproductions (`amagold-fig1`, `amagold-fig2`,
//! `amagold-fig4`) share: the paper's default settings (§6: β = 0.25, T = 10,
//! reversible AMAGOLD), one outer step of each compared sampler (HMC, L2MC,
//! SGHMC, AMAGOLD) behind one type, and the mean ± sd of a few repeats.
//!
//! **One sample of every sampler costs T gradients.** AMAGOLD and L2MC run T
//! inner steps per Metropolis test; HMC runs L = T leapfrog steps per test;
//! SGHMC (the core [`Sghmc`], no test) has its momentum resampled and then
//! runs T steps, and the position after them is its sample. So "iterations"
//! count the same number of gradient evaluations for all four.

use qnmc::random::fill_standard_normal;
use qnmc::{
    Amagold, AmagoldSettings, Hmc, HmcSettings, MinibatchPotential, Potential, Sghmc,
    SghmcSettings, SghmcUpdate,
};
use rand_core::Rng;

/// Friction β (paper §6 default).
pub const FRICTION: f64 = 0.25;
/// Inner steps T per Metropolis test (paper §6 default).
pub const INNER_STEPS: u32 = 10;

/// The samplers the AMAGOLD paper compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Full-gradient HMC, L = T leapfrog steps (core [`Hmc`], M = I).
    Hmc,
    /// L2MC: AMAGOLD on full gradients (core [`Amagold::step_full_batch`]).
    L2mc,
    /// SGHMC (core [`Sghmc`]) in the given order, friction C = 2β, momentum
    /// resampled every T steps; no Metropolis test.
    Sghmc(SghmcUpdate),
    /// SGHMC (core [`Sghmc`], position first, C = 2β) whose momentum is never
    /// resampled: the friction alone balances the injected and the minibatch
    /// noise (Chen et al.'s SGHMC; the paper's Algorithm 1 makes resampling
    /// optional). A sample is T steps, as for the others.
    SghmcPersistent,
    /// Reversible AMAGOLD (core [`Amagold::step`]) on stochastic gradients.
    Amagold,
}

impl Kind {
    /// The short name printed in tables and legends.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Hmc => "HMC",
            Kind::L2mc => "L2MC",
            Kind::Sghmc(SghmcUpdate::PositionFirst) => "SGHMC",
            Kind::Sghmc(SghmcUpdate::RecipeEuler) => "SGHMC (recipe Euler)",
            Kind::SghmcPersistent => "SGHMC (no resampling)",
            Kind::Amagold => "AMAGOLD",
        }
    }

    /// Whether the sampler has a Metropolis test (its acceptance is < 1).
    pub fn has_test(self) -> bool {
        !matches!(self, Kind::Sghmc(_) | Kind::SghmcPersistent)
    }
}

/// A running chain of one [`Kind`] in dimension D.
#[derive(Debug, Clone)]
pub enum Chain<const D: usize> {
    /// See [`Kind::Hmc`].
    Hmc(Hmc<f64, D>),
    /// See [`Kind::L2mc`].
    L2mc(Amagold<f64, D>),
    /// See [`Kind::Sghmc`].
    Sghmc(Sghmc<f64, D>),
    /// See [`Kind::SghmcPersistent`].
    SghmcPersistent(Sghmc<f64, D>),
    /// See [`Kind::Amagold`].
    Amagold(Amagold<f64, D>),
}

/// What one sample cost and whether its proposal was accepted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Advance {
    /// The Metropolis test accepted (always `true` for SGHMC).
    pub accepted: bool,
    /// SGHMC steps refused for a non-finite gradient or proposal (the state
    /// stays where it was); 0 for the samplers with a test, whose divergences
    /// are rejections.
    pub failures: usize,
}

/// SGHMC settings of the AMAGOLD paper's Algorithm 1 in the recipe's
/// parametrisation: friction C = 2β (so εC·r = 2εβ·r and the injected noise is
/// N(0, 4εβ)), unit mass.
pub fn sghmc_settings(step_size: f64, update: SghmcUpdate) -> SghmcSettings<f64> {
    SghmcSettings {
        update,
        ..SghmcSettings::new(step_size, 2.0 * FRICTION)
    }
}

/// One SGHMC sample: r ~ N(0, I) (D normals from `rng`), then T steps. Returns
/// the steps refused for a non-finite gradient or proposal.
pub fn sghmc_sample<P, R, const D: usize>(
    sampler: &mut Sghmc<f64, D>,
    target: &P,
    rng: &mut R,
) -> usize
where
    P: MinibatchPotential<f64, D>,
    R: Rng + ?Sized,
{
    let mut r = [0.0; D];
    fill_standard_normal(rng, &mut r);
    let _ = sampler.set_momentum(r);
    let mut failures = 0;
    for _ in 0..INNER_STEPS {
        failures += sampler.step(target, rng).is_err() as usize;
    }
    failures
}

impl<const D: usize> Chain<D> {
    /// A chain of `kind` at step size ε from `start` with the paper's β and T.
    pub fn new<P: Potential<f64, D>>(
        kind: Kind,
        step_size: f64,
        start: [f64; D],
        target: &P,
    ) -> Self {
        let amagold = || {
            Amagold::new(
                AmagoldSettings::new(step_size, INNER_STEPS, FRICTION),
                start,
                target,
            )
        };
        match kind {
            Kind::Hmc => Chain::Hmc(
                Hmc::new(HmcSettings::new(step_size, INNER_STEPS), start, target)
                    .expect("valid settings and start"),
            ),
            Kind::L2mc => Chain::L2mc(amagold().expect("valid settings and start")),
            Kind::Amagold => Chain::Amagold(amagold().expect("valid settings and start")),
            Kind::Sghmc(update) => Chain::Sghmc(
                Sghmc::new(sghmc_settings(step_size, update), start)
                    .expect("valid settings and start"),
            ),
            Kind::SghmcPersistent => Chain::SghmcPersistent(
                Sghmc::new(sghmc_settings(step_size, SghmcUpdate::PositionFirst), start)
                    .expect("valid settings and start"),
            ),
        }
    }

    /// One sample (T gradient evaluations, see the module documentation).
    pub fn advance<P, R>(&mut self, target: &P, rng: &mut R) -> Advance
    where
        P: Potential<f64, D> + MinibatchPotential<f64, D>,
        R: Rng + ?Sized,
    {
        let tested = |accepted| Advance {
            accepted,
            failures: 0,
        };
        match self {
            Chain::Hmc(s) => tested(s.step(target, rng).accepted),
            Chain::L2mc(s) => tested(s.step_full_batch(target, rng).accepted),
            Chain::Amagold(s) => tested(s.step(target, rng).accepted),
            Chain::Sghmc(s) => Advance {
                accepted: true,
                failures: sghmc_sample(s, target, rng),
            },
            Chain::SghmcPersistent(s) => Advance {
                accepted: true,
                failures: (0..INNER_STEPS)
                    .map(|_| s.step(target, rng).is_err() as usize)
                    .sum(),
            },
        }
    }

    /// The current position.
    pub fn position(&self) -> &[f64; D] {
        match self {
            Chain::Hmc(s) => s.position(),
            Chain::L2mc(s) | Chain::Amagold(s) => s.position(),
            Chain::Sghmc(s) | Chain::SghmcPersistent(s) => s.position(),
        }
    }
}

/// Mean and standard deviation (n − 1) of a few numbers (sd 0 for one).
pub fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    if v.len() < 2 {
        return (m, 0.0);
    }
    (
        m,
        (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_sd_of_known_values() {
        assert_eq!(mean_sd(&[1.0, 3.0]), (2.0, 2f64.sqrt()));
        assert_eq!(mean_sd(&[5.0]), (5.0, 0.0));
    }
}
