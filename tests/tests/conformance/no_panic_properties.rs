//! Property tests of the core's bad-input contract: *the core never allocates
//! and never panics on input: invalid settings and non-finite densities or
//! gradients come back as errors or as rejected, counted transitions, and the
//! sampler state is left usable.*
//!
//! The hand-picked cases of the `bad_input` modules (`hmc`, `amagold`,
//! `ensemble`, `recipe`) and the `conformance!` checks of
//! `sampler_conformance` check each rule on a few inputs; here proptest
//! searches the input space, shrinks any failure to a minimal case and
//! persists its seed in `tests/proptest-regressions/no_panic_properties.txt`
//! (committed, re-run first on every run). The allocation half of the contract is the `no_heap`
//! modules' job.
//!
//! # Strategies
//!
//! - **Settings**: every real setting is drawn from a sensible range most of
//!   the time and otherwise from a list of special values (0, −0, negatives,
//!   NaN, ±∞, 1e308, `f64::MAX`, 1e154, subnormals, `MIN_POSITIVE`, …), converted
//!   to the sampler's type (so 1e308 is ∞ and 5e-324 is 0 in `f32`); integer
//!   settings include 0, and the L-BFGS memory size runs over 0..=M+1. The
//!   expected verdict (valid or not) is computed from the documented domain of
//!   every field, never read from the core.
//! - **Positions**: each coordinate is finite and moderate most of the time,
//!   otherwise a special value (NaN, ±∞, ±1e308, subnormal, …).
//! - **Adversarial target** ([`Scripted`]): a quadratic U = ½a‖θ‖² whose n-th
//!   evaluation follows entry n (mod length) of a generated script: mostly the
//!   quadratic, sometimes a jump discontinuity, a flat region (U constant,
//!   ∇U = 0) or a saturated tail (U = min(½a‖θ‖², cap)), both finite also at
//!   a non-finite position, a concave piece, a NaN/±∞/±1e308
//!   potential, a NaN/±∞ gradient entry or a gradient of ±1e308 everywhere. The
//!   target logs whether each returned U and ∇U was finite. The metric of
//!   SGRLD/SGRHMC and the Hessian diagonal of pSGLD follow scripts the same way.
//! - **Actions**: 30–60 actions per case, mostly `step`, sometimes
//!   `set_step_size` with a value from the settings strategy, sometimes a
//!   sampler-specific setter (`set_settings`, `freeze_memory`,
//!   `set_preconditioner`, `set_momentum`, `set_thermostat`).
//!
//! # Properties
//!
//! - A constructor returns `Err(InvalidSetting)` iff a setting is out of its
//!   documented domain; otherwise `Err(NonFiniteInitialState)` iff a start or
//!   the target there is not finite; otherwise a sampler. Setters return `Ok`
//!   iff the value is valid, and on `Err` leave the settings as they were.
//! - Nothing panics (proptest runs each case under `catch_unwind`).
//! - Metropolis samplers (HMC, QNHMC, HMC-BFGS, MH-BFGS, AMAGOLD, L2MC), as
//!   [`StepStats`] documents: `divergent` iff the energy error is not finite or
//!   above [`DIVERGENCE_THRESHOLD`]; a divergent step is rejected with
//!   probability 0; otherwise the probability is min(1, exp(−ΔH)); every
//!   non-finite U or ∇U the sampler consumed makes the step a rejected
//!   divergence; `gradient_evaluations` counts the target's calls; a rejected
//!   step leaves the state bit for bit as it was (QNHMC: also its memory).
//! - Error-returning samplers (HAMCMC and the complete-recipe samplers): a
//!   non-finite gradient (or metric, or Hessian diagonal) they consumed is
//!   `Err(NonFiniteGradient)`, and only that (or a documented overflow) is; on
//!   any `Err` the sampler is exactly as before the call: its accessors agree
//!   bit for bit, and it and a clone taken before the call produce the same
//!   chain on a well-behaved target from the same seed.
//! - Where a sampler documents its own rule, that rule is asserted: AMAGOLD
//!   discards the gradient of its full-data U evaluation (and L2MC the U of
//!   its inner gradient evaluations), so only what it consumes counts; pSGLD
//!   refuses a step whose V = αV + (1 − α)(s·g)² overflows, and may refuse one
//!   whose correction Γ overflows (`psgld_overflow`).
//! - After every call the exposed state (position, potential, gradient,
//!   momentum, thermostat, preconditioner, L-BFGS memory) is finite, and the
//!   memory holds only finite pairs with sᵀy > 0.
//! - [`LbfgsMemory`]: `try_push` of arbitrary pairs (NaN, ±∞, 0, huge, tiny)
//!   admits a pair iff the documented curvature rule says so (with a margin for
//!   rounding), keeps the counters and γ as documented, and every operator runs
//!   without panicking, exactly reproducibly, and exactly γ·v on an empty memory.
//!
//! Both `f32` and `f64` run every property.

use std::cell::{Cell, RefCell};
use std::ops::Range;

use proptest::collection::vec;
use proptest::prelude::{Just, ProptestConfig, Strategy, any, prop_oneof, proptest};
use proptest::test_runner::{FileFailurePersistence, TestCaseError};
use proptest::{prop_assert, prop_assert_eq};
use qnmc::lbfgs::{CurvaturePolicy, InitialScaling, LbfgsMemory, LbfgsSettings};
use qnmc::metric::DiagonalMetric;
use qnmc::samplers::DIVERGENCE_THRESHOLD;
use qnmc::samplers::recipe::{
    Correction, DiagonalRiemannianMetric, MinibatchHessianDiagonal, Psgld, PsgldSettings, Sghmc,
    SghmcSettings, SghmcUpdate, Sgld, SgldSettings, Sgnht, SgnhtSettings, Sgrhmc, SgrhmcSettings,
    Sgrld, SgrldSettings, Thermostat,
};
use qnmc::{
    Amagold, AmagoldSettings, Error, Hamcmc, HamcmcSettings, Hmc, HmcBfgs, HmcBfgsSettings,
    HmcSettings, MemoryUpdate, MhBfgs, MhBfgsProposal, MhBfgsSettings, MinibatchPotential,
    MomentumRefresh, Potential, Qnhmc, QnhmcMass, QnhmcSettings, Real, StepSizeSchedule, StepStats,
};
use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

/// Dimension of every chain.
const D: usize = 3;
/// Pair capacity of the QNHMC memory and of the stand-alone memory.
const PAIRS: usize = 3;
/// Cases per property and type (two types per sampler); `PROPTEST_CASES`
/// overrides it (0 runs only the committed regressions).
const CASES: u32 = 512;

type Outcome = Result<(), TestCaseError>;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(CASES),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/proptest-regressions/no_panic_properties.txt"
        )))),
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

/// Values outside (or at the edge of) every sensible range.
fn special() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(-1.0),
        Just(-1e-300),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(1e308),
        Just(-1e308),
        Just(f64::MAX),
        Just(1e154),
        Just(1e40),
        Just(5e-324),
        Just(f64::MIN_POSITIVE),
        Just(1e-40),
        Just(1e-300),
    ]
}

/// A real setting: in `good` most of the time, otherwise a special value.
fn real(good: Range<f64>) -> impl Strategy<Value = f64> + Clone {
    prop_oneof![6 => good, 1 => special()]
}

/// A step size: moderate, sometimes large, sometimes finite but so large that
/// a drift overflows (3e38 is finite in `f32` too), sometimes special.
fn step_size() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![
        10 => 1e-3..0.5,
        1 => 0.5..50.0,
        2 => prop_oneof![Just(3e38), Just(1e300), Just(1e308), Just(f64::MAX)],
        2 => special(),
    ]
}

/// A coordinate: moderate most of the time, otherwise special.
fn coordinate() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![20 => -3.0..3.0, 1 => special()]
}

fn point() -> impl Strategy<Value = [f64; D]> + Clone {
    [coordinate(), coordinate(), coordinate()]
}

/// What the n-th evaluation of the [`Scripted`] target returns.
#[derive(Debug, Clone, Copy)]
enum Out {
    /// U = ½a‖θ‖², ∇U = aθ.
    Quadratic,
    /// The quadratic plus a constant: a jump discontinuity.
    Jump(f64),
    /// U = c and ∇U = 0 whatever θ is (also non-finite): a flat region.
    Flat(f64),
    /// U = min(½a‖θ‖², cap), ∇U = 0 where capped (also at a non-finite θ): a
    /// saturated tail, as in a robust loss.
    Saturating(f64),
    /// U = −½a‖θ‖²: unbounded below.
    Concave,
    /// The quadratic's gradient with U = the value (NaN, ±∞, ±1e308).
    Potential(f64),
    /// The quadratic with gradient entry `i mod D` replaced by the value.
    GradientEntry(usize, f64),
    /// The quadratic's U with every gradient entry the value (±1e308).
    Gradient(f64),
}

fn out() -> impl Strategy<Value = Out> {
    prop_oneof![
        40 => Just(Out::Quadratic),
        2 => prop_oneof![Just(10.0), Just(-1e3), Just(1e6)].prop_map(Out::Jump),
        2 => prop_oneof![Just(0.0), Just(-50.0), Just(1e3)].prop_map(Out::Flat),
        10 => prop_oneof![Just(2.0), Just(1e3)].prop_map(Out::Saturating),
        1 => Just(Out::Concave),
        1 => prop_oneof![
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(1e308),
            Just(-1e308)
        ]
        .prop_map(Out::Potential),
        2 => (0..D, prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY)])
            .prop_map(|(i, v)| Out::GradientEntry(i, v)),
        1 => prop_oneof![Just(1e308), Just(-1e308)].prop_map(Out::Gradient),
    ]
}

/// What the n-th evaluation of the metric G(θ)⁻¹ returns.
#[derive(Debug, Clone, Copy)]
enum Met {
    /// G⁻¹ = value·I, derivative 0.
    Constant(f64),
    /// (G⁻¹)ᵢᵢ = 1/(1 + θᵢ²), derivative −2θᵢ/(1 + θᵢ²)².
    Bump,
    /// Entry `i mod D` of G⁻¹ replaced by the value (NaN, 0, −1, ∞).
    InverseEntry(usize, f64),
    /// Entry `i mod D` of the derivative replaced by the value (NaN, ±∞).
    DerivativeEntry(usize, f64),
}

fn metric_out() -> impl Strategy<Value = Met> {
    prop_oneof![
        8 => prop_oneof![Just(1.0), Just(0.25), Just(4.0), Just(1e-300), Just(1e300)]
            .prop_map(Met::Constant),
        8 => Just(Met::Bump),
        1 => (0..D, prop_oneof![Just(f64::NAN), Just(0.0), Just(-1.0), Just(f64::INFINITY)])
            .prop_map(|(i, v)| Met::InverseEntry(i, v)),
        1 => (0..D, prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY)])
            .prop_map(|(i, v)| Met::DerivativeEntry(i, v)),
    ]
}

