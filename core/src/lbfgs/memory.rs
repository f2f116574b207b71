//! [`LbfgsMemory`]: the L-BFGS engine every quasi-Newton sampler shares
//! (ALGORITHMS.md §1).

use super::curvature::CurvaturePolicy;
use super::factors::ProductFactors;
use super::pair_ring::PairRing;
use crate::error::{Error, require_positive};
use crate::kernels::dot_leading;
use crate::real::Real;

/// How the base matrix H⁰ = γI is chosen.
///
/// `#[repr(u8)]` gives it a defined layout: a tag byte, 0 for `Fixed`, then
/// γ, so all-zero bytes are `Fixed(0)` ([`ZeroValid`](crate::in_place::ZeroValid)).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
pub enum InitialScaling<T> {
    /// A fixed γ > 0 (HAMCMC's γ; 1 makes an empty memory the identity).
    Fixed(T),
    /// γ = sᵀy / yᵀy of the newest pair (Nocedal & Wright's choice), and the
    /// given value while the memory is empty.
    NewestPair(T),
}

// SAFETY: `repr(u8)`: the zero tag is `Fixed` (the first variant, discriminant
// 0), whose one field is a `Real`, valid as zero bytes.
#[allow(unsafe_code)]
unsafe impl<T: Real> crate::in_place::ZeroValid for InitialScaling<T> {}

/// The tag (0 `Fixed`, 1 `NewestPair`), then γ.
impl<T: Real> crate::saved_state::SavedState for InitialScaling<T> {
    fn save_state(
        &self,
        out: &mut crate::saved_state::StateWriter<'_>,
    ) -> Result<(), crate::saved_state::StateError> {
        let (tag, gamma) = match self {
            InitialScaling::Fixed(g) => (0, g),
            InitialScaling::NewestPair(g) => (1, g),
        };
        out.bytes(&[tag])?;
        gamma.save_state(out)
    }
    fn restore_state(
        &mut self,
        input: &mut crate::saved_state::StateReader<'_>,
    ) -> Result<(), crate::saved_state::StateError> {
        let [tag] = input.take::<1>()?;
        let mut gamma = T::ZERO;
        gamma.restore_state(input)?;
        *self = match tag {
            0 => InitialScaling::Fixed(gamma),
            1 => InitialScaling::NewestPair(gamma),
            _ => return Err(crate::saved_state::StateError::InvalidField),
        };
        Ok(())
    }
}

impl<T: Real> InitialScaling<T> {
    fn initial(&self) -> T {
        match *self {
            InitialScaling::Fixed(g) | InitialScaling::NewestPair(g) => g,
        }
    }
}

/// Settings of an [`LbfgsMemory`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LbfgsSettings<T> {
    /// Most pairs kept, at most the const generic `M` (larger values are an error).
    pub max_pairs: usize,
    /// Choice of γ in H⁰ = γI.
    pub scaling: InitialScaling<T>,
    /// Admission rule for new pairs.
    pub curvature: CurvaturePolicy<T>,
}

crate::in_place::zero_valid!(impl[T: Real] LbfgsSettings<T> { max_pairs, scaling, curvature });

impl<T: Real> LbfgsSettings<T> {
    /// `max_pairs` pairs, γ fixed to 1, the default curvature policy.
    pub fn with_max_pairs(max_pairs: usize) -> Self {
        LbfgsSettings {
            max_pairs,
            scaling: InitialScaling::Fixed(T::ONE),
            curvature: CurvaturePolicy::default(),
        }
    }
}

