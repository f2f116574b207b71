//! Preconditioned SGLD with an RMSprop preconditioner (Li et al. 2016).

use super::{DefaultStepSize, SamplerEntry};
use crate::run::SamplerKind;
use crate::run::pilot::{PilotInputs, SgDefaults};

pub(super) const ROW: SamplerEntry = SamplerEntry {
    kind: SamplerKind::Psgld,
    name: "psgld",
    description: "pSGLD, RMSprop preconditioner (Li et al. 2016); biased O(eps)",
    exact: false,
    minibatches: true,
    step_size: DefaultStepSize::PerSqrtDataPoint(0.01),
    pilot: Some(pilot),
    ..SamplerEntry::BASE
};

/// Langevin with P ≈ its RMSprop preconditioner near the mode,
/// 1 / √((1 + ν) Aᵢᵢ).
fn pilot(p: &PilotInputs<'_>, out: &mut SgDefaults) -> Result<(), String> {
    let preconditioner: Vec<f64> = p
        .diagonal
        .iter()
        .map(|d| 1.0 / ((1.0 + p.nu) * d).sqrt())
        .collect();
    p.langevin(out, &preconditioner)
}
