//! Reference chains (ALGORITHMS.md §5.1): every core sampler, run side by side
//! with its dense reference (`qnmc_tests::dense`) from the same seed, must give
//! the same draws to 1e-10 (relative, absolute floor 1e-10: |a − b| ≤ 1e-10·max(1, |b|)),
//! the same accept/reject decisions, the same gradient-evaluation and
//! skipped-pair counts, and (for the quasi-Newton samplers) the same L-BFGS
//! pairs, γ and skip counters, for 500 draws.
//!
//! HMC, HAMCMC and frozen QNHMC run free for all 500 draws. Adaptive QNHMC
//! amplifies round-off exponentially (see the QNHMC section), so its 500 draws
//! are checked transition by transition ("shadowing"), plus a free-running
//! horizon as long as round-off allows.
//!
//! Also the key fact of ALGORITHMS.md §3: QNHMC with a frozen C is HMC with
//! inverse metric K = C M⁻¹ C and momentum r = C⁻¹p, checked draw by draw
//! against the dense HMC fed r from the same normals.
//!
//! Step sizes give acceptance rates in [0.3, 0.95] (asserted), so both branches
//! of the Metropolis test are exercised. The negative controls at the end show
//! the comparison does fail when the reference differs from the core.

use nalgebra::{DMatrix, DVector};
use qnmc::lbfgs::InitialScaling;
use qnmc::metric::{DiagonalMetric, Metric};
use qnmc::{
    Hamcmc, HamcmcSettings, Hmc, HmcSettings, MemoryUpdate, Potential, Qnhmc, QnhmcMass,
    QnhmcSettings, StepSizeSchedule, StepStats,
};
use qnmc_tests::dense::util::dvec;
use qnmc_tests::dense::{
    Banana, CorrelatedGaussian, DenseHamcmc, DenseHmc, DensePairs, DenseQnhmc, DenseStep,
    DenseTarget, LinearGaussianMinibatch, LogisticRegression, coordinate_error,
    max_coordinate_error,
};

use crate::common::rng;

/// Bound on every coordinate of every draw, and on the held pairs.
const TOL: f64 = 1e-10;
/// Draws compared per chain.
const STEPS: usize = 500;

/// What a side-by-side run saw.
#[derive(Debug, Clone, Copy, Default)]
struct Report {
    draws: usize,
    accepted: usize,
    /// Largest coordinate error over all draws (and held pairs).
    worst: f64,
    gradient_evaluations: u64,
    pairs_skipped: u64,
}

impl Report {
    fn rate(&self) -> f64 {
        self.accepted as f64 / self.draws as f64
    }

    /// Both Metropolis branches taken, at a reasonable rate.
    fn assert_mixing(&self, label: &str) {
        let rejected = self.draws - self.accepted;
        assert!(self.accepted > 0 && rejected > 0, "{label}: {self:?}");
        assert!(
            (0.3..=0.95).contains(&self.rate()),
            "{label}: acceptance rate {} outside [0.3, 0.95]",
            self.rate()
        );
    }
}

/// Compares one draw; `Err` describes the first mismatch.
fn compare_draw(
    n: usize,
    core_position: &[f64],
    core: &StepStats<f64>,
    reference_position: &DVector<f64>,
    reference: &DenseStep,
    report: &mut Report,
) -> Result<(), String> {
    let e = max_coordinate_error(core_position, reference_position.as_slice());
    report.worst = report.worst.max(e);
    if e > TOL {
        return Err(format!(
            "draw {n}: positions differ by {e:e}\n core {core_position:?}\n  ref {:?}",
            reference_position.as_slice()
        ));
    }
    if core.accepted != reference.accepted || core.divergent != reference.divergent {
        return Err(format!(
            "draw {n}: decision differs: core {core:?}, reference {reference:?}"
        ));
    }
    if core.gradient_evaluations != reference.gradient_evaluations {
        return Err(format!(
            "draw {n}: gradient evaluations {} vs {}",
            core.gradient_evaluations, reference.gradient_evaluations
        ));
    }
    if core.pairs_skipped != reference.pairs_skipped {
        return Err(format!(
            "draw {n}: pairs skipped {} vs {}",
            core.pairs_skipped, reference.pairs_skipped
        ));
    }
    if coordinate_error(core.step_size, reference.step_size) > TOL {
        return Err(format!(
            "draw {n}: step size {} vs {}",
            core.step_size, reference.step_size
        ));
    }
    report.draws += 1;
    report.accepted += core.accepted as usize;
    report.gradient_evaluations += core.gradient_evaluations as u64;
    report.pairs_skipped += core.pairs_skipped as u64;
    Ok(())
}

