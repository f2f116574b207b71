//! Bad input never panics.
//!
//! - Every invalid setting is `Err(Error::InvalidSetting { setting, .. })` at
//!   construction (or from `set_settings` / `set_step_size`, which then keep the
//!   old settings), with the name of the offending field.
//! - A non-finite initial position, or a target that is not finite there, is
//!   `Err(Error::NonFiniteInitialState)`.
//! - HMC and QNHMC: a NaN or infinite U or ∇U anywhere on a trajectory is a
//!   rejected divergence that leaves the chain (position, U, ∇U, L-BFGS memory)
//!   exactly as it was; the count of divergences equals the count of bad
//!   evaluations; the chain keeps accepting once the bad region or phase is over.
//! - HAMCMC: a non-finite gradient is `Err(NonFiniteGradient)`, an overflowing
//!   proposal `Err(NonFiniteProposal)`, and the sampler is exactly as before the
//!   call (checked through every accessor, and by replaying the sampler and a
//!   clone taken before the call on the same random numbers).
//!
//! - NUTS (every metric): every invalid setting (step size, maximum tree depth
//!   against the const `MAX_DEPTH`, energy threshold) is an error at `new`,
//!   `set_settings` or `set_step_size`; a NaN or infinite U or ∇U ends the
//!   trajectory at that leaf as a counted divergence (one per bad evaluation),
//!   the sample comes from the valid part of the tree, so the state stays
//!   finite and never enters a bad region, and later draws are fine.
//!
//! Every constructor and step runs inside `catch_unwind`.

use std::cell::Cell;

use qnmc::lbfgs::{CurvaturePolicy, InitialScaling, LbfgsMemory, LbfgsSettings};
use qnmc::metric::{DenseMetric, DiagonalMetric, IdentityMetric, LbfgsMetric, Metric};
use qnmc::{
    Error, Hamcmc, HamcmcSettings, Hmc, HmcSettings, MemoryUpdate, MinibatchPotential, Nuts,
    NutsSettings, Potential, Qnhmc, QnhmcMass, QnhmcSettings, Real, StepSizeSchedule, StepStats,
};
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

use crate::common::{assert_invalid, no_panic};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// 0, negative, NaN, +∞, −∞: every value that is not finite and > 0.
fn not_positive<T: Real>() -> [T; 6] {
    [
        T::ZERO,
        -T::ZERO,
        T::from_f64(-1.0),
        T::from_f64(f64::NAN),
        T::INFINITY,
        -T::INFINITY,
    ]
}

/// Negative, NaN, ±∞: every value that is not finite and ≥ 0.
fn not_non_negative<T: Real>() -> [T; 5] {
    [
        T::from_f64(-1.0),
        T::from_f64(-1e-30),
        T::from_f64(f64::NAN),
        T::INFINITY,
        -T::INFINITY,
    ]
}

fn bits<T: Real>(x: T) -> u64 {
    // Exact for f32 too (f32 → f64 is lossless), so this compares bit patterns.
    x.to_f64().to_bits()
}

fn all_bits<T: Real>(xs: &[T]) -> Vec<u64> {
    xs.iter().map(|x| bits(*x)).collect()
}

/// The observable L-BFGS memory: length, γ and every stored (s, y, sᵀy).
fn memory_bits<T: Real, const D: usize, const M: usize>(m: &LbfgsMemory<T, D, M>) -> Vec<u64> {
    let mut out = vec![m.len() as u64, bits(m.gamma())];
    for (s, y, sy) in m.pairs().iter() {
        out.extend(all_bits(s));
        out.extend(all_bits(y));
        out.push(bits(sy));
    }
    out
}

/// A value that is finite in `T` but overflows when multiplied by anything > 1.
fn huge<T: Real>() -> T {
    let h = T::from_f64(f64::MAX);
    if h.is_finite() {
        h
    } else {
        T::from_f64(f32::MAX as f64)
    }
}

// ---------------------------------------------------------------------------
// A Gaussian target that misbehaves on command
// ---------------------------------------------------------------------------

/// What a bad evaluation returns.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    NanPotential,
    PosInfPotential,
    NegInfPotential,
    NanGradient,
    PosInfGradient,
    NegInfGradient,
    /// A finite gradient whose every entry is the largest finite value.
    HugeGradient,
}

const MH_FAULTS: [Fault; 6] = [
    Fault::NanPotential,
    Fault::PosInfPotential,
    Fault::NegInfPotential,
    Fault::NanGradient,
    Fault::PosInfGradient,
    Fault::NegInfGradient,
];

/// When an evaluation is bad; `n` is the evaluation's index (0 = the first call,
/// which for the Metropolis samplers is the constructor's).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Trigger {
    Never,
    /// n ≥ from: always bad after construction.
    From(u64),
    /// n ≡ k − 1 (mod k).
    EveryKth(u64),
    /// A hash of n is ≡ 0 (mod p): "random" but reproducible; n = 0 excluded.
    Pseudo(u64),
    /// θ₀ > threshold: a bad region of the parameter space.
    Region(f64),
    /// start ≤ n < end: a bad phase.
    Window(u64, u64),
    /// n = exactly this call.
    At(u64),
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// N(0, diag(variances)) with faults injected according to `trigger`. Counts
/// every call and every bad one.
struct Faulty<const D: usize> {
    variances: [f64; D],
    fault: Fault,
    trigger: Trigger,
    calls: Cell<u64>,
    bad: Cell<u64>,
}

impl<const D: usize> Faulty<D> {
    fn new(variances: [f64; D], fault: Fault, trigger: Trigger) -> Self {
        Faulty {
            variances,
            fault,
            trigger,
            calls: Cell::new(0),
            bad: Cell::new(0),
        }
    }

    fn clean(variances: [f64; D]) -> Self {
        Self::new(variances, Fault::NanPotential, Trigger::Never)
    }

    fn fires<T: Real>(&self, x: &[T; D]) -> bool {
        let n = self.calls.get();
        self.calls.set(n + 1);
        let fire = match self.trigger {
            Trigger::Never => false,
            Trigger::From(from) => n >= from,
            Trigger::EveryKth(k) => n % k == k - 1,
            Trigger::Pseudo(p) => n > 0 && splitmix(n) % p == 0,
            Trigger::Region(threshold) => x[0].to_f64() > threshold,
            Trigger::Window(start, end) => (start..end).contains(&n),
            Trigger::At(k) => n == k,
        };
        if fire {
            self.bad.set(self.bad.get() + 1);
        }
        fire
    }

    /// Writes ∇U (possibly corrupted) and returns U (possibly corrupted).
    fn evaluate<T: Real>(&self, x: &[T; D], g: &mut [T; D]) -> T {
        let mut u = T::ZERO;
        for i in 0..D {
            g[i] = x[i] / T::from_f64(self.variances[i]);
            u += x[i] * g[i];
        }
        u = T::HALF * u;
        if self.fires(x) {
            match self.fault {
                Fault::NanPotential => u = T::from_f64(f64::NAN),
                Fault::PosInfPotential => u = T::INFINITY,
                Fault::NegInfPotential => u = -T::INFINITY,
                Fault::NanGradient => g[D / 2] = T::from_f64(f64::NAN),
                Fault::PosInfGradient => g[0] = T::INFINITY,
                Fault::NegInfGradient => g[D - 1] = -T::INFINITY,
                Fault::HugeGradient => *g = [huge::<T>(); D],
            }
        }
        u
    }
}

impl<T: Real, const D: usize> Potential<T, D> for Faulty<D> {
    fn potential_and_gradient(&self, x: &[T; D], g: &mut [T; D]) -> T {
        self.evaluate(x, g)
    }
}

