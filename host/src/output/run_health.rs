//! Is the run usable, and what should its user worry about? The checks Stan,
//! CmdStan and ArviZ users expect after every run, printed by `qnmc run` and
//! written to `summary.json` (`diagnostics`).
//!
//! Unusable (`qnmc run` exits with code 3):
//! - every kept transition of a chain diverged;
//! - a chain never moved (every kept draw identical), or stayed at one point
//!   for more than half of its kept draws in a row (at least
//!   [`FROZEN_MIN_DRAWS`]): where every transition diverged or was rejected,
//!   as in a funnel's neck. No run that passed `qnmc check` on the
//!   hierarchical suite is refused by it (`docs/HIERARCHICAL.md`);
//! - an infinite `lp__` or a non-finite parameter value among the kept draws
//!   (a NaN `lp__` is one that was not computed: `--lp`);
//! - chains that never met: a chain, or a group of chains, whose central
//!   90 % of draws in `lp__` or a quantity lies apart from the others' with
//!   R̂ above 1.1 ([`super::separated_chains`]; a funnel's neck, or separated
//!   modes).
//!
//! Warnings (`qnmc run --strict` exits with code 4 when there is any):
//! - divergent transitions after warm-up;
//! - rank-normalised R̂ above [`RHAT_WARNING`] = 1.01 (Vehtari et al. 2021);
//! - bulk or tail ESS below [`ESS_PER_CHAIN`] = 100 per chain;
//! - E-BFMI below [`EBFMI_WARNING`] = 0.3 in a chain (the samplers that
//!   report the energy `energy__`: NUTS, HMC, QNHMC, HMC-BFGS; Betancourt
//!   2016);
//! - transitions that hit NUTS's maximum tree depth;
//! - mean acceptance more than [`ACCEPTANCE_TOLERANCE`] below the target the
//!   step size was adapted to (or, for the samplers other than NUTS, above
//!   it), or below [`FIXED_STEP_ACCEPTANCE`] with a fixed step size.
//!
//! Notes (never a failure): the stochastic-gradient samplers have no
//! Metropolis test; their step-size bias is invisible to R̂ and ESS. A chain
//! of NUTS with the quasi-Newton metric that started again because its
//! first optimum was a minor mode ([`crate::run::MINOR_MODE_LOG_MASS`]).

use serde_json::{Value, json};

use super::row_facts::RowFacts;
use super::run_summary::RunSummary;
use crate::draws::{ChainRestart, Interruption, RestartReason, RunDraws, StepSizeOrigin};
use crate::run::{MAX_TREE_DEPTH, SamplerKind};

/// R̂ above this is a warning.
pub const RHAT_WARNING: f64 = 1.01;
/// Bulk or tail ESS below this many per chain is a warning.
pub const ESS_PER_CHAIN: f64 = 100.0;
/// E-BFMI below this in any chain is a warning.
pub const EBFMI_WARNING: f64 = 0.3;
/// Mean acceptance further than this from the adapted target is a warning.
pub const ACCEPTANCE_TOLERANCE: f64 = 0.15;
/// A chain that stayed at one point for more than half of its kept draws in
/// a row, and for at least this many, is unusable.
pub const FROZEN_MIN_DRAWS: usize = 20;
/// With a fixed step size, mean acceptance below this is a warning (an
/// exact sampler that rejects nearly every proposal barely moves).
pub const FIXED_STEP_ACCEPTANCE: f64 = 0.1;

/// The verdict on a run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunHealth {
    /// Why the draws are unusable; empty when they are usable.
    pub unusable: Vec<String>,
    /// Warnings, one sentence each.
    pub warnings: Vec<String>,
    /// Notes that are not failures (what the diagnostics cannot see).
    pub notes: Vec<String>,
    /// E-BFMI per chain (NUTS; empty for samplers without energies).
    pub ebfmi: Vec<f64>,
    /// Kept transitions that hit the maximum tree depth (NUTS), all chains.
    pub max_depth_hits: Option<usize>,
}

impl RunHealth {
    /// `true` when the draws can be used (there may still be warnings).
    pub fn usable(&self) -> bool {
        self.unusable.is_empty()
    }

