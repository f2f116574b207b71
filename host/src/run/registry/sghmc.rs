//! Stochastic-gradient HMC (Chen, Fox & Guestrin 2014).

use super::{DefaultStepSize, HeaderContext, SamplerEntry, push};
use crate::run::SamplerKind;
use crate::run::pilot::{PilotInputs, SgDefaults};

const KIND: SamplerKind = SamplerKind::Sghmc;

pub(super) const ROW: SamplerEntry = SamplerEntry {
    kind: KIND,
    name: "sghmc",
    description: "SGHMC (Chen, Fox & Guestrin 2014); biased O(eps)",
    exact: false,
    minibatches: true,
    options: &["friction", "sghmc_update"],
    step_size: DefaultStepSize::PerSqrtDataPoint(0.1),
    header,
    pilot: Some(critically_damped),
    ..SamplerEntry::BASE
};

fn header(c: &HeaderContext<'_>, out: &mut Vec<(String, String)>) {
    let s = c.settings;
    push(out, "friction", s.friction_for(KIND));
    push(
        out,
        "update",
        match s.sghmc_update {
            qnmc::SghmcUpdate::PositionFirst => {
                "position-first (theta, then r with the gradient at the new theta; Chen et al. Alg. 2)"
            }
            qnmc::SghmcUpdate::RecipeEuler => {
                "recipe-euler (theta and r from the old state; Ma et al. eq. 18)"
            }
        },
    );
}

/// The pilot of SGHMC and SGNHT: friction C = √λ_max (the user's if
/// given) damps the stiffest direction critically; ε = 2βC / ((1 + ν)
/// λ_max), τ = C / (ε λ_min).
pub(super) fn critically_damped(p: &PilotInputs<'_>, out: &mut SgDefaults) -> Result<(), String> {
    let c = p.friction.unwrap_or_else(|| p.lambda_max.sqrt());
    out.friction = Some(c);
    out.step_size = 2.0 * p.beta * c / ((1.0 + p.nu) * p.lambda_max);
    out.relaxation_iterations = c / (out.step_size * p.lambda_min);
    Ok(())
}
