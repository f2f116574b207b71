//! How far is qnmc's learned metric from the posterior covariance? A
//! diagnostic for docs/NUTS.md ("The window's covariance metric"):
//!
//! ```sh
//! cargo run --release --manifest-path compare/Cargo.toml --example metric_probe -- \
//!     compare/target/posteriordb-models/mesquite_model.so \
//!     compare/posteriordb/posterior_database/data/data/mesquite.json.zip 1 [dense]
//! ```
//!
//! Runs 4 chains of qnmc's NUTS with the quasi-Newton metric (or, with
//! `dense`, Stan's dense estimator) on the model, 500 warm-up and 1000 kept
//! draws, and prints per chain: the warm-up's draws and gradients, the
//! final step size, gradients per kept draw, the metric's rank and
//! eigenvalues, and κ = cond(H⁻¹Σ) against the covariance Σ of all kept
//! draws; then what NUTS with the dense geometric-mean metric of each
//! chain's first 50/100/200 kept draws (`geomean`) would cost per draw.
//! `VERBOSE=1` prints the warm-up every 25 draws; `WINCOV=1` turns on the
//! window's covariance candidate (`--window-covariance`). Dimensions 3–13
//! and 26.
// Small dense linear algebra written index by index, as in the formulas.
#![allow(clippy::needless_range_loop, clippy::type_complexity, clippy::borrowed_box)]
use qnmc::adaptation::{
    AcceptanceStatistic, AdaptiveNuts, DEFAULT_RANK_TOLERANCE, LbfgsEstimator,
    LbfgsEstimatorSettings, WarmupSchedule, DenseEstimator,
};
use qnmc::metric::Metric;
use qnmc::{NutsSettings, Potential};
use qnmc_host::model::Model;
use qnmc_stan::StanModel;
use rand_core::SeedableRng;

struct W<'a>(&'a StanModel);
impl<const D: usize> Potential<f64, D> for W<'_> {
    fn potential_and_gradient(&self, x: &[f64; D], g: &mut [f64; D]) -> f64 {
        self.0.potential_and_gradient(x, g)
    }
}

/// Eigenvalues of the symmetric `a`, ascending.
fn jacobi(a: &mut [Vec<f64>]) -> Vec<f64> {
    let (mut e, _) = eigh(a);
    e.sort_by(|x, y| x.total_cmp(y));
    e
}

/// Symmetric eigen: (values, vectors as columns v[i][k]).
fn eigh(a0: &[Vec<f64>]) -> (Vec<f64>, Vec<Vec<f64>>) {
    let n = a0.len();
    let mut a = a0.to_vec();
    let mut v = vec![vec![0.0; n]; n];
    for i in 0..n { v[i][i] = 1.0; }
    for _ in 0..100 {
        let mut off = 0.0;
        for p in 0..n { for q in p + 1..n { off += a[p][q] * a[p][q]; } }
        if off < 1e-300 { break; }
        for p in 0..n {
            for q in p + 1..n {
                if a[p][q] == 0.0 { continue; }
                let th = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                let t = if th == 0.0 { 1.0 } else { th.signum() / (th.abs() + (th * th + 1.0).sqrt()) };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let (akp, akq) = (a[k][p], a[k][q]);
                    a[k][p] = c * akp - s * akq;
                    a[k][q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let (apk, aqk) = (a[p][k], a[q][k]);
                    a[p][k] = c * apk - s * aqk;
                    a[q][k] = s * apk + c * aqk;
                }
                for k in 0..n {
                    let (vkp, vkq) = (v[k][p], v[k][q]);
                    v[k][p] = c * vkp - s * vkq;
                    v[k][q] = s * vkp + c * vkq;
                }
            }
        }
    }
    ((0..n).map(|i| a[i][i]).collect(), v)
}

