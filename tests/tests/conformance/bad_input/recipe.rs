//! Bad input never panics in the complete-recipe samplers.
//!
//! - Every invalid setting is `Err(InvalidSetting { setting, .. })` naming the
//!   field, at construction and from `set_step_size` (which keeps the old
//!   settings); D = 0 names `D`; a non-finite start is `NonFiniteInitialState`.
//! - A NaN or ±∞ gradient is `Err(NonFiniteGradient)`, a NaN/non-positive
//!   metric too, an overflowing proposal (or SGRHMC's 2G⁻¹ − εB̂ < 0)
//!   `Err(NonFiniteProposal)`; in every case the sampler is exactly as before the
//!   call: all accessors compare bit for bit, and a clone taken before the failed
//!   call and the sampler then produce identical chains from the same seed.
//!
//! Every call runs inside `catch_unwind`.

use std::cell::Cell;

use qnmc::samplers::recipe::{
    Correction, DiagonalRiemannianMetric, MinibatchHessianDiagonal, Psgld, PsgldSettings, Sghmc,
    SghmcSettings, SghmcUpdate, Sgld, SgldSettings, Sgnht, SgnhtSettings, Sgrhmc, SgrhmcSettings,
    Sgrld, SgrldSettings, Thermostat,
};
use qnmc::{Error, MinibatchPotential};
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

use crate::common::{assert_invalid, no_panic};

