//! `lp__` of the minibatch samplers (`--lp`): how many full-data passes are
//! made, that the chain itself does not change, and the automatic choice.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::model::ModelRng;

/// N(0, I) in dimension 3 that claims `data` data points and counts its
/// full-data evaluations (the stochastic gradient is exact and not counted).
struct Counted {
    data: usize,
    full_passes: AtomicUsize,
}

impl Counted {
    fn new(data: usize) -> Self {
        Counted {
            data,
            full_passes: AtomicUsize::new(0),
        }
    }
}

impl Model for Counted {
    fn name(&self) -> String {
        "counted".into()
    }
    fn dimension(&self) -> usize {
        3
    }
    fn potential_and_gradient(&self, x: &[f64], g: &mut [f64]) -> f64 {
        self.full_passes.fetch_add(1, Ordering::Relaxed);
        g.copy_from_slice(x);
        0.5 * x.iter().map(|v| v * v).sum::<f64>()
    }
    fn data_size(&self) -> Option<usize> {
        Some(self.data)
    }
    fn stochastic_gradient(&self, x: &[f64], _: usize, _: &mut ModelRng, g: &mut [f64]) {
        g.copy_from_slice(x);
    }
}

fn settings(lp: Option<LpMode>) -> RunSettings {
    RunSettings {
        chains: 2,
        warmup: 50,
        draws: 100,
        seed: 3,
        step_size: Some(0.05),
        lp,
        ..RunSettings::default()
    }
}

#[test]
fn lp_modes_make_the_full_passes_they_say_and_leave_the_chain_alone() {
    let runs: Vec<(Option<LpMode>, usize, RunDraws)> = [
        Some(LpMode::Full),
        Some(LpMode::None),
        Some(LpMode::Every(10)),
    ]
    .into_iter()
    .map(|mode| {
        let model = Counted::new(100);
        let draws = run(
            &model,
            SamplerKind::Sgld,
            &settings(mode),
            &Progress::hidden(),
        )
        .unwrap();
        (mode, model.full_passes.load(Ordering::Relaxed), draws)
    })
    .collect();
    let full = &runs[0].2;
    for (mode, passes, draws) in &runs {
        let computed: usize = draws
            .chains
            .iter()
            .map(|c| c.lp.iter().filter(|v| v.is_finite()).count())
            .sum();
        let expected = match mode {
            Some(LpMode::Full) => 200,
            Some(LpMode::None) => 0,
            _ => 20,
        };
        assert_eq!(computed, expected, "{mode:?}");
        assert_eq!(*passes, expected, "{mode:?}: full-data passes");
        // The draws do not depend on whether lp__ was computed.
        for (a, b) in draws.chains.iter().zip(&full.chains) {
            assert_eq!(a.values, b.values, "{mode:?}");
        }
        if *mode == Some(LpMode::None) {
            assert!(draws.chains.iter().all(|c| c.lp_seconds == 0.0));
        }
    }
    // Where it is computed, lp__ is −U at the draw.
    let c = &full.chains[0];
    let x = &c.values[..3];
    assert!((c.lp[0] + 0.5 * x.iter().map(|v| v * v).sum::<f64>()).abs() < 1e-12);
    assert!(c.lp_seconds > 0.0);
}

#[test]
fn lp_is_off_by_default_on_large_data_and_only_for_minibatch_samplers() {
    let large = Counted::new(LP_AUTO_MAX_DATA + 1);
    let draws = run(
        &large,
        SamplerKind::Sgld,
        &settings(None),
        &Progress::hidden(),
    )
    .unwrap();
    assert_eq!(large.full_passes.load(Ordering::Relaxed), 0);
    assert!(draws.chains.iter().all(|c| c.lp.iter().all(|v| v.is_nan())));
    let small = Counted::new(LP_AUTO_MAX_DATA);
    let draws = run(
        &small,
        SamplerKind::Sgld,
        &settings(None),
        &Progress::hidden(),
    )
    .unwrap();
    assert!(
        draws
            .chains
            .iter()
            .all(|c| c.lp.iter().all(|v| v.is_finite()))
    );
    // HMC has U at no cost: --lp is an error naming it, and lp__ is always there.
    let e = run(
        &small,
        SamplerKind::Hmc,
        &settings(Some(LpMode::None)),
        &Progress::hidden(),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("--lp applies to the minibatch samplers"),
        "{e}"
    );
    let draws = run(
        &large,
        SamplerKind::Hmc,
        &settings(None),
        &Progress::hidden(),
    )
    .unwrap();
    assert!(
        draws
            .chains
            .iter()
            .all(|c| c.lp.iter().all(|v| v.is_finite()))
    );
}
