//! What the host knows about each sampler, one file per sampler named as
//! its paper names it (`sgrhmc.rs`, `hmc_bfgs.rs`, …), each holding one
//! [`SamplerEntry`]: its `--sampler` name and `qnmc list` line, its kind of
//! guarantee, the options it reads, its defaults, its memory, the lines it
//! adds to output headers, its pilot rule and the defaults it refuses.
//!
//! Adding a sampler to the host is its variant in [`SamplerKind`], its file
//! here with a row in [`REGISTRY`], and its construction arm in the chain
//! builder (`run/chain/mod.rs`, generic over the compile-time dimension,
//! which a row cannot hold). Everything else of the host reads the row;
//! `scripts/sampler-files.py` checks that no other file names a sampler
//! (NUTS, the default with its own start and warm-up, excepted).

use qnmc::lbfgs::InitialScaling;

use super::pilot::PilotRule;
use super::sampler_memory::SamplerMemory;
use super::{RunSettings, SamplerKind};
use crate::model::Model;

mod amagold;
mod hamcmc;
mod hmc;
mod hmc_bfgs;
mod l2mc;
mod mh_bfgs;
mod nuts;
mod psgld;
mod qnhmc;
mod sghmc;
mod sgld;
mod sgnht;
mod sgrhmc;
mod sgrld;

/// Every sampler of the command line, in [`SamplerKind`]'s order.
pub const REGISTRY: [SamplerEntry; 14] = [
    nuts::ROW,
    hmc::ROW,
    qnhmc::ROW,
    hamcmc::ROW,
    hmc_bfgs::ROW,
    mh_bfgs::ROW,
    amagold::ROW,
    l2mc::ROW,
    sgld::ROW,
    psgld::ROW,
    sgrld::ROW,
    sghmc::ROW,
    sgnht::ROW,
    sgrhmc::ROW,
];

/// What the host asks of a sampler: each method reads its row.
impl SamplerKind {
    /// Every sampler, in the order `qnmc list` prints them (the
    /// registry's).
    pub const ALL: [SamplerKind; REGISTRY.len()] = {
        let mut all = [SamplerKind::Nuts; REGISTRY.len()];
        let mut i = 0;
        while i < all.len() {
            all[i] = REGISTRY[i].kind;
            i += 1;
        }
        all
    };

    /// This sampler's row of the registry.
    pub fn entry(self) -> &'static SamplerEntry {
        // REGISTRY lists the samplers in declaration order (a test checks it).
        &REGISTRY[self as usize]
    }

    /// The `--sampler` name.
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    /// One line for `qnmc list`.
    pub fn description(self) -> &'static str {
        self.entry().description
    }

    /// `true` when the step size is tuned by dual averaging during warm-up
    /// (the sampler has a Metropolis test and a free step size, set through
    /// [`qnmc::Sampler::set_step_size`]).
    pub fn adapts_step_size(self) -> bool {
        self.entry().exact
    }

    /// `true` for samplers whose kept draws are exact (π-invariant kernel).
    pub fn is_exact(self) -> bool {
        self.entry().exact
    }

    /// `true` for the samplers whose transition integrates a Hamiltonian
    /// H = U + ½pᵀM⁻¹p of the target and tests it (NUTS, HMC, QNHMC,
    /// HMC-BFGS): they report H at each kept draw, CmdStan's `energy__`.
    /// MH-BFGS has no momentum, the stochastic-gradient samplers no
    /// Metropolis test on H, and AMAGOLD's and L2MC's test weighs U against
    /// the ratio of their noisy, damped proposal densities instead of a
    /// kinetic energy, so their draws have no such energy.
    pub fn has_hamiltonian(self) -> bool {
        self.entry().hamiltonian
    }

    /// `true` when the sampler uses minibatch (stochastic) gradients.
    pub fn uses_minibatches(self) -> bool {
        self.entry().minibatches
    }

    /// `true` when the sampler runs a model of any dimension up to
    /// [`LARGE_DIMENSION`](crate::run::LARGE_DIMENSION) at the cost of its
    /// own ([`SamplerEntry::any_dimension`]).
    pub fn runs_any_dimension(self) -> bool {
        self.entry().any_dimension
    }

    /// `true` when the sampler reads the sampler option `id` (a clap
    /// argument id such as `leapfrog_steps`; see [`SamplerEntry::options`]).
    pub fn takes_option(self, id: &str) -> bool {
        self.entry().options.contains(&id)
    }
}

