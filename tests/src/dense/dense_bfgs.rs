//! Dense BFGS matrices from a list of pairs, and a plain `Vec` pair memory with
//! the core's admission rule and γ rule.
//!
//! Everything is a D×D matrix built by the textbook formulas (Nocedal & Wright
//! §6.1, ALGORITHMS.md §1), with no limited-memory trick:
//!
//! ```text
//! H⁰ = γI,  B⁰ = I/γ,  S⁰ = √γ I;  for each pair (s, y), oldest first, ρ = 1/sᵀy:
//!   H⁺ = (I − ρ s yᵀ) H (I − ρ y sᵀ) + ρ s sᵀ                 (inverse update)
//!   B⁺ = B − B s sᵀ B / (sᵀBs) + y yᵀ / (sᵀy)                 (direct update)
//!   S⁺ = (I − p qᵀ) S,  p = ρ s,  q = y − α B s,  α = √(sᵀy / sᵀBs)   (product form, B = B before the update)
//! ```

use nalgebra::{DMatrix, DVector};

/// The dense BFGS matrices of a list of pairs.
#[derive(Debug, Clone)]
pub struct DenseBfgs {
    /// γ of H⁰ = γI.
    pub gamma: f64,
    /// H, the inverse-Hessian approximation (inverse BFGS update).
    pub h: DMatrix<f64>,
    /// B, the Hessian approximation (direct BFGS update, built independently of H).
    pub b: DMatrix<f64>,
    /// The product-form factor S with S Sᵀ = H (not the Cholesky factor: this is
    /// the S the core applies when it draws S·z).
    pub s: DMatrix<f64>,
}

impl DenseBfgs {
    /// Builds H, B and S from γ and the pairs (s_i, y_i), oldest first.
    pub fn new(dim: usize, gamma: f64, pairs: &[(DVector<f64>, DVector<f64>)]) -> Self {
        let eye = DMatrix::<f64>::identity(dim, dim);
        let mut h = &eye * gamma;
        let mut b = &eye / gamma;
        let mut s_factor = &eye * gamma.sqrt();
        for (s, y) in pairs {
            let sy = s.dot(y);
            let rho = 1.0 / sy;
            let bs = &b * s;
            let sbs = s.dot(&bs);
            // Product form, with B of the previous pairs.
            let alpha = (sy / sbs).sqrt();
            let p = s * rho;
            let q = y - &bs * alpha;
            s_factor = (&eye - &p * q.transpose()) * s_factor;
            // Inverse update.
            let left = &eye - s * y.transpose() * rho;
            let right = &eye - y * s.transpose() * rho;
            h = left * h * right + s * s.transpose() * rho;
            // Direct update.
            b = b - &bs * bs.transpose() / sbs + y * y.transpose() / sy;
        }
        DenseBfgs {
            gamma,
            h,
            b,
            s: s_factor,
        }
    }

    /// log det H by Cholesky of the dense H.
    pub fn log_det_h(&self) -> f64 {
        super::util::log_det_spd(&self.h)
    }

    /// −log det B by LU of the dense B (an independent route to log det H).
    pub fn log_det_h_via_b(&self) -> f64 {
        -super::util::log_abs_det_lu(&self.b)
    }
}

/// Choice of γ (mirrors `qnmc::lbfgs::InitialScaling`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DenseScaling {
    /// γ fixed.
    Fixed(f64),
    /// γ = sᵀy / yᵀy of the newest pair; the given value while there is none.
    NewestPair(f64),
}

impl<T: qnmc::Real> From<qnmc::lbfgs::InitialScaling<T>> for DenseScaling {
    fn from(s: qnmc::lbfgs::InitialScaling<T>) -> Self {
        match s {
            qnmc::lbfgs::InitialScaling::Fixed(g) => DenseScaling::Fixed(g.to_f64()),
            qnmc::lbfgs::InitialScaling::NewestPair(g) => DenseScaling::NewestPair(g.to_f64()),
        }
    }
}

/// The admission rule for pairs (mirrors `qnmc::lbfgs::CurvaturePolicy`): a pair
/// with a non-finite entry is skipped; otherwise y ← y + λs and the pair enters
/// iff sᵀy > max(0, ε‖s‖‖y‖).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DenseCurvature {
    /// λ.
    pub trust_region: f64,
    /// ε.
    pub min_relative_curvature: f64,
}

impl<T: qnmc::Real> From<qnmc::lbfgs::CurvaturePolicy<T>> for DenseCurvature {
    fn from(c: qnmc::lbfgs::CurvaturePolicy<T>) -> Self {
        DenseCurvature {
            trust_region: c.trust_region.to_f64(),
            min_relative_curvature: c.min_relative_curvature.to_f64(),
        }
    }
}

impl DenseCurvature {
    /// The shifted y if the pair is admitted, `None` if it is skipped.
    pub fn admit(&self, s: &DVector<f64>, y: &DVector<f64>) -> Option<DVector<f64>> {
        if !super::util::finite(s) || !super::util::finite(y) {
            return None;
        }
        let y = if self.trust_region != 0.0 {
            y + s * self.trust_region
        } else {
            y.clone()
        };
        let sy = s.dot(&y);
        let bound = self.min_relative_curvature * s.norm() * y.norm();
        if sy.is_finite() && sy > 0.0 && sy > bound {
            Some(y)
        } else {
            None
        }
    }
}

/// A list of at most `max_pairs` pairs (oldest first) with γ and counters.
#[derive(Debug, Clone)]
pub struct DensePairs {
    /// The pairs, y already shifted by the trust region.
    pub pairs: Vec<(DVector<f64>, DVector<f64>)>,
    /// Most pairs kept (older ones are dropped).
    pub max_pairs: usize,
    /// γ rule.
    pub scaling: DenseScaling,
    /// Current γ.
    pub gamma: f64,
    /// Admission rule.
    pub curvature: DenseCurvature,
    /// Pairs admitted so far.
    pub admitted: u64,
    /// Pairs skipped so far.
    pub skipped: u64,
}

impl DensePairs {
    /// An empty memory.
    pub fn new(max_pairs: usize, scaling: DenseScaling, curvature: DenseCurvature) -> Self {
        let gamma = match scaling {
            DenseScaling::Fixed(g) | DenseScaling::NewestPair(g) => g,
        };
        DensePairs {
            pairs: Vec::new(),
            max_pairs,
            scaling,
            gamma,
            curvature,
            admitted: 0,
            skipped: 0,
        }
    }

    /// Applies the admission rule; returns whether the pair entered.
    pub fn offer(&mut self, s: &DVector<f64>, y: &DVector<f64>) -> bool {
        match self.curvature.admit(s, y) {
            Some(y) => {
                self.push_admitted(s.clone(), y);
                true
            }
            None => {
                self.skipped += 1;
                false
            }
        }
    }

    /// Appends an already admitted pair, drops the oldest beyond `max_pairs`,
    /// updates γ.
    pub fn push_admitted(&mut self, s: DVector<f64>, y: DVector<f64>) {
        if self.max_pairs == 0 {
            return;
        }
        if let DenseScaling::NewestPair(_) = self.scaling {
            let g = s.dot(&y) / y.dot(&y);
            if g.is_finite() && g > 0.0 {
                self.gamma = g;
            }
        }
        self.pairs.push((s, y));
        if self.pairs.len() > self.max_pairs {
            self.pairs.remove(0);
        }
        self.admitted += 1;
    }

    /// The dense BFGS matrices of the pairs held.
    pub fn bfgs(&self, dim: usize) -> DenseBfgs {
        DenseBfgs::new(dim, self.gamma, &self.pairs)
    }
}
