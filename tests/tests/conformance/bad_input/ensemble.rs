//! Bad input for HMC-BFGS and MH-BFGS, in f64 and f32:
//! - every invalid setting is an `Error::InvalidSetting` naming the setting
//!   (`step_size`, `leapfrog_steps`, `scaling`, `trust_region`,
//!   `min_relative_curvature`, `K` for fewer than 3 chains, `M` for a pair
//!   capacity below K − 2), at construction, in `set_settings` and in
//!   `set_step_size`, and a failed setter leaves the settings as they were;
//! - a NaN or infinite entry in an initial state, or a NaN/∞ U or ∇U there, is
//!   `Error::NonFiniteInitialState`;
//! - NaN/∞ U or ∇U during an update is a rejected divergence
//!   (`divergent`, not `accepted`, acceptance probability 0) and every chain's
//!   state, U and ∇U stay bit for bit; nothing panics. A negative control shows
//!   the clean target does move the chains.

use std::cell::Cell;

use qnmc::lbfgs::InitialScaling;
use qnmc::samplers::ensemble::{HmcBfgs, HmcBfgsSettings, MhBfgs, MhBfgsProposal, MhBfgsSettings};
use qnmc::{Error, Potential, Real};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

/// Isotropic Gaussian with variances (1, 2, 3, 4, 5) that, once armed, returns
/// the chosen fault at every evaluation.
struct Faulty {
    fault: Fault,
    armed: Cell<bool>,
}

#[derive(Clone, Copy, Debug)]
enum Fault {
    NanPotential,
    InfPotential,
    NegInfPotential,
    NanGradient,
    InfGradient,
}

const FAULTS: [Fault; 5] = [
    Fault::NanPotential,
    Fault::InfPotential,
    Fault::NegInfPotential,
    Fault::NanGradient,
    Fault::InfGradient,
];

impl<T: Real> Potential<T, 5> for Faulty {
    fn potential_and_gradient(&self, x: &[T; 5], g: &mut [T; 5]) -> T {
        let mut u = T::ZERO;
        for i in 0..5 {
            let v = T::from_u64(i as u64 + 1);
            g[i] = x[i] / v;
            u += T::HALF * x[i] * x[i] / v;
        }
        if !self.armed.get() {
            return u;
        }
        match self.fault {
            Fault::NanPotential => nan::<T>(),
            Fault::InfPotential => T::INFINITY,
            Fault::NegInfPotential => -T::INFINITY,
            Fault::NanGradient => {
                g[2] = nan::<T>();
                u
            }
            Fault::InfGradient => {
                g[4] = -T::INFINITY;
                u
            }
        }
    }
}

fn clean() -> Faulty {
    Faulty {
        fault: Fault::NanPotential,
        armed: Cell::new(false),
    }
}

fn starts<T: Real, const K: usize>() -> [[T; 5]; K] {
    let mut out = [[T::ZERO; 5]; K];
    for (k, x) in out.iter_mut().enumerate() {
        for (j, v) in x.iter_mut().enumerate() {
            *v = T::from_f64(((k * 5 + j * 3) % 7) as f64 / 3.0 - 1.0);
        }
    }
    out
}

fn not_positive<T: Real>() -> [T; 5] {
    [T::ZERO, -T::ONE, nan::<T>(), T::INFINITY, -T::INFINITY]
}

fn assert_invalid<V>(result: Result<V, Error>, setting: &str, case: &str) {
    match result {
        Err(Error::InvalidSetting { setting: s, .. }) => {
            assert_eq!(s, setting, "{case}: wrong setting named")
        }
        Err(e) => panic!("{case}: expected InvalidSetting({setting}), got {e:?}"),
        Ok(_) => panic!("{case}: expected InvalidSetting({setting}), got Ok"),
    }
}

