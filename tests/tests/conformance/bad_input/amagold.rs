//! AMAGOLD / L2MC on bad input: invalid settings are errors naming the
//! setting; a non-finite initial state is an error; NaN/∞ in U or ∇U during a
//! step is a rejected, counted divergence with θ unchanged (and, in the
//! persistent variant, the momentum negated as on any rejection); nothing
//! panics, in f64 or f32.

// Numeric checks index several parallel arrays at once; index loops say that best.
#![allow(clippy::needless_range_loop)]

use qnmc::samplers::amagold::{Amagold, AmagoldSettings, MomentumRefresh};
use qnmc::{Error, MinibatchPotential, Potential};
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

/// U = ½‖θ‖², with optional poison: the minibatch gradient is NaN where
/// θ₀ > `grad_nan_above`, U is NaN where θ₀ > `u_nan_above`, ∇U is +∞ where
/// θ₀ < `grad_inf_below`.
#[derive(Clone, Copy)]
struct Poisoned {
    grad_nan_above: f64,
    u_nan_above: f64,
    grad_inf_below: f64,
}

impl Poisoned {
    fn clean() -> Self {
        Poisoned {
            grad_nan_above: f64::INFINITY,
            u_nan_above: f64::INFINITY,
            grad_inf_below: f64::NEG_INFINITY,
        }
    }
}

impl<T: qnmc::Real> Potential<T, 2> for Poisoned {
    fn potential_and_gradient(&self, x: &[T; 2], g: &mut [T; 2]) -> T {
        *g = *x;
        if x[0].to_f64() < self.grad_inf_below {
            g[0] = T::INFINITY;
        }
        if x[0].to_f64() > self.u_nan_above {
            return T::from_f64(f64::NAN);
        }
        T::HALF * (x[0] * x[0] + x[1] * x[1])
    }
}

impl<T: qnmc::Real> MinibatchPotential<T, 2> for Poisoned {
    type Batch = u32;
    fn draw_batch<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        rng.next_u32()
    }
    fn minibatch_gradient(&self, _b: &u32, x: &[T; 2], g: &mut [T; 2]) {
        *g = *x;
        if x[0].to_f64() > self.grad_nan_above {
            g[1] = T::from_f64(f64::NAN);
        }
        if x[0].to_f64() < self.grad_inf_below {
            g[0] = T::INFINITY;
        }
    }
}

#[test]
fn invalid_settings_name_the_setting() {
    let base = AmagoldSettings::<f64>::new(0.1, 5, 0.5);
    let cases: [(AmagoldSettings<f64>, &str); 10] = [
        (
            AmagoldSettings {
                step_size: 0.0,
                ..base
            },
            "step_size",
        ),
        (
            AmagoldSettings {
                step_size: -1.0,
                ..base
            },
            "step_size",
        ),
        (
            AmagoldSettings {
                step_size: f64::NAN,
                ..base
            },
            "step_size",
        ),
        (
            AmagoldSettings {
                step_size: f64::INFINITY,
                ..base
            },
            "step_size",
        ),
        (
            AmagoldSettings {
                inner_steps: 0,
                ..base
            },
            "inner_steps",
        ),
        (
            AmagoldSettings {
                friction: -0.1,
                ..base
            },
            "friction",
        ),
        (
            AmagoldSettings {
                friction: f64::NAN,
                ..base
            },
            "friction",
        ),
        (
            AmagoldSettings {
                friction: f64::INFINITY,
                ..base
            },
            "friction",
        ),
        (
            AmagoldSettings {
                momentum_variance: 0.0,
                ..base
            },
            "momentum_variance",
        ),
        (
            AmagoldSettings {
                momentum_variance: f64::NAN,
                ..base
            },
            "momentum_variance",
        ),
    ];
    for (s, name) in cases {
        match Amagold::new(s, [0.0; 2], &Poisoned::clean()) {
            Err(Error::InvalidSetting { setting, .. }) => assert_eq!(setting, name),
            other => panic!("{name}: {:?}", other.map(|_| ())),
        }
    }
    // β = 0 is valid (no noise), as is any finite positive σ².
    assert!(
        Amagold::new(
            AmagoldSettings {
                friction: 0.0,
                ..base
            },
            [0.0; 2],
            &Poisoned::clean()
        )
        .is_ok()
    );
    // set_settings / set_step_size keep the old values on error.
    let mut a = Amagold::new(base, [0.0; 2], &Poisoned::clean()).unwrap();
    assert!(
        a.set_settings(AmagoldSettings {
            inner_steps: 0,
            ..base
        })
        .is_err()
    );
    assert!(a.set_step_size(f64::NAN).is_err());
    assert_eq!(*a.settings(), base);
}

