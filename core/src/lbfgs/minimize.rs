//! [`minimize`]: L-BFGS minimisation of U with a backtracking (Armijo) line
//! search, in fixed storage. The warm-up of NUTS with the quasi-Newton metric
//! uses it, as Pathfinder (Zhang et al. 2022) does, to reach the posterior's
//! bulk in a few dozen gradients and to start with the curvature pairs of the
//! optimisation path, which for a quadratic are conjugate (exact line search
//! makes L-BFGS conjugate gradients) and so give the exact inverse Hessian on
//! the directions the path explored.

use super::memory::LbfgsMemory;
use crate::kernels::{all_finite, dot};
use crate::real::Real;
use crate::target::Potential;

/// Where and why [`minimize`] stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MinimizeOutcome<T, const D: usize> {
    /// The last accepted point.
    pub position: [T; D],
    /// ∇U there.
    pub gradient: [T; D],
    /// U there.
    pub potential: T,
    /// Accepted iterations.
    pub iterations: u32,
    /// Target evaluations (line-search trials included).
    pub gradient_evaluations: u32,
    /// The relative decrease of U fell below the tolerance (as opposed to the
    /// iteration limit, or a line search that found no decrease).
    pub converged: bool,
    /// ‖∇U‖ at the start: with the last point's ‖∇U‖, how far the gradient
    /// came down (by orders of magnitude at a true optimum; not at all where
    /// a vanishing relative decrease stopped the path in a valley that falls
    /// without end, see `adaptation::lbfgs_start`).
    pub start_gradient_norm: T,
}

impl<T: Real, const D: usize> MinimizeOutcome<T, D> {
    /// ‖∇U‖ at the last point over ‖∇U‖ at the start (∞ when the start's
    /// gradient was 0 and the last point's is not; 0 when both are).
    pub fn gradient_reduction(&self) -> T {
        let last = dot(&self.gradient, &self.gradient).sqrt();
        if last == T::ZERO {
            T::ZERO
        } else {
            last / self.start_gradient_norm
        }
    }
}

/// Minimises U from `start` by L-BFGS, at most `max_iterations` iterations,
/// keeping the path's curvature pairs in `memory` (cleared first; its
/// curvature policy decides which pairs enter, its `InitialScaling` the base
/// γ). Stops when an iteration decreases U by less than `relative_tolerance`
/// × max(|U|, 1), or when a line search of 40 halvings finds no decrease.
///
/// Returns `None` when U or ∇U is not finite at `start`. Never panics: a
/// non-finite trial point only shortens the step.
///
/// ```
/// use qnmc::Potential;
/// use qnmc::lbfgs::{minimize, InitialScaling, LbfgsMemory, LbfgsSettings};
///
/// /// U = ½ (x₀ − 1)² + 50 (x₁ + 2)²: minimum at (1, −2), condition number 100.
/// struct Bowl;
/// impl Potential<f64, 2> for Bowl {
///     fn potential_and_gradient(&self, x: &[f64; 2], g: &mut [f64; 2]) -> f64 {
///         *g = [x[0] - 1.0, 100.0 * (x[1] + 2.0)];
///         0.5 * (x[0] - 1.0).powi(2) + 50.0 * (x[1] + 2.0).powi(2)
///     }
/// }
/// let mut settings = LbfgsSettings::with_max_pairs(4);
/// settings.scaling = InitialScaling::NewestPair(1.0);
/// let mut memory = LbfgsMemory::<f64, 2, 4>::new(settings).unwrap();
/// let out = minimize(&Bowl, &[0.0, 0.0], &mut memory, 100, 1e-14).unwrap();
/// assert!((out.position[0] - 1.0).abs() < 1e-5 && (out.position[1] + 2.0).abs() < 1e-5);
/// assert!(out.gradient_evaluations < 60, "{}", out.gradient_evaluations);
/// ```
pub fn minimize<T: Real, const D: usize, const M: usize, P: Potential<T, D>>(
    target: &P,
    start: &[T; D],
    memory: &mut LbfgsMemory<T, D, M>,
    max_iterations: u32,
    relative_tolerance: T,
) -> Option<MinimizeOutcome<T, D>> {
    minimize_within(
        target,
        start,
        memory,
        max_iterations,
        u32::MAX,
        relative_tolerance,
    )
}

