//! Every sampler through the runner on a small Gaussian with known moments.

use super::*;
use crate::model::{KnownPosterior, ModelRng};
use rand_core::SeedableRng;

/// N(μ, diag(σ²)) in dimension 9 (runs padded to 10): μᵢ = i/4, σᵢ = 0.5 + i/8.
pub(super) struct Diagonal;

pub(super) const N: usize = 9;

pub(super) fn mu(i: usize) -> f64 {
    i as f64 / 4.0
}
pub(super) fn sigma(i: usize) -> f64 {
    0.5 + i as f64 / 8.0
}

impl Model for Diagonal {
    fn name(&self) -> String {
        "diagonal".into()
    }
    fn dimension(&self) -> usize {
        N
    }
    fn potential_and_gradient(&self, x: &[f64], g: &mut [f64]) -> f64 {
        let mut u = 0.0;
        for i in 0..N {
            let z = (x[i] - mu(i)) / sigma(i);
            g[i] = z / sigma(i);
            u += 0.5 * z * z;
        }
        u
    }
    fn known_posterior(&self) -> Option<KnownPosterior> {
        Some(KnownPosterior {
            source: "analytic".into(),
            mean: (0..N).map(mu).collect(),
            sd: (0..N).map(sigma).collect(),
            mean_mcse: None,
            sd_mcse: None,
            gaussian_marginals: true,
        })
    }
}

fn settings() -> RunSettings {
    RunSettings {
        chains: 4,
        warmup: 500,
        draws: 1000,
        seed: 7,
        ..RunSettings::default()
    }
}

#[test]
fn exact_samplers_pass_the_check() {
    // The check's thresholds come from the MCSE (Bonferroni at level 0.001):
    // an exact sampler fails only by a rare accident or a real bias.
    for kind in SamplerKind::ALL.into_iter().filter(|k| k.is_exact()) {
        // MH-BFGS is a random walk: thin it so R-hat sees enough effective draws.
        let thin = if kind == SamplerKind::MhBfgs { 5 } else { 1 };
        let s = RunSettings { thin, ..settings() };
        let draws = run(&Diagonal, kind, &s, &Progress::hidden()).unwrap();
        assert_eq!(draws.chains.len(), 4);
        for c in &draws.chains {
            assert_eq!(c.len(), 1000);
            assert_eq!(c.values.len(), 1000 * N);
            assert!(c.lp.iter().all(|v| v.is_finite()));
            assert!(c.gradient_evaluations > 0);
        }
        // NUTS and the samplers of any dimension keep the tenth coordinate
        // at zero; the others pad it.
        let header = if kind == SamplerKind::Nuts || kind.runs_any_dimension() {
            "storage"
        } else {
            "padding"
        };
        assert!(draws.settings.iter().any(|(k, _)| k == header), "{kind}");
        // lp__ is −U of the model at the reported draw: the padding
        // coordinate's ½x² is not in it.
        let c = &draws.chains[0];
        let mut g = vec![0.0; N];
        for (i, lp) in c.lp.iter().enumerate().step_by(97) {
            let u = Diagonal.potential_and_gradient(&c.values[i * N..(i + 1) * N], &mut g);
            assert!((lp + u).abs() < 1e-12, "{kind}: lp {lp} vs -U {}", -u);
        }
        let report = check(&draws, &Diagonal.known_posterior().unwrap());
        assert!(report.passed(), "{kind}:\n{}", report.table());
    }
}

#[test]
fn stochastic_gradient_samplers_are_close_with_a_small_step() {
    // Exact gradients here, so their error is the O(ε) discretisation plus
    // the Monte Carlo error of slowly mixing Langevin chains: with these step
    // sizes and 4 × 1000 draws thinned by 10 every mean is within 0.3 sd (the
    // largest error seen over the samplers is ~0.15 sd; a broken sampler is
    // off by whole sds).
    let mut largest: f64 = 0.0;
    for kind in SamplerKind::ALL.into_iter().filter(|k| !k.is_exact()) {
        let step = if matches!(
            kind,
            SamplerKind::Sghmc | SamplerKind::Sgnht | SamplerKind::Sgrhmc | SamplerKind::Hamcmc
        ) {
            0.05
        } else {
            0.02
        };
        let s = RunSettings {
            step_size: Some(step),
            thin: 10,
            ..settings()
        };
        let draws = run(&Diagonal, kind, &s, &Progress::hidden()).unwrap();
        for j in 0..N {
            let all = draws.chains_of(j).concat();
            let m = crate::diagnostics::mean(&all);
            largest = largest.max((m - mu(j)).abs() / sigma(j));
            assert!(
                (m - mu(j)).abs() < 0.3 * sigma(j),
                "{kind}: mean of x[{}] = {m}, truth {}",
                j + 1,
                mu(j)
            );
        }
    }
    println!("largest mean error of the SG samplers: {largest:.3} sd");
}

