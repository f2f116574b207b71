use core::mem::MaybeUninit;

use super::*;
use crate::adaptation::{
    DiagonalEstimator, IdentityEstimator, LbfgsEstimator, LbfgsEstimatorSettings,
};
use crate::metric::{DiagonalMetric, IdentityMetric, LbfgsMetric};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

struct StandardNormal;

impl Potential<f64, 2> for StandardNormal {
    fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
        *g = *x;
        0.5 * (x[0] * x[0] + x[1] * x[1])
    }
}

/// Warm-up draws run (counted by the caller and reported by the chain),
/// and the dual-averaging updates since its last restart.
fn warmup<E: MetricEstimator<f64, 2>>(metric: E::Metric, estimator: E, early: u32) -> [u64; 3] {
    let schedule = WarmupSchedule::stan(500).unwrap();
    let mut chain = AdaptiveNuts::<f64, 2, E>::new(
        NutsSettings::new(0.5),
        schedule,
        metric,
        estimator,
        [0.3, -0.2],
        &StandardNormal,
    )
    .unwrap();
    chain.set_early_end(early);
    let mut rng = XorShiftRng::seed_from_u64(7);
    let mut n = 0;
    while chain.is_warming_up() && n < 1000 {
        chain.step(&StandardNormal, &mut rng);
        n += 1;
    }
    [n, chain.warmup_draws(), chain.dual.iterations()]
}

/// Stan's windows for 500 draws end after draws 100, 150 and 450. The
/// identity estimator keeps the metric at every window end: dual averaging
/// is never restarted, and after k kept windows only the terminal buffer
/// (50 draws) follows.
#[test]
fn kept_windows_end_the_warmup_early() {
    let identity = |k| warmup(IdentityMetric, IdentityEstimator, k);
    assert_eq!(identity(0), [500, 500, 500]);
    assert_eq!(identity(1), [150, 150, 150]);
    assert_eq!(identity(2), [200, 200, 200]);
    // The third window ends at 450: its terminal buffer ends where the
    // schedule does.
    assert_eq!(identity(3), [500, 500, 500]);
}

/// A window whose trees reach the maximum depth is not quiet, so it
/// never counts towards the early end, even when it keeps the metric:
/// with depth 1 every draw of the identity metric's chain reaches it.
#[test]
fn troubled_windows_never_end_the_warmup_early() {
    for max_depth in [1, 10] {
        let mut settings = NutsSettings::new(0.5);
        settings.max_tree_depth = max_depth;
        let mut chain = AdaptiveNuts::<f64, 2, IdentityEstimator>::new(
            settings,
            WarmupSchedule::stan(500).unwrap(),
            IdentityMetric,
            IdentityEstimator,
            [0.3, -0.2],
            &StandardNormal,
        )
        .unwrap();
        chain.set_early_end(1);
        let mut rng = XorShiftRng::seed_from_u64(7);
        let (mut n, mut deep) = (0, 0);
        while chain.is_warming_up() && n < 1000 {
            deep += chain.step(&StandardNormal, &mut rng).reached_max_depth as u32;
            n += 1;
        }
        let expected = if max_depth == 1 { 500 } else { 150 };
        assert_eq!(
            (n, chain.warmup_draws()),
            (expected, expected),
            "depth {max_depth}"
        );
        if max_depth == 1 {
            assert!(deep > 250, "{deep}");
        }
    }
}

/// U = ½‖x‖² plus a wall 10⁴·(x₀ − 1)² beyond x₀ = 1: trajectories that
/// run into it diverge.
struct Wall;

impl Potential<f64, 2> for Wall {
    fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
        let over = (x[0] - 1.0).max(0.0);
        *g = [x[0] + 2e4 * over, x[1]];
        0.5 * (x[0] * x[0] + x[1] * x[1]) + 1e4 * over * over
    }
}

