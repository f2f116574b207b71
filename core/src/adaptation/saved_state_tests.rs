//! [`crate::saved_state`] on the samplers and warm-ups: a sampler saved at
//! any iteration and restored into another instance continues with the same
//! draws, bit for bit; bytes of another type, cut short or altered are
//! refused and leave the value unchanged. (Here, in the adaptation layer,
//! which may use every sampler; `saved_state` itself uses nothing.)

use crate::adaptation::{
    AdaptiveNuts, DiagonalEstimator, DualAveragingSettings, LbfgsEstimator, Warmup, WarmupSchedule,
};
use crate::metric::{DiagonalMetric, LbfgsMetric};
use crate::samplers::{Hmc, HmcSettings, NutsSettings, Qnhmc, QnhmcSettings};
use crate::saved_state::{SavedState, StateError, restore, save, saved_len};
use crate::{Potential, Real, Step};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

/// A correlated Gaussian in 4 dimensions, scales 0.1 to 10.
struct Correlated;

impl<T: Real> Potential<T, 4> for Correlated {
    fn potential_and_gradient(&self, x: &[T; 4], g: &mut [T; 4]) -> T {
        let scale = [0.1, 1.0, 3.0, 10.0];
        let mut u = T::ZERO;
        for i in 0..4 {
            let next = x[(i + 1) % 4];
            let z = (x[i] - T::from_f64(0.5) * next) / T::from_f64(scale[i]);
            u += T::from_f64(0.5) * z * z;
        }
        for (i, gi) in g.iter_mut().enumerate() {
            let own = (x[i] - T::from_f64(0.5) * x[(i + 1) % 4]) / T::from_f64(scale[i] * scale[i]);
            let j = (i + 3) % 4;
            let from_previous = (x[j] - T::from_f64(0.5) * x[i]) / T::from_f64(scale[j] * scale[j]);
            *gi = own - T::from_f64(0.5) * from_previous;
        }
        u
    }
}

/// Runs `a` for `before` steps, saves it, restores the bytes into `b` (a
/// sampler of the same type in another state), and checks that both then
/// make the same `after` draws, bit for bit, with copies of one generator.
fn continues_bit_for_bit<T: Real, S>(
    mut a: S,
    mut b: S,
    step: impl Fn(&mut S, &mut XorShiftRng),
    position: impl Fn(&S) -> [T; 4],
    before: usize,
    after: usize,
) where
    S: SavedState,
{
    let mut rng = XorShiftRng::seed_from_u64(17);
    for _ in 0..before {
        step(&mut a, &mut rng);
    }
    let (buffer, n) = saved(&a);
    let bytes = &buffer[..n];
    assert_ne!(position(&a).map(T::to_f64), position(&b).map(T::to_f64));
    restore(&mut b, bytes).unwrap();
    let mut rng_b = rng.clone();
    for k in 0..after {
        step(&mut a, &mut rng);
        step(&mut b, &mut rng_b);
        let bits = |s: &S| position(s).map(|x| x.to_f64().to_bits());
        assert_eq!(bits(&a), bits(&b), "draw {k} after the restore");
    }
    // Saved again, the two are the same bytes.
    let (again, n_again) = saved(&b);
    let (of_a, n_of_a) = saved(&a);
    assert_eq!(again[..n_again], of_a[..n_of_a]);
}

/// Room for every state saved here (the core's tests allocate nothing).
const BUFFER: usize = 1 << 15;

/// `value`'s saved state in the first bytes of a buffer, and their number.
fn saved<S: SavedState>(value: &S) -> ([u8; BUFFER], usize) {
    let mut buffer = [0u8; BUFFER];
    let n = saved_len(value);
    assert!(n < BUFFER, "{n} bytes");
    assert_eq!(save(value, &mut buffer), Ok(n));
    (buffer, n)
}

type NutsLbfgs = AdaptiveNuts<f64, 4, LbfgsEstimator<f64, 4, 3>, 8>;

fn nuts_lbfgs(start: [f64; 4]) -> NutsLbfgs {
    let mut nuts = NutsSettings::new(0.3);
    nuts.max_tree_depth = 8;
    let mut chain = AdaptiveNuts::new(
        nuts,
        WarmupSchedule::stan(300).unwrap(),
        LbfgsMetric::identity(),
        LbfgsEstimator::new(0.1).unwrap(),
        start,
        &Correlated,
    )
    .unwrap();
    chain.set_jitter(0.1).unwrap();
    chain
}

/// NUTS with the learned quasi-Newton metric, saved in its first window,
/// between two window ends, in its terminal buffer and after its warm-up
/// (with the step-size jitter drawing from the generator).
#[test]
fn nuts_with_the_lbfgs_metric_continues_from_any_draw() {
    for before in [3, 120, 280, 350] {
        continues_bit_for_bit(
            nuts_lbfgs([0.1, 0.2, -0.3, 1.0]),
            nuts_lbfgs([1.0, -1.0, 2.0, 0.0]),
            |s, rng| {
                s.step(&Correlated, rng);
            },
            |s| *s.position(),
            before,
            150,
        );
    }
}

#[test]
fn nuts_with_the_diagonal_metric_continues() {
    let mut nuts = NutsSettings::new(0.3);
    nuts.max_tree_depth = 8;
    let chain = |start| {
        AdaptiveNuts::<f64, 4, DiagonalEstimator<f64, 4>, 8>::new(
            nuts,
            WarmupSchedule::stan(200).unwrap(),
            DiagonalMetric::identity(),
            DiagonalEstimator::new(),
            start,
            &Correlated,
        )
        .unwrap()
    };
    continues_bit_for_bit(
        chain([0.1, 0.2, -0.3, 1.0]),
        chain([0.0; 4]),
        |s, rng| {
            s.step(&Correlated, rng);
        },
        |s| *s.position(),
        90,
        200,
    );
}

