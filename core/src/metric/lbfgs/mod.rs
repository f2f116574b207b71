//! [`LbfgsMetric`]: the quasi-Newton metric, the L-BFGS inverse Hessian on a
//! diagonal base, in an eigen-form whose operations are O(rD) with independent
//! dot products. The formulas, costs and an example are on the type (this
//! module is private; the type is `qnmc::metric::LbfgsMetric`).
//!
//! The type, its operations and its [`Metric`] implementation are here; the
//! build of the eigen-form from an [`LbfgsMemory`] is `build.rs`, and the
//! tests against the dense BFGS recursion are `tests.rs`.

use super::Metric;

mod build;

use crate::error::{Error, require_non_negative};
#[cfg(doc)]
use crate::kernels::dot_wide;
use crate::kernels::groups::{group_coefficients, group_size, store_group, with_group};
use crate::kernels::{
    at_length, axpy_many, axpy_many_then_scale, dot_wide_many, store_and_dot_wide_many,
};
use crate::lbfgs::LbfgsMemory;
use crate::real::Real;
use build::Workspace;

/// The quasi-Newton metric: inverse mass H = diag(√b) (I + U diag(λ) Uᵀ)
/// diag(√b), the BFGS inverse Hessian of up to `M` pairs on the diagonal base
/// diag(b), in an eigen-form whose operations are O(rD).
///
/// # What it is
///
/// The inverse mass M⁻¹ = H is the BFGS inverse-Hessian approximation built
/// from up to `M` curvature pairs (sᵢ, yᵢ) of an
/// [`LbfgsMemory`] (oldest first), started from the diagonal H⁰ = diag(b)
/// instead of the memory's γI (b: e.g. the posterior variances). Exactly:
///
/// - in scaled coordinates s̃ = s / √b, ỹ = y ∘ √b (componentwise), H̃ is the
///   BFGS inverse Hessian of the pairs (s̃, ỹ) with H̃⁰ = I, and
///   H = diag(√b) H̃ diag(√b) (the same matrix as the dense BFGS recursion
///   H⁺ = (I − ρ s yᵀ) H (I − ρ y sᵀ) + ρ s sᵀ, ρ = 1/sᵀy, from H⁰ = diag(b));
/// - a pair with s̃ᵀỹ not finite or ≤ 0, or whose s̃ᵀs̃ or ỹᵀỹ is not a
///   finite positive number, is skipped and counted
///   ([`pairs_skipped`](Self::pairs_skipped));
/// - H̃ = I + [S̃ Ỹ] W [S̃ Ỹ]ᵀ by the compact representation of Byrd, Nocedal
///   & Schnabel (1994, eq. 2.6) with base I:
///   W = [[R⁻ᵀ(Dg + ỸᵀỸ)R⁻¹, −R⁻ᵀ], [−R⁻¹, 0]], R upper triangular with
///   Rᵢⱼ = s̃ᵢᵀỹⱼ (i ≤ j), Dg = diag(s̃ᵢᵀỹᵢ);
/// - [S̃ Ỹ] = Q T by modified Gram–Schmidt with one re-orthogonalisation pass
///   (a column whose remainder is below 10⁻¹⁰ (`f64`) or 10⁻⁵ (`f32`) of its
///   norm is dropped: it lies in the span of the earlier ones), the small
///   symmetric matrix I + T W Tᵀ is diagonalised by the cyclic Jacobi method
///   (fixed sweep order, at most 50 sweeps) as E diag(μ) Eᵀ, and U = Q E. So
///
///   H̃ = I + U diag(λ) Uᵀ,  Uᵀ U = I,  r = rank ≤ min(2M, D) directions,
///   μₖ = 1 + λₖ the eigenvalues of H̃ on span(U) (H̃ is the identity on
///   its orthogonal complement);
///
/// - every μₖ is clamped to ≥ ε (machine epsilon), so H is positive definite
///   whatever round-off does; if the small matrices are not finite (pairs so
///   ill-conditioned that R⁻¹ overflows) the oldest pair is left out and the
///   build repeated, counted as skipped;
/// - optional truncation: with a rank tolerance τ > 0, the directions with
///   |ln μₖ| ≤ τ are dropped (each changes the metric by less than a factor
///   e^τ); τ = 0 keeps them all.
///
/// # Operations
///
/// All O(rD): r dot products that do not depend on each other, each a
/// [`dot_wide`], then r axpys.
///
/// | operation | formula |
/// |---|---|
/// | velocity v = H p | √b ∘ (x + U(λ ∘ Uᵀx)), x = √b ∘ p |
/// | momentum p = M^{1/2} z | (1/√b) ∘ (z + U((μ^{−1/2} − 1) ∘ Uᵀz)) = diag(1/√b) H̃^{−1/2} z |
/// | S z, S Sᵀ = H | √b ∘ (z + U((μ^{1/2} − 1) ∘ Uᵀz)) = diag(√b) H̃^{1/2} z |
/// | B v = H⁻¹ v | (1/√b) ∘ (x + U((1/μ − 1) ∘ Uᵀx)), x = v / √b |
/// | log det H | Σ ln bᵢ + Σₖ ln μₖ |
///
/// H̃^{−1/2} is the symmetric square root, so M^{1/2}(M^{1/2})ᵀ = H⁻¹ = M
/// exactly. Compared with the two-loop recursion ([`LbfgsMemory::apply_inverse_hessian`],
/// 2m dot products each waiting for the previous one), the r dot products here
/// are independent and each runs on four accumulators, and with truncation r
/// counts only the directions that matter.
///
/// # Costs and storage
///
/// A build ([`new`](Self::new), [`rebuild`](Self::rebuild)) costs
/// O(M²D + M³). The metric holds 2M·D scalars for U, 3D for b, √b and 1/√b,
/// and about 19M² scalars of build scratch, all in the struct: a rebuild
/// works in place and puts only O(M) scalars on the stack. Every result is
/// bit for bit the same on every target (fixed summation orders, no FMA).
///
/// # Example
///
/// ```
/// use qnmc::lbfgs::{LbfgsMemory, LbfgsSettings};
/// use qnmc::metric::{LbfgsMetric, Metric};
///
/// // Pairs of U = ½ θᵀ diag(1, 4) θ: y = diag(1, 4) s.
/// let mut memory = LbfgsMemory::<f64, 2, 4>::new(LbfgsSettings::with_max_pairs(4)).unwrap();
/// memory.try_push(&[1.0, 0.0], &[1.0, 0.0]);
/// memory.try_push(&[0.0, 1.0], &[0.0, 4.0]);
/// let metric = LbfgsMetric::new(&[1.0, 1.0], &memory, 0.0).unwrap();
/// let mut v = [0.0; 2];
/// metric.velocity(&[1.0, 4.0], &mut v); // H = diag(1, 1/4)
/// assert!((v[0] - 1.0).abs() < 1e-12 && (v[1] - 1.0).abs() < 1e-12);
/// assert_eq!(metric.rank(), 2);
/// assert!((metric.log_det_inverse_mass() - 0.25f64.ln()).abs() < 1e-12);
///
/// // With τ = 0.1 the direction e₁ (eigenvalue 1) is dropped.
/// let truncated = LbfgsMetric::new(&[1.0, 1.0], &memory, 0.1).unwrap();
/// assert_eq!(truncated.rank(), 1);
/// assert!((truncated.eigenvalues()[0] - 0.25).abs() < 1e-12);
/// ```
#[derive(Debug, Clone)]
#[cfg_attr(target_arch = "x86_64", repr(C, align(64)))]
pub struct LbfgsMetric<T, const D: usize, const M: usize> {
    base: [T; D],
    sqrt_base: [T; D],
    inv_sqrt_base: [T; D],
    /// The first `rank` slots (of 2M, flattened) hold the orthonormal U.
    directions: [[[T; D]; M]; 2],
    /// μₖ = 1 + λₖ, decreasing.
    eigenvalues: [[T; M]; 2],
    /// λₖ = μₖ − 1 (velocity).
    velocity_coefficients: [[T; M]; 2],
    /// μₖ^{−1/2} − 1 (momentum).
    momentum_coefficients: [[T; M]; 2],
    /// μₖ^{1/2} − 1 (S·z).
    sqrt_coefficients: [[T; M]; 2],
    /// 1/μₖ − 1 (B·v).
    hessian_coefficients: [[T; M]; 2],
    rank: usize,
    log_det_base: T,
    log_det: T,
    rank_tolerance: T,
    pairs_used: usize,
    pairs_skipped: usize,
    work: Workspace<T, M>,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize, const M: usize] LbfgsMetric<T, D, M> {
    base, sqrt_base, inv_sqrt_base, directions, eigenvalues, velocity_coefficients, momentum_coefficients,
    sqrt_coefficients, hessian_coefficients, rank, log_det_base, log_det, rank_tolerance, pairs_used,
    pairs_skipped, work
});