/// `sghmc_update` reaches the sampler and the header: the two orders give
/// different chains from the same seed, the header names the order, and the
/// recipe-Euler order (no longer covered by the loop above, which runs the
/// default) is as close as the other SG samplers (mean within 0.3 sd).
#[test]
fn sghmc_update_order_is_used_and_recorded() {
    let mut draws = Vec::new();
    for (update, label) in [
        (qnmc::SghmcUpdate::PositionFirst, "position-first"),
        (qnmc::SghmcUpdate::RecipeEuler, "recipe-euler"),
    ] {
        let s = RunSettings {
            step_size: Some(0.05),
            thin: 10,
            sghmc_update: update,
            ..settings()
        };
        let d = run(&Diagonal, SamplerKind::Sghmc, &s, &Progress::hidden()).unwrap();
        let header = d
            .settings
            .iter()
            .find(|(k, _)| k == "update")
            .map(|(_, v)| v.clone());
        assert!(
            header.as_deref().is_some_and(|v| v.starts_with(label)),
            "{header:?}"
        );
        for j in 0..N {
            let m = crate::diagnostics::mean(&d.chains_of(j).concat());
            assert!((m - mu(j)).abs() < 0.3 * sigma(j), "{label}: x[{j}] {m}");
        }
        draws.push(d.chains[0].values.clone());
    }
    assert_ne!(draws[0], draws[1]);
    // Other samplers do not print it.
    let d = run(
        &Diagonal,
        SamplerKind::Sgnht,
        &RunSettings {
            step_size: Some(0.05),
            draws: 10,
            warmup: 0,
            ..settings()
        },
        &Progress::hidden(),
    )
    .unwrap();
    assert!(d.settings.iter().all(|(k, _)| k != "update"));
}

#[test]
fn a_wrong_step_size_fails_the_check() {
    // SGLD with ε = 0.5 on σ ≥ 0.5 inflates every variance by far more than
    // the MCSE: the check must catch it.
    let s = RunSettings {
        step_size: Some(0.5),
        ..settings()
    };
    let draws = run(&Diagonal, SamplerKind::Sgld, &s, &Progress::hidden()).unwrap();
    assert!(!check(&draws, &Diagonal.known_posterior().unwrap()).passed());
}

#[test]
fn same_seed_same_draws_and_chains_differ() {
    let s = RunSettings {
        chains: 2,
        warmup: 50,
        draws: 20,
        ..settings()
    };
    let a = run(&Diagonal, SamplerKind::Qnhmc, &s, &Progress::hidden()).unwrap();
    let b = run(&Diagonal, SamplerKind::Qnhmc, &s, &Progress::hidden()).unwrap();
    for (x, y) in a.chains.iter().zip(&b.chains) {
        assert_eq!(
            (&x.values, &x.lp, &x.step_size),
            (&y.values, &y.lp, &y.step_size)
        );
    }
    assert_ne!(a.chains[0].values, a.chains[1].values);
}

#[test]
fn bad_settings_and_dimensions_are_errors() {
    let s = RunSettings {
        memory: Some(7),
        ..settings()
    };
    let e = run(&Diagonal, SamplerKind::Hamcmc, &s, &Progress::hidden()).unwrap_err();
    assert!(
        e.to_string().contains("--memory for hamcmc must be one of"),
        "{e}"
    );
    struct Huge;
    impl Model for Huge {
        fn name(&self) -> String {
            "huge".into()
        }
        fn dimension(&self) -> usize {
            2000
        }
        fn potential_and_gradient(&self, _: &[f64], _: &mut [f64]) -> f64 {
            0.0
        }
    }
    // MH-BFGS is not among the samplers of any dimension.
    let e = run(&Huge, SamplerKind::MhBfgs, &settings(), &Progress::hidden()).unwrap_err();
    assert!(e.to_string().contains("dimension 2000"), "{e}");
}

