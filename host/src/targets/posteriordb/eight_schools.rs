//! eight_schools_noncentered: the non-centred eight-schools model.
//!
//! Stan model (posteriordb `eight_schools_noncentered.stan`): θ̃ ~ N(0, 1)
//! (J = 8), μ ~ N(0, 5), τ ~ Cauchy(0, 5) with τ > 0, θ = μ + τ θ̃,
//! yⱼ ~ N(θⱼ, σⱼ). Unconstrained x = (θ̃₁…θ̃₈, μ, s = log τ), with the
//! log-Jacobian s of τ = eˢ:
//!
//! U = ½Σθ̃ⱼ² + Σ (yⱼ − μ − τθ̃ⱼ)²/(2σⱼ²) + μ²/50 + log(1 + τ²/25) − s.

use super::density::{Density, indexed};
use crate::input::{InputError, InputErrorKind};
use crate::input::{expect_len, number, number_list};
use serde_json::Value;
use std::path::Path;

#[derive(Debug, Clone)]
pub(crate) struct EightSchools {
    y: Vec<f64>,
    sigma: Vec<f64>,
}

const MU_PRIOR_VARIANCE: f64 = 25.0;
const TAU_SCALE: f64 = 5.0;

impl EightSchools {
    /// From the data `{J, y, sigma}`.
    pub fn from_data(data: &Value, file: &Path) -> Result<Self, InputError> {
        let j = number(data, "J", file)?;
        let y = number_list(data, "y", file)?;
        let sigma = number_list(data, "sigma", file)?;
        expect_len(y.len(), j as usize, "entry \"y\"", file)?;
        expect_len(sigma.len(), j as usize, "entry \"sigma\"", file)?;
        if let Some(bad) = sigma.iter().find(|s| !(**s > 0.0 && s.is_finite())) {
            return Err(InputError::new(
                file,
                InputErrorKind::Format,
                format!("entry \"sigma\" must be positive, found {bad}"),
            ));
        }
        Ok(EightSchools { y, sigma })
    }

    fn schools(&self) -> usize {
        self.y.len()
    }
}

impl Density for EightSchools {
    fn dimension(&self) -> usize {
        self.schools() + 2
    }

    fn potential_and_gradient(&self, x: &[f64], g: &mut [f64]) -> f64 {
        let j = self.schools();
        let (mu, s) = (x[j], x[j + 1]);
        let tau = s.exp();
        let mut u = 0.0;
        let mut sum_r = 0.0;
        let mut sum_r_theta = 0.0;
        for i in 0..j {
            let t = x[i];
            let residual = mu + tau * t - self.y[i];
            let var = self.sigma[i] * self.sigma[i];
            let r = residual / var;
            u += 0.5 * t * t + 0.5 * residual * residual / var;
            g[i] = t + tau * r;
            sum_r += r;
            sum_r_theta += r * t;
        }
        let tau2 = tau * tau;
        let c2 = TAU_SCALE * TAU_SCALE;
        u += 0.5 * mu * mu / MU_PRIOR_VARIANCE + (tau2 / c2).ln_1p() - s;
        g[j] = sum_r + mu / MU_PRIOR_VARIANCE;
        g[j + 1] = tau * sum_r_theta + 2.0 * tau2 / (c2 + tau2) - 1.0;
        u
    }

    fn output_names(&self) -> Vec<String> {
        let mut names: Vec<String> = indexed("theta", self.schools()).collect();
        names.push("mu".into());
        names.push("tau".into());
        names
    }

    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        let j = self.schools();
        let (mu, tau) = (x[j], x[j + 1].exp());
        for i in 0..j {
            out[i] = mu + tau * x[i];
        }
        out[j] = mu;
        out[j + 1] = tau;
    }
}
