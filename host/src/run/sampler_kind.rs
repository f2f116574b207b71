//! The samplers the command line offers, by their `--sampler` names.

use std::fmt;
use std::str::FromStr;

/// A sampler of the core, as named on the command line (`--sampler`).
///
/// ```
/// use qnmc_host::run::SamplerKind;
///
/// let kind: SamplerKind = "qnhmc".parse().unwrap();
/// assert_eq!(kind, SamplerKind::Qnhmc);
/// assert_eq!(kind.name(), "qnhmc");
/// let err = "stan".parse::<SamplerKind>().unwrap_err();
/// assert!(err.to_string().contains("nuts, hmc, qnhmc, hamcmc"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SamplerKind {
    /// The No-U-Turn Sampler (Hoffman & Gelman 2014, Stan's multinomial form)
    /// with a metric learned in a windowed warm-up (`--metric`).
    Nuts,
    /// Hamiltonian Monte Carlo, identity mass (Neal 2011).
    Hmc,
    /// Quasi-Newton HMC (Fu, Luo & Zhang 2016, Algorithm 2).
    Qnhmc,
    /// Hessian-approximated stochastic-gradient MCMC (Şimşekli et al. 2016).
    Hamcmc,
    /// HMC-BFGS ensemble (Zhang & Sutton 2011, Algorithm 1).
    HmcBfgs,
    /// MH-BFGS ensemble (Zhang & Sutton 2011, §4.1).
    MhBfgs,
    /// AMAGOLD: minibatch inner steps, full-data MH test (Zhang, Cooper & De Sa 2020).
    Amagold,
    /// L2MC: AMAGOLD with full-batch gradients.
    L2mc,
    /// Stochastic-gradient Langevin dynamics (Welling & Teh 2011).
    Sgld,
    /// Preconditioned SGLD, RMSprop preconditioner (Li et al. 2016).
    Psgld,
    /// Stochastic-gradient Riemannian Langevin dynamics (Patterson & Teh 2013).
    Sgrld,
    /// Stochastic-gradient HMC (Chen, Fox & Guestrin 2014).
    Sghmc,
    /// Stochastic-gradient Nosé–Hoover thermostat (Ding et al. 2014).
    Sgnht,
    /// Stochastic-gradient Riemann HMC (Ma, Chen & Fox 2015).
    Sgrhmc,
}

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
        matches!(
            self,
            SamplerKind::Nuts | SamplerKind::Hmc | SamplerKind::Qnhmc | SamplerKind::HmcBfgs
        )
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

/// What the host knows about one sampler: its name, its line in `qnmc
/// list`, its kind of guarantee, the sampler options it reads and its
/// defaults. Adding a sampler to the command line means one row in
/// [`REGISTRY`] and one arm in the chain builder (`run/chain.rs`), which
/// constructs it; the rest of the host reads the row.
#[derive(Debug, Clone, Copy, PartialEq)]
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
    /// The sampler-specific options it reads (clap argument ids); any other
    /// of [`SAMPLER_SPECIFIC_OPTIONS`] given with it is an error.
    pub options: &'static [&'static str],
    /// Its step size before adaptation or a pilot.
    pub step_size: DefaultStepSize,
    /// Its friction when `--friction` is not given (samplers without
    /// friction: 1, unused).
    pub friction: f64,
    /// Its target acceptance δ when `--target-acceptance` is not given
    /// (used by the exact samplers only).
    pub target_acceptance: f64,
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

/// Stan's default target acceptance, used by every exact sampler but MH-BFGS.
const DELTA: f64 = 0.8;

