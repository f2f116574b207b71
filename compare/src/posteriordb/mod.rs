//! The posteriordb benchmark: every posterior of posteriordb that has
//! reference draws, its Stan model compiled once (`build-posteriordb.sh`,
//! offline through `stan/build-model.py`) and loaded through BridgeStan's C
//! API ([`StanModel`]), so that qnmc and nuts-rs evaluate the same compiled
//! log density.
//!
//! The data come from `compare/posteriordb/` (a subset of stan-dev/posteriordb,
//! BSD-3, paths as in that repository, see its README). posteriordb's
//! reference draws (10 chains × 1000 Stan NUTS draws each, 25 MB zipped) are
//! not vendored: [`write_references`] summarises them once, with qnmc's own
//! diagnostics, into `compare/posteriordb/reference/NAME.json` (mean, sd and
//! their MCSEs per quantity), which is what the benchmark checks against.

pub mod bench;
pub mod report;
pub mod stan_draws;

use std::path::{Path, PathBuf};

use qnmc_host::draws::{ChainDraws, RunDraws};
use qnmc_host::model::{KnownPosterior, Model};
use qnmc_host::run::check::{CheckReport, check};
use qnmc_stan::StanModel;
use serde_json::{Value, json};

use crate::runs::{ChainRun, SamplerRun};

/// The vendored subset: `compare/posteriordb/posterior_database`.
pub fn database_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("posteriordb/posterior_database")
}

/// The reference summaries: `compare/posteriordb/reference`.
pub fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("posteriordb/reference")
}

/// One posterior: a model, its data, its reference moments.
#[derive(Debug, Clone)]
pub struct Posterior {
    /// posteriordb's name, `DATA-MODEL`.
    pub name: String,
    /// The model's name (`models/stan/MODEL.stan`).
    pub model: String,
    /// The data archive (`data/data/DATA.json.zip`).
    pub data: PathBuf,
    /// Names of the reference quantities (constrained scale, 1-based).
    pub names: Vec<String>,
    /// Their reference moments with MCSEs.
    pub reference: KnownPosterior,
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn numbers(value: &Value, key: &str, path: &Path) -> Result<Vec<f64>, String> {
    value[key]
        .as_array()
        .ok_or_else(|| format!("{}: no array `{key}`", path.display()))?
        .iter()
        .map(|v| {
            v.as_f64()
                .ok_or_else(|| format!("{}: `{key}` holds a non-number", path.display()))
        })
        .collect()
}

fn strings(value: &Value, key: &str, path: &Path) -> Result<Vec<String>, String> {
    value[key]
        .as_array()
        .ok_or_else(|| format!("{}: no array `{key}`", path.display()))?
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("{}: `{key}` holds a non-string", path.display()))
        })
        .collect()
}