    /// The lines `qnmc run` prints: `unusable: …`, `warning: …`, `note: …`.
    pub fn lines(&self) -> Vec<String> {
        self.unusable
            .iter()
            .map(|m| format!("unusable: {m}"))
            .chain(self.warnings.iter().map(|m| format!("warning: {m}")))
            .chain(self.notes.iter().map(|m| format!("note: {m}")))
            .collect()
    }

    /// The `diagnostics` object of `summary.json`.
    pub fn json(&self) -> Value {
        json!({
            "usable": self.usable(),
            "unusable_reasons": self.unusable,
            "warnings": self.warnings,
            "notes": self.notes,
            "ebfmi_per_chain": self.ebfmi.iter().map(|&e| number(e)).collect::<Vec<_>>(),
            "max_tree_depth_hits": self.max_depth_hits,
            "thresholds": {
                "rhat": RHAT_WARNING,
                "ess_per_chain": ESS_PER_CHAIN,
                "ebfmi": EBFMI_WARNING,
                "acceptance_tolerance": ACCEPTANCE_TOLERANCE,
            },
        })
    }
}

/// A non-finite number in words (JSON readers choke on `NaN` and `inf`).
fn non_finite(x: f64) -> &'static str {
    if x.is_nan() {
        "not a number"
    } else if x > 0.0 {
        "+∞"
    } else {
        "−∞"
    }
}

/// A JSON number, `null` for NaN and ±∞.
fn number(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// E-BFMI of one chain's energies: Σ(Eₙ − Eₙ₋₁)² / Σ(Eₙ − Ē)² (NaN for
/// fewer than 2 finite values or constant energy).
pub fn ebfmi(energy: &[f64]) -> f64 {
    if energy.len() < 2 || energy.iter().any(|e| !e.is_finite()) {
        return f64::NAN;
    }
    let mean = energy.iter().sum::<f64>() / energy.len() as f64;
    let numerator: f64 = energy.windows(2).map(|w| (w[1] - w[0]).powi(2)).sum();
    let denominator: f64 = energy.iter().map(|e| (e - mean).powi(2)).sum();
    if denominator > 0.0 {
        numerator / denominator
    } else {
        f64::NAN
    }
}

/// What to do about transitions at the maximum tree depth `max`: raise it
/// while it is below [`MAX_TREE_DEPTH`], else the metric or the model.
fn tree_depth_advice(max: u32) -> String {
    if max < MAX_TREE_DEPTH {
        format!(
            "raise --max-tree-depth (now {max}, up to {MAX_TREE_DEPTH}; each level doubles the \
             gradients per transition), or use a better --metric"
        )
    } else {
        format!(
            "{MAX_TREE_DEPTH} is the largest --max-tree-depth; use a better --metric or \
             reparameterise the model"
        )
    }
}

/// The step size that was not adapted, in words, by how it was chosen.
fn unadapted_step_size(origin: StepSizeOrigin) -> &'static str {
    match origin {
        StepSizeOrigin::Given => "a fixed --step-size",
        StepSizeOrigin::Pilot => "the pilot's step size",
        StepSizeOrigin::Default => "the default step size, not adapted (no warm-up to adapt it in)",
        StepSizeOrigin::Adapted | StepSizeOrigin::Unknown => "a step size that was not adapted",
    }
}

/// What to do about a step size, chosen as `origin` says, that rejects
/// nearly every proposal.
fn unadapted_step_size_advice(origin: StepSizeOrigin) -> &'static str {
    match origin {
        StepSizeOrigin::Given => "lower --step-size or leave it out to adapt it",
        StepSizeOrigin::Default => {
            "give a --warmup to adapt the step size in, or a smaller --step-size"
        }
        _ => "give a smaller --step-size",
    }
}