/// Final step size, and the divergent draws of the last slow window
/// (draws 151–450 of Stan's 500-draw schedule), of an identity-metric
/// chain on `target` with divergence target `delta`.
fn final_step_size<P: Potential<f64, 2>>(target: &P, delta: Option<f64>, seed: u64) -> (f64, u32) {
    let mut chain = AdaptiveNuts::<f64, 2, IdentityEstimator>::new(
        NutsSettings::new(0.5),
        WarmupSchedule::stan(500).unwrap(),
        IdentityMetric,
        IdentityEstimator,
        [0.3, -0.2],
        target,
    )
    .unwrap();
    chain.set_divergence_target(delta).unwrap();
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let mut last_window_divergent = 0;
    for draw in 1..=500 {
        let stats = chain.step(target, &mut rng);
        if (151..=450).contains(&draw) && stats.divergent {
            last_window_divergent += 1;
        }
    }
    assert!(!chain.is_warming_up());
    (chain.final_step_size(), last_window_divergent)
}

/// Where the last slow window diverged in at least 1 in 50 draws, the
/// divergence target lowers the final step size (δ 0.8 → 0.99); where it
/// did not (a Gaussian), the chain is bit for bit the chain without it.
#[test]
fn a_diverging_last_window_raises_the_target_acceptance() {
    for seed in [1, 2, 3] {
        let (plain, divergent) = final_step_size(&Wall, None, seed);
        let (raised, _) = final_step_size(&Wall, Some(0.99), seed);
        assert!(divergent >= 6, "seed {seed}: {divergent} divergent draws");
        assert!(raised < 0.8 * plain, "seed {seed}: {raised} vs {plain}");
        let (plain, divergent) = final_step_size(&StandardNormal, None, seed);
        let (same, _) = final_step_size(&StandardNormal, Some(0.99), seed);
        assert_eq!(divergent, 0);
        assert_eq!(plain.to_bits(), same.to_bits(), "seed {seed}");
    }
}

/// N(0, I) that grows a wall 10⁴·(x₀ − ½)² beyond x₀ = ½ once `wall` is set:
/// the slow windows see a quiet Gaussian, the terminal buffer a wall.
struct LateWall {
    wall: core::cell::Cell<bool>,
}

impl Potential<f64, 2> for LateWall {
    fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
        let over = if self.wall.get() {
            (x[0] - 0.5).max(0.0)
        } else {
            0.0
        };
        *g = [x[0] + 2e4 * over, x[1]];
        0.5 * (x[0] * x[0] + x[1] * x[1]) + 1e4 * over * over
    }
}

/// Warm-up length, final step size and the terminal buffer's divergent
/// draws (101–150) of an identity chain that ends its warm-up early after
/// its first window (draw 100), on [`LateWall`] with the wall up from draw
/// `wall_from` on.
fn late_wall_warmup(delta: Option<f64>, wall_from: u64, seed: u64) -> (u64, f64, u32) {
    let target = LateWall {
        wall: core::cell::Cell::new(false),
    };
    let mut chain = AdaptiveNuts::<f64, 2, IdentityEstimator>::new(
        NutsSettings::new(0.5),
        WarmupSchedule::stan(500).unwrap(),
        IdentityMetric,
        IdentityEstimator,
        [0.3, -0.2],
        &target,
    )
    .unwrap();
    chain.set_early_end(1);
    chain.set_divergence_target(delta).unwrap();
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let (mut draw, mut terminal_divergent) = (0, 0);
    while chain.is_warming_up() && draw < 1000 {
        target.wall.set(draw >= wall_from);
        let stats = chain.step(&target, &mut rng);
        draw += 1;
        if (101..=150).contains(&draw) && stats.divergent {
            terminal_divergent += 1;
        }
    }
    (draw, chain.final_step_size(), terminal_divergent)
}

/// A terminal buffer that diverges (at least 1 in 50 of its draws, and two)
/// after an early end, with no slow window left to see it, is followed by
/// one more terminal buffer at the divergence target — once; without a
/// divergence target, or without divergences, the warm-up is unchanged bit
/// for bit.
#[test]
fn a_diverging_terminal_buffer_extends_the_warmup_once() {
    for seed in [1, 2, 3, 4] {
        let (plain_draws, plain_eps, divergent) = late_wall_warmup(None, 100, seed);
        assert_eq!(plain_draws, 150, "seed {seed}");
        assert!(divergent >= 2, "seed {seed}: {divergent} divergent draws");
        let (draws, eps, _) = late_wall_warmup(Some(0.95), 100, seed);
        assert_eq!(draws, 200, "seed {seed}: one terminal buffer more");
        assert!(eps < 0.8 * plain_eps, "seed {seed}: {eps} vs {plain_eps}");
        // No wall: no divergence, the same warm-up to the last bit.
        let (quiet, quiet_eps, none) = late_wall_warmup(None, u64::MAX, seed);
        let (same, same_eps, _) = late_wall_warmup(Some(0.95), u64::MAX, seed);
        assert_eq!((none, quiet, same), (0, 150, 150), "seed {seed}");
        assert_eq!(quiet_eps.to_bits(), same_eps.to_bits(), "seed {seed}");
    }
}