impl<T: Real, const D: usize> MinibatchPotential<T, D> for Faulty<D> {
    /// A token drawn from the generator, so the batch consumes random numbers
    /// like a real minibatch target does.
    type Batch = u32;
    fn draw_batch<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        rng.next_u32()
    }
    fn minibatch_gradient(&self, _batch: &u32, x: &[T; D], g: &mut [T; D]) {
        let _ = self.evaluate(x, g);
    }
}

const VARIANCES: [f64; 5] = [1.0, 2.0, 0.5, 4.0, 1.5];

// ---------------------------------------------------------------------------
// Invalid settings
// ---------------------------------------------------------------------------

fn hmc_invalid_settings<T: Real>() {
    let target = Faulty::clean(VARIANCES);
    let x0 = [T::ZERO; 5];
    let build = |s: HmcSettings<T>, variances: [T; 5]| {
        no_panic("Hmc::with_metric", || {
            DiagonalMetric::new(&variances).and_then(|m| Hmc::with_metric(s, m, x0, &target))
        })
    };
    let ones = [T::ONE; 5];

    for bad in not_positive::<T>() {
        assert_invalid(
            build(HmcSettings::new(bad, 5), ones),
            "step_size",
            &format!("ε = {bad}"),
        );
    }
    assert_invalid(
        build(HmcSettings::new(T::HALF, 0), ones),
        "leapfrog_steps",
        "L = 0",
    );
    for bad in not_positive::<T>() {
        for slot in [0, 2, 4] {
            let mut values = [T::ONE; 5];
            values[slot] = bad;
            assert_invalid(
                build(HmcSettings::new(T::HALF, 5), values),
                "variances",
                &format!("M⁻¹[{slot}] = {bad}"),
            );
        }
    }
    // The boundary of each rule is accepted.
    assert!(
        build(
            HmcSettings::new(T::from_f64(1e-30), 1),
            [T::from_f64(1e-30); 5]
        )
        .is_ok()
    );
    assert!(build(HmcSettings::new(T::from_f64(1e30), u32::MAX), ones).is_ok());

    // set_settings and set_variances: an Err keeps the old settings and
    // metric, and the chain is unaffected.
    let good = HmcSettings::new(T::from_f64(0.3), 4);
    let good_variances = [T::from_f64(0.7); 5];
    let mut hmc = build(good, good_variances).unwrap();
    let reference = hmc.clone();
    let mut bads = Vec::new();
    for bad in not_positive::<T>() {
        let mut s = good;
        s.step_size = bad;
        bads.push((s, "step_size"));
        assert_invalid(
            no_panic("set_variances", || {
                hmc.metric_mut()
                    .set_variances(&[T::ONE, T::ONE, bad, T::ONE, T::ONE])
            }),
            "variances",
            "set_variances",
        );
        assert_eq!(hmc.metric().variances(), &good_variances);
    }
    let mut s = good;
    s.leapfrog_steps = 0;
    bads.push((s, "leapfrog_steps"));
    for (s, name) in bads {
        assert_invalid(
            no_panic("set_settings", || hmc.set_settings(s)),
            name,
            "set_settings",
        );
        assert_eq!(
            hmc.settings(),
            &good,
            "a failed set_settings changed the settings"
        );
    }
    let (mut r1, mut r2) = (XorShiftRng::seed_from_u64(5), XorShiftRng::seed_from_u64(5));
    let mut reference = reference;
    for _ in 0..20 {
        let a = hmc.step(&target, &mut r1);
        let b = reference.step(&target, &mut r2);
        assert_eq!(a, b);
        assert_eq!(all_bits(hmc.position()), all_bits(reference.position()));
    }
}

#[test]
fn hmc_invalid_settings_f64() {
    hmc_invalid_settings::<f64>();
}

#[test]
fn hmc_invalid_settings_f32() {
    hmc_invalid_settings::<f32>();
}

fn qnhmc_invalid_settings<T: Real>() {
    let target = Faulty::clean(VARIANCES);
    let x0 = [T::ZERO; 5];
    let build =
        |s: QnhmcSettings<T>| no_panic("Qnhmc::new", || Qnhmc::<T, 5, 4>::new(s, x0, &target));
    let good = QnhmcSettings::<T>::new(T::from_f64(0.2), 5, 4);
    assert!(build(good).is_ok());

    for bad in not_positive::<T>() {
        let mut s = good;
        s.step_size = bad;
        assert_invalid(build(s), "step_size", &format!("ε = {bad}"));
        for scaling in [InitialScaling::Fixed(bad), InitialScaling::NewestPair(bad)] {
            let mut s = good;
            s.lbfgs.scaling = scaling;
            assert_invalid(build(s), "scaling", &format!("{scaling:?}"));
        }
    }
    let mut s = good;
    s.leapfrog_steps = 0;
    assert_invalid(build(s), "leapfrog_steps", "L = 0");
    for max_pairs in [5, 100, usize::MAX] {
        let mut s = good;
        s.lbfgs.max_pairs = max_pairs;
        assert_invalid(
            build(s),
            "max_pairs",
            &format!("max_pairs = {max_pairs} > M = 4"),
        );
    }
    for max_pairs in [0, 1, 4] {
        let mut s = good;
        s.lbfgs.max_pairs = max_pairs;
        assert!(build(s).is_ok(), "max_pairs = {max_pairs} ≤ M is valid");
    }
    for bad in not_non_negative::<T>() {
        let mut s = good;
        s.lbfgs.curvature.trust_region = bad;
        assert_invalid(build(s), "trust_region", &format!("λ = {bad}"));
        let mut s = good;
        s.lbfgs.curvature.min_relative_curvature = bad;
        assert_invalid(
            build(s),
            "min_relative_curvature",
            &format!("ε_curv = {bad}"),
        );
    }
    let mut s = good;
    s.lbfgs.curvature = CurvaturePolicy {
        trust_region: T::ZERO,
        min_relative_curvature: T::ZERO,
    };
    assert!(build(s).is_ok(), "0 is a valid λ and ε_curv");

    // set_step_size: an Err keeps the old step size.
    let mut q = build(good).unwrap();
    for bad in not_positive::<T>() {
        assert_invalid(
            no_panic("set_step_size", || q.set_step_size(bad)),
            "step_size",
            "set_step_size",
        );
        assert_eq!(q.settings(), &good);
    }
    assert!(q.set_step_size(T::from_f64(0.1)).is_ok());
    assert_eq!(bits(q.settings().step_size), bits(T::from_f64(0.1)));
}

#[test]
fn qnhmc_invalid_settings_f64() {
    qnhmc_invalid_settings::<f64>();
}

#[test]
fn qnhmc_invalid_settings_f32() {
    qnhmc_invalid_settings::<f32>();
}

#[test]
fn lbfgs_memory_invalid_settings() {
    let build =
        |s: LbfgsSettings<f64>| no_panic("LbfgsMemory::new", || LbfgsMemory::<f64, 3, 2>::new(s));
    assert!(build(LbfgsSettings::with_max_pairs(2)).is_ok());
    assert_invalid(
        build(LbfgsSettings::with_max_pairs(3)),
        "max_pairs",
        "max_pairs > M",
    );
    for bad in not_positive::<f64>() {
        let mut s = LbfgsSettings::with_max_pairs(2);
        s.scaling = InitialScaling::Fixed(bad);
        assert_invalid(build(s), "scaling", "γ");
    }
    for bad in not_non_negative::<f64>() {
        let mut s = LbfgsSettings::with_max_pairs(2);
        s.curvature.trust_region = bad;
        assert_invalid(build(s), "trust_region", "λ");
        let mut s = LbfgsSettings::with_max_pairs(2);
        s.curvature.min_relative_curvature = bad;
        assert_invalid(build(s), "min_relative_curvature", "ε_curv");
    }
}