/// N(0, 1) restricted to x₀ < 0.5 in 3 dimensions (U = +∞ beyond, as a Stan
/// model that rejects outside its support), starting at the origin.
struct HalfSpace {
    evaluations: std::sync::atomic::AtomicU64,
}

impl Model for HalfSpace {
    fn name(&self) -> String {
        "half-space".into()
    }
    fn dimension(&self) -> usize {
        3
    }
    fn potential_and_gradient(&self, x: &[f64], g: &mut [f64]) -> f64 {
        self.evaluations
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if x[0] >= 0.5 {
            g.fill(f64::NAN);
            return f64::INFINITY;
        }
        g.copy_from_slice(x);
        0.5 * x.iter().map(|v| v * v).sum::<f64>()
    }
}

/// A start uniform on (−2, 2) lands where U = +∞ with probability 3/8; it is
/// drawn again (Stan's rule), so no chain starts there, and those evaluations
/// count as the chain's gradients. With 8 chains, the chance that no first
/// draw lands outside is (5/8)⁸ ≈ 2 %; seed 3 has several, checked below.
#[test]
fn chains_start_where_the_density_is_finite() {
    let model = HalfSpace {
        evaluations: std::sync::atomic::AtomicU64::new(0),
    };
    let settings = RunSettings {
        chains: 8,
        warmup: 100,
        draws: 50,
        seed: 3,
        ..RunSettings::default()
    };
    let draws = run(&model, SamplerKind::Nuts, &settings, &Progress::hidden()).unwrap();
    let mut retried = 0;
    for chain in &draws.chains {
        // The chain's first draw moved from a finite start: not every
        // transition divergent, and every kept x₀ inside the support.
        assert!(
            chain.divergent.iter().any(|d| !d),
            "chain {}",
            chain.chain_id
        );
        assert!(chain.values.chunks(3).all(|x| x[0] < 0.5));
        // Replay the start draws: the first finite one is where it began.
        let mut rng = ModelRng::seed_from_u64(chain_seed(settings.seed, chain.chain_id - 1));
        let mut tries = 0;
        loop {
            tries += 1;
            let x: Vec<f64> = (0..3)
                .map(|_| {
                    let u: f64 = qnmc::Real::uniform_open_closed(&mut rng);
                    2.0 * (2.0 * u - 1.0)
                })
                .collect();
            if x[0] < 0.5 {
                break;
            }
        }
        retried += usize::from(tries > 1);
    }
    assert!(
        retried >= 2,
        "seed 3 should make some chains draw again ({retried})"
    );
    let counted: u64 = draws.chains.iter().map(|c| c.gradient_evaluations).sum();
    let calls = model.evaluations.load(std::sync::atomic::Ordering::Relaxed);
    // Every call of U is a counted gradient, start draws included (the
    // sampler's own first evaluation at the start is counted by the core).
    assert!(
        counted <= calls && calls - counted <= settings.chains as u64,
        "{counted} vs {calls}"
    );
}

/// NUTS moves the model's own coordinates only, whatever the compiled size
/// it runs in: the chains of [`Diagonal`] (dimension 9) in sizes 10 (where
/// the runner puts it) and 64 are equal bit for bit, with every metric but
/// the dense one (which the runner offers up to dimension 100 and runs the
/// same way).
#[test]
fn nuts_draws_do_not_depend_on_the_compiled_size() {
    for metric in [
        MetricKind::Lbfgs,
        MetricKind::Diagonal,
        MetricKind::Identity,
    ] {
        let s = RunSettings {
            chains: 1,
            warmup: 150,
            draws: 100,
            metric: Some(metric),
            ..settings()
        };
        let progress = Progress::hidden();
        let job = chain::ChainJob {
            model: &Diagonal,
            kind: SamplerKind::Nuts,
            settings: &s,
            progress: &progress,
            sink: None,
        };
        let (small, large) = if metric == MetricKind::Lbfgs {
            (
                chain::start_nuts_lbfgs_chain::<10, 20>(&job, 0)
                    .and_then(|c| c.finish(&job))
                    .unwrap(),
                chain::start_nuts_lbfgs_chain::<64, 20>(&job, 0)
                    .and_then(|c| c.finish(&job))
                    .unwrap(),
            )
        } else {
            (
                chain::run_nuts_chain::<10>(&job, 0).unwrap(),
                chain::run_nuts_chain::<64>(&job, 0).unwrap(),
            )
        };
        assert_eq!(small.values.len(), 100 * N, "{metric:?}");
        assert!(small.values.iter().any(|&v| v != small.values[0]));
        assert_eq!(small.values, large.values, "{metric:?}");
        assert_eq!(small.lp, large.lp, "{metric:?}");
        assert_eq!(small.n_leapfrog, large.n_leapfrog, "{metric:?}");
        assert_eq!(small.gradient_evaluations, large.gradient_evaluations);
    }
}

