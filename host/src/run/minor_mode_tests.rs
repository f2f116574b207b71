//! A chain whose start finds a minor mode starts again from the best
//! chain's initial point (`minor_modes`), with the secants at the optimum.

use super::*;
use crate::draws::RestartReason;

/// A 2-D mixture: N(0, I) with weight 1 and N((20, 0), ¼I) with weight
/// e^−30. Both modes are local optima (they are separated where the two
/// components' densities cross, x₁ ≈ 14.1), and the components are
/// Gaussian, so the Laplace log masses differ by 30 (up to the tails of
/// the other component, below 10⁻⁴⁰ at either mode): more than
/// `MINOR_MODE_LOG_MASS`. Starts are
/// uniform on (11, 17) × (−3, 3), so some chains' L-BFGS runs end in each
/// mode.
struct FarMinorMode;

const FAR: f64 = 20.0;
const LOG_WEIGHT: f64 = -30.0;

impl Model for FarMinorMode {
    fn name(&self) -> String {
        "far-minor-mode".into()
    }
    fn dimension(&self) -> usize {
        2
    }
    fn potential_and_gradient(&self, x: &[f64], g: &mut [f64]) -> f64 {
        let main = -0.5 * (x[0] * x[0] + x[1] * x[1]);
        let d0 = x[0] - FAR;
        let minor = LOG_WEIGHT + 4f64.ln() - 2.0 * (d0 * d0 + x[1] * x[1]);
        let top = main.max(minor);
        let (a, b) = ((main - top).exp(), (minor - top).exp());
        let (wa, wb) = (a / (a + b), b / (a + b));
        g[0] = wa * x[0] + wb * 4.0 * d0;
        g[1] = wa * x[1] + wb * 4.0 * x[1];
        -(top + (a + b).ln())
    }
    fn initial_point(&self) -> Vec<f64> {
        vec![14.0, 0.0]
    }
}

fn settings(secants: bool) -> RunSettings {
    RunSettings {
        chains: 8,
        warmup: 300,
        draws: 300,
        seed: 11,
        init_radius: 3.0,
        optimum_secants: secants,
        ..RunSettings::default()
    }
}

/// `FarMinorMode` sampled by NUTS at `settings(secants)`.
fn sample(secants: bool) -> crate::draws::RunDraws {
    run(
        &FarMinorMode,
        SamplerKind::Nuts,
        &settings(secants),
        &Progress::hidden(),
    )
    .unwrap()
}

/// With the secants, every chain whose optimisation ended at (20, 0)
/// starts again from a chain that found the origin, with a deficit of
/// 30 ± 10⁻³ (the optimiser's tolerance), and then samples the main mode only: x₁ < 7
/// (7 sds) in every kept draw. The check is not vacuous: some chains did
/// end at the minor mode first (3 of 8 at this seed), and without the
/// secants nothing is restarted (no Laplace mass) and some chain keeps
/// sampling around x₁ = 20 — the failure the restart prevents (as it is
/// that of Stan's chains started there: R̂ sees it, nothing corrects it).
#[test]
fn chains_in_a_far_minor_mode_start_again_from_the_best_chain() {
    let draws = sample(true);
    let restarted: Vec<_> = draws
        .chains
        .iter()
        .filter_map(|c| c.restart.map(|r| (c.chain_id, r)))
        .collect();
    assert!(
        !restarted.is_empty() && restarted.len() < draws.chains.len(),
        "{restarted:?}"
    );
    // At this seed one chain's optimisation also runs out of its budget
    // unconverged and restarts for that reason (RestartReason::NoOptimum).
    assert!(
        restarted
            .iter()
            .any(|(_, r)| matches!(r.reason, RestartReason::MinorMode { .. })),
        "{restarted:?}"
    );
    for (id, r) in &restarted {
        let deficit = -LOG_WEIGHT;
        assert!(
            match r.reason {
                RestartReason::MinorMode { log_mass_deficit } =>
                    (log_mass_deficit - deficit).abs() < 1e-3,
                RestartReason::NoOptimum | RestartReason::UnmeasuredOptimum => true,
            },
            "chain {id}: {r:?} vs {deficit}"
        );
        assert!(
            restarted.iter().all(|(other, _)| *other != r.from_chain),
            "chain {id} restarted from chain {}, itself restarted",
            r.from_chain
        );
    }
    for c in &draws.chains {
        let x1 = c.column(0, 2);
        let top = x1.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        assert!(top < 7.0, "chain {}: max x₁ {top}", c.chain_id);
    }

    let plain = sample(false);
    assert!(plain.chains.iter().all(|c| c.restart.is_none()));
    // The control: without the restarts some chain (two of eight at this
    // seed) samples the minor mode after its warm-up.
    let stuck = plain
        .chains
        .iter()
        .filter(|c| c.column(0, 2).iter().any(|&v| v > FAR - 5.0))
        .count();
    assert!(
        stuck > 0,
        "no chain of the control stayed at the minor mode"
    );
}

/// The same control, judged: the chains left at the minor mode stayed
/// where the others never went, so the run is unusable (`qnmc run` exits
/// with code 3) with a message naming exactly those chains; the run with
/// the restarts is not.
#[test]
fn chains_left_in_the_minor_mode_make_the_run_unusable() {
    let judge = |draws: &crate::draws::RunDraws| {
        let summary = crate::output::summarize_run(draws, None);
        (
            summary.separation.clone(),
            crate::output::assess_run(draws, &summary),
        )
    };
    let plain = sample(false);
    let stuck: Vec<usize> = plain
        .chains
        .iter()
        .filter(|c| c.column(0, 2).iter().all(|&v| v > FAR - 5.0))
        .map(|c| c.chain_id)
        .collect();
    assert!(!stuck.is_empty(), "no chain stayed at the minor mode");
    let (separation, health) = judge(&plain);
    let separation = separation.expect("the chains at x₁ = 20 are apart");
    assert_eq!(separation.groups.len(), 2, "{separation:?}");
    assert_eq!(separation.groups[1].chains, stuck, "{separation:?}");
    assert!(!health.usable(), "{health:?}");
    assert!(
        health.unusable.iter().any(|m| m.contains("stayed where")),
        "{health:?}"
    );

    let restarted = sample(true);
    let (separation, health) = judge(&restarted);
    assert_eq!(separation, None);
    assert!(health.usable(), "{health:?}");
}
