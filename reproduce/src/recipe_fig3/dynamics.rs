//! The four samplers of the recipe's Fig. 3 as [`RecipeDynamics`] on a
//! slice of length n = K·V, run by the core's shared engine
//! [`recipe_update`], followed by boundary reflection θ ← |θ|.
//!
//! **Why not the core samplers.** The core's `Sgld`, `Sghmc`, `Sgrld` and
//! `Sgrhmc` hold their state in arrays of a compile-time dimension, and the
//! LDA state has n = K·V ≈ 1.5·10⁵ coordinates (their run-time-dimension
//! storage is being written separately); none of them has a reflection step,
//! which the expanded-mean θ > 0 needs. The operators below are the same
//! formulas as those samplers' (read from `core/src/samplers/recipe/`), and
//! the update itself is the core's engine, so only D, Q, Γ and the noise
//! factor are written here. Recipe convention for ε (drift −εD∇U, noise
//! covariance 2εD), Γ entering with +ε (see the engine's docs), B̂ = 0.
//!
//! * SGLD, eq. (19): z = θ, D = I, Q = 0, Γ = 0.
//! * SGHMC, eq. (18) with C = M = I: z = (θ, r), D = diag(0, C),
//!   Q = [[0, −I], [I, 0]], Γ = 0 (the engine's Euler form: the gradient at
//!   the old θ, as the core's `SghmcUpdate::RecipeEuler`).
//! * SGRLD, eq. (20) with G(θ)⁻¹ = diag(θ): D = diag(θ), Q = 0,
//!   Γ_i = ∂θ_i/∂θ_i = 1; that is Patterson & Teh's expanded-mean update
//!   θ ← θ + ε(α − θ + s·Σ E[n_dkw − θ_kw n_dk·/θ_k·]) + N(0, 2εθ) with
//!   their step 2ε.
//! * SGRHMC, eq. (23) / Algorithm 1 with G(θ)⁻¹ = diag(θ), S = G^{−½} =
//!   diag(√θ): D = diag(0, θ), Q = [[0, −S], [S, 0]], Γ = (0, ∂_i√θ_i) =
//!   (0, 1/(2√θ_i)).
//!
//! **Reflection.** After each update every θ_i < 0 becomes −θ_i and, for the
//! two Hamiltonian samplers, its momentum r_i changes sign (a mirror at
//! θ_i = 0, as HMC reflects at a boundary: Neal 2011, §5.1; the paper says
//! only "boundary reflection"). A θ_i of exactly 0 is set to the smallest
//! positive normal number, so that 1/θ stays finite.

use qnmc::samplers::recipe::engine::{RecipeDynamics, recipe_update, recipe_work_len};

use super::corpus::Draws;

/// The samplers compared in Fig. 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// SGLD, eq. (19), D = I.
    Sgld,
    /// SGHMC, eq. (18), C = M = I.
    Sghmc,
    /// SGRLD, eq. (20), G⁻¹ = diag(θ).
    Sgrld,
    /// SGRHMC, eq. (23) / Algorithm 1, G⁻¹ = diag(θ).
    Sgrhmc,
}

impl Method {
    /// The paper's four, in its legend's order.
    pub const ALL: [Method; 4] = [Method::Sgld, Method::Sghmc, Method::Sgrld, Method::Sgrhmc];

    /// Short label.
    pub fn label(&self) -> &'static str {
        match self {
            Method::Sgld => "SGLD",
            Method::Sghmc => "SGHMC",
            Method::Sgrld => "SGRLD",
            Method::Sgrhmc => "SGRHMC",
        }
    }

    /// Whether the state carries a momentum r beside θ.
    pub fn has_momentum(&self) -> bool {
        matches!(self, Method::Sghmc | Method::Sgrhmc)
    }
}

/// D, Q, Γ and the noise factor of one method on n = `dim` coordinates.
struct LdaDynamics {
    method: Method,
    dim: usize,
}

