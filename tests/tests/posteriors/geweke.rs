//! Geweke's joint-distribution test ("Getting it right", Geweke 2004) for the
//! core HMC, with a negative control.
//!
//! Model: θ ~ N(0, 1), yᵢ | θ ~ N(θ, 1), i = 1..3. The posterior sampler under
//! test is one core [`qnmc::Hmc`] transition on U(θ) = ½θ² + ½Σ(yᵢ − θ)².
//!
//! - Marginal-conditional simulator: θ ~ p(θ), y ~ p(y | θ), independently,
//!   M = 20 000 times.
//! - Successive-conditional simulator: from one such draw, alternate
//!   θ ← HMC transition targeting p(θ | y) and y ~ p(y | θ), M = 20 000 times.
//!
//! If the transition leaves p(θ | y) invariant both simulators sample the same
//! joint distribution p(θ, y), so the means of test functions g(θ, y) agree.
//! Test functions: θ, θ², y₁, θ·y₁, ȳ², θ³. z = (ḡ_MC − ḡ_SC)/√(MCSE_MC² +
//! MCSE_SC²), MCSE_MC = sd/√M (independent draws), MCSE_SC from the ESS of the
//! successive chain (bulk ESS for θ, y₁, basic split ESS for the others). A
//! correct sampler gives |z| below the Bonferroni limit (α = 0.5 %, spread
//! 1.15) for every g, on each of three seeds.
//!
//! Negative control: the same HMC with a mis-scaled kinetic energy in the
//! Metropolis test (momentum drawn from N(0, 1) but K = p²/4 instead of p²/2)
//! is not π-invariant; it must fail on every seed.
//!
//! The same test for the core [`qnmc::Nuts`] (one transition, identity and
//! diagonal metric, the latter with a maximum depth of 2 so that most trees
//! saturate), with the same thresholds; its negative control is NUTS with a
//! metric whose momentum is drawn 1.5 times too wide for its kinetic energy.

// Numeric checks index several parallel arrays at once; index loops say that best.
#![allow(clippy::needless_range_loop)]

use qnmc::metric::{DiagonalMetric, IdentityMetric, Metric};
use qnmc::random::standard_normal;
use qnmc::{Hmc, HmcSettings, Nuts, NutsSettings, Potential, Real};
use qnmc_tests::amagold::checks::{Ess, Z, bonferroni_limit, estimate};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

const OBS: usize = 3;
const M: usize = 20_000;

struct Posterior {
    y: [f64; OBS],
}

impl Potential<f64, 1> for Posterior {
    fn potential_and_gradient(&self, x: &[f64; 1], g: &mut [f64; 1]) -> f64 {
        let t = x[0];
        let mut u = 0.5 * t * t;
        g[0] = t;
        for y in self.y {
            u += 0.5 * (y - t) * (y - t);
            g[0] += t - y;
        }
        u
    }
}

fn draw_y(theta: f64, rng: &mut XorShiftRng) -> [f64; OBS] {
    std::array::from_fn(|_| theta + standard_normal::<f64, _>(rng))
}

/// Test functions g(θ, y) and which ESS their MCSE uses.
fn test_functions(theta: f64, y: &[f64; OBS]) -> [f64; 6] {
    let ybar = y.iter().sum::<f64>() / OBS as f64;
    [
        theta,
        theta * theta,
        y[0],
        theta * y[0],
        ybar * ybar,
        theta * theta * theta,
    ]
}
const NAMES: [&str; 6] = ["θ", "θ²", "y₁", "θ·y₁", "ȳ²", "θ³"];
const ESS_KIND: [Ess; 6] = [
    Ess::Bulk,
    Ess::BasicSplit,
    Ess::Bulk,
    Ess::BasicSplit,
    Ess::BasicSplit,
    Ess::BasicSplit,
];

/// A posterior transition: the core HMC, or the mis-scaled one.
type Transition = fn(f64, &Posterior, &mut XorShiftRng) -> f64;

/// εωL ≈ 1.6 rad with ω = 2 (posterior precision 1 + 3 = 4): a quarter
/// period, where U and K trade the most energy. (ε = 0.4 gave a half period,
/// a near-reflection that every kinetic energy accepts: the negative control
/// then passed.)
const EPS: f64 = 0.2;
const L: u32 = 4;