/// What the diagnostics of an interrupted run are computed on: the chains
/// that kept a draw before the stop (`run`, of which the others were left
/// out), cut to the shortest one's number of draws when they kept different
/// numbers (the diagnostics need chains of equal length).
fn interruption_note(run: &RunDraws, interruption: &Interruption) -> String {
    let kept: Vec<String> = interruption.kept.iter().map(usize::to_string).collect();
    let mut note = format!(
        "the run was {}: the chains kept {} draws",
        interruption.describe(),
        kept.join(", ")
    );
    let empty: Vec<String> = (1..)
        .zip(&interruption.kept)
        .filter(|&(_, &k)| k == 0)
        .map(|(id, _)| id.to_string())
        .collect();
    if !empty.is_empty() {
        note.push_str(&format!(
            "; chain{} {} kept none and {} left out of the summary and diagnostics",
            if empty.len() == 1 { "" } else { "s" },
            empty.join(", "),
            if empty.len() == 1 { "is" } else { "are" }
        ));
    }
    let analysed = run.shortest_chain();
    if interruption.kept.iter().any(|&k| k > 0 && k != analysed) {
        note.push_str(&format!(
            "; the summary and diagnostics use the first {analysed} draws of each chain \
             (they need chains of equal length)"
        ));
    }
    note.push_str("; the chain files hold every kept draw");
    note
}

/// Judges `run` (with its [`RunSummary`]): what makes it unusable, then the
/// warnings (divergences, R̂ and ESS, E-BFMI and tree depth, acceptance),
/// then the notes, in that order.
pub fn assess(run: &RunDraws, summary: &RunSummary) -> RunHealth {
    let mut health = RunHealth::default();
    let sampler = run.sampler.parse::<SamplerKind>().ok();
    unusable_chains(run, summary, &mut health);
    if let Some(interruption) = &run.interrupted {
        health.notes.push(interruption_note(run, interruption));
    }

    if let Some(separation) = &summary.separation {
        health.unusable.push(separation.message());
    }

    let kept: usize = run.chains.iter().map(|c| c.len()).sum();
    divergences(run, summary, kept, &mut health);
    mixing(run, summary, &mut health);
    energy_and_depth(run, kept, &mut health);
    acceptance(run, sampler, &mut health);
    notes(run, sampler, &mut health);
    health
}

/// Chains that make the run unusable: every transition divergent, never
/// moved or frozen for over half their draws, a non-finite `lp__` or value.
fn unusable_chains(run: &RunDraws, summary: &RunSummary, health: &mut RunHealth) {
    for (k, c) in run.chains.iter().enumerate() {
        let n = c.len();
        if n > 0 && c.divergent.iter().all(|&d| d) {
            health.unusable.push(format!(
                "chain {}: every one of its {n} kept transitions diverged",
                c.chain_id
            ));
        }
        let rows = summary.chains.get(k).map(|c| &c.rows);
        if rows.is_some_and(|r| r.never_moved) {
            health.unusable.push(format!(
                "chain {}: never moved (all {n} kept draws are identical)",
                c.chain_id
            ));
        } else if let Some(&RowFacts {
            longest_frozen: (first, length),
            ..
        }) = rows
        {
            if 2 * length > n && length >= FROZEN_MIN_DRAWS {
                health.unusable.push(format!(
                    "chain {}: stayed at one point for {length} of its {n} kept draws in a row \
                     (draws {} to {}): every transition from there diverged or was rejected, \
                     as in a funnel's neck; its draws overweight that point. Try a non-centred \
                     parameterisation, a higher --target-acceptance, or --metric diag",
                    c.chain_id,
                    first + 1,
                    first + length
                ));
            }
        }
        // NaN lp__ means "not computed" (minibatch samplers under `--lp none`
        // or `every N`); an exact sampler never keeps a NaN state, and a NaN
        // parameter value is caught below.
        if let Some(i) = c.lp.iter().position(|v| v.is_infinite()) {
            health.unusable.push(format!(
                "chain {}: lp__ is {} at kept draw {} (the log density overflowed or is undefined there)",
                c.chain_id,
                non_finite(c.lp[i]),
                i + 1
            ));
        } else if let Some((i, j, v)) = rows.and_then(|r| r.first_non_finite) {
            health.unusable.push(format!(
                "chain {}: {} is {} at kept draw {}",
                c.chain_id,
                run.names.get(j).map_or("a quantity", String::as_str),
                non_finite(v),
                i + 1
            ));
        }
    }
}