/// Stan's default target acceptance, used by every exact sampler but MH-BFGS.
const DELTA: f64 = 0.8;

/// The default step size of a sampler, before any adaptation or pilot, for a
/// target with n data points (n = 1 without data).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DefaultStepSize {
    /// ε, whatever the data.
    Fixed(f64),
    /// ε = c / n (Langevin-type samplers: the gradient grows like n).
    PerDataPoint(f64),
    /// ε = c / √n (momentum samplers and pSGLD).
    PerSqrtDataPoint(f64),
}

impl DefaultStepSize {
    /// ε for a target with `data_size` points.
    pub fn for_data_size(self, data_size: Option<usize>) -> f64 {
        let n = data_size.unwrap_or(1).max(1) as f64;
        match self {
            DefaultStepSize::Fixed(eps) => eps,
            DefaultStepSize::PerDataPoint(c) => c / n,
            DefaultStepSize::PerSqrtDataPoint(c) => c / n.sqrt(),
        }
    }
}

/// What a row's [`header`](SamplerEntry::header) may read.
pub struct HeaderContext<'a> {
    /// The sampler.
    pub kind: SamplerKind,
    /// The model run.
    pub model: &'a dyn Model,
    /// The run's settings (defaults not applied).
    pub settings: &'a RunSettings,
    /// The compile-time dimension the chains run in.
    pub padded: usize,
}

/// The `key = value` lines a sampler adds to output headers.
pub type HeaderLines = fn(&HeaderContext<'_>, &mut Vec<(String, String)>);

/// Why a sampler may not run without a thinning chosen by the user, on a
/// target of the given dimension and data size, if so.
pub type UnthinnedRefusal = fn(usize, Option<usize>) -> Option<String>;

/// What the host knows about one sampler: its name, its line in `qnmc
/// list`, its kind of guarantee, the sampler options it reads, its defaults
/// and its sampler-specific behaviour (module docs: adding a sampler).
#[derive(Debug, Clone, Copy)]
pub struct SamplerEntry {
    /// The sampler.
    pub kind: SamplerKind,
    /// The `--sampler` name.
    pub name: &'static str,
    /// One line for `qnmc list`.
    pub description: &'static str,
    /// A Metropolis test makes the kept draws exact (π-invariant), and the
    /// step size is tuned by dual averaging in warm-up.
    pub exact: bool,
    /// Uses minibatch (stochastic) gradients.
    pub minibatches: bool,
    /// Runs a model of any dimension up to
    /// [`LARGE_DIMENSION`](crate::run::LARGE_DIMENSION) at the cost of its
    /// own dimension (the core sampler has a run-time dimension and
    /// in-place construction); the others stop at 1000 coordinates (NUTS at
    /// 16 384, [`NUTS_DIMENSIONS`](crate::run::NUTS_DIMENSIONS)).
    pub any_dimension: bool,
    /// Its transition integrates a Hamiltonian H = U + ½pᵀM⁻¹p of the
    /// target and tests it, so it reports H at each kept draw (CmdStan's
    /// `energy__`).
    pub hamiltonian: bool,
    /// The sampler-specific options it reads (clap argument ids); any other
    /// of [`SAMPLER_SPECIFIC_OPTIONS`] given with it is an error.
    pub options: &'static [&'static str],
    /// Its warm-up length when none is given.
    pub warmup: usize,
    /// Its step size before adaptation or a pilot.
    pub step_size: DefaultStepSize,
    /// Its friction when `--friction` is not given (samplers without
    /// friction: 1, unused).
    pub friction: f64,
    /// Its target acceptance δ when `--target-acceptance` is not given
    /// (used by the exact samplers only).
    pub target_acceptance: f64,
    /// Its L-BFGS memory.
    pub memory: SamplerMemory,
    /// γ of its L-BFGS base matrix when `--gamma` is not given.
    pub gamma: InitialScaling<f64>,
    /// Checks of its own options beyond their ranges.
    pub check: fn(&RunSettings) -> Result<(), String>,
    /// The warm-up iteration at which its step-size adaptation restarts
    /// (QNHMC: when its memory freezes), if any.
    pub step_size_restart: fn(&RunSettings) -> Option<usize>,
    /// Its lines of the output header (the settings it runs with).
    pub header: HeaderLines,
    /// How the pilot sets its step size and tuning (the stochastic-gradient
    /// samplers), if it takes one.
    pub pilot: Option<PilotRule>,
    /// Why it may not run without `--thin`, if ever.
    pub refuse_unthinned: Option<UnthinnedRefusal>,
}

