//! Stochastic-gradient Riemann HMC (Ma, Chen & Fox 2015).

use super::{DefaultStepSize, SamplerEntry, sgrld};
use crate::run::SamplerKind;
use crate::run::pilot::{PilotInputs, SgDefaults};

pub(super) const ROW: SamplerEntry = SamplerEntry {
    kind: SamplerKind::Sgrhmc,
    name: "sgrhmc",
    description: "SGRHMC (Ma, Chen & Fox 2015), diagonal metric from the pilot's Hessian; biased O(eps)",
    exact: false,
    minibatches: true,
    step_size: DefaultStepSize::PerSqrtDataPoint(0.1),
    header: sgrld::constant_metric,
    pilot: Some(pilot),
    ..SamplerEntry::BASE
};

/// G⁻¹ = t / diag(A): in θ̃ = diag(A)^½ θ the step is h = ε√t, the
/// stiffness ρ ∈ eig(diag(A)^-½ A diag(A)^-½) and the friction per unit
/// time fᵢ = √t / Aᵢᵢ; t = s² ρ_max with s the geometric mean of diag(A)
/// damps the stiffest direction critically.
fn pilot(p: &PilotInputs<'_>, out: &mut SgDefaults) -> Result<(), String> {
    let diagonal = p.diagonal;
    let n = p.dimension();
    let unit: Vec<f64> = diagonal.iter().map(|d| 1.0 / d).collect();
    let (rho_min, rho_max) = p.eigenvalue_range(&unit)?;
    let s = (diagonal.iter().map(|d| d.ln()).sum::<f64>() / n as f64).exp();
    let t = s * s * rho_max;
    let (d_min, d_max) = diagonal
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &d| {
            (lo.min(d), hi.max(d))
        });
    let (f_min, f_max) = (t.sqrt() / d_max, t.sqrt() / d_min);
    let h = 2.0 * p.beta * f_min / ((1.0 + p.nu) * rho_max);
    out.stiffest = rho_max;
    out.slowest = rho_min;
    out.step_size = h / t.sqrt();
    out.relaxation_iterations = (f_max / (h * rho_min)).max(2.0 / (h * f_min));
    out.inverse_metric = Some(diagonal.iter().map(|d| t / d).collect());
    Ok(())
}