/// Divergent transitions after warm-up, and points where the model threw.
fn divergences(run: &RunDraws, summary: &RunSummary, kept: usize, health: &mut RunHealth) {
    let divergent: usize = summary.chains.iter().map(|c| c.divergences).sum();
    match (&run.evaluation_failures, divergent) {
        (None, 0) => {}
        (None, _) => health.warnings.push(format!(
            "{divergent} of {kept} transitions after warm-up diverged: the draws may be biased \
             (raise --target-acceptance, lower --step-size, or reparameterise the model)"
        )),
        (Some(failures), 0) => health.notes.push(format!(
            "{failures}. No transition after warm-up diverged, so no kept draw met such a \
             point: they were in the start or the warm-up (the tails, where a bound the model \
             checks is easier to cross)"
        )),
        (Some(failures), _) => {
            health.warnings.push(format!(
                "{divergent} of {kept} transitions after warm-up diverged: the draws may be \
                 biased (some or all of them met a point where the model threw, as the next \
                 warning says)"
            ));
            health.warnings.push(format!(
                "{failures}. A point where the model throws is one its parameters' declared \
                 bounds allow but the model refuses (reject(), a function outside its domain): \
                 declare the bound on the parameter (<lower=…>, <upper=…>) or reparameterise so \
                 that the sampler cannot reach it; a higher --target-acceptance or a smaller \
                 step size does not keep the sampler away from it"
            ));
        }
    }
}

/// R̂ and ESS over `lp__` and every quantity: the worst R̂, undefined ones,
/// and bulk and tail ESS below [`ESS_PER_CHAIN`] per chain.
fn mixing(run: &RunDraws, summary: &RunSummary, health: &mut RunHealth) {
    let chains = run.chains.len();
    let mut worst_rhat: Option<(&str, f64)> = None;
    let ess_floor = ESS_PER_CHAIN * chains as f64;
    let mut low_bulk: Option<(&str, f64)> = None;
    let mut low_tail: Option<(&str, f64)> = None;
    let all = std::iter::once(("lp__", &summary.lp)).chain(
        summary
            .quantities
            .iter()
            .map(|qs| (qs.name.as_str(), &qs.stats)),
    );
    let mut undefined = Vec::new();
    for (name, s) in all {
        if s.rhat.is_finite() {
            if worst_rhat.is_none_or(|(_, r)| s.rhat > r) {
                worst_rhat = Some((name, s.rhat));
            }
        } else if s.sd > 0.0 {
            undefined.push(name);
        }
        if s.ess_bulk.is_finite() && low_bulk.is_none_or(|(_, e)| s.ess_bulk < e) {
            low_bulk = Some((name, s.ess_bulk));
        }
        if s.ess_tail.is_finite() && low_tail.is_none_or(|(_, e)| s.ess_tail < e) {
            low_tail = Some((name, s.ess_tail));
        }
    }
    if let Some((name, r)) = worst_rhat.filter(|(_, r)| *r > RHAT_WARNING) {
        health.warnings.push(format!(
            "max R-hat is {r:.3} ({name}) > {RHAT_WARNING}: the chains disagree; run longer \
             (--warmup, --draws) or check the model"
        ));
    }
    if health.usable() && !undefined.is_empty() {
        health.warnings.push(format!(
            "R-hat and ESS are undefined for {} (a chain constant in it, or too few draws)",
            undefined.join(", ")
        ));
    }
    for (kind, low) in [("bulk", low_bulk), ("tail", low_tail)] {
        if let Some((name, e)) = low.filter(|(_, e)| *e < ess_floor) {
            health.warnings.push(format!(
                "{kind} ESS is {e:.0} ({name}) over {chains} chain{}, below {ess_floor:.0} \
                 ({ESS_PER_CHAIN} per chain): too few effective draws for reliable estimates; \
                 run longer",
                if chains == 1 { "" } else { "s" }
            ));
        }
    }
}

