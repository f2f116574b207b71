//! Reference chains for HMC-BFGS and MH-BFGS (ALGORITHMS.md §4, §5.1).
//!
//! **Two modes.** *Shadowing* (asserted for every case, 600 updates): before
//! each update the reference is reset to the core's states, U and ∇U, so every
//! single transition — metric, momentum, trajectory, decision — is compared on
//! its own; measured worst per-transition error 1e-15 … 2e-12. *Free run* (both
//! start from the same states and never resync): the ensemble feeds every
//! chain's state into the other chains' metrics, so round-off differences
//! between the dense and the L-BFGS algebra (~1e-15) are amplified by a factor
//! ~1.1–1.3 per update for HMC-BFGS and for MH-BFGS on the banana, as with
//! adaptive QNHMC in `reference_chains/hmc.rs`. Measured free-run horizons before the
//! first 1e-10 mismatch: MH-BFGS on the Gaussian (both proposals) and the
//! Newton proposal on the logistic regression all 600 updates; HMC-BFGS with
//! K = 3 on the Gaussian all 600 (two settings), with K = 4 504; HMC-BFGS with
//! K = 6–8 122 (Gaussian), 46 (logistic), 60 (banana) (measured with the shared
//! integrator of `core/src/integrator.rs`; 548, 124, 43 and 60 with the merged
//! half kicks HMC-BFGS had before); MH-BFGS random walk on
//! the banana 102 (`free_run_horizon_is_intrinsic` shows two core runs one ulp
//! apart separate as fast). Each case asserts its measured horizon, rounded
//! down, so a regression in the agreement is caught. The per-update error grows smoothly from 1e-15
//! (trace it with `ENS_TRACE=1`), the signature of amplified round-off rather
//! than of a formula difference, which would show from the first update.
//!
//! The core samplers (`qnmc::samplers::ensemble`) run side by side with the
//! dense references of `qnmc_tests::ensemble`, written separately from the paper
//! (stable sort by L = −U ascending, point removal on sᵀy ≤ 0, dense H / B / S
//! from `DenseBfgs`, dense product-form C, MH-BFGS densities with the full
//! Gaussian normaliser), from the same seed. For 600 updates (100 full sweeps
//! of 6 chains, or 75 of 8) every chain's state must agree to 1e-10
//! (|a − b| ≤ 1e-10·max(1, |b|)), and every update must make the same
//! decision, count the same gradients and the same removed points, and hold the
//! same pairs and γ. Targets: an off-centre correlated Gaussian, a logistic
//! regression and a banana (not log-concave, so the curvature filter removes
//! points: asserted). Negative controls: a reference with a different γ rule,
//! or sorted the other way, must be caught.

use nalgebra::DVector;
use qnmc::lbfgs::{InitialScaling, LbfgsMemory};
use qnmc::random::standard_normal;
use qnmc::samplers::ensemble::{HmcBfgs, HmcBfgsSettings, MhBfgs, MhBfgsProposal, MhBfgsSettings};
use qnmc::{Potential, StepStats};
use qnmc_tests::dense::util::dvec;
use qnmc_tests::dense::{
    Banana, CorrelatedGaussian, DenseCurvature, DenseStep, DenseTarget, LogisticRegression,
    coordinate_error, max_coordinate_error,
};
use qnmc_tests::ensemble::{DenseEnsemble, DenseHmcBfgs, DenseMetric, DenseMhBfgs};
use rand_xorshift::XorShiftRng;

use crate::common::rng;

const TOL: f64 = 1e-10;
const UPDATES: usize = 600;

/// K starting points: `centre` plus N(0, spread²) noise from a fixed stream.
fn starts<const D: usize, const K: usize>(
    centre: &[f64; D],
    spread: f64,
    seed: u64,
) -> [[f64; D]; K] {
    let mut r = rng(seed ^ 0xabcd);
    let mut out = [[0.0; D]; K];
    for x in out.iter_mut() {
        for (j, v) in x.iter_mut().enumerate() {
            *v = centre[j] + spread * standard_normal::<f64, _>(&mut r);
        }
    }
    out
}

