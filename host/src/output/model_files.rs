//! What a fit needs besides its draws: `model.json` (how the data were read
//! and transformed, the prior, the parameter names) and, for models sampled
//! on a transformed scale, `coefficients.csv` with a summary of every
//! coefficient on the sampled and on the original scale.

use std::path::PathBuf;

use serde_json::json;

use super::{OutputDir, OutputError, float_text};
use crate::diagnostics::{available_threads, parallel_map, summarize};
use crate::draws::RunDraws;
use crate::model::{Model, OriginalScale};

/// File name of the model description.
pub const MODEL_JSON_FILE: &str = "model.json";

/// File name of the coefficient table.
pub const COEFFICIENTS_FILE: &str = "coefficients.csv";

/// `model.json` for `model` (`None` when the model describes nothing beyond
/// its name): the model's [`Model::description`], with the run's target,
/// sampler and parameter names added.
pub fn model_json(model: &dyn Model, run: &RunDraws) -> Option<String> {
    let mut value = model.description()?;
    if let Some(object) = value.as_object_mut() {
        object.insert("target".into(), json!(run.target));
        object.insert("sampler".into(), json!(run.sampler));
        object.insert("parameters".into(), json!(run.names));
        if let Some(scale) = model.original_scale() {
            object.insert(
                "original_scale".into(),
                json!({
                    "parameters": scale.names,
                    "matrix": scale.rows,
                    "note": "beta = matrix · (sampled parameters): coefficients of the covariates as in the file",
                }),
            );
        }
    }
    let mut text = serde_json::to_string_pretty(&value).ok()?;
    text.push('\n');
    Some(text)
}

/// The coefficient table: one row per sampled parameter (`scale` =
/// `sampled`) and one per original-scale coefficient (`scale` = `original`),
/// with mean, sd, 5/50/95 % quantiles, bulk ESS and R̂ over all chains.
///
/// The rows are computed on all cores ([`parallel_map`]), with the numbers of
/// a sequential computation.
pub fn coefficient_table(run: &RunDraws, scale: &OriginalScale) -> String {
    let row = |name: &str, which: &str, chains: &[Vec<f64>]| {
        let slices: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
        let s = summarize(&slices);
        let cells: Vec<String> = [s.mean, s.sd, s.q5, s.q50, s.q95, s.ess_bulk, s.rhat]
            .iter()
            .map(|&v| float_text(v))
            .collect();
        format!(
            "\"{}\",{which},{}\n",
            name.replace('"', "\"\""),
            cells.join(",")
        )
    };
    let quantities = run.names.len();
    let rows = parallel_map(quantities + scale.names.len(), available_threads(), |t| {
        if t < quantities {
            return row(&run.names[t], "sampled", &run.chains_of(t));
        }
        let i = t - quantities;
        let chains: Vec<Vec<f64>> = run
            .chains
            .iter()
            .map(|c| {
                c.values
                    .chunks(quantities.max(1))
                    .map(|w| scale.rows[i].iter().zip(w).map(|(a, x)| a * x).sum::<f64>())
                    .collect()
            })
            .collect();
        row(&scale.names[i], "original", &chains)
    });
    let mut out = String::from("name,scale,mean,sd,q5,q50,q95,ess_bulk,r_hat\n");
    out.extend(rows);
    out
}

/// Writes `model.json` and `coefficients.csv` where `model` has them; returns
/// the paths written.
pub fn write_model_files(
    model: &dyn Model,
    run: &RunDraws,
    dir: &OutputDir,
) -> Result<Vec<PathBuf>, OutputError> {
    let mut written = Vec::new();
    if let Some(text) = model_json(model, run) {
        written.push(dir.write(MODEL_JSON_FILE, text.as_bytes())?);
    }
    if let Some(scale) = model.original_scale() {
        written.push(dir.write(COEFFICIENTS_FILE, coefficient_table(run, &scale).as_bytes())?);
    }
    Ok(written)
}