/// One call a test makes between checks.
#[derive(Debug, Clone, Copy)]
enum Action {
    Step,
    SetStepSize(f64),
    /// A sampler-specific setter, fed with this value.
    Special(f64),
}

fn actions() -> impl Strategy<Value = Vec<Action>> {
    vec(
        prop_oneof![
            14 => Just(Action::Step),
            1 => step_size().prop_map(Action::SetStepSize),
            1 => real(0.05..2.0).prop_map(Action::Special),
        ],
        30..=60,
    )
}

/// What every case has: the generator's seed, the target and the actions.
#[derive(Debug, Clone)]
struct Common {
    seed: u64,
    curvature: f64,
    script: Vec<Out>,
    metric: Vec<Met>,
    hessian: Vec<Out>,
    actions: Vec<Action>,
}

fn common() -> impl Strategy<Value = Common> {
    (
        any::<u64>(),
        prop_oneof![8 => 0.1..10.0, 1 => Just(1e-6), 1 => Just(1e6)],
        vec(out(), 1..12),
        vec(metric_out(), 1..6),
        vec(out(), 1..6),
        actions(),
    )
        .prop_map(
            |(seed, curvature, script, metric, hessian, actions)| Common {
                seed,
                curvature,
                script,
                metric,
                hessian,
                actions,
            },
        )
}

// ---------------------------------------------------------------------------
// The adversarial target, metric and Hessian diagonal
// ---------------------------------------------------------------------------

/// Which trait method the sampler called.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Via {
    Potential,
    Minibatch,
}

/// One evaluation: how it was called, whether U and ∇U came back finite, and
/// ∇U (in `f64`, exact for `f32` too).
#[derive(Debug, Clone)]
struct Call {
    via: Via,
    potential_finite: bool,
    gradient_finite: bool,
    gradient: Vec<f64>,
}

impl Call {
    fn finite(&self) -> bool {
        self.potential_finite && self.gradient_finite
    }
}

/// A target following a script (module docs), logging every evaluation. The
/// same object is a [`Potential`], a [`MinibatchPotential`] (the batch is a
/// word drawn from the generator) and a [`MinibatchHessianDiagonal`], and
/// [`ScriptedMetric`] is its metric.
struct Scripted {
    curvature: f64,
    script: Vec<Out>,
    hessian: Vec<Out>,
    next: Cell<usize>,
    next_hessian: Cell<usize>,
    calls: RefCell<Vec<Call>>,
    /// Every Hessian diagonal returned, in `f64`.
    hessian_calls: RefCell<Vec<Vec<f64>>>,
}

impl Scripted {
    fn new(common: &Common) -> Self {
        Scripted {
            curvature: common.curvature,
            script: common.script.clone(),
            hessian: common.hessian.clone(),
            next: Cell::new(0),
            next_hessian: Cell::new(0),
            calls: RefCell::new(Vec::new()),
            hessian_calls: RefCell::new(Vec::new()),
        }
    }

    /// A well-behaved quadratic of the same curvature.
    fn clean(curvature: f64) -> Self {
        Scripted::new(&Common {
            seed: 0,
            curvature,
            script: vec![Out::Quadratic],
            metric: vec![Met::Constant(1.0)],
            hessian: vec![Out::Quadratic],
            actions: Vec::new(),
        })
    }

    /// The evaluations since the last call.
    fn take(&self) -> Vec<Call> {
        std::mem::take(&mut *self.calls.borrow_mut())
    }

    fn take_hessian(&self) -> Vec<Vec<f64>> {
        std::mem::take(&mut *self.hessian_calls.borrow_mut())
    }

    fn evaluate<T: Real, const N: usize>(&self, x: &[T; N], g: &mut [T; N], via: Via) -> T {
        let n = self.next.get();
        self.next.set(n + 1);
        let u = apply(self.script[n % self.script.len()], self.curvature, x, g);
        self.calls.borrow_mut().push(Call {
            via,
            potential_finite: u.is_finite(),
            gradient_finite: g.iter().all(|v| v.is_finite()),
            gradient: g.iter().map(|v| v.to_f64()).collect(),
        });
        u
    }
}

/// Writes the scripted gradient into `g` and returns the scripted U.
fn apply<T: Real, const N: usize>(out: Out, a: f64, x: &[T; N], g: &mut [T; N]) -> T {
    let a = T::from_f64(a);
    let mut u = T::ZERO;
    for i in 0..N {
        g[i] = a * x[i];
        u += x[i] * g[i];
    }
    u = T::HALF * u;
    match out {
        Out::Quadratic => u,
        Out::Jump(c) => u + T::from_f64(c),
        Out::Flat(c) => {
            *g = [T::ZERO; N];
            T::from_f64(c)
        }
        Out::Saturating(cap) => {
            let cap = T::from_f64(cap);
            // A NaN (from a non-finite θ) is capped too.
            if u <= cap {
                u
            } else {
                *g = [T::ZERO; N];
                cap
            }
        }
        Out::Concave => {
            for v in g.iter_mut() {
                *v = -*v;
            }
            -u
        }
        Out::Potential(v) => T::from_f64(v),
        Out::GradientEntry(i, v) => {
            if N > 0 {
                g[i % N] = T::from_f64(v);
            }
            u
        }
        Out::Gradient(v) => {
            *g = [T::from_f64(v); N];
            u
        }
    }
}

impl<T: Real, const N: usize> Potential<T, N> for Scripted {
    fn potential_and_gradient(&self, x: &[T; N], g: &mut [T; N]) -> T {
        self.evaluate(x, g, Via::Potential)
    }
}

impl<T: Real, const N: usize> MinibatchPotential<T, N> for Scripted {
    type Batch = u32;
    fn draw_batch<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        rng.next_u32()
    }
    fn minibatch_gradient(&self, _batch: &u32, x: &[T; N], g: &mut [T; N]) {
        let _ = self.evaluate(x, g, Via::Minibatch);
    }
}

impl<T: Real, const N: usize> MinibatchHessianDiagonal<T, N> for Scripted {
    /// The scripted gradient's derivative: a (or −a) on the diagonal, with the
    /// script's non-finite entries carried over.
    fn minibatch_hessian_diagonal(&self, _batch: &u32, _x: &[T; N], out: &mut [T; N]) {
        let n = self.next_hessian.get();
        self.next_hessian.set(n + 1);
        let ones = [T::ONE; N];
        let _ = apply(
            self.hessian[n % self.hessian.len()],
            self.curvature,
            &ones,
            out,
        );
        self.hessian_calls
            .borrow_mut()
            .push(out.iter().map(|v| v.to_f64()).collect());
    }
}

/// A diagonal metric following a script; logs whether each evaluation was
/// admissible (G⁻¹ finite and > 0, derivative finite).
#[derive(Debug, Clone)]
struct ScriptedMetric {
    script: Vec<Met>,
    next: Cell<usize>,
    calls: RefCell<Vec<bool>>,
}

impl ScriptedMetric {
    fn new(script: &[Met]) -> Self {
        ScriptedMetric {
            script: script.to_vec(),
            next: Cell::new(0),
            calls: RefCell::new(Vec::new()),
        }
    }

    fn take(&self) -> Vec<bool> {
        std::mem::take(&mut *self.calls.borrow_mut())
    }

    /// SGRLD and SGRHMC own their metric: before a step, their copy becomes
    /// `other` (script, position in it, calls so far) ...
    fn load(&mut self, other: &ScriptedMetric) {
        self.clone_from(other);
    }

    /// ... and after it, `other` takes the copy's position and calls, as if
    /// the step had called `other` itself.
    fn unload(&self, other: &ScriptedMetric) {
        other.next.set(self.next.get());
        *other.calls.borrow_mut() = self.take();
    }
}

impl<T: Real, const N: usize> DiagonalRiemannianMetric<T, N> for ScriptedMetric {
    fn inverse_metric(&self, x: &[T; N], inverse: &mut [T; N], derivative: &mut [T; N]) {
        let n = self.next.get();
        self.next.set(n + 1);
        for i in 0..N {
            let q = T::ONE + x[i] * x[i];
            inverse[i] = T::ONE / q;
            derivative[i] = -(T::TWO * x[i]) / (q * q);
        }
        match self.script[n % self.script.len()] {
            Met::Constant(c) => {
                *inverse = [T::from_f64(c); N];
                *derivative = [T::ZERO; N];
            }
            Met::Bump => {}
            Met::InverseEntry(i, v) => {
                if N > 0 {
                    inverse[i % N] = T::from_f64(v);
                }
            }
            Met::DerivativeEntry(i, v) => {
                if N > 0 {
                    derivative[i % N] = T::from_f64(v);
                }
            }
        }
        let admissible = inverse.iter().all(|v| v.is_finite() && *v > T::ZERO)
            && derivative.iter().all(|v| v.is_finite());
        self.calls.borrow_mut().push(admissible);
    }
}

// ---------------------------------------------------------------------------
// Oracles and checks
// ---------------------------------------------------------------------------

/// The documented domain "finite and > 0".
fn positive<T: Real>(v: T) -> bool {
    v.is_finite() && v > T::ZERO
}

/// The documented domain "finite and ≥ 0".
fn non_negative<T: Real>(v: T) -> bool {
    v.is_finite() && v >= T::ZERO
}

/// The recipe's noise condition: B̂ finite, ≥ 0 and 2·diffusion − εB̂ ≥ 0.
fn noise_ok<T: Real>(step: T, diffusion: T, noise: T) -> bool {
    non_negative(noise) && T::TWO * diffusion - step * noise >= T::ZERO
}

fn finite<T: Real>(x: &[T]) -> bool {
    x.iter().all(|v| v.is_finite())
}

fn bits<T: Real>(x: T) -> u64 {
    x.to_f64().to_bits()
}

fn all_bits<T: Real>(x: &[T]) -> Vec<u64> {
    x.iter().map(|v| bits(*v)).collect()
}

fn to_t<T: Real, const N: usize>(x: &[f64; N]) -> [T; N] {
    core::array::from_fn(|i| T::from_f64(x[i]))
}

/// Length, γ and every held pair, bit for bit.
fn memory_bits<T: Real, const N: usize, const M: usize>(m: &LbfgsMemory<T, N, M>) -> Vec<u64> {
    let mut out = vec![m.len() as u64, bits(m.gamma())];
    for (s, y, sy) in m.pairs().iter() {
        out.extend(all_bits(s));
        out.extend(all_bits(y));
        out.push(bits(sy));
    }
    out
}

/// The memory's documented invariants: at most `max_pairs` pairs, γ finite and
/// > 0, every pair finite with sᵀy finite and > 0.
fn check_memory<T: Real, const N: usize, const M: usize>(
    m: &LbfgsMemory<T, N, M>,
    max_pairs: usize,
) -> Outcome {
    prop_assert!(m.len() <= max_pairs.min(M), "{} pairs held", m.len());
    prop_assert!(positive(m.gamma()), "γ = {}", m.gamma());
    for (s, y, sy) in m.pairs().iter() {
        prop_assert!(
            finite(s) && finite(y) && positive(sy),
            "held pair s {s:?} y {y:?} sᵀy {sy}"
        );
    }
    Ok(())
}