const NOT_POSITIVE: [f64; 6] = [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
const NOT_NON_NEGATIVE: [f64; 4] = [-1e-300, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
const X0: [f64; 2] = [0.5, -0.3];

#[test]
fn invalid_settings_name_the_field() {
    for v in NOT_POSITIVE {
        let c = format!("value {v}");
        assert_invalid(
            no_panic(&c, || Sgld::<f64, 2>::new(SgldSettings::new(v), X0)),
            "step_size",
            &c,
        );
        assert_invalid(
            no_panic(&c, || {
                Sgrld::<f64, 2, _>::new(SgrldSettings::new(v), X0, FaultyMetric::default())
            }),
            "step_size",
            &c,
        );
        assert_invalid(
            no_panic(&c, || {
                Sgrhmc::<f64, 2, _>::new(SgrhmcSettings::new(v), X0, FaultyMetric::default())
            }),
            "step_size",
            &c,
        );
        assert_invalid(
            no_panic(&c, || Sghmc::<f64, 2>::new(SghmcSettings::new(v, 1.0), X0)),
            "step_size",
            &c,
        );
        assert_invalid(
            no_panic(&c, || Sgnht::<f64, 2>::new(SgnhtSettings::new(v, 1.0), X0)),
            "step_size",
            &c,
        );
        assert_invalid(
            no_panic(&c, || {
                Psgld::<f64, 2>::new(PsgldSettings::new(v, 0.9, 1e-3), X0)
            }),
            "step_size",
            &c,
        );
        assert_invalid(
            no_panic(&c, || {
                Psgld::<f64, 2>::new(PsgldSettings::new(0.1, 0.9, v), X0)
            }),
            "regularizer",
            &c,
        );
        let mut p = PsgldSettings::new(0.1, 0.9, 1e-3);
        p.gradient_scale = v;
        assert_invalid(
            no_panic(&c, || Psgld::<f64, 2>::new(p, X0)),
            "gradient_scale",
            &c,
        );
        let mut h = SghmcSettings::new(0.1, 1.0);
        h.mass = v;
        assert_invalid(no_panic(&c, || Sghmc::<f64, 2>::new(h, X0)), "mass", &c);
    }
    for v in NOT_NON_NEGATIVE {
        let c = format!("value {v}");
        assert_invalid(
            no_panic(&c, || Sghmc::<f64, 2>::new(SghmcSettings::new(0.1, v), X0)),
            "friction",
            &c,
        );
        assert_invalid(
            no_panic(&c, || Sgnht::<f64, 2>::new(SgnhtSettings::new(0.1, v), X0)),
            "diffusion",
            &c,
        );
        let mut s = SgldSettings::new(0.1);
        s.noise_estimate = v;
        assert_invalid(
            no_panic(&c, || Sgld::<f64, 2>::new(s, X0)),
            "noise_estimate",
            &c,
        );
        let mut s = SgrhmcSettings::new(0.1);
        s.noise_estimate = v;
        assert_invalid(
            no_panic(&c, || {
                Sgrhmc::<f64, 2, _>::new(s, X0, FaultyMetric::default())
            }),
            "noise_estimate",
            &c,
        );
        let mut s = SghmcSettings::new(0.1, 1.0);
        s.noise_estimate = v;
        assert_invalid(
            no_panic(&c, || Sghmc::<f64, 2>::new(s, X0)),
            "noise_estimate",
            &c,
        );
        let mut s = SgnhtSettings::new(0.1, 1.0);
        s.noise_estimate = v;
        assert_invalid(
            no_panic(&c, || Sgnht::<f64, 2>::new(s, X0)),
            "noise_estimate",
            &c,
        );
    }
    for v in [-0.1, 1.0, 1.5, f64::NAN, f64::INFINITY] {
        let c = format!("decay {v}");
        assert_invalid(
            no_panic(&c, || {
                Psgld::<f64, 2>::new(PsgldSettings::new(0.1, v, 1e-3), X0)
            }),
            "decay",
            &c,
        );
    }
    // 2C − εB̂ < 0 (and the SGLD / SGNHT analogues).
    let mut s = SghmcSettings::new(0.1, 1.0);
    s.noise_estimate = 20.1;
    assert_invalid(Sghmc::<f64, 2>::new(s, X0), "noise_estimate", "2C < eps B");
    s.noise_estimate = 20.0;
    assert!(Sghmc::<f64, 2>::new(s, X0).is_ok(), "2C = eps B is allowed");
    let mut s = SgldSettings::new(0.1);
    s.noise_estimate = 20.1;
    assert_invalid(Sgld::<f64, 2>::new(s, X0), "noise_estimate", "2 < eps B");
    let mut s = SgnhtSettings::new(0.1, 0.5);
    s.noise_estimate = 10.1;
    assert_invalid(Sgnht::<f64, 2>::new(s, X0), "noise_estimate", "2A < eps B");
    // D = 0 and a non-finite start.
    assert_invalid(
        Sgld::<f64, 0>::new(SgldSettings::new(0.1), []),
        "D",
        "D = 0",
    );
    assert_invalid(
        Sgnht::<f64, 0>::new(SgnhtSettings::new(0.1, 1.0), []),
        "D",
        "D = 0",
    );
    assert_invalid(
        Sghmc::<f64, 0>::new(SghmcSettings::new(0.1, 1.0), []),
        "D",
        "D = 0",
    );
    for bad in [f64::NAN, f64::INFINITY] {
        assert_eq!(
            Sgld::<f64, 2>::new(SgldSettings::new(0.1), [0.0, bad]).err(),
            Some(Error::NonFiniteInitialState)
        );
        assert_eq!(
            Sgrhmc::<f64, 2, _>::new(
                SgrhmcSettings::new(0.1),
                [bad, 0.0],
                FaultyMetric::default()
            )
            .err(),
            Some(Error::NonFiniteInitialState)
        );
        assert_eq!(
            Psgld::<f64, 2>::new(PsgldSettings::new(0.1, 0.9, 1e-3), [bad, 0.0]).err(),
            Some(Error::NonFiniteInitialState)
        );
    }
}

#[test]
fn set_step_size_validates_and_keeps_old_settings() {
    let mut s = Sghmc::<f64, 2>::new(
        SghmcSettings {
            step_size: 0.1,
            friction: 1.0,
            noise_estimate: 10.0,
            mass: 1.0,
            update: SghmcUpdate::PositionFirst,
        },
        X0,
    )
    .unwrap();
    // ε = 0.3 would make 2C − εB̂ < 0.
    assert_invalid(s.set_step_size(0.3), "noise_estimate", "sghmc eps");
    assert_eq!(s.settings().step_size, 0.1);
    for v in NOT_POSITIVE {
        let mut a = Sgld::<f64, 2>::new(SgldSettings::new(0.1), X0).unwrap();
        assert_invalid(a.set_step_size(v), "step_size", "sgld");
        assert_eq!(a.settings().step_size, 0.1);
        let mut b = Psgld::<f64, 2>::new(PsgldSettings::new(0.1, 0.9, 1e-3), X0).unwrap();
        assert_invalid(b.set_step_size(v), "step_size", "psgld");
        let mut c =
            Sgrld::<f64, 2, _>::new(SgrldSettings::new(0.1), X0, FaultyMetric::default()).unwrap();
        assert_invalid(c.set_step_size(v), "step_size", "sgrld");
        let mut d = Sgrhmc::<f64, 2, _>::new(SgrhmcSettings::new(0.1), X0, FaultyMetric::default())
            .unwrap();
        assert_invalid(d.set_step_size(v), "step_size", "sgrhmc");
        let mut e = Sgnht::<f64, 2>::new(SgnhtSettings::new(0.1, 1.0), X0).unwrap();
        assert_invalid(e.set_step_size(v), "step_size", "sgnht");
        assert_eq!(e.settings().step_size, 0.1);
        assert_invalid(b.set_preconditioner([1.0, v]), "preconditioner", "psgld G");
        assert!(!b.is_frozen());
    }
    let mut e = Sgnht::<f64, 2>::new(SgnhtSettings::new(0.1, 1.0), X0).unwrap();
    assert_invalid(e.set_thermostat(f64::NAN), "thermostat", "xi");
    assert_invalid(e.set_momentum([f64::INFINITY, 0.0]), "momentum", "r");
}

/// A 2-D Gaussian whose gradient's first entry is replaced by `fault` while it
/// is `Some`. Its batch draws one u64 from the generator.
struct Faulty {
    fault: Cell<Option<f64>>,
}

impl MinibatchPotential<f64, 2> for Faulty {
    type Batch = u64;
    fn draw_batch<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        rng.next_u64()
    }
    fn minibatch_gradient(&self, batch: &u64, x: &[f64; 2], g: &mut [f64; 2]) {
        let jitter = (*batch >> 11) as f64 / 9_007_199_254_740_992.0 - 0.5;
        g[0] = 1.5 * x[0] + 0.2 * x[1] + jitter;
        g[1] = 0.2 * x[0] + x[1];
        if let Some(f) = self.fault.get() {
            g[0] = f;
        }
    }
}

/// Hessian diagonal of `Faulty` (1.5, 1), or `hessian_fault` in entry 0.
struct WithHessian<'a> {
    inner: &'a Faulty,
    hessian_fault: Option<f64>,
}