fn invalid_settings<T: Real>() {
    let target = clean();
    let x0 = starts::<T, 6>();
    let good_hmc = HmcBfgsSettings::<T>::new(T::from_f64(0.3), 3);
    let good_mh = MhBfgsSettings::<T>::new(T::from_f64(0.5), MhBfgsProposal::Newton);
    let mut hmc = HmcBfgs::<T, 5, 6, 4>::new(good_hmc, x0, &target).unwrap();
    let mut mh = MhBfgs::<T, 5, 6, 4>::new(good_mh, x0, &target).unwrap();

    for v in not_positive::<T>() {
        let mut s = good_hmc;
        s.step_size = v;
        assert_invalid(
            HmcBfgs::<T, 5, 6, 4>::new(s, x0, &target),
            "step_size",
            "hmc new",
        );
        assert_invalid(hmc.set_settings(s), "step_size", "hmc set_settings");
        assert_invalid(hmc.set_step_size(v), "step_size", "hmc set_step_size");
        let mut s = good_mh;
        s.step_size = v;
        assert_invalid(
            MhBfgs::<T, 5, 6, 4>::new(s, x0, &target),
            "step_size",
            "mh new",
        );
        assert_invalid(mh.set_settings(s), "step_size", "mh set_settings");
        assert_invalid(mh.set_step_size(v), "step_size", "mh set_step_size");
        for scaling in [InitialScaling::Fixed(v), InitialScaling::NewestPair(v)] {
            let mut s = good_hmc;
            s.scaling = scaling;
            assert_invalid(
                HmcBfgs::<T, 5, 6, 4>::new(s, x0, &target),
                "scaling",
                "hmc γ",
            );
            let mut s = good_mh;
            s.scaling = scaling;
            assert_invalid(MhBfgs::<T, 5, 6, 4>::new(s, x0, &target), "scaling", "mh γ");
        }
    }
    let mut s = good_hmc;
    s.leapfrog_steps = 0;
    assert_invalid(
        HmcBfgs::<T, 5, 6, 4>::new(s, x0, &target),
        "leapfrog_steps",
        "L = 0",
    );
    assert_invalid(hmc.set_settings(s), "leapfrog_steps", "L = 0 set");
    for bad in [-T::ONE, nan::<T>(), T::INFINITY] {
        let mut s = good_hmc;
        s.curvature.trust_region = bad;
        assert_invalid(
            HmcBfgs::<T, 5, 6, 4>::new(s, x0, &target),
            "trust_region",
            "λ",
        );
        let mut s = good_mh;
        s.curvature.min_relative_curvature = bad;
        assert_invalid(
            MhBfgs::<T, 5, 6, 4>::new(s, x0, &target),
            "min_relative_curvature",
            "ε",
        );
    }
    // Failed setters changed nothing.
    assert_eq!(*hmc.settings(), good_hmc);
    assert_eq!(*mh.settings(), good_mh);

    // K ≥ 3 and M ≥ K − 2.
    assert_invalid(
        HmcBfgs::<T, 5, 2, 4>::new(good_hmc, starts::<T, 2>(), &target),
        "K",
        "K = 2",
    );
    assert_invalid(
        MhBfgs::<T, 5, 1, 4>::new(good_mh, starts::<T, 1>(), &target),
        "K",
        "K = 1",
    );
    assert_invalid(
        HmcBfgs::<T, 5, 0, 4>::new(good_hmc, [], &target),
        "K",
        "K = 0",
    );
    assert_invalid(
        HmcBfgs::<T, 5, 6, 3>::new(good_hmc, x0, &target),
        "M",
        "M = K − 3",
    );
    assert_invalid(
        MhBfgs::<T, 5, 6, 0>::new(good_mh, x0, &target),
        "M",
        "M = 0",
    );
    // The boundary cases are accepted.
    assert!(HmcBfgs::<T, 5, 3, 1>::new(good_hmc, starts::<T, 3>(), &target).is_ok());
    assert!(MhBfgs::<T, 5, 6, 4>::new(good_mh, x0, &target).is_ok());
    // A valid setter works.
    hmc.set_step_size(T::from_f64(0.2)).unwrap();
    assert_eq!(hmc.settings().step_size, T::from_f64(0.2));
}

#[test]
fn invalid_settings_f64() {
    invalid_settings::<f64>();
}

#[test]
fn invalid_settings_f32() {
    invalid_settings::<f32>();
}

fn non_finite_initial<T: Real>() {
    let good = clean();
    let hmc = HmcBfgsSettings::<T>::new(T::from_f64(0.3), 3);
    let mh = MhBfgsSettings::<T>::new(T::from_f64(0.5), MhBfgsProposal::RandomWalk);
    for bad in [nan::<T>(), T::INFINITY, -T::INFINITY] {
        for chain in [0, 3, 5] {
            let mut x0 = starts::<T, 6>();
            x0[chain][2] = bad;
            assert_eq!(
                HmcBfgs::<T, 5, 6, 4>::new(hmc, x0, &good).err(),
                Some(Error::NonFiniteInitialState)
            );
            assert_eq!(
                MhBfgs::<T, 5, 6, 4>::new(mh, x0, &good).err(),
                Some(Error::NonFiniteInitialState)
            );
        }
    }
    for fault in FAULTS {
        let target = Faulty {
            fault,
            armed: Cell::new(true),
        };
        assert_eq!(
            HmcBfgs::<T, 5, 6, 4>::new(hmc, starts::<T, 6>(), &target).err(),
            Some(Error::NonFiniteInitialState),
            "{fault:?}"
        );
        assert_eq!(
            MhBfgs::<T, 5, 6, 4>::new(mh, starts::<T, 6>(), &target).err(),
            Some(Error::NonFiniteInitialState),
            "{fault:?}"
        );
    }
}

#[test]
fn non_finite_initial_state_f64() {
    non_finite_initial::<f64>();
}

#[test]
fn non_finite_initial_state_f32() {
    non_finite_initial::<f32>();
}

