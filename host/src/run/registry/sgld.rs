//! Stochastic-gradient Langevin dynamics (Welling & Teh 2011).

use super::{DefaultStepSize, SamplerEntry};
use crate::run::SamplerKind;
use crate::run::pilot::{PilotInputs, SgDefaults};

pub(super) const ROW: SamplerEntry = SamplerEntry {
    kind: SamplerKind::Sgld,
    name: "sgld",
    description: "SGLD (Welling & Teh 2011); biased O(eps)",
    exact: false,
    minibatches: true,
    step_size: DefaultStepSize::PerDataPoint(0.1),
    pilot: Some(pilot),
    ..SamplerEntry::BASE
};

/// Langevin with P = I.
fn pilot(p: &PilotInputs<'_>, out: &mut SgDefaults) -> Result<(), String> {
    p.langevin(out, &vec![1.0; p.dimension()])
}
