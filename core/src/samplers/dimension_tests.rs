//! A run-time dimension n in storage of D for the samplers other than NUTS
//! (HMC, HAMCMC, QNHMC, AMAGOLD and L2MC, SGLD, pSGLD): the chain must be bit for
//! bit the chain of the sampler compiled for n, built by value or in place,
//! and the coordinates from n on must stay exactly zero. NUTS has its own
//! (`adaptation/dimension_tests.rs`).

use core::mem::MaybeUninit;

use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

use crate::lbfgs::InitialScaling;
use crate::{
    Amagold, AmagoldSettings, Hamcmc, HamcmcSettings, Hmc, HmcSettings, MemoryUpdate,
    MinibatchPotential, Potential, Psgld, PsgldSettings, Qnhmc, QnhmcMass, QnhmcSettings, Sgld,
    SgldSettings, Step, StepSizeSchedule,
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
}