impl<T: Real, const D: usize, const M: usize> LbfgsMetric<T, D, M> {
    /// In place, the value of [`identity`](Self::identity) (no copy of the
    /// metric on the stack).
    pub fn set_identity(&mut self) {
        crate::in_place::zero(self);
        self.base = [T::ONE; D];
        self.sqrt_base = [T::ONE; D];
        self.inv_sqrt_base = [T::ONE; D];
        self.eigenvalues = [[T::ONE; M]; 2];
    }

    /// H = I: base b = 1, no pairs, τ = 0.
    pub fn identity() -> Self {
        LbfgsMetric {
            base: [T::ONE; D],
            sqrt_base: [T::ONE; D],
            inv_sqrt_base: [T::ONE; D],
            directions: [[[T::ZERO; D]; M]; 2],
            eigenvalues: [[T::ONE; M]; 2],
            velocity_coefficients: [[T::ZERO; M]; 2],
            momentum_coefficients: [[T::ZERO; M]; 2],
            sqrt_coefficients: [[T::ZERO; M]; 2],
            hessian_coefficients: [[T::ZERO; M]; 2],
            rank: 0,
            log_det_base: T::ZERO,
            log_det: T::ZERO,
            rank_tolerance: T::ZERO,
            pairs_used: 0,
            pairs_skipped: 0,
            work: Workspace::new(),
        }
    }