/// N(0, I/`precision`), the precision set between draws: narrowed draw by
/// draw, it is a chain walking down a funnel's neck, where dual averaging's
/// iterate follows (its energy errors grow) but the averaged step size
/// lags.
struct Narrowing {
    precision: core::cell::Cell<f64>,
}

impl Potential<f64, 2> for Narrowing {
    fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
        let precision = self.precision.get();
        *g = [precision * x[0], precision * x[1]];
        0.5 * precision * (x[0] * x[0] + x[1] * x[1])
    }
}

/// Warm-up length, final step size and divergent draws of the terminal
/// buffer (101–150) of an identity chain that ends its warm-up early after
/// its first window (draw 100), on [`Narrowing`] with precision 1 until
/// draw `narrow_from` and ×1.15 per draw after it, for at most 32 draws
/// (×88, its sd 0.11).
fn narrowing_warmup(delta: Option<f64>, narrow_from: u64, seed: u64) -> (u64, f64, u32) {
    let target = Narrowing {
        precision: core::cell::Cell::new(1.0),
    };
    let mut chain = AdaptiveNuts::<f64, 2, IdentityEstimator>::new(
        NutsSettings::new(0.5),
        WarmupSchedule::stan(500).unwrap(),
        IdentityMetric,
        IdentityEstimator,
        [0.3, -0.2],
        &target,
    )
    .unwrap();
    chain.set_early_end(1);
    chain.set_divergence_target(delta).unwrap();
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let (mut draw, mut terminal_divergent) = (0u64, 0);
    while chain.is_warming_up() && draw < 1000 {
        let narrowed = draw.saturating_sub(narrow_from).min(32) as i32;
        target.precision.set(1.15f64.powi(narrowed));
        let stats = chain.step(&target, &mut rng);
        draw += 1;
        if (101..=150).contains(&draw) && stats.divergent {
            terminal_divergent += 1;
        }
    }
    (draw, chain.final_step_size(), terminal_divergent)
}

/// A chain that moves, in the last draws of its terminal buffer, where the
/// averaged step size no longer fits (dual averaging's iterates below it by
/// more than [`STEP_SIZE_FALL`] on moving geometric average) and cannot
/// move there at that step size ([`STUCK_PROBES`]) gets one more terminal
/// buffer, though it diverged less than the divergence rule needs; its
/// final step size then fits where it is. Never narrowed, the warm-up is
/// the same to the last bit.
#[test]
fn a_step_size_that_fell_at_the_end_of_the_warmup_extends_it_once() {
    for seed in 1..=10 {
        let (plain_draws, plain_eps, divergent) = narrowing_warmup(None, 118, seed);
        // Fewer than two divergences: the divergence rule cannot extend it.
        assert_eq!(plain_draws, 150, "seed {seed}");
        assert!(divergent < 2, "seed {seed}: {divergent} divergent draws");
        let (draws, eps, _) = narrowing_warmup(Some(0.95), 118, seed);
        assert_eq!(draws, 200, "seed {seed}: one terminal buffer more");
        assert!(eps < 0.7 * plain_eps, "seed {seed}: {eps} vs {plain_eps}");
        // Never narrowed: the same warm-up to the last bit.
        let (quiet, quiet_eps, _) = narrowing_warmup(None, u64::MAX, seed);
        let (same, same_eps, _) = narrowing_warmup(Some(0.95), u64::MAX, seed);
        assert_eq!((quiet, same), (150, 150), "seed {seed}");
        assert_eq!(quiet_eps.to_bits(), same_eps.to_bits(), "seed {seed}");
    }
}