#[test]
fn non_finite_initial_state_is_an_error() {
    let s = AmagoldSettings::<f64>::new(0.1, 5, 0.5);
    for x in [[f64::NAN, 0.0], [0.0, f64::INFINITY]] {
        assert_eq!(
            Amagold::new(s, x, &Poisoned::clean()).err(),
            Some(Error::NonFiniteInitialState)
        );
    }
    let nan_u = Poisoned {
        u_nan_above: -1.0,
        ..Poisoned::clean()
    };
    assert_eq!(
        Amagold::new(s, [0.0; 2], &nan_u).err(),
        Some(Error::NonFiniteInitialState)
    );
    let inf_g = Poisoned {
        grad_inf_below: 1.0,
        ..Poisoned::clean()
    };
    assert_eq!(
        Amagold::new(s, [0.0; 2], &inf_g).err(),
        Some(Error::NonFiniteInitialState)
    );
}

/// Runs 300 steps from θ = (0, 0) of every variant on a poisoned target and
/// checks: divergences happen and are counted, a divergent step leaves θ
/// unchanged, the chain never leaves the finite region.
fn run_poisoned<T: qnmc::Real>(target: Poisoned, minibatch: bool) -> (usize, usize) {
    let mut total = (0, 0);
    for refresh in [MomentumRefresh::Resample, MomentumRefresh::Persistent] {
        let mut s = AmagoldSettings::<T>::new(T::from_f64(0.3), 5, T::from_f64(0.5));
        s.momentum_refresh = refresh;
        let mut a = Amagold::new(s, [T::ZERO; 2], &target).unwrap();
        let mut rng = XorShiftRng::seed_from_u64(8);
        for _ in 0..300 {
            let before = *a.position();
            let momentum_before = a.momentum().copied();
            let st = if minibatch {
                a.step(&target, &mut rng)
            } else {
                a.step_full_batch(&target, &mut rng)
            };
            assert!(a.position().iter().all(|x| x.is_finite()));
            if st.divergent {
                total.0 += 1;
                assert!(!st.accepted);
                assert_eq!(st.acceptance_probability, T::ZERO);
                assert_eq!(*a.position(), before);
                if refresh == MomentumRefresh::Persistent
                    && let (Some(m0), Some(m1)) = (momentum_before, a.momentum())
                {
                    for i in 0..2 {
                        assert_eq!(m1[i], -m0[i]);
                    }
                }
            }
            total.1 += st.accepted as usize;
        }
    }
    total
}

#[test]
fn nan_and_infinite_energies_are_counted_divergences() {
    for minibatch in [true, false] {
        let nan_grad = Poisoned {
            grad_nan_above: 0.5,
            ..Poisoned::clean()
        };
        let nan_u = Poisoned {
            u_nan_above: 0.5,
            ..Poisoned::clean()
        };
        let inf_grad = Poisoned {
            grad_inf_below: -0.5,
            ..Poisoned::clean()
        };
        for (name, t) in [
            ("NaN gradient", nan_grad),
            ("NaN U", nan_u),
            ("inf gradient", inf_grad),
        ] {
            // The NaN minibatch gradient only poisons the minibatch path.
            if name == "NaN gradient" && !minibatch {
                continue;
            }
            let (div, acc) = run_poisoned::<f64>(t, minibatch);
            let (div32, acc32) = run_poisoned::<f32>(t, minibatch);
            println!(
                "{name}, minibatch {minibatch}: f64 {div} divergences / {acc} accepted, f32 {div32} / {acc32}"
            );
            assert!(div > 0 && acc > 0, "{name}");
            assert!(div32 > 0 && acc32 > 0, "{name} f32");
        }
    }
}

#[test]
fn huge_step_size_never_panics() {
    let s = AmagoldSettings::<f64>::new(1e300, 3, 1e10);
    let mut a = Amagold::new(s, [1.0, 1.0], &Poisoned::clean()).unwrap();
    let mut rng = XorShiftRng::seed_from_u64(1);
    for _ in 0..50 {
        let st = a.step(&Poisoned::clean(), &mut rng);
        assert!(!st.accepted || a.position().iter().all(|x| x.is_finite()));
    }
    assert!(a.position().iter().all(|x| x.is_finite()));
}
