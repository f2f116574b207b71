//! A run-time dimension n in storage of D for the samplers other than NUTS
//! (HMC, HAMCMC, QNHMC, AMAGOLD and L2MC, SGLD, pSGLD, SGHMC, SGNHT, SGRLD,
//! SGRHMC): the chain must be bit for
//! bit the chain of the sampler compiled for n, built by value or in place,
//! and the coordinates from n on must stay exactly zero. NUTS has its own
//! (`adaptation/dimension_tests.rs`).

use core::mem::MaybeUninit;

use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

use crate::lbfgs::InitialScaling;
use crate::samplers::recipe::DiagonalRiemannianMetric;
use crate::{
    Amagold, AmagoldSettings, Hamcmc, HamcmcSettings, Hmc, HmcSettings, MemoryUpdate,
    MinibatchPotential, Potential, Psgld, PsgldSettings, Qnhmc, QnhmcMass, QnhmcSettings, Sghmc,
    SghmcSettings, SghmcUpdate, Sgld, SgldSettings, Sgnht, SgnhtSettings, Sgrhmc, SgrhmcSettings,
    Sgrld, SgrldSettings, Step, StepSizeSchedule,
};

/// The model's dimension.
const N: usize = 5;

const SCALES: [f64; N] = [0.3, 1.0, 3.0, 0.5, 2.0];
const CENTRE: [f64; N] = [1.0, -2.0, 3.0, 0.5, -1.0];

/// A correlated Gaussian on the first [`N`] coordinates (precision
/// S⁻¹ C S⁻¹, C tridiagonal with 0.5 off the diagonal), reading and writing
/// only those coordinates, as a host model does. Its minibatch gradient adds
/// noise made from the batch seed, the same whatever D is.
struct Correlated;

impl<const D: usize> Potential<f64, D> for Correlated {
    fn potential_and_gradient(&self, x: &[f64; D], g: &mut [f64; D]) -> f64 {
        let z: [f64; N] = core::array::from_fn(|i| (x[i] - CENTRE[i]) / SCALES[i]);
        let mut u = 0.0;
        for i in 0..N {
            let mut pz = z[i];
            if i > 0 {
                pz += 0.5 * z[i - 1];
            }
            if i + 1 < N {
                pz += 0.5 * z[i + 1];
            }
            u += 0.5 * z[i] * pz;
            g[i] = pz / SCALES[i];
        }
        u
    }
}

impl<const D: usize> MinibatchPotential<f64, D> for Correlated {
    type Batch = u64;
    fn draw_batch<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        rng.next_u64()
    }
    fn minibatch_gradient(&self, batch: &u64, x: &[f64; D], g: &mut [f64; D]) {
        let _ = self.potential_and_gradient(x, g);
        let mut noise = XorShiftRng::seed_from_u64(*batch);
        for gi in g.iter_mut().take(N) {
            *gi += 0.1 * (f64::from(noise.next_u32()) / f64::from(u32::MAX) - 0.5);
        }
    }
}

/// A metric that depends on θ, G⁻¹ᵢᵢ = 1/(1 + c θᵢ²), on the model's first
/// [`N`] coordinates. Beyond them (a sampler compiled for more than N that
/// moves N) it writes values that are not a metric: the sampler must not
/// read them.
#[derive(Debug, Clone, Copy)]
struct Curved {
    c: f64,
}

crate::in_place::zero_valid!(impl[] Curved { c });

impl<const D: usize> DiagonalRiemannianMetric<f64, D> for Curved {
    fn inverse_metric(&self, x: &[f64; D], inverse: &mut [f64; D], derivative: &mut [f64; D]) {
        for i in 0..D {
            if i < N {
                let q = 1.0 + self.c * x[i] * x[i];
                inverse[i] = 1.0 / q;
                derivative[i] = -2.0 * self.c * x[i] / (q * q);
            } else {
                assert_eq!(x[i], 0.0, "the metric saw a padding coordinate move");
                inverse[i] = -1.0;
                derivative[i] = f64::NAN;
            }
        }
    }
}

