//! A run-time dimension n in storage of D for the two ensemble samplers:
//! every chain of the ensemble must be bit for bit the chain of the sampler
//! compiled for n, built by value or in place, and the coordinates from n
//! on must stay exactly zero; `reset` and the in-place constructors start
//! the chains `new` starts, and a refused reset or dimension changes nothing.

use core::mem::MaybeUninit;

use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use super::{HmcBfgs, HmcBfgsSettings, MhBfgs, MhBfgsProposal, MhBfgsSettings};
use crate::Potential;
use crate::lbfgs::CurvaturePolicy;

/// The model's dimension.
const N: usize = 5;
/// Chains in the ensemble, and the pair capacity K − 2.
const K: usize = 5;
const M: usize = K - 2;

const SCALES: [f64; N] = [0.3, 1.0, 3.0, 0.5, 2.0];

/// A badly scaled Gaussian with a quartic term (so the pairs differ from
/// update to update) on the first [`N`] coordinates, reading and writing
/// only those, as a host model does.
struct Scaled;

impl<const D: usize> Potential<f64, D> for Scaled {
    fn potential_and_gradient(&self, x: &[f64; D], g: &mut [f64; D]) -> f64 {
        let mut u = 0.0;
        for i in 0..N {
            let z = x[i] / SCALES[i];
            u += 0.5 * z * z + 0.05 * z * z * z * z;
            g[i] = (z + 0.2 * z * z * z) / SCALES[i];
        }
        u
    }
}

/// K distinct starts on the first N coordinates, zero from N on.
fn starts<const D: usize>() -> [[f64; D]; K] {
    core::array::from_fn(|k| {
        let mut x = [0.0; D];
        for (i, s) in x.iter_mut().take(N).enumerate() {
            *s = SCALES[i] * (0.3 * k as f64 - 0.5 + 0.1 * i as f64);
        }
        x
    })
}

/// Every chain's first N coordinates as bits after each of 200 updates;
/// checks the coordinates from N on stay zero.
macro_rules! record {
    ($sampler:expr, $seed:expr) => {{
        let sampler = $sampler;
        let mut rng = XorShiftRng::seed_from_u64($seed);
        let mut accepted = 0;
        let trace: Vec<[[u64; N]; K]> = (0..200)
            .map(|_| {
                accepted += sampler.step(&Scaled, &mut rng).accepted as u32;
                assert_eq!(sampler.dimension(), N);
                core::array::from_fn(|k| {
                    let x = sampler.position(k).unwrap();
                    assert!(
                        x[N..].iter().all(|&v| v == 0.0),
                        "a padding coordinate moved"
                    );
                    core::array::from_fn(|i| x[i].to_bits())
                })
            })
            .collect();
        assert!(accepted > 20, "only {accepted} of 200 updates accepted");
        trace
    }};
}

fn hmc_settings() -> HmcBfgsSettings<f64> {
    HmcBfgsSettings::new(0.3, 4)
}

fn mh_settings(proposal: MhBfgsProposal) -> MhBfgsSettings<f64> {
    let mut s = MhBfgsSettings::new(0.8, proposal);
    // A trust region, so that the in-place shift of y is exercised too.
    s.curvature = CurvaturePolicy {
        trust_region: 1e-3,
        min_relative_curvature: 0.0,
    };
    s
}

#[test]
fn hmc_bfgs_in_larger_storage_is_the_chain_compiled_for_n() {
    for seed in [1, 2, 3] {
        let exact = record!(
            &mut HmcBfgs::<f64, N, K, M>::new(hmc_settings(), starts(), &Scaled).unwrap(),
            seed
        );
        let mut slot = MaybeUninit::uninit();
        let in_8 =
            HmcBfgs::<f64, 8, K, M>::init_in_place(&mut slot, hmc_settings(), &starts(), &Scaled)
                .unwrap();
        in_8.set_dimension(N).unwrap();
        assert_eq!(exact, record!(in_8, seed), "seed {seed}, D = 8");
        let mut boxed = HmcBfgs::<f64, 13, K, M>::new(hmc_settings(), starts(), &Scaled).unwrap();
        boxed.set_dimension(N).unwrap();
        assert_eq!(exact, record!(&mut boxed, seed), "seed {seed}, D = 13");
    }
}

