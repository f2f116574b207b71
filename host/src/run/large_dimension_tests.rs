//! The samplers of any dimension ([`SamplerKind::runs_any_dimension`])
//! through the runner on a model above 1000 coordinates, which they run in
//! the storage of [`LARGE_DIMENSION`] moving only the model's coordinates.

use super::*;

/// Independent N(μᵢ, 1) in dimension [`N`], μᵢ = (i mod 5) − 2.
struct Wide;

const N: usize = 3000;

fn mu(i: usize) -> f64 {
    (i % 5) as f64 - 2.0
}

impl Model for Wide {
    fn name(&self) -> String {
        "wide".into()
    }
    fn dimension(&self) -> usize {
        N
    }
    fn potential_and_gradient(&self, x: &[f64], g: &mut [f64]) -> f64 {
        let mut u = 0.0;
        for (i, (gi, &xi)) in g.iter_mut().zip(x).enumerate() {
            *gi = xi - mu(i);
            u += 0.5 * *gi * *gi;
        }
        u
    }
}

/// Each sampler's draws, pooled over 2 chains of 300 kept draws after 300
/// of warm-up: the average over the 3000 coordinates of the error of the
/// mean, and of the variance. Averaged over 3000 independent coordinates,
/// the Monte-Carlo error of either average is below 0.01 even at an ESS of
/// 10 per coordinate (sd 1/√(3000 · 10) ≈ 0.006 for the mean, √2 times that
/// for the variance): the bounds 0.05 (mean) and 0.15 (variance, which also
/// holds the O(ε) bias of the samplers without a Metropolis test at the step
/// sizes below: SGLD's stationary variance is 1/(1 − ε/2) = 1.01 at ε = 0.02)
/// fail an implementation that moves the coordinates wrongly, not a
/// fluctuation.
///
/// The momentum samplers (SGHMC, SGNHT, SGRHMC; friction 1) run at
/// ε = 0.1: at 0.02 their integrated autocorrelation time is ~100 steps, and
/// the variance of 2 × 300 draws about their pooled mean comes out ~17 %
/// low (measured 0.84 for SGHMC). At ε = 0.1 (computed from the linear
/// recursion on N(0, 1)) τ ≈ 20 and the stationary variance is 1.003 for
/// SGHMC's position-first step and 1.11 for the Euler form of SGNHT and
/// SGRHMC (G = I: no pilot above 1000 coordinates), expected 0.97 and 1.08
/// from 2 × 300 draws.
#[test]
fn samplers_of_any_dimension_run_a_model_of_3000_coordinates() {
    assert_eq!(
        dimension_for(SamplerKind::Sgld, N).unwrap(),
        LARGE_DIMENSION
    );
    for kind in SamplerKind::ALL
        .into_iter()
        .filter(|k| k.runs_any_dimension())
    {
        let settings = RunSettings {
            chains: 2,
            warmup: 300,
            draws: 300,
            seed: 11,
            // The pilot stops at 1000 coordinates; the exact samplers adapt
            // from this step size.
            step_size: match kind {
                _ if kind.is_exact() => None,
                SamplerKind::Sghmc | SamplerKind::Sgnht | SamplerKind::Sgrhmc => Some(0.1),
                _ => Some(0.02),
            },
            ..RunSettings::default()
        };
        let draws = run(&Wide, kind, &settings, &Progress::hidden())
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(draws.names.len(), N, "{kind}");
        let mut mean_error = 0.0;
        let mut variance = 0.0;
        for i in 0..N {
            let values: Vec<f64> = draws
                .chains
                .iter()
                .flat_map(|c| c.values.chunks(N).map(move |row| row[i]))
                .collect();
            assert!(values.iter().all(|v| v.is_finite()), "{kind}: x[{i}]");
            let m = values.iter().sum::<f64>() / values.len() as f64;
            mean_error += (m - mu(i)) / N as f64;
            variance += values.iter().map(|v| (v - m) * (v - m)).sum::<f64>()
                / (values.len() - 1) as f64
                / N as f64;
        }
        assert!(mean_error.abs() < 0.05, "{kind}: mean error {mean_error}");
        assert!((variance - 1.0).abs() < 0.15, "{kind}: variance {variance}");
    }
}

/// A sampler that is not of any dimension refuses such a model and names
/// those that run it.
#[test]
fn other_samplers_refuse_a_model_above_1000_and_name_those_that_run_it() {
    let settings = RunSettings {
        chains: 1,
        warmup: 10,
        draws: 10,
        ..RunSettings::default()
    };
    let e = run(&Wide, SamplerKind::MhBfgs, &settings, &Progress::hidden()).unwrap_err();
    let message = e.to_string();
    assert!(
        message.contains("mh-bfgs")
            && message.contains("hmc-bfgs")
            && message.contains("hamcmc")
            && message.contains("sghmc"),
        "{message}"
    );
}
