//! Where a chain starts: the model's initial point perturbed until U and ∇U
//! are finite (Stan's rule), near a mode, or the ensembles' walkers.

use qnmc::Potential;

use crate::model::{ModelRng, PaddedModel};
use crate::run::samplers::ENSEMBLE_WALKERS;

/// Perturbed starting points tried per chain before the last one is used
/// as it is (Stan's rule: 100).
pub const START_TRIES: u64 = 100;

/// The model's initial point plus a perturbation uniform on (−r, r) in every
/// coordinate the sampler moves (auxiliary padding coordinates included,
/// NUTS's zero padding not), drawn again until U
/// and ∇U are finite there, at most [`START_TRIES`] times (Stan's rule: a
/// model whose support is not all of ℝⁿ, such as an ARMA model with
/// |θ| < 1, would otherwise start a chain where every trajectory diverges).
/// Returns the point and the evaluations of U and ∇U this took (counted
/// with the chain's gradients). With r = 0 the initial point; without
/// `check` (the minibatch samplers, which never pay for a full-data
/// gradient) the first perturbed point; both unevaluated.
pub(super) fn start_point<const D: usize>(
    target: &PaddedModel<'_, D>,
    r: f64,
    check: bool,
    rng: &mut ModelRng,
) -> (Box<[f64; D]>, u64) {
    let mut x = qnmc::in_place::zeroed_box::<[f64; D]>();
    target.write_initial_point(&mut x);
    if r <= 0.0 {
        return (x, 0);
    }
    let moved = target.moved_dimension();
    let initial = x[..moved].to_vec();
    let mut gradient = qnmc::in_place::zeroed_box::<[f64; D]>();
    let mut evaluations = 0;
    loop {
        for (v, x0) in x.iter_mut().zip(&initial) {
            let u: f64 = qnmc::Real::uniform_open_closed(rng);
            *v = x0 + r * (2.0 * u - 1.0);
        }
        if !check {
            return (x, 0);
        }
        evaluations += 1;
        let u = target.potential_and_gradient(&x, &mut gradient);
        if (u.is_finite() && gradient[..moved].iter().all(|g| g.is_finite()))
            || evaluations == START_TRIES
        {
            return (x, evaluations);
        }
    }
}

/// The start of a chain whose settings came from the pilot: the mode plus
/// uniform(−r, r) Laplace sds per coordinate (auxiliaries: uniform(−r, r)),
/// overdispersed for R̂ yet where the pilot's step size holds. From a start
/// far in the tails (Stan's uniform(−2, 2) on ark) the first unadjusted
/// steps overshoot to non-finite points and, with the state unchanged on
/// error, never stop doing so.
pub(super) fn start_near_mode<const D: usize>(
    mode: &[f64],
    sd: &[f64],
    r: f64,
    moved: usize,
    rng: &mut ModelRng,
) -> Box<[f64; D]> {
    let mut x = qnmc::in_place::zeroed_box::<[f64; D]>();
    for (i, v) in x.iter_mut().take(moved).enumerate() {
        let (centre, scale) = (
            mode.get(i).copied().unwrap_or(0.0),
            sd.get(i).copied().unwrap_or(1.0),
        );
        let u: f64 = qnmc::Real::uniform_open_closed(rng);
        *v = centre + r * scale * (2.0 * u - 1.0);
    }
    x
}

/// Ensemble starts: walker 0 at `first`, the others perturbed likewise (with
/// radius at least 0.5 so the walkers differ and the metric has pairs); the
/// second value counts the evaluations of U and ∇U this took.
pub(super) fn walker_starts<const D: usize>(
    target: &PaddedModel<'_, D>,
    first: &[f64; D],
    r: f64,
    rng: &mut ModelRng,
) -> (Box<[[f64; D]; ENSEMBLE_WALKERS]>, u64) {
    // Zeroed, and only the moved coordinates written: the walkers of a model
    // of n coordinates in 2^20 storage touch n coordinates' pages each.
    let moved = target.moved_dimension();
    let mut starts = qnmc::in_place::zeroed_box::<[[f64; D]; ENSEMBLE_WALKERS]>();
    starts[0][..moved].copy_from_slice(&first[..moved]);
    let mut evaluations = 0;
    for walker in starts.iter_mut().skip(1) {
        let (x, n) = start_point(target, r.max(0.5), true, rng);
        walker[..moved].copy_from_slice(&x[..moved]);
        evaluations += n;
    }
    (starts, evaluations)
}
