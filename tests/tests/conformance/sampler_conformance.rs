//! What every sampler promises, checked through the [`Sampler`] and [`Step`]
//! traits alone, so that one macro line covers a sampler (a new sampler adds
//! one `conformance!` line here):
//!
//! - **bad step sizes are refused and change nothing**: 0, −0, −1, NaN, +∞
//!   and −∞ are each `Error::InvalidSetting` naming `step_size`, the settings
//!   stay equal to those of a twin that was never offered them, and the chain
//!   afterwards is bit for bit the twin's chain;
//! - **a non-finite target leaves a usable state**: for each of NaN, +∞ and
//!   −∞, five transitions on a target whose U and every entry of ∇U are that
//!   value everywhere are refused (`Err`) or rejected (not accepted), the
//!   state stays where it was, and the chain then moves on the real target
//!   with finite states;
//! - **the reported potential is the target's** at the reported position,
//!   where the sampler tracks it;
//! - **no heap**: 200 transitions allocate nothing (the counting allocator
//!   of `qnmc_tests::heap`, per thread).

use std::fmt::Debug;

use qnmc::metric::{IdentityMetric, LbfgsMetric};
use qnmc::{
    Amagold, AmagoldSettings, Error, Hamcmc, HamcmcSettings, Hmc, HmcBfgs, HmcBfgsSettings,
    HmcSettings, MhBfgs, MhBfgsProposal, MhBfgsSettings, MinibatchPotential, Nuts, NutsSettings,
    Potential, Psgld, PsgldSettings, Qnhmc, QnhmcSettings, Sghmc, SghmcSettings, Sgld,
    SgldSettings, Sgnht, SgnhtSettings, Sgrhmc, SgrhmcSettings, Sgrld, SgrldSettings, Step,
    StepSizeSchedule, StepStats,
};
use qnmc_tests::heap::count_heap;
use qnmc_tests::recipe::BumpMetric;
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

/// A correlated Gaussian in two dimensions (sds 1 and 2, correlation 0.5),
/// as a full-data and as a (one-batch) minibatch target.
struct Gaussian;

impl Gaussian {
    const PRECISION: [[f64; 2]; 2] = [[4.0 / 3.0, -1.0 / 3.0], [-1.0 / 3.0, 1.0 / 3.0]];
}

impl Potential<f64, 2> for Gaussian {
    fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
        let p = Self::PRECISION;
        g[0] = p[0][0] * x[0] + p[0][1] * x[1];
        g[1] = p[1][0] * x[0] + p[1][1] * x[1];
        0.5 * (x[0] * g[0] + x[1] * g[1])
    }
}

impl MinibatchPotential<f64, 2> for Gaussian {
    type Batch = ();
    fn draw_batch<R: Rng + ?Sized>(&self, _: &mut R) {}
    fn minibatch_gradient(&self, _: &(), x: &[f64; 2], g: &mut [f64; 2]) {
        let _ = self.potential_and_gradient(x, g);
    }
}

/// U and every entry of ∇U are the non-finite value `self.0` everywhere
/// (one type for the three values, so the check is compiled once per sampler).
struct Nowhere(f64);

impl Potential<f64, 2> for Nowhere {
    fn potential_and_gradient(&self, _: &[f64; 2], g: &mut [f64; 2]) -> f64 {
        *g = [self.0; 2];
        self.0
    }
}

impl MinibatchPotential<f64, 2> for Nowhere {
    type Batch = ();
    fn draw_batch<R: Rng + ?Sized>(&self, _: &mut R) {}
    fn minibatch_gradient(&self, _: &(), _: &[f64; 2], g: &mut [f64; 2]) {
        *g = [self.0; 2];
    }
}

/// Every step size that is not finite and > 0.
const BAD_STEP_SIZES: [f64; 6] = [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];

/// The non-finite values of U and ∇U the samplers must survive.
const NON_FINITE: [f64; 3] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY];

const START: [f64; 2] = [0.5, -0.3];

/// The ensembles' walkers: spread around the mode.
const WALKERS: [[f64; 2]; 4] = [[0.5, -0.3], [-0.4, 1.0], [1.2, 0.8], [-0.9, -1.5]];

/// Runs `draws` transitions from `seed` and returns the positions.
fn chain<S: Step<f64, 2, P>, P>(
    sampler: &mut S,
    target: &P,
    seed: u64,
    draws: usize,
) -> Vec<[f64; 2]> {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    (0..draws)
        .map(|_| {
            let _ = sampler.step(target, &mut rng);
            *sampler.position()
        })
        .collect()
}

fn bits(draws: &[[f64; 2]]) -> Vec<[u64; 2]> {
    draws
        .iter()
        .map(|d| [d[0].to_bits(), d[1].to_bits()])
        .collect()
}

fn refuses_bad_step_sizes<S: Step<f64, 2, Gaussian>>(make: impl Fn() -> S)
where
    S::Settings: PartialEq + Debug,
{
    let (mut offered, mut twin) = (make(), make());
    for bad in BAD_STEP_SIZES {
        match offered.set_step_size(bad) {
            Err(Error::InvalidSetting {
                setting: "step_size",
                ..
            }) => {}
            other => panic!("step size {bad}: {other:?}, not InvalidSetting(step_size)"),
        }
        assert_eq!(
            offered.settings(),
            twin.settings(),
            "the refused step size {bad} changed the settings"
        );
    }
    assert_eq!(
        bits(&chain(&mut offered, &Gaussian, 3, 50)),
        bits(&chain(&mut twin, &Gaussian, 3, 50)),
        "a refused step size changed the chain"
    );
}

