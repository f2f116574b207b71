//! NUTS (Hoffman & Gelman 2014, Stan's multinomial form) with a metric
//! learned in a windowed warm-up (`--metric`).

use super::{DELTA, HeaderContext, SamplerEntry, SamplerMemory, push};
use crate::run::{
    MetricKind, NUTS_NO_OPTIMUM_COVARIANCE_BUCKET, NUTS_WINDOW_COVARIANCE_MEMORY, SamplerKind,
    memory_bucket, nuts_lbfgs_storage,
};

const KIND: SamplerKind = SamplerKind::Nuts;

pub(super) const ROW: SamplerEntry = SamplerEntry {
    kind: KIND,
    name: "nuts",
    description: "NUTS (Hoffman & Gelman 2014, multinomial, generalised U-turn) with a metric learned in warm-up (--metric); exact",
    any_dimension: false,
    hamiltonian: true,
    // `memory` only with the L-BFGS metric (cli/applicability.rs).
    options: &["memory", "metric", "max_tree_depth", "early_end"],
    // 500: the warm-up starts from an L-BFGS optimisation and keeps a
    // metric only when it beats the others on the Fisher criterion
    // (measured with `qnmc-compare`: warm-up 500 instead of 1000 kept the
    // kept-draw ESS per gradient and R̂ on every benchmark target while
    // halving the tuning cost).
    warmup: 500,
    target_acceptance: DELTA,
    // 20 pairs: on German credit, D = 25, 10 pairs left directions at the
    // base scale and gave 0.7x the ESS per gradient of 20 (`qnmc run
    // --sampler nuts --memory 10|20 --target logreg-german`).
    memory: SamplerMemory::NutsMetric { default: 20 },
    header,
    ..SamplerEntry::BASE
};

fn header(c: &HeaderContext<'_>, out: &mut Vec<(String, String)>) {
    let s = c.settings;
    let metric = s.metric_for(KIND);
    let text = match (metric, s.step_size) {
        (_, Some(_)) => format!("{metric} (not adapted: the step size is fixed)"),
        (MetricKind::Lbfgs, None) => lbfgs_metric_text(c),
        (_, None) => format!("{metric}, learned in Stan's slow windows"),
    };
    push(out, "metric", text);
    push(out, "max_tree_depth", s.max_tree_depth_for());
}

/// The quasi-Newton metric's header line: its pairs, and where the window's
/// covariance or the optimum's secants may take over.
fn lbfgs_metric_text(c: &HeaderContext<'_>) -> String {
    let s = c.settings;
    let memory = s.memory_for(KIND);
    let storage =
        nuts_lbfgs_storage(c.padded, memory_bucket(memory), s.window_covariance).unwrap_or(memory);
    let fits = c.model.dimension() <= storage;
    let no_optimum_only = fits
        && storage == NUTS_WINDOW_COVARIANCE_MEMORY
        && c.padded == NUTS_NO_OPTIMUM_COVARIANCE_BUCKET;
    format!(
        "{}: diagonal base plus up to {memory} conjugated pairs between warm-up draws{}{}",
        MetricKind::Lbfgs,
        if s.window_covariance && no_optimum_only {
            ", or the window's covariance metric where the start found no optimum"
        } else if s.window_covariance && fits {
            ", or the window's covariance metric where its gradient is near linear"
        } else {
            ""
        },
        if s.optimum_secants && fits && !no_optimum_only {
            "; the first metric from central secants at the L-BFGS optimum"
        } else {
            ""
        }
    )
}
