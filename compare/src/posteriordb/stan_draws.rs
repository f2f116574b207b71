//! Stan's own NUTS runs written by `compare/stan_nuts.py` (pystan), read
//! into the benchmark's form: one coordinate per reference quantity.

use std::path::Path;

use serde_json::Value;

use super::Posterior;
use crate::runs::{ChainRun, SamplerRun};

/// Reads `dir/NAME.seedS.json`: the run, and the reference quantities it
/// holds. `None` when the file is not there; an error when it is unreadable
/// or pystan could not build the model (`NAME.error.txt`).
pub fn read(
    dir: &Path,
    posterior: &Posterior,
    seed: u64,
) -> Option<Result<(SamplerRun, Vec<String>), String>> {
    let error = dir.join(format!("{}.error.txt", posterior.name));
    if error.is_file() {
        let text = std::fs::read_to_string(&error).unwrap_or_default();
        return Some(Err(text.trim().to_string()));
    }
    let path = dir.join(format!("{}.seed{seed}.json", posterior.name));
    if !path.is_file() {
        return None;
    }
    Some(parse(&path, posterior))
}

fn parse(path: &Path, posterior: &Posterior) -> Result<(SamplerRun, Vec<String>), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let bad = |what: &str| format!("{}: {what}", path.display());
    let chains_json = value["chains"].as_array().ok_or_else(|| bad("no chains"))?;
    let first = chains_json.first().ok_or_else(|| bad("no chains"))?;
    let names: Vec<String> = posterior
        .names
        .iter()
        .filter(|n| first["draws"].get(n.as_str()).is_some())
        .cloned()
        .collect();
    let mut chains = Vec::new();
    for chain in chains_json {
        let columns: Vec<Vec<f64>> = names
            .iter()
            .map(|n| {
                chain["draws"][n.as_str()]
                    .as_array()
                    .map(|a| a.iter().map(|v| v.as_f64().unwrap_or(f64::NAN)).collect())
                    .ok_or_else(|| bad(&format!("no draws of {n}")))
            })
            .collect::<Result<_, _>>()?;
        let rows = columns.first().map_or(0, Vec::len);
        if columns.iter().any(|c| c.len() != rows) {
            return Err(bad("ragged draws"));
        }
        let mut draws = Vec::with_capacity(rows * names.len());
        for i in 0..rows {
            draws.extend(columns.iter().map(|c| c[i]));
        }
        let count = |k: &str| chain[k].as_u64().ok_or_else(|| bad(&format!("no {k}")));
        chains.push(ChainRun {
            draws,
            gradients_tuning: count("gradients_warmup")?,
            gradients_sampling: count("gradients_kept")?,
            divergences_sampling: count("divergent_kept")?,
            divergences_tuning: None,
            // pystan runs its chains in parallel processes: no per-chain
            // clock comparable with the one-thread runs, so no ESS/s.
            seconds_tuning: f64::NAN,
            seconds_sampling: f64::NAN,
            step_size_sum: chain["step_size"].as_f64().unwrap_or(f64::NAN) * rows as f64,
        });
    }
    let run = SamplerRun {
        dimension: names.len(),
        chains,
        counted_calls: 0,
        seconds_wall: value["seconds_wall_parallel_chains"]
            .as_f64()
            .unwrap_or(f64::NAN),
    };
    Ok((run, names))
}
