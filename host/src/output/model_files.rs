//! What a fit needs besides its draws: `model.json` (how the data were read
//! and transformed, the prior, the parameter names) and, for models sampled
//! on a transformed scale, `coefficients.csv` with a summary of every
//! coefficient on the sampled and on the original scale.

use std::path::PathBuf;

use serde_json::json;

use super::{OutputDir, OutputError, float_text};
use crate::diagnostics::{available_threads, parallel_map, summarize};
use crate::draw_values::{DrawValues, InMemory, block_quantities, infallible};
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
    infallible(coefficient_table_from(run, &InMemory, scale))
}

/// [`coefficient_table`] with the values read from `values`, a block of
/// columns at a time.
pub fn coefficient_table_from<V: DrawValues>(
    run: &RunDraws,
    values: &V,
    scale: &OriginalScale,
) -> Result<String, V::Error> {
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
    let threads = available_threads();
    let quantities = run.names.len();
    let mut out = String::from("name,scale,mean,sd,q5,q50,q95,ess_bulk,r_hat\n");
    let all: Vec<usize> = (0..quantities).collect();
    for which in all.chunks(block_quantities(run)) {
        let columns = values.columns(run, which)?;
        out.extend(parallel_map(which.len(), threads, |i| {
            row(&run.names[which[i]], "sampled", &columns[i])
        }));
    }
    // original[i][k]: coefficient i at chain k's kept draws.
    let mut original: Vec<Vec<Vec<f64>>> =
        vec![Vec::with_capacity(run.chains.len()); scale.names.len()];
    for k in 0..run.chains.len() {
        let mut draws: Vec<Vec<f64>> = vec![Vec::new(); scale.names.len()];
        values.for_each_row(run, k, &mut |w| {
            for (coefficient, a) in draws.iter_mut().zip(&scale.rows) {
                coefficient.push(a.iter().zip(w).map(|(a, x)| a * x).sum::<f64>());
            }
        })?;
        for (i, d) in draws.into_iter().enumerate() {
            original[i].push(d);
        }
    }
    out.extend(parallel_map(scale.names.len(), threads, |i| {
        row(&scale.names[i], "original", &original[i])
    }));
    Ok(out)
}

/// Writes `model.json` and `coefficients.csv` where `model` has them; returns
/// the paths written.
pub fn write_model_files(
    model: &dyn Model,
    run: &RunDraws,
    dir: &OutputDir,
) -> Result<Vec<PathBuf>, OutputError> {
    write_model_files_from(model, run, &InMemory, dir)
}

/// [`write_model_files`] with the values read from `values`.
pub fn write_model_files_from<V: DrawValues<Error = E>, E: Into<OutputError>>(
    model: &dyn Model,
    run: &RunDraws,
    values: &V,
    dir: &OutputDir,
) -> Result<Vec<PathBuf>, OutputError> {
    let mut written = Vec::new();
    if let Some(text) = model_json(model, run) {
        written.push(dir.write(MODEL_JSON_FILE, text.as_bytes())?);
    }
    if let Some(scale) = model.original_scale() {
        let table = coefficient_table_from(run, values, &scale).map_err(Into::into)?;
        written.push(dir.write(COEFFICIENTS_FILE, table.as_bytes())?);
    }
    Ok(written)
}