/// The bits of every chain's state, U and ∇U.
fn bits<T: Real, const K: usize>(x: &[[T; 5]; K], u: &[T; K], g: &[[T; 5]; K]) -> Vec<u64> {
    let mut out = Vec::new();
    for k in 0..K {
        out.extend(x[k].iter().map(|v| v.to_f64().to_bits()));
        out.push(u[k].to_f64().to_bits());
        out.extend(g[k].iter().map(|v| v.to_f64().to_bits()));
    }
    out
}

fn divergences<T: Real>() {
    let x0 = starts::<T, 6>();
    for fault in FAULTS {
        let target = Faulty {
            fault,
            armed: Cell::new(false),
        };
        // Some clean updates first, so the state is not the initial one.
        let mut rng = XorShiftRng::seed_from_u64(3);
        let mut hmc =
            HmcBfgs::<T, 5, 6, 4>::new(HmcBfgsSettings::new(T::from_f64(0.4), 3), x0, &target)
                .unwrap();
        let mut moved = 0;
        for _ in 0..30 {
            moved += hmc.step(&target, &mut rng).accepted as usize;
        }
        assert!(
            moved > 0,
            "negative control: the clean target moves the chains"
        );
        target.armed.set(true);
        let before = bits(hmc.positions(), hmc.potentials(), hmc.gradients());
        for n in 0..12 {
            let chain = hmc.next_chain();
            let s = hmc.step(&target, &mut rng);
            assert!(
                s.divergent && !s.accepted,
                "{fault:?} HMC update {n}: {s:?}"
            );
            assert_eq!(s.acceptance_probability, T::ZERO);
            assert_eq!(
                s.gradient_evaluations, 1,
                "the trajectory stops at the fault"
            );
            assert_eq!(hmc.next_chain(), (chain + 1) % 6);
        }
        assert_eq!(
            before,
            bits(hmc.positions(), hmc.potentials(), hmc.gradients())
        );

        for proposal in [MhBfgsProposal::RandomWalk, MhBfgsProposal::Newton] {
            target.armed.set(false);
            let settings = MhBfgsSettings::new(T::from_f64(0.6), proposal);
            let mut mh = MhBfgs::<T, 5, 6, 4>::new(settings, x0, &target).unwrap();
            let mut moved = 0;
            for _ in 0..30 {
                moved += mh.step(&target, &mut rng).accepted as usize;
            }
            assert!(moved > 0);
            target.armed.set(true);
            let before = bits(mh.positions(), mh.potentials(), mh.gradients());
            for n in 0..12 {
                let s = mh.step(&target, &mut rng);
                assert!(
                    s.divergent && !s.accepted,
                    "{fault:?} {proposal:?} update {n}: {s:?}"
                );
                assert_eq!(s.acceptance_probability, T::ZERO);
            }
            assert_eq!(
                before,
                bits(mh.positions(), mh.potentials(), mh.gradients())
            );
            // Disarmed again, the sampler carries on.
            target.armed.set(false);
            let mut moved = 0;
            for _ in 0..30 {
                moved += mh.step(&target, &mut rng).accepted as usize;
            }
            assert!(moved > 0, "{fault:?} {proposal:?}: stuck after the faults");
        }
    }
}

#[test]
fn divergences_leave_the_state_unchanged_f64() {
    divergences::<f64>();
}

#[test]
fn divergences_leave_the_state_unchanged_f32() {
    divergences::<f32>();
}

/// A huge step size overflows the proposal to ±∞ (or NaN): a divergence, not
/// a panic, and the target is never evaluated at a non-finite point.
#[test]
fn overflowing_proposals_are_divergences() {
    struct Checked;
    impl Potential<f64, 5> for Checked {
        fn potential_and_gradient(&self, x: &[f64; 5], g: &mut [f64; 5]) -> f64 {
            assert!(x.iter().all(|v| v.is_finite()), "evaluated at {x:?}");
            *g = *x;
            0.5 * x.iter().map(|v| v * v).sum::<f64>()
        }
    }
    let x0 = starts::<f64, 6>();
    let mut rng = XorShiftRng::seed_from_u64(5);
    let mut hmc =
        HmcBfgs::<f64, 5, 6, 4>::new(HmcBfgsSettings::new(1e300, 3), x0, &Checked).unwrap();
    let mut mh = MhBfgs::<f64, 5, 6, 4>::new(
        MhBfgsSettings::new(1e300, MhBfgsProposal::Newton),
        x0,
        &Checked,
    )
    .unwrap();
    for _ in 0..12 {
        let s = hmc.step(&Checked, &mut rng);
        assert!(!s.accepted && s.divergent, "{s:?}");
        let s = mh.step(&Checked, &mut rng);
        assert!(!s.accepted && s.divergent, "{s:?}");
    }
    assert_eq!(hmc.positions(), &x0);
    assert_eq!(mh.positions(), &x0);
}

fn nan<T: Real>() -> T {
    T::from_f64(f64::NAN)
}