/// The core sampler seen through what the comparison needs.
trait Core<const D: usize, const K: usize, const M: usize> {
    fn update(&mut self, target: &dyn Potential<f64, D>, rng: &mut XorShiftRng) -> StepStats<f64>;
    fn states(&self) -> &[[f64; D]; K];
    fn metric(&self) -> &LbfgsMemory<f64, D, M>;
    fn cursor(&self) -> usize;
    fn energies(&self) -> &[f64; K];
    fn grads(&self) -> &[[f64; D]; K];
}

impl<const D: usize, const K: usize, const M: usize> Core<D, K, M> for HmcBfgs<f64, D, K, M> {
    fn update(&mut self, target: &dyn Potential<f64, D>, rng: &mut XorShiftRng) -> StepStats<f64> {
        self.step(&target, rng)
    }
    fn states(&self) -> &[[f64; D]; K] {
        self.positions()
    }
    fn metric(&self) -> &LbfgsMemory<f64, D, M> {
        self.memory()
    }
    fn cursor(&self) -> usize {
        self.next_chain()
    }
    fn energies(&self) -> &[f64; K] {
        self.potentials()
    }
    fn grads(&self) -> &[[f64; D]; K] {
        self.gradients()
    }
}

impl<const D: usize, const K: usize, const M: usize> Core<D, K, M> for MhBfgs<f64, D, K, M> {
    fn update(&mut self, target: &dyn Potential<f64, D>, rng: &mut XorShiftRng) -> StepStats<f64> {
        self.step(&target, rng)
    }
    fn states(&self) -> &[[f64; D]; K] {
        self.positions()
    }
    fn metric(&self) -> &LbfgsMemory<f64, D, M> {
        self.memory()
    }
    fn cursor(&self) -> usize {
        self.next_chain()
    }
    fn energies(&self) -> &[f64; K] {
        self.potentials()
    }
    fn grads(&self) -> &[[f64; D]; K] {
        self.gradients()
    }
}

/// The reference seen the same way.
trait Reference {
    fn update(
        &mut self,
        target: &dyn DenseTarget,
        rng: &mut XorShiftRng,
    ) -> (usize, DenseMetric, DenseStep);
    fn states(&self) -> &[DVector<f64>];
    fn ensemble_mut(&mut self) -> &mut DenseEnsemble;
}

impl Reference for DenseHmcBfgs {
    fn update(
        &mut self,
        target: &dyn DenseTarget,
        rng: &mut XorShiftRng,
    ) -> (usize, DenseMetric, DenseStep) {
        self.step(target, rng)
    }
    fn states(&self) -> &[DVector<f64>] {
        &self.ensemble.x
    }
    fn ensemble_mut(&mut self) -> &mut DenseEnsemble {
        &mut self.ensemble
    }
}