fn survives_a_non_finite_target<S: Step<f64, 2, Gaussian> + Step<f64, 2, Nowhere>>(
    make: impl Fn() -> S,
) {
    for value in NON_FINITE {
        let mut sampler = make();
        let mut rng = XorShiftRng::seed_from_u64(5);
        let start = *sampler.position();
        let nowhere = Nowhere(value);
        for draw in 0..5 {
            match Step::<f64, 2, Nowhere>::step(&mut sampler, &nowhere, &mut rng) {
                Err(_) => {}
                Ok(stats) => {
                    let stats: StepStats<f64> = stats.into();
                    assert!(
                        !stats.accepted,
                        "U = ∇U = {value}, draw {draw}: the proposal was accepted"
                    );
                }
            }
            assert_eq!(
                bits(&[*sampler.position()]),
                bits(&[start]),
                "U = ∇U = {value}, draw {draw}: the state moved"
            );
        }
        let after = chain(&mut sampler, &Gaussian, 6, 100);
        assert!(
            after.iter().flatten().all(|x| x.is_finite()),
            "U = ∇U = {value}: non-finite state after recovery"
        );
        assert!(
            after.iter().any(|x| bits(&[*x]) != bits(&[start])),
            "U = ∇U = {value}: the chain never moved afterwards"
        );
    }
}

fn reports_the_targets_potential<S: Step<f64, 2, Gaussian>>(make: impl Fn() -> S) {
    let mut sampler = make();
    let mut rng = XorShiftRng::seed_from_u64(7);
    for _ in 0..20 {
        let _ = sampler.step(&Gaussian, &mut rng);
        if let Some(u) = sampler.potential() {
            let expected = Gaussian.potential_and_gradient(sampler.position(), &mut [0.0; 2]);
            assert!(
                (u - expected).abs() <= 1e-12 * expected.abs().max(1.0),
                "potential {u}, target {expected}"
            );
        }
    }
    assert_eq!(sampler.dimension(), 2);
}

fn allocates_nothing<S: Step<f64, 2, Gaussian>>(make: impl Fn() -> S) {
    let mut sampler = make();
    let mut rng = XorShiftRng::seed_from_u64(9);
    let (allocations, ()) = count_heap(|| {
        for _ in 0..200 {
            let _ = sampler.step(&Gaussian, &mut rng);
        }
    });
    assert_eq!(allocations, 0, "heap operations while stepping");
}

/// The four checks for the sampler `$make` builds, in module `$name`.
macro_rules! conformance {
    ($name:ident, $make:expr) => {
        mod $name {
            use super::*;

            #[test]
            fn refuses_bad_step_sizes_and_keeps_its_chain() {
                refuses_bad_step_sizes($make);
            }

            #[test]
            fn a_non_finite_target_leaves_a_usable_state() {
                survives_a_non_finite_target($make);
            }

            #[test]
            fn the_reported_potential_is_the_targets() {
                reports_the_targets_potential($make);
            }

            #[test]
            fn stepping_allocates_nothing() {
                allocates_nothing($make);
            }
        }
    };
}

conformance!(hmc, || Hmc::new(HmcSettings::new(0.4, 5), START, &Gaussian)
    .unwrap());
conformance!(qnhmc, || {
    Qnhmc::<f64, 2, 4>::new(QnhmcSettings::new(0.4, 5, 4), START, &Gaussian).unwrap()
});
conformance!(nuts_identity, || {
    Nuts::<f64, 2, IdentityMetric>::new(NutsSettings::new(0.5), IdentityMetric, START, &Gaussian)
        .unwrap()
});
conformance!(nuts_lbfgs, || {
    Nuts::<f64, 2, LbfgsMetric<f64, 2, 4>>::new(
        NutsSettings::new(0.5),
        LbfgsMetric::identity(),
        START,
        &Gaussian,
    )
    .unwrap()
});
conformance!(hamcmc, || {
    Hamcmc::<f64, 2, 4>::new(
        HamcmcSettings::new(StepSizeSchedule::Constant(0.01), 0.5, 1.0),
        START,
    )
    .unwrap()
});
conformance!(hmc_bfgs, || {
    HmcBfgs::<f64, 2, 4, 2>::new(HmcBfgsSettings::new(0.4, 5), WALKERS, &Gaussian).unwrap()
});
conformance!(mh_bfgs, || {
    MhBfgs::<f64, 2, 4, 2>::new(
        MhBfgsSettings::new(0.8, MhBfgsProposal::RandomWalk),
        WALKERS,
        &Gaussian,
    )
    .unwrap()
});
conformance!(amagold, || {
    Amagold::new(AmagoldSettings::new(0.3, 5, 0.5), START, &Gaussian).unwrap()
});
conformance!(sgld, || Sgld::new(SgldSettings::new(0.05), START).unwrap());
conformance!(psgld, || {
    Psgld::new(PsgldSettings::new(0.05, 0.99, 1e-5), START).unwrap()
});
conformance!(sghmc, || Sghmc::new(SghmcSettings::new(0.05, 1.0), START)
    .unwrap());
conformance!(sgnht, || Sgnht::new(SgnhtSettings::new(0.05, 1.0), START)
    .unwrap());
conformance!(sgrld, || {
    Sgrld::new(SgrldSettings::new(0.05), START, BumpMetric).unwrap()
});
conformance!(sgrhmc, || {
    Sgrhmc::new(SgrhmcSettings::new(0.05), START, BumpMetric).unwrap()
});