impl MinibatchPotential<f64, 2> for WithHessian<'_> {
    type Batch = u64;
    fn draw_batch<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        self.inner.draw_batch(rng)
    }
    fn minibatch_gradient(&self, batch: &u64, x: &[f64; 2], g: &mut [f64; 2]) {
        self.inner.minibatch_gradient(batch, x, g)
    }
}

impl MinibatchHessianDiagonal<f64, 2> for WithHessian<'_> {
    fn minibatch_hessian_diagonal(&self, _b: &u64, _x: &[f64; 2], out: &mut [f64; 2]) {
        *out = [self.hessian_fault.unwrap_or(1.5), 1.0];
    }
}

/// A metric that is fine unless `fault` is set, then returns it as G⁻¹₀₀.
#[derive(Debug, Clone, Default)]
struct FaultyMetric {
    fault: Cell<Option<f64>>,
}

impl FaultyMetric {
    /// Takes `other`'s fault: SGRLD and SGRHMC own their metric, which
    /// follows the one `exercise` and `fail_once` set faults on.
    fn mirror(&mut self, other: &FaultyMetric) {
        self.fault.set(other.fault.get());
    }
}

impl DiagonalRiemannianMetric<f64, 2> for FaultyMetric {
    fn inverse_metric(&self, x: &[f64; 2], inv: &mut [f64; 2], der: &mut [f64; 2]) {
        for i in 0..2 {
            let q = 1.0 + x[i] * x[i];
            inv[i] = 0.5 + 1.0 / q;
            der[i] = -2.0 * x[i] / (q * q);
        }
        if let Some(f) = self.fault.get() {
            inv[0] = f;
        }
    }
}

fn bits(xs: &[f64]) -> Vec<u64> {
    xs.iter().map(|x| x.to_bits()).collect()
}