    /// The metric of the pairs in `memory` on the base diag(`base`), keeping
    /// the directions with |ln μ| > `rank_tolerance` (0: all). Fails with
    /// [`Error::InvalidSetting`] when an entry of `base` is not finite and
    /// positive (setting `"base"`) or `rank_tolerance` is not finite and
    /// non-negative (setting `"rank_tolerance"`). Pairs never cause an
    /// error: unusable ones are skipped and counted.
    pub fn new(
        base: &[T; D],
        memory: &LbfgsMemory<T, D, M>,
        rank_tolerance: T,
    ) -> Result<Self, Error> {
        let mut metric = Self::identity();
        metric.rebuild(base, memory, rank_tolerance)?;
        Ok(metric)
    }

    /// Rebuilds the metric in place from `base`, the pairs of `memory` and
    /// `rank_tolerance` (as [`new`](Self::new)), O(M²D + M³), without large
    /// stack buffers. The arguments are validated before anything is
    /// written: on error the metric is unchanged.
    pub fn rebuild(
        &mut self,
        base: &[T; D],
        memory: &LbfgsMemory<T, D, M>,
        rank_tolerance: T,
    ) -> Result<(), Error> {
        require_non_negative(rank_tolerance, "rank_tolerance")?;
        let mut log_det_base = T::ZERO;
        for &b in base {
            let root = b.sqrt();
            if !(b.is_finite() && b > T::ZERO && root > T::ZERO && (T::ONE / root).is_finite()) {
                return Err(Error::invalid(
                    "base",
                    "finite and > 0, with a finite 1/sqrt",
                ));
            }
            log_det_base += b.ln();
        }
        self.rank_tolerance = rank_tolerance;
        self.log_det_base = log_det_base;
        for i in 0..D {
            let root = base[i].sqrt();
            self.base[i] = base[i];
            self.sqrt_base[i] = root;
            self.inv_sqrt_base[i] = T::ONE / root;
        }
        // Leaving out all of the (at most M) usable pairs always succeeds.
        for left_out in 0..=M {
            if self.try_build(memory, left_out) {
                return Ok(());
            }
        }
        self.set_base_only(memory.len());
        Ok(())
    }

