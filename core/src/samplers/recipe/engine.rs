//! The discretised recipe (Ma, Chen & Fox 2015, eq. 9) as one generic update.
//!
//! ```text
//! z ← z − ε (D(z) + Q(z)) ∇H̃(z) + ε Γ(z) + √ε · L(z) w,    w ~ N(0, I_k),
//! Γᵢ(z) = Σⱼ ∂(Dᵢⱼ(z) + Qᵢⱼ(z)) / ∂zⱼ,                      L Lᵀ = 2D(z) − ε B̂.
//! ```
//!
//! **Sign of Γ.** The paper prints eq. (6) and (9) as `z − ε[(D+Q)∇H + Γ]`, but
//! its own SDE (eq. 3) has drift `−(D+Q)∇H + Γ`, and its Algorithm 1 (gSGRHMC)
//! adds `+ε∇_θ(G^{−1/2})`. The Euler–Maruyama step of eq. (3) is the one above
//! (`+εΓ`); with the printed sign the recipe's own toy example (U = θ⁴ − 2θ²
//! with a state-dependent metric) samples the wrong density. The engine uses `+εΓ`.
//!
//! **Step-size convention.** Every sampler in [`crate::samplers::recipe`] uses
//! the recipe's ε: drift `−ε D∇U`, noise covariance `2εD` (e.g. SGLD is
//! θ ← θ − ε∇Ũ + √(2ε) w). Welling & Teh (2011) and Li et al. (2016) write
//! θ ← θ − (η/2)∇Ũ + √η w; their η is 2ε, so pass ε = η/2. Chen et al. (2014)
//! write the SGHMC noise as N(0, 2(C − B̂_Chen)η) with B̂_Chen = ½ηV̂; this is the
//! recipe's N(0, ε(2C − εB̂)) with ε = η and B̂ = V̂ (so B̂_Chen = ½εB̂).
//!
//! **HAMCMC is an instance.** With z = θ, D(θ) = H_t (the L-BFGS inverse
//! Hessian built from pairs that do not involve the point being moved), Q = 0 and
//! B̂ = 0, the update is θ_t = θ_{t−M} − εH_t∇Ũ + √(2ε) S_t w, S_t S_tᵀ = H_t, which is
//! [`crate::Hamcmc`]'s step; Γ = 0 because H_t is constant in the coordinates of
//! θ_{t−M} (that is the point of HAMCMC's index bookkeeping). The dense H_t does not
//! fit the diagonal operators of this module, so HAMCMC keeps its own file; with
//! a frozen diagonal memory it is [`super::Psgld`] with a fixed preconditioner.

use crate::error::Error;
use crate::real::Real;

/// The operators of one complete-recipe sampler at the current state z.
///
/// Vectors in z-space have length [`state_len`](Self::state_len); the noise
/// vector w has length [`noise_len`](Self::noise_len). Implementations may
/// assume the slices passed by [`recipe_update`] have exactly those lengths.
pub trait RecipeDynamics<T: Real> {
    /// Length n of the extended state z = (θ, r, ξ, …).
    fn state_len(&self) -> usize;
    /// Number k of standard normals consumed by one step.
    fn noise_len(&self) -> usize;
    /// Writes ∇H̃(z) into `out`, given the (minibatch) gradient ∇Ũ(θ) of the θ block.
    fn hamiltonian_gradient(&self, z: &[T], potential_gradient: &[T], out: &mut [T]);
    /// Writes D(z)·v into `out` (D positive semi-definite: the diffusion matrix).
    fn apply_diffusion(&self, z: &[T], v: &[T], out: &mut [T]);
    /// Writes Q(z)·v into `out` (Q skew-symmetric: the curl matrix).
    fn apply_curl(&self, z: &[T], v: &[T], out: &mut [T]);
    /// Writes Γ(z), Γᵢ = Σⱼ ∂ⱼ(Dᵢⱼ + Qᵢⱼ), into `out` (zeros for a naive sampler).
    fn correction(&self, z: &[T], out: &mut [T]);
    /// Writes L(z)·w into `out` (length n) for a factor with L Lᵀ = 2D(z) − εB̂,
    /// where ε = `step_size`. An indefinite 2D − εB̂ gives NaN entries.
    fn apply_noise_factor(&self, z: &[T], step_size: T, w: &[T], out: &mut [T]);
}

/// Scratch length [`recipe_update`] needs for a state of length `state_len`.
pub const fn recipe_work_len(state_len: usize) -> usize {
    2 * state_len
}

/// One step of the discretised recipe:
/// `out = z − ε(D + Q)∇H̃ + εΓ + √ε·L·w` (see the module docs for the sign of Γ).
///
/// `normals` holds the k = `noise_len()` standard normals, `work` at least
/// [`recipe_work_len`]`(n)` scratch entries. Mismatched lengths return
/// [`Error::InvalidSetting`]; nothing else is checked (the samplers check
/// finiteness of the result).
pub fn recipe_update<T: Real, Y: RecipeDynamics<T> + ?Sized>(
    dynamics: &Y,
    z: &[T],
    potential_gradient: &[T],
    step_size: T,
    normals: &[T],
    work: &mut [T],
    out: &mut [T],
) -> Result<(), Error> {
    let n = dynamics.state_len();
    if z.len() != n || out.len() != n || normals.len() != dynamics.noise_len() {
        return Err(Error::invalid(
            "state",
            "z and out of length state_len(), normals of length noise_len()",
        ));
    }
    let (grad_h, rest) = match work.split_at_mut_checked(n) {
        Some(split) => split,
        None => return Err(Error::invalid("work", "at least 2 * state_len() long")),
    };
    let tmp = match rest.get_mut(..n) {
        Some(t) => t,
        None => return Err(Error::invalid("work", "at least 2 * state_len() long")),
    };
    dynamics.hamiltonian_gradient(z, potential_gradient, grad_h);

    dynamics.apply_diffusion(z, grad_h, tmp);
    for ((o, &zi), &d) in out.iter_mut().zip(z).zip(tmp.iter()) {
        *o = zi - step_size * d;
    }
    dynamics.apply_curl(z, grad_h, tmp);
    for (o, &q) in out.iter_mut().zip(tmp.iter()) {
        *o -= step_size * q;
    }
    dynamics.correction(z, tmp);
    for (o, &g) in out.iter_mut().zip(tmp.iter()) {
        *o += step_size * g;
    }
    dynamics.apply_noise_factor(z, step_size, normals, tmp);
    let root = step_size.sqrt();
    for (o, &l) in out.iter_mut().zip(tmp.iter()) {
        *o += root * l;
    }
    Ok(())
}