#[test]
fn mh_bfgs_in_larger_storage_is_the_chain_compiled_for_n() {
    for proposal in [MhBfgsProposal::RandomWalk, MhBfgsProposal::Newton] {
        let settings = mh_settings(proposal);
        for seed in [1, 2, 3] {
            let exact = record!(
                &mut MhBfgs::<f64, N, K, M>::new(settings, starts(), &Scaled).unwrap(),
                seed
            );
            let mut slot = MaybeUninit::uninit();
            let in_8 =
                MhBfgs::<f64, 8, K, M>::init_in_place(&mut slot, settings, &starts(), &Scaled)
                    .unwrap();
            in_8.set_dimension(N).unwrap();
            assert_eq!(
                exact,
                record!(in_8, seed),
                "{proposal:?}, seed {seed}, D = 8"
            );
            let mut wide = MhBfgs::<f64, 13, K, M>::new(settings, starts(), &Scaled).unwrap();
            wide.set_dimension(N).unwrap();
            assert_eq!(
                exact,
                record!(&mut wide, seed),
                "{proposal:?}, seed {seed}, D = 13"
            );
        }
    }
}

/// New settings (a new, empty metric memory) keep the run-time dimension.
#[test]
fn new_settings_keep_the_dimension() {
    let mut exact = HmcBfgs::<f64, N, K, M>::new(hmc_settings(), starts(), &Scaled).unwrap();
    let mut wide = HmcBfgs::<f64, 8, K, M>::new(hmc_settings(), starts(), &Scaled).unwrap();
    wide.set_dimension(N).unwrap();
    let mut other = hmc_settings();
    other.step_size = 0.25;
    exact.set_settings(other).unwrap();
    wide.set_settings(other).unwrap();
    assert_eq!(wide.memory().dimension(), N);
    assert_eq!(record!(&mut exact, 4), record!(&mut wide, 4));
}

/// A dimension that is 0, above D, below a start's last nonzero coordinate,
/// or set after the first update is refused, and nothing changes.
#[test]
fn bad_dimensions_are_refused() {
    let mut sampler = HmcBfgs::<f64, 8, K, M>::new(hmc_settings(), starts(), &Scaled).unwrap();
    for bad in [0, 4, 9] {
        assert!(sampler.set_dimension(bad).is_err(), "{bad}");
        assert_eq!(sampler.dimension(), 8);
        assert_eq!(sampler.memory().dimension(), 8);
    }
    sampler.set_dimension(N).unwrap();
    let mut rng = XorShiftRng::seed_from_u64(1);
    sampler.step(&Scaled, &mut rng);
    assert!(sampler.set_dimension(6).is_err(), "after the first update");
    assert_eq!(sampler.dimension(), N);
}

/// `reset` after a run starts the chains `new` starts, bit for bit; a reset to a start where a state is not finite, or with bad
/// settings, changes nothing; a reset goes back to dimension D.
#[test]
fn reset_and_in_place_start_the_chains_new_builds() {
    let mut slot = MaybeUninit::uninit();
    let sampler =
        HmcBfgs::<f64, 8, K, M>::init_in_place(&mut slot, hmc_settings(), &starts(), &Scaled)
            .unwrap();
    sampler.set_dimension(N).unwrap();
    let mut rng = XorShiftRng::seed_from_u64(99);
    for _ in 0..10 {
        sampler.step(&Scaled, &mut rng);
    }
    let before = *sampler.positions();
    let mut bad = starts::<8>();
    bad[3][1] = f64::NAN;
    assert!(sampler.reset(hmc_settings(), &bad, &Scaled).is_err());
    assert!(
        sampler
            .reset(HmcBfgsSettings::new(-1.0, 4), &starts(), &Scaled)
            .is_err()
    );
    assert_eq!(sampler.positions(), &before);
    assert_eq!(sampler.dimension(), N);
    sampler.reset(hmc_settings(), &starts(), &Scaled).unwrap();
    assert_eq!(sampler.dimension(), 8);
    sampler.set_dimension(N).unwrap();
    let from_reset = record!(&mut *sampler, 5);
    let compiled_for_n = record!(
        &mut HmcBfgs::<f64, N, K, M>::new(hmc_settings(), starts(), &Scaled).unwrap(),
        5
    );
    assert_eq!(from_reset, compiled_for_n);
}

#[cfg(feature = "alloc")]
#[test]
fn new_boxed_is_new() {
    let exact = record!(
        &mut MhBfgs::<f64, N, K, M>::new(mh_settings(MhBfgsProposal::Newton), starts(), &Scaled)
            .unwrap(),
        6
    );
    let mut boxed =
        MhBfgs::<f64, 21, K, M>::new_boxed(mh_settings(MhBfgsProposal::Newton), &starts(), &Scaled)
            .unwrap();
    boxed.set_dimension(N).unwrap();
    assert_eq!(exact, record!(&mut *boxed, 6));
}
