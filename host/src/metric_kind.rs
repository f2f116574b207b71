//! The metrics NUTS can learn, by their `--metric` names (an interface: the
//! draws record the metric, the run chooses it; `run` re-exports it).

use std::fmt;
use std::str::FromStr;

/// The metric (mass matrix) NUTS learns during warm-up.
///
/// ```
/// use qnmc_host::run::MetricKind;
/// assert_eq!("lbfgs".parse::<MetricKind>().unwrap(), MetricKind::Lbfgs);
/// assert!("cholesky".parse::<MetricKind>().unwrap_err().contains("identity, diag, dense, lbfgs"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetricKind {
    /// M = I, nothing learned.
    Identity,
    /// Diagonal: σᵢ² = √(Var θᵢ / Var ∂ᵢU) per slow window.
    Diagonal,
    /// Dense covariance of the draws (Stan's `dense_e`); D² storage, for
    /// dimensions up to [`MAX_DENSE_DIMENSION`].
    Dense,
    /// Quasi-Newton: the diagonal above as the base of an L-BFGS inverse
    /// Hessian built from conjugated curvature pairs between draws.
    Lbfgs,
}

/// Largest dimension the dense metric is offered for.
pub const MAX_DENSE_DIMENSION: usize = 100;

impl MetricKind {
    /// Every metric, in the order `--help` lists them.
    pub const ALL: [MetricKind; 4] = [
        MetricKind::Identity,
        MetricKind::Diagonal,
        MetricKind::Dense,
        MetricKind::Lbfgs,
    ];

    /// The `--metric` name.
    pub fn name(self) -> &'static str {
        match self {
            MetricKind::Identity => "identity",
            MetricKind::Diagonal => "diag",
            MetricKind::Dense => "dense",
            MetricKind::Lbfgs => "lbfgs",
        }
    }
}

/// A sampler's name as the terminal shows it: NUTS with its metric
/// (`nuts (metric lbfgs)`), the other samplers (`metric` `None`) as they are.
///
/// ```
/// use qnmc_host::run::{MetricKind, sampler_label};
/// assert_eq!(sampler_label("nuts", Some(MetricKind::Lbfgs)), "nuts (metric lbfgs)");
/// assert_eq!(sampler_label("hmc", None), "hmc");
/// ```
pub fn sampler_label(sampler: &str, metric: Option<MetricKind>) -> String {
    match metric {
        Some(m) => format!("{sampler} (metric {m})"),
        None => sampler.to_string(),
    }
}

impl fmt::Display for MetricKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MetricKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MetricKind::ALL
            .iter()
            .copied()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = MetricKind::ALL.iter().map(|k| k.name()).collect();
                format!("unknown metric `{s}`; expected one of {}", names.join(", "))
            })
    }
}
