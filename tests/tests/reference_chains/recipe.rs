//! Reference chains for the complete-recipe samplers (ALGORITHMS.md §5.1): each
//! core sampler and its dense reference (`qnmc_tests::recipe`, written from the
//! paper's block equations, not from the core's (D, Q, Γ) engine) run from the
//! same seed for 500 steps; every coordinate of θ (and r, ξ, V, G) must agree to
//! 1e-10·max(1, |reference|).
//!
//! SGHMC is checked in both update orders: `RecipeEuler` against eq. (18) to
//! 1e-10, the default `PositionFirst` against Chen et al.'s Algorithm 2 (θ
//! first, gradient at the new θ) to 1e-12.
//!
//! Also the identities: SGHMC (`RecipeEuler`) with C = 0, B̂ = 0 is the naive
//! SGHMC of the recipe's eq. (15); pSGLD with G frozen at I is SGLD (bit for
//! bit).
//!
//! Negative controls show the comparison can fail: dropping Γ, flipping its sign
//! (the paper's printed eq. 6/9), or changing the friction, in the reference, is
//! detected.

use nalgebra::DVector;
use qnmc::samplers::recipe::{
    Correction, Psgld, PsgldSettings, Sghmc, SghmcSettings, SghmcUpdate, Sgld, SgldSettings, Sgnht,
    SgnhtSettings, Sgrhmc, SgrhmcSettings, Sgrld, SgrldSettings, Thermostat,
};
use qnmc_tests::recipe::{
    BumpMetric, NoisyGaussian, draw, naive_sghmc_step, psgld_step, sghmc_position_first_step,
    sghmc_step, sgld_step, sgnht_step, sgrhmc_step, sgrld_step,
};

use crate::common::rng;

const TOL: f64 = 1e-10;
const STEPS: usize = 500;

fn target(noise_sd: f64) -> NoisyGaussian<3> {
    NoisyGaussian {
        precision: [[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 1.5]],
        noise_sd,
    }
}

/// Largest error |a − b| / max(1, |b|).
fn err(a: &[f64], b: &DVector<f64>) -> f64 {
    a.iter()
        .zip(b.iter())
        .map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
        .fold(0.0, f64::max)
}

const X0: [f64; 3] = [1.0, -0.5, 0.8];

/// Runs SGLD core vs reference; returns the worst error.
fn sgld_chain(eps: f64, bhat: f64, reference_bhat: f64) -> f64 {
    let t = target(1.0);
    let mut settings = SgldSettings::new(eps);
    settings.noise_estimate = bhat;
    let mut core = Sgld::<f64, 3>::new(settings, X0).unwrap();
    let (mut ra, mut rb) = (rng(11), rng(11));
    let mut theta = DVector::from_column_slice(&X0);
    let mut worst = 0.0f64;
    for _ in 0..STEPS {
        core.step(&t, &mut ra).unwrap();
        let (g, w) = draw::<3, _, _>(&t, &theta, &mut rb);
        theta = sgld_step(&theta, &g, &w, eps, reference_bhat);
        worst = worst.max(err(core.position(), &theta));
    }
    assert!(theta.norm() < 20.0, "chain exploded: {theta}");
    worst
}

#[test]
fn sgld_matches_reference() {
    for (eps, bhat) in [(0.05, 0.0), (0.1, 3.0)] {
        let worst = sgld_chain(eps, bhat, bhat);
        println!("SGLD eps={eps} bhat={bhat}: worst {worst:.2e}");
        assert!(worst <= TOL, "{worst}");
    }
    // Negative control: a different B̂ in the reference is detected.
    assert!(sgld_chain(0.1, 3.0, 2.9) > 1e-6);
}

