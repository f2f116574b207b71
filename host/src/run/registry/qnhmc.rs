//! Quasi-Newton HMC (Fu, Luo & Zhang 2016, Algorithm 2).

use super::{HeaderContext, SamplerEntry, SamplerMemory, gamma_text, push};
use crate::run::{RunSettings, SamplerKind};

const KIND: SamplerKind = SamplerKind::Qnhmc;

pub(super) const ROW: SamplerEntry = SamplerEntry {
    kind: KIND,
    name: "qnhmc",
    description: "quasi-Newton HMC (Fu, Luo & Zhang 2016, Alg. 2); exact once the memory is frozen",
    hamiltonian: true,
    options: &[
        "leapfrog_steps",
        "memory",
        "mass",
        "freeze_after",
        "adaptive_memory",
        "gamma",
    ],
    memory: SamplerMemory::Pairs { default: 10 },
    step_size_restart,
    header,
    ..SamplerEntry::BASE
};

/// The step size adapts afresh once the memory freezes: the metric changed.
fn step_size_restart(s: &RunSettings) -> Option<usize> {
    s.qnhmc_freeze_after.map(|n| n.min(s.warmup))
}

fn header(c: &HeaderContext<'_>, out: &mut Vec<(String, String)>) {
    let s = c.settings;
    push(out, "leapfrog_steps", s.leapfrog_steps_for(KIND));
    push(out, "memory", s.memory_for(KIND));
    push(out, "mass", format!("{:?}", s.qnhmc_mass));
    push(out, "gamma", gamma_text(s.gamma_for(KIND)));
    push(
        out,
        "memory_update",
        match s.qnhmc_freeze_after {
            Some(n) => format!("frozen after {} warm-up iterations", n.min(s.warmup)),
            None => "adaptive (the paper's; not an exact kernel)".to_string(),
        },
    );
}
