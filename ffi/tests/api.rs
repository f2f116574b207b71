//! The C API from Rust: bad input gives error codes (never a panic or UB), a
//! non-finite density during a draw is a counted divergence, and the chains
//! equal the Rust API's bit for bit (NUTS of every metric in f64 and f32 at
//! run-time dimension 3 against `AdaptiveNuts` of size 3; HMC against
//! `Hmc<T, MAX_DIMENSION>` on the padded target).

#![allow(clippy::needless_range_loop)]

mod model;

use core::ffi::{CStr, c_int, c_void};
use core::mem::MaybeUninit;
use core::ptr::{null, null_mut};

use model::{Calibration, Readings, log_density_f32, log_density_f64, rust_nuts_chain};
use qnmc::adaptation::{
    DiagonalEstimator, IdentityEstimator, LbfgsEstimator, LbfgsEstimatorSettings,
};
use qnmc::{Hmc, HmcSettings, Potential, Real};
use qnmc_ffi::*;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

/// 64-byte aligned storage (the states' alignment on x86-64).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Block([u8; 64]);

/// A zeroed, 64-aligned buffer of at least `bytes` bytes.
fn buffer(bytes: usize) -> Vec<Block> {
    vec![Block([0; 64]); bytes.div_ceil(64) + 1]
}

fn nuts_size(scalar: c_int, metric: c_int) -> usize {
    qnmc_nuts_state_size(scalar, metric)
}

fn settings(metric: c_int) -> QnmcNutsSettings {
    let mut s = MaybeUninit::uninit();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { qnmc_nuts_settings_default(s.as_mut_ptr()) }, 0);
    // SAFETY: written above.
    let mut s = unsafe { s.assume_init() };
    s.metric = metric;
    s
}

const OK: c_int = Status::Ok as c_int;

fn code(s: Status) -> c_int {
    s.code()
}

#[test]
fn sizes_and_limits() {
    assert_eq!(qnmc_max_dimension(), MAX_DIMENSION);
    assert_eq!(qnmc_lbfgs_memory(), LBFGS_MEMORY);
    assert_eq!(qnmc_max_tree_depth() as usize, MAX_TREE_DEPTH);
    for scalar in [QNMC_F64, QNMC_F32] {
        for metric in [
            QNMC_METRIC_QUASI_NEWTON,
            QNMC_METRIC_DIAGONAL,
            QNMC_METRIC_IDENTITY,
        ] {
            let size = qnmc_nuts_state_size(scalar, metric);
            let align = qnmc_nuts_state_align(scalar, metric);
            assert!(size > 0 && align.is_power_of_two() && align <= 64);
        }
        assert!(qnmc_hmc_state_size(scalar) > 0);
        assert!(qnmc_hmc_state_align(scalar).is_power_of_two());
    }
    assert_eq!(qnmc_nuts_state_size(2, 0), 0);
    assert_eq!(qnmc_nuts_state_size(0, 3), 0);
    assert_eq!(qnmc_nuts_state_align(-1, 0), 0);
    assert_eq!(qnmc_hmc_state_size(7), 0);
    assert_eq!(qnmc_hmc_state_align(7), 0);
    // The quasi-Newton state is the largest; f32 states are smaller.
    assert!(nuts_size(QNMC_F64, 0) > nuts_size(QNMC_F64, 1));
    assert!(nuts_size(QNMC_F64, 1) > nuts_size(QNMC_F64, 2));
    assert!(nuts_size(QNMC_F32, 0) < nuts_size(QNMC_F64, 0));
}

#[test]
fn error_messages_cover_every_code() {
    for status in Status::ALL {
        // SAFETY: a static NUL-terminated string.
        let text = unsafe { CStr::from_ptr(qnmc_error_message(status.code())) };
        assert!(!text.to_bytes().is_empty());
        assert_eq!(text, status.message());
    }
    for unknown in [-1, 12, c_int::MAX, c_int::MIN] {
        // SAFETY: as above.
        let text = unsafe { CStr::from_ptr(qnmc_error_message(unknown)) };
        assert_eq!(text, c"unknown qnmc status code");
    }
}