/// Limited-memory BFGS approximation of the inverse Hessian H ≈ (∇²U)⁻¹ and of
/// its inverse B = H⁻¹, held in fixed-size storage: a ring buffer of up to `M`
/// pairs in dimension `D`, plus the cached product-form square-root factors in
/// compact form (the Gram matrix of the pairs and O(M²) coefficients, no
/// vector of length D; see `factors.rs`).
///
/// Operations (ALGORITHMS.md §1):
/// - [`apply_inverse_hessian`](Self::apply_inverse_hessian): H·v, two-loop recursion, O(mD);
/// - [`apply_hessian`](Self::apply_hessian): B·v = C(Cᵀv), O(mD + m²);
/// - [`apply_sqrt_inverse_hessian`](Self::apply_sqrt_inverse_hessian): S·z with S Sᵀ = H, O(mD + m²);
/// - [`apply_sqrt_hessian`](Self::apply_sqrt_hessian): C·z with C Cᵀ = B, O(mD + m²);
/// - their transposes, and [`log_det_inverse_hessian`](Self::log_det_inverse_hessian).
///
/// The factors are rebuilt lazily the first time a factor operation runs after
/// the pairs changed: O(mD) per pair pushed since the last rebuild (its scalar
/// products with the held pairs) plus O(m³); that is why those operations take
/// `&mut self`.
///
/// ```
/// use qnmc::lbfgs::{LbfgsMemory, LbfgsSettings};
/// let mut memory = LbfgsMemory::<f64, 2, 4>::new(LbfgsSettings::with_max_pairs(4)).unwrap();
/// // Pairs of the quadratic U = ½ θᵀ diag(1, 4) θ: y = diag(1, 4) s.
/// assert!(memory.try_push(&[1.0, 0.0], &[1.0, 0.0]));
/// assert!(memory.try_push(&[0.0, 1.0], &[0.0, 4.0]));
/// let mut h_v = [0.0; 2];
/// memory.apply_inverse_hessian(&[1.0, 4.0], &mut h_v);
/// assert!((h_v[0] - 1.0).abs() < 1e-12 && (h_v[1] - 1.0).abs() < 1e-12);
/// ```
#[derive(Debug, Clone)]
pub struct LbfgsMemory<T, const D: usize, const M: usize> {
    pub(super) pairs: PairRing<T, D, M>,
    pub(super) gamma: T,
    scaling: InitialScaling<T>,
    curvature: CurvaturePolicy<T>,
    pub(super) factors: ProductFactors<T, M>,
    pairs_admitted: u64,
    pairs_skipped: u64,
    /// The run-time dimension n (0 or ≥ D: D), feature `runtime-dimension`.
    dimension: usize,
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize, const M: usize] LbfgsMemory<T, D, M> {
    pairs, gamma, scaling, curvature, factors, pairs_admitted, pairs_skipped, dimension
});

impl<T: Real, const D: usize, const M: usize> LbfgsMemory<T, D, M> {
    /// An empty memory; fails if `max_pairs > M`, γ is not finite and positive,
    /// or the curvature policy is invalid.
    pub fn new(settings: LbfgsSettings<T>) -> Result<Self, Error> {
        Self::validate(&settings)?;
        Ok(LbfgsMemory {
            pairs: PairRing::new(settings.max_pairs),
            gamma: settings.scaling.initial(),
            scaling: settings.scaling,
            curvature: settings.curvature,
            factors: ProductFactors::new(),
            pairs_admitted: 0,
            pairs_skipped: 0,
            dimension: D,
        })
    }

    /// In place, the state of [`LbfgsMemory::new`] with `settings` (the
    /// counters too); on error nothing changes.
    pub fn reset(&mut self, settings: LbfgsSettings<T>) -> Result<(), Error> {
        Self::validate(&settings)?;
        crate::in_place::zero(self);
        self.initialize_zeroed(settings)
    }

    /// The state of [`LbfgsMemory::new`] with `settings`, on a memory that
    /// is all zero bytes (fresh from [`crate::in_place`]): nothing of length
    /// D is written, so the pages of a large zeroed allocation stay
    /// untouched until used. On error nothing changes.
    pub(crate) fn initialize_zeroed(&mut self, settings: LbfgsSettings<T>) -> Result<(), Error> {
        Self::validate(&settings)?;
        self.pairs.set_capacity(settings.max_pairs);
        self.gamma = settings.scaling.initial();
        self.scaling = settings.scaling;
        self.curvature = settings.curvature;
        self.dimension = D;
        Ok(())
    }

    pub(crate) fn validate(settings: &LbfgsSettings<T>) -> Result<(), Error> {
        if settings.max_pairs > M {
            return Err(Error::invalid("max_pairs", "at most the memory size M"));
        }
        require_positive(settings.scaling.initial(), "scaling")?;
        settings.curvature.validate()
    }