fn core_hmc(theta: f64, post: &Posterior, rng: &mut XorShiftRng) -> f64 {
    let mut h = Hmc::new(HmcSettings::new(EPS, L), [theta], post).unwrap();
    h.step(post, rng);
    h.position()[0]
}

/// K = p²/4 instead of p²/2.
const WRONG_KINETIC_DENOMINATOR: f64 = 4.0;

/// Textbook leapfrog HMC whose Metropolis test uses K = p²/4 although p is
/// drawn from N(0, 1): deliberately wrong.
fn mis_scaled_hmc(theta: f64, post: &Posterior, rng: &mut XorShiftRng) -> f64 {
    let grad = |t: f64| {
        let mut g = [0.0];
        let u = post.potential_and_gradient(&[t], &mut g);
        (u, g[0])
    };
    let p0: f64 = standard_normal(rng);
    let (u0, mut g) = grad(theta);
    let (mut q, mut p) = (theta, p0);
    p -= 0.5 * EPS * g;
    let mut u1 = u0;
    for l in 0..L {
        q += EPS * p;
        (u1, g) = grad(q);
        p -= if l + 1 == L { 0.5 * EPS } else { EPS } * g;
    }
    let h0 = u0 + p0 * p0 / WRONG_KINETIC_DENOMINATOR;
    let h1 = u1 + p * p / WRONG_KINETIC_DENOMINATOR;
    let u = f64::uniform_open_closed(rng);
    if u <= (h0 - h1).exp().min(1.0) {
        q
    } else {
        theta
    }
}

fn geweke(transition: Transition, seed: u64) -> Vec<Z> {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    // Marginal-conditional.
    let mut mc: Vec<Vec<f64>> = (0..6).map(|_| Vec::with_capacity(M)).collect();
    for _ in 0..M {
        let theta: f64 = standard_normal(&mut rng);
        let y = draw_y(theta, &mut rng);
        for (k, g) in test_functions(theta, &y).into_iter().enumerate() {
            mc[k].push(g);
        }
    }
    // Successive-conditional.
    let mut sc: Vec<Vec<f64>> = (0..6).map(|_| Vec::with_capacity(M)).collect();
    let mut theta: f64 = standard_normal(&mut rng);
    let mut y = draw_y(theta, &mut rng);
    for _ in 0..M {
        theta = transition(theta, &Posterior { y }, &mut rng);
        y = draw_y(theta, &mut rng);
        for (k, g) in test_functions(theta, &y).into_iter().enumerate() {
            sc[k].push(g);
        }
    }
    (0..6)
        .map(|k| {
            let m = &mc[k];
            let mean_mc = m.iter().sum::<f64>() / M as f64;
            let var_mc = m.iter().map(|v| (v - mean_mc).powi(2)).sum::<f64>() / (M - 1) as f64;
            let se_mc = (var_mc / M as f64).sqrt();
            let (mean_sc, se_sc) = estimate(std::slice::from_ref(&sc[k]), ESS_KIND[k]);
            let mcse = (se_mc * se_mc + se_sc * se_sc).sqrt();
            Z {
                label: NAMES[k].to_string(),
                estimate: mean_sc,
                truth: mean_mc,
                mcse,
                z: (mean_sc - mean_mc) / mcse,
            }
        })
        .collect()
}

#[test]
fn core_hmc_passes_geweke() {
    let limit = bonferroni_limit(6, 0.005);
    for seed in [1u64, 2, 3] {
        let zs = geweke(core_hmc, seed);
        let line: Vec<String> = zs
            .iter()
            .map(|z| format!("{} {:+.2}", z.label, z.z))
            .collect();
        println!("core HMC seed {seed}: {}", line.join(", "));
        for z in &zs {
            assert!(z.z.abs() <= limit, "{z:?} beyond ±{limit:.2}");
        }
    }
}