#[test]
fn bad_input_returns_error_codes() {
    let data = Readings::new();
    let ctx = &data as *const Readings as *mut c_void;
    let x0 = [0.0, 1.0, 0.0];
    let qn = settings(QNMC_METRIC_QUASI_NEWTON);
    let need = nuts_size(QNMC_F64, QNMC_METRIC_QUASI_NEWTON);
    let mut buf = buffer(need);
    let p = buf.as_mut_ptr().cast::<c_void>();
    let init = |p: *mut c_void, size: usize, s: *const QnmcNutsSettings, x: *const f64, dim| {
        // SAFETY: every pointer is null or valid for what it claims.
        unsafe { qnmc_nuts_init_f64(p, size, s, 1, x, dim, Some(log_density_f64), ctx) }
    };
    // Null pointers.
    assert_eq!(
        init(null_mut(), need, &qn, x0.as_ptr(), 3),
        code(Status::NullPointer)
    );
    assert_eq!(init(p, need, &qn, null(), 3), code(Status::NullPointer));
    // SAFETY: as above, with a null callback.
    let no_callback = unsafe { qnmc_nuts_init_f64(p, need, &qn, 1, x0.as_ptr(), 3, None, ctx) };
    assert_eq!(no_callback, code(Status::NullPointer));
    // Too little memory, misaligned memory.
    assert_eq!(
        init(p, need - 1, &qn, x0.as_ptr(), 3),
        code(Status::BufferTooSmall)
    );
    assert_eq!(
        init(p, 0, &qn, x0.as_ptr(), 3),
        code(Status::BufferTooSmall)
    );
    // SAFETY: one byte into the buffer, still inside it.
    let odd = unsafe { p.cast::<u8>().add(8) }.cast::<c_void>();
    assert_eq!(
        init(odd, need, &qn, x0.as_ptr(), 3),
        code(Status::Misaligned)
    );
    // SAFETY: as above.
    let odd_x = unsafe { x0.as_ptr().cast::<u8>().add(1) }.cast::<f64>();
    assert_eq!(init(p, need, &qn, odd_x, 3), code(Status::Misaligned));
    // Dimensions.
    let big = vec![0.0; MAX_DIMENSION + 1];
    assert_eq!(
        init(p, need, &qn, x0.as_ptr(), 0),
        code(Status::InvalidDimension)
    );
    assert_eq!(
        init(p, need, &qn, big.as_ptr(), MAX_DIMENSION + 1),
        code(Status::InvalidDimension)
    );
    assert_eq!(
        init(p, need, &qn, big.as_ptr(), usize::MAX),
        code(Status::InvalidDimension)
    );
    // Settings: NaN, out of range, unknown metric.
    for change in [
        (|s: &mut QnmcNutsSettings| s.initial_step_size = f64::NAN) as fn(&mut QnmcNutsSettings),
        |s| s.initial_step_size = -1.0,
        |s| s.initial_step_size = f64::INFINITY,
        |s| s.target_acceptance = 1.0,
        |s| s.target_acceptance = f64::NAN,
        |s| s.max_energy_error = 0.0,
        |s| s.max_tree_depth = 0,
        |s| s.max_tree_depth = MAX_TREE_DEPTH as u32 + 1,
        |s| s.max_pairs = 0,
        |s| s.optimize = 2,
        |s| s.rank_tolerance = f64::NAN,
        |s| s.jitter = 1.0,
        |s| s.jitter = f64::NAN,
    ] {
        let mut bad = qn;
        change(&mut bad);
        assert_eq!(
            init(p, need, &bad, x0.as_ptr(), 3),
            code(Status::InvalidSetting),
            "{bad:?}"
        );
    }
    for metric in [-1, 3, c_int::MAX] {
        let mut bad = qn;
        bad.metric = metric;
        assert_eq!(
            init(p, need, &bad, x0.as_ptr(), 3),
            code(Status::InvalidArgument)
        );
    }
    // A non-finite initial point or density at it.
    assert_eq!(
        init(p, need, &qn, [f64::NAN, 1.0, 0.0].as_ptr(), 3),
        code(Status::NonFiniteInitialState)
    );
    unsafe extern "C" fn nan_density(_: *mut c_void, _: *const f64, _: *mut f64) -> f64 {
        f64::NAN
    }
    // SAFETY: valid arguments.
    let nan =
        unsafe { qnmc_nuts_init_f64(p, need, &qn, 1, x0.as_ptr(), 3, Some(nan_density), ctx) };
    assert_eq!(nan, code(Status::NonFiniteInitialState));
    // After any failed init the buffer holds no sampler.
    let mut stats = QnmcStats::default();
    let mut warm: c_int = -1;
    let mut out = [0.0; 3];
    // SAFETY: valid pointers to a buffer whose init failed.
    unsafe {
        assert_eq!(qnmc_nuts_step(p, &mut stats), code(Status::NotInitialized));
        assert_eq!(
            qnmc_nuts_is_warming_up(p, &mut warm),
            code(Status::NotInitialized)
        );
        assert_eq!(
            qnmc_nuts_position_f64(p, out.as_mut_ptr(), 3),
            code(Status::NotInitialized)
        );
        assert_eq!(qnmc_hmc_step(p, &mut stats), code(Status::NotInitialized));
    }
    // A good init (settings NULL: the defaults), then bad calls on it.
    assert_eq!(init(p, need, null(), x0.as_ptr(), 3), OK);
    // SAFETY: null, misaligned or too short arguments, each checked.
    unsafe {
        assert_eq!(
            qnmc_nuts_step(null_mut(), &mut stats),
            code(Status::NullPointer)
        );
        assert_eq!(qnmc_nuts_step(p, null_mut()), code(Status::NullPointer));
        assert_eq!(
            qnmc_nuts_step(odd, &mut stats),
            code(Status::NotInitialized)
        );
        let odd4 = p.cast::<u8>().add(4).cast::<c_void>();
        assert_eq!(qnmc_nuts_step(odd4, &mut stats), code(Status::Misaligned));
        assert_eq!(
            qnmc_nuts_is_warming_up(p, null_mut()),
            code(Status::NullPointer)
        );
        assert_eq!(
            qnmc_nuts_is_warming_up(null(), &mut warm),
            code(Status::NullPointer)
        );
        assert_eq!(
            qnmc_nuts_position_f64(p, null_mut(), 3),
            code(Status::NullPointer)
        );
        assert_eq!(
            qnmc_nuts_position_f64(p, out.as_mut_ptr(), 2),
            code(Status::BufferTooSmall)
        );
        // The wrong scalar type or sampler kind.
        let mut out32 = [0.0f32; 3];
        assert_eq!(
            qnmc_nuts_position_f32(p, out32.as_mut_ptr(), 3),
            code(Status::NotInitialized)
        );
        assert_eq!(
            qnmc_hmc_position_f64(p, out.as_mut_ptr(), 3),
            code(Status::NotInitialized)
        );
        assert_eq!(
            qnmc_nuts_settings_default(null_mut()),
            code(Status::NullPointer)
        );
        // Still usable.
        assert_eq!(qnmc_nuts_is_warming_up(p, &mut warm), OK);
        assert_eq!(warm, 1);
        assert_eq!(qnmc_nuts_step(p, &mut stats), OK);
        assert_eq!(qnmc_nuts_position_f64(p, out.as_mut_ptr(), 3), OK);
        assert_eq!(stats.warmup, 1);
        // A failed re-init of the same buffer leaves no sampler behind.
        assert_eq!(
            init(p, 8, &qn, x0.as_ptr(), 3),
            code(Status::BufferTooSmall)
        );
        assert_eq!(qnmc_nuts_step(p, &mut stats), code(Status::NotInitialized));
    }
    // HMC's own checks.
    let hmc_need = qnmc_hmc_state_size(QNMC_F64);
    let hmc = |p: *mut c_void, size: usize, eps: f64, l: u32, x: *const f64, dim: usize| {
        // SAFETY: as above.
        unsafe { qnmc_hmc_init_f64(p, size, eps, l, 3, x, dim, Some(log_density_f64), ctx) }
    };
    assert_eq!(
        hmc(null_mut(), hmc_need, 0.1, 5, x0.as_ptr(), 3),
        code(Status::NullPointer)
    );
    assert_eq!(
        hmc(p, hmc_need - 1, 0.1, 5, x0.as_ptr(), 3),
        code(Status::BufferTooSmall)
    );
    assert_eq!(
        hmc(odd, hmc_need, 0.1, 5, x0.as_ptr(), 3),
        code(Status::Misaligned)
    );
    assert_eq!(
        hmc(p, hmc_need, 0.1, 5, x0.as_ptr(), 0),
        code(Status::InvalidDimension)
    );
    assert_eq!(
        hmc(p, hmc_need, f64::NAN, 5, x0.as_ptr(), 3),
        code(Status::InvalidSetting)
    );
    assert_eq!(
        hmc(p, hmc_need, 0.1, 0, x0.as_ptr(), 3),
        code(Status::InvalidSetting)
    );
    // SAFETY: as above, NaN density.
    let nan = unsafe {
        qnmc_hmc_init_f64(
            p,
            hmc_need,
            0.1,
            5,
            3,
            x0.as_ptr(),
            3,
            Some(nan_density),
            ctx,
        )
    };
    assert_eq!(nan, code(Status::NonFiniteInitialState));
    assert_eq!(hmc(p, hmc_need, 0.01, 5, x0.as_ptr(), 3), OK);
    // SAFETY: valid and invalid calls on an HMC state.
    unsafe {
        assert_eq!(qnmc_nuts_step(p, &mut stats), code(Status::NotInitialized));
        assert_eq!(qnmc_hmc_step(p, null_mut()), code(Status::NullPointer));
        assert_eq!(qnmc_hmc_step(p, &mut stats), OK);
        assert_eq!(
            qnmc_hmc_position_f64(p, out.as_mut_ptr(), 2),
            code(Status::BufferTooSmall)
        );
        assert_eq!(qnmc_hmc_position_f64(p, out.as_mut_ptr(), 3), OK);
    }
}