/// 300 steps from the sampler's start; every position's first N
/// coordinates as bits. Checks the rest stay zero.
fn chain<const D: usize, S: Step<f64, D, Correlated>>(sampler: &mut S, seed: u64) -> Vec<[u64; N]> {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    (0..300)
        .map(|_| {
            let _ = sampler.step(&Correlated, &mut rng);
            let x = sampler.position();
            assert!(
                x[N..].iter().all(|&v| v == 0.0),
                "a padding coordinate moved"
            );
            assert_eq!(sampler.dimension(), N);
            core::array::from_fn(|i| x[i].to_bits())
        })
        .collect()
}

fn start<const D: usize>() -> [f64; D] {
    let mut x = [0.0; D];
    for (i, s) in x.iter_mut().take(N).enumerate() {
        *s = if i % 2 == 0 { 1.5 } else { -1.0 };
    }
    x
}

/// `same_chain!(name, |D| by_value, |D, slot| in_place)`: the chain of
/// `by_value` at D = N against `in_place` at D = 8 and 13 with
/// `set_dimension(N)`, seeds 1–3.
macro_rules! same_chain {
    ($name:ident, |$d:ident| $by_value:expr, |$d2:ident, $slot:ident| $in_place:expr) => {
        #[test]
        fn $name() {
            for seed in [1, 2, 3] {
                let exact = {
                    const $d: usize = N;
                    let mut sampler = $by_value;
                    chain::<$d, _>(&mut sampler, seed)
                };
                assert!(
                    exact.iter().any(|d| *d != exact[0]),
                    "the chain never moved"
                );
                let in_8 = {
                    const $d2: usize = 8;
                    let mut $slot = MaybeUninit::uninit();
                    let sampler = $in_place;
                    sampler.set_dimension(N).unwrap();
                    chain::<$d2, _>(sampler, seed)
                };
                let in_13 = {
                    const $d2: usize = 13;
                    let mut $slot = MaybeUninit::uninit();
                    let sampler = $in_place;
                    sampler.set_dimension(N).unwrap();
                    chain::<$d2, _>(sampler, seed)
                };
                for (k, ((a, b), c)) in exact.iter().zip(&in_8).zip(&in_13).enumerate() {
                    assert_eq!(a, b, "seed {seed}, step {k}: D = 8 left the D = 5 chain");
                    assert_eq!(a, c, "seed {seed}, step {k}: D = 13 left the D = 5 chain");
                }
            }
        }
    };
}

same_chain!(
    hmc,
    |D| Hmc::<f64, D>::new(HmcSettings::new(0.2, 7), start::<D>(), &Correlated).unwrap(),
    |D, slot| Hmc::<f64, D>::init_in_place(
        &mut slot,
        HmcSettings::new(0.2, 7),
        &start::<D>(),
        &Correlated
    )
    .unwrap()
);

fn hamcmc_settings() -> HamcmcSettings<f64> {
    HamcmcSettings::new(StepSizeSchedule::Constant(0.02), 0.5, 0.1)
}

same_chain!(
    hamcmc,
    |D| Hamcmc::<f64, D, 4>::new(hamcmc_settings(), start::<D>()).unwrap(),
    |D, slot| Hamcmc::<f64, D, 4>::init_in_place(&mut slot, hamcmc_settings(), &start::<D>())
        .unwrap()
);

fn qnhmc_settings(mass: QnhmcMass) -> QnhmcSettings<f64> {
    let mut s = QnhmcSettings::new(0.15, 5, 4);
    s.mass = mass;
    s.lbfgs.scaling = InitialScaling::NewestPair(1.0);
    s.memory_update = MemoryUpdate::FreezeAfter(150);
    s
}

same_chain!(
    qnhmc_identity_mass,
    |D| Qnhmc::<f64, D, 4>::new(
        qnhmc_settings(QnhmcMass::Identity),
        start::<D>(),
        &Correlated
    )
    .unwrap(),
    |D, slot| Qnhmc::<f64, D, 4>::init_in_place(
        &mut slot,
        qnhmc_settings(QnhmcMass::Identity),
        &start::<D>(),
        &Correlated
    )
    .unwrap()
);

same_chain!(
    qnhmc_inverse_hessian_mass,
    |D| Qnhmc::<f64, D, 4>::new(
        qnhmc_settings(QnhmcMass::InverseHessian),
        start::<D>(),
        &Correlated
    )
    .unwrap(),
    |D, slot| Qnhmc::<f64, D, 4>::init_in_place(
        &mut slot,
        qnhmc_settings(QnhmcMass::InverseHessian),
        &start::<D>(),
        &Correlated
    )
    .unwrap()
);

