//! Defaults refused (by `qnmc run` and by [`Sampling`](crate::fit::Sampling)):
//! sampler settings known not to give a usable run, refused with the reason
//! and what to give instead, in the CLI's option names (rather than a run
//! that exits 0 with a table that looks fine or a wall of warnings).
//!
//! Measured with `qnmc check --target logreg-heart|logreg-german --sampler S`
//! (seed 2016, 4 chains, 1000 draws; see docs/DEFAULTS.md):
//!
//! | sampler | default run | with `--thin 50` |
//! |---|---|---|
//! | mh-bfgs | R-hat 1.12 (heart), 1.62 (german) | passes both |
//! | amagold | R-hat 2.08 (heart), 3.45 (german) | passes heart, R-hat 1.08 on german |
//!
//! Both need a run length chosen for the target; neither has an automatic
//! one yet, so without `--thin` they are refused.

use super::SamplerKind;

/// Dimension from which MH-BFGS's random walk needs `--thin`.
pub const MH_BFGS_MAX_UNTHINNED_DIMENSION: usize = 9;

/// Why `sampler` may not run without a thinning chosen by the user
/// (`thin_given` false) on a target of `dimension` with `data_size` points,
/// if so.
pub fn refused_defaults(
    sampler: SamplerKind,
    thin_given: bool,
    dimension: usize,
    data_size: Option<usize>,
) -> Option<String> {
    if thin_given {
        return None;
    }
    match sampler {
        SamplerKind::MhBfgs if dimension > MH_BFGS_MAX_UNTHINNED_DIMENSION => Some(format!(
            "mh-bfgs needs --thin in {dimension} dimensions: its random-walk proposal moves \
             O(1/dimension) of the posterior per iteration, and 1000 unthinned draws do not mix \
             (measured R-hat 1.12 on logreg-heart, 1.62 on logreg-german; --thin 50 passed \
             `qnmc check` on both). Give --thin N, or use nuts"
        )),
        SamplerKind::Amagold if data_size.is_some() => Some(
            "amagold needs --thin on a target with data: the minibatch noise in its energy keeps \
             the adapted step small (about 0.003 on logreg-heart) and 1000 unthinned draws do not \
             mix (measured R-hat 2.1 on logreg-heart, 3.5 on logreg-german; --thin 50 passed \
             `qnmc check` on logreg-heart but not on logreg-german). Give --thin N, or use l2mc \
             (its full-batch form) or nuts"
                .into(),
        ),
        _ => None,
    }
}
