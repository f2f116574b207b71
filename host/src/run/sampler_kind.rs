//! The samplers the command line offers, by their `--sampler` names; what
//! the host knows about each is its row of the
//! [`REGISTRY`](super::REGISTRY), which also holds their methods
//! (`registry/mod.rs`).

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