/// Every posterior with a reference summary, sorted by name.
pub fn catalogue() -> Result<Vec<Posterior>, String> {
    let root = database_root();
    let mut out = Vec::new();
    let dir = root.join("posteriors");
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let info = read_json(&path)?;
        let name = info["name"].as_str().unwrap_or_default().to_string();
        let reference_path = reference_dir().join(format!("{name}.json"));
        if !reference_path.is_file() {
            continue;
        }
        let reference = read_json(&reference_path)?;
        let known = KnownPosterior {
            source: reference["source"].as_str().unwrap_or_default().to_string(),
            mean: numbers(&reference, "mean", &reference_path)?,
            sd: numbers(&reference, "sd", &reference_path)?,
            mean_mcse: Some(numbers(&reference, "mcse_mean", &reference_path)?),
            sd_mcse: Some(numbers(&reference, "mcse_sd", &reference_path)?),
            gaussian_marginals: false,
        };
        let data_name = info["data_name"].as_str().unwrap_or_default();
        out.push(Posterior {
            name,
            model: info["model_name"].as_str().unwrap_or_default().to_string(),
            data: root.join(format!("data/data/{data_name}.json.zip")),
            names: strings(&reference, "names", &reference_path)?,
            reference: known,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Summarises posteriordb's reference draws (`draws_dir/NAME.json.zip`, from
/// a checkout of stan-dev/posteriordb) of every vendored posterior into
/// `reference/NAME.json`; the quantities and their order are those of
/// posteriordb's `mean_value` summary. A posterior whose archive is missing
/// or unreadable is skipped with a line on stderr. Returns the names written.
pub fn write_references(draws_dir: &Path) -> Result<Vec<String>, String> {
    let root = database_root();
    let means = root.join("reference_posteriors/summary_statistics/mean_value/mean_value");
    std::fs::create_dir_all(reference_dir()).map_err(|e| e.to_string())?;
    let mut written = Vec::new();
    let entries = std::fs::read_dir(&means).map_err(|e| format!("{}: {e}", means.display()))?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let summary = read_json(&path)?;
        let names = strings(&summary, "names", &path)?;
        let archive = draws_dir.join(format!("{name}.json.zip"));
        let known = match qnmc_host::targets::summarize_reference_draws(&archive, &names) {
            Ok(k) => k,
            Err(e) => {
                eprintln!("skipped {name}: {e}");
                continue;
            }
        };
        let value = json!({
            "posterior": name,
            "source": format!(
                "{}; summarised by qnmc-compare --write-references from stan-dev/posteriordb's \
                 reference_posteriors/draws/draws/{name}.json.zip",
                known.source
            ),
            "names": names,
            "mean": known.mean,
            "sd": known.sd,
            "mcse_mean": known.mean_mcse,
            "mcse_sd": known.sd_mcse,
        });
        let out = reference_dir().join(format!("{name}.json"));
        std::fs::write(&out, serde_json::to_string_pretty(&value).unwrap() + "\n")
            .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
        written.push(name);
    }
    Ok(written)
}

/// The compiled model of `posterior` in `models` (`MODEL_model.so`), with
/// its data, or why it cannot be used.
pub fn load(posterior: &Posterior, models: &Path) -> Result<StanModel, String> {
    let library = models.join(format!("{}_model.so", posterior.model));
    if !library.is_file() {
        return Err(format!(
            "model {} was not compiled (no {})",
            posterior.model,
            library.display()
        ));
    }
    StanModel::load(&library, Some(&posterior.data)).map_err(|e| e.to_string())
}

/// The outcome of comparing a run with the reference.
#[derive(Debug, Clone)]
pub struct ReferenceCheck {
    /// Every |z| (mean and sd of each reference quantity) below the
    /// Bonferroni bound and R̂ below 1.05, as `qnmc check` decides.
    pub passed: bool,
    /// The largest |z| over means and sds.
    pub worst_z: f64,
    /// The quantity with the largest |z|, and which moment.
    pub worst: String,
    /// The Bonferroni bound used.
    pub bound: f64,
}

/// The run's draws of the reference quantities on the constrained scale
/// (through the model's `constrain`), as a run whose coordinates are
/// those quantities; costs and times unchanged. Reference quantities the
/// model does not report (generated quantities) are left out and named in
/// the second value.
pub fn reference_view(
    model: &dyn Model,
    posterior: &Posterior,
    run: &SamplerRun,
) -> (SamplerRun, Vec<String>) {
    let output = model.output_names();
    let mut columns = Vec::new();
    let mut missing = Vec::new();
    for (i, n) in posterior.names.iter().enumerate() {
        match output.iter().position(|o| o == n) {
            Some(j) => columns.push((i, j)),
            None => missing.push(n.clone()),
        }
    }
    let d = run.dimension.max(1);
    let mut constrained = vec![0.0; output.len()];
    let chains = run
        .chains
        .iter()
        .map(|chain| {
            let mut draws = Vec::with_capacity(chain.draws.len() / d * columns.len());
            for row in chain.draws.chunks(d) {
                model.constrain(row, &mut constrained);
                draws.extend(columns.iter().map(|&(_, j)| constrained[j]));
            }
            ChainRun {
                draws,
                ..chain.clone()
            }
        })
        .collect();
    let view = SamplerRun {
        dimension: columns.len(),
        chains,
        ..run.clone()
    };
    (view, missing)
}

/// Compares a [`reference_view`] (or Stan's draws in the same form: one
/// coordinate per name of `names`, a subset of the reference's) with the
/// reference: `qnmc check`'s z-tests (mean and sd, both MCSEs, Bonferroni
/// over 2 × quantities at family-wise level 0.001, R̂ < 1.05).
pub fn check_view(
    posterior: &Posterior,
    names: &[String],
    view: &SamplerRun,
) -> Result<ReferenceCheck, String> {
    let mut known = KnownPosterior {
        source: posterior.reference.source.clone(),
        mean: Vec::new(),
        sd: Vec::new(),
        mean_mcse: Some(Vec::new()),
        sd_mcse: Some(Vec::new()),
        gaussian_marginals: false,
    };
    for n in names {
        let i = posterior
            .names
            .iter()
            .position(|r| r == n)
            .ok_or_else(|| format!("{n} is not a reference quantity of {}", posterior.name))?;
        let r = &posterior.reference;
        known.mean.push(r.mean[i]);
        known.sd.push(r.sd[i]);
        known
            .mean_mcse
            .as_mut()
            .unwrap()
            .push(r.mean_mcse.as_ref().unwrap()[i]);
        known
            .sd_mcse
            .as_mut()
            .unwrap()
            .push(r.sd_mcse.as_ref().unwrap()[i]);
    }
    let chains = view
        .chains
        .iter()
        .enumerate()
        .map(|(k, chain)| ChainDraws {
            chain_id: k + 1,
            values: chain.draws.clone(),
            lp: vec![0.0; chain.draws.len() / view.dimension.max(1)],
            ..ChainDraws::default()
        })
        .collect();
    let draws = RunDraws {
        target: posterior.name.clone(),
        names: names.to_vec(),
        chains,
        ..RunDraws::default()
    };
    let report: CheckReport = check(&draws, &known);
    if let Some(problem) = &report.problem {
        return Err(problem.clone());
    }
    let mut worst = (0.0f64, String::new());
    for row in &report.rows {
        for (z, what) in [(row.z_mean, "mean"), (row.z_sd, "sd")] {
            if z.abs() > worst.0 || worst.1.is_empty() {
                worst = (z.abs(), format!("{} {what}", row.name));
            }
        }
    }
    Ok(ReferenceCheck {
        passed: report.passed(),
        worst_z: worst.0,
        worst: worst.1,
        bound: report.z_threshold,
    })
}
