//! [`LbfgsMetric`]: the quasi-Newton metric, the L-BFGS inverse Hessian on a
//! diagonal base, in an eigen-form whose operations are O(rD) with independent
//! dot products. The formulas, costs and an example are on the type (this
//! module is private; the type is `qnmc::metric::LbfgsMetric`).

use super::Metric;
use crate::error::{Error, require_non_negative};
use crate::lbfgs::LbfgsMemory;
use crate::linalg::{
    axpy, axpy_many, axpy_many_then_scale, dot_wide, dot_wide_many, store_and_dot_wide_many,
};
use crate::real::Real;
use crate::symmetric_eigen::{SquareStorage, jacobi};
use crate::vector_extensions::at_length;

/// Directions per pass of [`LbfgsMetric`]'s O(rD) operations: 4 where the
/// kernels run on 16-byte vectors (SSE2, wasm) or scalars (Cortex-M, RISC-V),
/// whose registers hold 4 directions' partial sums without spilling.
const GROUP: usize = 4;

/// Directions per pass where the kernels run with AVX2 (x86-64): sixteen
/// 32-byte registers hold 10 directions' sums with the vector and a product
/// (12 in use), and more independent additions are in flight. 8 took 45 ns
/// less per leapfrog step than 4 at D = 100 and rank 20; 10 (rank 20 in two
/// passes instead of 8 + 8 + 4) took the standalone velocity from 234–243 to
/// 224–231 ns. With SSE2's registers 8 would spill (100 ns more). Bits do not
/// depend on the group size: each dot product keeps its lanes, each axpy its
/// order.
#[cfg(any(runtime_avx2, all(target_arch = "x86_64", target_feature = "avx2")))]
const WIDE_GROUP: usize = 10;

/// The directions per pass for the kernels this program runs on vectors of
/// length D.
#[inline]
fn group_size<const D: usize>() -> usize {
    #[cfg(runtime_avx2)]
    if D >= crate::vector_extensions::MIN_WIDE_LENGTH && crate::vector_extensions::use_avx2() {
        return WIDE_GROUP;
    }
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    return WIDE_GROUP;
    #[allow(unreachable_code)]
    GROUP
}

/// Runs `$body` with `$u` bound to an array of references to the 1 to
/// [`GROUP`] (x86-64: `WIDE_GROUP`) directions of the slice `$group` (a const length for the
/// kernels); nothing for an empty or longer slice, which the callers never
/// pass.
macro_rules! with_group {
    ($group:expr, |$u:ident| $body:expr) => {
        match $group {
            #[cfg(target_arch = "x86_64")]
            [a, b, c, d, e, f, g, h, i, j] => {
                let $u = [a, b, c, d, e, f, g, h, i, j];
                $body
            }
            #[cfg(target_arch = "x86_64")]
            [a, b, c, d, e, f, g, h, i] => {
                let $u = [a, b, c, d, e, f, g, h, i];
                $body
            }
            #[cfg(target_arch = "x86_64")]
            [a, b, c, d, e, f, g, h] => {
                let $u = [a, b, c, d, e, f, g, h];
                $body
            }
            #[cfg(target_arch = "x86_64")]
            [a, b, c, d, e, f, g] => {
                let $u = [a, b, c, d, e, f, g];
                $body
            }
            #[cfg(target_arch = "x86_64")]
            [a, b, c, d, e, f] => {
                let $u = [a, b, c, d, e, f];
                $body
            }
            #[cfg(target_arch = "x86_64")]
            [a, b, c, d, e] => {
                let $u = [a, b, c, d, e];
                $body
            }
            [a, b, c, d] => {
                let $u = [a, b, c, d];
                $body
            }
            [a, b, c] => {
                let $u = [a, b, c];
                $body
            }
            [a, b] => {
                let $u = [a, b];
                $body
            }
            [a] => {
                let $u = [a];
                $body
            }
            _ => {}
        }
    };
}

/// `out` ← `values` (equal lengths by construction; no panic path).
#[inline]
fn set<T: Copy, const K: usize>(out: &mut [T], values: [T; K]) {
    for (o, v) in out.iter_mut().zip(values) {
        *o = v;
    }
}

/// The first K coefficients of a group as an array (missing ones zero).
#[inline]
fn group_coefficients<T: Real, const K: usize>(c: &[T]) -> [T; K] {
    core::array::from_fn(|k| c.get(k).copied().unwrap_or(T::ZERO))
}

/// A 2M × 2M matrix in fixed storage (const generics cannot say 2M): entry
/// (i, j) is `self.0[i / M][i % M][j / M][j % M]`, reached through the
/// flattened rows.
#[derive(Debug, Clone)]
struct Square<T, const M: usize>([[[[T; M]; 2]; M]; 2]);

