//! The HMC-BFGS ensemble (Zhang & Sutton 2011, Algorithm 1).

use super::{HeaderContext, SamplerEntry, ensemble_line, push};
use crate::run::SamplerKind;

const KIND: SamplerKind = SamplerKind::HmcBfgs;

pub(super) const ROW: SamplerEntry = SamplerEntry {
    kind: KIND,
    name: "hmc-bfgs",
    description: "HMC-BFGS ensemble (Zhang & Sutton 2011, Alg. 1); exact",
    hamiltonian: true,
    options: &["leapfrog_steps"],
    header,
    ..SamplerEntry::BASE
};

fn header(c: &HeaderContext<'_>, out: &mut Vec<(String, String)>) {
    push(out, "leapfrog_steps", c.settings.leapfrog_steps_for(KIND));
    ensemble_line(out);
}