impl SamplerEntry {
    /// A row with the defaults most samplers share, to be completed with
    /// struct-update syntax: no memory, γ from the newest pair, no checks,
    /// no restart, no header lines, no pilot, no refusal, warm-up 1000,
    /// friction 1, δ = 0.8.
    pub(crate) const BASE: SamplerEntry = SamplerEntry {
        kind: SamplerKind::Hmc,
        name: "",
        description: "",
        exact: true,
        minibatches: false,
        any_dimension: true,
        hamiltonian: false,
        options: &[],
        warmup: 1000,
        step_size: DefaultStepSize::Fixed(1.0),
        friction: 1.0,
        target_acceptance: DELTA,
        memory: SamplerMemory::None,
        gamma: InitialScaling::NewestPair(1.0),
        check: no_check,
        step_size_restart: no_restart,
        header: no_lines,
        pilot: None,
        refuse_unthinned: None,
    };
}

fn no_check(_: &RunSettings) -> Result<(), String> {
    Ok(())
}

fn no_restart(_: &RunSettings) -> Option<usize> {
    None
}

fn no_lines(_: &HeaderContext<'_>, _: &mut Vec<(String, String)>) {}

/// Pushes `key = value` to a header.
fn push(out: &mut Vec<(String, String)>, key: &str, value: impl ToString) {
    out.push((key.to_string(), value.to_string()));
}

/// γ as the output header writes it.
fn gamma_text(gamma: InitialScaling<f64>) -> String {
    match gamma {
        InitialScaling::Fixed(g) => g.to_string(),
        InitialScaling::NewestPair(_) => "newest pair (s'y / y'y)".to_string(),
    }
}

/// The ensemble samplers' header line (HMC-BFGS, MH-BFGS).
fn ensemble_line(out: &mut Vec<(String, String)>) {
    push(
        out,
        "ensemble",
        format!(
            "{} walkers per chain, walker 0 reported, one sweep per iteration",
            super::ENSEMBLE_WALKERS
        ),
    );
}

/// The options that only some samplers read; [`SamplerEntry::options`]
/// says which.
pub const SAMPLER_SPECIFIC_OPTIONS: [&str; 12] = [
    "leapfrog_steps",
    "memory",
    "mass",
    "freeze_after",
    "adaptive_memory",
    "step_decay",
    "gamma",
    "friction",
    "sghmc_update",
    "metric",
    "max_tree_depth",
    "early_end",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// `entry` indexes the registry by the enum's discriminant: the rows
    /// must be in declaration order, one per sampler, names unique.
    #[test]
    fn the_registry_has_one_row_per_sampler_in_order() {
        for (i, row) in REGISTRY.iter().enumerate() {
            assert_eq!(row.kind as usize, i, "{}", row.name);
            assert_eq!(row.kind.entry().name, row.name);
            assert_eq!(row.name.parse::<SamplerKind>(), Ok(row.kind));
            for id in row.options {
                assert!(SAMPLER_SPECIFIC_OPTIONS.contains(id), "{}: {id}", row.name);
            }
            // A sampler with a memory reads --memory, and only then.
            assert_eq!(
                row.memory != SamplerMemory::None,
                row.options.contains(&"memory"),
                "{}",
                row.name
            );
            // The pilot is for the samplers without a Metropolis test.
            assert_eq!(row.pilot.is_some(), !row.exact, "{}", row.name);
        }
        let mut names: Vec<&str> = REGISTRY.iter().map(|r| r.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), REGISTRY.len());
        // Every exact sampler adapts its step size; the others keep theirs.
        assert!(
            REGISTRY
                .iter()
                .all(|r| r.exact == r.kind.adapts_step_size())
        );
    }
}
