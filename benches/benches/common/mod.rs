//! What several benches share: a synthetic run of AR(1) draws.

use qnmc::random::standard_normal;
use qnmc_host::draws::{ChainDraws, RunDraws};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

/// A run of `chains` chains of `draws` draws of `quantities` quantities
/// named `x[1]`, `x[2]`, …, each a Gaussian AR(1) chain (φ = 0.3, so a bulk
/// ESS near that of a NUTS run), and an AR(1) `lp__` per chain, fixed by
/// `seed`. The draws are made quantity after quantity, chain after chain,
/// then the `lp__` chains (the order of the `diagnostics` bench's first
/// versions, whose numbers it keeps).
pub fn ar1_run(quantities: usize, chains: usize, draws: usize, seed: u64) -> RunDraws {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let mut ar1 = || -> Vec<f64> {
        let mut x = standard_normal::<f64, _>(&mut rng);
        (0..draws)
            .map(|_| {
                x = 0.3 * x + 0.95 * standard_normal::<f64, _>(&mut rng);
                x
            })
            .collect()
    };
    let columns: Vec<Vec<Vec<f64>>> = (0..quantities)
        .map(|_| (0..chains).map(|_| ar1()).collect())
        .collect();
    let chains = (0..chains)
        .map(|k| ChainDraws {
            chain_id: k + 1,
            lp: ar1(),
            accept_stat: vec![0.8; draws],
            step_size: vec![0.3; draws],
            n_leapfrog: vec![15; draws],
            divergent: vec![false; draws],
            // Row-major: draw i, quantity j at i·quantities + j.
            values: (0..draws)
                .flat_map(|i| columns.iter().map(move |q| q[k][i]))
                .collect(),
            ..ChainDraws::default()
        })
        .collect();
    RunDraws {
        target: "ar1".into(),
        sampler: "synthetic".into(),
        names: (1..=quantities).map(|j| format!("x[{j}]")).collect(),
        chains,
        ..RunDraws::default()
    }
}