#[test]
fn hmc_continues_in_f32_and_f64() {
    let settings64 = HmcSettings::new(0.05, 10);
    continues_bit_for_bit(
        Hmc::new(settings64, [0.1, 0.2, -0.3, 1.0], &Correlated).unwrap(),
        Hmc::new(settings64, [0.0; 4], &Correlated).unwrap(),
        |s, rng| {
            let _ = Step::step(s, &Correlated, rng);
        },
        |s: &Hmc<f64, 4, _>| *s.position(),
        40,
        100,
    );
    let settings32 = HmcSettings::new(0.05f32, 10);
    continues_bit_for_bit(
        Hmc::new(settings32, [0.1, 0.2, -0.3, 1.0], &Correlated).unwrap(),
        Hmc::new(settings32, [0.0; 4], &Correlated).unwrap(),
        |s, rng| {
            let _ = Step::step(s, &Correlated, rng);
        },
        |s: &Hmc<f32, 4, _>| *s.position(),
        40,
        100,
    );
}

/// HMC with the step size's dual averaging (`Warmup`), saved as a pair in
/// its warm-up and after it (the jitter draws from the generator).
#[test]
fn hmc_with_its_warmup_continues() {
    let pair = |start| {
        let hmc = Hmc::new(HmcSettings::new(0.5, 8), start, &Correlated).unwrap();
        let mut warmup = Warmup::new(DualAveragingSettings::stan(0.5), 100, 0.1).unwrap();
        let mut hmc = hmc;
        warmup
            .start(&mut hmc, &mut XorShiftRng::seed_from_u64(3))
            .unwrap();
        (hmc, warmup)
    };
    let step = |(hmc, warmup): &mut (Hmc<f64, 4, _>, Warmup<f64>), rng: &mut XorShiftRng| {
        let stats = hmc.step(&Correlated, rng);
        warmup.after_draw(hmc, &stats, rng).unwrap();
    };
    for before in [30, 150] {
        continues_bit_for_bit(
            pair([0.1, 0.2, -0.3, 1.0]),
            pair([0.0; 4]),
            step,
            |(hmc, _)| *hmc.position(),
            before,
            100,
        );
    }
}

/// QNHMC's L-BFGS memory (the ring of pairs, its product-form factors).
#[test]
fn qnhmc_continues_with_its_memory() {
    let settings = QnhmcSettings::new(0.05, 8, 3);
    let chain = |start| Qnhmc::<f64, 4, 3>::new(settings, start, &Correlated).unwrap();
    continues_bit_for_bit(
        chain([0.1, 0.2, -0.3, 1.0]),
        chain([0.0; 4]),
        |s, rng| {
            let _ = Step::step(s, &Correlated, rng);
        },
        |s| *s.position(),
        60,
        100,
    );
}

/// Bytes of another type, cut short, altered, of another format, or not a
/// state at all are refused, and the value is left as it was; a buffer
/// too small is refused by `save`.
#[test]
fn bad_bytes_are_refused_and_change_nothing() {
    let settings = HmcSettings::new(0.05, 10);
    let a = Hmc::new(settings, [0.1, 0.2, -0.3, 1.0], &Correlated).unwrap();
    let (buffer, n) = saved(&a);
    let bytes = &buffer[..n];
    let mut b = Hmc::new(settings, [0.5; 4], &Correlated).unwrap();
    let unchanged = |b: &Hmc<f64, 4, _>| assert_eq!(*b.position(), [0.5; 4]);

    let mut short = buffer;
    assert_eq!(
        save(&a, &mut short[..n - 1]),
        Err(StateError::BufferTooSmall {
            needed: bytes.len()
        })
    );
    assert_eq!(
        restore(&mut b, &bytes[..bytes.len() - 1]),
        Err(StateError::WrongLength)
    );
    unchanged(&b);
    assert_eq!(
        restore(&mut b, &buffer[..n + 1]),
        Err(StateError::WrongLength)
    );
    for at in [40, bytes.len() / 2, bytes.len() - 9] {
        let mut altered = buffer;
        altered[at] ^= 1;
        assert_eq!(
            restore(&mut b, &altered[..n]),
            Err(StateError::Corrupt),
            "byte {at}"
        );
        unchanged(&b);
    }
    let mut other_version = buffer;
    other_version[8] = 9;
    assert_eq!(
        restore(&mut b, &other_version[..n]),
        Err(StateError::Version { found: 9 })
    );
    assert_eq!(
        restore(&mut b, b"not a state at all, no"),
        Err(StateError::NotAState)
    );
    assert_eq!(restore(&mut b, &[]), Err(StateError::WrongLength));
    unchanged(&b);
    // The same sampler in f32, or in another dimension: another type.
    let mut single = Hmc::new(HmcSettings::new(0.05f32, 10), [0.5; 4], &Correlated).unwrap();
    assert_eq!(restore(&mut single, bytes), Err(StateError::WrongType));
    let mut wider: [f64; 5] = [0.0; 5];
    assert_eq!(restore(&mut wider, bytes), Err(StateError::WrongType));
    restore(&mut b, bytes).unwrap();
    assert_eq!(b.position(), a.position());
}