/// Every sampler of the command line, in [`SamplerKind`]'s order.
pub const REGISTRY: [SamplerEntry; 14] = [
    SamplerEntry {
        kind: SamplerKind::Nuts,
        name: "nuts",
        description: "NUTS (Hoffman & Gelman 2014, multinomial, generalised U-turn) with a metric learned in warm-up (--metric); exact",
        exact: true,
        minibatches: false,
        any_dimension: false,
        // `memory` only with the L-BFGS metric (cli/applicability.rs).
        options: &["memory", "metric", "max_tree_depth", "early_end"],
        step_size: DefaultStepSize::Fixed(1.0),
        friction: 1.0,
        target_acceptance: DELTA,
    },
    SamplerEntry {
        kind: SamplerKind::Hmc,
        name: "hmc",
        description: "HMC with identity mass (Neal 2011); exact",
        exact: true,
        minibatches: false,
        any_dimension: true,
        options: &["leapfrog_steps"],
        step_size: DefaultStepSize::Fixed(1.0),
        friction: 1.0,
        target_acceptance: DELTA,
    },
    SamplerEntry {
        kind: SamplerKind::Qnhmc,
        name: "qnhmc",
        description: "quasi-Newton HMC (Fu, Luo & Zhang 2016, Alg. 2); exact once the memory is frozen",
        exact: true,
        minibatches: false,
        any_dimension: true,
        options: &[
            "leapfrog_steps",
            "memory",
            "mass",
            "freeze_after",
            "adaptive_memory",
            "gamma",
        ],
        step_size: DefaultStepSize::Fixed(1.0),
        friction: 1.0,
        target_acceptance: DELTA,
    },
    SamplerEntry {
        kind: SamplerKind::Hamcmc,
        name: "hamcmc",
        description: "HAMCMC, L-BFGS preconditioned SG-MCMC (Simsekli et al. 2016); biased O(eps)",
        exact: false,
        minibatches: true,
        any_dimension: true,
        options: &["memory", "step_decay", "gamma"],
        step_size: DefaultStepSize::PerDataPoint(0.1),
        friction: 1.0,
        target_acceptance: DELTA,
    },
    SamplerEntry {
        kind: SamplerKind::HmcBfgs,
        name: "hmc-bfgs",
        description: "HMC-BFGS ensemble (Zhang & Sutton 2011, Alg. 1); exact",
        exact: true,
        minibatches: false,
        any_dimension: true,
        options: &["leapfrog_steps"],
        step_size: DefaultStepSize::Fixed(1.0),
        friction: 1.0,
        target_acceptance: DELTA,
    },
    SamplerEntry {
        kind: SamplerKind::MhBfgs,
        name: "mh-bfgs",
        description: "MH-BFGS ensemble (Zhang & Sutton 2011, eq. 14); exact",
        exact: true,
        minibatches: false,
        any_dimension: false,
        options: &[],
        step_size: DefaultStepSize::Fixed(0.5),
        friction: 1.0,
        // A random-walk proposal: the optimal acceptance is far below 0.8.
        target_acceptance: 0.3,
    },
    SamplerEntry {
        kind: SamplerKind::Amagold,
        name: "amagold",
        description: "AMAGOLD (Zhang, Cooper & De Sa 2020, Alg. 2): minibatch steps, full MH test; exact",
        exact: true,
        minibatches: true,
        any_dimension: true,
        options: &["leapfrog_steps", "friction"],
        step_size: DefaultStepSize::Fixed(1.0),
        friction: 0.1,
        target_acceptance: DELTA,
    },
    SamplerEntry {
        kind: SamplerKind::L2mc,
        name: "l2mc",
        description: "L2MC: AMAGOLD with full-batch gradients; exact",
        exact: true,
        minibatches: false,
        any_dimension: true,
        options: &["leapfrog_steps", "friction"],
        step_size: DefaultStepSize::Fixed(1.0),
        friction: 0.1,
        target_acceptance: DELTA,
    },
    SamplerEntry {
        kind: SamplerKind::Sgld,
        name: "sgld",
        description: "SGLD (Welling & Teh 2011); biased O(eps)",
        exact: false,
        minibatches: true,
        any_dimension: true,
        options: &[],
        step_size: DefaultStepSize::PerDataPoint(0.1),
        friction: 1.0,
        target_acceptance: DELTA,
    },
    SamplerEntry {
        kind: SamplerKind::Psgld,
        name: "psgld",
        description: "pSGLD, RMSprop preconditioner (Li et al. 2016); biased O(eps)",
        exact: false,
        minibatches: true,
        any_dimension: true,
        options: &[],
        step_size: DefaultStepSize::PerSqrtDataPoint(0.01),
        friction: 1.0,
        target_acceptance: DELTA,
    },
    SamplerEntry {
        kind: SamplerKind::Sgrld,
        name: "sgrld",
        description: "SGRLD (Patterson & Teh 2013), metric G = diag(Hessian at the mode) from the pilot; biased O(eps)",
        exact: false,
        minibatches: true,
        any_dimension: true,
        options: &[],
        step_size: DefaultStepSize::PerDataPoint(0.1),
        friction: 1.0,
        target_acceptance: DELTA,
    },
    SamplerEntry {
        kind: SamplerKind::Sghmc,
        name: "sghmc",
        description: "SGHMC (Chen, Fox & Guestrin 2014); biased O(eps)",
        exact: false,
        minibatches: true,
        any_dimension: true,
        options: &["friction", "sghmc_update"],
        step_size: DefaultStepSize::PerSqrtDataPoint(0.1),
        friction: 1.0,
        target_acceptance: DELTA,
    },
    SamplerEntry {
        kind: SamplerKind::Sgnht,
        name: "sgnht",
        description: "SGNHT thermostat (Ding et al. 2014); biased O(eps)",
        exact: false,
        minibatches: true,
        any_dimension: true,
        options: &["friction"],
        step_size: DefaultStepSize::PerSqrtDataPoint(0.1),
        friction: 1.0,
        target_acceptance: DELTA,
    },
    SamplerEntry {
        kind: SamplerKind::Sgrhmc,
        name: "sgrhmc",
        description: "SGRHMC (Ma, Chen & Fox 2015), diagonal metric from the pilot's Hessian; biased O(eps)",
        exact: false,
        minibatches: true,
        any_dimension: true,
        options: &[],
        step_size: DefaultStepSize::PerSqrtDataPoint(0.1),
        friction: 1.0,
        target_acceptance: DELTA,
    },
];

impl fmt::Display for SamplerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown `--sampler` name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownSampler(pub String);

impl fmt::Display for UnknownSampler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = SamplerKind::ALL.iter().map(|k| k.name()).collect();
        write!(
            f,
            "unknown sampler `{}`; valid samplers: {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownSampler {}

impl FromStr for SamplerKind {
    type Err = UnknownSampler;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SamplerKind::ALL
            .iter()
            .copied()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownSampler(s.to_string()))
    }
}

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