#[test]
fn a_divergence_target_outside_zero_one_is_refused() {
    let mut chain = AdaptiveNuts::<f64, 2, IdentityEstimator>::new(
        NutsSettings::new(0.5),
        WarmupSchedule::stan(500).unwrap(),
        IdentityMetric,
        IdentityEstimator,
        [0.3, -0.2],
        &StandardNormal,
    )
    .unwrap();
    chain.set_divergence_target(Some(0.9)).unwrap();
    for bad in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        assert!(chain.set_divergence_target(Some(bad)).is_err(), "{bad}");
        assert_eq!(chain.divergence_target, 0.9);
    }
    chain.set_divergence_target(None).unwrap();
    assert_eq!(chain.divergence_target, 0.0);
}

/// The diagonal estimator replaces the metric at every window end: dual
/// averaging restarts there (the last restart after draw 450 leaves 50
/// updates) and the warm-up never ends early.
#[test]
fn replaced_metrics_restart_the_step_size_and_never_end_early() {
    for early in [0, 1, 2] {
        let metric = DiagonalMetric::new(&[1.0, 1.0]).unwrap();
        let got = warmup(metric, DiagonalEstimator::new(), early);
        assert_eq!(got, [500, 500, 50], "early end after {early}");
    }
}

/// A badly scaled, correlated 7-D Gaussian: U = ½ Σᵢ (xᵢ − xᵢ₋₁/2)²/sᵢ².
struct Chained;

impl Potential<f64, 7> for Chained {
    fn potential_and_gradient(&self, x: &[f64; 7], g: &mut [f64; 7]) -> f64 {
        let scale = |i: usize| 0.3 * (i as f64 + 1.0);
        let mut u = 0.0;
        *g = [0.0; 7];
        for i in 0..7 {
            let r = x[i] - if i > 0 { 0.5 * x[i - 1] } else { 0.0 };
            let w = r / (scale(i) * scale(i));
            u += 0.5 * r * w;
            g[i] += w;
            if i > 0 {
                g[i - 1] -= 0.5 * w;
            }
        }
        u
    }
}

type LbfgsChain = AdaptiveNuts<f64, 7, LbfgsEstimator<f64, 7, 3>, 8>;

fn lbfgs_settings() -> LbfgsEstimatorSettings<f64> {
    let mut settings = LbfgsEstimatorSettings::new(0.1);
    settings.max_pairs = 2;
    settings
}

fn new_lbfgs_chain(start: [f64; 7]) -> LbfgsChain {
    let estimator = LbfgsEstimator::new(0.1).unwrap().with_max_pairs(2);
    let mut nuts = NutsSettings::new(0.4);
    nuts.max_tree_depth = 8;
    AdaptiveNuts::new(
        nuts,
        WarmupSchedule::after_optimization(200).unwrap(),
        LbfgsMetric::identity(),
        estimator,
        start,
        &Chained,
    )
    .unwrap()
}

/// Positions of `draws` draws, with the chain's settings as the host sets them.
fn drive<E: MetricEstimator<f64, 7>>(
    chain: &mut AdaptiveNuts<f64, 7, E, 8>,
    seed: u64,
    draws: usize,
) -> Vec<[f64; 7]> {
    chain.set_acceptance_statistic(AcceptanceStatistic::Symmetric);
    chain.set_early_end(2);
    chain.set_jitter(0.1).unwrap();
    let mut rng = XorShiftRng::seed_from_u64(seed);
    (0..draws)
        .map(|_| {
            chain.step(&Chained, &mut rng);
            *chain.position()
        })
        .collect()
}