/// NaN above θ₀ = 0.7 (and a NaN gradient entry below −0.7): draws that
/// reach there diverge, are counted, and the chain goes on.
unsafe extern "C" fn walled(_: *mut c_void, theta: *const f64, grad: *mut f64) -> f64 {
    // SAFETY: dim = 2.
    let (x, g) = unsafe {
        (
            core::slice::from_raw_parts(theta, 2),
            core::slice::from_raw_parts_mut(grad, 2),
        )
    };
    g[0] = if x[0] < -0.7 { f64::NAN } else { -x[0] };
    g[1] = -x[1];
    if x[0] > 0.7 {
        f64::NAN
    } else {
        -0.5 * (x[0] * x[0] + x[1] * x[1])
    }
}

#[test]
fn a_non_finite_density_is_a_counted_divergence() {
    for metric in [
        QNMC_METRIC_QUASI_NEWTON,
        QNMC_METRIC_DIAGONAL,
        QNMC_METRIC_IDENTITY,
    ] {
        let mut s = settings(metric);
        s.warmup_draws = 200;
        let mut buf = buffer(nuts_size(QNMC_F64, metric));
        let p = buf.as_mut_ptr().cast::<c_void>();
        let size = buf.len() * 64;
        let x0 = [0.1, 0.2];
        // SAFETY: valid arguments.
        let status =
            unsafe { qnmc_nuts_init_f64(p, size, &s, 5, x0.as_ptr(), 2, Some(walled), null_mut()) };
        assert_eq!(status, OK);
        let mut divergent = 0;
        for _ in 0..600 {
            let mut stats = QnmcStats::default();
            let mut x = [0.0; 2];
            // SAFETY: an initialised state.
            unsafe {
                assert_eq!(qnmc_nuts_step(p, &mut stats), OK);
                assert_eq!(qnmc_nuts_position_f64(p, x.as_mut_ptr(), 2), OK);
            }
            assert!(x[0].abs() <= 0.7 && stats.log_density.is_finite(), "{x:?}");
            divergent += stats.divergent;
        }
        assert!(divergent > 0, "metric {metric}: no divergence counted");
    }
    // HMC too.
    let mut buf = buffer(qnmc_hmc_state_size(QNMC_F64));
    let p = buf.as_mut_ptr().cast::<c_void>();
    let size = buf.len() * 64;
    // SAFETY: valid arguments.
    let status = unsafe {
        qnmc_hmc_init_f64(
            p,
            size,
            0.5,
            4,
            5,
            [0.1, 0.2].as_ptr(),
            2,
            Some(walled),
            null_mut(),
        )
    };
    assert_eq!(status, OK);
    let mut divergent = 0;
    for _ in 0..300 {
        let mut stats = QnmcStats::default();
        // SAFETY: an initialised state.
        assert_eq!(unsafe { qnmc_hmc_step(p, &mut stats) }, OK);
        assert!(stats.log_density.is_finite());
        divergent += stats.divergent;
    }
    assert!(divergent > 0);
}

