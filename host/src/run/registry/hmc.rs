//! Hamiltonian Monte Carlo with identity mass (Neal 2011).

use super::{HeaderContext, SamplerEntry, push};
use crate::run::SamplerKind;

const KIND: SamplerKind = SamplerKind::Hmc;

pub(super) const ROW: SamplerEntry = SamplerEntry {
    kind: KIND,
    name: "hmc",
    description: "HMC with identity mass (Neal 2011); exact",
    hamiltonian: true,
    options: &["leapfrog_steps"],
    header,
    ..SamplerEntry::BASE
};

fn header(c: &HeaderContext<'_>, out: &mut Vec<(String, String)>) {
    push(out, "leapfrog_steps", c.settings.leapfrog_steps_for(KIND));
}
