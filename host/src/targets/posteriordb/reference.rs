//! posteriordb's reference posteriors: the draws (10 chains × 1000, Stan
//! NUTS) summarised with our own diagnostics, and posteriordb's own summary
//! of the means for cross-checking.

use crate::input::{InputError, InputErrorKind};
use crate::input::{field, numbers, read_json, read_zipped_json};
use crate::model::KnownPosterior;
use std::path::Path;

/// Reads the reference draws archive `path` and summarises each quantity in
/// `names`: mean and sd over all draws (sd with N − 1), and their MCSEs by
/// [`mcse_mean`](crate::diagnostics::mcse_mean) and
/// [`mcse_sd`](crate::diagnostics::mcse_sd) over the chains. Any
/// posteriordb posterior's draws archive can be read so (the benchmark in
/// `compare/` summarises all of them this way).
pub fn summarize_reference_draws(
    path: &Path,
    names: &[String],
) -> Result<KnownPosterior, InputError> {
    let draws = read_zipped_json(path)?;
    let chains = draws.as_array().ok_or_else(|| {
        InputError::new(
            path,
            InputErrorKind::Format,
            "the reference draws are not a list of chains",
        )
    })?;
    if chains.is_empty() {
        return Err(InputError::new(
            path,
            InputErrorKind::Empty,
            "the reference draws have no chains",
        ));
    }
    let mut known = KnownPosterior {
        source: format!(
            "posteriordb reference draws (Stan NUTS, {} chains × {} draws)",
            chains.len(),
            chains[0]
                .as_object()
                .and_then(|c| c.values().next())
                .and_then(|v| v.as_array())
                .map_or(0, Vec::len)
        ),
        mean: Vec::with_capacity(names.len()),
        sd: Vec::with_capacity(names.len()),
        mean_mcse: Some(Vec::with_capacity(names.len())),
        sd_mcse: Some(Vec::with_capacity(names.len())),
        gaussian_marginals: false,
    };
    for name in names {
        let per_chain = chains
            .iter()
            .enumerate()
            .map(|(c, chain)| {
                numbers(
                    field(chain, name, path)?,
                    &format!("chain {} of {name:?}", c + 1),
                    path,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let length = per_chain[0].len();
        if per_chain.iter().any(|c| c.len() != length) {
            return Err(InputError::new(
                path,
                InputErrorKind::RaggedRow,
                format!("the chains of {name:?} differ in length"),
            ));
        }
        let slices: Vec<&[f64]> = per_chain.iter().map(Vec::as_slice).collect();
        known.push_estimated(&slices);
    }
    Ok(known)
}

/// posteriordb's own reference means and their MCSEs
/// (`reference_posteriors/summary_statistics/mean_value/`).
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceSummary {
    /// Quantity names, as in the draws.
    pub names: Vec<String>,
    /// Posterior means.
    pub mean: Vec<f64>,
    /// Their Monte-Carlo standard errors.
    pub mcse_mean: Vec<f64>,
}

impl ReferenceSummary {
    /// Reads the `mean_value` JSON file `path`.
    pub fn read(path: &Path) -> Result<Self, InputError> {
        let value = read_json(path)?;
        let names = field(&value, "names", path)?
            .as_array()
            .and_then(|list| {
                list.iter()
                    .map(|n| n.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| {
                InputError::new(
                    path,
                    InputErrorKind::Format,
                    "entry \"names\" is not a list of strings",
                )
            })?;
        let mean = numbers(
            field(&value, "mean_value", path)?,
            "entry \"mean_value\"",
            path,
        )?;
        let mcse_mean = numbers(
            field(&value, "mcse_mean", path)?,
            "entry \"mcse_mean\"",
            path,
        )?;
        if mean.len() != names.len() || mcse_mean.len() != names.len() {
            return Err(InputError::new(
                path,
                InputErrorKind::Dimension,
                "entries \"names\", \"mean_value\" and \"mcse_mean\" differ in length",
            ));
        }
        Ok(ReferenceSummary {
            names,
            mean,
            mcse_mean,
        })
    }

    /// The mean and its MCSE of quantity `name`, if listed.
    pub fn get(&self, name: &str) -> Option<(f64, f64)> {
        let i = self.names.iter().position(|n| n == name)?;
        Some((self.mean[i], self.mcse_mean[i]))
    }
}