same_chain!(
    amagold,
    |D| Amagold::<f64, D>::new(AmagoldSettings::new(0.1, 4, 0.5), start::<D>(), &Correlated)
        .unwrap(),
    |D, slot| Amagold::<f64, D>::init_in_place(
        &mut slot,
        AmagoldSettings::new(0.1, 4, 0.5),
        &start::<D>(),
        &Correlated
    )
    .unwrap()
);

same_chain!(
    sgld,
    |D| Sgld::<f64, D>::new(SgldSettings::new(0.01), start::<D>()).unwrap(),
    |D, slot| Sgld::<f64, D>::init_in_place(&mut slot, SgldSettings::new(0.01), &start::<D>())
        .unwrap()
);

fn psgld_settings() -> PsgldSettings<f64> {
    PsgldSettings::new(0.005, 0.9, 1e-3)
}

same_chain!(
    psgld,
    |D| Psgld::<f64, D>::new(psgld_settings(), start::<D>()).unwrap(),
    |D, slot| Psgld::<f64, D>::init_in_place(&mut slot, psgld_settings(), &start::<D>()).unwrap()
);

fn sghmc_settings(update: SghmcUpdate) -> SghmcSettings<f64> {
    SghmcSettings {
        update,
        noise_estimate: 0.5,
        ..SghmcSettings::new(0.05, 1.0)
    }
}

same_chain!(
    sghmc_position_first,
    |D| Sghmc::<f64, D>::new(sghmc_settings(SghmcUpdate::PositionFirst), start::<D>()).unwrap(),
    |D, slot| Sghmc::<f64, D>::init_in_place(
        &mut slot,
        sghmc_settings(SghmcUpdate::PositionFirst),
        &start::<D>()
    )
    .unwrap()
);

same_chain!(
    sghmc_recipe_euler,
    |D| Sghmc::<f64, D>::new(sghmc_settings(SghmcUpdate::RecipeEuler), start::<D>()).unwrap(),
    |D, slot| Sghmc::<f64, D>::init_in_place(
        &mut slot,
        sghmc_settings(SghmcUpdate::RecipeEuler),
        &start::<D>()
    )
    .unwrap()
);

fn sgnht_settings() -> SgnhtSettings<f64> {
    SgnhtSettings::new(0.02, 1.0)
}

same_chain!(
    sgnht,
    |D| Sgnht::<f64, D>::new(sgnht_settings(), start::<D>()).unwrap(),
    |D, slot| Sgnht::<f64, D>::init_in_place(&mut slot, sgnht_settings(), &start::<D>()).unwrap()
);

const CURVED: Curved = Curved { c: 0.2 };

same_chain!(
    sgrld,
    |D| Sgrld::<f64, D, _>::new(SgrldSettings::new(0.01), start::<D>(), CURVED).unwrap(),
    |D, slot| Sgrld::<f64, D, _>::init_in_place(
        &mut slot,
        SgrldSettings::new(0.01),
        &start::<D>(),
        CURVED
    )
    .unwrap()
);

fn sgrhmc_settings() -> SgrhmcSettings<f64> {
    SgrhmcSettings {
        noise_estimate: 0.5,
        ..SgrhmcSettings::new(0.03)
    }
}

same_chain!(
    sgrhmc,
    |D| Sgrhmc::<f64, D, _>::new(sgrhmc_settings(), start::<D>(), CURVED).unwrap(),
    |D, slot| Sgrhmc::<f64, D, _>::init_in_place(
        &mut slot,
        sgrhmc_settings(),
        &start::<D>(),
        CURVED
    )
    .unwrap()
);