fn mat_fn(a: &[Vec<f64>], f: impl Fn(f64) -> f64) -> Vec<Vec<f64>> {
    let (e, v) = eigh(a);
    let n = a.len();
    let mut out = vec![vec![0.0; n]; n];
    for i in 0..n { for j in 0..n { for k in 0..n { out[i][j] += v[i][k] * f(e[k]) * v[j][k]; } } }
    out
}
fn mul(a: &[Vec<f64>], b: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = a.len();
    let mut out = vec![vec![0.0; n]; n];
    for i in 0..n { for j in 0..n { for k in 0..n { out[i][j] += a[i][k] * b[k][j]; } } }
    out
}
fn cov(xs: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = xs[0].len();
    let m = xs.len() as f64;
    let mean: Vec<f64> = (0..n).map(|i| xs.iter().map(|x| x[i]).sum::<f64>() / m).collect();
    let mut c = vec![vec![0.0; n]; n];
    for x in xs { for i in 0..n { for j in 0..n { c[i][j] += (x[i] - mean[i]) * (x[j] - mean[j]) / (m - 1.0); } } }
    c
}
/// Geometric mean of C and G⁻¹ (the Fisher-optimal Gaussian metric), in
/// coordinates scaled by the diagonal √(var θ / var g).
fn geomean(xs: &[Vec<f64>], gs: &[Vec<f64>], gamma: f64) -> Vec<Vec<f64>> {
    let n = xs[0].len();
    let c = cov(xs);
    let g = cov(gs);
    let b: Vec<f64> = (0..n).map(|i| (c[i][i] / g[i][i]).sqrt()).collect();
    let mut cs = vec![vec![0.0; n]; n];
    let mut gsc = vec![vec![0.0; n]; n];
    for i in 0..n { for j in 0..n {
        cs[i][j] = c[i][j] / (b[i] * b[j]).sqrt() + if i == j { gamma } else { 0.0 };
        gsc[i][j] = g[i][j] * (b[i] * b[j]).sqrt() + if i == j { gamma } else { 0.0 };
    } }
    let gh = mat_fn(&gsc, |x| x.sqrt());
    let gih = mat_fn(&gsc, |x| 1.0 / x.sqrt());
    let mid = mat_fn(&mul(&mul(&gh, &cs), &gh), |x| x.sqrt());
    let a = mul(&mul(&gih, &mid), &gih);
    let mut out = vec![vec![0.0; n]; n];
    for i in 0..n { for j in 0..n { out[i][j] = a[i][j] * (b[i] * b[j]).sqrt(); } }
    out
}

fn chol(a: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let mut s = a[i][j];
            for k in 0..j {
                s -= l[i][k] * l[j][k];
            }
            l[i][j] = if i == j { s.sqrt() } else { s / l[j][j] };
        }
    }
    l
}

/// eigenvalues of H⁻¹ Σ = L⁻¹ Σ L⁻ᵀ with H = L Lᵀ.
fn relative_eigs(h: &[Vec<f64>], sigma: &[Vec<f64>]) -> Vec<f64> {
    let n = h.len();
    let l = chol(h);
    // X = L⁻¹ Σ
    let solve = |b: &Vec<f64>| {
        let mut x = vec![0.0; n];
        for i in 0..n {
            let mut s = b[i];
            for k in 0..i {
                s -= l[i][k] * x[k];
            }
            x[i] = s / l[i][i];
        }
        x
    };
    let cols: Vec<Vec<f64>> = (0..n).map(|j| solve(&(0..n).map(|i| sigma[i][j]).collect())).collect();
    // cols[j] = L⁻¹ Σ e_j ; now A = (L⁻¹ Σ) L⁻ᵀ: rows of L⁻¹Σ solved again
    let rows: Vec<Vec<f64>> = (0..n).map(|i| solve(&(0..n).map(|j| cols[j][i]).collect())).collect();
    let mut a = rows;
    for i in 0..n {
        for j in 0..i {
            let m = 0.5 * (a[i][j] + a[j][i]);
            a[i][j] = m;
            a[j][i] = m;
        }
    }
    jacobi(&mut a)
}

fn fixed_dense<const D: usize>(target: &W<'_>, a: &[Vec<f64>], start: &[f64], seed: u64) -> f64 {
    use qnmc::adaptation::{DualAveraging, DualAveragingSettings};
    let mut cov = [[0.0; D]; D];
    for i in 0..D { for j in 0..D { cov[i][j] = a[i][j]; } }
    let Ok(metric) = qnmc::metric::DenseMetric::new(&cov) else { return f64::NAN };
    let mut x0 = [0.0; D];
    x0.copy_from_slice(start);
    let mut nuts = qnmc::Nuts::<f64, D, _, 10>::new(NutsSettings::new(0.1), metric, x0, target).unwrap();
    let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(seed);
    let (eps, _) = nuts.find_reasonable_step_size(target, &mut rng);
    let mut dual = DualAveraging::new(DualAveragingSettings::stan(eps)).unwrap();
    for _ in 0..150 {
        let st = nuts.step(target, &mut rng);
        let e = dual.update(st.acceptance_statistic);
        nuts.set_step_size(e).unwrap();
    }
    nuts.set_step_size(dual.final_step_size()).unwrap();
    let mut grads = 0u64;
    for _ in 0..1000 {
        grads += nuts.step(target, &mut rng).gradient_evaluations as u64;
    }
    grads as f64 / 1000.0
}

