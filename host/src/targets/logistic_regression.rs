//! Bayesian logistic regression with a compile-time dimension (the core's
//! `Potential`/`MinibatchPotential`), with the German credit data set built in.

use super::logreg::likelihood;
use super::{LogisticRegressionModel, LogregDataset};
use qnmc::{MinibatchPotential, Potential};
use rand_core::Rng;

/// Bayesian logistic regression with prior w ~ N(0, v·I):
///
/// U(w) = Σₙ [log(1 + e^{fₙ}) − tₙ fₙ] + ‖w‖²/(2v),  fₙ = xₙᵀw,
/// ∇U(w) = Σₙ (σ(fₙ) − tₙ) xₙ + w/v.
///
/// As a [`MinibatchPotential`] a batch is `B` indices drawn uniformly with
/// replacement (an array: drawing one never allocates) and
/// ∇Ũ_Ω(w) = w/v + (N/B) Σ_{n∈Ω} (σ(fₙ) − tₙ) xₙ, an unbiased estimate of ∇U.
///
/// The run-time-dimension twin, used by the command line, is
/// [`LogisticRegressionModel`]; both share the same arithmetic.
#[derive(Debug, Clone, PartialEq)]
pub struct LogisticRegression<const D: usize, const B: usize> {
    /// Rows xₙ of the design matrix (intercept included by the caller).
    pub design: Vec<[f64; D]>,
    /// Labels tₙ ∈ {0, 1}.
    pub labels: Vec<f64>,
    /// Prior variance v.
    pub prior_variance: f64,
}

impl<const D: usize, const B: usize> LogisticRegression<D, B> {
    /// A model from a design matrix, 0/1 labels and the prior variance.
    ///
    /// # Panics
    /// If `design` and `labels` differ in length (a host-side programming error).
    pub fn new(design: Vec<[f64; D]>, labels: Vec<f64>, prior_variance: f64) -> Self {
        assert_eq!(design.len(), labels.len(), "one label per design row");
        LogisticRegression {
            design,
            labels,
            prior_variance,
        }
    }

    /// Number of observations N.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// `true` without observations.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }
}

impl<const B: usize> LogisticRegression<25, B> {
    /// The German credit model of the RMHMC / Zhang & Sutton / AMAGOLD papers:
    /// N = 1000, the 24 covariates standardised (mean, N−1 standard deviation),
    /// design [1, X] (intercept first), labels 1 → 0 and 2 → 1, prior
    /// N(0, 100·I); D = 25. The same data and preprocessing as
    /// [`LogisticRegressionModel::builtin`]`(LogregDataset::German)`.
    pub fn german_credit() -> Self {
        let model = LogisticRegressionModel::builtin(LogregDataset::German)
            .expect("the German credit data are built in");
        let design = (0..model.len())
            .map(|n| {
                let mut x = [0.0; 25];
                x.copy_from_slice(model.design_row(n));
                x
            })
            .collect();
        LogisticRegression::new(design, model.labels().to_vec(), model.prior_variance())
    }
}

impl<const D: usize, const B: usize> Potential<f64, D> for LogisticRegression<D, B> {
    fn potential_and_gradient(&self, w: &[f64; D], g: &mut [f64; D]) -> f64 {
        let mut u = likelihood::prior(w, self.prior_variance, g);
        for (x, &t) in self.design.iter().zip(&self.labels) {
            u += likelihood::add_observation(x, t, w, g);
        }
        u
    }
}

impl<const D: usize, const B: usize> MinibatchPotential<f64, D> for LogisticRegression<D, B> {
    type Batch = [u32; B];

    fn draw_batch<R: Rng + ?Sized>(&self, rng: &mut R) -> [u32; B] {
        let n = self.len() as u64;
        let mut batch = [0u32; B];
        for b in batch.iter_mut() {
            // Multiply-shift maps a u32 to [0, N) without division.
            *b = ((rng.next_u32() as u64 * n) >> 32) as u32;
        }
        batch
    }

    fn minibatch_gradient(&self, batch: &[u32; B], w: &[f64; D], g: &mut [f64; D]) {
        let _ = likelihood::prior(w, self.prior_variance, g);
        if B == 0 {
            return;
        }
        let weight = self.len() as f64 / B as f64;
        for &n in batch {
            let n = n as usize;
            likelihood::add_observation_gradient(&self.design[n], self.labels[n], w, weight, g);
        }
    }
}