/// The momenta (and SGNHT's thermostat) of the extended-state samplers at
/// D = 8 (z's blocks overlap when moved: 2n > D) and 13 (they do not)
/// moving n = N: r stays zero from n on, and r and ξ are those of the
/// sampler compiled for N, bit for bit.
#[test]
fn extended_states_are_those_of_the_sampler_compiled_for_n() {
    fn run<const D: usize, S: Step<f64, D, Correlated>>(
        sampler: &mut S,
        extra: impl Fn(&S) -> ([f64; D], f64),
    ) -> Vec<([u64; N], u64)> {
        let mut rng = XorShiftRng::seed_from_u64(4);
        (0..200)
            .map(|_| {
                let _ = sampler.step(&Correlated, &mut rng);
                let (r, xi) = extra(sampler);
                assert!(r[N..].iter().all(|&v| v == 0.0), "a padding momentum moved");
                (core::array::from_fn(|i| r[i].to_bits()), xi.to_bits())
            })
            .collect()
    }
    for update in [SghmcUpdate::PositionFirst, SghmcUpdate::RecipeEuler] {
        let exact = run(
            &mut Sghmc::<f64, N>::new(sghmc_settings(update), start()).unwrap(),
            |s| (*s.momentum(), 0.0),
        );
        let mut slot = MaybeUninit::uninit();
        let d8 =
            Sghmc::<f64, 8>::init_in_place(&mut slot, sghmc_settings(update), &start()).unwrap();
        d8.set_dimension(N).unwrap();
        assert_eq!(exact, run(d8, |s| (*s.momentum(), 0.0)), "{update:?}");
        let mut slot = MaybeUninit::uninit();
        let d13 =
            Sghmc::<f64, 13>::init_in_place(&mut slot, sghmc_settings(update), &start()).unwrap();
        d13.set_dimension(N).unwrap();
        assert_eq!(exact, run(d13, |s| (*s.momentum(), 0.0)), "{update:?}");
    }
    let exact = run(
        &mut Sgnht::<f64, N>::new(sgnht_settings(), start()).unwrap(),
        |s| (*s.momentum(), s.thermostat()),
    );
    assert!(
        exact.iter().any(|(_, xi)| *xi != exact[0].1),
        "ξ never moved"
    );
    let mut slot = MaybeUninit::uninit();
    let d8 = Sgnht::<f64, 8>::init_in_place(&mut slot, sgnht_settings(), &start()).unwrap();
    d8.set_dimension(N).unwrap();
    assert_eq!(exact, run(d8, |s| (*s.momentum(), s.thermostat())));
    let mut slot = MaybeUninit::uninit();
    let d13 = Sgnht::<f64, 13>::init_in_place(&mut slot, sgnht_settings(), &start()).unwrap();
    d13.set_dimension(N).unwrap();
    assert_eq!(exact, run(d13, |s| (*s.momentum(), s.thermostat())));
    let exact = run(
        &mut Sgrhmc::<f64, N, _>::new(sgrhmc_settings(), start(), CURVED).unwrap(),
        |s| (*s.momentum(), 0.0),
    );
    let mut slot = MaybeUninit::uninit();
    let d8 =
        Sgrhmc::<f64, 8, _>::init_in_place(&mut slot, sgrhmc_settings(), &start(), CURVED).unwrap();
    d8.set_dimension(N).unwrap();
    assert_eq!(exact, run(d8, |s| (*s.momentum(), 0.0)));
    let mut slot = MaybeUninit::uninit();
    let d13 = Sgrhmc::<f64, 13, _>::init_in_place(&mut slot, sgrhmc_settings(), &start(), CURVED)
        .unwrap();
    d13.set_dimension(N).unwrap();
    assert_eq!(exact, run(d13, |s| (*s.momentum(), 0.0)));
}

/// L2MC (AMAGOLD on full gradients) through its own step.
#[test]
fn l2mc() {
    fn run<const D: usize>(sampler: &mut Amagold<f64, D>) -> Vec<[u64; N]> {
        let mut rng = XorShiftRng::seed_from_u64(7);
        (0..200)
            .map(|_| {
                let _ = sampler.step_full_batch(&Correlated, &mut rng);
                core::array::from_fn(|i| sampler.position()[i].to_bits())
            })
            .collect()
    }
    let settings = AmagoldSettings::new(0.1, 4, 0.5);
    let exact = run(&mut Amagold::<f64, N>::new(settings, start(), &Correlated).unwrap());
    let mut slot = MaybeUninit::uninit();
    let wide =
        Amagold::<f64, 9>::init_in_place(&mut slot, settings, &start(), &Correlated).unwrap();
    wide.set_dimension(N).unwrap();
    assert_eq!(exact, run(wide));
}

