//! Stochastic-gradient Riemannian Langevin dynamics (Patterson & Teh 2013).

use super::{DefaultStepSize, HeaderContext, SamplerEntry, push};
use crate::run::SamplerKind;
use crate::run::pilot::{PilotInputs, SgDefaults};

pub(super) const ROW: SamplerEntry = SamplerEntry {
    kind: SamplerKind::Sgrld,
    name: "sgrld",
    description: "SGRLD (Patterson & Teh 2013), metric G = diag(Hessian at the mode) from the pilot; biased O(eps)",
    exact: false,
    minibatches: true,
    step_size: DefaultStepSize::PerDataPoint(0.1),
    header: constant_metric,
    pilot: Some(pilot),
    ..SamplerEntry::BASE
};

/// The header of SGRLD and SGRHMC: general targets have no G(θ).
pub(super) fn constant_metric(_: &HeaderContext<'_>, out: &mut Vec<(String, String)>) {
    push(out, "metric", "constant G = I");
}

/// Langevin with P = G⁻¹ = diag(A)⁻¹.
fn pilot(p: &PilotInputs<'_>, out: &mut SgDefaults) -> Result<(), String> {
    let inverse: Vec<f64> = p.diagonal.iter().map(|d| 1.0 / d).collect();
    p.langevin(out, &inverse)?;
    out.inverse_metric = Some(inverse);
    Ok(())
}