/// The C API's chain, through its entry points.
fn ffi_nuts_chain(
    scalar: c_int,
    metric: c_int,
    data: &Readings,
    seed: u64,
    warmup: u32,
    draws: usize,
) -> Vec<[u64; 4]> {
    let mut s = settings(metric);
    s.warmup_draws = warmup;
    let mut buf = buffer(nuts_size(scalar, metric));
    let p = buf.as_mut_ptr().cast::<c_void>();
    let size = buf.len() * 64;
    let ctx = data as *const Readings as *mut c_void;
    // SAFETY: valid arguments.
    let status = unsafe {
        if scalar == QNMC_F64 {
            qnmc_nuts_init_f64(
                p,
                size,
                &s,
                seed,
                [0.0, 1.0, 0.0].as_ptr(),
                3,
                Some(log_density_f64),
                ctx,
            )
        } else {
            qnmc_nuts_init_f32(
                p,
                size,
                &s,
                seed,
                [0.0, 1.0, 0.0].as_ptr(),
                3,
                Some(log_density_f32),
                ctx,
            )
        }
    };
    assert_eq!(status, OK);
    (0..draws)
        .map(|k| {
            let mut stats = QnmcStats::default();
            let mut warm = -1;
            // SAFETY: an initialised state.
            unsafe {
                assert_eq!(qnmc_nuts_is_warming_up(p, &mut warm), OK);
                assert_eq!(qnmc_nuts_step(p, &mut stats), OK);
            }
            assert_eq!(warm, stats.warmup);
            assert_eq!(stats.warmup, i32::from(k < warmup as usize));
            assert!(stats.log_density.is_finite());
            let x: [f64; 3] = if scalar == QNMC_F64 {
                let mut x = [0.0; 3];
                // SAFETY: as above.
                assert_eq!(unsafe { qnmc_nuts_position_f64(p, x.as_mut_ptr(), 3) }, OK);
                x
            } else {
                let mut x = [0.0f32; 3];
                // SAFETY: as above.
                assert_eq!(unsafe { qnmc_nuts_position_f32(p, x.as_mut_ptr(), 3) }, OK);
                x.map(f64::from)
            };
            [
                x[0].to_bits(),
                x[1].to_bits(),
                x[2].to_bits(),
                stats.step_size.to_bits(),
            ]
        })
        .collect()
}