fn run<const D: usize>(model: &StanModel, seed: u64, dense: bool) {
    let target = W(model);
    let mut all: Vec<[f64; D]> = Vec::new();
    let mut metrics: Vec<Vec<Vec<f64>>> = Vec::new();
    let mut initial: Vec<Vec<Vec<f64>>> = Vec::new();
    let mut fixed_inputs: Vec<(Vec<Vec<f64>>, Vec<Vec<f64>>)> = Vec::new();
    for chain in 0..4u64 {
        let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(seed * 1000 + chain);
        let mut start = [0.0; D];
        for v in start.iter_mut() {
            *v = rand_core::Rng::next_u64(&mut rng) as f64 / u64::MAX as f64 * 4.0 - 2.0;
        }
        let mut chain_x: Vec<Vec<f64>> = Vec::new();
        let mut chain_g: Vec<Vec<f64>> = Vec::new();
        let mut settings = NutsSettings::new(0.1);
        settings.max_tree_depth = 10;
        macro_rules! go {
            ($chain:expr, $label:expr, $extra:expr) => {{
                let mut c = $chain;
                {
                    let m = c.sampler().metric();
                    let mut h = vec![vec![0.0; D]; D];
                    for j in 0..D {
                        let mut e = [0.0; D];
                        e[j] = 1.0;
                        let mut v = [0.0; D];
                        m.velocity(&e, &mut v);
                        for i in 0..D { h[i][j] = v[i]; }
                    }
                    initial.push(h);
                }
                c.set_target_acceptance(0.8).unwrap();
                c.set_acceptance_statistic(AcceptanceStatistic::Symmetric);
                c.set_early_end(2);
                c.set_jitter(0.1).unwrap();
                let mut grads_kept = 0u64;
                let mut divergent_kept = 0u64;
                let mut depth_sum = 0u64;
                let mut kept = 0;
                let verbose = std::env::var("VERBOSE").is_ok();
                let mut last_g = 0u64;
                let mut n_draw = 0u64;
                while kept < 1000 {
                    let warm = c.is_warming_up();
                    let st = c.step(&target, &mut rng);
                    n_draw += 1;
                    if verbose && warm && (n_draw % 25 == 0 || n_draw < 12) {
                        println!("   U {:.2} x {:?} acc {:.3} div {}", st.energy, c.position().iter().map(|v| format!("{v:.3}")).collect::<Vec<_>>(), st.acceptance_statistic, st.divergent);
                        let g = c.warmup_gradient_evaluations();
                        println!("   draw {n_draw} grads {g} (+{}) eps {:.4} depth {}", g - last_g, c.sampler().settings().step_size, st.tree_depth);
                        last_g = g;
                    }
                    if !warm {
                        kept += 1;
                        grads_kept += st.gradient_evaluations as u64;
                        divergent_kept += st.divergent as u64;
                        depth_sum += st.tree_depth as u64;
                        all.push(*c.position());
                        chain_x.push(c.position().to_vec());
                        chain_g.push(c.sampler().gradient().to_vec());
                    }
                }
                {
                    let nn = chain_x.len() as f64;
                    let means: Vec<String> = (0..D).map(|i| format!("{:.2}", chain_x.iter().map(|x| x[i]).sum::<f64>() / nn)).collect();
                    println!("chain {chain} kept mean {:?}", means);
                }
                let m = c.sampler().metric();
                let mut h = vec![vec![0.0; D]; D];
                for j in 0..D {
                    let mut e = [0.0; D];
                    e[j] = 1.0;
                    let mut v = [0.0; D];
                    m.velocity(&e, &mut v);
                    for i in 0..D {
                        h[i][j] = v[i];
                    }
                }
                metrics.push(h);
                fixed_inputs.push((chain_x.clone(), chain_g.clone()));
                println!(
                    "chain {chain} {}: warm-up {} draws, {} grads; eps {:.4}; kept grads/draw {:.1}, depth {:.2}, divergent {divergent_kept} {}",
                    $label,
                    c.warmup_draws(),
                    c.warmup_gradient_evaluations(),
                    c.final_step_size(),
                    grads_kept as f64 / 1000.0,
                    depth_sum as f64 / 1000.0,
                    $extra(&c)
                );
            }};
        }
        if dense {
            let c = AdaptiveNuts::<f64, D, DenseEstimator<f64, D>>::new_boxed(
                settings,
                WarmupSchedule::stan(500).unwrap(),
                (),
                &start,
                &target,
            )
            .unwrap();
            go!(c, "dense", |_c: &Box<AdaptiveNuts<f64, D, DenseEstimator<f64, D>>>| String::new());
        } else {
            let mut es = LbfgsEstimatorSettings::new(DEFAULT_RANK_TOLERANCE);
            es.max_pairs = 20;
            es.window_covariance = std::env::var("WINCOV").is_ok();
            let c = AdaptiveNuts::<f64, D, LbfgsEstimator<f64, D, 20>>::new_boxed(
                settings,
                WarmupSchedule::after_optimization(500).unwrap(),
                es,
                &start,
                &target,
            )
            .unwrap();
            go!(c, "lbfgs", |c: &Box<AdaptiveNuts<f64, D, LbfgsEstimator<f64, D, 20>>>| {
                let m = c.sampler().metric();
                format!(
                    "rank {} eig {:?} decisions {:?}",
                    m.rank(),
                    m.eigenvalues().iter().map(|e| (e * 100.0).round() / 100.0).collect::<Vec<_>>(),
                    c.estimator().window_decisions()
                )
            });
        }
    }
    // (per chain, appended below)
    for (k, (xs, gs)) in fixed_inputs.iter().enumerate() {
        for &w in &[50usize, 100, 200] {
            let a = geomean(&xs[..w], &gs[..w], 1e-5);
            let gpd = fixed_dense::<D>(&target, &a, &xs[w], 77 + k as u64);
            let e = relative_eigs(&a, &cov(&all.iter().map(|x| x.to_vec()).collect::<Vec<_>>()));
            println!("chain {k}: geomean of {w} draws: grads/draw {gpd:.1}, κ(A⁻¹Σ) {:.2}", e[D - 1] / e[0]);
        }
    }
    // Σ from all kept draws
    let n = all.len() as f64;
    let mut mean = [0.0; D];
    for x in &all {
        for i in 0..D {
            mean[i] += x[i] / n;
        }
    }
    let mut sigma = vec![vec![0.0; D]; D];
    for x in &all {
        for i in 0..D {
            for j in 0..D {
                sigma[i][j] += (x[i] - mean[i]) * (x[j] - mean[j]) / (n - 1.0);
            }
        }
    }
    let mut s2 = sigma.clone();
    let ev = jacobi(&mut s2);
    println!("posterior cov eigenvalues: {:?}", ev.iter().map(|e| format!("{e:.3e}")).collect::<Vec<_>>());
    let corr_cond = ev[D - 1] / ev[0];
    println!("cond(Σ) = {corr_cond:.3e}");
    println!("sd {:?}", (0..D).map(|i| format!("{:.3e}", sigma[i][i].sqrt())).collect::<Vec<_>>());
    for i in 0..D { println!("corr row {i}: {:?}", (0..D).map(|j| format!("{:+.2}", sigma[i][j]/(sigma[i][i]*sigma[j][j]).sqrt())).collect::<Vec<_>>()); }
    for (k, h) in initial.iter().enumerate() {
        let e = relative_eigs(h, &sigma);
        println!("chain {k} initial metric: eig(H⁻¹Σ) {:?} diag Σ/H {:?}", e.iter().map(|v| format!("{v:.3e}")).collect::<Vec<_>>(), (0..D).map(|i| format!("{:.2e}", sigma[i][i] / h[i][i])).collect::<Vec<_>>());
    }
    for (k, h) in metrics.iter().enumerate() {
        let e = relative_eigs(h, &sigma);
        let ratio: Vec<String> = (0..D).map(|i| format!("{:.2}", sigma[i][i] / h[i][i])).collect();
        println!("chain {k}: diag Σ/H {:?}", ratio);
        println!(
            "chain {k}: eig(H⁻¹Σ) {:?}  κ = {:.2}",
            e.iter().map(|v| format!("{v:.3}")).collect::<Vec<_>>(),
            e[D - 1] / e[0]
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let model = StanModel::load(args[1].as_ref(), Some(args[2].as_ref())).unwrap();
    let seed: u64 = args[3].parse().unwrap();
    let dense = args.get(4).is_some_and(|a| a == "dense");
    let d = model.dimension();
    println!("dimension {d}");
    match d {
        3 => run::<3>(&model, seed, dense),
        4 => run::<4>(&model, seed, dense),
        5 => run::<5>(&model, seed, dense),
        6 => run::<6>(&model, seed, dense),
        7 => run::<7>(&model, seed, dense),
        13 => run::<13>(&model, seed, dense),
        8 => run::<8>(&model, seed, dense),
        10 => run::<10>(&model, seed, dense),
        26 => run::<26>(&model, seed, dense),
        _ => panic!("dimension {d}"),
    }
}
