//! `gaussian-cov` end to end: a covariance CSV on disk, HMC through
//! `PaddedModel`, draws against `known_posterior()`.
//!
//! Each mean and sd must lie within 4 of our own Monte-Carlo standard errors
//! (`mcse_mean`, `mcse_sd` over 4 seeded chains) of the exact value; a
//! wrong precision (e.g. Σ used where Σ⁻¹ belongs) moves the sds by far more.

use qnmc::{Hmc, HmcSettings};
use qnmc_host::diagnostics::{mcse_mean, mcse_sd, mean, variance};
use qnmc_host::model::{Model, PaddedModel};
use qnmc_host::targets::GaussianCovariance;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

#[test]
fn hmc_draws_match_the_known_moments() {
    let path = std::env::temp_dir().join(format!("qnmc-gausscov-hmc-{}.csv", std::process::id()));
    // Variances 4, 1, 0.25 and correlations 0.6 (1–2), −0.3 (2–3).
    std::fs::write(&path, "a,b,c\n4,1.2,0\n1.2,1,-0.15\n0,-0.15,0.25\n").unwrap();
    let target = GaussianCovariance::from_csv(&path)
        .unwrap()
        .with_mean(vec![1.0, -1.0, 0.5])
        .unwrap();
    let known = target.known_posterior().unwrap();
    assert_eq!(known.sd, [2.0, 1.0, 0.5]);
    let padded = PaddedModel::<3>::new(&target).unwrap();
    let (chains, warmup, draws) = (4, 200, 3000);
    let mut samples = vec![vec![Vec::with_capacity(draws); chains]; 3];
    for (chain, seed) in (0..chains).zip(50u64..) {
        let mut rng = XorShiftRng::seed_from_u64(seed);
        let mut hmc =
            Hmc::<f64, 3>::new(HmcSettings::new(0.2, 13), padded.initial_point(), &padded).unwrap();
        for k in 0..warmup + draws {
            let _ = hmc.step(&padded, &mut rng);
            if k >= warmup {
                for (i, column) in samples.iter_mut().enumerate() {
                    column[chain].push(hmc.position()[i]);
                }
            }
        }
    }
    for (i, column) in samples.iter().enumerate() {
        let per_chain: Vec<&[f64]> = column.iter().map(Vec::as_slice).collect();
        let all = column.concat();
        let (m, sd) = (mean(&all), variance(&all).sqrt());
        let (mcse_m, mcse_s) = (mcse_mean(&per_chain), mcse_sd(&per_chain));
        assert!(
            (m - known.mean[i]).abs() < 4.0 * mcse_m,
            "x[{}]: mean {m} ± {mcse_m}, exact {}",
            i + 1,
            known.mean[i]
        );
        assert!(
            (sd - known.sd[i]).abs() < 4.0 * mcse_s,
            "x[{}]: sd {sd} ± {mcse_s}, exact {}",
            i + 1,
            known.sd[i]
        );
    }
}