/// N(0, I) in `n` dimensions: a model beyond the other samplers' 1000.
struct Wide(usize);

impl Model for Wide {
    fn name(&self) -> String {
        "wide".into()
    }
    fn dimension(&self) -> usize {
        self.0
    }
    fn potential_and_gradient(&self, x: &[f64], g: &mut [f64]) -> f64 {
        g.copy_from_slice(x);
        0.5 * x.iter().map(|v| v * v).sum::<f64>()
    }
}

/// NUTS runs models up to 16 384 coordinates (here 5000, in the 8192 size)
/// and samples them (the mean of x² over coordinates and draws is 1 within
/// 5 of its standard errors, ≈ √(2 / (5000·draws)) with correlated draws
/// counted as a tenth); the other samplers stop at 1000 and say where NUTS
/// stops.
#[test]
fn nuts_runs_five_thousand_dimensions() {
    let s = RunSettings {
        chains: 1,
        warmup: 100,
        draws: 20,
        ..settings()
    };
    let draws = run(&Wide(5000), SamplerKind::Nuts, &s, &Progress::hidden()).unwrap();
    let values = &draws.chains[0].values;
    assert_eq!(values.len(), 20 * 5000);
    let second_moment = values.iter().map(|v| v * v).sum::<f64>() / values.len() as f64;
    let se = (2.0 / (values.len() as f64 / 10.0)).sqrt();
    assert!((second_moment - 1.0).abs() < 5.0 * se, "{second_moment}");
    assert!(
        draws
            .settings
            .iter()
            .any(|(k, v)| k == "storage" && v.contains("8192")),
        "{:?}",
        draws.settings
    );
    let e = run(&Wide(2000), SamplerKind::MhBfgs, &s, &Progress::hidden()).unwrap_err();
    assert!(e.to_string().contains("16384"), "{e}");
    let e = run(&Wide(16385), SamplerKind::Nuts, &s, &Progress::hidden()).unwrap_err();
    assert!(e.to_string().contains("16384"), "{e}");
}

/// The settings line says where the window's covariance metric applies: a
/// model of dimension n ≤ the L-BFGS storage, which is 32 in the 25 and 32
/// buckets (21–32 coordinates; `nuts_lbfgs_storage`) and the memory (20)
/// elsewhere; in the 25 bucket only where the start found no optimum. The
/// 25-D and 28-D chains run in that storage and sample N(0, I) (mean of x²
/// within 5 standard errors of 1, correlated draws counted as a fifth).
#[test]
fn the_window_covariance_applies_up_to_the_storage() {
    let s = RunSettings {
        chains: 1,
        warmup: 200,
        draws: 200,
        ..settings()
    };
    let says = |n: usize, s: &RunSettings| {
        let draws = run(&Wide(n), SamplerKind::Nuts, s, &Progress::hidden()).unwrap();
        let metric = draws
            .settings
            .iter()
            .find(|(k, _)| k == "metric")
            .map(|(_, v)| v.clone())
            .unwrap();
        (metric.contains("window's covariance"), draws, metric)
    };
    let samples_the_standard_normal = |draws: &crate::draws::RunDraws| {
        let values = &draws.chains[0].values;
        let second_moment = values.iter().map(|v| v * v).sum::<f64>() / values.len() as f64;
        let se = (2.0 / (values.len() as f64 / 5.0)).sqrt();
        assert!((second_moment - 1.0).abs() < 5.0 * se, "{second_moment}");
    };
    assert!(says(20, &s).0);
    // 21–25 coordinates: the 32 bucket's storage, the covariance only where
    // the start found no optimum, no secants (NUTS_NO_OPTIMUM_COVARIANCE_BUCKET).
    let (applies, draws, metric) = says(25, &s);
    assert!(
        applies && metric.contains("where the start found no optimum"),
        "{metric}"
    );
    assert!(!metric.contains("secants"), "{metric}");
    samples_the_standard_normal(&draws);
    let (applies, draws, metric) = says(28, &s);
    assert!(applies && metric.contains("near linear"), "{metric}");
    samples_the_standard_normal(&draws);
    assert!(!says(33, &s).0);
    let off = RunSettings {
        window_covariance: false,
        ..s
    };
    assert!(!says(28, &off).0);
}