    /// Offers the pair (s, y) to the memory. The curvature policy may shift y
    /// (trust region) or skip the pair; returns whether it was admitted (a
    /// memory with `max_pairs = 0` admits pairs but keeps none).
    /// Skipped pairs are counted in [`pairs_skipped`](Self::pairs_skipped).
    ///
    /// It copies y (D numbers) onto the stack; a sampler of large dimension
    /// calls [`try_push_in_place`](Self::try_push_in_place) instead.
    pub fn try_push(&mut self, s: &[T; D], y: &[T; D]) -> bool {
        let mut y = *y;
        self.try_push_in_place(s, &mut y)
    }

    /// [`try_push`](Self::try_push) without a copy: the trust-region shift
    /// is applied to `y` itself (its first [`dimension`](Self::dimension)
    /// entries), whether or not the pair is admitted.
    pub fn try_push_in_place(&mut self, s: &[T; D], y: &mut [T; D]) -> bool {
        match self.curvature.admit_leading(s, y, self.dimension()) {
            Some(sy) => {
                self.push_admitted(s, y, sy);
                true
            }
            None => {
                self.pairs_skipped += 1;
                false
            }
        }
    }

    /// n: the pairs and every vector the memory reads or writes are taken
    /// over their first n entries (D unless
    /// `set_dimension`, feature `runtime-dimension`,
    /// said otherwise).
    #[inline]
    pub fn dimension(&self) -> usize {
        crate::kernels::dimension_in_use::<D>(self.dimension)
    }

    /// Works on the first `n` entries of every vector from now on (1 ≤ n ≤
    /// D, feature `runtime-dimension`): a sampler of run-time dimension n
    /// in storage for D. The pairs held are forgotten (γ back to its initial
    /// value); entries from n on are never read or written, so the memory
    /// costs what dimension n costs and its results are bit for bit those of
    /// a memory of size n. On error nothing changes.
    #[cfg(feature = "runtime-dimension")]
    pub fn set_dimension(&mut self, n: usize) -> Result<(), Error> {
        if n == 0 || n > D {
            return Err(Error::invalid("dimension", ">= 1 and at most D"));
        }
        self.clear();
        self.dimension = n;
        Ok(())
    }

    /// Appends a pair that already passed [`CurvaturePolicy::admit`].
    /// A memory of capacity zero keeps nothing: the pair is ignored and
    /// neither γ nor the counters change.
    pub(crate) fn push_admitted(&mut self, s: &[T; D], y: &[T; D], sy: T) {
        if self.pairs.capacity() == 0 {
            return;
        }
        let n = self.dimension();
        self.pairs.push_leading(s, y, sy, n);
        self.pairs_admitted += 1;
        if let InitialScaling::NewestPair(_) = self.scaling {
            let yy = dot_leading(y, y, n);
            let gamma = sy / yy;
            if gamma.is_finite() && gamma > T::ZERO {
                self.gamma = gamma;
            }
        }
        self.factors.pair_pushed();
    }

    /// Counts a pair the caller skipped through [`CurvaturePolicy::admit`].
    pub(crate) fn count_skipped(&mut self, n: u32) {
        self.pairs_skipped += n as u64;
    }

    /// Forgets every pair and resets γ to its initial value (counters are kept).
    pub fn clear(&mut self) {
        self.pairs.clear();
        self.gamma = self.scaling.initial();
        self.factors.clear();
    }

    /// Number of pairs held (m ≤ M).
    #[inline]
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// `true` when no pair is held (H = γI).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The current γ of H⁰ = γI.
    #[inline]
    pub fn gamma(&self) -> T {
        self.gamma
    }

    /// The curvature policy in force.
    #[inline]
    pub fn curvature_policy(&self) -> &CurvaturePolicy<T> {
        &self.curvature
    }

    /// The held pairs (with y after the trust-region shift), oldest first.
    #[inline]
    pub fn pairs(&self) -> &PairRing<T, D, M> {
        &self.pairs
    }

    /// Pairs admitted since construction.
    #[inline]
    pub fn pairs_admitted(&self) -> u64 {
        self.pairs_admitted
    }

    /// Pairs skipped by the curvature policy since construction. QNHMC counts
    /// here the skips of every trajectory, accepted or not, while only accepted
    /// trajectories add to [`pairs_admitted`](Self::pairs_admitted).
    #[inline]
    pub fn pairs_skipped(&self) -> u64 {
        self.pairs_skipped
    }
}