fn assert_same(rust: &[[u64; 4]], ffi: &[[u64; 4]], what: &str) {
    assert!(
        rust.iter().any(|d| d != &rust[0]),
        "{what}: the chain never moved"
    );
    for (k, (a, b)) in rust.iter().zip(ffi).enumerate() {
        assert_eq!(a, b, "{what}: draw {k} differs");
    }
    assert_eq!(rust.len(), ffi.len());
}

#[test]
fn nuts_chains_equal_the_rust_api_bit_for_bit() {
    let data = Readings::new();
    let (warmup, draws) = (300, 500);
    let qn = |rank: f64| {
        let mut s = LbfgsEstimatorSettings::new(rank);
        s.max_pairs = LBFGS_MEMORY;
        s
    };
    let qn32 = {
        let mut s = LbfgsEstimatorSettings::new(0.0f32);
        s.max_pairs = LBFGS_MEMORY;
        s
    };
    for seed in [1, 2] {
        assert_same(
            &rust_nuts_chain::<f64, LbfgsEstimator<f64, 3, LBFGS_MEMORY>>(
                qn(0.0),
                &data,
                seed,
                warmup,
                draws,
                &mut |_, _, _, _| {},
            ),
            &ffi_nuts_chain(
                QNMC_F64,
                QNMC_METRIC_QUASI_NEWTON,
                &data,
                seed,
                warmup,
                draws,
            ),
            "f64 quasi-Newton",
        );
        assert_same(
            &rust_nuts_chain::<f64, DiagonalEstimator<f64, 3>>(
                (),
                &data,
                seed,
                warmup,
                draws,
                &mut |_, _, _, _| {},
            ),
            &ffi_nuts_chain(QNMC_F64, QNMC_METRIC_DIAGONAL, &data, seed, warmup, draws),
            "f64 diagonal",
        );
        assert_same(
            &rust_nuts_chain::<f64, IdentityEstimator>(
                (),
                &data,
                seed,
                warmup,
                draws,
                &mut |_, _, _, _| {},
            ),
            &ffi_nuts_chain(QNMC_F64, QNMC_METRIC_IDENTITY, &data, seed, warmup, draws),
            "f64 identity",
        );
        assert_same(
            &rust_nuts_chain::<f32, LbfgsEstimator<f32, 3, LBFGS_MEMORY>>(
                qn32,
                &data,
                seed,
                warmup,
                draws,
                &mut |_, _, _, _| {},
            ),
            &ffi_nuts_chain(
                QNMC_F32,
                QNMC_METRIC_QUASI_NEWTON,
                &data,
                seed,
                warmup,
                draws,
            ),
            "f32 quasi-Newton",
        );
        assert_same(
            &rust_nuts_chain::<f32, DiagonalEstimator<f32, 3>>(
                (),
                &data,
                seed,
                warmup,
                draws,
                &mut |_, _, _, _| {},
            ),
            &ffi_nuts_chain(QNMC_F32, QNMC_METRIC_DIAGONAL, &data, seed, warmup, draws),
            "f32 diagonal",
        );
    }
}