fn hamcmc_invalid_settings<T: Real>() {
    let x0 = [T::ZERO; 5];
    let build = |s: HamcmcSettings<T>| no_panic("Hamcmc::new", || Hamcmc::<T, 5, 3>::new(s, x0));
    let good = HamcmcSettings::new(
        StepSizeSchedule::Constant(T::from_f64(1e-3)),
        T::ONE,
        T::ONE,
    );
    assert!(build(good).is_ok());

    for bad in not_positive::<T>() {
        let mut s = good;
        s.step_size = StepSizeSchedule::Constant(bad);
        assert_invalid(build(s), "step_size", &format!("ε = {bad}"));
        let mut s = good;
        s.step_size = StepSizeSchedule::BlockDecaying {
            scale: bad,
            exponent: T::from_f64(0.51),
        };
        assert_invalid(build(s), "step_size.scale", &format!("a = {bad}"));
        let mut s = good;
        s.gamma = bad;
        assert_invalid(build(s), "gamma", &format!("γ = {bad}"));
    }
    for exponent in [
        0.5,
        0.3,
        0.0,
        -0.7,
        1.0 + 1e-6,
        2.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        let mut s = good;
        s.step_size = StepSizeSchedule::BlockDecaying {
            scale: T::ONE,
            exponent: T::from_f64(exponent),
        };
        assert_invalid(build(s), "step_size.exponent", &format!("κ = {exponent}"));
    }
    for exponent in [0.5 + 1e-6, 0.51, 0.75, 1.0] {
        let mut s = good;
        s.step_size = StepSizeSchedule::BlockDecaying {
            scale: T::from_f64(1e-8),
            exponent: T::from_f64(exponent),
        };
        assert!(build(s).is_ok(), "κ = {exponent} is in (0.5, 1]");
    }
    for bad in not_non_negative::<T>() {
        let mut s = good;
        s.curvature.trust_region = bad;
        assert_invalid(build(s), "trust_region", &format!("λ = {bad}"));
        let mut s = good;
        s.curvature.min_relative_curvature = bad;
        assert_invalid(
            build(s),
            "min_relative_curvature",
            &format!("ε_curv = {bad}"),
        );
    }
    // M = 1 (and M = 0): HAMCMC needs M ≥ 2 draws for one pair.
    assert_invalid(
        no_panic("Hamcmc M = 1", || Hamcmc::<T, 5, 1>::new(good, x0)),
        "M",
        "M = 1",
    );
    assert_invalid(
        no_panic("Hamcmc M = 0", || Hamcmc::<T, 5, 0>::new(good, x0)),
        "M",
        "M = 0",
    );
    assert!(Hamcmc::<T, 5, 2>::new(good, x0).is_ok());
}

#[test]
fn hamcmc_invalid_settings_f64() {
    hamcmc_invalid_settings::<f64>();
}

#[test]
fn hamcmc_invalid_settings_f32() {
    hamcmc_invalid_settings::<f32>();
}

// ---------------------------------------------------------------------------
// Non-finite initial state
// ---------------------------------------------------------------------------

fn non_finite_initial_state<T: Real>() {
    let nan = T::from_f64(f64::NAN);
    let positions = [
        [nan, T::ZERO, T::ZERO, T::ZERO, T::ZERO],
        [T::ZERO, T::ZERO, T::INFINITY, T::ZERO, T::ZERO],
        [T::ZERO, T::ZERO, T::ZERO, T::ZERO, -T::INFINITY],
    ];
    let clean = Faulty::clean(VARIANCES);
    let expect = |r: Result<(), Error>, case: &str| {
        assert_eq!(r, Err(Error::NonFiniteInitialState), "{case}");
    };
    for x0 in positions {
        expect(
            no_panic("Hmc", || {
                Hmc::new(HmcSettings::new(T::HALF, 3), x0, &clean).map(drop)
            }),
            "Hmc, non-finite θ₀",
        );
        expect(
            no_panic("Qnhmc", || {
                Qnhmc::<T, 5, 3>::new(QnhmcSettings::new(T::HALF, 3, 3), x0, &clean).map(drop)
            }),
            "Qnhmc, non-finite θ₀",
        );
        let s = HamcmcSettings::new(StepSizeSchedule::Constant(T::HALF), T::ONE, T::ZERO);
        expect(
            no_panic("Hamcmc", || Hamcmc::<T, 5, 3>::new(s, x0).map(drop)),
            "Hamcmc, non-finite θ₀",
        );
    }
    // A finite θ₀ where the target is not finite (the very first call is bad).
    for fault in MH_FAULTS {
        let x0 = [T::HALF; 5];
        let target = Faulty::new(VARIANCES, fault, Trigger::At(0));
        expect(
            no_panic("Hmc", || {
                Hmc::new(HmcSettings::new(T::HALF, 3), x0, &target).map(drop)
            }),
            &format!("Hmc, {fault:?} at θ₀"),
        );
        let target = Faulty::new(VARIANCES, fault, Trigger::At(0));
        for mass in [QnhmcMass::Identity, QnhmcMass::InverseHessian] {
            let mut s = QnhmcSettings::new(T::HALF, 3, 3);
            s.mass = mass;
            target.calls.set(0);
            expect(
                no_panic("Qnhmc", || Qnhmc::<T, 5, 3>::new(s, x0, &target).map(drop)),
                &format!("Qnhmc {mass:?}, {fault:?} at θ₀"),
            );
        }
    }
}

#[test]
fn non_finite_initial_state_f64() {
    non_finite_initial_state::<f64>();
}

#[test]
fn non_finite_initial_state_f32() {
    non_finite_initial_state::<f32>();
}

// ---------------------------------------------------------------------------
// Metropolis samplers under faults
// ---------------------------------------------------------------------------

/// What the tests need from HMC and QNHMC.
trait MhSampler<T: Real>: Clone {
    fn mh_step(&mut self, target: &Faulty<5>, rng: &mut XorShiftRng) -> StepStats<T>;
    /// Position, U, ∇U and the L-BFGS memory, as bit patterns.
    fn state(&self) -> Vec<u64>;
    /// Whether a clone taken one draw earlier must replay identically: false
    /// while a FreezeAfter(n) warm-up is running, since the draw counter (which
    /// rightly counts a divergent draw) decides when the memory freezes.
    fn replay_comparable(&self) -> bool;
}

impl<T: Real, K: Metric<T, 5> + Clone> MhSampler<T> for Hmc<T, 5, K> {
    fn mh_step(&mut self, target: &Faulty<5>, rng: &mut XorShiftRng) -> StepStats<T> {
        self.step(target, rng)
    }
    fn state(&self) -> Vec<u64> {
        let mut v = all_bits(self.position());
        v.push(bits(self.potential()));
        v.extend(all_bits(self.gradient()));
        v
    }
    fn replay_comparable(&self) -> bool {
        true
    }
}

impl<T: Real> MhSampler<T> for Qnhmc<T, 5, 4> {
    fn mh_step(&mut self, target: &Faulty<5>, rng: &mut XorShiftRng) -> StepStats<T> {
        self.step(target, rng)
    }
    fn state(&self) -> Vec<u64> {
        let mut v = all_bits(self.position());
        v.push(bits(self.potential()));
        v.extend(all_bits(self.gradient()));
        v.extend(memory_bits(self.memory()));
        v
    }
    fn replay_comparable(&self) -> bool {
        self.settings().memory_update == MemoryUpdate::Adaptive || self.is_memory_frozen()
    }
}

