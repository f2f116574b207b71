//! The C example's model (`ffi/examples/host/main.c`), written again in Rust
//! with the same operations in the same order, so that its chain can be
//! compared bit for bit: the readings, the log density as a C callback, and
//! the same model as a `qnmc::Potential` for the Rust API.

#![allow(dead_code, clippy::needless_range_loop)]

use core::ffi::c_void;

use core::mem::MaybeUninit;

use qnmc::adaptation::{AdaptiveNuts, MetricEstimator, WarmupSchedule};
use qnmc::in_place::ZeroValid;
use qnmc::{NutsSettings, NutsStats, Potential, Real};
use qnmc_ffi::{MAX_TREE_DEPTH, QnmcNutsSettings};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

/// Readings of the example.
pub const READINGS: usize = 300;

/// Reference temperatures and readings, and the `exp` the log density
/// calls: the C library's (`ffi/examples/host/main.c`) or the portable
/// [`model_exp`] (`ffi/examples/firmware/model.c`).
pub struct Readings {
    pub x: [f64; READINGS],
    pub y: [f64; READINGS],
    pub exp: fn(f64) -> f64,
}

/// 2^k for −1022 ≤ k ≤ 1023, from its bits (`pow2` of model.c).
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `model_exp` of `ffi/examples/firmware/model.c`, the same operations in
/// the same order: fdlibm's range reduction and rational approximation,
/// with only the four basic operations, so the firmware's chain and this
/// one are the same bits. (The literals are model.c's, digit for digit;
/// they round to the same f64.)
#[allow(clippy::excessive_precision, clippy::approx_constant)]
pub fn model_exp(x: f64) -> f64 {
    const LN2_HI: f64 = 6.93147180369123816490e-01;
    const LN2_LO: f64 = 1.90821492927058770002e-10;
    const INV_LN2: f64 = 1.44269504088896338700e+00;
    const P1: f64 = 1.66666666666666019037e-01;
    const P2: f64 = -2.77777777770155933842e-03;
    const P3: f64 = 6.61375632143793436117e-05;
    const P4: f64 = -1.65339022054652515390e-06;
    const P5: f64 = 4.13813679705723846039e-08;
    if x.is_nan() {
        return x;
    }
    if x > 709.782712893383973096 {
        return pow2(1023) * 2.0;
    }
    if x < -745.133219101941108420 {
        return 0.0;
    }
    // C's (int) conversion truncates toward zero, as `as i32` does.
    let k = (x * INV_LN2 + if x < 0.0 { -0.5 } else { 0.5 }) as i32;
    let hi = x - f64::from(k) * LN2_HI;
    let lo = f64::from(k) * LN2_LO;
    let r = hi - lo;
    let t = r * r;
    let c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
    let y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
    if k >= -1021 {
        return if k == 1024 {
            y * 2.0 * pow2(1023)
        } else {
            y * pow2(k)
        };
    }
    y * pow2(k + 1000) * pow2(-1000)
}

