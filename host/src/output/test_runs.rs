//! Small synthetic runs for the output tests: independent N(0, 1) draws.

use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

use crate::draws::{ChainDraws, RunDraws};
use crate::model::KnownPosterior;

/// `chains` chains of `draws` independent N(0, 1) draws of `quantities`
/// quantities `x[1]`…; 10 gradient evaluations per draw, one second of
/// sampling, and the first draw of chain 1 marked divergent.
pub(crate) fn gaussian_run(chains: usize, draws: usize, quantities: usize, seed: u64) -> RunDraws {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let mut normal = move || {
        // Box–Muller; 1 − u keeps the logarithm finite.
        let u = 1.0 - (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let v = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let chains = (0..chains)
        .map(|c| {
            let values: Vec<f64> = (0..draws * quantities).map(|_| normal()).collect();
            let lp = (0..draws)
                .map(|i| {
                    let row = &values[i * quantities..(i + 1) * quantities];
                    -0.5 * row.iter().map(|x| x * x).sum::<f64>()
                })
                .collect();
            let mut divergent = vec![false; draws];
            if c == 0 && draws > 0 {
                divergent[0] = true;
            }
            ChainDraws {
                chain_id: c + 1,
                seed: seed + c as u64,
                lp,
                accept_stat: vec![0.9; draws],
                step_size: vec![0.5; draws],
                n_leapfrog: vec![10; draws],
                divergent,
                values,
                values_from_row: 0,
                warmup_draws: 100,
                warmup_seconds: 0.5,
                lp_seconds: 0.0,
                sampling_seconds: 1.0,
                gradient_evaluations: 10 * draws as u64,
                tree_depth: Vec::new(),
                energy: Vec::new(),
                adapted_metric: None,
                restart: None,
                saved_warmup: Default::default(),
                iterations: 100 + draws as u64,
                interrupted: false,
            }
        })
        .collect();
    RunDraws {
        target: "test-gaussian".into(),
        sampler: "exact".into(),
        settings: vec![("warmup".into(), "0".into())],
        names: (1..=quantities).map(|i| format!("x[{i}]")).collect(),
        chains,
        target_acceptance: None,
        max_tree_depth: None,
        ..RunDraws::default()
    }
}

/// The truth for [`gaussian_run`]: every quantity N(0, 1).
pub(crate) fn known_standard_normal(quantities: usize) -> KnownPosterior {
    KnownPosterior {
        source: "analytic".into(),
        mean: vec![0.0; quantities],
        sd: vec![1.0; quantities],
        mean_mcse: None,
        sd_mcse: None,
        gaussian_marginals: true,
    }
}