/// Drives one sampler type through the fault cases. `snapshot` returns every
/// piece of state as bits; `step` takes one step with the given target/metric.
///
/// `overflow`, if given, is a fresh sampler with ε = 4 on which a gradient of
/// f64::MAX makes the proposal overflow (`NonFiniteProposal`); with the small ε
/// of the main sampler θ − ε·MAX stays finite.
fn exercise<S: Clone>(
    label: &str,
    mut sampler: S,
    overflow: Option<S>,
    snapshot: impl Fn(&S) -> Vec<u64>,
    step: impl Fn(&mut S, &Faulty, &FaultyMetric, &mut XorShiftRng) -> Result<(), Error>,
    uses_metric: bool,
) {
    let target = Faulty {
        fault: Cell::new(None),
    };
    let metric = FaultyMetric {
        fault: Cell::new(None),
    };
    let mut rng = XorShiftRng::seed_from_u64(9);
    for _ in 0..20 {
        step(&mut sampler, &target, &metric, &mut rng)
            .unwrap_or_else(|e| panic!("{label}: warm-up step failed: {e:?}"));
    }
    let mut cases: Vec<(&str, Option<f64>, Option<f64>, Error)> = vec![
        (
            "NaN gradient",
            Some(f64::NAN),
            None,
            Error::NonFiniteGradient,
        ),
        (
            "+inf gradient",
            Some(f64::INFINITY),
            None,
            Error::NonFiniteGradient,
        ),
        (
            "-inf gradient",
            Some(f64::NEG_INFINITY),
            None,
            Error::NonFiniteGradient,
        ),
    ];
    if uses_metric {
        cases.push(("NaN metric", None, Some(f64::NAN), Error::NonFiniteGradient));
        cases.push(("zero metric", None, Some(0.0), Error::NonFiniteGradient));
        cases.push((
            "negative metric",
            None,
            Some(-1.0),
            Error::NonFiniteGradient,
        ));
        cases.push((
            "infinite metric",
            None,
            Some(f64::INFINITY),
            Error::NonFiniteGradient,
        ));
    }
    for (case, gfault, mfault, expected) in cases {
        fail_once(
            &format!("{label}: {case}"),
            &mut sampler,
            &snapshot,
            &step,
            &target,
            &metric,
            gfault,
            mfault,
            expected,
            &mut rng,
        );
    }
    if let Some(mut fresh) = overflow {
        fail_once(
            &format!("{label}: overflowing proposal"),
            &mut fresh,
            &snapshot,
            &step,
            &target,
            &metric,
            Some(f64::MAX),
            None,
            Error::NonFiniteProposal,
            &mut rng,
        );
    }
}

/// One failing call: checks the error, the unchanged state, and the replay.
#[allow(clippy::too_many_arguments)]
fn fail_once<S: Clone>(
    what: &str,
    sampler: &mut S,
    snapshot: &impl Fn(&S) -> Vec<u64>,
    step: &impl Fn(&mut S, &Faulty, &FaultyMetric, &mut XorShiftRng) -> Result<(), Error>,
    target: &Faulty,
    metric: &FaultyMetric,
    gfault: Option<f64>,
    mfault: Option<f64>,
    expected: Error,
    rng: &mut XorShiftRng,
) {
    let before = snapshot(sampler);
    let clone = sampler.clone();
    target.fault.set(gfault);
    metric.fault.set(mfault);
    let r = no_panic(what, || step(sampler, target, metric, rng));
    assert_eq!(r, Err(expected), "{what}");
    assert_eq!(snapshot(sampler), before, "{what}: state changed");
    target.fault.set(None);
    metric.fault.set(None);
    // Replay: the sampler and the pre-call clone give the same chain (the same
    // results too: the ε = 4 overflow samplers may fail again later, identically).
    let mut other = clone;
    let (mut ra, mut rb) = (
        XorShiftRng::seed_from_u64(77),
        XorShiftRng::seed_from_u64(77),
    );
    for _ in 0..10 {
        let a = step(sampler, target, metric, &mut ra);
        let b = step(&mut other, target, metric, &mut rb);
        assert_eq!(a, b, "{what}: replay results differ");
        assert_eq!(
            snapshot(sampler),
            snapshot(&other),
            "{what}: replay differs"
        );
    }
}

