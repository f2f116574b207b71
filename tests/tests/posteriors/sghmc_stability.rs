//! Why SGHMC defaults to the position-first order: stability on a stiff
//! direction.
//!
//! On a 1-D Gaussian with precision p and m = 1 both SGHMC orders are linear
//! recursions x′ = Ax + η in x = (θ, r) (`sghmc_linear_recursion`):
//!
//! - recipe Euler: A = [[1, ε], [−εp, 1 − εC]], det A = 1 − εC + ε²p, so the
//!   spectral radius exceeds 1 as soon as εp > C;
//! - position-first: A = [[1, ε], [−εp, 1 − εC − ε²p]], det A = 1 − εC, stable
//!   while ε²p < 4 − 2εC.
//!
//! **Test 1** (algebra, no sampling): with p = 1 and C = 0.5 (AMAGOLD's β = 0.25
//! as C = 2β), ε = k/20 for k = 1..30, the Euler radius (nalgebra's complex
//! eigenvalues) is > 1 exactly for ε > C/p = 0.5 and < 1 below it, and the
//! position-first radius is < 1 for every ε on the grid (its bound is
//! ε < (√17 − 1)/2 ≈ 1.56 here).
//!
//! **Test 2** (the sampler, fixed seeds 1 and 2): at ε = 0.8 (Euler radius
//! √1.24 ≈ 1.11, position-first √0.6 ≈ 0.77) on U = θ²/2 with ∇Ũ = θ + ν,
//! ν ~ N(0, 1): the position-first core sampler takes 100 000 steps after 2 000
//! of burn-in without an error, its |θ| stays below 10, and the mean of θ²
//! matches the exact stationary variance (discrete Lyapunov solution) with
//! |z| < 4, z = (mean − Σ_θθ)/MCSE, MCSE from the split ESS (`mcse_mean`).
//! The Euler-order core sampler from the same start passes |θ| = 10⁶ within
//! 1 000 steps (measured: 131 and 122) and later overflows: its steps then
//! return `NonFiniteProposal` (measured: about 13 400 of 20 000 refused), and
//! its state stays finite (a refused step leaves it as it was). (Stable is not
//! accurate: position-first's exact Σ_θθ at this ε is 2.25 against the
//! target's 1; measured E[θ²] 2.277 and 2.254.)

use nalgebra::DMatrix;
use qnmc::Error;
use qnmc::samplers::recipe::{Sghmc, SghmcSettings, SghmcUpdate};
use qnmc_host::diagnostics::mcse_mean;
use qnmc_tests::recipe::{NoisyGaussian, discrete_lyapunov, sghmc_linear_recursion};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

/// C = 2β with AMAGOLD's β = 0.25.
const FRICTION: f64 = 0.5;
/// Precision of the 1-D target.
const PRECISION: f64 = 1.0;

fn radius(eps: f64, position_first: bool) -> f64 {
    let p = DMatrix::from_element(1, 1, PRECISION);
    let (a, _) = sghmc_linear_recursion(&p, eps, FRICTION, 0.0, 1.0, position_first);
    a.complex_eigenvalues()
        .iter()
        .map(|l| l.norm())
        .fold(0.0, f64::max)
}

#[test]
fn position_first_is_stable_where_recipe_euler_is_not() {
    let euler_limit = FRICTION / PRECISION;
    for k in 1..=30 {
        let eps = k as f64 / 20.0;
        let (euler, first) = (radius(eps, false), radius(eps, true));
        println!(
            "ε = {eps:.2}: spectral radius recipe Euler {euler:.4}, position-first {first:.4}"
        );
        assert!(first < 1.0, "position-first unstable at ε = {eps}: {first}");
        if eps > euler_limit {
            assert!(euler > 1.0, "ε = {eps}: Euler radius {euler}");
        } else if eps < euler_limit {
            assert!(euler < 1.0, "ε = {eps}: Euler radius {euler}");
        }
    }
    // The closed forms of the module docs at the sampler test's ε.
    let eps = 0.8;
    assert!((radius(eps, false) - (1.0 - eps * FRICTION + eps * eps).sqrt()).abs() < 1e-12);
    assert!((radius(eps, true) - (1.0 - eps * FRICTION).sqrt()).abs() < 1e-12);
}

fn settings(eps: f64, update: SghmcUpdate) -> SghmcSettings<f64> {
    SghmcSettings {
        update,
        ..SghmcSettings::new(eps, FRICTION)
    }
}

#[test]
fn position_first_draws_stay_bounded_where_recipe_euler_blows_up() {
    const EPS: f64 = 0.8;
    const BURN: usize = 2_000;
    const DRAWS: usize = 100_000;
    let target = NoisyGaussian {
        precision: [[PRECISION]],
        noise_sd: 1.0,
    };
    let p = DMatrix::from_element(1, 1, PRECISION);
    let (a, q) = sghmc_linear_recursion(&p, EPS, FRICTION, 0.0, 1.0, true);
    let exact = discrete_lyapunov(&a, &q)[(0, 0)];
    for seed in [1u64, 2] {
        let mut rng = XorShiftRng::seed_from_u64(seed);
        let mut s = Sghmc::<f64, 1>::new(settings(EPS, SghmcUpdate::PositionFirst), [1.0]).unwrap();
        let mut squares = Vec::with_capacity(DRAWS);
        let mut largest = 0.0f64;
        for t in 0..BURN + DRAWS {
            s.step(&target, &mut rng)
                .unwrap_or_else(|e| panic!("position-first step {t} failed: {e:?}"));
            let x = s.position()[0];
            largest = largest.max(x.abs());
            if t >= BURN {
                squares.push(x * x);
            }
        }
        let mean = squares.iter().sum::<f64>() / DRAWS as f64;
        let z = (mean - exact) / mcse_mean(&[&squares]);
        println!(
            "seed {seed}: position-first max|θ| {largest:.2}, E[θ²] {mean:.4} vs exact {exact:.4}, z = {z:.2}"
        );
        assert!(largest < 10.0, "position-first left the bulk: {largest}");
        assert!(z.abs() < 4.0, "z = {z}");

        let mut rng = XorShiftRng::seed_from_u64(seed);
        let mut e = Sghmc::<f64, 1>::new(settings(EPS, SghmcUpdate::RecipeEuler), [1.0]).unwrap();
        let mut passed = None;
        let mut refused = 0usize;
        for t in 0..20_000 {
            match e.step(&target, &mut rng) {
                Ok(_) => {}
                Err(err) => {
                    assert_eq!(err, Error::NonFiniteProposal);
                    refused += 1;
                }
            }
            if passed.is_none() && e.position()[0].abs() > 1e6 {
                passed = Some(t + 1);
            }
            assert!(e.position()[0].is_finite() && e.momentum()[0].is_finite());
        }
        println!(
            "seed {seed}: recipe Euler passed |θ| = 1e6 after {passed:?} steps, {refused} of 20000 steps refused"
        );
        assert!(
            passed.is_some_and(|t| t <= 1_000),
            "Euler did not blow up: {passed:?}"
        );
        assert!(refused > 0, "Euler never overflowed");
    }
}