    /// `out` ← post ∘ (x + U (coefficients ∘ Uᵀx)), x = pre ∘ `input`.
    ///
    /// ck = ak (uk · x), up to [`group_size`] directions per pass over x (4,
    /// or 8 with AVX2; the same bits as one [`dot_wide`] each: the r sums are
    /// independent), the first pass also forming x; then x += Σk ck uk, as
    /// many directions per pass, each xi gaining its terms in order k (the
    /// same bits as r axpys in order), the last pass also multiplying by
    /// `post`. For r ≤ 4 that is two passes over memory.
    #[inline]
    fn apply(
        &self,
        input: &[T; D],
        pre: Option<&[T; D]>,
        coefficients: &[[T; M]; 2],
        post: Option<&[T; D]>,
        out: &mut [T; D],
        len: usize,
    ) {
        let len = len.min(D);
        let directions = self.directions.as_flattened();
        let rank = self.rank.min(directions.len());
        let (directions, coefficients) =
            (&directions[..rank], &coefficients.as_flattened()[..rank]);
        if rank == 0 {
            at_length!(len, D, |len| {
                for i in 0..len {
                    let x = pre.map_or(input[i], |w| w[i] * input[i]);
                    out[i] = post.map_or(x, |w| x * w[i]);
                }
            });
            return;
        }
        let mut c = [[T::ZERO; M]; 2];
        let c = &mut c.as_flattened_mut()[..rank];
        let group = group_size::<D>();
        let first = rank.min(group);
        let (u0, rest) = directions.split_at(first);
        let (c0, c_rest) = c.split_at_mut(first);
        match pre {
            Some(w) => with_group!(u0, |u| store_group(
                c0,
                store_and_dot_wide_many(u, |i| w[i] * input[i], out, len)
            )),
            None => with_group!(u0, |u| store_group(
                c0,
                store_and_dot_wide_many(u, |i| input[i], out, len)
            )),
        }
        for (u, ck) in rest.chunks(group).zip(c_rest.chunks_mut(group)) {
            with_group!(u, |u| store_group(ck, dot_wide_many(u, out, len)));
        }
        for (ck, a) in c.iter_mut().zip(coefficients) {
            *ck = *a * *ck;
        }
        let last = (rank - 1) / group * group;
        let (u_body, u_last) = directions.split_at(last);
        let (c_body, c_last) = c.split_at(last);
        for (u, ck) in u_body.chunks(group).zip(c_body.chunks(group)) {
            with_group!(u, |u| axpy_many(group_coefficients(ck), u, out, len));
        }
        match post {
            Some(w) => with_group!(u_last, |u| axpy_many_then_scale(
                group_coefficients(c_last),
                u,
                w,
                out,
                len
            )),
            None => with_group!(u_last, |u| axpy_many(
                group_coefficients(c_last),
                u,
                out,
                len
            )),
        }
    }

    /// `out` ← S z with S = diag(√b) H̃^{1/2}, so S Sᵀ = H: maps z ~ N(0, I)
    /// to a draw of N(0, H). O(rD).
    pub fn apply_sqrt_inverse_hessian(&self, z: &[T; D], out: &mut [T; D]) {
        self.apply(
            z,
            None,
            &self.sqrt_coefficients,
            Some(&self.sqrt_base),
            out,
            D,
        );
    }

    /// `out` ← B v = H⁻¹ v = M v (the Hessian approximation), O(rD).
    pub fn apply_hessian(&self, v: &[T; D], out: &mut [T; D]) {
        self.apply(
            v,
            Some(&self.inv_sqrt_base),
            &self.hessian_coefficients,
            Some(&self.inv_sqrt_base),
            out,
            D,
        );
    }