#[test]
fn non_finite_gradients_metrics_and_proposals_leave_the_state_unchanged() {
    exercise(
        "SGLD",
        Sgld::<f64, 2>::new(SgldSettings::new(0.5), X0).unwrap(),
        Some(Sgld::<f64, 2>::new(SgldSettings::new(4.0), X0).unwrap()),
        |s| bits(s.position()),
        |s, t, _, r| s.step(t, r).map(|_| ()),
        false,
    );
    exercise(
        "pSGLD",
        Psgld::<f64, 2>::new(PsgldSettings::new(0.5, 0.9, 1.0), X0).unwrap(),
        None, // |G·g| < 1/λ: the adaptive preconditioner cannot overflow
        |s| {
            [
                bits(s.position()),
                bits(s.square_average()),
                bits(s.preconditioner()),
            ]
            .concat()
        },
        |s, t, _, r| s.step(t, r).map(|_| ()),
        false,
    );
    let mut frozen = Psgld::<f64, 2>::new(PsgldSettings::new(0.5, 0.9, 1.0), X0).unwrap();
    frozen.set_preconditioner([1.0, 2.0]).unwrap();
    let mut frozen4 = Psgld::<f64, 2>::new(PsgldSettings::new(4.0, 0.9, 1.0), X0).unwrap();
    frozen4.set_preconditioner([1.0, 2.0]).unwrap();
    exercise(
        "pSGLD frozen",
        frozen,
        Some(frozen4),
        |s| {
            [
                bits(s.position()),
                bits(s.square_average()),
                bits(s.preconditioner()),
            ]
            .concat()
        },
        |s, t, _, r| s.step(t, r).map(|_| ()),
        false,
    );
    exercise(
        "pSGLD with Γ",
        Psgld::<f64, 2>::new(PsgldSettings::new(0.5, 0.9, 1.0), X0).unwrap(),
        None, // as for pSGLD without Γ
        |s| {
            [
                bits(s.position()),
                bits(s.square_average()),
                bits(s.preconditioner()),
            ]
            .concat()
        },
        |s, t, _, r| {
            let h = WithHessian {
                inner: t,
                hessian_fault: None,
            };
            s.step_corrected(&h, r).map(|_| ())
        },
        false,
    );
    for c in [Correction::Included, Correction::Omitted] {
        let mut st = SgrldSettings::new(0.5);
        st.correction = c;
        let mut st4 = st;
        st4.step_size = 4.0;
        exercise(
            "SGRLD",
            Sgrld::<f64, 2, _>::new(st, X0, FaultyMetric::default()).unwrap(),
            Some(Sgrld::<f64, 2, _>::new(st4, X0, FaultyMetric::default()).unwrap()),
            |s| bits(s.position()),
            |s, t, m, r| {
                s.metric_mut().mirror(m);
                s.step(t, r).map(|_| ())
            },
            true,
        );
        let mut st = SgrhmcSettings::new(0.5);
        st.correction = c;
        let mut st4 = st;
        st4.step_size = 4.0;
        exercise(
            "SGRHMC",
            Sgrhmc::<f64, 2, _>::new(st, X0, FaultyMetric::default()).unwrap(),
            Some(Sgrhmc::<f64, 2, _>::new(st4, X0, FaultyMetric::default()).unwrap()),
            |s| [bits(s.position()), bits(s.momentum())].concat(),
            |s, t, m, r| {
                s.metric_mut().mirror(m);
                s.step(t, r).map(|_| ())
            },
            true,
        );
    }
    for update in [SghmcUpdate::PositionFirst, SghmcUpdate::RecipeEuler] {
        let settings = |eps: f64, c: f64| SghmcSettings {
            update,
            ..SghmcSettings::new(eps, c)
        };
        exercise(
            &format!("SGHMC {update:?}"),
            Sghmc::<f64, 2>::new(settings(0.5, 1.0), X0).unwrap(),
            Some(Sghmc::<f64, 2>::new(settings(4.0, 0.1), X0).unwrap()),
            |s| [bits(s.position()), bits(s.momentum())].concat(),
            |s, t, _, r| s.step(t, r).map(|_| ()),
            false,
        );
    }
    for th in [Thermostat::Adaptive, Thermostat::Fixed] {
        let mut st = SgnhtSettings::new(0.1, 1.0);
        st.thermostat = th;
        let mut st4 = SgnhtSettings::new(4.0, 0.1);
        st4.thermostat = th;
        exercise(
            "SGNHT",
            Sgnht::<f64, 2>::new(st, X0).unwrap(),
            Some(Sgnht::<f64, 2>::new(st4, X0).unwrap()),
            |s| {
                [
                    bits(s.position()),
                    bits(s.momentum()),
                    bits(&[s.thermostat()]),
                ]
                .concat()
            },
            |s, t, _, r| s.step(t, r).map(|_| ()),
            false,
        );
    }
}