/// Steps a clone taken before a divergent draw and the sampler after it on the
/// same random numbers and a clean target: they must stay bit-identical.
fn assert_same_chain<T: Real, S: MhSampler<T>>(mut a: S, mut b: S, case: &str) {
    let clean = Faulty::clean(VARIANCES);
    let mut ra = XorShiftRng::seed_from_u64(77);
    let mut rb = XorShiftRng::seed_from_u64(77);
    for k in 0..10 {
        let sa = a.mh_step(&clean, &mut ra);
        let sb = b.mh_step(&clean, &mut rb);
        assert_eq!(
            (a.state(), sa.accepted),
            (b.state(), sb.accepted),
            "{case}: the divergent draw changed hidden state (replay step {k})"
        );
    }
}

#[derive(Debug, Default)]
struct FaultReport {
    divergent: u64,
    accepted: u64,
    accepted_after_last_divergence: u64,
    bad_evaluations: u64,
}

/// Runs `steps` draws on a faulty target and checks every draw: a draw is
/// divergent iff it met a bad evaluation (then exactly one: the trajectory stops
/// there), a divergent draw is rejected with probability 0 and a non-finite
/// energy error and leaves the state untouched.
fn run_faulty<T: Real, S: MhSampler<T>>(
    sampler: &mut S,
    target: &Faulty<5>,
    steps: usize,
    leapfrog_steps: u32,
    seed: u64,
    case: &str,
) -> FaultReport {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let mut report = FaultReport::default();
    let mut replays = 3;
    for k in 0..steps {
        let before = sampler.state();
        let clone = (replays > 0).then(|| sampler.clone());
        let (bad0, calls0) = (target.bad.get(), target.calls.get());
        let stats = no_panic(case, || sampler.mh_step(target, &mut rng));
        let bad = target.bad.get() - bad0;
        let calls = target.calls.get() - calls0;
        assert!(
            bad <= 1,
            "{case} draw {k}: the trajectory went on after a bad evaluation"
        );
        assert_eq!(stats.gradient_evaluations as u64, calls, "{case} draw {k}");
        assert!(calls <= leapfrog_steps as u64);
        assert_eq!(
            stats.divergent,
            bad == 1,
            "{case} draw {k}: divergent ⇔ bad evaluation"
        );
        if stats.divergent {
            report.divergent += 1;
            report.accepted_after_last_divergence = 0;
            assert!(
                !stats.accepted,
                "{case} draw {k}: a divergent draw was accepted"
            );
            assert_eq!(stats.acceptance_probability, T::ZERO, "{case} draw {k}");
            assert!(
                !stats.energy_error.is_finite(),
                "{case} draw {k}: {stats:?}"
            );
            assert_eq!(
                sampler.state(),
                before,
                "{case} draw {k}: divergent draw changed the state"
            );
            if let Some(clone) = clone {
                if clone.replay_comparable() && sampler.replay_comparable() {
                    replays -= 1;
                    assert_same_chain(clone, sampler.clone(), case);
                }
            }
        } else {
            assert_eq!(
                calls, leapfrog_steps as u64,
                "{case} draw {k}: full trajectory"
            );
            assert!(stats.energy_error.is_finite());
        }
        if stats.accepted {
            report.accepted += 1;
            report.accepted_after_last_divergence += 1;
        } else {
            assert_eq!(
                sampler.state(),
                before,
                "{case} draw {k}: a rejected draw changed the state"
            );
        }
    }
    report.bad_evaluations = target.bad.get();
    report
}

/// The triggers every Metropolis sampler is run against, with `steps` = 300
/// draws of L = 5 evaluations after the constructor's call 0.
const MH_TRIGGERS: [Trigger; 6] = [
    Trigger::From(1),
    Trigger::EveryKth(7),
    Trigger::EveryKth(23),
    Trigger::Pseudo(13),
    Trigger::Region(1.0),
    Trigger::Window(100, 200),
];

fn check_mh_sampler<T: Real, S: MhSampler<T>>(
    build: impl Fn(&Faulty<5>) -> S,
    leapfrog_steps: u32,
    name: &str,
    faults: &[Fault],
    triggers: &[Trigger],
) {
    let steps = 300;
    for (f, &fault) in faults.iter().enumerate() {
        for (t, &trigger) in triggers.iter().enumerate() {
            let case = format!("{name} {fault:?} {trigger:?}");
            let target = Faulty::new(VARIANCES, fault, trigger);
            let mut sampler = no_panic(&case, || build(&target));
            let seed = 1000 + 10 * f as u64 + t as u64;
            let r = run_faulty(&mut sampler, &target, steps, leapfrog_steps, seed, &case);
            // Deterministic: one divergence per bad evaluation.
            assert_eq!(r.divergent, r.bad_evaluations, "{case}: {r:?}");
            assert!(r.divergent > 0, "{case}: the fault never fired: {r:?}");
            match trigger {
                Trigger::From(_) => {
                    assert_eq!(r.divergent, steps as u64, "{case}");
                    assert_eq!(r.accepted, 0, "{case}");
                }
                Trigger::Window(_, end) => {
                    // Every evaluation in the window is bad and a divergent
                    // draw uses one evaluation, so the bad phase lasts
                    // about end − start draws; the rest of the run must accept.
                    assert!(end < steps as u64 * leapfrog_steps as u64);
                    assert!(r.accepted_after_last_divergence > 50, "{case}: {r:?}");
                }
                _ => assert!(r.accepted > steps as u64 / 4, "{case}: {r:?}"),
            }
            if let Trigger::Region(threshold) = trigger {
                // The chain never settles in the bad region.
                assert!(sampler.state()[0] != f64::NAN.to_bits());
                let x0 = f64::from_bits(sampler.state()[0]);
                assert!(x0 <= threshold, "{case}: θ₀ = {x0}");
            }
            // Once the target is clean again the sampler keeps working.
            let clean = Faulty::clean(VARIANCES);
            let mut rng = XorShiftRng::seed_from_u64(seed + 5000);
            let mut accepted = 0;
            for _ in 0..200 {
                let stats = no_panic(&case, || sampler.mh_step(&clean, &mut rng));
                assert!(!stats.divergent, "{case}: divergence on the clean target");
                accepted += stats.accepted as u32;
            }
            assert!(
                accepted > 100,
                "{case}: only {accepted}/200 accepted after the faults"
            );
        }
    }
}

/// The identity-metric settings, and the diagonal ones with their metric.
fn hmc_builders<T: Real>() -> (HmcSettings<T>, HmcSettings<T>, DiagonalMetric<T, 5>) {
    let identity = HmcSettings::new(T::from_f64(0.3), 5);
    let diagonal = HmcSettings::new(T::from_f64(0.5), 5);
    let metric = DiagonalMetric::new(&VARIANCES.map(T::from_f64)).unwrap();
    (identity, diagonal, metric)
}

fn qnhmc_builders<T: Real>() -> Vec<(String, QnhmcSettings<T>)> {
    let mut out = Vec::new();
    // M = I: effective inverse metric H² ≈ Σ², stable for ε·√λmax(Σ) < 2.
    for (mass, eps) in [(QnhmcMass::Identity, 0.2), (QnhmcMass::InverseHessian, 0.5)] {
        for update in [MemoryUpdate::Adaptive, MemoryUpdate::FreezeAfter(60)] {
            let mut s = QnhmcSettings::new(T::from_f64(eps), 5, 4);
            s.mass = mass;
            s.memory_update = update;
            out.push((format!("Qnhmc {mass:?} {update:?}"), s));
        }
    }
    out
}