fn psgld_chain(
    frozen_at: Option<usize>,
    reference_lambda: f64,
    corrected: bool,
    reference_corrected: bool,
) -> f64 {
    let t = target(1.0);
    let (eps, alpha, lambda, scale) = (0.02, 0.9, 0.5, 0.7);
    let mut settings = PsgldSettings::new(eps, alpha, lambda);
    settings.gradient_scale = scale;
    let mut core = Psgld::<f64, 3>::new(settings, X0).unwrap();
    let (mut ra, mut rb) = (rng(12), rng(12));
    let mut theta = DVector::from_column_slice(&X0);
    let mut v = DVector::zeros(3);
    let mut frozen: Option<DVector<f64>> = None;
    let mut last_g = DVector::zeros(3);
    let mut worst = 0.0f64;
    for step in 0..STEPS {
        if Some(step) == frozen_at {
            core.freeze_preconditioner();
            frozen = Some(last_g.clone());
        }
        if corrected {
            core.step_corrected(&t, &mut ra).unwrap();
        } else {
            core.step(&t, &mut ra).unwrap();
        }
        let (g, w) = draw::<3, _, _>(&t, &theta, &mut rb);
        let hdiag = DVector::from_fn(3, |i, _| t.precision[i][i]);
        let (next, used) = psgld_step(
            &theta,
            &mut v,
            &g,
            &w,
            eps,
            alpha,
            reference_lambda,
            scale,
            frozen.as_ref(),
            reference_corrected.then_some(&hdiag),
        );
        theta = next;
        last_g = used;
        worst = worst
            .max(err(core.position(), &theta))
            .max(err(core.preconditioner(), &last_g))
            .max(err(core.square_average(), &v));
    }
    worst
}

#[test]
fn psgld_matches_reference_adaptive_and_frozen() {
    let adaptive = psgld_chain(None, 0.5, false, false);
    let frozen = psgld_chain(Some(250), 0.5, false, false);
    let corrected = psgld_chain(None, 0.5, true, true);
    let corrected_frozen = psgld_chain(Some(250), 0.5, true, true);
    println!(
        "pSGLD adaptive {adaptive:.2e}, frozen after 250: {frozen:.2e}; with Γ: {corrected:.2e}, frozen after 250: {corrected_frozen:.2e}"
    );
    assert!(adaptive <= TOL && frozen <= TOL && corrected <= TOL && corrected_frozen <= TOL);
    assert!(
        psgld_chain(None, 0.51, false, false) > 1e-6,
        "negative control: λ"
    );
    assert!(
        psgld_chain(None, 0.5, true, false) > 1e-6,
        "negative control: Γ matters"
    );
}

/// SGRLD with the bump metric; `reference_gamma` scales the reference's Γ
/// (1: the recipe; 0: dropped; −1: the paper's printed sign).
fn sgrld_chain(correction: Correction, reference_gamma: f64) -> f64 {
    let t = target(1.0);
    let eps = 0.05;
    let mut settings = SgrldSettings::new(eps);
    settings.correction = correction;
    let mut core = Sgrld::<f64, 3, _>::new(settings, X0, BumpMetric).unwrap();
    let (mut ra, mut rb) = (rng(13), rng(13));
    let mut theta = DVector::from_column_slice(&X0);
    let mut worst = 0.0f64;
    let metric = |x: f64| {
        let (g, d) = BumpMetric::eval(x);
        (g, reference_gamma * d)
    };
    for _ in 0..STEPS {
        core.step(&t, &mut ra).unwrap();
        let (g, w) = draw::<3, _, _>(&t, &theta, &mut rb);
        theta = sgrld_step(&theta, &g, &w, eps, metric, reference_gamma != 0.0);
        worst = worst.max(err(core.position(), &theta));
    }
    worst
}

#[test]
fn sgrld_matches_reference() {
    let with = sgrld_chain(Correction::Included, 1.0);
    let without = sgrld_chain(Correction::Omitted, 0.0);
    println!("SGRLD with Γ {with:.2e}, without {without:.2e}");
    assert!(with <= TOL && without <= TOL);
    assert!(sgrld_chain(Correction::Included, 0.0) > 1e-6, "Γ matters");
    assert!(sgrld_chain(Correction::Included, -1.0) > 1e-6, "sign of Γ");
}

fn sghmc_chain(friction: f64, bhat: f64, mass: f64, reference_friction: f64) -> f64 {
    let t = target(0.5);
    let eps = 0.05;
    let settings = SghmcSettings {
        step_size: eps,
        friction,
        noise_estimate: bhat,
        mass,
        update: SghmcUpdate::RecipeEuler,
    };
    let mut core = Sghmc::<f64, 3>::new(settings, X0).unwrap();
    core.set_momentum([0.3, -0.2, 0.1]).unwrap();
    let (mut ra, mut rb) = (rng(14), rng(14));
    let mut theta = DVector::from_column_slice(&X0);
    let mut r = DVector::from_column_slice(&[0.3, -0.2, 0.1]);
    let mut worst = 0.0f64;
    for _ in 0..STEPS {
        core.step(&t, &mut ra).unwrap();
        let (g, w) = draw::<3, _, _>(&t, &theta, &mut rb);
        (theta, r) = sghmc_step(&theta, &r, &g, &w, eps, reference_friction, bhat, mass);
        worst = worst
            .max(err(core.position(), &theta))
            .max(err(core.momentum(), &r));
    }
    worst
}