fn next_u64(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

fn uniform(s: &mut u64) -> f64 {
    (next_u64(s) >> 11) as f64 * (1.0 / 9007199254740992.0)
}

fn normal(s: &mut u64) -> f64 {
    let mut sum = 0.0;
    for _ in 0..12 {
        sum += uniform(s);
    }
    sum - 6.0
}

impl Readings {
    /// `make_readings` of main.c.
    pub fn new() -> Self {
        let mut s = 0x9E37_79B9_7F4A_7C15_u64;
        let mut data = Readings {
            x: [0.0; READINGS],
            y: [0.0; READINGS],
            exp: f64::exp,
        };
        for i in 0..READINGS {
            let x = 4.0 * uniform(&mut s) - 2.0;
            data.x[i] = x;
            data.y[i] = 0.5 + 2.0 * x + 0.1 * normal(&mut s);
        }
        data
    }

    /// The firmware's readings (the same bits) and its portable `exp`.
    pub fn portable() -> Self {
        Readings {
            exp: model_exp,
            ..Self::new()
        }
    }

    /// `log_density` of main.c: log p and its gradient.
    pub fn log_density(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        let (a, b, s) = (theta[0], theta[1], theta[2]);
        // std's exp is the C library's on the host, as main.c's; or the
        // firmware's model_exp.
        let w = (self.exp)(-2.0 * s);
        let (mut sr, mut srx, mut srr) = (0.0, 0.0, 0.0);
        for i in 0..READINGS {
            let r = self.y[i] - a - b * self.x[i];
            sr += r;
            srx += r * self.x[i];
            srr += r * r;
        }
        grad[0] = w * sr - a / 100.0;
        grad[1] = w * srx - (b - 1.0) / 100.0;
        grad[2] = -(READINGS as f64) + w * srr - s / 4.0;
        -(READINGS as f64) * s
            - 0.5 * w * srr
            - a * a / 200.0
            - (b - 1.0) * (b - 1.0) / 200.0
            - s * s / 8.0
    }
}

/// The model as the C API's f64 callback (`ctx` is a `*const Readings`).
pub unsafe extern "C" fn log_density_f64(
    ctx: *mut c_void,
    theta: *const f64,
    grad: *mut f64,
) -> f64 {
    // SAFETY: the API passes `dim` = 3 readable and writable values.
    let (data, theta, grad) = unsafe {
        (
            &*(ctx as *const Readings),
            core::slice::from_raw_parts(theta, 3),
            core::slice::from_raw_parts_mut(grad, 3),
        )
    };
    data.log_density(theta, grad)
}

/// The same model in f32 for the C API (computed in f64, rounded).
pub unsafe extern "C" fn log_density_f32(
    ctx: *mut c_void,
    theta: *const f32,
    grad: *mut f32,
) -> f32 {
    // SAFETY: as above.
    let (data, theta, grad) = unsafe {
        (
            &*(ctx as *const Readings),
            core::slice::from_raw_parts(theta, 3),
            core::slice::from_raw_parts_mut(grad, 3),
        )
    };
    let t = [theta[0] as f64, theta[1] as f64, theta[2] as f64];
    let mut g = [0.0; 3];
    let lp = data.log_density(&t, &mut g);
    for i in 0..3 {
        grad[i] = g[i] as f32;
    }
    lp as f32
}

/// The model for the Rust API, U = −log p, in storage of `D` ≥ 3: what the
/// C API turns the callback into (gradient zeroed, then negated).
pub struct Calibration<'a>(pub &'a Readings);

impl<T: Real, const D: usize> Potential<T, D> for Calibration<'_> {
    fn potential_and_gradient(&self, x: &[T; D], g: &mut [T; D]) -> T {
        let t = [x[0].to_f64(), x[1].to_f64(), x[2].to_f64()];
        let mut grad = [0.0; 3];
        let lp = self.0.log_density(&t, &mut grad);
        // Through the callback type of T, as the C API sees it.
        let (lp, grad) = if core::mem::size_of::<T>() == 4 {
            (
                T::from_f64(lp as f32 as f64),
                grad.map(|v| T::from_f64(v as f32 as f64)),
            )
        } else {
            (T::from_f64(lp), grad.map(T::from_f64))
        };
        for i in 0..3 {
            g[i] = -grad[i];
        }
        -lp
    }
}

/// What [`rust_nuts_chain`] hands each draw: position, statistics, whether
/// it was a warm-up draw, log p.
pub type OnDraw<'a, T> = dyn FnMut(&[T; 3], &NutsStats<T>, bool, T) + 'a;

/// The Rust API's chain: `AdaptiveNuts` of size 3 (not the C API's storage
/// of MAX_DIMENSION), the C API's default settings; every draw also goes to
/// `on_draw` (position, statistics, warm-up or not, log p).
pub fn rust_nuts_chain<T: Real, E>(
    estimator: E::Settings,
    data: &Readings,
    seed: u64,
    warmup: u32,
    draws: usize,
    on_draw: &mut OnDraw<'_, T>,
) -> Vec<[u64; 4]>
where
    E: MetricEstimator<T, 3> + ZeroValid,
    E::Metric: ZeroValid,
{
    let defaults = QnmcNutsSettings::default();
    let mut nuts_settings = NutsSettings::new(T::from_f64(defaults.initial_step_size));
    nuts_settings.max_tree_depth = defaults.max_tree_depth;
    let mut slot = Box::new(MaybeUninit::<AdaptiveNuts<T, 3, E, MAX_TREE_DEPTH>>::uninit());
    let chain = AdaptiveNuts::init_in_place(
        &mut slot,
        nuts_settings,
        WarmupSchedule::stan(u64::from(warmup)).unwrap(),
        estimator,
        &[T::ZERO, T::ONE, T::ZERO],
        &Calibration(data),
    )
    .unwrap();
    let mut rng = XorShiftRng::seed_from_u64(seed);
    (0..draws)
        .map(|_| {
            let warmup = chain.is_warming_up();
            let stats = chain.step(&Calibration(data), &mut rng);
            on_draw(
                chain.position(),
                &stats,
                warmup,
                -chain.sampler().potential(),
            );
            let x = chain.position();
            [
                x[0].to_f64().to_bits(),
                x[1].to_f64().to_bits(),
                x[2].to_f64().to_bits(),
                stats.step_size.to_f64().to_bits(),
            ]
        })
        .collect()
}
