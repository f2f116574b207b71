//! The complete-recipe samplers never touch the heap: 1000 steps of each (f32
//! and f64, every mode) run inside a region where a counting global allocator
//! records every alloc/realloc/dealloc of this thread, and the count must be 0.
//! The counter itself is checked on a `Vec` (negative control), as in
//! `no_heap::hmc` (the allocator is `qnmc_tests::heap`, installed by `main.rs`).

use std::hint::black_box;

use qnmc::Real;
use qnmc::samplers::recipe::{
    Correction, Psgld, PsgldSettings, Sghmc, SghmcSettings, SghmcUpdate, Sgld, SgldSettings, Sgnht,
    SgnhtSettings, Sgrhmc, SgrhmcSettings, Sgrld, SgrldSettings, Thermostat,
};
use qnmc_tests::heap::count_heap;
use qnmc_tests::recipe::{BumpMetric, DoubleWell, DoubleWellMetric, NoisyGaussian};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

const STEPS: usize = 1000;

#[test]
fn counter_sees_allocations() {
    let (n, ()) = count_heap(|| {
        let v: Vec<u8> = Vec::with_capacity(1);
        black_box(&v);
    });
    assert_eq!(n, 2);
    let (n, x) = count_heap(|| black_box(1u64 + 2));
    assert_eq!((n, x), (0, 3));
}

fn target() -> NoisyGaussian<4> {
    NoisyGaussian {
        precision: [
            [2.0, 0.3, 0.0, 0.0],
            [0.3, 1.0, 0.2, 0.0],
            [0.0, 0.2, 1.5, 0.1],
            [0.0, 0.0, 0.1, 1.0],
        ],
        noise_sd: 0.5,
    }
}

/// Runs `STEPS` steps of `step` in a measured region; asserts no heap event,
/// every step Ok, and the chain moved.
fn check<T: Real, const D: usize>(
    label: &str,
    mut step: impl FnMut(&mut XorShiftRng) -> bool,
    position: impl Fn() -> [T; D],
) {
    let before = position();
    let mut rng = XorShiftRng::seed_from_u64(5);
    let (events, ok) = count_heap(|| {
        let mut ok = 0usize;
        for _ in 0..STEPS {
            ok += step(&mut rng) as usize;
        }
        ok
    });
    assert_eq!(events, 0, "{label}: {events} heap events");
    assert_eq!(ok, STEPS, "{label}: failed steps");
    assert_ne!(before, position(), "{label}: did not move");
}

macro_rules! run {
    ($label:expr, $s:expr, |$x:ident, $rng:ident| $body:expr) => {{
        let s = std::cell::RefCell::new($s);
        check(
            $label,
            |$rng| {
                let mut $x = s.borrow_mut();
                let r = $body;
                r.is_ok()
            },
            || *s.borrow().position(),
        );
    }};
}

fn all_samplers<T: Real>() {
    let t = target();
    let x0 = [
        T::from_f64(1.0),
        T::from_f64(-1.0),
        T::from_f64(0.5),
        T::from_f64(0.2),
    ];
    let eps = T::from_f64(0.02);
    run!(
        "SGLD",
        Sgld::<T, 4>::new(SgldSettings::new(eps), x0).unwrap(),
        |s, rng| s.step(&t, rng)
    );
    run!(
        "pSGLD adaptive",
        Psgld::<T, 4>::new(
            PsgldSettings::new(eps, T::from_f64(0.99), T::from_f64(0.1)),
            x0
        )
        .unwrap(),
        |s, rng| s.step(&t, rng)
    );
    run!(
        "pSGLD corrected",
        Psgld::<T, 4>::new(
            PsgldSettings::new(eps, T::from_f64(0.99), T::from_f64(0.1)),
            x0
        )
        .unwrap(),
        |s, rng| s.step_corrected(&t, rng)
    );
    let mut frozen = Psgld::<T, 4>::new(
        PsgldSettings::new(eps, T::from_f64(0.99), T::from_f64(0.1)),
        x0,
    )
    .unwrap();
    frozen.set_preconditioner([T::from_f64(0.5); 4]).unwrap();
    run!("pSGLD frozen", frozen, |s, rng| s.step(&t, rng));
    for c in [Correction::Included, Correction::Omitted] {
        let mut st = SgrldSettings::new(eps);
        st.correction = c;
        run!(
            "SGRLD",
            Sgrld::<T, 4, _>::new(st, x0, BumpMetric).unwrap(),
            |s, rng| s.step(&t, rng)
        );
        let mut st = SgrhmcSettings::new(eps);
        st.correction = c;
        run!(
            "SGRHMC",
            Sgrhmc::<T, 4, _>::new(st, x0, BumpMetric).unwrap(),
            |s, rng| s.step(&t, rng)
        );
    }
    for update in [SghmcUpdate::PositionFirst, SghmcUpdate::RecipeEuler] {
        let mut st = SghmcSettings::new(eps, T::ONE);
        st.update = update;
        run!("SGHMC", Sghmc::<T, 4>::new(st, x0).unwrap(), |s, rng| s
            .step(&t, rng));
    }
    for th in [Thermostat::Adaptive, Thermostat::Fixed] {
        let mut st = SgnhtSettings::new(eps, T::ONE);
        st.thermostat = th;
        run!("SGNHT", Sgnht::<T, 4>::new(st, x0).unwrap(), |s, rng| s
            .step(&t, rng));
    }
    let metric = DoubleWellMetric { offset: 1.05 };
    run!(
        "SGRHMC toy",
        Sgrhmc::<T, 1, _>::new(
            SgrhmcSettings::new(T::from_f64(0.005)),
            [T::from_f64(0.3)],
            &metric
        )
        .unwrap(),
        |s, rng| s.step(&DoubleWell, rng)
    );
}

#[test]
fn recipe_samplers_do_not_allocate_f64() {
    all_samplers::<f64>();
}

#[test]
fn recipe_samplers_do_not_allocate_f32() {
    all_samplers::<f32>();
}