#[test]
fn sghmc_matches_reference() {
    for (c, b, m) in [(1.0, 0.0, 1.0), (2.0, 10.0, 1.5)] {
        let worst = sghmc_chain(c, b, m, c);
        println!("SGHMC recipe Euler C={c} B={b} m={m}: {worst:.2e}");
        assert!(worst <= TOL);
    }
    assert!(sghmc_chain(1.0, 0.0, 1.0, 1.01) > 1e-6, "negative control");
}

/// Tolerance of the position-first comparison: the reference is written with
/// nalgebra in another association order, so agreement is to rounding, not
/// bit for bit.
const POSITION_FIRST_TOL: f64 = 1e-12;

/// The default (`PositionFirst`) core SGHMC against the dense Algorithm 2
/// reference from the same seed; returns the worst error over `STEPS` steps.
fn sghmc_position_first_chain(
    friction: f64,
    bhat: f64,
    mass: f64,
    reference_friction: f64,
    reference_gradient_at_new: bool,
) -> f64 {
    let t = target(0.5);
    let eps = 0.05;
    let mut settings = SghmcSettings::new(eps, friction);
    settings.noise_estimate = bhat;
    settings.mass = mass;
    assert_eq!(settings.update, SghmcUpdate::PositionFirst, "the default");
    let mut core = Sghmc::<f64, 3>::new(settings, X0).unwrap();
    core.set_momentum([0.3, -0.2, 0.1]).unwrap();
    let (mut ra, mut rb) = (rng(20), rng(20));
    let mut theta = DVector::from_column_slice(&X0);
    let mut r = DVector::from_column_slice(&[0.3, -0.2, 0.1]);
    let mut worst = 0.0f64;
    for _ in 0..STEPS {
        core.step(&t, &mut ra).unwrap();
        (theta, r) = sghmc_position_first_step::<3, _, _>(
            &t,
            &theta,
            &r,
            &mut rb,
            eps,
            reference_friction,
            bhat,
            mass,
            reference_gradient_at_new,
        );
        worst = worst
            .max(err(core.position(), &theta))
            .max(err(core.momentum(), &r));
    }
    assert!(theta.norm() < 20.0, "chain exploded: {theta}");
    worst
}

/// Measured: worst 1.7e-15 (C = 1, m = 1) and 1.4e-15 (C = 2, B̂ = 10,
/// m = 1.5); 0 with C = 0. Negative controls: friction 1.01 in the reference
/// 2e-2, the gradient at the old θ 0.18.
#[test]
fn sghmc_position_first_matches_algorithm_2_reference() {
    for (c, b, m) in [(1.0, 0.0, 1.0), (2.0, 10.0, 1.5), (0.0, 0.0, 1.0)] {
        let worst = sghmc_position_first_chain(c, b, m, c, true);
        println!("SGHMC position-first C={c} B={b} m={m}: {worst:.2e}");
        assert!(worst <= POSITION_FIRST_TOL, "{worst}");
    }
    let other_friction = sghmc_position_first_chain(1.0, 0.0, 1.0, 1.01, true);
    let old_gradient = sghmc_position_first_chain(1.0, 0.0, 1.0, 1.0, false);
    println!(
        "negative controls: friction 1.01 in the reference {other_friction:.2e}, \
         gradient at the old θ (eq. 18) {old_gradient:.2e}"
    );
    assert!(other_friction > 1e-6, "negative control: friction");
    assert!(old_gradient > 1e-6, "negative control: update order");
}

fn sgnht_chain(thermostat: Thermostat, reference_fixed: bool) -> f64 {
    let t = target(0.5);
    let (eps, a, bhat) = (0.05, 1.5, 2.0);
    let mut settings = SgnhtSettings::new(eps, a);
    settings.noise_estimate = bhat;
    settings.thermostat = thermostat;
    let mut core = Sgnht::<f64, 3>::new(settings, X0).unwrap();
    core.set_momentum([0.3, -0.2, 0.1]).unwrap();
    let (mut ra, mut rb) = (rng(15), rng(15));
    let mut theta = DVector::from_column_slice(&X0);
    let mut r = DVector::from_column_slice(&[0.3, -0.2, 0.1]);
    let mut xi = a;
    let mut worst = 0.0f64;
    for _ in 0..STEPS {
        core.step(&t, &mut ra).unwrap();
        let (g, w) = draw::<3, _, _>(&t, &theta, &mut rb);
        (theta, r, xi) = sgnht_step(&theta, &r, xi, &g, &w, eps, a, bhat, reference_fixed);
        worst = worst
            .max(err(core.position(), &theta))
            .max(err(core.momentum(), &r))
            .max((core.thermostat() - xi).abs() / xi.abs().max(1.0));
    }
    worst
}

