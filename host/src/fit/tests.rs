//! [`Sampling`]'s warnings, refusals and errors, and its draws read back.
//! (The library against `qnmc run`, bit for bit, is tested in the crate
//! `qnmc-cli`, `src/library_agreement.rs`.)

use qnmc::Scalar;
use qnmc::autodiff::{AutodiffModel, ForwardGradient};

use super::*;
use crate::model::PotentialModel;
use crate::targets::Funnel;

/// Neal's funnel makes NUTS diverge at its default target acceptance: the
/// fit says so in its warnings, as `qnmc run` prints them.
#[test]
fn a_run_that_diverges_returns_warnings() {
    let fit = Sampling::new().seed(3).run(&Funnel::neal()).unwrap();
    let divergent: usize = fit.summary.chains.iter().map(|c| c.divergences).sum();
    assert!(divergent > 0, "the funnel should make NUTS diverge");
    assert!(
        fit.warnings().iter().any(|w| w.contains("diverged")),
        "{:?}",
        fit.health.lines()
    );
}

#[test]
fn defaults_known_not_to_mix_are_refused_until_thin_is_given() {
    let model = Funnel::neal();
    let refused = Sampling::with_sampler(SamplerKind::MhBfgs).run(&model);
    match refused {
        Err(RunError::Settings(m)) => assert!(m.contains("--thin"), "{m}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    let thinned = Sampling::with_sampler(SamplerKind::MhBfgs)
        .thin(2)
        .draws(20)
        .warmup(20)
        .chains(1)
        .run(&model);
    assert!(thinned.is_ok(), "{:?}", thinned.err());
}

#[test]
fn invalid_settings_are_errors_before_anything_runs() {
    match Sampling::new().draws(2).run(&Funnel::neal()) {
        Err(RunError::Settings(m)) => assert!(m.contains("--draws"), "{m}"),
        other => panic!("expected a settings error, got {other:?}"),
    }
}

/// A correlated Gaussian written once with `AutodiffModel`: the fit's
/// accessors read the draws they summarise.
struct Correlated;
impl AutodiffModel<2> for Correlated {
    fn potential<S: Scalar>(&self, x: &[S; 2]) -> S {
        // Σ = [[1, 0.9], [0.9, 1]]: Σ⁻¹ = [[1, −0.9], [−0.9, 1]] / 0.19.
        let q = x[0] * x[0] - S::from_f64(1.8) * x[0] * x[1] + x[1] * x[1];
        S::from_f64(0.5 / 0.19) * q
    }
}

#[test]
fn the_fit_reads_its_own_draws() {
    let model = PotentialModel::new("correlated", ForwardGradient::<_, 2>::new(Correlated))
        .with_names(["a", "b"])
        .unwrap();
    let fit = Sampling::new().seed(5).draws(400).run(&model).unwrap();
    assert!(fit.usable(), "{:?}", fit.health.lines());
    let chains = fit.draws_of("b").unwrap();
    assert_eq!(chains.len(), 4);
    assert!(chains.iter().all(|c| c.len() == 400));
    let all: Vec<f64> = chains.concat();
    let mean = all.iter().sum::<f64>() / all.len() as f64;
    assert_eq!(fit.mean("b").unwrap().to_bits(), mean.to_bits());
    // sd 1 from 1600 draws: ESS ≳ 400, MCSE of the sd ≲ 1/√(2·400) ≈ 0.035;
    // 0.15 is over 4 MCSE.
    assert!((fit.sd("a").unwrap() - 1.0).abs() < 0.15, "{}", fit.table());
    assert!(fit.table().contains("b "));
    assert!(fit.mean("c").is_none() && fit.draws_of("c").is_none());
}

/// A stop requested before the run: every chain ends at its first
/// iteration, nothing is kept, and the fit says it is unusable and why; a
/// stop from the model part-way keeps the draws made and warns.
#[test]
fn a_stopped_run_says_so() {
    use crate::run::{StopFlag, StopReason};
    let stop = StopFlag::new();
    stop.request(StopReason::Requested);
    let fit = Sampling::new()
        .stop_on(stop)
        .run(&Funnel::new(3).unwrap())
        .unwrap();
    assert!(fit.draws.interrupted.is_some());
    assert!(!fit.usable());
    assert!(
        fit.health
            .unusable
            .iter()
            .any(|m| m.contains("before any chain kept a draw")),
        "{:?}",
        fit.health.lines()
    );

    /// N(0, 1) that asks the run to stop at its 3000th evaluation.
    struct StopsPartWay {
        calls: std::sync::atomic::AtomicUsize,
        stop: StopFlag,
    }
    impl Model for StopsPartWay {
        fn name(&self) -> String {
            "stops".into()
        }
        fn dimension(&self) -> usize {
            1
        }
        fn potential_and_gradient(&self, x: &[f64], g: &mut [f64]) -> f64 {
            let n = self
                .calls
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if n == 3000 {
                self.stop.request(StopReason::Requested);
            }
            g[0] = x[0];
            0.5 * x[0] * x[0]
        }
    }
    let stop = StopFlag::new();
    let model = StopsPartWay {
        calls: 0.into(),
        stop: stop.clone(),
    };
    let fit = Sampling::with_sampler(SamplerKind::Hmc)
        .chains(2)
        .warmup(50)
        .draws(100_000)
        .stop_on(stop)
        .run(&model)
        .unwrap();
    let kept: Vec<usize> = fit.draws.chains.iter().map(|c| c.len()).collect();
    assert!(kept.iter().all(|&n| n < 100_000), "{kept:?}");
    assert!(
        fit.warnings()
            .iter()
            .any(|w| w.contains("fewer than asked")),
        "{:?}",
        fit.health.lines()
    );
}