/// Built in place (zeroed, then `reset`), the sampler has every field of
/// `new`'s (compared through `Debug`, which prints each float exactly),
/// and draws the same chain bit for bit; so does a used sampler `reset`
/// for a new chain.
#[test]
fn built_in_place_it_is_the_sampler_new_builds() {
    let start = [0.5, -1.0, 2.0, 0.0, 1.5, -0.5, 3.0];
    let mut nuts = NutsSettings::new(0.4);
    nuts.max_tree_depth = 8;
    let schedule = WarmupSchedule::after_optimization(200).unwrap();
    let mut fresh = new_lbfgs_chain(start);
    let mut slot = MaybeUninit::uninit();
    let placed = LbfgsChain::init_in_place(
        &mut slot,
        nuts,
        schedule,
        lbfgs_settings(),
        &start,
        &Chained,
    )
    .unwrap();
    assert_eq!(format!("{fresh:?}"), format!("{placed:?}"));
    let expected = drive(&mut fresh, 5, 400);
    assert_eq!(expected, drive(placed, 5, 400));
    // The used sampler, reset to the same start, repeats the chain.
    placed
        .reset(nuts, schedule, lbfgs_settings(), &start, &Chained)
        .unwrap();
    assert_eq!(
        format!("{:?}", new_lbfgs_chain(start)),
        format!("{placed:?}")
    );
    assert_eq!(expected, drive(placed, 5, 400));

    // The diagonal estimator too.
    type DiagonalChain = AdaptiveNuts<f64, 7, DiagonalEstimator<f64, 7>, 8>;
    let mut fresh = DiagonalChain::new(
        nuts,
        schedule,
        DiagonalMetric::identity(),
        DiagonalEstimator::new(),
        start,
        &Chained,
    )
    .unwrap();
    let mut slot = MaybeUninit::uninit();
    let placed =
        DiagonalChain::init_in_place(&mut slot, nuts, schedule, (), &start, &Chained).unwrap();
    assert_eq!(format!("{fresh:?}"), format!("{placed:?}"));
    assert_eq!(drive(&mut fresh, 9, 300), drive(placed, 9, 300));
}

/// Invalid settings and starts are errors, and a `reset` refused for
/// them leaves the running chain exactly as it was.
#[test]
fn a_refused_reset_changes_nothing() {
    let start = [0.5; 7];
    let mut chain = new_lbfgs_chain(start);
    drive(&mut chain, 2, 50);
    let before = format!("{chain:?}");
    let mut nuts = NutsSettings::new(0.4);
    nuts.max_tree_depth = 8;
    let schedule = WarmupSchedule::stan(100).unwrap();
    let mut bad_step = nuts;
    bad_step.step_size = f64::NAN;
    let mut bad_depth = nuts;
    bad_depth.max_tree_depth = 9;
    let mut bad_tolerance = lbfgs_settings();
    bad_tolerance.rank_tolerance = -1.0;
    let nan_start = [f64::NAN; 7];
    assert!(
        chain
            .reset(bad_step, schedule, lbfgs_settings(), &start, &Chained)
            .is_err()
    );
    assert!(
        chain
            .reset(bad_depth, schedule, lbfgs_settings(), &start, &Chained)
            .is_err()
    );
    assert!(
        chain
            .reset(nuts, schedule, bad_tolerance, &start, &Chained)
            .is_err()
    );
    assert_eq!(before, format!("{chain:?}"));
    // A start that is not finite: an error, and the chain still draws.
    assert_eq!(
        chain.reset(nuts, schedule, lbfgs_settings(), &nan_start, &Chained),
        Err(Error::NonFiniteInitialState)
    );
    let mut rng = XorShiftRng::seed_from_u64(4);
    for _ in 0..20 {
        chain.step(&Chained, &mut rng);
        assert!(chain.position().iter().all(|x| x.is_finite()));
    }
    let mut slot = MaybeUninit::<LbfgsChain>::uninit();
    assert!(
        LbfgsChain::init_in_place(
            &mut slot,
            bad_step,
            schedule,
            lbfgs_settings(),
            &start,
            &Chained
        )
        .is_err()
    );
}