/// energy__ is CmdStan's: the Hamiltonian H = U + K of the kept draw, with
/// U = −lp__ and, for the identity metric, K = ½|p|². So energy__ − (−lp__)
/// is K ≥ 0, and as the kept phase point is distributed ∝ exp(−H) (NUTS's
/// multinomial choice and HMC's Metropolis test both keep that law), K is
/// χ²₉/2 here: mean 9/2 and sd √(9/2). The mean and sd of the 4 × 1000 kept
/// values must lie within 4 Monte Carlo standard errors (the runner's MCSE
/// estimates, autocorrelation included) of those; a chance failure has
/// probability about 10⁻⁴ per check, and the seed is fixed. An energy taken
/// at the wrong point (the trajectory's start, or U alone) moves the mean
/// or the sd by far more. The NUTS file's header has CmdStan's NUTS columns
/// in CmdStan's order.
#[test]
fn energy_is_the_kept_draws_hamiltonian() {
    use crate::diagnostics::{mcse_mean, mcse_sd};
    for kind in [SamplerKind::Nuts, SamplerKind::Hmc] {
        // HMC's metric is the identity; NUTS is told to keep it.
        let settings = RunSettings {
            metric: (kind == SamplerKind::Nuts).then_some(MetricKind::Identity),
            ..settings()
        };
        let run = run(&Diagonal, kind, &settings, &Progress::hidden()).unwrap();
        let kinetic: Vec<Vec<f64>> = run
            .chains
            .iter()
            .map(|c| {
                assert_eq!(c.energy.len(), c.len(), "{kind}");
                c.energy.iter().zip(&c.lp).map(|(h, lp)| h + lp).collect()
            })
            .collect();
        for k in kinetic.iter().flatten() {
            // ≥ 0 up to the rounding of H = U + K.
            assert!(*k >= -1e-9, "{kind}: energy__ − (−lp__) = {k}");
        }
        let slices: Vec<&[f64]> = kinetic.iter().map(Vec::as_slice).collect();
        let all: Vec<f64> = kinetic.concat();
        let count = all.len() as f64;
        let mean = all.iter().sum::<f64>() / count;
        let sd = (all.iter().map(|k| (k - mean).powi(2)).sum::<f64>() / (count - 1.0)).sqrt();
        let (want_mean, want_sd) = (N as f64 / 2.0, (N as f64 / 2.0).sqrt());
        let (se_mean, se_sd) = (mcse_mean(&slices), mcse_sd(&slices));
        eprintln!(
            "{kind}: K mean {mean:.4} (want {want_mean}, MCSE {se_mean:.4}), sd {sd:.4} (want {want_sd:.4}, MCSE {se_sd:.4})"
        );
        assert!(
            (mean - want_mean).abs() < 4.0 * se_mean,
            "{kind}: mean kinetic energy {mean}, want {want_mean} ± 4 × {se_mean}"
        );
        assert!(
            (sd - want_sd).abs() < 4.0 * se_sd,
            "{kind}: sd of the kinetic energy {sd}, want {want_sd} ± 4 × {se_sd}"
        );
        let text = crate::output::cmdstan_csv(&run, 0);
        let header = text.lines().find(|l| !l.starts_with('#')).unwrap();
        let want = match kind {
            SamplerKind::Nuts => {
                "lp__,accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,energy__,"
            }
            _ => "lp__,accept_stat__,stepsize__,n_leapfrog__,divergent__,energy__,",
        };
        assert!(header.starts_with(want), "{kind}: {header}");
    }
}

