//! [`HeldOutSet`]: observations kept out of a logistic regression's
//! likelihood, to measure how well its coefficients classify new data.

use super::likelihood::{linear, sigmoid};

/// A held-out (test) set of a logistic regression: design rows xₙ (the same
/// columns as the model's, so D = the model's dimension) and 0/1 labels tₙ.
///
/// A coefficient vector w predicts label 1 for xₙ when σ(xₙᵀw) > ½, that is
/// xₙᵀw > 0 (a tie, xₙᵀw = 0, predicts 0). Two ways to use posterior draws:
///
/// - [`test_error`](Self::test_error) of one w (a draw, or the posterior
///   mean), or its average over draws ([`mean_test_error`](Self::mean_test_error));
/// - the posterior predictive p̄ₙ = (1/S) Σₛ σ(xₙᵀwₛ)
///   ([`mean_probabilities`](Self::mean_probabilities)), which predicts 1 when
///   p̄ₙ > ½ ([`predictive_test_error`](Self::predictive_test_error)): the
///   Bayesian classifier, and usually at most the per-draw error.
///
/// ```
/// use qnmc_host::targets::HeldOutSet;
///
/// // Two observations in one covariate: x = 1 with label 1, x = −1 with label 0.
/// let test = HeldOutSet::new(vec![1.0, -1.0], vec![1.0, 0.0], 1);
/// assert_eq!(test.test_error(&[2.0]), 0.0);
/// assert_eq!(test.test_error(&[-2.0]), 1.0);
/// // Averaging σ over the draws w = 2 and w = −1: p̄ = (σ(2) + σ(−1))/2 > ½ at x = 1.
/// let draws = [[2.0], [-1.0]];
/// let p = test.mean_probabilities(draws.iter().map(|w| &w[..]));
/// assert!(p[0] > 0.5 && p[1] < 0.5);
/// assert_eq!(test.predictive_test_error(draws.iter().map(|w| &w[..])), 0.0);
/// assert_eq!(test.mean_test_error(draws.iter().map(|w| &w[..])), 0.5);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct HeldOutSet {
    design: Vec<f64>,
    labels: Vec<f64>,
    dimension: usize,
}

impl HeldOutSet {
    /// A held-out set from its row-major design matrix (`labels.len()` rows
    /// of `dimension` columns) and its 0/1 labels.
    ///
    /// # Panics
    /// When `design.len() != labels.len() · dimension` or a label is neither
    /// 0 nor 1 (a programming error of the caller).
    pub fn new(design: Vec<f64>, labels: Vec<f64>, dimension: usize) -> Self {
        assert_eq!(
            design.len(),
            labels.len() * dimension,
            "one design row of {dimension} columns per label"
        );
        assert!(
            labels.iter().all(|&t| t == 0.0 || t == 1.0),
            "labels must be 0 or 1"
        );
        HeldOutSet {
            design,
            labels,
            dimension,
        }
    }

    /// Number of held-out observations.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// `true` without observations.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Number of columns D of each design row.
    pub fn dimension(&self) -> usize {
        self.dimension
    }

    /// Row n of the design matrix.
    pub fn design_row(&self, n: usize) -> &[f64] {
        &self.design[n * self.dimension..(n + 1) * self.dimension]
    }

    /// The 0/1 labels tₙ.
    pub fn labels(&self) -> &[f64] {
        &self.labels
    }

    /// Number of observations with label 1.
    pub fn positives(&self) -> usize {
        self.labels.iter().filter(|&&t| t == 1.0).count()
    }

    fn rows(&self) -> impl Iterator<Item = &[f64]> {
        self.design.chunks_exact(self.dimension.max(1))
    }

    /// σ(xₙᵀw) for every held-out row.
    pub fn probabilities(&self, w: &[f64]) -> Vec<f64> {
        assert_eq!(w.len(), self.dimension, "w has the design's dimension");
        self.rows().map(|x| sigmoid(linear(x, w))).collect()
    }

    /// The fraction of held-out rows that w misclassifies (predicting 1
    /// where xₙᵀw > 0, else 0).
    pub fn test_error(&self, w: &[f64]) -> f64 {
        assert_eq!(w.len(), self.dimension, "w has the design's dimension");
        let wrong = self
            .rows()
            .zip(&self.labels)
            .filter(|(x, t)| (linear(x, w) > 0.0) != (**t == 1.0))
            .count();
        wrong as f64 / self.len() as f64
    }

    /// [`test_error`](Self::test_error) averaged over `draws` (each a w of
    /// length D); `NaN` without draws.
    pub fn mean_test_error<'a>(&self, draws: impl IntoIterator<Item = &'a [f64]>) -> f64 {
        let (sum, count) = draws
            .into_iter()
            .fold((0.0, 0usize), |(s, n), w| (s + self.test_error(w), n + 1));
        sum / count as f64
    }

    /// The posterior predictive probability of label 1 for every held-out
    /// row: σ(xₙᵀw) averaged over `draws` (each a w of length D); `NaN`s
    /// without draws.
    pub fn mean_probabilities<'a>(&self, draws: impl IntoIterator<Item = &'a [f64]>) -> Vec<f64> {
        let mut sum = vec![0.0; self.len()];
        let mut count = 0usize;
        for w in draws {
            assert_eq!(
                w.len(),
                self.dimension,
                "each draw has the design's dimension"
            );
            for (s, x) in sum.iter_mut().zip(self.rows()) {
                *s += sigmoid(linear(x, w));
            }
            count += 1;
        }
        sum.iter().map(|s| s / count as f64).collect()
    }

    /// The fraction of held-out rows misclassified by probabilities `p`
    /// (one per row; predicting 1 where pₙ > ½); `NaN` when a pₙ is.
    pub fn error_of_probabilities(&self, p: &[f64]) -> f64 {
        assert_eq!(p.len(), self.len(), "one probability per held-out row");
        if p.iter().any(|p| p.is_nan()) {
            return f64::NAN;
        }
        let wrong = p
            .iter()
            .zip(&self.labels)
            .filter(|(p, t)| (**p > 0.5) != (**t == 1.0))
            .count();
        wrong as f64 / self.len() as f64
    }

    /// The test error of the posterior predictive classifier: predicts 1
    /// where [`mean_probabilities`](Self::mean_probabilities) over `draws`
    /// exceeds ½; `NaN` without draws.
    pub fn predictive_test_error<'a>(&self, draws: impl IntoIterator<Item = &'a [f64]>) -> f64 {
        self.error_of_probabilities(&self.mean_probabilities(draws))
    }
}
