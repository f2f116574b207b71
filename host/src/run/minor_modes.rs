//! Chains that start in a minor mode. With the secants at the optimum
//! (the default; `--no-optimum-secants` turns them off) each chain's first metric is the curvature of the
//! mode its L-BFGS start found, and a chain whose optimisation ended in a
//! minor mode samples that mode accurately and may never leave it: on
//! posteriordb, low_dim_gauss_mix (one chain of four, U* 2 556 against
//! 2 104) and bball_drive_event_0 (three of four, U* 1 960.7 against
//! 1 898.0) failed their R̂ and z-tests that way, where the path's looser
//! metric had let the chains out (docs/NUTS.md, "Minor modes").
//!
//! Before any chain draws, the runner compares the Laplace approximations
//! at the chains' optima (−U* + ½·log det Σ, from the secants; chains
//! without secants are left alone), and a chain whose optimum holds less
//! than e^−[`MINOR_MODE_LOG_MASS`] of the best one's mass makes its start
//! again from the best chain's initial point: the same optimisation, then
//! its own draws. The run notes every such restart.

/// A chain starts again when its optimum's Laplace mass is below the best
/// chain's by more than this (in log units): e^−20 ≈ 2·10⁻⁹ of it, far below
/// what draws could show, and far above the optimiser's and the secants'
/// noise (equal optima agree to 10⁻⁶; a Gaussian's mass is exact to 10⁻⁶,
/// `laplace_log_mass_of_a_gaussian_is_exact` in the core), with room for a
/// Laplace approximation off by several nats on a skewed mode.
pub const MINOR_MODE_LOG_MASS: f64 = 20.0;

/// For each chain, `Some((best, deficit))` when it should start again from
/// chain `best`'s initial point (0-based), its Laplace log mass being
/// `deficit` below that chain's; `None` to keep its start. Chains without a
/// mass (`None`: no secants) neither move nor are moved to.
pub(crate) fn restarts(masses: &[Option<f64>]) -> Vec<Option<(usize, f64)>> {
    let best = masses
        .iter()
        .enumerate()
        .filter_map(|(k, m)| m.filter(|v| v.is_finite()).map(|v| (k, v)))
        .fold(None, |best: Option<(usize, f64)>, (k, v)| match best {
            Some((_, b)) if b >= v => best,
            _ => Some((k, v)),
        });
    masses
        .iter()
        .map(|m| {
            let (k, top) = best?;
            let deficit = top - m.filter(|v| v.is_finite())?;
            (deficit > MINOR_MODE_LOG_MASS).then_some((k, deficit))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference table: the masses of the chains, and who restarts from
    /// whom with what deficit (exact: differences of the inputs).
    #[test]
    fn only_chains_far_below_the_best_restart_and_from_the_best() {
        type Row = (&'static [Option<f64>], &'static [Option<(usize, f64)>]);
        let table: &[Row] = &[
            // All at one optimum: nobody moves.
            (&[Some(-2104.0); 4], &[None; 4]),
            // low_dim_gauss_mix seed 3: one chain 452 below.
            (
                &[Some(-2104.0), Some(-2556.0), Some(-2104.0), Some(-2104.0)],
                &[None, Some((0, 452.0)), None, None],
            ),
            // bball seed 2: three chains in the minor mode, the last chain best.
            (
                &[Some(-1960.5), Some(-1960.5), Some(-1960.5), Some(-1898.0)],
                &[Some((3, 62.5)), Some((3, 62.5)), Some((3, 62.5)), None],
            ),
            // Exactly at the threshold stays; just past it moves.
            (
                &[Some(0.0), Some(-20.0), Some(-20.5)],
                &[None, None, Some((0, 20.5))],
            ),
            // Chains without secants neither move nor attract.
            (
                &[None, Some(-10.0), Some(-50.0), Some(f64::NAN)],
                &[None, None, Some((1, 40.0)), None],
            ),
            // Nobody has a mass: nothing happens; one chain: nothing either.
            (&[None, None], &[None, None]),
            (&[Some(5.0)], &[None]),
            // Ties go to the first best chain.
            (
                &[Some(-100.0), Some(-1.0), Some(-1.0)],
                &[Some((1, 99.0)), None, None],
            ),
        ];
        for (masses, expected) in table {
            assert_eq!(&restarts(masses), expected, "{masses:?}");
        }
    }
}
