//! The stochastic-gradient Nosé–Hoover thermostat (Ding et al. 2014).

use super::{DefaultStepSize, HeaderContext, SamplerEntry, push, sghmc};
use crate::run::SamplerKind;

const KIND: SamplerKind = SamplerKind::Sgnht;

pub(super) const ROW: SamplerEntry = SamplerEntry {
    kind: KIND,
    name: "sgnht",
    description: "SGNHT thermostat (Ding et al. 2014); biased O(eps)",
    exact: false,
    minibatches: true,
    options: &["friction"],
    step_size: DefaultStepSize::PerSqrtDataPoint(0.1),
    header,
    pilot: Some(sghmc::critically_damped),
    ..SamplerEntry::BASE
};

fn header(c: &HeaderContext<'_>, out: &mut Vec<(String, String)>) {
    push(out, "friction", c.settings.friction_for(KIND));
}