#[test]
fn hmc_divergences_f64() {
    let (identity, diagonal, metric) = hmc_builders::<f64>();
    let build = |t: &Faulty<5>| Hmc::new(identity, [0.0; 5], t).unwrap();
    check_mh_sampler(build, 5, "Hmc identity", &MH_FAULTS, &MH_TRIGGERS);
    let build = |t: &Faulty<5>| Hmc::with_metric(diagonal, metric.clone(), [0.0; 5], t).unwrap();
    check_mh_sampler(build, 5, "Hmc diagonal", &MH_FAULTS, &MH_TRIGGERS);
}

#[test]
fn hmc_divergences_f32() {
    let (identity, diagonal, metric) = hmc_builders::<f32>();
    let faults = [Fault::NanPotential, Fault::PosInfGradient];
    let triggers = [Trigger::From(1), Trigger::Pseudo(11), Trigger::Region(0.8)];
    let build = |t: &Faulty<5>| Hmc::new(identity, [0.0; 5], t).unwrap();
    check_mh_sampler(build, 5, "Hmc identity", &faults, &triggers);
    let build = |t: &Faulty<5>| Hmc::with_metric(diagonal, metric.clone(), [0.0; 5], t).unwrap();
    check_mh_sampler(build, 5, "Hmc diagonal", &faults, &triggers);
}

#[test]
fn qnhmc_divergences_f64() {
    for (name, s) in qnhmc_builders::<f64>() {
        let build = |t: &Faulty<5>| Qnhmc::<f64, 5, 4>::new(s, [0.0; 5], t).unwrap();
        check_mh_sampler(build, 5, &name, &MH_FAULTS, &MH_TRIGGERS);
    }
}

#[test]
fn qnhmc_divergences_f32() {
    for (name, s) in qnhmc_builders::<f32>() {
        let build = |t: &Faulty<5>| Qnhmc::<f32, 5, 4>::new(s, [0.0; 5], t).unwrap();
        let faults = [Fault::PosInfPotential, Fault::NanGradient];
        let triggers = [
            Trigger::EveryKth(9),
            Trigger::Region(0.8),
            Trigger::Window(50, 150),
        ];
        check_mh_sampler(build, 5, &name, &faults, &triggers);
    }
}

/// A divergent draw in the adaptive mode must not let the rejected trajectory's
/// pairs into the memory: with faults on every 3rd evaluation (so most
/// trajectories of L = 5 diverge after collecting 1–2 tentative pairs), the
/// memory only ever changes on an accepted draw.
#[test]
fn qnhmc_memory_changes_only_on_accept() {
    let target = Faulty::new(VARIANCES, Fault::NanGradient, Trigger::EveryKth(3));
    let mut s = QnhmcSettings::<f64>::new(0.3, 2, 4);
    s.mass = QnhmcMass::InverseHessian;
    let mut q = Qnhmc::<f64, 5, 4>::new(s, [0.1; 5], &target).unwrap();
    let mut rng = XorShiftRng::seed_from_u64(8);
    let (mut changed, mut divergent) = (0, 0);
    for _ in 0..2000 {
        let before = memory_bits(q.memory());
        let admitted = q.memory().pairs_admitted();
        let stats = q.step(&target, &mut rng);
        let after = memory_bits(q.memory());
        if stats.divergent {
            divergent += 1;
        }
        if !stats.accepted {
            assert_eq!(
                before, after,
                "memory changed on a rejected draw: {stats:?}"
            );
            assert_eq!(admitted, q.memory().pairs_admitted());
        } else if before != after {
            changed += 1;
        }
    }
    assert!(
        divergent > 500 && changed > 100,
        "divergent {divergent}, changed {changed}"
    );
    assert_eq!(divergent, target.bad.get());
}

// ---------------------------------------------------------------------------
// HAMCMC under faults
// ---------------------------------------------------------------------------

/// Everything HAMCMC exposes, as bit patterns.
fn hamcmc_state<T: Real, const M: usize>(h: &Hamcmc<T, 5, M>) -> Vec<u64> {
    let mut v = all_bits(h.position());
    v.push(h.draws());
    v.push(bits(h.next_step_size()));
    v.extend(memory_bits(h.memory()));
    v.push(h.memory().pairs_admitted());
    v.push(h.memory().pairs_skipped());
    v
}

/// After a failed step, the failed sampler and a clone taken before the call
/// produce identical chains on identical random numbers (the hidden history of
/// M draws is untouched too).
fn assert_same_hamcmc_chain<T: Real, const M: usize>(
    mut a: Hamcmc<T, 5, M>,
    mut b: Hamcmc<T, 5, M>,
    case: &str,
) {
    let clean = Faulty::clean(VARIANCES);
    let mut ra = XorShiftRng::seed_from_u64(99);
    let mut rb = XorShiftRng::seed_from_u64(99);
    for k in 0..3 * M + 2 {
        let sa = a.step(&clean, &mut ra);
        let sb = b.step(&clean, &mut rb);
        assert_eq!(sa, sb, "{case}: replay step {k}");
        assert_eq!(
            hamcmc_state(&a),
            hamcmc_state(&b),
            "{case}: replay step {k}"
        );
    }
}

fn check_hamcmc<T: Real, const M: usize>(
    fault: Fault,
    trigger: Trigger,
    schedule: StepSizeSchedule<T>,
    gamma: f64,
) {
    let case = format!("Hamcmc<{M}> {fault:?} {trigger:?} {schedule:?} γ = {gamma}");
    let target = Faulty::new(VARIANCES, fault, trigger);
    let settings = HamcmcSettings::new(schedule, T::from_f64(gamma), T::from_f64(0.5));
    let mut h = Hamcmc::<T, 5, M>::new(settings, [T::HALF; 5]).unwrap();
    let mut rng = XorShiftRng::seed_from_u64(31);
    let (mut errors, mut ok, mut ok_after_last_error) = (0u64, 0u64, 0u64);
    let mut replays = 4;
    for k in 0..400 {
        let before = h.clone();
        let state = hamcmc_state(&h);
        let bad0 = target.bad.get();
        let result = no_panic(&case, || h.step(&target, &mut rng));
        let bad = target.bad.get() - bad0;
        match result {
            Ok(stats) => {
                assert_eq!(bad, 0, "{case} draw {k}: a bad gradient went unnoticed");
                assert!(stats.accepted);
                assert_eq!(h.draws(), before.draws() + 1);
                ok += 1;
                ok_after_last_error += 1;
            }
            Err(e) => {
                let expected = match fault {
                    Fault::HugeGradient => Error::NonFiniteProposal,
                    _ => Error::NonFiniteGradient,
                };
                assert_eq!(e, expected, "{case} draw {k}");
                assert_eq!(bad, 1, "{case} draw {k}");
                assert_eq!(hamcmc_state(&h), state, "{case} draw {k}: state changed");
                assert_eq!(
                    all_bits(h.position()),
                    all_bits(before.position()),
                    "{case} draw {k}"
                );
                assert_eq!(h.draws(), before.draws());
                assert_eq!(bits(h.next_step_size()), bits(before.next_step_size()));
                assert_eq!(h.memory().len(), before.memory().len());
                assert_eq!(memory_bits(h.memory()), memory_bits(before.memory()));
                if replays > 0 {
                    replays -= 1;
                    assert_same_hamcmc_chain(before, h.clone(), &case);
                }
                errors += 1;
                ok_after_last_error = 0;
            }
        }
    }
    assert_eq!(
        errors,
        target.bad.get(),
        "{case}: one error per bad gradient"
    );
    if !matches!(trigger, Trigger::Region(_)) {
        assert!(errors > 0, "{case}: the fault never fired");
    }
    if !matches!(trigger, Trigger::From(_)) {
        assert!(ok > 100, "{case}: ok {ok}");
    }
    if let Trigger::Window(..) | Trigger::At(_) = trigger {
        assert!(ok_after_last_error > 100, "{case}: {ok_after_last_error}");
    }
    // Clean again: every step succeeds and the memory fills up.
    let clean = Faulty::clean(VARIANCES);
    for _ in 0..3 * M {
        assert!(
            no_panic(&case, || h.step(&clean, &mut rng)).is_ok(),
            "{case}"
        );
    }
    assert_eq!(h.memory().len(), M - 1, "{case}");
}

