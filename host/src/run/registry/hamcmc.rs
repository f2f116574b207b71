//! Hessian-approximated stochastic-gradient MCMC (Şimşekli et al. 2016).

use qnmc::lbfgs::InitialScaling;

use super::{DefaultStepSize, HeaderContext, SamplerEntry, SamplerMemory, gamma_text, push};
use crate::run::pilot::{PilotInputs, SgDefaults};
use crate::run::{HAMCMC_MEMORY_SIZES, RunSettings, SamplerKind};

const KIND: SamplerKind = SamplerKind::Hamcmc;

pub(super) const ROW: SamplerEntry = SamplerEntry {
    kind: KIND,
    name: "hamcmc",
    description: "HAMCMC, L-BFGS preconditioned SG-MCMC (Simsekli et al. 2016); biased O(eps)",
    exact: false,
    minibatches: true,
    options: &["memory", "step_decay", "gamma"],
    step_size: DefaultStepSize::PerDataPoint(0.1),
    memory: SamplerMemory::Sizes {
        default: 5,
        sizes: &HAMCMC_MEMORY_SIZES,
    },
    gamma: InitialScaling::Fixed(1.0),
    check,
    header,
    pilot: Some(pilot),
    ..SamplerEntry::BASE
};

fn check(s: &RunSettings) -> Result<(), String> {
    match s.gamma {
        Some(InitialScaling::NewestPair(_)) => Err(
            "--gamma newest is for qnhmc; hamcmc takes a number (its paper's fixed gamma)".into(),
        ),
        _ => Ok(()),
    }
}

fn header(c: &HeaderContext<'_>, out: &mut Vec<(String, String)>) {
    let s = c.settings;
    push(out, "memory", s.memory_for(KIND));
    push(out, "gamma", gamma_text(s.gamma_for(KIND)));
    push(
        out,
        "schedule",
        match s.hamcmc_decay {
            Some(k) => format!("block-decaying, exponent {k}"),
            None => "constant".to_string(),
        },
    );
}

/// γ = 1 / λ_max(A) keeps μ ≤ 1 off the memory's span; ε = β / (1 + ν) and
/// τ = M / (2ε √μ_min) (the pilot's module docs).
fn pilot(p: &PilotInputs<'_>, out: &mut SgDefaults) -> Result<(), String> {
    let g = p.gamma.unwrap_or(1.0 / p.lambda_max);
    out.gamma = Some(g);
    out.stiffest = (g * p.lambda_max).max(1.0);
    out.slowest = (g * p.lambda_min).min(1.0);
    out.step_size = p.beta / ((1.0 + p.nu) * out.stiffest);
    out.relaxation_iterations = p.memory as f64 / (2.0 * out.step_size * out.slowest.sqrt());
    Ok(())
}