/// The L-BFGS pieces rebuilt in place equal the constructors' values.
#[test]
fn pieces_reset_in_place_equal_new_ones() {
    use crate::lbfgs::{LbfgsMemory, LbfgsSettings};
    let mut metric = LbfgsMetric::<f32, 5, 3>::identity();
    let mut memory = LbfgsMemory::<f32, 5, 3>::new(LbfgsSettings::with_max_pairs(3)).unwrap();
    assert!(memory.try_push(&[1.0, 0.0, 0.5, 0.0, 0.0], &[2.0, 0.0, 1.0, 0.0, 0.1]));
    metric.rebuild(&[2.0; 5], &memory, 0.0).unwrap();
    assert_ne!(
        format!("{metric:?}"),
        format!("{:?}", LbfgsMetric::<f32, 5, 3>::identity())
    );
    metric.set_identity();
    assert_eq!(
        format!("{metric:?}"),
        format!("{:?}", LbfgsMetric::<f32, 5, 3>::identity())
    );
    let mut settings = LbfgsSettings::with_max_pairs(2);
    settings.scaling = crate::lbfgs::InitialScaling::NewestPair(0.5);
    memory.reset(settings).unwrap();
    let new = LbfgsMemory::<f32, 5, 3>::new(settings).unwrap();
    assert_eq!(format!("{memory:?}"), format!("{new:?}"));
    settings.max_pairs = 4;
    assert!(memory.reset(settings).is_err());
    assert_eq!(format!("{memory:?}"), format!("{new:?}"));
}

/// `prepare_warmup` called before the first draw (twice: the second does
/// nothing) moves the chain to the L-BFGS start and counts its gradients;
/// the chain then draws bit for bit what `step` alone draws, with the same
/// warm-up gradient count. After a `reset` it runs again.
#[test]
fn prepare_warmup_then_step_is_step_alone() {
    let start = [0.5, -1.0, 2.0, 0.0, 1.5, -0.5, 3.0];
    for seed in [1u64, 2, 3] {
        let mut alone = new_lbfgs_chain(start);
        let expected = drive(&mut alone, seed, 120);

        let mut prepared = new_lbfgs_chain(start);
        prepared.set_acceptance_statistic(AcceptanceStatistic::Symmetric);
        prepared.set_early_end(2);
        prepared.set_jitter(0.1).unwrap();
        let mut rng = XorShiftRng::seed_from_u64(seed);
        prepared.prepare_warmup(&Chained, &mut rng);
        let spent = prepared.warmup_gradient_evaluations();
        assert!(spent > 1, "seed {seed}: {spent}");
        assert_ne!(*prepared.position(), start, "seed {seed}: did not move");
        prepared.prepare_warmup(&Chained, &mut rng);
        assert_eq!(prepared.warmup_gradient_evaluations(), spent);
        let drawn: Vec<_> = (0..120)
            .map(|_| {
                prepared.step(&Chained, &mut rng);
                *prepared.position()
            })
            .collect();
        assert_eq!(drawn, expected, "seed {seed}");
        assert_eq!(
            prepared.warmup_gradient_evaluations(),
            alone.warmup_gradient_evaluations()
        );

        let mut nuts = NutsSettings::new(0.4);
        nuts.max_tree_depth = 8;
        prepared
            .reset(
                nuts,
                WarmupSchedule::after_optimization(200).unwrap(),
                lbfgs_settings(),
                &start,
                &Chained,
            )
            .unwrap();
        prepared.prepare_warmup(&Chained, &mut rng);
        assert!(prepared.warmup_gradient_evaluations() > 1, "seed {seed}");
    }
}

/// Which samplers `AdaptiveNuts::new` takes (`NEW_MAX_BYTES`): the default
/// quasi-Newton one (M = 20) up to D = 25, the diagonal one at D = 100, not
/// the quasi-Newton one at D = 100 (its construction overflowed a 2 MiB
/// debug thread).
#[test]
fn new_takes_the_samplers_that_fit_on_a_debug_stack() {
    use crate::adaptation::{DiagonalEstimator, LbfgsEstimator, NEW_MAX_BYTES};
    use core::mem::size_of;
    assert!(size_of::<AdaptiveNuts<f64, 25, LbfgsEstimator<f64, 25, 20>>>() <= NEW_MAX_BYTES);
    assert!(size_of::<AdaptiveNuts<f64, 100, DiagonalEstimator<f64, 100>>>() <= NEW_MAX_BYTES);
    assert!(size_of::<AdaptiveNuts<f64, 100, LbfgsEstimator<f64, 100, 20>>>() > NEW_MAX_BYTES);
}

/// Independent normals with sds 0.1, 1 and 10: ∇U = θ/σ², so the early
/// estimate √(Var θᵢ / Var ∂ᵢU) is σᵢ² exactly, whatever the draws.
struct ThreeScales;