/// A dimension that is 0, above D, below the start's last nonzero
/// coordinate, or set after the first step is refused, and nothing changes.
#[test]
fn bad_dimensions_are_refused() {
    let mut sgld = Sgld::<f64, 8>::new(SgldSettings::new(0.01), start()).unwrap();
    for bad in [0, 4, 9] {
        assert!(sgld.set_dimension(bad).is_err(), "{bad}");
        assert_eq!(sgld.dimension(), 8);
    }
    sgld.set_dimension(N).unwrap();
    let mut rng = XorShiftRng::seed_from_u64(1);
    sgld.step(&Correlated, &mut rng).unwrap();
    assert!(sgld.set_dimension(6).is_err(), "after the first step");
    assert_eq!(sgld.dimension(), N);

    let mut hamcmc = Hamcmc::<f64, 8, 3>::new(hamcmc_settings(), start()).unwrap();
    assert!(hamcmc.set_dimension(3).is_err());
    hamcmc.set_dimension(N).unwrap();
    hamcmc.step(&Correlated, &mut rng).unwrap();
    assert!(hamcmc.set_dimension(N).is_err(), "after the first step");

    // A reset goes back to D and to the new start.
    sgld.reset(SgldSettings::new(0.02), &start()).unwrap();
    assert_eq!(sgld.dimension(), 8);
    assert_eq!(sgld.position(), &start::<8>());
    // A bad reset changes nothing.
    let before = *sgld.position();
    let mut bad = start::<8>();
    bad[0] = f64::NAN;
    assert!(sgld.reset(SgldSettings::new(0.02), &bad).is_err());
    assert!(sgld.reset(SgldSettings::new(-1.0), &start()).is_err());
    assert_eq!(sgld.position(), &before);
    assert_eq!(sgld.settings().step_size, 0.02);
}