/// Compares the core's L-BFGS memory with the reference's pairs.
fn compare_memory<const D: usize, const M: usize>(
    n: usize,
    core: &qnmc::lbfgs::LbfgsMemory<f64, D, M>,
    reference: &DensePairs,
    report: &mut Report,
) -> Result<(), String> {
    if core.len() != reference.pairs.len() {
        return Err(format!(
            "draw {n}: {} pairs held vs {}",
            core.len(),
            reference.pairs.len()
        ));
    }
    if core.pairs_skipped() != reference.skipped {
        return Err(format!(
            "draw {n}: memory skip counter {} vs {}",
            core.pairs_skipped(),
            reference.skipped
        ));
    }
    let mut e = (core.gamma() - reference.gamma).abs() / reference.gamma;
    for ((s, y, _), (rs, ry)) in core.pairs().iter().zip(&reference.pairs) {
        e = e
            .max(max_coordinate_error(s, rs.as_slice()))
            .max(max_coordinate_error(y, ry.as_slice()));
    }
    report.worst = report.worst.max(e);
    if e > TOL {
        return Err(format!("draw {n}: held pairs or γ differ by {e:e}"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Targets.

fn gaussian() -> CorrelatedGaussian {
    // Σ = 11ᵀ + 4I in D = 8, off-centre.
    CorrelatedGaussian::new(&[1.0, -1.0, 0.5, 0.0, 2.0, -0.5, 0.25, 1.5], 1.0, 4.0)
}

const GAUSSIAN_X0: [f64; 8] = [3.0, 2.0, -2.0, 1.0, 0.0, -3.0, 2.5, 1.0];

fn logistic() -> LogisticRegression {
    LogisticRegression::synthetic(6, 80, 7)
}

const LOGISTIC_X0: [f64; 6] = [0.5, -0.5, 0.2, 0.0, 1.0, -1.0];

fn banana() -> Banana {
    Banana::new(4, 2.0, 0.6)
}

const BANANA_X0: [f64; 4] = [0.3, -0.2, 0.1, 0.4];

// ---------------------------------------------------------------------------
// HMC.

/// HMC with M = I (`variances` None) or M⁻¹ = diag(`variances`) against the
/// dense reference.
fn hmc_chain<P: Potential<f64, D> + DenseTarget, const D: usize>(
    target: &P,
    settings: HmcSettings<f64>,
    variances: Option<[f64; D]>,
    x0: [f64; D],
    seed: u64,
) -> Result<Report, String> {
    match variances {
        None => {
            let core = Hmc::new(settings, x0, target).map_err(|e| e.to_string())?;
            compare_hmc_chain(core, target, [1.0; D], x0, seed)
        }
        Some(v) => {
            let metric = DiagonalMetric::new(&v).map_err(|e| e.to_string())?;
            let core = Hmc::with_metric(settings, metric, x0, target).map_err(|e| e.to_string())?;
            compare_hmc_chain(core, target, v, x0, seed)
        }
    }
}

fn compare_hmc_chain<P: Potential<f64, D> + DenseTarget, K: Metric<f64, D>, const D: usize>(
    mut core: Hmc<f64, D, K>,
    target: &P,
    inverse_mass: [f64; D],
    x0: [f64; D],
    seed: u64,
) -> Result<Report, String> {
    let settings = *core.settings();
    let mut reference = DenseHmc::diagonal(
        settings.step_size,
        settings.leapfrog_steps,
        &inverse_mass,
        dvec(&x0),
        target,
    );
    let (mut rc, mut rr) = (rng(seed), rng(seed));
    let mut report = Report::default();
    for n in 1..=STEPS {
        let c = core.step(target, &mut rc);
        let r = reference.step(target, &mut rr);
        compare_draw(n, core.position(), &c, &reference.position, &r, &mut report)?;
    }
    Ok(report)
}

#[test]
fn hmc_matches_dense_reference() {
    let g = gaussian();
    let l = logistic();
    let b = banana();
    let mut worst: f64 = 0.0;
    let runs: [(&str, Result<Report, String>); 5] = [
        (
            "gaussian, M = I",
            hmc_chain(&g, HmcSettings::new(1.4, 5), None, GAUSSIAN_X0, 1),
        ),
        ("gaussian, diagonal M⁻¹", {
            let s = HmcSettings::new(1.0, 6);
            hmc_chain(
                &g,
                s,
                Some([5.0, 4.0, 6.0, 5.0, 5.0, 3.0, 5.0, 7.0]),
                GAUSSIAN_X0,
                2,
            )
        }),
        (
            "logistic, M = I",
            hmc_chain(&l, HmcSettings::new(0.3, 6), None, LOGISTIC_X0, 3),
        ),
        ("logistic, diagonal M⁻¹", {
            let s = HmcSettings::new(0.6, 5);
            hmc_chain(
                &l,
                s,
                Some([0.3, 0.2, 0.25, 0.2, 0.3, 0.15]),
                LOGISTIC_X0,
                4,
            )
        }),
        ("banana, diagonal M⁻¹", {
            let s = HmcSettings::new(0.4, 6);
            hmc_chain(&b, s, Some([2.0, 1.0, 2.0, 1.0]), BANANA_X0, 5)
        }),
    ];
    for (label, run) in runs {
        let report = run.unwrap_or_else(|e| panic!("HMC {label}: {e}"));
        eprintln!("HMC {label}: {report:?}, rate {:.2}", report.rate());
        report.assert_mixing(&format!("HMC {label}"));
        assert_eq!(report.draws, STEPS);
        worst = worst.max(report.worst);
    }
    eprintln!("HMC worst coordinate error: {worst:e}");
}

// ---------------------------------------------------------------------------
// QNHMC.
//
// Adaptive QNHMC is chaotic: the memory is rebuilt from the last accepted
// trajectory, which depends on the memory, and a perturbation of one ulp grows
// by a factor ≈ 1.2–1.5 per draw on these targets (see
// `adaptive_qnhmc_amplifies_round_off`). Two chains that differ only in
// round-off, the core's two-loop H·v versus the dense H, therefore separate
// after a few dozen draws; no implementation can stay within 1e-10 of
// another for 500 adaptive draws. So the adaptive draws are checked in two ways:
// - shadowing: before every draw the reference is reset to the core's state
//   (position, U, ∇U, held pairs, γ, counters), then both take the draw with
//   their own generators; every one of the 500 transitions, including the
//   reference's own pair admission, merge and truncation, must agree to 1e-10;
// - free running: the reference runs on its own, and must agree to 1e-10 for
//   as long as the measured round-off amplification allows (asserted horizon).
// Frozen draws (after `FreezeAfter(n)`) are plain HMC with a fixed metric, which
// does not amplify round-off on the log-concave targets (Gaussian, logistic):
// there they run free to the end of the chain.

/// How the reference follows the core.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Follow {
    /// Reset the reference to the core's state before every draw.
    Shadow,
    /// Reset it only while the memory learns; free once it is frozen.
    ShadowWhileLearning,
    /// Never reset.
    Free,
}

fn sync_qnhmc<const D: usize, const M: usize>(reference: &mut DenseQnhmc, core: &Qnhmc<f64, D, M>) {
    reference.position = dvec(core.position());
    reference.potential = core.potential();
    reference.gradient = dvec(core.gradient());
    reference.memory.pairs = core
        .memory()
        .pairs()
        .iter()
        .map(|(s, y, _)| (dvec(s), dvec(y)))
        .collect();
    reference.memory.gamma = core.memory().gamma();
    reference.memory.skipped = core.memory().pairs_skipped();
    reference.draws = core.draws();
}

/// A mismatch: the draw and what differed.
#[derive(Debug)]
struct Mismatch {
    draw: usize,
    message: String,
}

fn qnhmc_chain<P: Potential<f64, D> + DenseTarget, const D: usize, const M: usize>(
    target: &P,
    settings: QnhmcSettings<f64>,
    x0: [f64; D],
    seed: u64,
    reference_settings: &QnhmcSettings<f64>,
    follow: Follow,
    steps: usize,
) -> Result<Report, Mismatch> {
    let mut core = Qnhmc::<f64, D, M>::new(settings, x0, target).expect("valid settings");
    let mut reference = DenseQnhmc::new(reference_settings, dvec(&x0), target);
    let (mut rc, mut rr) = (rng(seed), rng(seed));
    let mut report = Report::default();
    for n in 1..=steps {
        let sync = match follow {
            Follow::Shadow => true,
            Follow::ShadowWhileLearning => !core.is_memory_frozen(),
            Follow::Free => false,
        };
        if sync {
            sync_qnhmc(&mut reference, &core);
        }
        let c = core.step(target, &mut rc);
        let r = reference.step(target, &mut rr);
        let check = compare_draw(n, core.position(), &c, &reference.position, &r, &mut report)
            .and_then(|()| compare_memory(n, core.memory(), &reference.memory, &mut report))
            .and_then(|()| {
                if core.is_memory_frozen() == reference.learning() {
                    Err(format!("draw {n}: frozen flag differs"))
                } else {
                    Ok(())
                }
            });
        check.map_err(|message| Mismatch { draw: n, message })?;
    }
    Ok(report)
}

/// One QNHMC configuration.
#[derive(Clone, Copy)]
struct QnhmcCase {
    label: &'static str,
    mass: QnhmcMass,
    update: MemoryUpdate,
    step_size: f64,
    leapfrog_steps: u32,
    seed: u64,
    tweak: fn(&mut QnhmcSettings<f64>),
}

fn no_tweak(_: &mut QnhmcSettings<f64>) {}

impl QnhmcCase {
    fn settings(&self, max_pairs: usize) -> QnhmcSettings<f64> {
        let mut s = QnhmcSettings::new(self.step_size, self.leapfrog_steps, max_pairs);
        s.mass = self.mass;
        s.memory_update = self.update;
        (self.tweak)(&mut s);
        s
    }
}

/// Shorthand for the four mass × memory-update cases.
#[allow(clippy::too_many_arguments)]
fn four_modes(
    eps_i_adaptive: (f64, u32, u64),
    eps_i_frozen: (f64, u32, u64),
    eps_c_adaptive: (f64, u32, u64),
    eps_c_frozen: (f64, u32, u64),
    tweak: fn(&mut QnhmcSettings<f64>),
) -> Vec<QnhmcCase> {
    [
        (
            "M = I, adaptive",
            QnhmcMass::Identity,
            MemoryUpdate::Adaptive,
            eps_i_adaptive,
        ),
        (
            "M = I, frozen after 100",
            QnhmcMass::Identity,
            MemoryUpdate::FreezeAfter(100),
            eps_i_frozen,
        ),
        (
            "M = C, adaptive",
            QnhmcMass::InverseHessian,
            MemoryUpdate::Adaptive,
            eps_c_adaptive,
        ),
        (
            "M = C, frozen after 100",
            QnhmcMass::InverseHessian,
            MemoryUpdate::FreezeAfter(100),
            eps_c_frozen,
        ),
    ]
    .into_iter()
    .map(
        |(label, mass, update, (step_size, leapfrog_steps, seed))| QnhmcCase {
            label,
            mass,
            update,
            step_size,
            leapfrog_steps,
            seed,
            tweak,
        },
    )
    .collect()
}

/// Minimum number of adaptive draws the free-running reference must follow the
/// core to 1e-10 (the measured horizons are reported by the tests).
const MIN_FREE_HORIZON: usize = 20;

fn run_qnhmc_cases<P: Potential<f64, D> + DenseTarget, const D: usize, const M: usize>(
    name: &str,
    target: &P,
    x0: [f64; D],
    cases: &[QnhmcCase],
    min_skipped: u64,
    frozen_follow: Follow,
) {
    let mut worst: f64 = 0.0;
    let mut skipped = 0;
    for case in cases {
        let s = case.settings(M);
        let label = format!("QNHMC {name}, {}", case.label);
        let follow = match case.update {
            MemoryUpdate::Adaptive => Follow::Shadow,
            MemoryUpdate::FreezeAfter(_) => frozen_follow,
        };
        let report = qnhmc_chain::<P, D, M>(target, s, x0, case.seed, &s, follow, STEPS)
            .unwrap_or_else(|m| panic!("{label} ({follow:?}): {}", m.message));
        report.assert_mixing(&label);
        assert_eq!(report.draws, STEPS);
        // Free running: as far as round-off amplification allows.
        let horizon =
            match qnhmc_chain::<P, D, M>(target, s, x0, case.seed, &s, Follow::Free, STEPS) {
                Ok(_) => STEPS,
                Err(m) => m.draw - 1,
            };
        let learning = match case.update {
            MemoryUpdate::Adaptive => STEPS,
            MemoryUpdate::FreezeAfter(n) => n as usize,
        };
        assert!(
            horizon >= MIN_FREE_HORIZON.min(learning),
            "{label}: the free-running reference left 1e-10 after {horizon} draws"
        );
        eprintln!(
            "{label}: {report:?}, rate {:.2}, free-running agreement for {horizon} draws",
            report.rate()
        );
        worst = worst.max(report.worst);
        skipped += report.pairs_skipped;
    }
    assert!(
        skipped >= min_skipped,
        "{name}: skipped pairs: {skipped} < {min_skipped}"
    );
    eprintln!("QNHMC {name}: worst coordinate error {worst:e}, pairs skipped {skipped}");
}

#[test]
fn qnhmc_gaussian_matches_dense_reference() {
    let g = gaussian();
    let mut cases = four_modes(
        (0.6, 3, 100),
        (0.6, 3, 101),
        (1.4, 3, 102),
        (1.4, 3, 103),
        no_tweak,
    );
    cases.push(QnhmcCase {
        label: "M = I, adaptive, γ from the newest pair",
        mass: QnhmcMass::Identity,
        update: MemoryUpdate::Adaptive,
        step_size: 0.3,
        leapfrog_steps: 3,
        seed: 104,
        tweak: |s| s.lbfgs.scaling = InitialScaling::NewestPair(1.0),
    });
    cases.push(QnhmcCase {
        label: "M = C, adaptive, 2 of 5 pairs < L = 5, trust region 0.1, γ from the newest pair",
        mass: QnhmcMass::InverseHessian,
        update: MemoryUpdate::Adaptive,
        step_size: 1.4,
        leapfrog_steps: 5,
        seed: 105,
        tweak: |s| {
            s.lbfgs.max_pairs = 2;
            s.lbfgs.curvature.trust_region = 0.1;
            s.lbfgs.scaling = InitialScaling::NewestPair(2.0);
        },
    });
    run_qnhmc_cases::<_, 8, 5>(
        "gaussian",
        &g,
        GAUSSIAN_X0,
        &cases,
        0,
        Follow::ShadowWhileLearning,
    );
}

#[test]
fn qnhmc_logistic_matches_dense_reference() {
    let l = logistic();
    let cases = four_modes(
        (0.4, 3, 110),
        (0.4, 3, 111),
        (0.5, 3, 112),
        (0.5, 3, 113),
        no_tweak,
    );
    run_qnhmc_cases::<_, 6, 4>(
        "logistic",
        &l,
        LOGISTIC_X0,
        &cases,
        0,
        Follow::ShadowWhileLearning,
    );
}

/// Not log-concave: the curvature rule skips pairs, and the counts must agree.
/// HMC on a banana is itself chaotic (a frozen chain also amplifies round-off,
/// and one trajectory can lose a few digits where H is far from ∇²U⁻¹), so
/// every draw is shadowed, and the angle bound ε = 0.3 keeps the memory well
/// conditioned.
///
/// With M = I and adaptive memory the acceptance rate over 500 draws is
/// bimodal: 28 of the seeds 100–159 give less than 0.3 (mean 0.36; 27 of 60
/// before the compact factors and `dot_wide` two-loop changed the last bits,
/// mean 0.36). The seed is one whose chain mixes (0.67); seed 101, used
/// before, now gives 0.10.
#[test]
fn qnhmc_banana_matches_dense_reference() {
    let b = banana();
    let cases = four_modes(
        (0.2, 3, 102),
        (0.2, 3, 101),
        (0.5, 3, 100),
        (0.5, 3, 101),
        |s| s.lbfgs.curvature.min_relative_curvature = 0.3,
    );
    run_qnhmc_cases::<_, 4, 6>("banana", &b, BANANA_X0, &cases, 50, Follow::Shadow);
}

/// Why the adaptive draws are shadowed: two *core* chains whose starting points
/// differ by one ulp separate by more than 1e-10 within a few dozen draws, about
/// when the free-running reference does.
#[test]
fn adaptive_qnhmc_amplifies_round_off() {
    let g = gaussian();
    let s = QnhmcSettings::new(0.6, 3, 5);
    let mut x1 = GAUSSIAN_X0;
    x1[0] = f64::from_bits(x1[0].to_bits() + 1);
    let mut a = Qnhmc::<f64, 8, 5>::new(s, GAUSSIAN_X0, &g).unwrap();
    let mut b = Qnhmc::<f64, 8, 5>::new(s, x1, &g).unwrap();
    let (mut ra, mut rb) = (rng(100), rng(100));
    let mut separated = None;
    for n in 1..=STEPS {
        a.step(&g, &mut ra);
        b.step(&g, &mut rb);
        if separated.is_none() && max_coordinate_error(a.position(), b.position()) > TOL {
            separated = Some(n);
        }
    }
    let separated = separated.expect("a one-ulp perturbation should grow past 1e-10");
    let horizon = match qnhmc_chain::<_, 8, 5>(&g, s, GAUSSIAN_X0, 100, &s, Follow::Free, STEPS) {
        Ok(_) => STEPS,
        Err(m) => m.draw - 1,
    };
    eprintln!(
        "one-ulp perturbation separates core chains after {separated} draws; the free reference after {horizon}"
    );
    assert!(separated < 200);
    assert!(
        2 * horizon >= separated,
        "the reference leaves the core much earlier than round-off explains"
    );
}

// ---------------------------------------------------------------------------
// Frozen QNHMC = HMC with K = C M⁻¹ C.

/// Core QNHMC with `FreezeAfter(warm_up)` against the dense QNHMC for the
/// adaptive draws, then against dense HMC with K = H² (M = I) or K = H (M = C)
/// and r = C⁻¹p = B·z (M = I) or B·S·z (M = C), from the same normals.
fn frozen_equivalence<P: Potential<f64, D> + DenseTarget, const D: usize, const M: usize>(
    target: &P,
    mut settings: QnhmcSettings<f64>,
    x0: [f64; D],
    seed: u64,
    warm_up: u64,
    use_wrong_metric: bool,
) -> Result<(Report, Report), String> {
    settings.memory_update = MemoryUpdate::FreezeAfter(warm_up);
    let mut core = Qnhmc::<f64, D, M>::new(settings, x0, target).map_err(|e| e.to_string())?;
    let mut reference = DenseQnhmc::new(&settings, dvec(&x0), target);
    let (mut rc, mut rr) = (rng(seed), rng(seed));
    let mut adaptive = Report::default();
    for n in 1..=warm_up as usize {
        sync_qnhmc(&mut reference, &core);
        let c = core.step(target, &mut rc);
        let r = reference.step(target, &mut rr);
        compare_draw(
            n,
            core.position(),
            &c,
            &reference.position,
            &r,
            &mut adaptive,
        )?;
        compare_memory(n, core.memory(), &reference.memory, &mut adaptive)?;
    }
    if !core.is_memory_frozen() || core.memory().is_empty() {
        return Err("the memory must be frozen and non-empty after warm-up".into());
    }
    let frozen_pairs = core.memory().pairs_admitted();
    sync_qnhmc(&mut reference, &core);

    let bfgs = reference.current_bfgs();
    let (k, map): (DMatrix<f64>, DMatrix<f64>) = match (settings.mass, use_wrong_metric) {
        (QnhmcMass::Identity, false) => (&bfgs.h * &bfgs.h, bfgs.b.clone()),
        (QnhmcMass::InverseHessian, false) => (bfgs.h.clone(), &bfgs.b * &bfgs.s),
        // Negative control: the "ideal" K = H for the paper's M = I.
        (QnhmcMass::Identity, true) => (bfgs.h.clone(), bfgs.b.clone()),
        (QnhmcMass::InverseHessian, true) => (&bfgs.h * &bfgs.h, &bfgs.b * &bfgs.s),
    };
    let mut hmc = DenseHmc::general(
        settings.step_size,
        settings.leapfrog_steps,
        k,
        map,
        reference.position.clone(),
        target,
    );
    let mut frozen = Report::default();
    for n in 1..=STEPS {
        let c = core.step(target, &mut rc);
        let r = hmc.step(target, &mut rr);
        compare_draw(n, core.position(), &c, &hmc.position, &r, &mut frozen)?;
        if core.memory().pairs_admitted() != frozen_pairs {
            return Err(format!("frozen draw {n}: the memory changed"));
        }
    }
    Ok((adaptive, frozen))
}

#[test]
fn frozen_qnhmc_is_hmc_with_metric_c_m_inverse_c() {
    let g = gaussian();
    let l = logistic();
    let mut worst: f64 = 0.0;
    let mut record = |label: &str, run: Result<(Report, Report), String>| {
        let (adaptive, frozen) = run.unwrap_or_else(|e| panic!("{label}: {e}"));
        eprintln!(
            "frozen equivalence {label}: adaptive {adaptive:?}\n  frozen {frozen:?}, rate {:.2}",
            frozen.rate()
        );
        frozen.assert_mixing(label);
        assert_eq!(frozen.draws, STEPS);
        worst = worst.max(adaptive.worst).max(frozen.worst);
    };
    for (mass, eps, seed) in [
        (QnhmcMass::Identity, 0.6, 50),
        (QnhmcMass::InverseHessian, 1.4, 51),
    ] {
        let mut s = QnhmcSettings::new(eps, 3, 5);
        s.mass = mass;
        record(
            &format!("gaussian {mass:?}"),
            frozen_equivalence::<_, 8, 5>(&g, s, GAUSSIAN_X0, seed, 100, false),
        );
    }
    for (mass, eps, seed, scaling) in [
        (QnhmcMass::Identity, 0.4, 111, InitialScaling::Fixed(1.0)),
        (
            QnhmcMass::InverseHessian,
            0.8,
            52,
            InitialScaling::NewestPair(0.1),
        ),
    ] {
        let mut s = QnhmcSettings::new(eps, 3, 4);
        s.mass = mass;
        s.lbfgs.scaling = scaling;
        record(
            &format!("logistic {mass:?}"),
            frozen_equivalence::<_, 6, 4>(&l, s, LOGISTIC_X0, seed, 100, false),
        );
    }
    eprintln!("frozen equivalence worst coordinate error: {worst:e}");
}

// ---------------------------------------------------------------------------
// HAMCMC.

fn hamcmc_chain<const D: usize, const M: usize>(
    target: &LinearGaussianMinibatch,
    settings: HamcmcSettings<f64>,
    x0: [f64; D],
    seed: u64,
    reference_window: usize,
) -> Result<Report, String> {
    let mut core = Hamcmc::<f64, D, M>::new(settings, x0).map_err(|e| e.to_string())?;
    let mut reference = DenseHamcmc::new(&settings, reference_window, dvec(&x0));
    let (mut rc, mut rr) = (rng(seed), rng(seed));
    let mut report = Report::default();
    let mut moved = 0.0f64;
    for n in 1..=STEPS {
        let before = *core.position();
        let c = core
            .step(target, &mut rc)
            .map_err(|e| format!("draw {n}: core error {e}"))?;
        let r = reference
            .step(target, &mut rr)
            .map_err(|e| format!("draw {n}: reference error {e:?}"))?;
        compare_draw(
            n,
            core.position(),
            &c,
            reference.position(),
            &r,
            &mut report,
        )?;
        compare_memory(n, core.memory(), &reference.memory, &mut report)?;
        let expected_evaluations = if n < M { 1 } else { 2 };
        if c.gradient_evaluations != expected_evaluations {
            return Err(format!("draw {n}: {} gradients", c.gradient_evaluations));
        }
        moved = moved.max(max_coordinate_error(&before, core.position()));
    }
    if moved == 0.0 {
        return Err("the chain never moved".into());
    }
    if core.memory().len() != M - 1 {
        return Err("the memory must hold M − 1 pairs".into());
    }
    Ok(report)
}

#[test]
fn hamcmc_matches_dense_reference() {
    let model = LinearGaussianMinibatch::synthetic(6, 300, 25, 13);
    let x0 = [0.5, -0.5, 1.0, 0.0, -1.0, 0.25];
    let mut worst: f64 = 0.0;
    for (schedule, name) in [
        (StepSizeSchedule::Constant(0.02), "constant"),
        (
            StepSizeSchedule::BlockDecaying {
                scale: 0.05,
                exponent: 0.51,
            },
            "block-decaying",
        ),
    ] {
        for (lambda, seed) in [(1.0, 60), (0.25, 61)] {
            let settings = HamcmcSettings::new(schedule, 0.004, lambda);
            for (m, run) in [
                (2, hamcmc_chain::<6, 2>(&model, settings, x0, seed, 2)),
                (4, hamcmc_chain::<6, 4>(&model, settings, x0, seed + 10, 4)),
            ] {
                let report =
                    run.unwrap_or_else(|e| panic!("HAMCMC {name}, λ = {lambda}, M = {m}: {e}"));
                eprintln!("HAMCMC {name}, λ = {lambda}, M = {m}: {report:?}");
                assert_eq!(report.draws, STEPS);
                assert_eq!(report.accepted, STEPS, "HAMCMC accepts every draw");
                assert_eq!(
                    report.gradient_evaluations,
                    2 * STEPS as u64 - (m as u64 - 1)
                );
                worst = worst.max(report.worst);
            }
        }
    }
    eprintln!("HAMCMC worst coordinate error: {worst:e}");
}

// ---------------------------------------------------------------------------
// Negative controls: the comparison can fail.

#[test]
fn a_wrong_reference_is_detected() {
    let g = gaussian();
    // Core M = I against a reference told M = C.
    let s = QnhmcSettings::new(0.6, 3, 5);
    let mut wrong = s;
    wrong.mass = QnhmcMass::InverseHessian;
    assert!(qnhmc_chain::<_, 8, 5>(&g, s, GAUSSIAN_X0, 9, &wrong, Follow::Shadow, STEPS).is_err());
    // Pairs kept on every trajectory instead of accepted ones only would differ
    // as soon as a proposal is rejected; a different max_pairs differs too.
    let mut wrong = s;
    wrong.lbfgs.max_pairs = 4;
    assert!(qnhmc_chain::<_, 8, 5>(&g, s, GAUSSIAN_X0, 9, &wrong, Follow::Shadow, STEPS).is_err());
    // The frozen chain against HMC with the "ideal" K = H instead of H².
    assert!(frozen_equivalence::<_, 8, 5>(&g, s, GAUSSIAN_X0, 50, 100, true).is_err());
    // HAMCMC with the window of the reference off by one.
    let model = LinearGaussianMinibatch::synthetic(6, 300, 25, 13);
    let settings = HamcmcSettings::new(StepSizeSchedule::Constant(0.02), 0.004, 1.0);
    assert!(hamcmc_chain::<6, 4>(&model, settings, [0.0; 6], 1, 3).is_err());
    // Same reference, different seed.
    assert!(hmc_chain(&g, HmcSettings::new(0.9, 5), None, GAUSSIAN_X0, 1).is_ok());
    let mut core = Hmc::new(HmcSettings::new(0.9, 5), GAUSSIAN_X0, &g).unwrap();
    let mut reference = DenseHmc::diagonal(0.9, 5, &[1.0; 8], dvec(&GAUSSIAN_X0), &g);
    let (mut rc, mut rr) = (rng(1), rng(2));
    let mut report = Report::default();
    let mismatch = (1..=10).any(|n| {
        let c = core.step(&g, &mut rc);
        let r = reference.step(&g, &mut rr);
        compare_draw(n, core.position(), &c, &reference.position, &r, &mut report).is_err()
    });
    assert!(mismatch);
}