#[test]
fn hamcmc_non_finite_gradient() {
    // With M = 3: draws 1, 2 use one gradient (calls 0, 1), then every draw uses
    // two, the second (odd call index ≥ 3) on the new point. At(3) and At(8)
    // break the second and the first gradient of a full HAMCMC draw.
    let triggers = [
        Trigger::From(50),
        Trigger::EveryKth(5),
        Trigger::EveryKth(3),
        Trigger::Pseudo(7),
        Trigger::Window(100, 200),
        Trigger::At(0),
        Trigger::At(3),
        Trigger::At(8),
        // Beyond 2 sd; not too close, or a start-up draw (accepted without a
        // gradient at the new point) could land there and every later draw
        // from it would fail, which is correct but tests nothing.
        Trigger::Region(2.0),
    ];
    let decaying = StepSizeSchedule::BlockDecaying {
        scale: 0.1,
        exponent: 0.6,
    };
    for fault in [
        Fault::NanGradient,
        Fault::PosInfGradient,
        Fault::NegInfGradient,
    ] {
        for trigger in triggers {
            check_hamcmc::<f64, 3>(fault, trigger, StepSizeSchedule::Constant(0.05), 1.0);
            check_hamcmc::<f64, 2>(fault, trigger, decaying, 1.0);
            check_hamcmc::<f64, 5>(fault, trigger, StepSizeSchedule::Constant(0.05), 1.0);
            check_hamcmc::<f32, 3>(fault, trigger, StepSizeSchedule::Constant(0.05), 1.0);
            check_hamcmc::<f32, 4>(
                fault,
                trigger,
                StepSizeSchedule::BlockDecaying {
                    scale: 0.1,
                    exponent: 1.0,
                },
                1.0,
            );
        }
    }
}

/// A finite gradient so large that ε·H·g overflows: `NonFiniteProposal`, state
/// untouched, and the chain goes on once the gradient is sane again.
#[test]
fn hamcmc_overflowing_proposal_from_huge_gradient() {
    // γ = 4: H·g = γ·huge overflows in the SGLD start-up (calls 0, 1 with
    // M = 3) and, through the γ·q of the two-loop recursion, in the full draws
    // (calls 2 and 6 are the first gradient of draws 3 and 5). A huge but
    // finite gradient at the *second* call of a draw is not an error (it only
    // makes a pair), so no trigger hits one.
    for trigger in [
        Trigger::At(0),
        Trigger::At(1),
        Trigger::At(2),
        Trigger::At(6),
    ] {
        let (e64, e32) = (
            StepSizeSchedule::Constant(0.2),
            StepSizeSchedule::Constant(0.2),
        );
        check_hamcmc::<f64, 3>(Fault::HugeGradient, trigger, e64, 4.0);
        check_hamcmc::<f32, 3>(Fault::HugeGradient, trigger, e32, 4.0);
    }
}

/// An absurd step size (1e300, finite) with a finite gradient at a far-away θ₀:
/// every step is `NonFiniteProposal` and nothing ever changes.
fn hamcmc_absurd_step_size<T: Real>(eps: f64) {
    let clean = Faulty::clean(VARIANCES);
    let settings =
        HamcmcSettings::new(StepSizeSchedule::Constant(T::from_f64(eps)), T::ONE, T::ONE);
    let x0 = [T::from_f64(1e10); 5];
    let mut h = Hamcmc::<T, 5, 3>::new(settings, x0).unwrap();
    let start = hamcmc_state(&h);
    let mut rng = XorShiftRng::seed_from_u64(4);
    for _ in 0..50 {
        let r = no_panic("absurd ε", || h.step(&clean, &mut rng));
        assert_eq!(r, Err(Error::NonFiniteProposal));
        assert_eq!(hamcmc_state(&h), start);
    }
    assert_eq!(all_bits(h.position()), all_bits(&x0));
    assert_eq!(h.draws(), 0);
}

#[test]
fn hamcmc_absurd_step_size_f64() {
    hamcmc_absurd_step_size::<f64>(1e300);
}

#[test]
fn hamcmc_absurd_step_size_f32() {
    hamcmc_absurd_step_size::<f32>(1e30);
}

// ---------------------------------------------------------------------------
// Degenerate sizes
// ---------------------------------------------------------------------------

/// N(0, I) in any dimension, including 0.
struct StandardNormal;

impl<T: Real, const D: usize> Potential<T, D> for StandardNormal {
    fn potential_and_gradient(&self, x: &[T; D], g: &mut [T; D]) -> T {
        let mut u = T::ZERO;
        for i in 0..D {
            g[i] = x[i];
            u += x[i] * x[i];
        }
        T::HALF * u
    }
}

fn degenerate<T: Real, const D: usize>() {
    let target = StandardNormal;
    let mut rng = XorShiftRng::seed_from_u64(D as u64);
    let x0 = [T::HALF; D];
    let case = format!("D = {D}, {}", core::any::type_name::<T>());
    no_panic(&case, || {
        let mut hmc = Hmc::new(HmcSettings::new(T::HALF, 3), x0, &target).unwrap();
        let mut accepted = 0;
        for _ in 0..200 {
            let stats = hmc.step(&target, &mut rng);
            assert!(!stats.divergent);
            accepted += stats.accepted as u32;
        }
        assert!(accepted > 100, "{case}: HMC accepted {accepted}");
        for mass in [QnhmcMass::Identity, QnhmcMass::InverseHessian] {
            for max_pairs in [0, 1, 3] {
                let mut s = QnhmcSettings::new(T::HALF, 3, max_pairs);
                s.mass = mass;
                let mut q = Qnhmc::<T, D, 3>::new(s, x0, &target).unwrap();
                let mut accepted = 0;
                for _ in 0..200 {
                    let stats = q.step(&target, &mut rng);
                    assert!(!stats.divergent, "{case} {mass:?} {max_pairs}: {stats:?}");
                    accepted += stats.accepted as u32;
                }
                assert!(q.memory().len() <= max_pairs);
                assert!(
                    accepted > 100,
                    "{case} {mass:?} {max_pairs}: accepted {accepted}"
                );
            }
        }
        let schedule = StepSizeSchedule::BlockDecaying {
            scale: T::from_f64(0.1),
            exponent: T::from_f64(0.6),
        };
        let mut h =
            Hamcmc::<T, D, 2>::new(HamcmcSettings::new(schedule, T::ONE, T::ONE), x0).unwrap();
        let full = qnmc::FullBatch(&target);
        for _ in 0..200 {
            let stats = h.step(&full, &mut rng).unwrap();
            assert!(stats.step_size > T::ZERO);
        }
        for v in h.position() {
            assert!(v.is_finite());
        }
    });
}