/// SGRHMC with B̂ so large that 2G⁻¹(θ) − εB̂ < 0: the noise is undefined, the
/// step fails with `NonFiniteProposal` and changes nothing.
#[test]
fn sgrhmc_indefinite_noise_is_an_error() {
    let mut st = SgrhmcSettings::new(0.1);
    st.noise_estimate = 100.0; // 2G⁻¹ ≤ 3 < εB̂ = 10
    let mut s = Sgrhmc::<f64, 2, _>::new(st, X0, FaultyMetric::default()).unwrap();
    let target = Faulty {
        fault: Cell::new(None),
    };
    let mut rng = XorShiftRng::seed_from_u64(1);
    let before = [bits(s.position()), bits(s.momentum())].concat();
    assert_eq!(
        no_panic("indefinite", || s.step(&target, &mut rng)).err(),
        Some(Error::NonFiniteProposal)
    );
    assert_eq!([bits(s.position()), bits(s.momentum())].concat(), before);
}

/// pSGLD's corrected step with a NaN or infinite Hessian diagonal: the error is
/// `NonFiniteGradient` and nothing changes; a frozen preconditioner ignores the
/// Hessian (Γ = 0), so the same call then succeeds.
#[test]
fn psgld_non_finite_hessian_is_an_error() {
    let target = Faulty {
        fault: Cell::new(None),
    };
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut s = Psgld::<f64, 2>::new(PsgldSettings::new(0.1, 0.9, 1.0), X0).unwrap();
        let mut rng = XorShiftRng::seed_from_u64(3);
        let good = WithHessian {
            inner: &target,
            hessian_fault: None,
        };
        for _ in 0..5 {
            s.step_corrected(&good, &mut rng).unwrap();
        }
        let before = [
            bits(s.position()),
            bits(s.square_average()),
            bits(s.preconditioner()),
        ]
        .concat();
        let h = WithHessian {
            inner: &target,
            hessian_fault: Some(bad),
        };
        let r = no_panic("hessian", || s.step_corrected(&h, &mut rng));
        assert_eq!(r.err(), Some(Error::NonFiniteGradient), "hessian {bad}");
        assert_eq!(
            [
                bits(s.position()),
                bits(s.square_average()),
                bits(s.preconditioner())
            ]
            .concat(),
            before
        );
        s.freeze_preconditioner();
        assert!(
            s.step_corrected(&h, &mut rng).is_ok(),
            "frozen: Γ = 0, Hessian unused"
        );
    }
}

/// Position-first SGHMC with a momentum so large that θ + εr/m overflows: the
/// step is `NonFiniteProposal`, found before the gradient is evaluated (the
/// target is never called at a non-finite θ), after the batch and the D
/// normals are drawn (the generator advances exactly as in a normal step);
/// the sampler is unchanged and steps on normally once r is reset.
#[test]
fn sghmc_position_first_overflowing_position_is_refused_before_the_gradient() {
    struct Watch {
        inner: Faulty,
        calls: Cell<usize>,
    }
    impl MinibatchPotential<f64, 2> for Watch {
        type Batch = u64;
        fn draw_batch<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
            self.inner.draw_batch(rng)
        }
        fn minibatch_gradient(&self, b: &u64, x: &[f64; 2], g: &mut [f64; 2]) {
            assert!(x.iter().all(|v| v.is_finite()), "gradient at {x:?}");
            self.calls.set(self.calls.get() + 1);
            self.inner.minibatch_gradient(b, x, g)
        }
    }
    let target = Watch {
        inner: Faulty {
            fault: Cell::new(None),
        },
        calls: Cell::new(0),
    };
    let mut s = Sghmc::<f64, 2>::new(SghmcSettings::new(4.0, 0.1), X0).unwrap();
    s.set_momentum([f64::MAX, 0.0]).unwrap();
    let before = [bits(s.position()), bits(s.momentum())].concat();
    let mut rng = XorShiftRng::seed_from_u64(4);
    let r = no_panic("overflowing θ", || s.step(&target, &mut rng));
    assert_eq!(r.err(), Some(Error::NonFiniteProposal));
    assert_eq!(target.calls.get(), 0, "gradient evaluated");
    assert_eq!([bits(s.position()), bits(s.momentum())].concat(), before);
    // The generator moved by one batch (one u64) and two normals.
    let mut expected = XorShiftRng::seed_from_u64(4);
    let _ = expected.next_u64();
    let mut w = [0.0f64; 2];
    qnmc::random::fill_standard_normal(&mut expected, &mut w);
    assert_eq!(rng.next_u64(), expected.next_u64());
    s.set_momentum([0.0, 0.0]).unwrap();
    assert!(s.step(&target, &mut rng).is_ok());
    assert_eq!(target.calls.get(), 1);
}