// SAFETY: its one field is an array of `Real`s, which are `ZeroValid`.
#[allow(unsafe_code)]
unsafe impl<T: Real, const M: usize> crate::in_place::ZeroValid for Square<T, M> {}

impl<T: Real, const M: usize> Square<T, M> {
    fn zero() -> Self {
        Square([[[[T::ZERO; M]; 2]; M]; 2])
    }

    /// Row i (length 2M); i < 2M.
    #[inline]
    fn row(&self, i: usize) -> &[T] {
        self.0.as_flattened()[i].as_flattened()
    }

    #[inline]
    fn row_mut(&mut self, i: usize) -> &mut [T] {
        self.0.as_flattened_mut()[i].as_flattened_mut()
    }

    /// `true` when the leading n × n block is finite.
    fn leading_block_finite(&self, n: usize) -> bool {
        (0..n).all(|i| self.row(i).iter().take(n).all(|x| x.is_finite()))
    }
}

impl<T: Real, const M: usize> SquareStorage<T> for Square<T, M> {
    #[inline]
    fn get(&self, i: usize, j: usize) -> T {
        self.row(i)[j]
    }

    #[inline]
    fn set(&mut self, i: usize, j: usize, value: T) {
        self.row_mut(i)[j] = value;
    }

    fn set_identity(&mut self, n: usize) {
        for (i, row) in self.0.as_flattened_mut().iter_mut().enumerate() {
            for (j, x) in row.as_flattened_mut().iter_mut().enumerate() {
                *x = if i == j && i < n { T::ONE } else { T::ZERO };
            }
        }
    }
}

/// Build scratch: every small matrix of the compact representation.
#[derive(Debug, Clone)]
struct Workspace<T, const M: usize> {
    /// R, upper triangular, Rᵢⱼ = s̃ᵢᵀỹⱼ.
    r: [[T; M]; M],
    /// R⁻¹, upper triangular.
    r_inv: [[T; M]; M],
    /// Dg + ỸᵀỸ.
    c: [[T; M]; M],
    /// T of [S̃ Ỹ] = Q T (row: basis vector, column: S̃ columns then Ỹ
    /// columns); then the eigenvectors E.
    t: Square<T, M>,
    /// A = T_S R⁻ᵀ.
    a: Square<T, M>,
    /// A (Dg + ỸᵀỸ).
    ac: Square<T, M>,
    /// I + T W Tᵀ, diagonalised in place.
    g: Square<T, M>,
}

crate::in_place::zero_valid!(impl[T: Real, const M: usize] Workspace<T, M> { r, r_inv, c, t, a, ac, g });