/// The progress bar's counts after a run: no chain left in warm-up, and its
/// divergences are those of the kept draws (HMC with a long step on the
/// half-space model hits the wall at x₀ = 0.5 often).
#[test]
fn progress_counts_the_phase_and_the_kept_divergences() {
    let model = HalfSpace {
        evaluations: std::sync::atomic::AtomicU64::new(0),
    };
    let settings = RunSettings {
        chains: 3,
        warmup: 100,
        draws: 300,
        seed: 5,
        step_size: Some(0.8),
        ..RunSettings::default()
    };
    let progress = Progress::hidden();
    let draws = run(&model, SamplerKind::Hmc, &settings, &progress).unwrap();
    let kept_divergent: u64 = draws
        .chains
        .iter()
        .map(|c| c.divergent.iter().filter(|d| **d).count() as u64)
        .sum();
    assert!(kept_divergent > 0, "the test needs divergent kept draws");
    assert_eq!(progress.divergent(), kept_divergent);
    assert_eq!(progress.chains_warming_up(), 0);
    assert_eq!(
        progress.message(),
        format!(": sampling, {kept_divergent} divergent")
    );
}

/// `--save-warmup` keeps the warm-up's draws beside the kept ones and
/// changes nothing else: the kept draws are those of the same run without
/// it, bit for bit, for NUTS (its own warm-up, which may end early or run
/// one terminal buffer more) and for HMC (the runner's step-size warm-up),
/// with and without thinning. The saved rows are CmdStan's: iterations 0,
/// thin, 2·thin, … of the warm-up the chain ran; with thin 1 their
/// `n_leapfrog__` and the kept draws' add up to the chain's gradient count
/// but for the start (the initial point's search and NUTS's L-BFGS start,
/// made before the first draw).
#[test]
fn saving_the_warmup_keeps_its_draws_and_changes_nothing_else() {
    for (kind, thin) in [
        (SamplerKind::Nuts, 1),
        (SamplerKind::Nuts, 3),
        (SamplerKind::Hmc, 1),
        (SamplerKind::Hmc, 4),
    ] {
        let base = RunSettings {
            warmup: 150,
            draws: 200,
            thin,
            ..settings()
        };
        let plain = run(&Diagonal, kind, &base, &Progress::hidden()).unwrap();
        let saving = RunSettings {
            save_warmup: true,
            ..base.clone()
        };
        let saved = run(&Diagonal, kind, &saving, &Progress::hidden()).unwrap();
        for (a, b) in plain.chains.iter().zip(&saved.chains) {
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&a.values), bits(&b.values), "{kind} thin {thin}");
            assert_eq!(bits(&a.lp), bits(&b.lp), "{kind} thin {thin}");
            assert_eq!(a.gradient_evaluations, b.gradient_evaluations);
            assert!(a.saved_warmup.is_empty());
            let w = &b.saved_warmup;
            let rows = (b.warmup_draws as usize).div_ceil(thin);
            assert!(rows > 0, "{kind}: no warm-up ran");
            assert_eq!(w.len(), rows, "{kind} thin {thin}");
            assert_eq!(w.values.len(), rows * N);
            assert_eq!(w.accept_stat.len(), rows);
            assert_eq!(w.step_size.len(), rows);
            assert_eq!(w.n_leapfrog.len(), rows);
            assert_eq!(w.divergent.len(), rows);
            assert_eq!(w.energy.len(), rows);
            assert_eq!(
                w.tree_depth.len(),
                if kind == SamplerKind::Nuts { rows } else { 0 }
            );
            assert!(w.lp.iter().all(|v| v.is_finite()));
            // The step size moves while it adapts.
            assert!(w.step_size.iter().any(|&e| e != w.step_size[0]), "{kind}");
            if thin == 1 {
                let warmup: u64 = w.n_leapfrog.iter().map(|&n| u64::from(n)).sum();
                let kept: u64 = b.n_leapfrog.iter().map(|&n| u64::from(n)).sum();
                let start = b.gradient_evaluations - (warmup + kept);
                if kind == SamplerKind::Nuts {
                    assert!((1..1000).contains(&start), "{kind}: start {start}");
                } else {
                    assert!(start < 100, "{kind}: start {start}");
                }
            }
        }
    }
}