/// D = 0, D = 1 and an odd D (the last Box–Muller pair is cut) with every
/// sampler and memory sizes 0, 1 and M: no panic, sane behaviour.
#[test]
fn degenerate_dimensions_and_memory_sizes() {
    degenerate::<f64, 0>();
    degenerate::<f64, 1>();
    degenerate::<f64, 3>();
    degenerate::<f32, 0>();
    degenerate::<f32, 1>();
    degenerate::<f32, 7>();
}

// ---------------------------------------------------------------------------
// NUTS
// ---------------------------------------------------------------------------

fn nuts_invalid_settings<T: Real>() {
    let target = Faulty::clean(VARIANCES);
    let x0 = [T::ZERO; 5];
    let build = |s: NutsSettings<T>| {
        no_panic("Nuts::new", || {
            Nuts::<T, 5, IdentityMetric>::new(s, IdentityMetric, x0, &target)
        })
    };
    let good = NutsSettings::new(T::from_f64(0.3));
    for bad in not_positive::<T>() {
        assert_invalid(
            build(NutsSettings::new(bad)),
            "step_size",
            &format!("ε = {bad}"),
        );
        let mut s = good;
        s.max_energy_error = bad;
        assert_invalid(build(s), "max_energy_error", &format!("ΔH_max = {bad}"));
    }
    for depth in [0, 11, 64, u32::MAX] {
        let mut s = good;
        s.max_tree_depth = depth;
        assert_invalid(build(s), "max_tree_depth", &format!("depth {depth} of 10"));
    }
    // The bound is the sampler's const MAX_DEPTH: Stan's default depth 10 does
    // not fit a sampler built for 4.
    let small = |s: NutsSettings<T>| {
        no_panic("Nuts::<_, _, _, 4>::new", || {
            Nuts::<T, 5, IdentityMetric, 4>::new(s, IdentityMetric, x0, &target)
        })
    };
    assert_invalid(small(good), "max_tree_depth", "depth 10 of 4");
    let mut s = good;
    s.max_tree_depth = 4;
    assert!(small(s).is_ok());
    // The boundary of each rule is accepted.
    let mut s = NutsSettings::new(T::from_f64(1e-30));
    s.max_tree_depth = 1;
    s.max_energy_error = T::from_f64(1e-30);
    assert!(build(s).is_ok());
    let mut s = NutsSettings::new(T::from_f64(1e30));
    s.max_tree_depth = 10;
    assert!(build(s).is_ok());

    // set_step_size / set_settings: an Err keeps the old settings, and the
    // chain is unaffected.
    let mut nuts = build(good).unwrap();
    let mut reference = nuts.clone();
    let mut bads = Vec::new();
    for bad in not_positive::<T>() {
        assert_invalid(
            no_panic("set_step_size", || nuts.set_step_size(bad)),
            "step_size",
            "set_step_size",
        );
        let mut s = good;
        s.step_size = bad;
        bads.push((s, "step_size"));
        let mut s = good;
        s.max_energy_error = bad;
        bads.push((s, "max_energy_error"));
    }
    for depth in [0, 11] {
        let mut s = good;
        s.max_tree_depth = depth;
        bads.push((s, "max_tree_depth"));
    }
    for (s, name) in bads {
        assert_invalid(
            no_panic("set_settings", || nuts.set_settings(s)),
            name,
            "set_settings",
        );
        assert_eq!(
            nuts.settings(),
            &good,
            "a failed setter changed the settings"
        );
    }
    let (mut r1, mut r2) = (XorShiftRng::seed_from_u64(6), XorShiftRng::seed_from_u64(6));
    for _ in 0..20 {
        let a = nuts.step(&target, &mut r1);
        let b = reference.step(&target, &mut r2);
        assert_eq!(a, b);
        assert_eq!(all_bits(nuts.position()), all_bits(reference.position()));
    }
}

#[test]
fn nuts_invalid_settings_f64() {
    nuts_invalid_settings::<f64>();
}

#[test]
fn nuts_invalid_settings_f32() {
    nuts_invalid_settings::<f32>();
}

fn nuts_non_finite_initial_state<T: Real>() {
    let nan = T::from_f64(f64::NAN);
    let positions = [
        [nan, T::ZERO, T::ZERO, T::ZERO, T::ZERO],
        [T::ZERO, T::ZERO, T::INFINITY, T::ZERO, T::ZERO],
        [T::ZERO, T::ZERO, T::ZERO, T::ZERO, -T::INFINITY],
    ];
    let clean = Faulty::clean(VARIANCES);
    let settings = NutsSettings::new(T::HALF);
    for x0 in positions {
        let r = no_panic("Nuts", || {
            Nuts::<T, 5, _>::new(settings, IdentityMetric, x0, &clean).map(drop)
        });
        assert_eq!(r, Err(Error::NonFiniteInitialState), "Nuts, non-finite θ₀");
    }
    // A finite θ₀ where the target is not finite (the very first call is bad).
    for fault in MH_FAULTS {
        let target = Faulty::new(VARIANCES, fault, Trigger::At(0));
        let metric = DiagonalMetric::new(&VARIANCES.map(T::from_f64)).unwrap();
        let r = no_panic("Nuts", || {
            Nuts::<T, 5, _>::new(settings, metric, [T::HALF; 5], &target).map(drop)
        });
        assert_eq!(
            r,
            Err(Error::NonFiniteInitialState),
            "Nuts, {fault:?} at θ₀"
        );
    }
}

#[test]
fn nuts_non_finite_initial_state_f64() {
    nuts_non_finite_initial_state::<f64>();
}

#[test]
fn nuts_non_finite_initial_state_f32() {
    nuts_non_finite_initial_state::<f32>();
}

/// The NUTS faults: the Metropolis ones and a finite gradient so large that
/// the kinetic energy overflows.
const NUTS_FAULTS: [Fault; 7] = [
    Fault::NanPotential,
    Fault::PosInfPotential,
    Fault::NegInfPotential,
    Fault::NanGradient,
    Fault::PosInfGradient,
    Fault::NegInfGradient,
    Fault::HugeGradient,
];

fn nuts_state<T: Real, K: Metric<T, 5>>(n: &Nuts<T, 5, K>) -> Vec<u64> {
    let mut v = all_bits(n.position());
    v.push(bits(n.potential()));
    v.extend(all_bits(n.gradient()));
    v
}