impl<T: Real, const M: usize> Workspace<T, M> {
    fn new() -> Self {
        Workspace {
            r: [[T::ZERO; M]; M],
            r_inv: [[T::ZERO; M]; M],
            c: [[T::ZERO; M]; M],
            t: Square::zero(),
            a: Square::zero(),
            ac: Square::zero(),
            g: Square::zero(),
        }
    }
}

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

    /// H = diag(b): no direction.
    fn set_base_only(&mut self, skipped: usize) {
        self.rank = 0;
        self.log_det = self.log_det_base;
        self.pairs_used = 0;
        self.pairs_skipped = skipped;
    }

    /// One build from the pairs of `memory`, leaving out the oldest
    /// `left_out` usable ones. `false` when the small matrices are not
    /// finite (the caller then leaves out one more pair).
    fn try_build(&mut self, memory: &LbfgsMemory<T, D, M>, left_out: usize) -> bool {
        // 1. Scaled pairs: s̃ₖ into slot k, ỹₖ into slot M + k; original norms.
        let mut norms = [[T::ZERO; M]; 2];
        let mut used = 0;
        let mut skipped = 0;
        let mut usable = 0;
        for (s, y, _) in memory.pairs().iter() {
            let [s_slots, y_slots] = &mut self.directions;
            let (Some(st), Some(yt)) = (s_slots.get_mut(used), y_slots.get_mut(used)) else {
                break;
            };
            for i in 0..D {
                st[i] = s[i] * self.inv_sqrt_base[i];
                yt[i] = y[i] * self.sqrt_base[i];
            }
            let sy = dot_wide(st, yt);
            let ss = dot_wide(st, st);
            let yy = dot_wide(yt, yt);
            let fine = |x: T| x.is_finite() && x > T::ZERO;
            if !(fine(sy) && fine(ss) && fine(yy)) {
                skipped += 1;
                continue;
            }
            if usable < left_out {
                usable += 1;
                skipped += 1;
                continue;
            }
            norms[0][used] = ss.sqrt();
            norms[1][used] = yy.sqrt();
            used += 1;
        }
        let m = used;

        // 2. R = upper(S̃ᵀỸ), C = Dg + ỸᵀỸ, R⁻¹.
        {
            let [s_slots, y_slots] = &self.directions;
            let w = &mut self.work;
            for i in 0..m {
                for j in i..m {
                    w.r[i][j] = dot_wide(&s_slots[i], &y_slots[j]);
                    let yy = dot_wide(&y_slots[i], &y_slots[j]);
                    w.c[i][j] = yy;
                    w.c[j][i] = yy;
                }
                w.c[i][i] += w.r[i][i];
            }
            for j in 0..m {
                w.r_inv[j][j] = T::ONE / w.r[j][j];
                for i in (0..j).rev() {
                    let mut sum = T::ZERO;
                    for k in i + 1..=j {
                        sum += w.r[i][k] * w.r_inv[k][j];
                    }
                    w.r_inv[i][j] = -sum / w.r[i][i];
                }
                for i in j + 1..m {
                    w.r_inv[i][j] = T::ZERO;
                }
            }
        }

        // 3. [S̃ Ỹ] = Q T by modified Gram–Schmidt, twice; Q compacted into
        //    slots 0..r. Column j of V is slot j (j < m) or M + j − m.
        let drop_below = if T::EPSILON < T::from_f64(1e-10) {
            T::from_f64(1e-10)
        } else {
            T::from_f64(1e-5)
        };
        self.work.t.set_identity(0);
        let mut r = 0;
        {
            let t = &mut self.work.t;
            let flat = self.directions.as_flattened_mut();
            for j in 0..2 * m {
                let (slot, norm) = if j < m {
                    (j, norms[0][j])
                } else {
                    (M + j - m, norms[1][j - m])
                };
                let (done, rest) = flat.split_at_mut(slot);
                let Some(v) = rest.first_mut() else {
                    break;
                };
                for _pass in 0..2 {
                    for (i, q) in done.iter().enumerate().take(r) {
                        let h = dot_wide(q, v);
                        axpy(-h, q, v);
                        t.set(i, j, t.get(i, j) + h);
                    }
                }
                let remainder = dot_wide(v, v).sqrt();
                if r < D && remainder.is_finite() && remainder > drop_below * norm {
                    let inv = T::ONE / remainder;
                    for x in v.iter_mut() {
                        *x *= inv;
                    }
                    t.set(r, j, remainder);
                    if let Some(target) = done.get_mut(r) {
                        target.copy_from_slice(v);
                    }
                    r += 1;
                }
            }
        }

        // 4. G = I + T W Tᵀ = I + A C Aᵀ − N − Nᵀ with A = T_S R⁻ᵀ, N = T_Y Aᵀ.
        {
            let w = &mut self.work;
            for i in 0..r {
                for k in 0..m {
                    let mut sum = T::ZERO;
                    for j in k..m {
                        sum += w.t.get(i, j) * w.r_inv[k][j];
                    }
                    w.a.set(i, k, sum);
                }
                for l in 0..m {
                    let mut sum = T::ZERO;
                    for k in 0..m {
                        sum += w.a.get(i, k) * w.c[k][l];
                    }
                    w.ac.set(i, l, sum);
                }
            }
            // N into g first; then each unordered pair {i, l} reads its two
            // entries of N once and writes G over both.
            for i in 0..r {
                for l in 0..r {
                    let mut sum = T::ZERO;
                    for k in 0..m {
                        sum += w.t.get(i, m + k) * w.a.get(l, k);
                    }
                    w.g.set(i, l, sum);
                }
            }
            for i in 0..r {
                for l in i..r {
                    let mut aca = T::ZERO;
                    for k in 0..m {
                        aca += w.ac.get(i, k) * w.a.get(l, k);
                    }
                    let mut value = aca - w.g.get(i, l) - w.g.get(l, i);
                    if i == l {
                        value += T::ONE;
                    }
                    w.g.set(i, l, value);
                    w.g.set(l, i, value);
                }
            }
            if !w.g.leading_block_finite(r) {
                return false;
            }
        }

        // 5. G = E diag(μ) Eᵀ, E into t.
        jacobi(&mut self.work.g, &mut self.work.t, r);
        if !(self.work.g.leading_block_finite(r) && self.work.t.leading_block_finite(r)) {
            return false;
        }

        // 6. Keep the directions with |ln μ| > τ (all for τ = 0), largest μ
        //    first (insertion sort: stable, deterministic).
        let floor = T::EPSILON;
        let mut order = [[0usize; M]; 2];
        let mut mu = [[T::ZERO; M]; 2];
        let mut rank = 0;
        {
            let order = order.as_flattened_mut();
            let mu = mu.as_flattened_mut();
            for k in 0..r {
                // Finite (checked above); clamped so that H stays positive definite.
                let mut value = self.work.g.get(k, k);
                if value < floor {
                    value = floor;
                }
                if self.rank_tolerance > T::ZERO && value.ln().abs() <= self.rank_tolerance {
                    continue;
                }
                let mut pos = rank;
                while pos > 0 && mu[pos - 1] < value {
                    mu[pos] = mu[pos - 1];
                    order[pos] = order[pos - 1];
                    pos -= 1;
                }
                mu[pos] = value;
                order[pos] = k;
                rank += 1;
            }
        }

        // 7. U = Q E (kept columns), row by row in place.
        {
            let flat = self.directions.as_flattened_mut();
            let order = order.as_flattened();
            let e = &self.work.t;
            let mut row = [[T::ZERO; M]; 2];
            let row = row.as_flattened_mut();
            for i in 0..D {
                for (j, x) in row.iter_mut().enumerate().take(r) {
                    *x = flat[j][i];
                }
                for (u, &k) in flat.iter_mut().zip(order).take(rank) {
                    let mut sum = T::ZERO;
                    for (j, x) in row.iter().enumerate().take(r) {
                        sum += *x * e.get(j, k);
                    }
                    u[i] = sum;
                }
            }
        }

        // 8. Coefficients and log det.
        let mut log_det = self.log_det_base;
        let mu = mu.as_flattened();
        for k in 0..rank {
            let value = mu[k];
            let root = value.sqrt();
            self.eigenvalues.as_flattened_mut()[k] = value;
            self.velocity_coefficients.as_flattened_mut()[k] = value - T::ONE;
            self.momentum_coefficients.as_flattened_mut()[k] = T::ONE / root - T::ONE;
            self.sqrt_coefficients.as_flattened_mut()[k] = root - T::ONE;
            self.hessian_coefficients.as_flattened_mut()[k] = T::ONE / value - T::ONE;
            log_det += value.ln();
        }
        self.rank = rank;
        self.log_det = log_det;
        self.pairs_used = m;
        self.pairs_skipped = skipped;
        true
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
            Some(w) => with_group!(u0, |u| set(
                c0,
                store_and_dot_wide_many(u, |i| w[i] * input[i], out, len)
            )),
            None => with_group!(u0, |u| set(
                c0,
                store_and_dot_wide_many(u, |i| input[i], out, len)
            )),
        }
        for (u, ck) in rest.chunks(group).zip(c_rest.chunks_mut(group)) {
            with_group!(u, |u| set(ck, dot_wide_many(u, out, len)));
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
mod tests {
    use super::*;
    use crate::lbfgs::{CurvaturePolicy, LbfgsSettings};

    /// Dense BFGS inverse update from H⁰ = diag(b), in f64 (the definition).
    fn dense_h<const D: usize>(base: &[f64; D], pairs: &[([f64; D], [f64; D])]) -> [[f64; D]; D] {
        let mut h = [[0.0; D]; D];
        for i in 0..D {
            h[i][i] = base[i];
        }
        for (s, y) in pairs {
            let rho = 1.0 / (0..D).map(|i| s[i] * y[i]).sum::<f64>();
            // H⁺ = (I − ρ s yᵀ) H (I − ρ y sᵀ) + ρ s sᵀ.
            let mut left = [[0.0; D]; D];
            for i in 0..D {
                for j in 0..D {
                    left[i][j] = f64::from(u8::from(i == j)) - rho * s[i] * y[j];
                }
            }
            let mut lh = [[0.0; D]; D];
            for i in 0..D {
                for j in 0..D {
                    lh[i][j] = (0..D).map(|k| left[i][k] * h[k][j]).sum();
                }
            }
            for i in 0..D {
                for j in 0..D {
                    h[i][j] =
                        (0..D).map(|k| lh[i][k] * left[j][k]).sum::<f64>() + rho * s[i] * s[j];
                }
            }
        }
        h
    }

    fn memory<T: Real, const D: usize, const M: usize>(
        pairs: &[([f64; D], [f64; D])],
    ) -> LbfgsMemory<T, D, M> {
        let settings = LbfgsSettings {
            max_pairs: M,
            scaling: crate::lbfgs::InitialScaling::Fixed(T::ONE),
            curvature: CurvaturePolicy {
                trust_region: T::ZERO,
                min_relative_curvature: T::ZERO,
            },
        };
        let mut memory = LbfgsMemory::new(settings).unwrap();
        for (s, y) in pairs {
            let s: [T; D] = core::array::from_fn(|i| T::from_f64(s[i]));
            let y: [T; D] = core::array::from_fn(|i| T::from_f64(y[i]));
            assert!(memory.try_push(&s, &y));
        }
        memory
    }

    /// Column j = op(eⱼ), in f64.
    fn materialise<T: Real, const D: usize>(op: impl Fn(&[T; D], &mut [T; D])) -> [[f64; D]; D] {
        let mut out = [[0.0; D]; D];
        for j in 0..D {
            let mut e = [T::ZERO; D];
            e[j] = T::ONE;
            let mut col = [T::ZERO; D];
            op(&e, &mut col);
            for i in 0..D {
                out[i][j] = col[i].to_f64();
            }
        }
        out
    }

    fn max_diff<const D: usize>(a: &[[f64; D]; D], b: &[[f64; D]; D]) -> f64 {
        let mut worst = 0.0f64;
        for i in 0..D {
            for j in 0..D {
                worst = worst.max((a[i][j] - b[i][j]).abs());
            }
        }
        worst
    }

    fn product_t<const D: usize>(a: &[[f64; D]; D], b: &[[f64; D]; D]) -> [[f64; D]; D] {
        // A Bᵀ
        let mut out = [[0.0; D]; D];
        for i in 0..D {
            for j in 0..D {
                out[i][j] = (0..D).map(|k| a[i][k] * b[j][k]).sum();
            }
        }
        out
    }

    const PAIRS3: [([f64; 3], [f64; 3]); 4] = [
        ([1.0, 0.5, -0.2], [2.0, 0.4, 0.1]),
        ([0.3, -1.0, 0.7], [0.2, -2.5, 1.9]),
        ([-0.4, 0.2, 1.0], [-0.5, 0.9, 3.1]),
        ([0.6, 0.6, 0.1], [1.1, 1.0, 0.6]),
    ];
    const BASE3: [f64; 3] = [0.5, 2.0, 1.3];

    fn check_against_dense<T: Real, const M: usize>(tol: f64) {
        let pairs = &PAIRS3[..M.min(4)];
        let mem = memory::<T, 3, M>(pairs);
        let base: [T; 3] = core::array::from_fn(|i| T::from_f64(BASE3[i]));
        let metric = LbfgsMetric::new(&base, &mem, T::ZERO).unwrap();
        // The dense reference sees the pairs rounded to T, like the metric.
        let rounded: Vec<([f64; 3], [f64; 3])> = mem
            .pairs()
            .iter()
            .map(|(s, y, _)| (s.map(|x| x.to_f64()), y.map(|x| x.to_f64())))
            .collect();
        let h = dense_h(&base.map(|x| x.to_f64()), &rounded);
        let scale = h.iter().flatten().fold(0.0f64, |a, x| a.max(x.abs()));
        let v = materialise::<T, 3>(|p, o| metric.velocity(p, o));
        assert!(max_diff(&v, &h) <= tol * scale, "H: {v:?} vs {h:?}");
        let s = materialise::<T, 3>(|z, o| metric.apply_sqrt_inverse_hessian(z, o));
        assert!(max_diff(&product_t(&s, &s), &h) <= tol * scale);
        // F Fᵀ = H⁻¹, i.e. H (F Fᵀ) = I; B H = I.
        let f = materialise::<T, 3>(|z, o| metric.momentum_from_normals(z, o));
        let fft = product_t(&f, &f);
        let mut hf = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                hf[i][j] = (0..3).map(|k| h[i][k] * fft[k][j]).sum();
            }
        }
        let eye = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        assert!(max_diff(&hf, &eye) <= 10.0 * tol, "H F Fᵀ: {hf:?}");
        let b = materialise::<T, 3>(|x, o| metric.apply_hessian(x, o));
        let bh = product_t(&b, &h); // B Hᵀ = B H
        assert!(max_diff(&bh, &eye) <= 10.0 * tol, "B H: {bh:?}");
        // log det by the 3×3 formula.
        let det = h[0][0] * (h[1][1] * h[2][2] - h[1][2] * h[2][1])
            - h[0][1] * (h[1][0] * h[2][2] - h[1][2] * h[2][0])
            + h[0][2] * (h[1][0] * h[2][1] - h[1][1] * h[2][0]);
        assert!((metric.log_det_inverse_mass().to_f64() - det.ln()).abs() <= 10.0 * tol);
        assert_eq!(metric.pairs_used(), pairs.len());
        assert_eq!(metric.pairs_skipped(), 0);
        assert!(metric.rank() <= 3 && metric.rank() <= 2 * M);
        // Kinetic energy is ½ pᵀ H p.
        let p: [T; 3] = core::array::from_fn(|i| T::from_f64([0.3, -1.2, 0.8][i]));
        let mut vel = [T::ZERO; 3];
        metric.velocity(&p, &mut vel);
        let pf = p.map(|x| x.to_f64());
        let quad: f64 = (0..3)
            .map(|i| (0..3).map(|j| pf[i] * h[i][j] * pf[j]).sum::<f64>())
            .sum();
        assert!((metric.kinetic_energy(&p, &vel).to_f64() - 0.5 * quad).abs() <= 10.0 * tol * quad);
    }

    #[test]
    fn matches_the_dense_bfgs_update() {
        check_against_dense::<f64, 1>(1e-13);
        check_against_dense::<f64, 2>(1e-13);
        check_against_dense::<f64, 4>(1e-13);
        check_against_dense::<f64, 6>(1e-13);
        check_against_dense::<f32, 1>(2e-5);
        check_against_dense::<f32, 2>(2e-5);
        check_against_dense::<f32, 4>(2e-5);
    }

    /// √(Hᵢᵢ / (H⁻¹)ᵢᵢ) from the eigen-form against the dense H and its
    /// inverse (materialised column by column), and bᵢ itself with no pairs.
    #[test]
    fn geometric_diagonal_matches_the_dense_matrices() {
        let mem = memory::<f64, 3, 4>(&PAIRS3);
        let metric = LbfgsMetric::new(&BASE3, &mem, 0.0).unwrap();
        let h = materialise::<f64, 3>(|p, o| metric.velocity(p, o));
        let inv = materialise::<f64, 3>(|p, o| metric.apply_hessian(p, o));
        let mut got = [0.0; 3];
        metric.geometric_diagonal(&mut got);
        for i in 0..3 {
            let want = (h[i][i] / inv[i][i]).sqrt();
            assert!((got[i] - want).abs() <= 1e-13 * want, "{got:?} vs {want}");
        }
        let empty = memory::<f64, 3, 4>(&[]);
        let diagonal = LbfgsMetric::new(&BASE3, &empty, 0.0).unwrap();
        diagonal.geometric_diagonal(&mut got);
        assert_eq!(got, BASE3);
    }

    #[test]
    fn one_pair_by_hand() {
        // b = (4, 1), s = e₁, y = (1/2, 0): s̃ = (1/2, 0), ỹ = (1, 0), so H̃ =
        // diag(1/2, 1), H = diag(2, 1); μ = 1/2 along e₁ only.
        let mem = memory::<f64, 2, 3>(&[([1.0, 0.0], [0.5, 0.0])]);
        let metric = LbfgsMetric::new(&[4.0, 1.0], &mem, 0.0).unwrap();
        assert_eq!(metric.rank(), 1);
        assert_eq!(metric.eigenvalues(), &[0.5]);
        assert_eq!(metric.direction(0).map(|u| u[0].abs()), Some(1.0));
        assert!(metric.direction(1).is_none());
        let mut v = [0.0; 2];
        metric.velocity(&[1.0, 1.0], &mut v);
        assert_eq!(v, [2.0, 1.0]);
        assert_eq!(metric.log_det_inverse_mass(), 2.0f64.ln());
        assert_eq!(metric.base(), &[4.0, 1.0]);
    }

    /// The grouped, fused passes of `apply` give the bits of the plain
    /// formula post ∘ (x + Σk ck uk), ck = ak · dot_wide(uk, x), x = pre ∘
    /// input, summed one direction at a time, at every rank 0..=2M (groups
    /// of four plus a remainder of 0–3), with and without pre and post.
    #[test]
    fn fused_passes_match_the_plain_formula_at_every_rank() {
        const D: usize = 11;
        const M: usize = 5;
        let value = |i: usize, j: usize| ((i * 31 + j * 17 + 7) % 23) as f64 / 7.0 - 1.5;
        let mut metric = LbfgsMetric::<f64, D, M>::identity();
        for (k, u) in metric.directions.as_flattened_mut().iter_mut().enumerate() {
            *u = core::array::from_fn(|i| value(i, k));
        }
        let mut coefficients = [[0.0; M]; 2];
        for (k, a) in coefficients.as_flattened_mut().iter_mut().enumerate() {
            *a = 0.3 + 0.1 * k as f64;
        }
        let input: [f64; D] = core::array::from_fn(|i| value(i, 99) + 0.25);
        let pre: [f64; D] = core::array::from_fn(|i| 0.5 + 0.1 * i as f64);
        let post: [f64; D] = core::array::from_fn(|i| 2.0 - 0.07 * i as f64);
        for rank in 0..=2 * M {
            metric.rank = rank;
            for (pre, post) in [
                (None, None),
                (Some(&pre), None),
                (None, Some(&post)),
                (Some(&pre), Some(&post)),
            ] {
                let mut fused = [0.0; D];
                metric.apply(&input, pre, &coefficients, post, &mut fused, D);
                let mut x: [f64; D] =
                    core::array::from_fn(|i| pre.map_or(input[i], |w| w[i] * input[i]));
                let directions = metric.directions.as_flattened();
                let c: [f64; 2 * M] = core::array::from_fn(|k| {
                    coefficients.as_flattened()[k] * dot_wide(&directions[k], &x)
                });
                for k in 0..rank {
                    axpy(c[k], &directions[k], &mut x);
                }
                if let Some(w) = post {
                    for i in 0..D {
                        x[i] *= w[i];
                    }
                }
                assert_eq!(
                    fused.map(f64::to_bits),
                    x.map(f64::to_bits),
                    "rank {rank}, pre {}, post {}",
                    pre.is_some(),
                    post.is_some()
                );
            }
        }
    }

    #[test]
    fn identity_and_empty_memories() {
        let id = LbfgsMetric::<f32, 3, 2>::identity();
        let (mut p, mut v) = ([0.0; 3], [0.0; 3]);
        id.momentum_from_normals(&[1.0, 2.0, 3.0], &mut p);
        id.velocity(&p, &mut v);
        assert_eq!((p, v), ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]));
        assert_eq!((id.rank(), id.log_det_inverse_mass()), (0, 0.0));
        // M = 0, D = 1, D = 0: valid metrics.
        let m0 = LbfgsMemory::<f64, 2, 0>::new(LbfgsSettings::with_max_pairs(0)).unwrap();
        let metric = LbfgsMetric::new(&[4.0, 9.0], &m0, 0.0).unwrap();
        metric.momentum_from_normals(&[2.0, 3.0], &mut [0.0; 2]);
        let mut q = [0.0; 2];
        metric.momentum_from_normals(&[2.0, 3.0], &mut q);
        assert_eq!(q, [1.0, 1.0]);
        let mem1 = memory::<f64, 1, 3>(&[([2.0], [1.0]), ([1.0], [0.5])]);
        let metric = LbfgsMetric::new(&[3.0], &mem1, 0.0).unwrap();
        assert_eq!(metric.rank(), 1);
        assert!((metric.eigenvalues()[0] - 2.0 / 3.0).abs() < 1e-15);
        let empty = LbfgsMemory::<f64, 0, 2>::new(LbfgsSettings::with_max_pairs(2)).unwrap();
        assert_eq!(LbfgsMetric::new(&[], &empty, 0.0).unwrap().rank(), 0);
    }

    /// Dependent pairs (the same pair twice, a multiple of it) add nothing new:
    /// the metric is that of one pair, and Gram–Schmidt drops the copies.
    #[test]
    fn repeated_and_parallel_pairs() {
        let one = memory::<f64, 3, 4>(&PAIRS3[..1]);
        let (s, y) = PAIRS3[0];
        let many = memory::<f64, 3, 4>(&[(s, y), (s, y), (s.map(|x| 2.0 * x), y.map(|x| 2.0 * x))]);
        let a = LbfgsMetric::new(&BASE3, &one, 0.0).unwrap();
        let b = LbfgsMetric::new(&BASE3, &many, 0.0).unwrap();
        let va = materialise::<f64, 3>(|p, o| a.velocity(p, o));
        let vb = materialise::<f64, 3>(|p, o| b.velocity(p, o));
        assert!(max_diff(&va, &vb) < 1e-14, "{va:?} vs {vb:?}");
        assert_eq!(b.pairs_used(), 3);
        assert!(b.rank() <= 2);
    }

    #[test]
    fn truncation_keeps_only_directions_that_matter() {
        let mem = memory::<f64, 3, 4>(&PAIRS3);
        let full = LbfgsMetric::new(&BASE3, &mem, 0.0).unwrap();
        assert_eq!(full.rank(), 3);
        let mu = full.eigenvalues();
        assert!(mu.windows(2).all(|w| w[0] >= w[1]), "{mu:?}");
        // τ between the smallest and the largest |ln μ|.
        let logs: Vec<f64> = mu.iter().map(|m| m.ln().abs()).collect();
        let tau = 0.5
            * (logs.iter().cloned().fold(f64::INFINITY, f64::min)
                + logs.iter().cloned().fold(0.0, f64::max));
        let cut = LbfgsMetric::new(&BASE3, &mem, tau).unwrap();
        let kept = logs.iter().filter(|l| **l > tau).count();
        assert!((1..3).contains(&kept));
        assert_eq!(cut.rank(), kept);
        assert_eq!(cut.rank_tolerance(), tau);
        for m in cut.eigenvalues() {
            assert!(m.ln().abs() > tau);
        }
        // A huge τ leaves the base.
        let none = LbfgsMetric::new(&BASE3, &mem, 1e9).unwrap();
        assert_eq!(none.rank(), 0);
        assert!(
            (none.log_det_inverse_mass() - BASE3.iter().map(|b| b.ln()).sum::<f64>()).abs() < 1e-15
        );
    }

    /// Pairs that overflow in scaled coordinates are skipped and counted.
    #[test]
    fn pairs_that_overflow_after_scaling_are_skipped() {
        let mem = memory::<f64, 2, 3>(&[([1e200, 1.0], [1e-10, 1.0]), ([1.0, 0.0], [2.0, 0.0])]);
        let metric = LbfgsMetric::new(&[1e-300, 1.0], &mem, 0.0).unwrap();
        assert_eq!((metric.pairs_used(), metric.pairs_skipped()), (1, 1));
        let mut v = [0.0; 2];
        metric.velocity(&[1.0, 1.0], &mut v);
        assert!(v.iter().all(|x| x.is_finite()));
    }

    /// A pair whose compact form overflows (sᵀy = 1e-200 with ‖s‖ = ‖y‖ = 1:
    /// its ρ²·yᵀy·ssᵀ term is 1e400) is left out, oldest first: the metric
    /// stays finite and is bit for bit the metric of the newer pairs alone.
    #[test]
    fn overflowing_compact_form_falls_back_to_fewer_pairs() {
        let bad = ([0.0, 1.0, 0.0], [1.0, 1e-200, 0.0]);
        let mem = memory::<f64, 3, 3>(&[bad, PAIRS3[0], PAIRS3[1]]);
        let metric = LbfgsMetric::new(&BASE3, &mem, 0.0).unwrap();
        assert_eq!((metric.pairs_used(), metric.pairs_skipped()), (2, 1));
        let alone = LbfgsMetric::new(&BASE3, &memory::<f64, 3, 3>(&PAIRS3[..2]), 0.0).unwrap();
        let a = materialise::<f64, 3>(|p, o| metric.velocity(p, o));
        let b = materialise::<f64, 3>(|p, o| alone.velocity(p, o));
        assert_eq!(a, b);
        assert!(metric.log_det_inverse_mass().is_finite());
        // Alone, the bad pair leaves the base.
        let worst = LbfgsMetric::new(&BASE3, &memory::<f64, 3, 3>(&[bad]), 0.0).unwrap();
        assert_eq!(
            (worst.rank(), worst.pairs_used(), worst.pairs_skipped()),
            (0, 0, 1)
        );
    }

    #[test]
    fn bad_settings_are_refused_and_leave_the_metric() {
        let mem = memory::<f32, 3, 4>(&PAIRS3);
        let base: [f32; 3] = BASE3.map(|x| x as f32);
        let mut metric = LbfgsMetric::new(&base, &mem, 0.0).unwrap();
        let before = materialise::<f32, 3>(|p, o| metric.velocity(p, o));
        let (rank, log_det) = (metric.rank(), metric.log_det_inverse_mass());
        let other = memory::<f32, 3, 4>(&PAIRS3[..1]);
        for bad in [0.0, -1.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let r = metric.rebuild(&[1.0, bad, 1.0], &other, 0.0);
            assert!(
                matches!(
                    r,
                    Err(Error::InvalidSetting {
                        setting: "base",
                        ..
                    })
                ),
                "{bad}: {r:?}"
            );
        }
        for bad in [-0.5, f32::NAN, f32::INFINITY] {
            let r = metric.rebuild(&[1.0; 3], &other, bad);
            assert!(matches!(
                r,
                Err(Error::InvalidSetting {
                    setting: "rank_tolerance",
                    ..
                })
            ));
        }
        assert!(LbfgsMetric::new(&[f32::NAN; 3], &other, 0.0).is_err());
        assert_eq!(metric.base(), &base);
        assert_eq!(
            (metric.rank(), metric.log_det_inverse_mass()),
            (rank, log_det)
        );
        assert_eq!(metric.pairs_used(), 4);
        let after = materialise::<f32, 3>(|p, o| metric.velocity(p, o));
        assert_eq!(before, after);
        // A rebuild is deterministic: the same inputs give the same bits.
        metric.rebuild(&base, &mem, 0.0).unwrap();
        assert_eq!(materialise::<f32, 3>(|p, o| metric.velocity(p, o)), before);
    }
}
