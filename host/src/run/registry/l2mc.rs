//! L2MC: AMAGOLD with full-batch gradients.

use super::{SamplerEntry, amagold};
use crate::run::SamplerKind;

pub(super) const ROW: SamplerEntry = SamplerEntry {
    kind: SamplerKind::L2mc,
    name: "l2mc",
    description: "L2MC: AMAGOLD with full-batch gradients; exact",
    options: &["leapfrog_steps", "friction"],
    friction: 0.1,
    header: amagold::inner_steps_and_friction,
    ..SamplerEntry::BASE
};