/// [`minimize`] that also stops, unconverged, after the iteration during
/// which its target evaluations reached `max_evaluations` (line searches
/// that need many halvings, as down a funnel's neck, make iterations
/// costly).
pub fn minimize_within<T: Real, const D: usize, const M: usize, P: Potential<T, D>>(
    target: &P,
    start: &[T; D],
    memory: &mut LbfgsMemory<T, D, M>,
    max_iterations: u32,
    max_evaluations: u32,
    relative_tolerance: T,
) -> Option<MinimizeOutcome<T, D>> {
    minimize_observed(
        target,
        start,
        memory,
        max_iterations,
        max_evaluations,
        relative_tolerance,
        |_, _| true,
    )
}

/// [`minimize_within`] that hands each accepted iterate (the outcome so far,
/// the last one included) and the memory holding the path's pairs up to it
/// to `observe`, which returns whether to go on: `false` stops the
/// minimisation there (converged only if that iterate met the tolerance).
/// The observer may use the memory (e.g. draw from the Gaussian its inverse
/// Hessian describes, as the warm-up's Pathfinder-style choice of start
/// does) but not change its pairs; the path is then the same as without it.
pub fn minimize_observed<T: Real, const D: usize, const M: usize, P: Potential<T, D>>(
    target: &P,
    start: &[T; D],
    memory: &mut LbfgsMemory<T, D, M>,
    max_iterations: u32,
    max_evaluations: u32,
    relative_tolerance: T,
    mut observe: impl FnMut(&MinimizeOutcome<T, D>, &mut LbfgsMemory<T, D, M>) -> bool,
) -> Option<MinimizeOutcome<T, D>> {
    memory.clear();
    let mut x = *start;
    let mut g = [T::ZERO; D];
    if !all_finite(&x) {
        return None;
    }
    let mut f = target.potential_and_gradient(&x, &mut g);
    let mut out = MinimizeOutcome {
        position: x,
        gradient: g,
        potential: f,
        iterations: 0,
        gradient_evaluations: 1,
        converged: false,
        start_gradient_norm: dot(&g, &g).sqrt(),
    };
    if !f.is_finite() || !all_finite(&g) {
        return None;
    }
    let mut direction = [T::ZERO; D];
    let mut trial = [T::ZERO; D];
    let mut trial_gradient = [T::ZERO; D];
    let armijo = T::from_f64(1e-4);
    for _ in 0..max_iterations {
        memory.apply_inverse_hessian(&g, &mut direction);
        let mut slope = T::ZERO;
        for i in 0..D {
            direction[i] = -direction[i];
            slope += g[i] * direction[i];
        }
        let mut step = T::ONE;
        if !(slope.is_finite() && slope < T::ZERO) {
            // Not a descent direction (round-off on a bad memory): restart
            // from steepest descent.
            memory.clear();
            direction = g;
            slope = T::ZERO;
            for v in direction.iter_mut() {
                *v = -*v;
                slope -= *v * *v;
            }
            if !(slope.is_finite() && slope < T::ZERO) {
                out.converged = slope == T::ZERO;
                return Some(out);
            }
        }
        if memory.is_empty() {
            // First step (or a restart): at most unit length.
            let length = dot(&direction, &direction).sqrt();
            if length > T::ONE {
                step = T::ONE / length;
            }
        }
        let mut accepted = None;
        for _ in 0..40 {
            for i in 0..D {
                trial[i] = x[i] + step * direction[i];
            }
            if all_finite(&trial) {
                let ft = target.potential_and_gradient(&trial, &mut trial_gradient);
                out.gradient_evaluations += 1;
                if ft.is_finite() && all_finite(&trial_gradient) && ft <= f + armijo * step * slope
                {
                    accepted = Some(ft);
                    break;
                }
            }
            step *= T::HALF;
        }
        let Some(ft) = accepted else {
            return Some(out);
        };
        let mut s = [T::ZERO; D];
        let mut y = [T::ZERO; D];
        for i in 0..D {
            s[i] = trial[i] - x[i];
            y[i] = trial_gradient[i] - g[i];
        }
        memory.try_push(&s, &y);
        let decrease = f - ft;
        x = trial;
        g = trial_gradient;
        f = ft;
        out.position = x;
        out.gradient = g;
        out.potential = f;
        out.iterations += 1;
        let scale = if f.abs() > T::ONE { f.abs() } else { T::ONE };
        let go_on = observe(&out, memory);
        if decrease <= relative_tolerance * scale {
            out.converged = true;
            return Some(out);
        }
        if !go_on {
            return Some(out);
        }
        if out.gradient_evaluations >= max_evaluations {
            return Some(out);
        }
    }
    Some(out)
}