/// Checks a constructor's verdict: `InvalidSetting` iff `!valid`; then
/// `NonFiniteInitialState` iff a start is non-finite or an evaluation made at
/// construction was (U and ∇U are both checked); `Ok` only after `evaluations`
/// finite evaluations. Returns the sampler, if any.
fn check_built<S>(
    built: Result<S, Error>,
    valid: bool,
    starts_finite: bool,
    calls: &[Call],
    evaluations: usize,
) -> Result<Option<S>, TestCaseError> {
    match built {
        Err(Error::InvalidSetting { setting, .. }) => {
            prop_assert!(!valid, "valid settings rejected: `{setting}`");
            Ok(None)
        }
        Err(Error::NonFiniteInitialState) => {
            prop_assert!(valid, "invalid settings accepted");
            prop_assert!(
                !starts_finite || calls.iter().any(|c| !c.finite()),
                "NonFiniteInitialState on a finite start: {calls:?}"
            );
            Ok(None)
        }
        Err(other) => Err(TestCaseError::fail(format!(
            "unexpected constructor error {other:?}"
        ))),
        Ok(s) => {
            prop_assert!(valid, "invalid settings accepted");
            prop_assert!(starts_finite, "non-finite start accepted");
            prop_assert!(
                calls.len() == evaluations && calls.iter().all(Call::finite),
                "accepted a start with evaluations {calls:?}"
            );
            Ok(Some(s))
        }
    }
}

/// The verdict of a constructor that evaluates nothing.
fn check_built_plain<S>(
    built: Result<S, Error>,
    valid: bool,
    start_finite: bool,
) -> Result<Option<S>, TestCaseError> {
    check_built(built, valid, start_finite, &[], 0)
}

/// What [`StepStats`] promises for a Metropolis step that used step size `eps`,
/// made the evaluations `calls`, and consumed a non-finite value iff
/// `consumed_bad`.
fn check_metropolis<T: Real>(
    stats: &StepStats<T>,
    eps: T,
    calls: &[Call],
    consumed_bad: bool,
) -> Outcome {
    prop_assert_eq!(bits(stats.step_size), bits(eps), "step_size reported");
    prop_assert_eq!(
        stats.gradient_evaluations as usize,
        calls.len(),
        "gradient_evaluations"
    );
    let e = stats.energy_error;
    let over = !(e.is_finite() && e.to_f64() <= DIVERGENCE_THRESHOLD);
    prop_assert_eq!(
        stats.divergent,
        over,
        "divergent must be (energy error {} non-finite or above the threshold)",
        e
    );
    let p = stats.acceptance_probability.to_f64();
    if stats.divergent {
        prop_assert!(
            !stats.accepted && p == 0.0,
            "divergent step accepted: {stats:?}"
        );
    } else {
        let expected = if e <= T::ZERO {
            1.0
        } else {
            (-e.to_f64()).exp()
        };
        prop_assert!(
            (0.0..=1.0).contains(&p) && (p - expected).abs() <= 1e-5 * expected + 1e-6,
            "acceptance probability {p} for energy error {e}"
        );
        prop_assert!(!stats.accepted || p > 0.0, "accepted with probability 0");
    }
    if consumed_bad {
        prop_assert!(
            stats.divergent && !stats.accepted,
            "a non-finite U or ∇U was not a rejected divergence: {stats:?}, calls {calls:?}"
        );
    }
    Ok(())
}

/// Every evaluation's U and ∇U are consumed (HMC, QNHMC, the ensembles).
fn any_bad(calls: &[Call]) -> bool {
    calls.iter().any(|c| !c.finite())
}

/// The result of `set_step_size(v)`: `Ok` iff `valid`, then ε = v; on `Err`
/// (an `InvalidSetting`) the settings are unchanged (`unchanged`).
fn check_set<T: Real>(
    result: Result<(), Error>,
    valid: bool,
    now: T,
    value: T,
    unchanged: bool,
) -> Outcome {
    match result {
        Ok(()) => {
            prop_assert!(valid, "set_step_size({}) accepted", value);
            prop_assert_eq!(bits(now), bits(value));
        }
        Err(Error::InvalidSetting { .. }) => {
            prop_assert!(!valid, "set_step_size({}) rejected", value);
            prop_assert!(unchanged, "a failed setter changed the settings");
        }
        Err(e) => return Err(TestCaseError::fail(format!("setter error {e:?}"))),
    }
    Ok(())
}

