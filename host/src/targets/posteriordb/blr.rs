//! sblrc-blr: Bayesian linear regression.
//!
//! Stan model (posteriordb `blr.stan`): β ~ N(0, 10) (D = 5), σ ~ N(0, 10)
//! with σ > 0, y ~ N(Xβ, σ) (N = 100). Unconstrained x = (β₁…β_D,
//! s = log σ), with the log-Jacobian s of σ = eˢ:
//!
//! U = ‖β‖²/200 + σ²/200 + ‖y − Xβ‖²/(2σ²) + N·s − s.

use super::density::{Density, indexed};
use crate::input::{InputError, InputErrorKind};
use crate::input::{expect_len, field, number, number_list, numbers};
use serde_json::Value;
use std::path::Path;

#[derive(Debug, Clone)]
pub(crate) struct LinearRegression {
    /// Row-major N × D.
    x: Vec<f64>,
    y: Vec<f64>,
    columns: usize,
}

const PRIOR_VARIANCE: f64 = 100.0;

impl LinearRegression {
    /// From the data `{N, D, X (list of rows), y}`.
    pub fn from_data(data: &Value, file: &Path) -> Result<Self, InputError> {
        let n = number(data, "N", file)? as usize;
        let d = number(data, "D", file)? as usize;
        let y = number_list(data, "y", file)?;
        expect_len(y.len(), n, "entry \"y\"", file)?;
        let rows = field(data, "X", file)?.as_array().ok_or_else(|| {
            InputError::new(
                file,
                InputErrorKind::Format,
                "entry \"X\" is not a list of rows",
            )
        })?;
        expect_len(rows.len(), n, "entry \"X\"", file)?;
        let mut x = Vec::with_capacity(n * d);
        for (i, row) in rows.iter().enumerate() {
            let row = numbers(row, &format!("X[{}]", i + 1), file)?;
            expect_len(row.len(), d, &format!("row X[{}]", i + 1), file)?;
            x.extend(row);
        }
        Ok(LinearRegression { x, y, columns: d })
    }
}

impl Density for LinearRegression {
    fn dimension(&self) -> usize {
        self.columns + 1
    }

    fn potential_and_gradient(&self, p: &[f64], g: &mut [f64]) -> f64 {
        let d = self.columns;
        let s = p[d];
        let sigma2 = (2.0 * s).exp();
        let beta = &p[..d];
        let mut u = 0.0;
        for k in 0..d {
            u += 0.5 * beta[k] * beta[k] / PRIOR_VARIANCE;
            g[k] = beta[k] / PRIOR_VARIANCE;
        }
        let mut ss = 0.0;
        for (row, &y) in self.x.chunks_exact(d).zip(&self.y) {
            let e = y - row.iter().zip(beta).map(|(a, b)| a * b).sum::<f64>();
            ss += e * e;
            for k in 0..d {
                g[k] -= e * row[k] / sigma2;
            }
        }
        let n = self.y.len() as f64;
        u += 0.5 * sigma2 / PRIOR_VARIANCE + 0.5 * ss / sigma2 + (n - 1.0) * s;
        g[d] = sigma2 / PRIOR_VARIANCE - ss / sigma2 + n - 1.0;
        u
    }

    fn output_names(&self) -> Vec<String> {
        let mut names: Vec<String> = indexed("beta", self.columns).collect();
        names.push("sigma".into());
        names
    }

    fn constrain(&self, p: &[f64], out: &mut [f64]) {
        let d = self.columns;
        out[..d].copy_from_slice(&p[..d]);
        out[d] = p[d].exp();
    }
}
