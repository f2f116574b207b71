//! Shared pieces of the dense references: conversions, the random draws (through
//! the core's public generators, so the streams match), the Metropolis test and
//! the error measures used by the tests.

use nalgebra::{DMatrix, DVector};
use qnmc::Real;
use qnmc::random::{fill_standard_normal, fill_standard_normal_ziggurat};
use rand_core::Rng;

/// D standard normals from `rng`, drawn exactly as the core draws them
/// ([`qnmc::random::fill_standard_normal`] on a buffer of length D).
pub fn draw_normals<R: Rng + ?Sized>(rng: &mut R, dim: usize) -> DVector<f64> {
    let mut buf = vec![0.0f64; dim];
    fill_standard_normal(rng, &mut buf);
    DVector::from_vec(buf)
}

/// `dim` standard normals drawn as the core's NUTS draws its momenta (the
/// ziggurat).
pub fn draw_normals_ziggurat<R: Rng + ?Sized>(rng: &mut R, dim: usize) -> DVector<f64> {
    let mut buf = vec![0.0f64; dim];
    fill_standard_normal_ziggurat(rng, &mut buf);
    DVector::from_vec(buf)
}

/// One uniform on (0, 1], drawn as the core draws it.
pub fn draw_uniform<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    <f64 as Real>::uniform_open_closed(rng)
}

/// An array as a dense vector.
pub fn dvec<const D: usize>(x: &[f64; D]) -> DVector<f64> {
    DVector::from_column_slice(x)
}

/// A dense vector as an array (panics on a length mismatch).
pub fn arr<const D: usize>(x: &DVector<f64>) -> [f64; D] {
    let mut out = [0.0; D];
    out.copy_from_slice(x.as_slice());
    out
}

/// `true` when every entry is finite.
pub fn finite(x: &DVector<f64>) -> bool {
    x.iter().all(|v| v.is_finite())
}

/// Energy error above which a proposal is a divergence (the value the core
/// documents, Stan's 1000).
pub const DIVERGENCE: f64 = 1000.0;

/// Outcome of one Metropolis test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    /// Proposal accepted.
    pub accepted: bool,
    /// Non-finite energy or energy error above [`DIVERGENCE`] (always rejected).
    pub divergent: bool,
    /// H₁ − H₀.
    pub energy_error: f64,
}

/// The Metropolis test as the core documents it: exactly one uniform u ∈ (0, 1]
/// per test (also for a divergence), accept iff u ≤ min(1, exp(H₀ − H₁)).
pub fn metropolis<R: Rng + ?Sized>(h0: f64, h1: f64, rng: &mut R) -> Decision {
    let u = draw_uniform(rng);
    let energy_error = h1 - h0;
    if !energy_error.is_finite() || energy_error > DIVERGENCE {
        return Decision {
            accepted: false,
            divergent: true,
            energy_error,
        };
    }
    let probability = (-energy_error).exp().min(1.0);
    Decision {
        accepted: u <= probability,
        divergent: false,
        energy_error,
    }
}

/// What one reference draw did (the fields the core's `StepStats` also has).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DenseStep {
    /// Accepted (always for HAMCMC).
    pub accepted: bool,
    /// Divergent proposal.
    pub divergent: bool,
    /// Gradient evaluations spent.
    pub gradient_evaluations: u32,
    /// Pairs refused by the curvature rule during the draw.
    pub pairs_skipped: u32,
    /// The step size of the draw.
    pub step_size: f64,
}

/// ‖A − B‖_F / ‖B‖_F.
pub fn rel_frobenius(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).norm() / b.norm()
}

/// |a − b| / max(|b|, 1): a relative error with an absolute floor, so that
/// `coordinate_error(a, b) ≤ tol` means |a − b| ≤ tol·max(|b|, 1).
pub fn coordinate_error(a: f64, b: f64) -> f64 {
    if a == b {
        return 0.0;
    }
    let e = (a - b).abs() / b.abs().max(1.0);
    if e.is_nan() { f64::INFINITY } else { e }
}

/// The largest [`coordinate_error`] over two equal-length slices.
pub fn max_coordinate_error(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "length mismatch");
    a.iter()
        .zip(b)
        .map(|(x, y)| coordinate_error(*x, *y))
        .fold(0.0, f64::max)
}

/// log det of a symmetric positive definite matrix by Cholesky (panics if the
/// matrix is not numerically positive definite).
pub fn log_det_spd(a: &DMatrix<f64>) -> f64 {
    let chol = a
        .clone()
        .cholesky()
        .expect("matrix is not positive definite");
    2.0 * chol.l().diagonal().iter().map(|v| v.ln()).sum::<f64>()
}

/// log |det A| by LU.
pub fn log_abs_det_lu(a: &DMatrix<f64>) -> f64 {
    let lu = a.clone().lu();
    lu.u().diagonal().iter().map(|v| v.abs().ln()).sum::<f64>()
}