#[test]
fn sgnht_matches_reference() {
    let adaptive = sgnht_chain(Thermostat::Adaptive, false);
    let fixed = sgnht_chain(Thermostat::Fixed, true);
    println!("SGNHT adaptive {adaptive:.2e}, fixed {fixed:.2e}");
    assert!(adaptive <= TOL && fixed <= TOL);
    assert!(
        sgnht_chain(Thermostat::Adaptive, true) > 1e-6,
        "negative control"
    );
}

fn sgrhmc_chain(correction: Correction, reference_correct: bool, bhat: f64) -> f64 {
    let t = target(0.5);
    let eps = 0.05;
    let mut settings = SgrhmcSettings::new(eps);
    settings.correction = correction;
    settings.noise_estimate = bhat;
    let mut core = Sgrhmc::<f64, 3, _>::new(settings, X0, BumpMetric).unwrap();
    core.set_momentum([0.3, -0.2, 0.1]).unwrap();
    let (mut ra, mut rb) = (rng(16), rng(16));
    let mut theta = DVector::from_column_slice(&X0);
    let mut r = DVector::from_column_slice(&[0.3, -0.2, 0.1]);
    let mut worst = 0.0f64;
    for _ in 0..STEPS {
        core.step(&t, &mut ra).unwrap();
        let (g, w) = draw::<3, _, _>(&t, &theta, &mut rb);
        (theta, r) = sgrhmc_step(
            &theta,
            &r,
            &g,
            &w,
            eps,
            bhat,
            BumpMetric::eval,
            reference_correct,
        );
        worst = worst
            .max(err(core.position(), &theta))
            .max(err(core.momentum(), &r));
    }
    worst
}

#[test]
fn sgrhmc_matches_reference_corrected_and_naive() {
    let g = sgrhmc_chain(Correction::Included, true, 0.0);
    let gb = sgrhmc_chain(Correction::Included, true, 1.0);
    let naive = sgrhmc_chain(Correction::Omitted, false, 0.0);
    println!("gSGRHMC {g:.2e} (B̂=1: {gb:.2e}), naive eq. 27 {naive:.2e}");
    assert!(g <= TOL && gb <= TOL && naive <= TOL);
    assert!(
        sgrhmc_chain(Correction::Included, false, 0.0) > 1e-6,
        "negative control"
    );
}

/// `RecipeEuler` is the SGHMC the core had before the update order became a
/// setting, bit for bit: an FNV-1a hash of every θ and r bit over 500 steps
/// (seed 21, two settings) equals the hash the previous code (commit 5bdaa3d,
/// `SghmcSettings::new` with the same fields) produced. Any change in the
/// arithmetic, its order or the random-number use changes the hash.
#[test]
fn sghmc_recipe_euler_is_the_previous_sampler_bit_for_bit() {
    let t = target(0.5);
    for (c, b, m, expected) in [
        (1.0, 0.0, 1.0, 0x05f6_d2e3_99a2_7d40u64),
        (2.0, 10.0, 1.5, 0x1e1d_a443_4980_1af5),
    ] {
        let settings = SghmcSettings {
            step_size: 0.05,
            friction: c,
            noise_estimate: b,
            mass: m,
            update: SghmcUpdate::RecipeEuler,
        };
        let mut core = Sghmc::<f64, 3>::new(settings, X0).unwrap();
        core.set_momentum([0.3, -0.2, 0.1]).unwrap();
        let mut r = rng(21);
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for _ in 0..STEPS {
            core.step(&t, &mut r).unwrap();
            for x in core.position().iter().chain(core.momentum()) {
                h = (h ^ x.to_bits()).wrapping_mul(0x0100_0000_01b3);
            }
        }
        assert_eq!(h, expected, "C={c} B={b} m={m}");
        // Negative control: the default order gives another chain.
        let mut other = Sghmc::<f64, 3>::new(
            SghmcSettings {
                update: SghmcUpdate::PositionFirst,
                ..settings
            },
            X0,
        )
        .unwrap();
        other.set_momentum([0.3, -0.2, 0.1]).unwrap();
        let mut r = rng(21);
        other.step(&t, &mut r).unwrap();
        let mut r = rng(21);
        let mut first = Sghmc::<f64, 3>::new(settings, X0).unwrap();
        first.set_momentum([0.3, -0.2, 0.1]).unwrap();
        first.step(&t, &mut r).unwrap();
        assert_ne!(other.momentum(), first.momentum());
    }
}