/// E-BFMI (the samplers with `energy__`) and tree depth (NUTS).
fn energy_and_depth(run: &RunDraws, kept: usize, health: &mut RunHealth) {
    if run
        .chains
        .iter()
        .all(|c| c.energy.len() == c.len() && c.len() > 1)
    {
        health.ebfmi = run.chains.iter().map(|c| ebfmi(&c.energy)).collect();
        let low: Vec<String> = run
            .chains
            .iter()
            .zip(&health.ebfmi)
            .filter(|(_, e)| **e < EBFMI_WARNING)
            .map(|(c, e)| format!("chain {} {e:.2}", c.chain_id))
            .collect();
        if !low.is_empty() {
            health.warnings.push(format!(
                "E-BFMI below {EBFMI_WARNING} ({}): the momentum resampling explores the energy \
                 poorly (heavy tails or a poor metric); reparameterise or change --metric",
                low.join(", ")
            ));
        }
    }
    if let Some(max) = run.max_tree_depth {
        let hits: usize = run
            .chains
            .iter()
            .map(|c| c.tree_depth.iter().filter(|&&d| d >= max).count())
            .sum();
        health.max_depth_hits = Some(hits);
        if hits > 0 {
            health.warnings.push(format!(
                "{hits} of {kept} transitions hit the maximum tree depth {max}: trajectories were \
                 cut short ({})",
                tree_depth_advice(max)
            ));
        }
    }
}

/// Mean acceptance far from the target the step size was adapted to, or
/// almost nothing accepted at a step size not adapted.
fn acceptance(run: &RunDraws, sampler: Option<SamplerKind>, health: &mut RunHealth) {
    let accept: Vec<f64> = run
        .chains
        .iter()
        .flat_map(|c| c.accept_stat.iter().copied())
        .collect();
    let mean_accept = crate::diagnostics::mean(&accept);
    let exact = sampler.is_some_and(SamplerKind::is_exact);
    if mean_accept.is_finite() && exact {
        match run.target_acceptance {
            Some(target) => {
                let low = mean_accept < target - ACCEPTANCE_TOLERANCE;
                // NUTS adapts its symmetric statistic and reports Stan's,
                // which may sit above the target: only a low one warns.
                let high = sampler != Some(SamplerKind::Nuts)
                    && mean_accept > target + ACCEPTANCE_TOLERANCE;
                if low || high {
                    health.warnings.push(format!(
                        "mean acceptance {mean_accept:.2} is far from the target {target} the step \
                         size was adapted to: {}",
                        if low {
                            "the adaptation did not settle (a longer --warmup, or a posterior whose \
                             scale changes across its range)"
                        } else {
                            "the step size is smaller than it needs to be (a longer --warmup helps)"
                        }
                    ));
                }
            }
            None if mean_accept < FIXED_STEP_ACCEPTANCE => {
                health.warnings.push(format!(
                    "mean acceptance {mean_accept:.2} with {}: nearly every proposal is \
                     rejected; {}",
                    unadapted_step_size(run.step_size_origin),
                    unadapted_step_size_advice(run.step_size_origin)
                ));
            }
            None => {}
        }
    }
}

