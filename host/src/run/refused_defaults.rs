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
//! one yet, so without `--thin` they are refused. Each refusal is its
//! sampler's row ([`SamplerEntry::refuse_unthinned`](super::SamplerEntry::refuse_unthinned)).

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
    sampler
        .entry()
        .refuse_unthinned
        .and_then(|refuse| refuse(dimension, data_size))
}