    /// log det H = log det M⁻¹ = Σ ln bᵢ + Σₖ ln μₖ (kept directions).
    #[inline]
    pub fn log_det_inverse_mass(&self) -> T {
        self.log_det
    }

    /// r: the number of directions U holds (≤ min(2M, D)).
    #[inline]
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The eigenvalues μₖ = 1 + λₖ of H̃ along the kept directions, largest
    /// first (length [`rank`](Self::rank)); H̃ is 1 on the rest.
    pub fn eigenvalues(&self) -> &[T] {
        self.eigenvalues
            .as_flattened()
            .get(..self.rank)
            .unwrap_or(&[])
    }

    /// The k-th direction uₖ (unit vector, in scaled coordinates: H =
    /// diag(√b)(I + Σₖ λₖ uₖuₖᵀ)diag(√b)), or `None` for k ≥ rank.
    pub fn direction(&self, k: usize) -> Option<&[T; D]> {
        if k < self.rank {
            self.directions.as_flattened().get(k)
        } else {
            None
        }
    }

    /// `out[i]` ← √(Hᵢᵢ / (H⁻¹)ᵢᵢ), the diagonal scale a draws-and-gradients
    /// estimate √(Var θᵢ / Var ∂ᵢU) would find for a Gaussian with covariance
    /// H (bᵢ itself when H is diagonal). O(rD).
    pub fn geometric_diagonal(&self, out: &mut [T; D]) {
        let mu = self.eigenvalues.as_flattened();
        for i in 0..D {
            let (mut h, mut inv) = (T::ONE, T::ONE);
            for k in 0..self.rank {
                let u = self.directions.as_flattened()[k][i];
                h += (mu[k] - T::ONE) * u * u;
                inv += (T::ONE / mu[k] - T::ONE) * u * u;
            }
            out[i] = self.base[i] * (h / inv).sqrt();
        }
    }

    /// The diagonal base b of H⁰ = diag(b).
    #[inline]
    pub fn base(&self) -> &[T; D] {
        &self.base
    }

    /// τ of the last build.
    #[inline]
    pub fn rank_tolerance(&self) -> T {
        self.rank_tolerance
    }

    /// Pairs the last build used.
    #[inline]
    pub fn pairs_used(&self) -> usize {
        self.pairs_used
    }

    /// Pairs the last build skipped (s̃ᵀỹ, s̃ᵀs̃ or ỹᵀỹ not finite and
    /// positive, or left out after a numerical failure).
    #[inline]
    pub fn pairs_skipped(&self) -> usize {
        self.pairs_skipped
    }
}

impl<T: Real, const D: usize, const M: usize> Metric<T, D> for LbfgsMetric<T, D, M> {
    /// p = diag(1/√b) H̃^{−1/2} z (symmetric square root), O(rD).
    #[inline]
    fn momentum_from_normals(&self, z: &[T; D], p: &mut [T; D]) {
        self.momentum_from_normals_leading(z, p, D);
    }

    /// v = H p, O(rD).
    #[inline]
    fn velocity(&self, p: &[T; D], v: &mut [T; D]) {
        self.velocity_leading(p, v, D);
    }

    /// O(rn): the directions of a metric learned from vectors zero from n on
    /// are zero there too.
    #[inline]
    fn momentum_from_normals_leading(&self, z: &[T; D], p: &mut [T; D], n: usize) {
        self.apply(
            z,
            None,
            &self.momentum_coefficients,
            Some(&self.inv_sqrt_base),
            p,
            n,
        );
    }

    /// O(rn), as [`momentum_from_normals_leading`](Self::momentum_from_normals_leading).
    #[inline]
    fn velocity_leading(&self, p: &[T; D], v: &mut [T; D], n: usize) {
        self.apply(
            p,
            Some(&self.sqrt_base),
            &self.velocity_coefficients,
            Some(&self.sqrt_base),
            v,
            n,
        );
    }
}

#[cfg(test)]
mod tests;