/// The notes: unequal warm-ups with saved warm-up rows, chains started
/// again, and the bias of a sampler without a Metropolis test.
fn notes(run: &RunDraws, sampler: Option<SamplerKind>, health: &mut RunHealth) {
    // Python's readers take one warm-up length for every chain's saved rows.
    if run.chains.iter().any(|c| !c.saved_warmup.is_empty()) {
        let lengths = run.chains.iter().map(|c| c.warmup_draws);
        let (shortest, longest) = (lengths.clone().min(), lengths.max());
        if let (Some(shortest), Some(longest)) = (shortest, longest)
            && shortest != longest
        {
            health.notes.push(format!(
                "the chains' warm-ups ran {shortest} to {longest} iterations (NUTS ends a \
                 chain's warm-up early once its metric has settled, or runs one more terminal \
                 buffer after divergences); each file's num_warmup says how many of its rows \
                 are warm-up, but ArviZ's from_cmdstan and CmdStanPy take one length for all \
                 chains and refuse these files: --early-end 0 runs every chain's whole --warmup"
            ));
        }
    }

    for chain in &run.chains {
        match chain.restart {
            Some(ChainRestart {
                from_chain,
                reason: RestartReason::MinorMode { log_mass_deficit },
            }) => health.notes.push(format!(
                "chain {} started in a minor mode: the Laplace approximation at its optimum held \
                 e^-{:.1} of the mass at chain {from_chain}'s, so it started again from chain \
                 {from_chain}'s initial point (the posterior may have several modes; its other \
                 chains did not sample that one)",
                chain.chain_id, log_mass_deficit
            )),
            Some(ChainRestart {
                from_chain,
                reason: RestartReason::NoOptimum,
            }) => health.notes.push(format!(
                "chain {}'s optimisation found no optimum within its budget, so it started again \
                 from chain {from_chain}'s initial point, whose optimisation did (U may fall \
                 without end from its own initial point, or descend too slowly there)",
                chain.chain_id
            )),
            Some(ChainRestart {
                from_chain,
                reason: RestartReason::UnmeasuredOptimum,
            }) => health.notes.push(format!(
                "chain {}'s optimisation ended where the secants could not measure the curvature \
                 (not positive along some direction, or not finite), so it started again from \
                 chain {from_chain}'s initial point, whose optimum they measured",
                chain.chain_id
            )),
            None => {}
        }
    }
    if sampler.is_some_and(|s| !s.is_exact()) {
        health.notes.push(format!(
            "{} has no Metropolis correction: its draws carry a bias that grows with the step \
             size, and R-hat and ESS cannot detect it (they can look perfect around the wrong \
             answer). Compare with a run at half the --step-size, or use `qnmc check` where the \
             posterior is known.",
            run.sampler
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::summarize_run;
    use crate::output::test_runs::gaussian_run;

    fn health(run: &RunDraws) -> RunHealth {
        assess(run, &summarize_run(run, None))
    }

    #[test]
    fn a_good_run_has_one_warning_for_its_one_divergence() {
        // Independent N(0, 1) draws, 4 x 1000: R-hat ~ 1, ESS ~ 4000; the
        // test run marks draw 1 of chain 1 divergent.
        let run = gaussian_run(4, 1000, 3, 5);
        let h = health(&run);
        assert!(h.usable(), "{h:?}");
        assert_eq!(h.warnings.len(), 1, "{h:?}");
        assert!(h.warnings[0].starts_with("1 of 4000 transitions"), "{h:?}");
    }

    /// A model that threw (a Stan `reject()`): the advice is about the
    /// model's bounds, never "raise --target-acceptance", and where no kept
    /// transition diverged it is a note, not a warning.
    /// Saved warm-ups of different lengths get a note naming the readers
    /// that refuse them and the setting that avoids it; equal ones none.
    #[test]
    fn saved_warmups_of_different_lengths_get_a_note() {
        let mut run = gaussian_run(4, 1000, 3, 5);
        for c in &mut run.chains {
            c.warmup_draws = 500;
            c.saved_warmup.lp = vec![-1.0; 500];
        }
        let says = |h: &RunHealth| h.notes.iter().any(|n| n.contains("--early-end 0"));
        assert!(!says(&health(&run)));
        run.chains[2].warmup_draws = 175;
        let h = health(&run);
        let note = h.notes.iter().find(|n| n.contains("--early-end 0"));
        assert!(note.is_some_and(|n| n.contains("175 to 500")), "{h:?}");
        // Not saved: nothing to say.
        for c in &mut run.chains {
            c.saved_warmup = Default::default();
        }
        assert!(!says(&health(&run)));
    }

    #[test]
    fn a_model_that_threw_gets_advice_about_its_bounds() {
        let failures = "the log density of m.so threw in 12 evaluations (those transitions \
                        were rejected and count as divergent); the first: reject"
            .to_string();
        let mut run = gaussian_run(4, 1000, 3, 5);
        run.evaluation_failures = Some(failures.clone());
        let h = health(&run);
        assert!(h.usable(), "{h:?}");
        assert_eq!(h.warnings.len(), 2, "{h:?}");
        assert!(h.warnings[0].starts_with("1 of 4000 transitions"), "{h:?}");
        assert!(
            h.warnings[0].contains("met a point where the model threw"),
            "{h:?}"
        );
        assert!(h.warnings[1].starts_with(&failures), "{h:?}");
        assert!(h.warnings[1].contains("declare the bound"), "{h:?}");
        assert!(
            h.warnings
                .iter()
                .all(|w| !w.contains("raise --target-acceptance")),
            "{h:?}"
        );
        assert!(h.notes.iter().all(|n| !n.contains("threw")), "{h:?}");

        // The same run with no kept transition divergent: a note only.
        for c in &mut run.chains {
            c.divergent.iter_mut().for_each(|d| *d = false);
        }
        let h = health(&run);
        assert!(h.warnings.is_empty(), "{h:?}");
        let note = h.notes.iter().find(|n| n.starts_with(&failures));
        assert!(
            note.is_some_and(|n| n.contains("no kept draw met such a point")),
            "{h:?}"
        );

        // Without failures the divergence advice is the integrator's.
        let h = health(&gaussian_run(4, 1000, 3, 5));
        assert!(h.warnings[0].contains("raise --target-acceptance"), "{h:?}");
    }

    /// At the largest depth the advice no longer says "raise" (running a
    /// transition that hits depth 30 would take 10⁹ gradients).
    #[test]
    fn tree_depth_advice_says_raise_only_below_the_largest_depth() {
        assert!(tree_depth_advice(10).starts_with("raise --max-tree-depth (now 10, up to 30;"));
        let at_cap = tree_depth_advice(MAX_TREE_DEPTH);
        assert!(
            at_cap.starts_with("30 is the largest --max-tree-depth"),
            "{at_cap}"
        );
        assert!(!at_cap.contains("raise"), "{at_cap}");
    }

    #[test]
    fn stuck_divergent_and_non_finite_chains_are_unusable() {
        let mut run = gaussian_run(2, 200, 2, 1);
        // Chain 1: never moves, every transition divergent.
        let first = run.chains[0].values[..2].to_vec();
        for row in run.chains[0].values.chunks_mut(2) {
            row.copy_from_slice(&first);
        }
        run.chains[0].divergent = vec![true; 200];
        // Chain 2: one non-finite lp__.
        run.chains[1].lp[7] = f64::NEG_INFINITY;
        let h = health(&run);
        assert!(!h.usable());
        let text = h.unusable.join("\n");
        assert!(text.contains("chain 1: every one of its 200"), "{text}");
        assert!(text.contains("chain 1: never moved"), "{text}");
        assert!(
            text.contains("chain 2: lp__ is −∞ at kept draw 8"),
            "{text}"
        );
    }

    /// `run` with draws `from..to` (0-based) of chain `k` equal to draw
    /// `from`, `lp__` included.
    fn frozen(mut run: RunDraws, k: usize, from: usize, to: usize) -> RunDraws {
        let q = run.names.len();
        let c = &mut run.chains[k];
        let row = c.values[from * q..(from + 1) * q].to_vec();
        for i in from..to {
            c.values[i * q..(i + 1) * q].copy_from_slice(&row);
            c.lp[i] = c.lp[from];
        }
        run
    }

    /// The longest stay at one point of chain `k` of `run`.
    fn frozen_stretch(run: &RunDraws, k: usize) -> (usize, usize) {
        summarize_run(run, None).chains[k].rows.longest_frozen
    }

    #[test]
    fn a_chain_frozen_for_more_than_half_its_draws_is_unusable() {
        // Eight schools (centred), --metric diag, seed 11: chain 2 stayed at
        // one point for 574 of 1000 kept draws, and the run only warned that
        // R-hat was undefined.
        let run = frozen(gaussian_run(4, 1000, 3, 2), 1, 300, 874);
        assert_eq!(frozen_stretch(&run, 1), (300, 574));
        let h = health(&run);
        assert!(!h.usable(), "{h:?}");
        assert!(
            h.unusable[0].starts_with(
                "chain 2: stayed at one point for 574 of its 1000 kept draws in a row (draws 301 \
                 to 874)"
            ),
            "{h:?}"
        );
        // 170 in a row and exactly half are not enough; nor is most of a
        // chain shorter than FROZEN_MIN_DRAWS.
        for (draws, from, to) in [
            (1000, 300, 470),
            (1000, 300, 800),
            (FROZEN_MIN_DRAWS, 1, FROZEN_MIN_DRAWS),
        ] {
            let run = frozen(gaussian_run(4, draws, 3, 2), 1, from, to);
            assert_eq!(frozen_stretch(&run, 1).1, to - from);
            let h = health(&run);
            assert!(
                h.unusable
                    .iter()
                    .all(|m| !m.contains("stayed at one point")),
                "{draws} draws, {from}..{to} frozen: {h:?}"
            );
        }
    }

    #[test]
    fn disagreeing_chains_and_few_draws_warn() {
        let mut run = gaussian_run(4, 1000, 1, 3);
        // Shift one chain by 1 sd: R-hat well above 1.01.
        for v in &mut run.chains[3].values {
            *v += 1.0;
        }
        let h = health(&run);
        assert!(
            h.warnings.iter().any(|w| w.starts_with("max R-hat")),
            "{h:?}"
        );
        // A strongly autocorrelated chain: ESS far below 100 per chain.
        let mut sticky = gaussian_run(4, 200, 1, 4);
        for c in &mut sticky.chains {
            for i in 1..c.values.len() {
                c.values[i] = 0.99 * c.values[i - 1] + 0.14 * c.values[i];
            }
        }
        let h = health(&sticky);
        assert!(
            h.warnings.iter().any(|w| w.starts_with("bulk ESS")),
            "{h:?}"
        );
    }

    #[test]
    fn ebfmi_tree_depth_and_acceptance_warn() {
        let mut run = gaussian_run(2, 500, 1, 6);
        run.sampler = "nuts".into();
        run.max_tree_depth = Some(10);
        run.target_acceptance = Some(0.8);
        for c in &mut run.chains {
            // A random walk in the energy: E-BFMI ≈ 0.
            let mut e = 0.0;
            c.energy = c
                .values
                .iter()
                .map(|v| {
                    e += v;
                    e
                })
                .collect();
            c.tree_depth = vec![3; c.len()];
            c.tree_depth[0] = 10;
            c.accept_stat = vec![0.5; c.len()];
        }
        let h = health(&run);
        let text = h.warnings.join("\n");
        assert!(text.contains("E-BFMI below 0.3"), "{text}");
        assert!(
            text.contains("2 of 1000 transitions hit the maximum tree depth 10"),
            "{text}"
        );
        assert!(
            text.contains("mean acceptance 0.50 is far from the target 0.8"),
            "{text}"
        );
        assert_eq!(h.max_depth_hits, Some(2));
        // White-noise energies have E-BFMI ≈ 2: no warning.
        assert!((ebfmi(&run.chains[0].values) - 2.0).abs() < 0.3);
    }

    #[test]
    fn stochastic_gradient_samplers_get_the_bias_note() {
        let mut run = gaussian_run(4, 1000, 2, 8);
        run.sampler = "sgld".into();
        let h = health(&run);
        assert!(
            h.notes[0].contains("R-hat and ESS cannot detect it"),
            "{h:?}"
        );
        run.sampler = "hmc".into();
        assert!(health(&run).notes.is_empty());
    }

    #[test]
    fn a_restarted_chain_gets_a_note_saying_why() {
        let mut run = gaussian_run(4, 1000, 2, 9);
        run.sampler = "nuts".into();
        let plain = health(&run);
        run.chains[2].restart = Some(ChainRestart {
            from_chain: 1,
            reason: RestartReason::MinorMode {
                log_mass_deficit: 452.04,
            },
        });
        run.chains[3].restart = Some(ChainRestart {
            from_chain: 2,
            reason: RestartReason::NoOptimum,
        });
        let h = health(&run);
        assert!(plain.notes.is_empty(), "{plain:?}");
        assert_eq!(h.notes.len(), 2, "{h:?}");
        assert!(
            h.notes[0].starts_with("chain 3 started in a minor mode")
                && h.notes[0].contains("e^-452.0 of the mass at chain 1's"),
            "{h:?}"
        );
        assert!(
            h.notes[1].starts_with("chain 4's optimisation found no optimum")
                && h.notes[1].contains("from chain 2's initial point"),
            "{h:?}"
        );
        // Notes, not warnings.
        assert_eq!(h.warnings, plain.warnings);
    }
}