/// The calibration model padded as the C API pads HMC: coordinates from 3
/// on are independent N(0, 1).
struct Padded<'a>(&'a Readings);

impl<T: Real, const D: usize> Potential<T, D> for Padded<'_> {
    fn potential_and_gradient(&self, x: &[T; D], g: &mut [T; D]) -> T {
        let mut u = Calibration(self.0).potential_and_gradient(x, g);
        for i in 3..D {
            g[i] = x[i];
            u += T::HALF * x[i] * x[i];
        }
        u
    }
}

#[test]
fn hmc_chain_equals_the_rust_api_bit_for_bit() {
    let data = Readings::new();
    let ctx = &data as *const Readings as *mut c_void;
    let mut start = [0.0f64; MAX_DIMENSION];
    start[..3].copy_from_slice(&[0.5, 2.0, -2.3]);
    let mut rust = Hmc::new(HmcSettings::new(0.002, 8), start, &Padded(&data)).unwrap();
    let mut rng = XorShiftRng::seed_from_u64(9);
    let mut buf = buffer(qnmc_hmc_state_size(QNMC_F64));
    let p = buf.as_mut_ptr().cast::<c_void>();
    let size = buf.len() * 64;
    // SAFETY: valid arguments.
    let status = unsafe {
        qnmc_hmc_init_f64(
            p,
            size,
            0.002,
            8,
            9,
            [0.5, 2.0, -2.3].as_ptr(),
            3,
            Some(log_density_f64),
            ctx,
        )
    };
    assert_eq!(status, OK);
    let mut accepted = 0;
    for k in 0..300 {
        let expected = rust.step(&Padded(&data), &mut rng);
        let mut stats = QnmcStats::default();
        let mut x = [0.0; 3];
        // SAFETY: an initialised state.
        unsafe {
            assert_eq!(qnmc_hmc_step(p, &mut stats), OK);
            assert_eq!(qnmc_hmc_position_f64(p, x.as_mut_ptr(), 3), OK);
        }
        assert_eq!(stats.accepted, i32::from(expected.accepted), "draw {k}");
        assert_eq!(
            stats.acceptance.to_bits(),
            expected.acceptance_probability.to_bits()
        );
        for i in 0..3 {
            assert_eq!(x[i].to_bits(), rust.position()[i].to_bits(), "draw {k}");
        }
        // The log density of the state, as the callback gave it.
        let mut g = [0.0; 3];
        assert_eq!(
            stats.log_density.to_bits(),
            data.log_density(&x, &mut g).to_bits()
        );
        accepted += stats.accepted;
    }
    assert!(accepted > 100, "{accepted}");
}