const THREE_VARIANCES: [f64; 3] = [0.01, 1.0, 100.0];

impl Potential<f64, 3> for ThreeScales {
    fn potential_and_gradient(&self, x: &[f64; 3], g: &mut [f64; 3]) -> f64 {
        let mut u = 0.0;
        for i in 0..3 {
            g[i] = x[i] / THREE_VARIANCES[i];
            u += 0.5 * x[i] * g[i];
        }
        u
    }
}

/// The metric's base after `draws` warm-up draws of a chain that starts
/// where it is (no optimisation) at a point where the gradient-scaled
/// first guess is wrong by 100× on both outer coordinates: 1/|∂ᵢU| =
/// (1, 1, 2) at (0.01, 1, 50).
fn base_after(draws: u64, every: u64) -> [f64; 3] {
    type Chain = AdaptiveNuts<f64, 3, LbfgsEstimator<f64, 3, 4>>;
    let estimator = LbfgsEstimator::new(0.1).unwrap().with_optimization(false);
    let mut chain = Chain::new(
        NutsSettings::new(0.5),
        WarmupSchedule::after_optimization(500).unwrap(),
        LbfgsMetric::identity(),
        estimator,
        [0.01, 1.0, 50.0],
        &ThreeScales,
    )
    .unwrap();
    chain.set_early_refresh(every);
    let mut rng = XorShiftRng::seed_from_u64(3);
    for _ in 0..draws {
        chain.step(&ThreeScales, &mut rng);
    }
    *chain.sampler().metric().base()
}

/// With early refreshes every 10 draws of the initial buffer (25 draws:
/// refreshes at 10 and 20) the metric is the posterior's variances by
/// draw 10 up to the log-scale shrinkage (the logs' spread
/// is 21 against the noise 1/10 of 10 draws: each ln σᵢ² keeps 99.5 % of
/// its distance to their mean 0, so |ln| ≤ 0.005 · 4.6 = 0.023) and stays
/// so; without, the first guess stands until the first window ends at
/// draw 50. Exact arithmetic for this target: the bound is not statistical.
#[test]
fn early_refreshes_replace_the_first_guess_in_the_initial_buffer() {
    let off = base_after(49, 0);
    assert_eq!(off, [1.0, 1.0, 2.0], "the first guess 1/|∂ᵢU| at the start");
    for draws in [10, 25, 49] {
        let on = base_after(draws, 10);
        for i in 0..3 {
            let r = on[i] / THREE_VARIANCES[i];
            assert!(r.ln().abs() < 0.025, "draw {draws}: {on:?}");
        }
    }
    // Nothing before the first refresh.
    assert_eq!(base_after(9, 10), [1.0, 1.0, 2.0]);
}

/// `set_early_refresh(0)` after the start has armed the refreshes stops
/// them (no division by zero): the metric keeps the draw-10 refresh, and
/// the chain goes on through its warm-up.
#[test]
fn early_refresh_turned_off_mid_buffer_stops_without_panicking() {
    type Chain = AdaptiveNuts<f64, 3, LbfgsEstimator<f64, 3, 4>>;
    let estimator = LbfgsEstimator::new(0.1).unwrap().with_optimization(false);
    let mut chain = Chain::new(
        NutsSettings::new(0.5),
        WarmupSchedule::after_optimization(100).unwrap(),
        LbfgsMetric::identity(),
        estimator,
        [0.01, 1.0, 50.0],
        &ThreeScales,
    )
    .unwrap();
    chain.set_early_refresh(10);
    let mut rng = XorShiftRng::seed_from_u64(3);
    for _ in 0..12 {
        chain.step(&ThreeScales, &mut rng);
    }
    let refreshed = *chain.sampler().metric().base();
    assert_ne!(refreshed, [1.0, 1.0, 2.0], "refreshed at draw 10");
    chain.set_early_refresh(0);
    for _ in 0..10 {
        chain.step(&ThreeScales, &mut rng);
    }
    assert_eq!(
        *chain.sampler().metric().base(),
        refreshed,
        "no refresh at draw 20"
    );
    while chain.is_warming_up() {
        chain.step(&ThreeScales, &mut rng);
    }
}
