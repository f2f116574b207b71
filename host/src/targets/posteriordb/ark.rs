//! arK-arK: an autoregressive AR(K) time series.
//!
//! Stan model (posteriordb `arK.stan`): α ~ N(0, 10), β ~ N(0, 10) (K = 5),
//! σ ~ Cauchy(0, 2.5) with σ > 0, y_t ~ N(α + Σₖ βₖ y_{t−k}, σ) for
//! t = K+1…T (T = 200). Unconstrained x = (α, β₁…β_K, s = log σ), with the
//! log-Jacobian s of σ = eˢ:
//!
//! U = α²/200 + ‖β‖²/200 + log(1 + σ²/6.25) + Σ_t e_t²/(2σ²) + (T − K)·s − s.

use super::density::{Density, indexed};
use crate::input::{InputError, InputErrorKind};
use crate::input::{expect_len, number, number_list};
use serde_json::Value;
use std::path::Path;

#[derive(Debug, Clone)]
pub(crate) struct AutoRegression {
    y: Vec<f64>,
    order: usize,
}

const PRIOR_VARIANCE: f64 = 100.0;
const SIGMA_SCALE: f64 = 2.5;

impl AutoRegression {
    /// From the data `{K, T, y}`.
    pub fn from_data(data: &Value, file: &Path) -> Result<Self, InputError> {
        let order = number(data, "K", file)? as usize;
        let t = number(data, "T", file)? as usize;
        let y = number_list(data, "y", file)?;
        expect_len(y.len(), t, "entry \"y\"", file)?;
        if order >= t {
            return Err(InputError::new(
                file,
                InputErrorKind::Dimension,
                format!("the order K = {order} leaves no observations among T = {t}"),
            ));
        }
        Ok(AutoRegression { y, order })
    }
}

impl Density for AutoRegression {
    fn dimension(&self) -> usize {
        self.order + 2
    }

    fn potential_and_gradient(&self, p: &[f64], g: &mut [f64]) -> f64 {
        let k = self.order;
        let alpha = p[0];
        let beta = &p[1..=k];
        let s = p[k + 1];
        let sigma2 = (2.0 * s).exp();
        let mut u = 0.5 * alpha * alpha / PRIOR_VARIANCE;
        g[0] = alpha / PRIOR_VARIANCE;
        for i in 0..k {
            u += 0.5 * beta[i] * beta[i] / PRIOR_VARIANCE;
            g[i + 1] = beta[i] / PRIOR_VARIANCE;
        }
        let mut ss = 0.0;
        for t in k..self.y.len() {
            let mut mu = alpha;
            for i in 0..k {
                mu += beta[i] * self.y[t - i - 1];
            }
            let e = self.y[t] - mu;
            ss += e * e;
            g[0] -= e / sigma2;
            for i in 0..k {
                g[i + 1] -= e * self.y[t - i - 1] / sigma2;
            }
        }
        let observed = (self.y.len() - k) as f64;
        let c2 = SIGMA_SCALE * SIGMA_SCALE;
        u += (sigma2 / c2).ln_1p() + 0.5 * ss / sigma2 + (observed - 1.0) * s;
        g[k + 1] = 2.0 * sigma2 / (c2 + sigma2) - ss / sigma2 + observed - 1.0;
        u
    }

    fn output_names(&self) -> Vec<String> {
        let mut names = vec!["alpha".to_owned()];
        names.extend(indexed("beta", self.order));
        names.push("sigma".into());
        names
    }

    fn constrain(&self, p: &[f64], out: &mut [f64]) {
        let k = self.order;
        out[..=k].copy_from_slice(&p[..=k]);
        out[k + 1] = p[k + 1].exp();
    }
}
