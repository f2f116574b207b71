//! Bayesian logistic regression, with the German credit data set built in.

use qnmc::{MinibatchPotential, Potential};
use rand_core::Rng;

/// The German credit data (UCI Statlog, CC BY 4.0), vendored in `host/data/`.
const GERMAN_CREDIT: &str = include_str!("../../data/german_credit/german.data-numeric");

/// Bayesian logistic regression with prior w ~ N(0, v·I):
///
/// U(w) = Σₙ [log(1 + e^{fₙ}) − tₙ fₙ] + ‖w‖²/(2v),  fₙ = xₙᵀw,
/// ∇U(w) = Σₙ (σ(fₙ) − tₙ) xₙ + w/v.
///
/// As a [`MinibatchPotential`] a batch is `B` indices drawn uniformly with
/// replacement (an array: drawing one never allocates) and
/// ∇Ũ_Ω(w) = w/v + (N/B) Σ_{n∈Ω} (σ(fₙ) − tₙ) xₙ, an unbiased estimate of ∇U.
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

    fn linear(&self, n: usize, w: &[f64; D]) -> f64 {
        let x = &self.design[n];
        let mut f = 0.0;
        for i in 0..D {
            f += x[i] * w[i];
        }
        f
    }

    /// Adds `weight`·(σ(fₙ) − tₙ)·xₙ to `g`.
    fn add_likelihood_gradient(&self, n: usize, w: &[f64; D], weight: f64, g: &mut [f64; D]) {
        let f = self.linear(n, w);
        let r = weight * (sigmoid(f) - self.labels[n]);
        let x = &self.design[n];
        for i in 0..D {
            g[i] += r * x[i];
        }
    }
}

impl<const B: usize> LogisticRegression<25, B> {
    /// The German credit model of the RMHMC / Zhang & Sutton / AMAGOLD papers:
    /// N = 1000, the 24 covariates standardised (mean, N−1 standard deviation),
    /// design [1, X] (intercept first), labels 1 → 0 and 2 → 1, prior
    /// N(0, 100·I); D = 25.
    pub fn german_credit() -> Self {
        let mut raw: Vec<[f64; 24]> = Vec::with_capacity(1000);
        let mut labels = Vec::with_capacity(1000);
        for line in GERMAN_CREDIT.lines() {
            let values: Vec<f64> = line
                .split_whitespace()
                .map(|v| v.parse::<f64>().expect("vendored data are numbers"))
                .collect();
            if values.is_empty() {
                continue;
            }
            assert_eq!(values.len(), 25, "24 covariates and a label per row");
            let mut row = [0.0; 24];
            row.copy_from_slice(&values[..24]);
            raw.push(row);
            labels.push(if values[24] == 2.0 { 1.0 } else { 0.0 });
        }
        let n = raw.len() as f64;
        let mut means = [0.0; 24];
        let mut sds = [0.0; 24];
        for j in 0..24 {
            means[j] = raw.iter().map(|r| r[j]).sum::<f64>() / n;
            let ss: f64 = raw.iter().map(|r| (r[j] - means[j]).powi(2)).sum();
            sds[j] = (ss / (n - 1.0)).sqrt();
        }
        let design = raw
            .iter()
            .map(|r| {
                let mut x = [0.0; 25];
                x[0] = 1.0;
                for j in 0..24 {
                    x[j + 1] = (r[j] - means[j]) / sds[j];
                }
                x
            })
            .collect();
        LogisticRegression::new(design, labels, 100.0)
    }
}

/// σ(f) = 1/(1 + e^{−f}), without overflow.
fn sigmoid(f: f64) -> f64 {
    if f >= 0.0 {
        1.0 / (1.0 + (-f).exp())
    } else {
        let e = f.exp();
        e / (1.0 + e)
    }
}

impl<const D: usize, const B: usize> Potential<f64, D> for LogisticRegression<D, B> {
    fn potential_and_gradient(&self, w: &[f64; D], g: &mut [f64; D]) -> f64 {
        let inv_v = 1.0 / self.prior_variance;
        let mut u = 0.0;
        for i in 0..D {
            g[i] = w[i] * inv_v;
            u += 0.5 * w[i] * w[i] * inv_v;
        }
        for n in 0..self.len() {
            let f = self.linear(n, w);
            // One exponential per row: e = exp(−|f|) gives both log(1 + e^f)
            // and σ(f) without overflow.
            let e = (-f.abs()).exp();
            u += f.max(0.0) + e.ln_1p() - self.labels[n] * f;
            let s = if f >= 0.0 {
                1.0 / (1.0 + e)
            } else {
                e / (1.0 + e)
            };
            let r = s - self.labels[n];
            let x = &self.design[n];
            for i in 0..D {
                g[i] += r * x[i];
            }
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
        let inv_v = 1.0 / self.prior_variance;
        for i in 0..D {
            g[i] = w[i] * inv_v;
        }
        if B == 0 {
            return;
        }
        let weight = self.len() as f64 / B as f64;
        for &n in batch {
            self.add_likelihood_gradient(n as usize, w, weight, g);
        }
    }
}
