//! The recipe's toy check (Ma, Chen & Fox 2015, §4.1, Fig. 2 and S.5):
//! U(θ) = θ⁴ − 2θ² in 1-D, full gradient, with a state-dependent metric modelled
//! on the paper's Supp. F.1 choice G(θ)⁻¹ = D√|U + C|, D = 1.5, but with
//! C = 1.05 (not 0.5) so that U + C ≥ 0.05 and the metric is smooth
//! (`DoubleWellMetric`); G⁻¹ then varies from 0.34 at the modes to 1.54 at 0.
//!
//! Statistics against the exact density π ∝ exp(−U) (moments by Simpson's rule
//! on [−4, 4] with 20 000 intervals, checked by the identity E[θ⁴] − E[θ²] = ¼):
//! E[θ²], E[θ⁴] and P(|θ| < ½). For each, z = (chain mean − exact)/MCSE with
//! MCSE from the split ESS of the statistic's chain (`mcse_mean`).
//!
//! - gSGRHMC (eq. 30; ε = 0.005, 1 M draws) and SGRLD with Γ (eq. 20;
//!   ε = 0.0025, 400 k draws) must give |z| < 4 on every statistic and seed
//!   (2 seeds × 3 statistics: P(false alarm) ≈ 6 × 6.3e-5 per sampler when the
//!   discretisation bias is negligible). The step sizes are chosen so that it is:
//!   at ε = 0.01 with 400 k draws SGRLD's O(ε) bias was visible (z ≈ −10 with Γ);
//!   z scales like ε^{3/2}·√draws (bias ∝ ε, MCSE ∝ (ε·draws)^{−½}), so at
//!   ε = 0.0025 it is ≈ −1.2; gSGRHMC at ε = 0.01 was within |z| ≤ 2.1.
//! - The naive SGRHMC (eq. 27, no Γ) and SGRLD without Γ must be measurably
//!   wrong: max |z| > 8 on both seeds (twice the pass threshold; measured with
//!   1.6 M draws: 13–15 for SGRHMC, i.e. ≈ 11 expected with 1 M; 22–23 for SGRLD).
//!
//! - The naive SGRLD samples exp(−U)/G⁻¹ instead (the zero-flux density of its
//!   SDE): its statistics pass the same z-test against that density.
//!
//! Runtime ≈ 10 s of CPU in the test profile.

use qnmc::samplers::recipe::{Correction, Sgrhmc, SgrhmcSettings, Sgrld, SgrldSettings};
use qnmc_host::diagnostics::mcse_mean;
use qnmc_tests::recipe::{DoubleWell, DoubleWellMetric};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

const METRIC: DoubleWellMetric = DoubleWellMetric { offset: OFFSET };
const OFFSET: f64 = 1.05;
const BURN: usize = 5_000;

/// Exact E[θ²], E[θ⁴], P(|θ| < ½) under π ∝ exp(−θ⁴ + 2θ²) (Simpson).
fn exact() -> [f64; 3] {
    moments(|_| 1.0)
}

/// E[θ²], E[θ⁴], P(|θ| < ½) under the density ∝ exp(−U(θ))·weight(θ) (Simpson).
fn moments(weight: impl Fn(f64) -> f64) -> [f64; 3] {
    let (a, b, n) = (-4.0f64, 4.0f64, 20_000usize);
    let h = (b - a) / n as f64;
    let mut acc = [0.0f64; 4];
    for k in 0..=n {
        let x = a + h * k as f64;
        let w = if k == 0 || k == n {
            1.0
        } else if k % 2 == 1 {
            4.0
        } else {
            2.0
        };
        let d = (-DoubleWell::potential(x)).exp() * weight(x) * w;
        acc[0] += d;
        acc[1] += d * x * x;
        acc[2] += d * x * x * x * x;
        acc[3] += if x.abs() < 0.5 { d } else { 0.0 };
    }
    [acc[1] / acc[0], acc[2] / acc[0], acc[3] / acc[0]]
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Sgrhmc(Correction),
    Sgrld(Correction),
}

/// (ε, draws after burn-in) per sampler: see the module docs.
fn schedule(kind: Kind) -> (f64, usize) {
    match kind {
        Kind::Sgrhmc(_) => (0.005, 1_000_000),
        Kind::Sgrld(_) => (0.0025, 400_000),
    }
}