impl Reference for DenseMhBfgs {
    fn update(
        &mut self,
        target: &dyn DenseTarget,
        rng: &mut XorShiftRng,
    ) -> (usize, DenseMetric, DenseStep) {
        self.step(target, rng)
    }
    fn states(&self) -> &[DVector<f64>] {
        &self.ensemble.x
    }
    fn ensemble_mut(&mut self) -> &mut DenseEnsemble {
        &mut self.ensemble
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Report {
    accepted: usize,
    worst: f64,
    points_removed: u64,
    pairs_held: u64,
    /// Updates that matched before the first mismatch.
    matched: usize,
}

/// Free run: both from the same start for `UPDATES` updates; `Err` names the
/// first mismatch.
fn compare<const D: usize, const K: usize, const M: usize, T>(
    target: &T,
    core: &mut dyn Core<D, K, M>,
    reference: &mut dyn Reference,
    seed: u64,
) -> Result<Report, String>
where
    T: Potential<f64, D> + DenseTarget,
{
    run(target, core, reference, seed, false)
}

/// Shadowing: before every update the reference is reset to the core's
/// states, U and ∇U, so each of the `UPDATES` transitions is compared on its
/// own (round-off can no longer be amplified from one update to the next).
fn shadow<const D: usize, const K: usize, const M: usize, T>(
    target: &T,
    core: &mut dyn Core<D, K, M>,
    reference: &mut dyn Reference,
    seed: u64,
) -> Result<Report, String>
where
    T: Potential<f64, D> + DenseTarget,
{
    run(target, core, reference, seed, true)
}

fn run<const D: usize, const K: usize, const M: usize, T>(
    target: &T,
    core: &mut dyn Core<D, K, M>,
    reference: &mut dyn Reference,
    seed: u64,
    sync: bool,
) -> Result<Report, String>
where
    T: Potential<f64, D> + DenseTarget,
{
    let mut report = Report::default();
    run_into(target, core, reference, seed, sync, &mut report).map(|()| report)
}

fn run_into<const D: usize, const K: usize, const M: usize, T>(
    target: &T,
    core: &mut dyn Core<D, K, M>,
    reference: &mut dyn Reference,
    seed: u64,
    sync: bool,
    report: &mut Report,
) -> Result<(), String>
where
    T: Potential<f64, D> + DenseTarget,
{
    let (mut rc, mut rr) = (rng(seed), rng(seed));
    for n in 0..UPDATES {
        if sync {
            let e = reference.ensemble_mut();
            for k in 0..K {
                e.x[k] = dvec(&core.states()[k]);
                e.g[k] = dvec(&core.grads()[k]);
                e.u[k] = core.energies()[k];
            }
        }
        let chain = core.cursor();
        let c = core.update(target, &mut rc);
        let (i, metric, r) = reference.update(target, &mut rr);
        if chain != i {
            return Err(format!("update {n}: chain {chain} vs {i}"));
        }
        if c.accepted != r.accepted || c.divergent != r.divergent {
            return Err(format!("update {n}: decision {c:?} vs {r:?}"));
        }
        if c.gradient_evaluations != r.gradient_evaluations || c.pairs_skipped != r.pairs_skipped {
            return Err(format!("update {n}: counts {c:?} vs {r:?}"));
        }
        let memory = core.metric();
        if memory.len() != metric.pairs.pairs.len() {
            return Err(format!(
                "update {n}: {} pairs vs {}",
                memory.len(),
                metric.pairs.pairs.len()
            ));
        }
        let mut e = coordinate_error(memory.gamma(), metric.pairs.gamma);
        for ((s, y, _), (rs, ry)) in memory.pairs().iter().zip(&metric.pairs.pairs) {
            e = e
                .max(max_coordinate_error(s, rs.as_slice()))
                .max(max_coordinate_error(y, ry.as_slice()));
        }
        for (x, rx) in core.states().iter().zip(reference.states()) {
            e = e.max(max_coordinate_error(x, rx.as_slice()));
        }
        report.worst = report.worst.max(e);
        if std::env::var("ENS_TRACE").is_ok() && n % 20 == 0 {
            println!(
                "{n} {e:e} skipped {} pairs {}",
                c.pairs_skipped,
                memory.len()
            );
        }
        if e > TOL {
            return Err(format!("update {n}: states, pairs or γ differ by {e:e}"));
        }
        report.matched = n + 1;
        report.accepted += c.accepted as usize;
        report.points_removed += c.pairs_skipped as u64;
        report.pairs_held += memory.len() as u64;
    }
    Ok(())
}

fn check(label: &str, result: Result<Report, String>) -> Report {
    let report = result.unwrap_or_else(|e| panic!("{label}: {e}"));
    let rate = report.accepted as f64 / UPDATES as f64;
    println!("{label}: {report:?}, acceptance {rate:.3}");
    assert!(
        (0.2..=0.97).contains(&rate),
        "{label}: acceptance {rate} outside [0.2, 0.97]: both branches must be exercised"
    );
    assert!(
        report.pairs_held > 0,
        "{label}: the metric was never non-trivial"
    );
    report
}

fn dense_ensemble<const D: usize, const K: usize>(
    x0: &[[f64; D]; K],
    scaling: InitialScaling<f64>,
    target: &dyn DenseTarget,
) -> DenseEnsemble {
    DenseEnsemble::new(
        x0.iter().map(dvec).collect(),
        scaling.into(),
        DenseCurvature {
            trust_region: 0.0,
            min_relative_curvature: 0.0,
        },
        target,
    )
}

fn hmc_case<const D: usize, const K: usize, const M: usize, T>(
    label: &str,
    target: &T,
    x0: [[f64; D]; K],
    step_size: f64,
    leapfrog_steps: u32,
    seed: u64,
    min_free: usize,
) -> Report
where
    T: Potential<f64, D> + DenseTarget,
{
    let settings = HmcBfgsSettings::new(step_size, leapfrog_steps);
    let make = || {
        (
            HmcBfgs::<f64, D, K, M>::new(settings, x0, target).unwrap(),
            DenseHmcBfgs {
                step_size,
                leapfrog_steps,
                ensemble: dense_ensemble(&x0, settings.scaling, target),
            },
        )
    };
    let (mut core, mut reference) = make();
    let shadowed = check(label, shadow(target, &mut core, &mut reference, seed));
    let (mut core, mut reference) = make();
    let mut free = Report::default();
    let result = run_into(target, &mut core, &mut reference, seed, false, &mut free);
    println!(
        "{label} free run: {} updates match ({result:?})",
        free.matched
    );
    assert!(
        free.matched >= min_free,
        "{label}: free run matched only {} updates, {min_free} required: {result:?}",
        free.matched
    );
    shadowed
}

fn mh_case<const D: usize, const K: usize, const M: usize, T>(
    label: &str,
    target: &T,
    x0: [[f64; D]; K],
    step_size: f64,
    proposal: MhBfgsProposal,
    seed: u64,
    min_free: usize,
) -> Report
where
    T: Potential<f64, D> + DenseTarget,
{
    let settings = MhBfgsSettings::new(step_size, proposal);
    let make = || {
        (
            MhBfgs::<f64, D, K, M>::new(settings, x0, target).unwrap(),
            DenseMhBfgs {
                step_size,
                newton: proposal == MhBfgsProposal::Newton,
                ensemble: dense_ensemble(&x0, settings.scaling, target),
            },
        )
    };
    let (mut core, mut reference) = make();
    let shadowed = check(label, shadow(target, &mut core, &mut reference, seed));
    let (mut core, mut reference) = make();
    let mut free = Report::default();
    let result = run_into(target, &mut core, &mut reference, seed, false, &mut free);
    println!(
        "{label} free run: {} updates match ({result:?})",
        free.matched
    );
    assert!(
        free.matched >= min_free,
        "{label}: free run matched only {} updates, {min_free} required: {result:?}",
        free.matched
    );
    shadowed
}

fn gaussian() -> CorrelatedGaussian {
    CorrelatedGaussian::new(&[1.0, -1.0, 0.5, 0.0, 2.0, -0.5, 0.25, 1.5], 1.0, 4.0)
}

const GAUSSIAN_CENTRE: [f64; 8] = [1.0, -1.0, 0.5, 0.0, 2.0, -0.5, 0.25, 1.5];

fn logistic() -> LogisticRegression {
    LogisticRegression::synthetic(5, 60, 3)
}

fn banana() -> Banana {
    Banana::new(4, 2.0, 0.6)
}

#[test]
fn hmc_bfgs_gaussian() {
    let x0 = starts::<8, 6>(&GAUSSIAN_CENTRE, 2.0, 1);
    hmc_case::<8, 6, 4, _>("HMC-BFGS gaussian", &gaussian(), x0, 1.2, 5, 11, 100);
}

#[test]
fn hmc_bfgs_logistic_spare_capacity() {
    // M = 9 > K − 2 = 6: the memory keeps K − 2 pairs at most.
    let x0 = starts::<5, 8>(&[0.0; 5], 0.3, 2);
    hmc_case::<5, 8, 9, _>("HMC-BFGS logistic", &logistic(), x0, 0.5, 4, 12, 40);
}

#[test]
fn hmc_bfgs_banana_removes_points() {
    let x0 = starts::<4, 6>(&[0.0; 4], 1.0, 3);
    let r = hmc_case::<4, 6, 4, _>("HMC-BFGS banana", &banana(), x0, 0.4, 5, 13, 50);
    assert!(
        r.points_removed > 0,
        "the curvature filter was never exercised"
    );
}

#[test]
fn mh_bfgs_random_walk() {
    let x0 = starts::<8, 6>(&GAUSSIAN_CENTRE, 2.0, 4);
    mh_case::<8, 6, 4, _>(
        "MH-BFGS RW gaussian",
        &gaussian(),
        x0,
        0.7,
        MhBfgsProposal::RandomWalk,
        14,
        UPDATES,
    );
    let x0 = starts::<4, 6>(&[0.0; 4], 1.0, 5);
    let r = mh_case::<4, 6, 4, _>(
        "MH-BFGS RW banana",
        &banana(),
        x0,
        0.8,
        MhBfgsProposal::RandomWalk,
        15,
        100,
    );
    assert!(
        r.points_removed > 0,
        "the curvature filter was never exercised"
    );
}

#[test]
fn mh_bfgs_newton() {
    let x0 = starts::<5, 8>(&[0.0; 5], 0.3, 6);
    mh_case::<5, 8, 6, _>(
        "MH-BFGS Newton logistic",
        &logistic(),
        x0,
        0.8,
        MhBfgsProposal::Newton,
        16,
        UPDATES,
    );
    let x0 = starts::<8, 6>(&GAUSSIAN_CENTRE, 2.0, 7);
    mh_case::<8, 6, 4, _>(
        "MH-BFGS Newton gaussian",
        &gaussian(),
        x0,
        0.9,
        MhBfgsProposal::Newton,
        17,
        UPDATES,
    );
}

/// Negative controls: the comparison must fail when the reference differs.
#[test]
fn negative_controls() {
    let target = gaussian();
    let x0 = starts::<8, 6>(&GAUSSIAN_CENTRE, 2.0, 1);
    let settings = HmcBfgsSettings::new(0.6, 5);

    // (a) γ fixed to 1 in the reference, newest-pair γ in the core.
    let mut core = HmcBfgs::<f64, 8, 6, 4>::new(settings, x0, &target).unwrap();
    let mut reference = DenseHmcBfgs {
        step_size: 0.6,
        leapfrog_steps: 5,
        ensemble: dense_ensemble(&x0, InitialScaling::Fixed(1.0), &target),
    };
    let r = compare(&target, &mut core, &mut reference, 11);
    assert!(r.is_err(), "a different γ rule went unnoticed");
    let mut core = HmcBfgs::<f64, 8, 6, 4>::new(settings, x0, &target).unwrap();
    let mut reference = DenseHmcBfgs {
        step_size: 0.6,
        leapfrog_steps: 5,
        ensemble: dense_ensemble(&x0, InitialScaling::Fixed(1.0), &target),
    };
    let r = shadow(&target, &mut core, &mut reference, 11);
    assert!(r.is_err(), "shadowing missed a different γ rule");

    // (b) the reference sorts by U ascending instead of descending: emulated by
    // feeding the reference −U through a wrapper target would change the chain
    // itself, so instead flip the stored potentials' order of the reference's
    // pseudo-memory by negating them (the metric changes, the test does not).
    let mut core = HmcBfgs::<f64, 8, 6, 4>::new(settings, x0, &target).unwrap();
    let mut reference = DenseHmcBfgs {
        step_size: 0.6,
        leapfrog_steps: 5,
        ensemble: dense_ensemble(&x0, settings.scaling, &target),
    };
    let (mut rc, mut rr) = (rng(11), rng(11));
    let mut worst = 0.0f64;
    for _ in 0..60 {
        core.step(&target, &mut rc);
        for u in reference.ensemble.u.iter_mut() {
            *u = -*u;
        }
        // One update of the reference with negated potentials, then restore.
        let i = reference.ensemble.next;
        let before = reference.ensemble.u.clone();
        let _ = reference.step(&target, &mut rr);
        for (j, u) in reference.ensemble.u.iter_mut().enumerate() {
            if j != i || *u == before[j] {
                *u = -*u;
            }
        }
        for (x, rx) in core.positions().iter().zip(&reference.ensemble.x) {
            worst = worst.max(max_coordinate_error(x, rx.as_slice()));
        }
    }
    assert!(
        worst > 1e-6,
        "sorting the other way went unnoticed ({worst:e})"
    );

    // (c) a perturbed step size in the MH-BFGS reference.
    let settings = MhBfgsSettings::new(0.7, MhBfgsProposal::Newton);
    let mut core = MhBfgs::<f64, 8, 6, 4>::new(settings, x0, &target).unwrap();
    let mut reference = DenseMhBfgs {
        step_size: 0.7 * (1.0 + 1e-7),
        newton: true,
        ensemble: dense_ensemble(&x0, settings.scaling, &target),
    };
    assert!(compare(&target, &mut core, &mut reference, 11).is_err());
}

/// The short free-run horizons of HMC-BFGS are a property of the ensemble
/// dynamics, not of the reference: two *core* samplers whose starts differ by
/// one unit in the last place of one coordinate (≈ 2e-16 relative) separate past
/// 1e-10 after a similar number of updates as core and reference do.
#[test]
fn free_run_horizon_is_intrinsic() {
    fn horizon<const D: usize, const K: usize, const M: usize, T: Potential<f64, D>>(
        target: &T,
        x0: [[f64; D]; K],
        settings: HmcBfgsSettings<f64>,
        seed: u64,
    ) -> usize {
        let mut nudged = x0;
        nudged[1][0] = f64::from_bits(nudged[1][0].to_bits() + 1);
        let mut a = HmcBfgs::<f64, D, K, M>::new(settings, x0, target).unwrap();
        let mut b = HmcBfgs::<f64, D, K, M>::new(settings, nudged, target).unwrap();
        let (mut ra, mut rb) = (rng(seed), rng(seed));
        for n in 0..UPDATES {
            a.step(target, &mut ra);
            b.step(target, &mut rb);
            let e = a
                .positions()
                .iter()
                .zip(b.positions())
                .map(|(x, y)| max_coordinate_error(x, y))
                .fold(0.0, f64::max);
            if e > TOL {
                return n;
            }
        }
        UPDATES
    }
    let g = horizon::<8, 6, 4, _>(
        &gaussian(),
        starts::<8, 6>(&GAUSSIAN_CENTRE, 2.0, 1),
        HmcBfgsSettings::new(1.2, 5),
        11,
    );
    let l = horizon::<5, 8, 9, _>(
        &logistic(),
        starts::<5, 8>(&[0.0; 5], 0.3, 2),
        HmcBfgsSettings::new(0.5, 4),
        12,
    );
    println!("core vs nudged core: gaussian {g}, logistic {l} updates");
    assert!(g < 400 && l < 200, "gaussian {g}, logistic {l}");
}

/// Free runs of HMC-BFGS of ≥ 500 updates: with K = 3 (one pair per metric)
/// and K = 4 (two pairs) at L = 1–2 on the Gaussian the ensemble feedback is
/// weak enough for round-off to stay below 1e-10 (core vs a core nudged by one
/// ulp, measured with the earlier merged half kicks: ≥ 2000 updates for K = 3,
/// 584 for K = 4 at ε = 1.2, L = 1; core vs reference: 600 of 600 for K = 3,
/// 504 for K = 4 (548 with the merged kicks), asserted ≥ 500).
#[test]
fn hmc_bfgs_free_run_small_ensembles() {
    let g = gaussian();
    let x0 = starts::<8, 3>(&GAUSSIAN_CENTRE, 2.0, 1);
    hmc_case::<8, 3, 1, _>("HMC-BFGS K=3 ε=1.2 L=1", &g, x0, 1.2, 1, 11, UPDATES);
    hmc_case::<8, 3, 1, _>("HMC-BFGS K=3 ε=0.6 L=2", &g, x0, 0.6, 2, 12, UPDATES);
    let x0 = starts::<8, 4>(&GAUSSIAN_CENTRE, 2.0, 1);
    hmc_case::<8, 4, 2, _>("HMC-BFGS K=4 ε=1.2 L=1", &g, x0, 1.2, 1, 11, 500);
}
