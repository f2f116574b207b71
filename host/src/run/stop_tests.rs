//! A run's [`StopFlag`]: set before the start, every chain returns at once
//! with no draw; set part-way, every chain keeps what it drew until then.

use std::sync::atomic::{AtomicU64, Ordering};

use super::tests::Diagonal;
use super::*;

fn settings() -> RunSettings {
    RunSettings {
        chains: 3,
        warmup: 100,
        draws: 100_000,
        seed: 11,
        ..RunSettings::default()
    }
}

#[test]
fn a_flag_set_before_the_start_returns_no_draws() {
    for kind in [SamplerKind::Hmc, SamplerKind::Nuts, SamplerKind::Sgld] {
        let stop = StopFlag::new();
        stop.request(StopReason::Interrupt);
        let progress = Progress::hidden().with_stop(stop);
        let draws = run(&Diagonal, kind, &settings(), &progress).unwrap();
        assert_eq!(draws.chains.len(), 3, "{kind}");
        for c in &draws.chains {
            assert!(c.is_empty() && c.values.is_empty(), "{kind}");
            assert!(c.interrupted, "{kind}");
            assert_eq!((c.iterations, c.warmup_draws), (0, 0), "{kind}");
            assert_eq!(c.adapted_metric, None, "{kind}");
        }
        let i = draws.interrupted.expect("interrupted");
        assert_eq!(i.reason, StopReason::Interrupt);
        assert_eq!((i.iterations, i.planned), (0, 3 * 100_100));
        assert_eq!(i.kept, [0, 0, 0]);
        assert_eq!(
            i.describe(),
            "interrupted by SIGINT after 0 of 300300 iterations"
        );
    }
}

/// [`Diagonal`] that asks the run to stop after `after` evaluations of U.
struct StopsAfter {
    after: u64,
    evaluations: AtomicU64,
    stop: StopFlag,
}

impl Model for StopsAfter {
    fn name(&self) -> String {
        Diagonal.name()
    }
    fn dimension(&self) -> usize {
        Diagonal.dimension()
    }
    fn potential_and_gradient(&self, x: &[f64], g: &mut [f64]) -> f64 {
        if self.evaluations.fetch_add(1, Ordering::Relaxed) == self.after {
            self.stop.request(StopReason::Terminate);
        }
        Diagonal.potential_and_gradient(x, g)
    }
}

#[test]
fn a_flag_set_while_sampling_keeps_the_draws_so_far() {
    let stop = StopFlag::new();
    let model = StopsAfter {
        // HMC's default 10 leapfrog steps, 3 chains: past every warm-up.
        after: 3 * 20 * 300,
        evaluations: AtomicU64::new(0),
        stop: stop.clone(),
    };
    let progress = Progress::hidden().with_stop(stop);
    let s = settings();
    let draws = run(&model, SamplerKind::Hmc, &s, &progress).unwrap();
    let i = draws.interrupted.clone().expect("interrupted");
    assert_eq!(i.reason, StopReason::Terminate);
    assert!(i.iterations < i.planned, "{i:?}");
    assert_eq!(
        i.iterations,
        draws.chains.iter().map(|c| c.iterations).sum::<u64>()
    );
    for (c, &kept) in draws.chains.iter().zip(&i.kept) {
        assert!(c.interrupted);
        assert!(c.len() < s.draws && c.len() == kept);
        assert_eq!(c.values.len(), kept * N_QUANTITIES);
        assert_eq!(c.energy.len(), kept);
        if kept > 0 {
            assert_eq!(c.warmup_draws, s.warmup as u64);
            assert_eq!(c.iterations, c.warmup_draws + kept as u64);
        }
    }
    assert!(
        draws.chains.iter().any(|c| !c.is_empty()),
        "some chain sampled before the stop: {:?}",
        i.kept
    );
}

/// Quantities [`Diagonal`] reports.
const N_QUANTITIES: usize = super::tests::N;