/// SGHMC (`RecipeEuler`) with C = 0 and B̂ = 0 is the naive SGHMC of the
/// recipe's eq. (15). The naive recursion below draws the batch and then D
/// normals it does not use (the core draws them every step, as documented), so
/// both consume the same stream.
#[test]
fn sghmc_without_friction_is_naive_eq15() {
    let t = target(1.0);
    let eps = 0.02;
    let euler = |c: f64| SghmcSettings {
        update: SghmcUpdate::RecipeEuler,
        ..SghmcSettings::new(eps, c)
    };
    let mut core = Sghmc::<f64, 3>::new(euler(0.0), X0).unwrap();
    core.set_momentum([0.3, -0.2, 0.1]).unwrap();
    let (mut ra, mut rb) = (rng(17), rng(17));
    let mut theta = DVector::from_column_slice(&X0);
    let mut r = DVector::from_column_slice(&[0.3, -0.2, 0.1]);
    let mut worst = 0.0f64;
    for _ in 0..STEPS {
        core.step(&t, &mut ra).unwrap();
        let (g, _unused_normals) = draw::<3, _, _>(&t, &theta, &mut rb);
        (theta, r) = naive_sghmc_step(&theta, &r, &g, eps);
        worst = worst
            .max(err(core.position(), &theta))
            .max(err(core.momentum(), &r));
    }
    println!("SGHMC(C=0, B=0) vs eq. 15: {worst:.2e}");
    assert!(worst <= TOL);
    // Negative control: any friction breaks the identity.
    let mut core = Sghmc::<f64, 3>::new(euler(0.01), X0).unwrap();
    let (mut ra, mut rb) = (rng(17), rng(17));
    let (mut theta, mut r) = (DVector::from_column_slice(&X0), DVector::zeros(3));
    for _ in 0..50 {
        core.step(&t, &mut ra).unwrap();
        let (g, _) = draw::<3, _, _>(&t, &theta, &mut rb);
        (theta, r) = naive_sghmc_step(&theta, &r, &g, eps);
    }
    assert!(err(core.position(), &theta) > 1e-6);
}

/// pSGLD with G frozen at I is SGLD: same chain, bit for bit, from the same seed.
#[test]
fn psgld_frozen_identity_is_sgld() {
    let t = target(1.0);
    let eps = 0.05;
    let mut sgld = Sgld::<f64, 3>::new(SgldSettings::new(eps), X0).unwrap();
    let mut psgld = Psgld::<f64, 3>::new(PsgldSettings::new(eps, 0.99, 1e-5), X0).unwrap();
    psgld.set_preconditioner([1.0; 3]).unwrap();
    let (mut ra, mut rb) = (rng(18), rng(18));
    for _ in 0..STEPS {
        sgld.step(&t, &mut ra).unwrap();
        psgld.step(&t, &mut rb).unwrap();
        assert_eq!(sgld.position(), psgld.position());
    }
    // f32 too.
    let mut sgld = Sgld::<f32, 3>::new(SgldSettings::new(0.05), [1.0, -0.5, 0.8]).unwrap();
    let mut psgld =
        Psgld::<f32, 3>::new(PsgldSettings::new(0.05, 0.99, 1e-5), [1.0, -0.5, 0.8]).unwrap();
    psgld.set_preconditioner([1.0; 3]).unwrap();
    let (mut ra, mut rb) = (rng(19), rng(19));
    for _ in 0..STEPS {
        sgld.step(&t, &mut ra).unwrap();
        psgld.step(&t, &mut rb).unwrap();
        assert_eq!(sgld.position(), psgld.position());
    }
    // Negative control: G = 1.01·I differs.
    let mut sgld = Sgld::<f64, 3>::new(SgldSettings::new(eps), X0).unwrap();
    let mut psgld = Psgld::<f64, 3>::new(PsgldSettings::new(eps, 0.99, 1e-5), X0).unwrap();
    psgld.set_preconditioner([1.01; 3]).unwrap();
    let (mut ra, mut rb) = (rng(18), rng(18));
    sgld.step(&t, &mut ra).unwrap();
    psgld.step(&t, &mut rb).unwrap();
    assert_ne!(sgld.position(), psgld.position());
}