/// After an `Err` from `step`: `after` (the sampler) and `before` (a clone from
/// before the call) produce the same chain on a clean target from the same
/// seed, and that chain keeps a finite state. `run` steps a sampler once on the
/// clean target and describes the result and the observable state.
fn check_replay<S: Clone>(
    after: &S,
    before: &S,
    seed: u64,
    mut run: impl FnMut(&mut S, &mut XorShiftRng) -> (String, bool),
) -> Outcome {
    let (mut a, mut b) = (after.clone(), before.clone());
    let (mut ra, mut rb) = (
        XorShiftRng::seed_from_u64(seed ^ 0x5eed),
        XorShiftRng::seed_from_u64(seed ^ 0x5eed),
    );
    for k in 0..3 {
        let (da, fa) = run(&mut a, &mut ra);
        let (db, _) = run(&mut b, &mut rb);
        prop_assert_eq!(&da, &db, "replay step {} after an Err differs", k);
        prop_assert!(fa, "non-finite state on a clean target: {}", da);
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// LbfgsMemory
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum MemOp {
    Push([f64; D], [f64; D]),
    /// y = diag(a) s with a > 0: a pair of a convex quadratic.
    CurvedPush([f64; D], [f64; D]),
    Clear,
    Apply([f64; D]),
}

/// A pair entry: moderate, zero, huge, tiny or non-finite.
fn entry() -> impl Strategy<Value = f64> {
    prop_oneof![
        10 => -10.0..10.0,
        2 => Just(0.0),
        1 => Just(1e200),
        1 => Just(-1e200),
        1 => Just(1e-200),
        4 => special(),
    ]
}

fn pair_vector() -> impl Strategy<Value = [f64; D]> {
    [entry(), entry(), entry()]
}

#[derive(Debug, Clone)]
struct MemoryCase {
    max_pairs: usize,
    gamma: f64,
    newest_pair: bool,
    trust_region: f64,
    relative: f64,
    ops: Vec<MemOp>,
}

fn memory_case() -> impl Strategy<Value = MemoryCase> {
    let op = prop_oneof![
        6 => (pair_vector(), pair_vector()).prop_map(|(s, y)| MemOp::Push(s, y)),
        6 => (pair_vector(), [0.1..10.0, 0.1..10.0, 0.1..10.0])
            .prop_map(|(s, a)| MemOp::CurvedPush(s, a)),
        1 => Just(MemOp::Clear),
        4 => pair_vector().prop_map(MemOp::Apply),
    ];
    (
        0..=PAIRS + 1,
        real(0.01..10.0),
        any::<bool>(),
        prop_oneof![2 => Just(0.0), 1 => real(0.0..2.0)],
        prop_oneof![1 => Just(0.0), 1 => Just(1e-8), 1 => real(0.0..0.5)],
        vec(op, 1..40),
    )
        .prop_map(
            |(max_pairs, gamma, newest_pair, trust_region, relative, ops)| MemoryCase {
                max_pairs,
                gamma,
                newest_pair,
                trust_region,
                relative,
                ops,
            },
        )
}

/// ln‖x‖ without overflow or underflow (−∞ for x = 0).
fn ln_norm<T: Real>(x: &[T]) -> f64 {
    let big = x.iter().fold(0.0f64, |m, v| m.max(v.to_f64().abs()));
    if big == 0.0 {
        return f64::NEG_INFINITY;
    }
    let sum: f64 = x.iter().map(|v| (v.to_f64() / big).powi(2)).sum();
    big.ln() + 0.5 * sum.ln()
}

/// The documented admission rule for (s, y): `Some(true)` if the pair must be
/// admitted, `Some(false)` if it must be skipped, `None` within rounding of
/// the relative-curvature boundary. y ← y + λs (the shift, in `T`), then: a
/// non-finite entry or sᵀy ≤ 0 is skipped; otherwise the pair is skipped iff
/// sᵀy ≤ ε‖s‖‖y‖, compared in exact arithmetic (logarithms, so neither side
/// overflows); ε = 0 is the plain rule sᵀy > 0.
fn admission<T: Real>(s: &[T; D], y: &[T; D], lambda: T, eps: T) -> Option<bool> {
    if !finite(s) || !finite(y) {
        return Some(false);
    }
    let mut shifted = *y;
    if lambda != T::ZERO {
        for i in 0..D {
            shifted[i] += lambda * s[i];
        }
    }
    let mut sy = T::ZERO;
    for i in 0..D {
        sy += s[i] * shifted[i];
    }
    if !finite(&shifted) || !sy.is_finite() || sy <= T::ZERO {
        return Some(false);
    }
    if eps == T::ZERO {
        return Some(true);
    }
    let lhs = sy.to_f64().ln();
    let rhs = eps.to_f64().ln() + ln_norm(s) + ln_norm(&shifted);
    let margin = 1e-4 * (1.0 + lhs.abs().max(rhs.abs()));
    if lhs > rhs + margin {
        Some(true)
    } else if lhs < rhs - margin {
        Some(false)
    } else {
        None
    }
}

fn lbfgs_memory<T: Real>(case: &MemoryCase) -> Outcome {
    let gamma = T::from_f64(case.gamma);
    let settings = LbfgsSettings {
        max_pairs: case.max_pairs,
        scaling: if case.newest_pair {
            InitialScaling::NewestPair(gamma)
        } else {
            InitialScaling::Fixed(gamma)
        },
        curvature: CurvaturePolicy {
            trust_region: T::from_f64(case.trust_region),
            min_relative_curvature: T::from_f64(case.relative),
        },
    };
    let valid = case.max_pairs <= PAIRS
        && positive(gamma)
        && non_negative(settings.curvature.trust_region)
        && non_negative(settings.curvature.min_relative_curvature);
    let Some(mut m) = check_built_plain(LbfgsMemory::<T, D, PAIRS>::new(settings), valid, true)?
    else {
        return Ok(());
    };
    let lambda = settings.curvature.trust_region;
    let eps = settings.curvature.min_relative_curvature;
    for op in &case.ops {
        match op {
            MemOp::Push(s, y) | MemOp::CurvedPush(s, y) => {
                let s: [T; D] = to_t(s);
                let y: [T; D] = match op {
                    MemOp::CurvedPush(_, a) => core::array::from_fn(|i| s[i] * T::from_f64(a[i])),
                    _ => to_t(y),
                };
                let (admitted, skipped, gamma) = (m.pairs_admitted(), m.pairs_skipped(), m.gamma());
                let len = m.len();
                let pushed = m.try_push(&s, &y);
                if let Some(expected) = admission(&s, &y, lambda, eps) {
                    prop_assert_eq!(
                        pushed,
                        expected,
                        "try_push(s {:?}, y {:?}) with λ {}, ε {}",
                        s,
                        y,
                        lambda,
                        eps
                    );
                }
                if pushed && case.max_pairs > 0 {
                    prop_assert_eq!(m.pairs_admitted(), admitted + 1);
                    prop_assert_eq!(m.len(), (len + 1).min(case.max_pairs));
                    let (ns, ny, sy) = m.pairs().newest().expect("a newest pair");
                    prop_assert_eq!(all_bits(ns), all_bits(&s));
                    let mut shifted = y;
                    if lambda != T::ZERO {
                        for i in 0..D {
                            shifted[i] += lambda * s[i];
                        }
                    }
                    prop_assert_eq!(all_bits(ny), all_bits(&shifted));
                    if case.newest_pair {
                        let mut yy = T::ZERO;
                        for v in shifted {
                            yy += v * v;
                        }
                        let g = sy / yy;
                        let expected = if positive(g) { g } else { gamma };
                        prop_assert_eq!(bits(m.gamma()), bits(expected), "γ after a push");
                    }
                } else {
                    // Skipped, or admitted by a memory that keeps nothing.
                    prop_assert_eq!(m.pairs_admitted(), admitted);
                    prop_assert_eq!(m.len(), len);
                    prop_assert_eq!(bits(m.gamma()), bits(gamma));
                }
                prop_assert_eq!(m.pairs_skipped(), skipped + u64::from(!pushed));
                if !case.newest_pair {
                    prop_assert_eq!(bits(m.gamma()), bits(settings_gamma(&settings)));
                }
            }
            MemOp::Clear => {
                m.clear();
                prop_assert!(m.is_empty());
                prop_assert_eq!(bits(m.gamma()), bits(settings_gamma(&settings)));
            }
            MemOp::Apply(v) => {
                let v: [T; D] = to_t(v);
                let run = |m: &mut LbfgsMemory<T, D, PAIRS>| {
                    let mut outs = [[T::ZERO; D]; 6];
                    m.apply_inverse_hessian(&v, &mut outs[0]);
                    m.apply_hessian(&v, &mut outs[1]);
                    m.apply_sqrt_inverse_hessian(&v, &mut outs[2]);
                    m.apply_sqrt_inverse_hessian_transpose(&v, &mut outs[3]);
                    m.apply_sqrt_hessian(&v, &mut outs[4]);
                    m.apply_sqrt_hessian_transpose(&v, &mut outs[5]);
                    let log_det = m.log_det_inverse_hessian();
                    let mut b = all_bits(outs.as_flattened());
                    b.push(bits(log_det));
                    b
                };
                let first = run(&mut m);
                m.refresh_factors();
                let second = run(&mut m);
                prop_assert_eq!(&first, &second, "operators are not reproducible");
                if m.is_empty() {
                    let g = m.gamma();
                    let mut hv = [T::ZERO; D];
                    m.apply_inverse_hessian(&v, &mut hv);
                    let expected: [T; D] = core::array::from_fn(|i| g * v[i]);
                    prop_assert_eq!(all_bits(&hv), all_bits(&expected), "H·v on an empty memory");
                }
            }
        }
        check_memory(&m, case.max_pairs)?;
    }
    Ok(())
}

fn settings_gamma<T: Real>(s: &LbfgsSettings<T>) -> T {
    match s.scaling {
        InitialScaling::Fixed(g) | InitialScaling::NewestPair(g) => g,
    }
}

// ---------------------------------------------------------------------------
// HMC
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct HmcCase {
    step: f64,
    steps: u32,
    diagonal: Option<[f64; D]>,
    x0: [f64; D],
    common: Common,
}

fn leapfrog_steps() -> impl Strategy<Value = u32> + Clone {
    prop_oneof![1 => Just(0u32), 10 => 1u32..=6]
}

fn hmc_case() -> impl Strategy<Value = HmcCase> {
    (
        step_size(),
        leapfrog_steps(),
        proptest::option::weighted(0.4, [real(0.1..4.0), real(0.1..4.0), real(0.1..4.0)]),
        point(),
        common(),
    )
        .prop_map(|(step, steps, diagonal, x0, common)| HmcCase {
            step,
            steps,
            diagonal,
            x0,
            common,
        })
}

/// The settings, the metric (identity when `diagonal` is None) and whether
/// both are valid.
#[allow(clippy::type_complexity)]
fn hmc_parts<T: Real>(
    step: f64,
    steps: u32,
    diagonal: &Option<[f64; D]>,
) -> (HmcSettings<T>, Result<DiagonalMetric<T, D>, Error>, bool) {
    let settings = HmcSettings {
        step_size: T::from_f64(step),
        leapfrog_steps: steps,
    };
    let (metric, metric_valid) = match diagonal {
        None => (Ok(DiagonalMetric::identity()), true),
        Some(d) => {
            let d: [T; D] = to_t(d);
            (DiagonalMetric::new(&d), d.iter().all(|v| positive(*v)))
        }
    };
    let valid = positive(settings.step_size) && steps >= 1 && metric_valid;
    (settings, metric, valid)
}

fn hmc<T: Real>(case: &HmcCase) -> Outcome {
    let (settings, metric, valid) = hmc_parts::<T>(case.step, case.steps, &case.diagonal);
    let x0: [T; D] = to_t(&case.x0);
    let target = Scripted::new(&case.common);
    let built = metric.and_then(|m| Hmc::with_metric(settings, m, x0, &target));
    let Some(mut s) = check_built(built, valid, finite(&x0), &target.take(), 1)? else {
        return Ok(());
    };
    let mut rng = XorShiftRng::seed_from_u64(case.common.seed);
    for action in &case.common.actions {
        match *action {
            Action::Step => {
                let (x, u, g) = (*s.position(), s.potential(), *s.gradient());
                let eps = s.settings().step_size;
                let stats = s.step(&target, &mut rng);
                let calls = target.take();
                check_metropolis(&stats, eps, &calls, any_bad(&calls))?;
                if !stats.accepted {
                    prop_assert_eq!(all_bits(s.position()), all_bits(&x));
                    prop_assert_eq!(bits(s.potential()), bits(u));
                    prop_assert_eq!(all_bits(s.gradient()), all_bits(&g));
                }
            }
            Action::SetStepSize(v) => {
                let v = T::from_f64(v);
                let old = *s.settings();
                let r = s.set_step_size(v);
                check_set(
                    r,
                    positive(v),
                    s.settings().step_size,
                    v,
                    *s.settings() == old,
                )?;
            }
            Action::Special(v) => {
                let new = HmcSettings {
                    step_size: T::from_f64(v),
                    leapfrog_steps: 2,
                };
                let old = *s.settings();
                match s.set_settings(new) {
                    Ok(()) => prop_assert!(positive(new.step_size) && *s.settings() == new),
                    Err(_) => prop_assert!(!positive(new.step_size) && *s.settings() == old),
                }
                let variances: [T; D] = to_t(&[v, 1.0, v]);
                let ok = variances.iter().all(|v| positive(*v));
                let old = s.metric().clone();
                match s.metric_mut().set_variances(&variances) {
                    Ok(()) => prop_assert!(ok && s.metric().variances() == &variances),
                    Err(_) => prop_assert!(!ok && *s.metric() == old),
                }
            }
        }
        prop_assert!(
            finite(s.position()) && s.potential().is_finite() && finite(s.gradient()),
            "non-finite state: θ {:?}, U {}, ∇U {:?}",
            s.position(),
            s.potential(),
            s.gradient()
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// QNHMC
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct QnhmcCase {
    step: f64,
    steps: u32,
    inverse_hessian_mass: bool,
    freeze_after: Option<u64>,
    max_pairs: usize,
    gamma: f64,
    newest_pair: bool,
    trust_region: f64,
    relative: f64,
    x0: [f64; D],
    common: Common,
}

fn qnhmc_case() -> impl Strategy<Value = QnhmcCase> {
    (
        (
            step_size(),
            leapfrog_steps(),
            any::<bool>(),
            proptest::option::of(0u64..40),
        ),
        (
            0..=PAIRS + 1,
            real(0.01..10.0),
            any::<bool>(),
            prop_oneof![2 => Just(0.0), 1 => real(0.0..2.0)],
            prop_oneof![1 => Just(1e-8), 1 => real(0.0..0.5)],
        ),
        point(),
        common(),
    )
        .prop_map(
            |(
                (step, steps, inverse_hessian_mass, freeze_after),
                (max_pairs, gamma, newest_pair, trust_region, relative),
                x0,
                common,
            )| QnhmcCase {
                step,
                steps,
                inverse_hessian_mass,
                freeze_after,
                max_pairs,
                gamma,
                newest_pair,
                trust_region,
                relative,
                x0,
                common,
            },
        )
}

fn qnhmc<T: Real>(case: &QnhmcCase) -> Outcome {
    let gamma = T::from_f64(case.gamma);
    let settings = QnhmcSettings {
        step_size: T::from_f64(case.step),
        leapfrog_steps: case.steps,
        mass: if case.inverse_hessian_mass {
            QnhmcMass::InverseHessian
        } else {
            QnhmcMass::Identity
        },
        memory_update: match case.freeze_after {
            None => MemoryUpdate::Adaptive,
            Some(n) => MemoryUpdate::FreezeAfter(n),
        },
        lbfgs: LbfgsSettings {
            max_pairs: case.max_pairs,
            scaling: if case.newest_pair {
                InitialScaling::NewestPair(gamma)
            } else {
                InitialScaling::Fixed(gamma)
            },
            curvature: CurvaturePolicy {
                trust_region: T::from_f64(case.trust_region),
                min_relative_curvature: T::from_f64(case.relative),
            },
        },
    };
    let valid = positive(settings.step_size)
        && case.steps >= 1
        && case.max_pairs <= PAIRS
        && positive(gamma)
        && non_negative(settings.lbfgs.curvature.trust_region)
        && non_negative(settings.lbfgs.curvature.min_relative_curvature);
    let x0: [T; D] = to_t(&case.x0);
    let target = Scripted::new(&case.common);
    let built = Qnhmc::<T, D, PAIRS>::new(settings, x0, &target);
    let Some(mut s) = check_built(built, valid, finite(&x0), &target.take(), 1)? else {
        return Ok(());
    };
    let mut rng = XorShiftRng::seed_from_u64(case.common.seed);
    for action in &case.common.actions {
        match *action {
            Action::Step => {
                let (x, u, g) = (*s.position(), s.potential(), *s.gradient());
                let memory = memory_bits(s.memory());
                let skipped = s.memory().pairs_skipped();
                let frozen = s.is_memory_frozen();
                let draws = s.draws();
                let eps = s.settings().step_size;
                let stats = s.step(&target, &mut rng);
                let calls = target.take();
                check_metropolis(&stats, eps, &calls, any_bad(&calls))?;
                prop_assert_eq!(s.draws(), draws + 1);
                prop_assert_eq!(
                    s.memory().pairs_skipped(),
                    skipped + u64::from(stats.pairs_skipped),
                    "skips of every trajectory are counted"
                );
                if !stats.accepted {
                    prop_assert_eq!(all_bits(s.position()), all_bits(&x));
                    prop_assert_eq!(bits(s.potential()), bits(u));
                    prop_assert_eq!(all_bits(s.gradient()), all_bits(&g));
                }
                if !stats.accepted || frozen {
                    prop_assert_eq!(
                        memory_bits(s.memory()),
                        memory,
                        "memory changed by a rejected or frozen draw"
                    );
                }
                if let MemoryUpdate::FreezeAfter(n) = settings.memory_update {
                    prop_assert_eq!(s.is_memory_frozen(), frozen || s.draws() >= n);
                }
            }
            Action::SetStepSize(v) => {
                let v = T::from_f64(v);
                let old = *s.settings();
                let r = s.set_step_size(v);
                check_set(
                    r,
                    positive(v),
                    s.settings().step_size,
                    v,
                    *s.settings() == old,
                )?;
            }
            Action::Special(_) => {
                s.freeze_memory();
                prop_assert!(s.is_memory_frozen());
            }
        }
        prop_assert!(
            finite(s.position()) && s.potential().is_finite() && finite(s.gradient()),
            "non-finite state: θ {:?}, U {}, ∇U {:?}",
            s.position(),
            s.potential(),
            s.gradient()
        );
        check_memory(s.memory(), case.max_pairs)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// HAMCMC
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct HamcmcCase {
    /// M ∈ {1, 2, 4}: 1 is invalid.
    memory: usize,
    decaying: bool,
    step: f64,
    exponent: f64,
    gamma: f64,
    trust_region: f64,
    relative: f64,
    x0: [f64; D],
    common: Common,
}

fn hamcmc_case() -> impl Strategy<Value = HamcmcCase> {
    (
        (
            prop_oneof![1 => Just(1usize), 3 => Just(2usize), 3 => Just(4usize)],
            any::<bool>(),
            step_size(),
            real(0.5..1.0),
        ),
        (
            real(0.01..10.0),
            prop_oneof![1 => Just(0.0), 1 => real(0.0..2.0)],
            prop_oneof![2 => Just(0.0), 1 => real(0.0..0.5)],
        ),
        point(),
        common(),
    )
        .prop_map(
            |((memory, decaying, step, exponent), (gamma, trust_region, relative), x0, common)| {
                HamcmcCase {
                    memory,
                    decaying,
                    step,
                    exponent,
                    gamma,
                    trust_region,
                    relative,
                    x0,
                    common,
                }
            },
        )
}

fn hamcmc<T: Real>(case: &HamcmcCase) -> Outcome {
    match case.memory {
        1 => hamcmc_with::<T, 1>(case),
        2 => hamcmc_with::<T, 2>(case),
        _ => hamcmc_with::<T, 4>(case),
    }
}

/// A description of a HAMCMC step's result and state, and whether the state is
/// finite.
fn describe_hamcmc<T: Real, const M: usize>(
    s: &Hamcmc<T, D, M>,
    r: &Result<StepStats<T>, Error>,
) -> (String, bool) {
    (
        format!(
            "{r:?} θ {:?} t {} memory {:?}",
            all_bits(s.position()),
            s.draws(),
            memory_bits(s.memory())
        ),
        finite(s.position()),
    )
}

fn hamcmc_with<T: Real, const M: usize>(case: &HamcmcCase) -> Outcome {
    let step = T::from_f64(case.step);
    let exponent = T::from_f64(case.exponent);
    let schedule = if case.decaying {
        StepSizeSchedule::BlockDecaying {
            scale: step,
            exponent,
        }
    } else {
        StepSizeSchedule::Constant(step)
    };
    let mut settings = HamcmcSettings::new(
        schedule,
        T::from_f64(case.gamma),
        T::from_f64(case.trust_region),
    );
    settings.curvature.min_relative_curvature = T::from_f64(case.relative);
    let schedule_ok = positive(step)
        && (!case.decaying || (exponent.is_finite() && exponent > T::HALF && exponent <= T::ONE));
    let valid = M >= 2
        && schedule_ok
        && positive(settings.gamma)
        && non_negative(settings.curvature.trust_region)
        && non_negative(settings.curvature.min_relative_curvature);
    let x0: [T; D] = to_t(&case.x0);
    let built = Hamcmc::<T, D, M>::new(settings, x0);
    let Some(mut s) = check_built_plain(built, valid, finite(&x0))? else {
        return Ok(());
    };
    let target = Scripted::new(&case.common);
    let clean = |s: &mut Hamcmc<T, D, M>, rng: &mut XorShiftRng| {
        let r = s.step(&Scripted::clean(case.common.curvature), rng);
        describe_hamcmc(s, &r)
    };
    let mut rng = XorShiftRng::seed_from_u64(case.common.seed);
    // HAMCMC has no setters: every action is a step.
    for _ in &case.common.actions {
        let before = s.clone();
        let eps = s.next_step_size();
        let result = s.step(&target, &mut rng);
        let calls = target.take();
        let bad_gradient = calls.iter().any(|c| !c.gradient_finite);
        match &result {
            Ok(stats) => {
                prop_assert!(!bad_gradient, "a non-finite gradient was used: {calls:?}");
                prop_assert!(
                    stats.accepted
                        && stats.acceptance_probability == T::ONE
                        && stats.energy_error == T::ZERO
                        && !stats.divergent,
                    "HAMCMC stats: {stats:?}"
                );
                prop_assert_eq!(bits(stats.step_size), bits(eps));
                prop_assert_eq!(stats.gradient_evaluations as usize, calls.len());
                prop_assert_eq!(s.draws(), before.draws() + 1);
            }
            Err(e) => {
                match e {
                    Error::NonFiniteGradient => prop_assert!(bad_gradient),
                    Error::NonFiniteProposal => prop_assert!(!bad_gradient),
                    other => return Err(TestCaseError::fail(format!("step error {other:?}"))),
                }
                prop_assert_eq!(all_bits(s.position()), all_bits(before.position()));
                prop_assert_eq!(s.draws(), before.draws());
                prop_assert_eq!(memory_bits(s.memory()), memory_bits(before.memory()));
                check_replay(&s, &before, case.common.seed, clean)?;
            }
        }
        if bad_gradient {
            prop_assert!(
                matches!(result, Err(Error::NonFiniteGradient)),
                "a non-finite gradient gave {result:?}"
            );
        }
        prop_assert!(finite(s.position()), "θ {:?}", s.position());
        check_memory(s.memory(), M - 1)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// HMC-BFGS and MH-BFGS
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct EnsembleCase {
    /// (K, M) ∈ {(3, 1), (4, 2), (4, 1), (2, 2)}: the last two are invalid.
    shape: usize,
    step: f64,
    steps: u32,
    newton: bool,
    gamma: f64,
    newest_pair: bool,
    trust_region: f64,
    relative: f64,
    starts: Vec<[f64; D]>,
    common: Common,
}

fn ensemble_point() -> impl Strategy<Value = [f64; D]> {
    let c = prop_oneof![40 => -3.0..3.0, 1 => special()];
    [c.clone(), c.clone(), c]
}

fn ensemble_case() -> impl Strategy<Value = EnsembleCase> {
    (
        (
            prop_oneof![3 => Just(0usize), 3 => Just(1usize), 1 => Just(2usize), 1 => Just(3usize)],
            step_size(),
            leapfrog_steps(),
            any::<bool>(),
        ),
        (
            real(0.01..10.0),
            any::<bool>(),
            prop_oneof![2 => Just(0.0), 1 => real(0.0..2.0)],
            prop_oneof![2 => Just(0.0), 1 => real(0.0..0.5)],
        ),
        vec(ensemble_point(), 4),
        common(),
    )
        .prop_map(
            |(
                (shape, step, steps, newton),
                (gamma, newest_pair, trust_region, relative),
                starts,
                common,
            )| EnsembleCase {
                shape,
                step,
                steps,
                newton,
                gamma,
                newest_pair,
                trust_region,
                relative,
                starts,
                common,
            },
        )
}

fn ensemble_metric<T: Real>(case: &EnsembleCase) -> (InitialScaling<T>, CurvaturePolicy<T>, bool) {
    let gamma = T::from_f64(case.gamma);
    let curvature = CurvaturePolicy {
        trust_region: T::from_f64(case.trust_region),
        min_relative_curvature: T::from_f64(case.relative),
    };
    let scaling = if case.newest_pair {
        InitialScaling::NewestPair(gamma)
    } else {
        InitialScaling::Fixed(gamma)
    };
    let ok = positive(gamma)
        && non_negative(curvature.trust_region)
        && non_negative(curvature.min_relative_curvature);
    (scaling, curvature, ok)
}

fn ensemble(case: &EnsembleCase, f64_run: bool) -> Outcome {
    macro_rules! run {
        ($t:ty) => {
            match case.shape {
                0 => ensemble_with::<$t, 3, 1>(case),
                1 => ensemble_with::<$t, 4, 2>(case),
                2 => ensemble_with::<$t, 4, 1>(case),
                _ => ensemble_with::<$t, 2, 2>(case),
            }
        };
    }
    if f64_run { run!(f64) } else { run!(f32) }
}

/// The ensemble's observable state, bit for bit.
fn ensemble_bits<T: Real, const K: usize>(
    positions: &[[T; D]; K],
    potentials: &[T; K],
    gradients: &[[T; D]; K],
) -> Vec<Vec<u64>> {
    (0..K)
        .map(|k| {
            let mut v = all_bits(&positions[k]);
            v.push(bits(potentials[k]));
            v.extend(all_bits(&gradients[k]));
            v
        })
        .collect()
}

/// One ensemble update: the cursor moves on; a rejected update changes nothing,
/// an accepted one changes only the updated chain; the state stays finite.
fn check_ensemble_update(
    before: &[Vec<u64>],
    after: &[Vec<u64>],
    chain: usize,
    next: usize,
    accepted: bool,
    finite_state: bool,
) -> Outcome {
    let k = before.len();
    prop_assert_eq!(next, (chain + 1) % k, "round-robin cursor");
    for c in 0..k {
        if c != chain || !accepted {
            prop_assert_eq!(&before[c], &after[c], "chain {} changed", c);
        }
    }
    prop_assert!(finite_state, "non-finite ensemble state");
    Ok(())
}

fn ensemble_with<T: Real, const K: usize, const M: usize>(case: &EnsembleCase) -> Outcome {
    let (scaling, curvature, metric_ok) = ensemble_metric::<T>(case);
    let step = T::from_f64(case.step);
    let shape_ok = K >= 3 && M + 2 >= K;
    let starts: [[T; D]; K] = core::array::from_fn(|k| to_t(&case.starts[k]));
    let starts_finite = starts.iter().all(|x| finite(x));

    // HMC-BFGS.
    let settings = HmcBfgsSettings {
        step_size: step,
        leapfrog_steps: case.steps,
        scaling,
        curvature,
    };
    let valid = positive(step) && case.steps >= 1 && metric_ok && shape_ok;
    let target = Scripted::new(&case.common);
    let built = HmcBfgs::<T, D, K, M>::new(settings, starts, &target);
    if let Some(mut s) = check_built(built, valid, starts_finite, &target.take(), K)? {
        let mut rng = XorShiftRng::seed_from_u64(case.common.seed);
        for action in &case.common.actions {
            match *action {
                Action::Step => {
                    let before = ensemble_bits(s.positions(), s.potentials(), s.gradients());
                    let chain = s.next_chain();
                    let eps = s.settings().step_size;
                    let stats = s.step(&target, &mut rng);
                    let calls = target.take();
                    check_metropolis(&stats, eps, &calls, any_bad(&calls))?;
                    let after = ensemble_bits(s.positions(), s.potentials(), s.gradients());
                    let fin = s.positions().iter().all(|x| finite(x))
                        && finite(s.potentials())
                        && s.gradients().iter().all(|g| finite(g));
                    check_ensemble_update(
                        &before,
                        &after,
                        chain,
                        s.next_chain(),
                        stats.accepted,
                        fin,
                    )?;
                    check_memory(s.memory(), K - 2)?;
                }
                Action::SetStepSize(v) => {
                    let v = T::from_f64(v);
                    let old = *s.settings();
                    let r = s.set_step_size(v);
                    check_set(
                        r,
                        positive(v),
                        s.settings().step_size,
                        v,
                        *s.settings() == old,
                    )?;
                }
                Action::Special(v) => {
                    let old = *s.settings();
                    let mut new = old;
                    new.scaling = InitialScaling::Fixed(T::from_f64(v));
                    match s.set_settings(new) {
                        Ok(()) => prop_assert!(positive(T::from_f64(v)) && *s.settings() == new),
                        Err(_) => prop_assert!(!positive(T::from_f64(v)) && *s.settings() == old),
                    }
                }
            }
        }
    }

    // MH-BFGS.
    let settings = MhBfgsSettings {
        step_size: step,
        proposal: if case.newton {
            MhBfgsProposal::Newton
        } else {
            MhBfgsProposal::RandomWalk
        },
        scaling,
        curvature,
    };
    let valid = positive(step) && metric_ok && shape_ok;
    let target = Scripted::new(&case.common);
    let built = MhBfgs::<T, D, K, M>::new(settings, starts, &target);
    if let Some(mut s) = check_built(built, valid, starts_finite, &target.take(), K)? {
        let mut rng = XorShiftRng::seed_from_u64(case.common.seed);
        for action in &case.common.actions {
            match *action {
                Action::Step => {
                    let before = ensemble_bits(s.positions(), s.potentials(), s.gradients());
                    let chain = s.next_chain();
                    let eps = s.settings().step_size;
                    let stats = s.step(&target, &mut rng);
                    let calls = target.take();
                    prop_assert!(calls.len() <= 1, "MH-BFGS evaluated {} times", calls.len());
                    check_metropolis(&stats, eps, &calls, any_bad(&calls))?;
                    let after = ensemble_bits(s.positions(), s.potentials(), s.gradients());
                    let fin = s.positions().iter().all(|x| finite(x))
                        && finite(s.potentials())
                        && s.gradients().iter().all(|g| finite(g));
                    check_ensemble_update(
                        &before,
                        &after,
                        chain,
                        s.next_chain(),
                        stats.accepted,
                        fin,
                    )?;
                    check_memory(s.memory(), K - 2)?;
                }
                Action::SetStepSize(v) => {
                    let v = T::from_f64(v);
                    let old = *s.settings();
                    let r = s.set_step_size(v);
                    check_set(
                        r,
                        positive(v),
                        s.settings().step_size,
                        v,
                        *s.settings() == old,
                    )?;
                }
                Action::Special(v) => {
                    let old = *s.settings();
                    let mut new = old;
                    new.curvature.min_relative_curvature = T::from_f64(v);
                    let ok = non_negative(T::from_f64(v));
                    match s.set_settings(new) {
                        Ok(()) => prop_assert!(ok && *s.settings() == new),
                        Err(_) => prop_assert!(!ok && *s.settings() == old),
                    }
                }
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// AMAGOLD and L2MC
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct AmagoldCase {
    full_batch: bool,
    persistent: bool,
    step: f64,
    inner_steps: u32,
    friction: f64,
    momentum_variance: f64,
    x0: [f64; D],
    common: Common,
}

fn amagold_case() -> impl Strategy<Value = AmagoldCase> {
    (
        (any::<bool>(), any::<bool>(), step_size(), leapfrog_steps()),
        (
            prop_oneof![1 => Just(0.0), 3 => real(0.0..5.0)],
            real(0.1..4.0),
        ),
        point(),
        common(),
    )
        .prop_map(
            |(
                (full_batch, persistent, step, inner_steps),
                (friction, momentum_variance),
                x0,
                common,
            )| AmagoldCase {
                full_batch,
                persistent,
                step,
                inner_steps,
                friction,
                momentum_variance,
                x0,
                common,
            },
        )
}

fn amagold_valid<T: Real>(s: &AmagoldSettings<T>) -> bool {
    positive(s.step_size)
        && s.inner_steps >= 1
        && non_negative(s.friction)
        && positive(s.momentum_variance)
}

fn amagold<T: Real>(case: &AmagoldCase) -> Outcome {
    let settings = AmagoldSettings {
        step_size: T::from_f64(case.step),
        inner_steps: case.inner_steps,
        friction: T::from_f64(case.friction),
        momentum_variance: T::from_f64(case.momentum_variance),
        momentum_refresh: if case.persistent {
            MomentumRefresh::Persistent
        } else {
            MomentumRefresh::Resample
        },
    };
    let x0: [T; D] = to_t(&case.x0);
    let target = Scripted::new(&case.common);
    let built = Amagold::new(settings, x0, &target);
    let Some(mut s) = check_built(
        built,
        amagold_valid(&settings),
        finite(&x0),
        &target.take(),
        1,
    )?
    else {
        return Ok(());
    };
    let mut rng = XorShiftRng::seed_from_u64(case.common.seed);
    for action in &case.common.actions {
        match *action {
            Action::Step => {
                let (x, u) = (*s.position(), s.potential());
                let momentum = s.momentum().copied();
                let eps = s.settings().step_size;
                let inner = s.settings().inner_steps as usize;
                let stats = if case.full_batch {
                    s.step_full_batch(&target, &mut rng)
                } else {
                    s.step(&target, &mut rng)
                };
                let calls = target.take();
                // What the step consumed (module docs): the inner gradients and
                // the full-data U of the test; the gradient of that last
                // evaluation is discarded. L2MC takes its inner gradients
                // through `potential_and_gradient` too, discarding their U.
                let consumed_bad = if case.full_batch {
                    calls.iter().enumerate().any(|(k, c)| {
                        if k < inner {
                            !c.gradient_finite
                        } else {
                            !c.potential_finite
                        }
                    })
                } else {
                    calls.iter().any(|c| match c.via {
                        Via::Minibatch => !c.gradient_finite,
                        Via::Potential => !c.potential_finite,
                    })
                };
                prop_assert!(calls.len() <= inner + 1);
                if !case.full_batch {
                    prop_assert!(
                        calls
                            .iter()
                            .take(calls.len().saturating_sub(1))
                            .all(|c| c.via == Via::Minibatch),
                        "inner steps use minibatch gradients"
                    );
                }
                check_metropolis(&stats, eps, &calls, consumed_bad)?;
                let now = s.momentum().copied();
                prop_assert!(
                    now.is_some_and(|r| finite(&r)),
                    "momentum after a step: {now:?}"
                );
                if !stats.accepted {
                    prop_assert_eq!(all_bits(s.position()), all_bits(&x));
                    prop_assert_eq!(bits(s.potential()), bits(u));
                    if let (true, Some(old), Some(new)) = (case.persistent, momentum, now) {
                        let negated: [T; D] = core::array::from_fn(|i| -old[i]);
                        prop_assert_eq!(all_bits(&new), all_bits(&negated), "momentum negated");
                    }
                }
            }
            Action::SetStepSize(v) => {
                let v = T::from_f64(v);
                let old = *s.settings();
                let r = s.set_step_size(v);
                check_set(
                    r,
                    positive(v),
                    s.settings().step_size,
                    v,
                    *s.settings() == old,
                )?;
            }
            Action::Special(v) => {
                let old = *s.settings();
                let mut new = old;
                new.friction = T::from_f64(v);
                match s.set_settings(new) {
                    Ok(()) => prop_assert!(amagold_valid(&new) && *s.settings() == new),
                    Err(_) => prop_assert!(!amagold_valid(&new) && *s.settings() == old),
                }
            }
        }
        prop_assert!(
            finite(s.position()) && s.potential().is_finite(),
            "non-finite state: θ {:?}, U {}",
            s.position(),
            s.potential()
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The complete-recipe samplers
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct RecipeCase {
    step: f64,
    /// Friction C (SGHMC), diffusion A (SGNHT), decay α (pSGLD).
    first: f64,
    /// B̂ (SGLD, SGHMC, SGNHT, SGRHMC), λ (pSGLD).
    second: f64,
    /// Mass m (SGHMC), gradient scale s (pSGLD).
    third: f64,
    /// Γ omitted (SGRLD, SGRHMC), thermostat fixed (SGNHT), Γ added (pSGLD),
    /// recipe-Euler update instead of position-first (SGHMC).
    flag: bool,
    x0: [f64; D],
    common: Common,
}

fn recipe_case() -> impl Strategy<Value = RecipeCase> {
    (
        (
            step_size(),
            real(0.0..2.0),
            prop_oneof![2 => Just(0.0), 1 => real(0.0..4.0)],
            real(0.1..4.0),
            any::<bool>(),
        ),
        point(),
        common(),
    )
        .prop_map(
            |((step, first, second, third, flag), x0, common)| RecipeCase {
                step,
                first,
                second,
                third,
                flag,
                x0,
                common,
            },
        )
}

/// Whether the documented update of a sampler's own state overflows for a
/// finite gradient: `must` (pSGLD's V or G: the step is refused with
/// `NonFiniteGradient`), `may` (within a margin of overflow in an intermediate
/// of pSGLD's Γ: `NonFiniteGradient` is allowed, not required).
#[derive(Debug, Clone, Copy, Default)]
struct Overflow {
    must: bool,
    may: bool,
}

/// What a recipe step must return: a non-finite gradient, then (if used) an
/// inadmissible metric or Hessian diagonal, or an `overflow.must`, is
/// `NonFiniteGradient`; a step without any of them is `Ok` or
/// `NonFiniteProposal` (or `NonFiniteGradient` if `overflow.may`).
fn check_recipe_result<T: Real>(
    result: &Result<StepStats<T>, Error>,
    eps: T,
    calls: &[Call],
    extra: &[bool],
    overflow: Overflow,
) -> Outcome {
    prop_assert_eq!(calls.len(), 1, "one minibatch gradient per step");
    prop_assert!(calls[0].via == Via::Minibatch);
    prop_assert!(extra.len() <= 1);
    let bad = !calls[0].gradient_finite || extra.iter().any(|ok| !ok) || overflow.must;
    match result {
        Ok(stats) => {
            prop_assert!(!bad, "a bad input was used: {calls:?} {extra:?}");
            prop_assert_eq!(bits(stats.step_size), bits(eps));
            prop_assert_eq!(stats.gradient_evaluations, 1);
        }
        Err(Error::NonFiniteGradient) => prop_assert!(
            bad || overflow.may,
            "NonFiniteGradient on good input: {calls:?} {extra:?}"
        ),
        Err(Error::NonFiniteProposal) => prop_assert!(!bad, "a bad input gave NonFiniteProposal"),
        Err(other) => return Err(TestCaseError::fail(format!("step error {other:?}"))),
    }
    if !calls[0].gradient_finite {
        prop_assert!(
            extra.is_empty(),
            "evaluated the metric after a bad gradient"
        );
    }
    Ok(())
}

/// Drives a recipe sampler through the case's actions. `step` runs one step on
/// the given target and metric; `overflow` says whether the documented update
/// of the sampler's own state overflows for the finite gradient and (if one
/// was used) Hessian diagonal of the step;
/// `state` describes the observable state (bits) and whether it is finite;
/// `set` changes the step size and says whether the value was valid; `special`
/// runs the sampler-specific setter and checks it.
#[allow(clippy::too_many_arguments)]
fn drive_recipe<T: Real, S: Clone>(
    case: &RecipeCase,
    sampler: &mut S,
    overflow: impl Fn(&S, &[f64], Option<&[f64]>) -> Overflow,
    step: impl Fn(&mut S, &Scripted, &ScriptedMetric, &mut XorShiftRng) -> Result<StepStats<T>, Error>,
    state: impl Fn(&S) -> (Vec<u64>, bool),
    step_size: impl Fn(&S) -> T,
    set: impl FnMut(&mut S, T) -> (Result<(), Error>, bool),
    special: impl FnMut(&mut S, f64) -> Outcome,
) -> Outcome {
    drive_recipe_refusing(
        case,
        sampler,
        overflow,
        |_| false,
        step,
        state,
        step_size,
        set,
        special,
    )
}

/// [`drive_recipe`] for a sampler that may refuse a step before evaluating
/// any gradient: when `refuses_before_gradient(state before the step)` holds
/// (position-first SGHMC: θ + εr/m is not finite), a step without a gradient
/// call must be `NonFiniteProposal`.
#[allow(clippy::too_many_arguments)]
fn drive_recipe_refusing<T: Real, S: Clone>(
    case: &RecipeCase,
    sampler: &mut S,
    overflow: impl Fn(&S, &[f64], Option<&[f64]>) -> Overflow,
    refuses_before_gradient: impl Fn(&S) -> bool,
    step: impl Fn(&mut S, &Scripted, &ScriptedMetric, &mut XorShiftRng) -> Result<StepStats<T>, Error>,
    state: impl Fn(&S) -> (Vec<u64>, bool),
    step_size: impl Fn(&S) -> T,
    mut set: impl FnMut(&mut S, T) -> (Result<(), Error>, bool),
    mut special: impl FnMut(&mut S, f64) -> Outcome,
) -> Outcome {
    let target = Scripted::new(&case.common);
    let metric = ScriptedMetric::new(&case.common.metric);
    let mut rng = XorShiftRng::seed_from_u64(case.common.seed);
    let clean = |s: &mut S, rng: &mut XorShiftRng| {
        let r = step(
            s,
            &Scripted::clean(case.common.curvature),
            &ScriptedMetric::new(&[Met::Constant(1.0)]),
            rng,
        );
        let (b, fin) = state(s);
        (format!("{r:?} {b:?}"), fin)
    };
    for action in &case.common.actions {
        match *action {
            Action::Step => {
                let before = sampler.clone();
                let eps = step_size(sampler);
                let result = step(sampler, &target, &metric, &mut rng);
                let calls = target.take();
                let mut extra = metric.take();
                let hessian = target.take_hessian();
                extra.extend(hessian.iter().map(|h| h.iter().all(|v| v.is_finite())));
                let overflows = if calls.len() == 1 && calls[0].gradient_finite {
                    overflow(&before, &calls[0].gradient, hessian.first().map(|h| &h[..]))
                } else {
                    Overflow::default()
                };
                if calls.is_empty() && refuses_before_gradient(&before) {
                    prop_assert!(
                        matches!(result, Err(Error::NonFiniteProposal)),
                        "a step refused before its gradient must be NonFiniteProposal: {result:?}"
                    );
                } else {
                    check_recipe_result(&result, eps, &calls, &extra, overflows)?;
                }
                if result.is_err() {
                    prop_assert_eq!(
                        state(sampler).0,
                        state(&before).0,
                        "state changed by an Err"
                    );
                    check_replay(sampler, &before, case.common.seed, clean)?;
                }
            }
            Action::SetStepSize(v) => {
                let v = T::from_f64(v);
                let old = step_size(sampler);
                let (r, valid) = set(sampler, v);
                let unchanged = bits(step_size(sampler)) == bits(old);
                check_set(r, valid, step_size(sampler), v, unchanged)?;
            }
            Action::Special(v) => special(sampler, v)?,
        }
        let (b, fin) = state(sampler);
        prop_assert!(fin, "non-finite state {:?}", b);
    }
    Ok(())
}

fn sgld<T: Real>(case: &RecipeCase) -> Outcome {
    let mut settings = SgldSettings::new(T::from_f64(case.step));
    settings.noise_estimate = T::from_f64(case.second);
    let valid = |s: &SgldSettings<T>| {
        positive(s.step_size) && noise_ok(s.step_size, T::ONE, s.noise_estimate)
    };
    let x0: [T; D] = to_t(&case.x0);
    let Some(mut s) = check_built_plain(
        Sgld::<T, D>::new(settings, x0),
        valid(&settings),
        finite(&x0),
    )?
    else {
        return Ok(());
    };
    drive_recipe(
        case,
        &mut s,
        |_, _, _| Overflow::default(),
        |s, t, _, rng| s.step(t, rng),
        |s| (all_bits(s.position()), finite(s.position())),
        |s| s.settings().step_size,
        |s, v| {
            let mut new = *s.settings();
            new.step_size = v;
            (s.set_step_size(v), valid(&new))
        },
        |_, _| Ok(()),
    )
}

/// The module docs' update V ← αV + (1 − α)(s·g)², G = 1/(λ + √V), evaluated
/// in `T` (an overflow must be a refused step), and with a Hessian diagonal H
/// the correction Γᵢ = −Gᵢᵢ²(1 − α)s²gᵢHᵢᵢ/√Vᵢ, whose partial products (in that
/// order) are evaluated in logarithms: within a factor e² of overflow the step
/// may be refused.
fn psgld_overflow<T: Real>(s: &Psgld<T, D>, g: &[f64], h: Option<&[f64]>) -> Overflow {
    if s.is_frozen() {
        return Overflow::default();
    }
    let p = s.settings();
    let max = if T::from_f64(f64::MAX).is_finite() {
        f64::MAX
    } else {
        f32::MAX as f64
    };
    let mut out = Overflow::default();
    for i in 0..D {
        let sg = p.gradient_scale * T::from_f64(g[i]);
        let v = p.decay * s.square_average()[i] + (T::ONE - p.decay) * (sg * sg);
        let gi = T::ONE / (p.regularizer + v.sqrt());
        if !v.is_finite() || !gi.is_finite() {
            out.must = true;
            continue;
        }
        let Some(h) = h else { continue };
        if v <= T::ZERO || g[i] == 0.0 || h[i] == 0.0 {
            continue;
        }
        let factors = [
            2.0 * gi.to_f64().ln(),
            (1.0 - p.decay.to_f64()).ln(),
            2.0 * p.gradient_scale.to_f64().ln(),
            g[i].abs().ln(),
            h[i].abs().ln(),
            -0.5 * v.to_f64().ln(),
        ];
        if factors[2] > max.ln() - 2.0 {
            out.may = true; // s² alone
        }
        let mut partial = 0.0;
        for f in factors {
            partial += f;
            if partial > max.ln() - 2.0 {
                out.may = true;
            }
        }
    }
    out
}

fn psgld<T: Real>(case: &RecipeCase) -> Outcome {
    let mut settings = PsgldSettings::new(
        T::from_f64(case.step),
        T::from_f64(case.first.min(1.5) / 1.5),
        T::from_f64(case.second),
    );
    settings.gradient_scale = T::from_f64(case.third);
    let decay = settings.decay;
    let valid = positive(settings.step_size)
        && decay.is_finite()
        && decay >= T::ZERO
        && decay < T::ONE
        && positive(settings.regularizer)
        && (T::ONE / settings.regularizer).is_finite()
        && positive(settings.gradient_scale);
    let x0: [T; D] = to_t(&case.x0);
    let Some(mut s) = check_built_plain(Psgld::<T, D>::new(settings, x0), valid, finite(&x0))?
    else {
        return Ok(());
    };
    let corrected = case.flag;
    drive_recipe(
        case,
        &mut s,
        |s, g, h| psgld_overflow(s, g, h),
        |s, t, _, rng| {
            if corrected {
                s.step_corrected(t, rng)
            } else {
                s.step(t, rng)
            }
        },
        |s| {
            let mut b = all_bits(s.position());
            b.extend(all_bits(s.square_average()));
            b.extend(all_bits(s.preconditioner()));
            b.push(u64::from(s.is_frozen()));
            let fin = finite(s.position())
                && finite(s.square_average())
                && s.preconditioner().iter().all(|g| positive(*g));
            (b, fin)
        },
        |s| s.settings().step_size,
        |s, v| (s.set_step_size(v), positive(v)),
        |s, v| {
            if v.is_sign_negative() {
                s.unfreeze_preconditioner();
                prop_assert!(!s.is_frozen());
                return Ok(());
            }
            let diagonal: [T; D] = to_t(&[v, 1.0, v]);
            let (old, frozen) = (*s.preconditioner(), s.is_frozen());
            match s.set_preconditioner(diagonal) {
                Ok(()) => {
                    prop_assert!(diagonal.iter().all(|g| positive(*g)));
                    prop_assert!(s.is_frozen() && *s.preconditioner() == diagonal);
                }
                Err(_) => {
                    prop_assert!(!diagonal.iter().all(|g| positive(*g)));
                    prop_assert!(s.is_frozen() == frozen && *s.preconditioner() == old);
                }
            }
            Ok(())
        },
    )
}

fn sgrld<T: Real>(case: &RecipeCase) -> Outcome {
    let mut settings = SgrldSettings::new(T::from_f64(case.step));
    if case.flag {
        settings.correction = Correction::Omitted;
    }
    let x0: [T; D] = to_t(&case.x0);
    let built = Sgrld::<T, D, _>::new(settings, x0, ScriptedMetric::new(&[Met::Bump]));
    let Some(mut s) = check_built_plain(built, positive(settings.step_size), finite(&x0))? else {
        return Ok(());
    };
    drive_recipe(
        case,
        &mut s,
        |_, _, _| Overflow::default(),
        |s, t, m, rng| {
            s.metric_mut().load(m);
            let r = s.step(t, rng);
            s.metric().unload(m);
            r
        },
        |s| (all_bits(s.position()), finite(s.position())),
        |s| s.settings().step_size,
        |s, v| (s.set_step_size(v), positive(v)),
        |_, _| Ok(()),
    )
}

/// `set_momentum([v, 1, v])`: `Ok` iff finite, else the momentum is unchanged.
fn check_momentum_setter<T: Real>(
    result: Result<(), Error>,
    value: [T; D],
    before: [T; D],
    now: [T; D],
) -> Outcome {
    match result {
        Ok(()) => prop_assert!(finite(&value) && all_bits(&now) == all_bits(&value)),
        Err(_) => prop_assert!(!finite(&value) && all_bits(&now) == all_bits(&before)),
    }
    Ok(())
}

fn sghmc<T: Real>(case: &RecipeCase) -> Outcome {
    let settings = SghmcSettings {
        step_size: T::from_f64(case.step),
        friction: T::from_f64(case.first),
        noise_estimate: T::from_f64(case.second),
        mass: T::from_f64(case.third),
        update: if case.flag {
            SghmcUpdate::RecipeEuler
        } else {
            SghmcUpdate::PositionFirst
        },
    };
    let valid = |s: &SghmcSettings<T>| {
        positive(s.step_size)
            && non_negative(s.friction)
            && positive(s.mass)
            && noise_ok(s.step_size, s.friction, s.noise_estimate)
    };
    let x0: [T; D] = to_t(&case.x0);
    let Some(mut s) = check_built_plain(
        Sghmc::<T, D>::new(settings, x0),
        valid(&settings),
        finite(&x0),
    )?
    else {
        return Ok(());
    };
    drive_recipe_refusing(
        case,
        &mut s,
        |_, _, _| Overflow::default(),
        |s| {
            let set = s.settings();
            set.update == SghmcUpdate::PositionFirst
                && s.position()
                    .iter()
                    .zip(s.momentum())
                    .any(|(&t, &r)| !(t + set.step_size * r / set.mass).is_finite())
        },
        |s, t, _, rng| s.step(t, rng),
        |s| {
            let mut b = all_bits(s.position());
            b.extend(all_bits(s.momentum()));
            (b, finite(s.position()) && finite(s.momentum()))
        },
        |s| s.settings().step_size,
        |s, v| {
            let mut new = *s.settings();
            new.step_size = v;
            (s.set_step_size(v), valid(&new))
        },
        |s, v| {
            let value: [T; D] = to_t(&[v, 1.0, v]);
            let before = *s.momentum();
            let r = s.set_momentum(value);
            check_momentum_setter(r, value, before, *s.momentum())
        },
    )
}

fn sgnht<T: Real>(case: &RecipeCase) -> Outcome {
    let settings = SgnhtSettings {
        step_size: T::from_f64(case.step),
        diffusion: T::from_f64(case.first),
        noise_estimate: T::from_f64(case.second),
        thermostat: if case.flag {
            Thermostat::Fixed
        } else {
            Thermostat::Adaptive
        },
    };
    let valid = |s: &SgnhtSettings<T>| {
        positive(s.step_size)
            && non_negative(s.diffusion)
            && noise_ok(s.step_size, s.diffusion, s.noise_estimate)
    };
    let x0: [T; D] = to_t(&case.x0);
    let Some(mut s) = check_built_plain(
        Sgnht::<T, D>::new(settings, x0),
        valid(&settings),
        finite(&x0),
    )?
    else {
        return Ok(());
    };
    drive_recipe(
        case,
        &mut s,
        |_, _, _| Overflow::default(),
        |s, t, _, rng| s.step(t, rng),
        |s| {
            let mut b = all_bits(s.position());
            b.extend(all_bits(s.momentum()));
            b.push(bits(s.thermostat()));
            let fin = finite(s.position()) && finite(s.momentum()) && s.thermostat().is_finite();
            (b, fin)
        },
        |s| s.settings().step_size,
        |s, v| {
            let mut new = *s.settings();
            new.step_size = v;
            (s.set_step_size(v), valid(&new))
        },
        |s, v| {
            let value: [T; D] = to_t(&[v, 1.0, v]);
            let before = *s.momentum();
            let r = s.set_momentum(value);
            check_momentum_setter(r, value, before, *s.momentum())?;
            let (xi, old) = (T::from_f64(v), s.thermostat());
            match s.set_thermostat(xi) {
                Ok(()) => prop_assert!(xi.is_finite() && bits(s.thermostat()) == bits(xi)),
                Err(_) => prop_assert!(!xi.is_finite() && bits(s.thermostat()) == bits(old)),
            }
            Ok(())
        },
    )
}

fn sgrhmc<T: Real>(case: &RecipeCase) -> Outcome {
    let mut settings = SgrhmcSettings::new(T::from_f64(case.step));
    settings.noise_estimate = T::from_f64(case.second);
    if case.flag {
        settings.correction = Correction::Omitted;
    }
    let valid = positive(settings.step_size) && non_negative(settings.noise_estimate);
    let x0: [T; D] = to_t(&case.x0);
    let Some(mut s) = check_built_plain(
        Sgrhmc::<T, D, _>::new(settings, x0, ScriptedMetric::new(&[Met::Bump])),
        valid,
        finite(&x0),
    )?
    else {
        return Ok(());
    };
    drive_recipe(
        case,
        &mut s,
        |_, _, _| Overflow::default(),
        |s, t, m, rng| {
            s.metric_mut().load(m);
            let r = s.step(t, rng);
            s.metric().unload(m);
            r
        },
        |s| {
            let mut b = all_bits(s.position());
            b.extend(all_bits(s.momentum()));
            (b, finite(s.position()) && finite(s.momentum()))
        },
        |s| s.settings().step_size,
        |s, v| (s.set_step_size(v), positive(v)),
        |s, v| {
            let value: [T; D] = to_t(&[v, 1.0, v]);
            let before = *s.momentum();
            let r = s.set_momentum(value);
            check_momentum_setter(r, value, before, *s.momentum())
        },
    )
}

/// D = 0 is an invalid setting of every recipe sampler, whatever else is set.
fn recipe_zero_dimension<T: Real>(case: &RecipeCase) -> Outcome {
    let eps = T::from_f64(case.step);
    let a = T::from_f64(case.first);
    let invalid = |r: Result<(), Error>| matches!(r, Err(Error::InvalidSetting { .. }));
    prop_assert!(invalid(
        Sgld::<T, 0>::new(SgldSettings::new(eps), []).map(|_| ())
    ));
    prop_assert!(invalid(
        Psgld::<T, 0>::new(PsgldSettings::new(eps, T::HALF, a), []).map(|_| ())
    ));
    prop_assert!(invalid(
        Sgrld::<T, 0, _>::new(
            SgrldSettings::new(eps),
            [],
            ScriptedMetric::new(&[Met::Bump])
        )
        .map(|_| ())
    ));
    prop_assert!(invalid(
        Sghmc::<T, 0>::new(SghmcSettings::new(eps, a), []).map(|_| ())
    ));
    prop_assert!(invalid(
        Sgnht::<T, 0>::new(SgnhtSettings::new(eps, a), []).map(|_| ())
    ));
    prop_assert!(invalid(
        Sgrhmc::<T, 0, _>::new(
            SgrhmcSettings::new(eps),
            [],
            ScriptedMetric::new(&[Met::Bump])
        )
        .map(|_| ())
    ));
    Ok(())
}

// ---------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    #[test]
    fn lbfgs_memory_f64(case in memory_case()) { lbfgs_memory::<f64>(&case)?; }
    #[test]
    fn lbfgs_memory_f32(case in memory_case()) { lbfgs_memory::<f32>(&case)?; }

    #[test]
    fn hmc_f64(case in hmc_case()) { hmc::<f64>(&case)?; }
    #[test]
    fn hmc_f32(case in hmc_case()) { hmc::<f32>(&case)?; }

    #[test]
    fn qnhmc_f64(case in qnhmc_case()) { qnhmc::<f64>(&case)?; }
    #[test]
    fn qnhmc_f32(case in qnhmc_case()) { qnhmc::<f32>(&case)?; }

    #[test]
    fn hamcmc_f64(case in hamcmc_case()) { hamcmc::<f64>(&case)?; }
    #[test]
    fn hamcmc_f32(case in hamcmc_case()) { hamcmc::<f32>(&case)?; }

    #[test]
    fn hmc_bfgs_and_mh_bfgs_f64(case in ensemble_case()) { ensemble(&case, true)?; }
    #[test]
    fn hmc_bfgs_and_mh_bfgs_f32(case in ensemble_case()) { ensemble(&case, false)?; }

    #[test]
    fn amagold_and_l2mc_f64(case in amagold_case()) { amagold::<f64>(&case)?; }
    #[test]
    fn amagold_and_l2mc_f32(case in amagold_case()) { amagold::<f32>(&case)?; }

    #[test]
    fn sgld_f64(case in recipe_case()) { sgld::<f64>(&case)?; }
    #[test]
    fn sgld_f32(case in recipe_case()) { sgld::<f32>(&case)?; }

    #[test]
    fn psgld_f64(case in recipe_case()) { psgld::<f64>(&case)?; }
    #[test]
    fn psgld_f32(case in recipe_case()) { psgld::<f32>(&case)?; }

    #[test]
    fn sgrld_f64(case in recipe_case()) { sgrld::<f64>(&case)?; }
    #[test]
    fn sgrld_f32(case in recipe_case()) { sgrld::<f32>(&case)?; }

    #[test]
    fn sghmc_f64(case in recipe_case()) { sghmc::<f64>(&case)?; }
    #[test]
    fn sghmc_f32(case in recipe_case()) { sghmc::<f32>(&case)?; }

    #[test]
    fn sgnht_f64(case in recipe_case()) { sgnht::<f64>(&case)?; }
    #[test]
    fn sgnht_f32(case in recipe_case()) { sgnht::<f32>(&case)?; }

    #[test]
    fn sgrhmc_f64(case in recipe_case()) { sgrhmc::<f64>(&case)?; }
    #[test]
    fn sgrhmc_f32(case in recipe_case()) { sgrhmc::<f32>(&case)?; }

    #[test]
    fn recipe_zero_dimension_f64(case in recipe_case()) { recipe_zero_dimension::<f64>(&case)?; }
    #[test]
    fn recipe_zero_dimension_f32(case in recipe_case()) { recipe_zero_dimension::<f32>(&case)?; }
}
