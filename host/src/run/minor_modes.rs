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
//! at the chains' optima (−U* + ½·log det Σ, from the secants), and a chain
//! whose optimum holds less than e^−[`MINOR_MODE_LOG_MASS`] of the best
//! one's mass, or that has no mass while the best has one, makes its start
//! again from the best chain's initial point: the same optimisation, then
//! its own draws. The run notes every such restart and its reason.

use crate::draws::{ChainRestart, RestartReason};

/// A chain starts again when its optimum's Laplace mass is below the best
/// chain's by more than this (in log units): e^−20 ≈ 2·10⁻⁹ of it, far below
/// what draws could show, and far above the optimiser's and the secants'
/// noise (equal optima agree to 10⁻⁶; a Gaussian's mass is exact to 10⁻⁶,
/// `laplace_log_mass_of_a_gaussian_is_exact` in the core), with room for a
/// Laplace approximation off by several nats on a skewed mode.
pub const MINOR_MODE_LOG_MASS: f64 = 20.0;

/// What a chain's start found, as [`restarts`] compares it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ChainStart {
    /// The Laplace log mass at its optimum (`None`: no secants there).
    pub laplace_log_mass: Option<f64>,
    /// Whether its optimisation found an optimum at all.
    pub at_optimum: bool,
}

/// For each chain, the restart it should make before drawing (`None`: keep
/// its start). The best chain is the one with the largest finite Laplace
/// mass (the first of equals). A chain restarts from the best chain's
/// initial point when its own mass is more than [`MINOR_MODE_LOG_MASS`]
/// below, or when it has no mass: its optimisation found no optimum (no
/// run of posteriordb's 43 × 3), or the secants at the point it ended were
/// refused (a secant with sᵀy ≤ 0 or not finite, or a pair lost in
/// conjugation; bball_drive_event_1 seeds 1 and 2, arma11 seeds 1
/// and 2, gp_pois_regr seed 1; in bball_drive_event_1 seed 2 that chain
/// ran its 500 warm-up draws leaving the point and sampled at a 7× smaller
/// step, 10× the gradients per draw). Without any mass (no secants,
/// n > M) nothing moves.
pub(crate) fn restarts(starts: &[ChainStart]) -> Vec<Option<ChainRestart>> {
    let best = starts
        .iter()
        .enumerate()
        .filter_map(|(k, c)| c.laplace_log_mass.filter(|v| v.is_finite()).map(|v| (k, v)))
        .fold(None, |best: Option<(usize, f64)>, (k, v)| match best {
            Some((_, b)) if b >= v => best,
            _ => Some((k, v)),
        });
    starts
        .iter()
        .map(|c| {
            let (k, top) = best?;
            let reason = match c.laplace_log_mass.filter(|v| v.is_finite()) {
                Some(mass) => {
                    let deficit = top - mass;
                    (deficit > MINOR_MODE_LOG_MASS).then_some(RestartReason::MinorMode {
                        log_mass_deficit: deficit,
                    })?
                }
                None if c.at_optimum => RestartReason::UnmeasuredOptimum,
                None => RestartReason::NoOptimum,
            };
            Some(ChainRestart {
                from_chain: k + 1,
                reason,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference table: each chain's Laplace mass and whether it found an
    /// optimum, and who restarts from whom (0-based) and why (deficits
    /// exact: differences of the inputs).
    #[test]
    fn chains_far_below_the_best_or_without_a_mass_restart_from_the_best() {
        const AT: bool = true;
        const fn minor(k: usize, log_mass_deficit: f64) -> Option<(usize, RestartReason)> {
            Some((k, RestartReason::MinorMode { log_mass_deficit }))
        }
        const NO_OPTIMUM: RestartReason = RestartReason::NoOptimum;
        const UNMEASURED: RestartReason = RestartReason::UnmeasuredOptimum;
        type Row<'a> = (
            &'a [(Option<f64>, bool)],
            &'a [Option<(usize, RestartReason)>],
        );
        let table: &[Row] = &[
            // All at one optimum: nobody moves.
            (&[(Some(-2104.0), AT); 4], &[None; 4]),
            // low_dim_gauss_mix seed 3: one chain 452 below.
            (
                &[
                    (Some(-2104.0), AT),
                    (Some(-2556.0), AT),
                    (Some(-2104.0), AT),
                    (Some(-2104.0), AT),
                ],
                &[None, minor(0, 452.0), None, None],
            ),
            // bball_drive_event_0 seed 2: three chains in the minor mode, the last best.
            (
                &[
                    (Some(-1960.5), AT),
                    (Some(-1960.5), AT),
                    (Some(-1960.5), AT),
                    (Some(-1898.0), AT),
                ],
                &[minor(3, 62.5), minor(3, 62.5), minor(3, 62.5), None],
            ),
            // Exactly at the threshold stays; just past it moves.
            (
                &[(Some(0.0), AT), (Some(-20.0), AT), (Some(-20.5), AT)],
                &[None, None, minor(0, 20.5)],
            ),
            // Chains without a (finite) mass move but never attract.
            (
                &[
                    (None, AT),
                    (Some(-10.0), AT),
                    (Some(-50.0), AT),
                    (Some(f64::NAN), AT),
                ],
                &[
                    Some((1, UNMEASURED)),
                    None,
                    minor(1, 40.0),
                    Some((1, UNMEASURED)),
                ],
            ),
            // A chain that found no optimum (bball_drive_event_1 seed 1's
            // chain 4 had no mass: its secants were refused).
            (
                &[
                    (Some(-6950.73), AT),
                    (Some(-6950.70), AT),
                    (Some(-6950.64), AT),
                    (None, false),
                ],
                &[None, None, None, Some((2, NO_OPTIMUM))],
            ),
            // No mass anywhere (a funnel, no secants, n > M): nothing happens.
            (&[(None, false), (None, false)], &[None, None]),
            (&[(None, false), (None, AT)], &[None, None]),
            // One chain: nothing either.
            (&[(Some(5.0), AT)], &[None]),
            // Ties go to the first best chain.
            (
                &[
                    (Some(-100.0), AT),
                    (Some(-1.0), AT),
                    (Some(-1.0), AT),
                    (None, false),
                ],
                &[minor(1, 99.0), None, None, Some((1, NO_OPTIMUM))],
            ),
        ];
        for (chains, expected) in table {
            let starts: Vec<_> = chains
                .iter()
                .map(|&(laplace_log_mass, at_optimum)| ChainStart {
                    laplace_log_mass,
                    at_optimum,
                })
                .collect();
            let got: Vec<_> = restarts(&starts)
                .into_iter()
                .map(|r| r.map(|r| (r.from_chain - 1, r.reason)))
                .collect();
            assert_eq!(&got, expected, "{chains:?}");
        }
    }
}
