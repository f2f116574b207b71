//! Helpers shared by the targets' unit tests: the shared data folder,
//! finite-difference gradient checks, seeded random points.

use crate::model::{Model, ModelRng};
use rand_core::{Rng, SeedableRng};
use std::path::PathBuf;

/// The shared data folder (`shared/data` beside the repository, or
/// `$QNMC_SHARED_DATA`), or `None` after one `skipped <test>: …` line; with
/// `QNMC_REQUIRE_SHARED_DATA=1` (CI) a missing folder fails the test
/// ([`crate::shared_data::for_test`]).
pub(crate) fn shared_data(test: &str) -> Option<PathBuf> {
    crate::shared_data::for_test(test)
}

/// A uniform number in [−1, 1).
pub(crate) fn uniform(rng: &mut ModelRng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// A point with coordinates uniform in [−scale, scale).
pub(crate) fn random_point(dimension: usize, scale: f64, seed: u64) -> Vec<f64> {
    let mut rng = ModelRng::seed_from_u64(seed);
    (0..dimension).map(|_| scale * uniform(&mut rng)).collect()
}

/// The largest relative error of `model`'s gradient at `x` against central
/// finite differences with step `h`, relative to max(1, ‖∇U‖∞). Central
/// differences have error O(h²·U‴) plus rounding O(ε·|U|/h).
pub(crate) fn gradient_error(model: &dyn Model, x: &[f64], h: f64) -> f64 {
    let n = model.dimension();
    let mut g = vec![0.0; n];
    let _ = model.potential_and_gradient(x, &mut g);
    let scale = g.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let mut scratch = vec![0.0; n];
    let mut worst = 0.0f64;
    for i in 0..n {
        let mut plus = x.to_vec();
        let mut minus = x.to_vec();
        plus[i] += h;
        minus[i] -= h;
        let up = model.potential_and_gradient(&plus, &mut scratch);
        let down = model.potential_and_gradient(&minus, &mut scratch);
        let numeric = (up - down) / (2.0 * h);
        worst = worst.max((numeric - g[i]).abs() / scale);
    }
    worst
}