/// `reset` after a run, `init_in_place` and `new` start the same chain, bit
/// for bit; a `reset` to a start where U is not finite changes nothing.
#[test]
fn reset_and_in_place_start_the_chain_new_builds() {
    macro_rules! same_start {
        ($new:expr, $in_place:expr, $reset:expr, $bad_reset:expr) => {{
            let mut by_value = $new;
            let exact = chain::<8, _>(&mut by_value, 5);
            let mut slot = MaybeUninit::uninit();
            let in_place = $in_place(&mut slot);
            // A sampler that has run: reset it to the start of `new`.
            let mut rng = XorShiftRng::seed_from_u64(99);
            for _ in 0..10 {
                let _ = Step::<f64, 8, Correlated>::step(in_place, &Correlated, &mut rng);
            }
            let before = *in_place.position();
            assert!($bad_reset(&mut *in_place).is_err());
            assert_eq!(
                in_place.position(),
                &before,
                "a failed reset changed the state"
            );
            $reset(&mut *in_place).unwrap();
            in_place.set_dimension(N).unwrap();
            assert_eq!(exact, chain::<8, _>(in_place, 5));
        }};
    }
    let mut bad = start::<8>();
    bad[0] = f64::INFINITY;
    let target = Correlated;
    same_start!(
        {
            let mut s = Hmc::<f64, 8>::new(HmcSettings::new(0.2, 7), start(), &target).unwrap();
            s.set_dimension(N).unwrap();
            s
        },
        |slot| Hmc::<f64, 8>::init_in_place(slot, HmcSettings::new(0.2, 7), &start(), &target)
            .unwrap(),
        |s: &mut Hmc<f64, 8>| s.reset(HmcSettings::new(0.2, 7), &start(), &target),
        |s: &mut Hmc<f64, 8>| s.reset(HmcSettings::new(0.2, 7), &bad, &target)
    );
    same_start!(
        {
            let mut s = Qnhmc::<f64, 8, 4>::new(
                qnhmc_settings(QnhmcMass::InverseHessian),
                start(),
                &target,
            )
            .unwrap();
            s.set_dimension(N).unwrap();
            s
        },
        |slot| Qnhmc::<f64, 8, 4>::init_in_place(
            slot,
            qnhmc_settings(QnhmcMass::InverseHessian),
            &start(),
            &target
        )
        .unwrap(),
        |s: &mut Qnhmc<f64, 8, 4>| s.reset(
            qnhmc_settings(QnhmcMass::InverseHessian),
            &start(),
            &target
        ),
        |s: &mut Qnhmc<f64, 8, 4>| s.reset(
            qnhmc_settings(QnhmcMass::InverseHessian),
            &bad,
            &target
        )
    );
    same_start!(
        {
            let mut s = Amagold::<f64, 8>::new(AmagoldSettings::new(0.1, 4, 0.5), start(), &target)
                .unwrap();
            s.set_dimension(N).unwrap();
            s
        },
        |slot| Amagold::<f64, 8>::init_in_place(
            slot,
            AmagoldSettings::new(0.1, 4, 0.5),
            &start(),
            &target
        )
        .unwrap(),
        |s: &mut Amagold<f64, 8>| s.reset(AmagoldSettings::new(0.1, 4, 0.5), &start(), &target),
        |s: &mut Amagold<f64, 8>| s.reset(AmagoldSettings::new(0.1, 4, 0.5), &bad, &target)
    );
    same_start!(
        {
            let mut s = Hamcmc::<f64, 8, 4>::new(hamcmc_settings(), start()).unwrap();
            s.set_dimension(N).unwrap();
            s
        },
        |slot| Hamcmc::<f64, 8, 4>::init_in_place(slot, hamcmc_settings(), &start()).unwrap(),
        |s: &mut Hamcmc<f64, 8, 4>| s.reset(hamcmc_settings(), &start()),
        |s: &mut Hamcmc<f64, 8, 4>| s.reset(hamcmc_settings(), &bad)
    );
    same_start!(
        {
            let mut s = Psgld::<f64, 8>::new(psgld_settings(), start()).unwrap();
            s.set_dimension(N).unwrap();
            s
        },
        |slot| Psgld::<f64, 8>::init_in_place(slot, psgld_settings(), &start()).unwrap(),
        |s: &mut Psgld<f64, 8>| s.reset(psgld_settings(), &start()),
        |s: &mut Psgld<f64, 8>| s.reset(psgld_settings(), &bad)
    );
    for update in [SghmcUpdate::PositionFirst, SghmcUpdate::RecipeEuler] {
        same_start!(
            {
                let mut s = Sghmc::<f64, 8>::new(sghmc_settings(update), start()).unwrap();
                s.set_dimension(N).unwrap();
                s
            },
            |slot| Sghmc::<f64, 8>::init_in_place(slot, sghmc_settings(update), &start()).unwrap(),
            |s: &mut Sghmc<f64, 8>| s.reset(sghmc_settings(update), &start()),
            |s: &mut Sghmc<f64, 8>| s.reset(sghmc_settings(update), &bad)
        );
    }
    same_start!(
        {
            let mut s = Sgnht::<f64, 8>::new(sgnht_settings(), start()).unwrap();
            s.set_dimension(N).unwrap();
            s
        },
        |slot| Sgnht::<f64, 8>::init_in_place(slot, sgnht_settings(), &start()).unwrap(),
        |s: &mut Sgnht<f64, 8>| s.reset(sgnht_settings(), &start()),
        |s: &mut Sgnht<f64, 8>| s.reset(sgnht_settings(), &bad)
    );
    same_start!(
        {
            let mut s = Sgrld::<f64, 8, _>::new(SgrldSettings::new(0.01), start(), CURVED).unwrap();
            s.set_dimension(N).unwrap();
            s
        },
        |slot| Sgrld::<f64, 8, _>::init_in_place(
            slot,
            SgrldSettings::new(0.01),
            &start(),
            Curved { c: 1.0 }
        )
        .unwrap(),
        |s: &mut Sgrld<f64, 8, Curved>| s.reset(SgrldSettings::new(0.01), &start(), CURVED),
        |s: &mut Sgrld<f64, 8, Curved>| s.reset(SgrldSettings::new(0.01), &bad, CURVED)
    );
    same_start!(
        {
            let mut s = Sgrhmc::<f64, 8, _>::new(sgrhmc_settings(), start(), CURVED).unwrap();
            s.set_dimension(N).unwrap();
            s
        },
        |slot| Sgrhmc::<f64, 8, _>::init_in_place(
            slot,
            sgrhmc_settings(),
            &start(),
            Curved { c: 1.0 }
        )
        .unwrap(),
        |s: &mut Sgrhmc<f64, 8, Curved>| s.reset(sgrhmc_settings(), &start(), CURVED),
        |s: &mut Sgrhmc<f64, 8, Curved>| s.reset(sgrhmc_settings(), &bad, CURVED)
    );
}