#[test]
fn mis_scaled_kinetic_energy_fails_geweke() {
    let limit = bonferroni_limit(6, 0.005);
    for seed in [1u64, 2, 3] {
        let zs = geweke(mis_scaled_hmc, seed);
        let worst = zs.iter().map(|z| z.z.abs()).fold(0.0, f64::max);
        let line: Vec<String> = zs
            .iter()
            .map(|z| format!("{} {:+.2}", z.label, z.z))
            .collect();
        println!("mis-scaled HMC seed {seed}: {}", line.join(", "));
        assert!(
            worst > limit,
            "the wrong sampler passed: max |z| {worst:.2}"
        );
    }
}

// ---------------------------------------------------------------------------
// NUTS

/// ε for the identity metric: a fifth of the posterior sd 1/2; a U-turn takes
/// about half a period π/ω = π/2 (ω = 2), ≈ 16 leapfrog steps, trees of
/// depth ≈ 4.
const NUTS_EPS: f64 = 0.1;

fn core_nuts_identity(theta: f64, post: &Posterior, rng: &mut XorShiftRng) -> f64 {
    let settings = NutsSettings::new(NUTS_EPS);
    let mut nuts = Nuts::<f64, 1, _>::new(settings, IdentityMetric, [theta], post).unwrap();
    nuts.step(post, rng);
    nuts.position()[0]
}

/// Diagonal metric M⁻¹ = 0.3 (close to the posterior variance 1/4), a large
/// ε = 0.9 and a maximum depth of 2: most trees stop at depth 2 without a
/// U-turn, and the energy errors are far from 0.
fn core_nuts_diagonal_shallow(theta: f64, post: &Posterior, rng: &mut XorShiftRng) -> f64 {
    let mut settings = NutsSettings::new(0.9);
    settings.max_tree_depth = 2;
    let metric = DiagonalMetric::new(&[0.3]).unwrap();
    let mut nuts = Nuts::<f64, 1, _>::new(settings, metric, [theta], post).unwrap();
    nuts.step(post, rng);
    nuts.position()[0]
}

/// The identity metric with momenta drawn 1.5 times too wide for K = ½p²:
/// deliberately wrong (the trajectories run at too high an energy).
#[derive(Debug, Clone, Copy)]
struct TooWideMomentum;

impl Metric<f64, 1> for TooWideMomentum {
    fn momentum_from_normals(&self, z: &[f64; 1], p: &mut [f64; 1]) {
        p[0] = 1.5 * z[0];
    }
    fn velocity(&self, p: &[f64; 1], v: &mut [f64; 1]) {
        v[0] = p[0];
    }
}

fn too_wide_nuts(theta: f64, post: &Posterior, rng: &mut XorShiftRng) -> f64 {
    let settings = NutsSettings::new(NUTS_EPS);
    let mut nuts = Nuts::<f64, 1, _>::new(settings, TooWideMomentum, [theta], post).unwrap();
    nuts.step(post, rng);
    nuts.position()[0]
}

#[test]
fn core_nuts_passes_geweke() {
    let limit = bonferroni_limit(6, 0.005);
    for (name, transition) in [
        ("identity", core_nuts_identity as Transition),
        ("diagonal, max depth 2", core_nuts_diagonal_shallow),
    ] {
        for seed in [11u64, 12, 13] {
            let zs = geweke(transition, seed);
            let line: Vec<String> = zs
                .iter()
                .map(|z| format!("{} {:+.2}", z.label, z.z))
                .collect();
            println!("core NUTS {name} seed {seed}: {}", line.join(", "));
            for z in &zs {
                assert!(z.z.abs() <= limit, "NUTS {name}: {z:?} beyond ±{limit:.2}");
            }
        }
    }
}

#[test]
fn too_wide_momentum_nuts_fails_geweke() {
    let limit = bonferroni_limit(6, 0.005);
    for seed in [11u64, 12, 13] {
        let zs = geweke(too_wide_nuts, seed);
        let worst = zs.iter().map(|z| z.z.abs()).fold(0.0, f64::max);
        let line: Vec<String> = zs
            .iter()
            .map(|z| format!("{} {:+.2}", z.label, z.z))
            .collect();
        println!("too-wide NUTS seed {seed}: {}", line.join(", "));
        assert!(
            worst > limit,
            "the wrong sampler passed: max |z| {worst:.2}"
        );
    }
}
