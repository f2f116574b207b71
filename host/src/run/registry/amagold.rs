//! AMAGOLD: minibatch inner steps, a full-data Metropolis test (Zhang,
//! Cooper & De Sa 2020, Algorithm 2).

use super::{HeaderContext, SamplerEntry, push};
use crate::run::SamplerKind;

const KIND: SamplerKind = SamplerKind::Amagold;

pub(super) const ROW: SamplerEntry = SamplerEntry {
    kind: KIND,
    name: "amagold",
    description: "AMAGOLD (Zhang, Cooper & De Sa 2020, Alg. 2): minibatch steps, full MH test; exact",
    minibatches: true,
    options: &["leapfrog_steps", "friction"],
    friction: 0.1,
    header: inner_steps_and_friction,
    refuse_unthinned: Some(refuse_unthinned),
    ..SamplerEntry::BASE
};

/// The header of AMAGOLD and of L2MC, its full-batch form.
pub(super) fn inner_steps_and_friction(c: &HeaderContext<'_>, out: &mut Vec<(String, String)>) {
    let (s, kind) = (c.settings, c.kind);
    push(out, "inner_steps", s.leapfrog_steps_for(kind));
    push(out, "friction", s.friction_for(kind));
}

/// Measured with `qnmc check` (docs/DEFAULTS.md): R-hat 2.08 on
/// logreg-heart and 3.45 on logreg-german unthinned.
fn refuse_unthinned(_dimension: usize, data_size: Option<usize>) -> Option<String> {
    data_size.is_some().then(|| {
        "amagold needs --thin on a target with data: the minibatch noise in its energy keeps \
         the adapted step small (about 0.003 on logreg-heart) and 1000 unthinned draws do not \
         mix (measured R-hat 2.1 on logreg-heart, 3.5 on logreg-german; --thin 50 passed \
         `qnmc check` on logreg-heart but not on logreg-german). Give --thin N, or use l2mc \
         (its full-batch form) or nuts"
            .into()
    })
}