/// A failed reset of the extended-state samplers leaves θ, r, ξ, the
/// settings, the metric and the run-time dimension as they were.
#[test]
fn a_failed_reset_of_an_extended_state_changes_nothing() {
    let mut rng = XorShiftRng::seed_from_u64(3);
    let mut bad = start::<8>();
    bad[1] = f64::NAN;
    let mut sghmc =
        Sghmc::<f64, 8>::new(sghmc_settings(SghmcUpdate::RecipeEuler), start()).unwrap();
    sghmc.set_dimension(N).unwrap();
    for _ in 0..5 {
        sghmc.step(&Correlated, &mut rng).unwrap();
    }
    let before = (*sghmc.position(), *sghmc.momentum(), *sghmc.settings());
    assert!(sghmc.reset(SghmcSettings::new(0.1, 1.0), &bad).is_err());
    assert!(
        sghmc
            .reset(SghmcSettings::new(-0.1, 1.0), &start())
            .is_err()
    );
    assert_eq!(
        before,
        (*sghmc.position(), *sghmc.momentum(), *sghmc.settings())
    );
    assert_eq!(sghmc.dimension(), N);

    let mut sgnht = Sgnht::<f64, 8>::new(sgnht_settings(), start()).unwrap();
    sgnht.set_dimension(N).unwrap();
    for _ in 0..5 {
        sgnht.step(&Correlated, &mut rng).unwrap();
    }
    let before = (*sgnht.position(), *sgnht.momentum(), sgnht.thermostat());
    assert!(sgnht.reset(sgnht_settings(), &bad).is_err());
    assert!(
        sgnht
            .reset(SgnhtSettings::new(0.02, -1.0), &start())
            .is_err()
    );
    assert_eq!(
        before,
        (*sgnht.position(), *sgnht.momentum(), sgnht.thermostat())
    );
    assert_eq!(sgnht.dimension(), N);
    // A good reset: r = 0, ξ = A, dimension D.
    sgnht
        .reset(SgnhtSettings::new(0.02, 2.0), &start())
        .unwrap();
    assert_eq!(sgnht.momentum(), &[0.0; 8]);
    assert_eq!(sgnht.thermostat(), 2.0);
    assert_eq!(sgnht.dimension(), 8);

    let mut sgrhmc = Sgrhmc::<f64, 8, _>::new(sgrhmc_settings(), start(), CURVED).unwrap();
    sgrhmc.set_dimension(N).unwrap();
    for _ in 0..5 {
        sgrhmc.step(&Correlated, &mut rng).unwrap();
    }
    let before = (*sgrhmc.position(), *sgrhmc.momentum());
    assert!(
        sgrhmc
            .reset(sgrhmc_settings(), &bad, Curved { c: 3.0 })
            .is_err()
    );
    assert_eq!(before, (*sgrhmc.position(), *sgrhmc.momentum()));
    assert_eq!(sgrhmc.metric().c, CURVED.c);
    assert_eq!(sgrhmc.dimension(), N);
    sgrhmc
        .reset(sgrhmc_settings(), &start(), Curved { c: 3.0 })
        .unwrap();
    assert_eq!(sgrhmc.metric().c, 3.0);
    assert_eq!(sgrhmc.momentum(), &[0.0; 8]);

    let mut sgrld = Sgrld::<f64, 8, _>::new(SgrldSettings::new(0.01), start(), CURVED).unwrap();
    sgrld.set_dimension(N).unwrap();
    sgrld.step(&Correlated, &mut rng).unwrap();
    let before = *sgrld.position();
    assert!(
        sgrld
            .reset(SgrldSettings::new(0.0), &start(), Curved { c: 3.0 })
            .is_err()
    );
    assert_eq!(before, *sgrld.position());
    assert_eq!(sgrld.metric().c, CURVED.c);
    assert!(sgrld.set_dimension(6).is_err(), "after the first step");
}
