//! Metrics (mass matrices) of the Hamiltonian samplers: the kinetic energy
//! K(p) = ½ pᵀM⁻¹p, momentum draws p ~ N(0, M) and the velocity v = M⁻¹p.
//!
//! | metric | M⁻¹ | momentum p = M^{1/2} z | velocity cost |
//! |---|---|---|---|
//! | [`IdentityMetric`] | I | z | O(D) |
//! | [`DiagonalMetric`] | diag(σ²) | z / σ | O(D) |
//! | [`DenseMetric`] | Σ = L Lᵀ (Cholesky) | L⁻ᵀ z | O(D²) |
//! | [`LbfgsMetric`] | L-BFGS inverse Hessian H on a diagonal base | see its docs | O(rD), r ≤ 2M |
//!
//! A metric is a pure operator: nothing in [`Metric`] mutates it, so a sampler
//! can apply it inside a trajectory without scans or copies. Warm-up changes
//! it between draws through the metric's own setters (see
//! [`adaptation`](crate::adaptation)).
//!
//! Of the metrics only [`LbfgsMetric`] reads an
//! [`LbfgsMemory`](crate::lbfgs::LbfgsMemory) (to build itself from its
//! pairs); the others use nothing but the scalars, the kernels and the model
//! interface.

mod dense;
mod diagonal;
mod identity;
mod lbfgs;

pub use dense::DenseMetric;
pub use diagonal::DiagonalMetric;
pub use identity::IdentityMetric;
pub use lbfgs::LbfgsMetric;

use crate::real::Real;

/// A positive-definite mass matrix M, applied through the three operations a
/// Hamiltonian trajectory needs.
pub trait Metric<T: Real, const D: usize> {
    /// `p` ← M^{1/2} z: a momentum distributed N(0, M) when `z` is standard
    /// normal. The factor M^{1/2} is the one each metric documents (any F with
    /// F Fᵀ = M gives the same distribution; a fixed choice keeps chains
    /// reproducible).
    fn momentum_from_normals(&self, z: &[T; D], p: &mut [T; D]);

    /// `v` ← M⁻¹ p, the velocity dθ/dt of the Hamiltonian flow.
    fn velocity(&self, p: &[T; D], v: &mut [T; D]);

    /// [`momentum_from_normals`](Self::momentum_from_normals) for a sampler
    /// that moves only the first `n` ≤ D coordinates (a model of run-time
    /// dimension n in storage of D): `z` is zero from `n` on, and so must `p`
    /// come out. An override may leave `p[n..]` unwritten (the sampler keeps
    /// it zero) and should cost O(n), not O(D); with `n` = D it must give the
    /// bits of `momentum_from_normals`. The default applies the whole metric,
    /// which is right for every metric that maps vectors zero from `n` on to
    /// vectors zero from `n` on (each metric of this module does when it was
    /// learned from such vectors).
    #[inline]
    fn momentum_from_normals_leading(&self, z: &[T; D], p: &mut [T; D], n: usize) {
        let _ = n;
        self.momentum_from_normals(z, p);
    }

    /// [`velocity`](Self::velocity) on the first `n` coordinates, as
    /// [`momentum_from_normals_leading`](Self::momentum_from_normals_leading).
    #[inline]
    fn velocity_leading(&self, p: &[T; D], v: &mut [T; D], n: usize) {
        let _ = n;
        self.velocity(p, v);
    }

    /// K(p) = ½ pᵀM⁻¹p, given `v` = M⁻¹ p from [`velocity`](Self::velocity)
    /// (a fixed-order four-lane [`dot_wide`](crate::kernels::dot_wide): the
    /// same bits on every target). [`Nuts`](crate::Nuts) forms this same sum
    /// inside its leapfrog kick
    /// ([`half_kick_and_kinetic_energy`](crate::kernels::half_kick_and_kinetic_energy))
    /// instead of calling it, so an override should only change how ½ p·v is
    /// computed, not what it is.
    #[inline]
    fn kinetic_energy(&self, p: &[T; D], v: &[T; D]) -> T {
        T::HALF * crate::kernels::dot_wide(p, v)
    }
}