/// Runs 300 NUTS draws on a faulty target and checks every draw: at most one
/// bad evaluation per draw (the trajectory stops at the bad leaf) and then the
/// draw is divergent, and only then; the evaluation count is the target's;
/// the new state is a valid leaf (finite, with a finite energy error); a draw
/// that diverged on its first leaf leaves the state untouched. Then 200 draws
/// on a clean target: no divergence, the chain moves.
fn check_nuts<T: Real, K: Metric<T, 5> + Clone>(
    metric: K,
    step_size: f64,
    name: &str,
    faults: &[Fault],
    triggers: &[Trigger],
) {
    let steps = 300;
    for (f, &fault) in faults.iter().enumerate() {
        for (t, &trigger) in triggers.iter().enumerate() {
            let case = format!("{name} {fault:?} {trigger:?}");
            let target = Faulty::new(VARIANCES, fault, trigger);
            let settings = NutsSettings::new(T::from_f64(step_size));
            let mut nuts = no_panic(&case, || {
                Nuts::<T, 5, K>::new(settings, metric.clone(), [T::ZERO; 5], &target).unwrap()
            });
            let seed = 2000 + 10 * f as u64 + t as u64;
            let mut rng = XorShiftRng::seed_from_u64(seed);
            let (mut divergent, mut moved, mut moved_after_last) = (0u64, 0u64, 0u64);
            for k in 0..steps {
                let before = nuts_state(&nuts);
                let (bad0, calls0) = (target.bad.get(), target.calls.get());
                let stats = no_panic(&case, || nuts.step(&target, &mut rng));
                let bad = target.bad.get() - bad0;
                let calls = target.calls.get() - calls0;
                assert!(bad <= 1, "{case} draw {k}: the tree grew after a bad leaf");
                assert_eq!(stats.gradient_evaluations as u64, calls, "{case} draw {k}");
                assert_eq!(
                    stats.leapfrog_steps, stats.gradient_evaluations,
                    "{case} draw {k}"
                );
                assert_eq!(stats.divergent, bad == 1, "{case} draw {k}: {stats:?}");
                assert!(
                    stats.energy_error.is_finite() && stats.energy.is_finite(),
                    "{case} draw {k}: {stats:?}"
                );
                let alpha = stats.acceptance_statistic;
                assert!(
                    alpha >= T::ZERO && alpha <= T::ONE,
                    "{case} draw {k}: {stats:?}"
                );
                assert!(
                    nuts.position()
                        .iter()
                        .chain(nuts.gradient())
                        .all(|v| v.is_finite())
                        && nuts.potential().is_finite(),
                    "{case} draw {k}: non-finite state"
                );
                if stats.divergent {
                    divergent += 1;
                    moved_after_last = 0;
                    assert!(!stats.reached_max_depth, "{case} draw {k}");
                    if stats.tree_depth == 0 {
                        assert!(!stats.moved, "{case} draw {k}");
                        assert_eq!(nuts_state(&nuts), before, "{case} draw {k}");
                    }
                }
                if stats.moved {
                    moved += 1;
                    moved_after_last += 1;
                } else {
                    assert_eq!(nuts_state(&nuts), before, "{case} draw {k}: not moved");
                }
                if let Trigger::Region(threshold) = trigger {
                    // Only valid leaves are sampled: never one in the bad region.
                    let x = nuts.position()[0].to_f64();
                    assert!(x <= threshold, "{case} draw {k}: θ₀ = {x}");
                }
            }
            assert_eq!(
                divergent,
                target.bad.get(),
                "{case}: one divergence per bad evaluation"
            );
            assert!(divergent > 0, "{case}: the fault never fired");
            match trigger {
                Trigger::From(_) => {
                    assert_eq!(divergent, steps as u64, "{case}");
                    assert_eq!(moved, 0, "{case}");
                }
                Trigger::Window(..) => {
                    assert!(
                        moved_after_last > 50,
                        "{case}: {moved_after_last} moves after"
                    );
                }
                _ => assert!(moved > steps as u64 / 4, "{case}: moved {moved}"),
            }
            // Once the target is clean again the sampler keeps working.
            let clean = Faulty::clean(VARIANCES);
            let mut rng = XorShiftRng::seed_from_u64(seed + 5000);
            let mut moved = 0;
            for _ in 0..200 {
                let stats = no_panic(&case, || nuts.step(&clean, &mut rng));
                assert!(!stats.divergent, "{case}: divergence on the clean target");
                moved += stats.moved as u32;
            }
            assert!(
                moved > 150,
                "{case}: only {moved}/200 moved after the faults"
            );
        }
    }
}

/// Σ with the Faulty target's variances on the diagonal and correlations.
fn faulty_covariance<T: Real>() -> [[T; 5]; 5] {
    std::array::from_fn(|i| {
        std::array::from_fn(|j| {
            let c = if i == j {
                VARIANCES[i]
            } else {
                0.3 * (VARIANCES[i] * VARIANCES[j]).sqrt()
            };
            T::from_f64(c)
        })
    })
}

/// The L-BFGS metric on the base diag(VARIANCES) with two exact pairs of a
/// quadratic.
fn faulty_lbfgs<T: Real>() -> LbfgsMetric<T, 5, 3> {
    let mut memory = LbfgsMemory::<T, 5, 3>::new(LbfgsSettings::with_max_pairs(3)).unwrap();
    let s1 = [1.0, 0.5, -0.5, 0.0, 1.0].map(T::from_f64);
    let s2 = [0.0, 1.0, 1.0, -1.0, 0.5].map(T::from_f64);
    for s in [s1, s2] {
        // y = A s with A = diag(1/VARIANCES) + 0.2·11ᵀ.
        let sum = s.iter().fold(T::ZERO, |a, b| a + *b);
        let y: [T; 5] =
            std::array::from_fn(|i| s[i] / T::from_f64(VARIANCES[i]) + T::from_f64(0.2) * sum);
        assert!(memory.try_push(&s, &y));
    }
    LbfgsMetric::new(&VARIANCES.map(T::from_f64), &memory, T::ZERO).unwrap()
}

#[test]
fn nuts_divergences_f64() {
    check_nuts::<f64, _>(
        IdentityMetric,
        0.3,
        "Nuts identity",
        &NUTS_FAULTS,
        &MH_TRIGGERS,
    );
    let diagonal = DiagonalMetric::new(&VARIANCES).unwrap();
    check_nuts::<f64, _>(diagonal, 0.5, "Nuts diagonal", &NUTS_FAULTS, &MH_TRIGGERS);
    let dense = DenseMetric::new(&faulty_covariance()).unwrap();
    check_nuts::<f64, _>(dense, 0.5, "Nuts dense", &NUTS_FAULTS, &MH_TRIGGERS);
    check_nuts::<f64, _>(
        faulty_lbfgs(),
        0.5,
        "Nuts L-BFGS",
        &NUTS_FAULTS,
        &MH_TRIGGERS,
    );
}

#[test]
fn nuts_divergences_f32() {
    let faults = [
        Fault::NanPotential,
        Fault::PosInfGradient,
        Fault::HugeGradient,
    ];
    let triggers = [Trigger::From(1), Trigger::Pseudo(11), Trigger::Region(0.8)];
    check_nuts::<f32, _>(IdentityMetric, 0.3, "Nuts f32 identity", &faults, &triggers);
    let dense = DenseMetric::new(&faulty_covariance()).unwrap();
    check_nuts::<f32, _>(dense, 0.5, "Nuts f32 dense", &faults, &triggers);
    check_nuts::<f32, _>(faulty_lbfgs(), 0.5, "Nuts f32 L-BFGS", &faults, &triggers);
}

/// NUTS in D = 0, 1 and an odd D, with the identity and diagonal metrics.
#[test]
fn nuts_degenerate_dimensions() {
    fn run<T: Real, const D: usize>() {
        let target = StandardNormal;
        let mut rng = XorShiftRng::seed_from_u64(D as u64 + 100);
        let case = format!("NUTS D = {D}, {}", core::any::type_name::<T>());
        no_panic(&case, || {
            let settings = NutsSettings::new(T::HALF);
            let mut a =
                Nuts::<T, D, _>::new(settings, IdentityMetric, [T::HALF; D], &target).unwrap();
            let metric = DiagonalMetric::new(&[T::from_f64(2.0); D]).unwrap();
            let mut b = Nuts::<T, D, _>::new(settings, metric, [T::HALF; D], &target).unwrap();
            for _ in 0..200 {
                assert!(!a.step(&target, &mut rng).divergent, "{case}");
                assert!(!b.step(&target, &mut rng).divergent, "{case}");
            }
            assert!(
                a.position()
                    .iter()
                    .chain(b.position())
                    .all(|v| v.is_finite())
            );
        });
    }
    run::<f64, 0>();
    run::<f64, 1>();
    run::<f64, 3>();
    run::<f32, 0>();
    run::<f32, 1>();
    run::<f32, 7>();
}