impl RecipeDynamics<f64> for LdaDynamics {
    fn state_len(&self) -> usize {
        if self.method.has_momentum() {
            2 * self.dim
        } else {
            self.dim
        }
    }
    fn noise_len(&self) -> usize {
        self.dim
    }
    fn hamiltonian_gradient(&self, z: &[f64], g: &[f64], out: &mut [f64]) {
        let n = self.dim;
        out[..n].copy_from_slice(g);
        if self.method.has_momentum() {
            // H = U(θ) + ½rᵀr (M = I).
            out[n..].copy_from_slice(&z[n..]);
        }
    }
    fn apply_diffusion(&self, z: &[f64], v: &[f64], out: &mut [f64]) {
        let n = self.dim;
        match self.method {
            Method::Sgld => out.copy_from_slice(v),
            Method::Sgrld => {
                for ((o, &x), &vi) in out.iter_mut().zip(&z[..n]).zip(v) {
                    *o = x * vi;
                }
            }
            Method::Sghmc => {
                out[..n].fill(0.0);
                out[n..].copy_from_slice(&v[n..]);
            }
            Method::Sgrhmc => {
                out[..n].fill(0.0);
                for i in 0..n {
                    out[n + i] = z[i] * v[n + i];
                }
            }
        }
    }
    fn apply_curl(&self, z: &[f64], v: &[f64], out: &mut [f64]) {
        let n = self.dim;
        match self.method {
            Method::Sgld | Method::Sgrld => out.fill(0.0),
            Method::Sghmc => {
                for i in 0..n {
                    out[i] = -v[n + i];
                    out[n + i] = v[i];
                }
            }
            Method::Sgrhmc => {
                for i in 0..n {
                    let s = z[i].sqrt();
                    out[i] = -s * v[n + i];
                    out[n + i] = s * v[i];
                }
            }
        }
    }
    fn correction(&self, z: &[f64], out: &mut [f64]) {
        let n = self.dim;
        match self.method {
            Method::Sgld | Method::Sghmc => out.fill(0.0),
            Method::Sgrld => out.fill(1.0),
            Method::Sgrhmc => {
                out[..n].fill(0.0);
                for i in 0..n {
                    out[n + i] = 0.5 / z[i].sqrt();
                }
            }
        }
    }
    fn apply_noise_factor(&self, z: &[f64], _eps: f64, w: &[f64], out: &mut [f64]) {
        // L Lᵀ = 2D (B̂ = 0).
        let n = self.dim;
        let root2 = std::f64::consts::SQRT_2;
        match self.method {
            Method::Sgld => {
                for (o, &wi) in out.iter_mut().zip(w) {
                    *o = root2 * wi;
                }
            }
            Method::Sgrld => {
                for ((o, &x), &wi) in out.iter_mut().zip(&z[..n]).zip(w) {
                    *o = (2.0 * x).sqrt() * wi;
                }
            }
            Method::Sghmc => {
                out[..n].fill(0.0);
                for i in 0..n {
                    out[n + i] = root2 * w[i];
                }
            }
            Method::Sgrhmc => {
                out[..n].fill(0.0);
                for i in 0..n {
                    out[n + i] = (2.0 * z[i]).sqrt() * w[i];
                }
            }
        }
    }
}

/// One chain of a method on the LDA state: z = θ or (θ, r), r starting at 0.
pub struct LdaChain {
    dynamics: LdaDynamics,
    state: Vec<f64>,
    proposal: Vec<f64>,
    work: Vec<f64>,
    normals: Vec<f64>,
}

impl LdaChain {
    /// A chain of `method` from θ = `theta` (every entry > 0), r = 0.
    pub fn new(method: Method, theta: &[f64]) -> Self {
        let dim = theta.len();
        let dynamics = LdaDynamics { method, dim };
        let len = dynamics.state_len();
        let mut state = vec![0.0; len];
        state[..dim].copy_from_slice(theta);
        LdaChain {
            dynamics,
            state,
            proposal: vec![0.0; len],
            work: vec![0.0; recipe_work_len(len)],
            normals: vec![0.0; dim],
        }
    }

    /// The current θ.
    pub fn theta(&self) -> &[f64] {
        &self.state[..self.dynamics.dim]
    }

    /// The current momentum (empty for the Langevin samplers).
    pub fn momentum(&self) -> &[f64] {
        &self.state[self.dynamics.dim..]
    }

    /// One recipe step with ∇U(θ) = `gradient` and step ε, then the
    /// reflection. Returns the number of coordinates reflected, or `Err` with
    /// the state unchanged when the result is not finite.
    pub fn step(
        &mut self,
        gradient: &[f64],
        step: f64,
        draws: &mut Draws,
    ) -> Result<usize, String> {
        for x in &mut self.normals {
            *x = draws.normal();
        }
        recipe_update(
            &self.dynamics,
            &self.state,
            gradient,
            step,
            &self.normals,
            &mut self.work,
            &mut self.proposal,
        )
        .map_err(|e| e.to_string())?;
        if !self.proposal.iter().all(|x| x.is_finite()) {
            return Err("non-finite state".into());
        }
        let reflected = reflect(&mut self.proposal, self.dynamics.dim);
        std::mem::swap(&mut self.state, &mut self.proposal);
        Ok(reflected)
    }
}

/// θ_i ← |θ_i| for i < `dim` (and r_i ← −r_i where a momentum follows θ
/// in `state`); a θ_i of 0 becomes [`f64::MIN_POSITIVE`]. Returns how many
/// coordinates were negative.
pub fn reflect(state: &mut [f64], dim: usize) -> usize {
    let (theta, momentum) = state.split_at_mut(dim);
    let mut count = 0;
    for (i, x) in theta.iter_mut().enumerate() {
        if *x < 0.0 {
            *x = -*x;
            if let Some(r) = momentum.get_mut(i) {
                *r = -*r;
            }
            count += 1;
        }
        if *x == 0.0 {
            *x = f64::MIN_POSITIVE;
        }
    }
    count
}
