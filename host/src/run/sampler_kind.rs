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
    /// Every sampler, in the order `qnmc list` prints them.
    pub const ALL: [SamplerKind; 14] = [
        SamplerKind::Nuts,
        SamplerKind::Hmc,
        SamplerKind::Qnhmc,
        SamplerKind::Hamcmc,
        SamplerKind::HmcBfgs,
        SamplerKind::MhBfgs,
        SamplerKind::Amagold,
        SamplerKind::L2mc,
        SamplerKind::Sgld,
        SamplerKind::Psgld,
        SamplerKind::Sgrld,
        SamplerKind::Sghmc,
        SamplerKind::Sgnht,
        SamplerKind::Sgrhmc,
    ];

    /// The `--sampler` name.
    pub fn name(self) -> &'static str {
        match self {
            SamplerKind::Nuts => "nuts",
            SamplerKind::Hmc => "hmc",
            SamplerKind::Qnhmc => "qnhmc",
            SamplerKind::Hamcmc => "hamcmc",
            SamplerKind::HmcBfgs => "hmc-bfgs",
            SamplerKind::MhBfgs => "mh-bfgs",
            SamplerKind::Amagold => "amagold",
            SamplerKind::L2mc => "l2mc",
            SamplerKind::Sgld => "sgld",
            SamplerKind::Psgld => "psgld",
            SamplerKind::Sgrld => "sgrld",
            SamplerKind::Sghmc => "sghmc",
            SamplerKind::Sgnht => "sgnht",
            SamplerKind::Sgrhmc => "sgrhmc",
        }
    }

    /// One line for `qnmc list`.
    pub fn description(self) -> &'static str {
        match self {
            SamplerKind::Nuts => {
                "NUTS (Hoffman & Gelman 2014, multinomial, generalised U-turn) with a metric learned in warm-up (--metric); exact"
            }
            SamplerKind::Hmc => "HMC with identity mass (Neal 2011); exact",
            SamplerKind::Qnhmc => {
                "quasi-Newton HMC (Fu, Luo & Zhang 2016, Alg. 2); exact once the memory is frozen"
            }
            SamplerKind::Hamcmc => {
                "HAMCMC, L-BFGS preconditioned SG-MCMC (Simsekli et al. 2016); biased O(eps)"
            }
            SamplerKind::HmcBfgs => "HMC-BFGS ensemble (Zhang & Sutton 2011, Alg. 1); exact",
            SamplerKind::MhBfgs => "MH-BFGS ensemble (Zhang & Sutton 2011, eq. 14); exact",
            SamplerKind::Amagold => {
                "AMAGOLD (Zhang, Cooper & De Sa 2020, Alg. 2): minibatch steps, full MH test; exact"
            }
            SamplerKind::L2mc => "L2MC: AMAGOLD with full-batch gradients; exact",
            SamplerKind::Sgld => "SGLD (Welling & Teh 2011); biased O(eps)",
            SamplerKind::Psgld => "pSGLD, RMSprop preconditioner (Li et al. 2016); biased O(eps)",
            SamplerKind::Sgrld => {
                "SGRLD (Patterson & Teh 2013), metric G = diag(Hessian at the mode) from the pilot; biased O(eps)"
            }
            SamplerKind::Sghmc => "SGHMC (Chen, Fox & Guestrin 2014); biased O(eps)",
            SamplerKind::Sgnht => "SGNHT thermostat (Ding et al. 2014); biased O(eps)",
            SamplerKind::Sgrhmc => {
                "SGRHMC (Ma, Chen & Fox 2015), diagonal metric from the pilot's Hessian; biased O(eps)"
            }
        }
    }

    /// `true` when the step size is tuned by dual averaging during warm-up
    /// (the sampler has a Metropolis test and a free step size, set through
    /// [`qnmc::Sampler::set_step_size`]).
    pub fn adapts_step_size(self) -> bool {
        matches!(
            self,
            SamplerKind::Nuts
                | SamplerKind::Hmc
                | SamplerKind::Qnhmc
                | SamplerKind::HmcBfgs
                | SamplerKind::MhBfgs
                | SamplerKind::Amagold
                | SamplerKind::L2mc
        )
    }

    /// `true` for samplers whose kept draws are exact (π-invariant kernel).
    pub fn is_exact(self) -> bool {
        self.adapts_step_size()
    }

    /// `true` when the sampler uses minibatch (stochastic) gradients.
    pub fn uses_minibatches(self) -> bool {
        matches!(
            self,
            SamplerKind::Hamcmc
                | SamplerKind::Amagold
                | SamplerKind::Sgld
                | SamplerKind::Psgld
                | SamplerKind::Sgrld
                | SamplerKind::Sghmc
                | SamplerKind::Sgnht
                | SamplerKind::Sgrhmc
        )
    }
}

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