fn run(kind: Kind, seed: u64) -> Vec<f64> {
    let (eps, draws) = schedule(kind);
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(draws);
    match kind {
        Kind::Sgrhmc(c) => {
            let mut settings = SgrhmcSettings::new(eps);
            settings.correction = c;
            let mut s = Sgrhmc::<f64, 1, _>::new(settings, [0.3], &METRIC).unwrap();
            for t in 0..BURN + draws {
                s.step(&DoubleWell, &mut rng).unwrap();
                if t >= BURN {
                    out.push(s.position()[0]);
                }
            }
        }
        Kind::Sgrld(c) => {
            let mut settings = SgrldSettings::new(eps);
            settings.correction = c;
            let mut s = Sgrld::<f64, 1, _>::new(settings, [0.3], &METRIC).unwrap();
            for t in 0..BURN + draws {
                s.step(&DoubleWell, &mut rng).unwrap();
                if t >= BURN {
                    out.push(s.position()[0]);
                }
            }
        }
    }
    out
}

/// z-scores of E[θ²], E[θ⁴], P(|θ| < ½) against the exact values.
fn z_scores(draws: &[f64], exact: &[f64; 3]) -> [f64; 3] {
    let stats: [Vec<f64>; 3] = [
        draws.iter().map(|x| x * x).collect(),
        draws.iter().map(|x| x * x * x * x).collect(),
        draws
            .iter()
            .map(|x| if x.abs() < 0.5 { 1.0 } else { 0.0 })
            .collect(),
    ];
    let mut z = [0.0; 3];
    for k in 0..3 {
        let m = stats[k].iter().sum::<f64>() / stats[k].len() as f64;
        let se = mcse_mean(&[&stats[k]]);
        assert!(se.is_finite() && se > 0.0);
        z[k] = (m - exact[k]) / se;
    }
    z
}

fn max_abs(z: &[f64; 3]) -> f64 {
    z.iter().fold(0.0f64, |a, b| a.max(b.abs()))
}

#[test]
fn exact_moments_are_sane() {
    let e = exact();
    println!(
        "exact E[θ²] = {:.6}, E[θ⁴] = {:.6}, P(|θ|<½) = {:.6}",
        e[0], e[1], e[2]
    );
    // Integration by parts: E[θ·U′(θ)] = 1, i.e. E[θ⁴] − E[θ²] = 1/4.
    assert!((e[1] - e[0] - 0.25).abs() < 1e-10);
}

#[test]
fn corrected_samplers_are_right_on_the_double_well() {
    let e = exact();
    for kind in [
        Kind::Sgrhmc(Correction::Included),
        Kind::Sgrld(Correction::Included),
    ] {
        for seed in [7u64, 8] {
            let z = z_scores(&run(kind, seed), &e);
            println!("{kind:?} seed {seed}: z = {z:.2?}");
            assert!(max_abs(&z) < 4.0, "{kind:?} seed {seed}: {z:?}");
        }
    }
}

/// Also why the naive SGRLD is wrong: without Γ, the Langevin SDE
/// dθ = −G⁻¹U′dt + √(2G⁻¹)dW has zero probability flux for p ∝ exp(−U)/G⁻¹
/// (G⁻¹U′p + (G⁻¹p)′ = 0), so that — not π — is its stationary density; the
/// same naive SGRLD chains match that density's moments (|z| < 4).
#[test]
fn naive_samplers_are_wrong_on_the_double_well() {
    let e = exact();
    let predicted = moments(|x| 1.0 / METRIC.eval(x).0);
    println!("predicted naive-SGRLD moments {predicted:.4?} vs π's {e:.4?}");
    for kind in [
        Kind::Sgrhmc(Correction::Omitted),
        Kind::Sgrld(Correction::Omitted),
    ] {
        for seed in [7u64, 8] {
            let draws = run(kind, seed);
            let z = z_scores(&draws, &e);
            println!("{kind:?} seed {seed}: z = {z:.1?}");
            assert!(
                max_abs(&z) > 8.0,
                "{kind:?} seed {seed}: naive sampler not detected: {z:?}"
            );
            if let Kind::Sgrld(_) = kind {
                let zp = z_scores(&draws, &predicted);
                println!("  vs exp(−U)/G⁻¹: z = {zp:.2?}");
                assert!(max_abs(&zp) < 4.0, "seed {seed}: {zp:?}");
            }
        }
    }
}
