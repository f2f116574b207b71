//! ArviZ reads qnmc's CmdStan CSV files and computes the same bulk ESS and
//! R̂ as `qnmc_host::diagnostics`; CmdStanPy reads the same files back to the
//! bit. On a NUTS run of the runner (CmdStan's NUTS columns, `treedepth__`
//! and `energy__` included, and its adaptation block) ArviZ computes the
//! same E-BFMI as `qnmc_host::output::ebfmi` and draws its energy plot, and
//! CmdStanPy reads every column, the step size and the inverse metric.
//!
//! Each test runs only where its Python package imports; otherwise it prints
//! why it skipped, unless `QNMC_REQUIRE_ARVIZ=1` (for ArviZ) or
//! `QNMC_REQUIRE_CMDSTANPY=1` (for CmdStanPy), when a missing package fails
//! it.

use std::path::PathBuf;
use std::process::Command;

use qnmc::{Hmc, HmcSettings};
use qnmc_host::diagnostics::{ess_bulk, rank_normalized_rhat};
use qnmc_host::draws::{ChainDraws, RunDraws};
use qnmc_host::model::Model;
use qnmc_host::output::{OutputDir, cmdstan_csv, csv_column_name, ebfmi};
use qnmc_host::run::{Progress, RunSettings, SamplerKind};
use qnmc_host::targets::CorrelatedGaussian;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

const DIMENSION: usize = 3;
const CHAINS: usize = 4;
const WARMUP: usize = 200;
const DRAWS: usize = 1000;

/// 4 chains × 1000 HMC draws of N(0, 11ᵀ + 4I) in three dimensions.
fn hmc_run() -> RunDraws {
    let target = CorrelatedGaussian::<DIMENSION>::paper();
    let names: Vec<String> = (1..=DIMENSION).map(|i| format!("x[{i}]")).collect();
    let chains = (0..CHAINS)
        .map(|c| {
            let seed = 2024 + c as u64;
            let mut rng = XorShiftRng::seed_from_u64(seed);
            let start = [c as f64 - 1.5, 0.5, -0.5];
            let mut hmc =
                Hmc::<f64, DIMENSION>::new(HmcSettings::new(0.6, 6), start, &target).unwrap();
            let mut chain = ChainDraws {
                chain_id: c + 1,
                seed,
                // CmdStanPy refuses a file without warm-up (its default
                // adapt engaged needs num_warmup > 0).
                warmup_draws: WARMUP as u64,
                ..ChainDraws::default()
            };
            for k in 0..WARMUP + DRAWS {
                let stats = hmc.step(&target, &mut rng);
                chain.gradient_evaluations += u64::from(stats.gradient_evaluations);
                if k >= WARMUP {
                    chain.lp.push(-hmc.potential());
                    chain.accept_stat.push(stats.acceptance_probability);
                    chain.step_size.push(stats.step_size);
                    chain.n_leapfrog.push(stats.gradient_evaluations);
                    chain.divergent.push(stats.divergent);
                    chain.values.extend_from_slice(hmc.position());
                }
            }
            chain
        })
        .collect();
    RunDraws {
        target: "gaussian".into(),
        sampler: "hmc".into(),
        settings: vec![
            ("warmup".into(), WARMUP.to_string()),
            ("step_size".into(), "0.6".into()),
            ("leapfrog_steps".into(), "6".into()),
        ],
        names,
        chains,
        ..RunDraws::default()
    }
}

/// Whether `python3` can import `module`; `Err` says why not.
fn python_module_available(module: &str) -> Result<(), String> {
    match Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
    {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "`python3 -c \"import {module}\"` failed: {}",
            // The last line of a traceback is the error itself.
            String::from_utf8_lossy(&out.stderr)
                .trim()
                .lines()
                .last()
                .unwrap_or("")
        )),
        Err(e) => Err(format!("cannot start python3: {e}")),
    }
}

/// `true` when the test should run; `false` (after saying why) when the
/// module is missing and `require_env` is not set to 1.
fn should_run(module: &str, require_env: &str) -> bool {
    match python_module_available(module) {
        Ok(()) => true,
        Err(why) if std::env::var(require_env).as_deref() == Ok("1") => {
            panic!("{require_env}=1 but {module} is unusable: {why}")
        }
        Err(why) => {
            eprintln!("skipping: {why}");
            false
        }
    }
}

/// Writes the run's per-chain CSVs into a fresh folder named after `tag`;
/// returns the folder and the files.
fn write_chain_files(run: &RunDraws, tag: &str) -> (PathBuf, Vec<String>) {
    let folder: PathBuf = std::env::temp_dir().join(format!("qnmc-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    let out = OutputDir::create(&folder, false).unwrap();
    let paths = (0..run.chains.len())
        .map(|c| {
            let path = out
                .write(
                    &format!("chain_{}.csv", c + 1),
                    cmdstan_csv(run, c).as_bytes(),
                )
                .unwrap();
            path.display().to_string()
        })
        .collect();
    out.finish().unwrap();
    (folder, paths)
}

/// Reads the files with `arviz.from_cmdstan` and prints, per scalar, its
/// CSV column name, bulk ESS and rank-normalised R̂ (`repr`, full precision),
/// then the names of the sample_stats variables and the divergence count.
const ARVIZ_SCRIPT: &str = r#"
import sys, arviz as az, numpy as np
idata = az.from_cmdstan(posterior=sys.argv[1:])
ess = az.ess(idata, method="bulk")
rhat = az.rhat(idata, method="rank")
for var in idata.posterior.data_vars:
    e = np.atleast_1d(ess[var].values)
    r = np.atleast_1d(rhat[var].values)
    for i in range(e.size):
        name = var if ess[var].values.ndim == 0 else f"{var}.{i + 1}"
        print("param", name, repr(float(e[i])), repr(float(r[i])))
stats = idata.sample_stats
print("stats", " ".join(sorted(stats.data_vars)))
print("diverging", int(stats["diverging"].values.sum()))
print("version", az.__version__)
"#;

#[test]
fn arviz_reads_our_csv_and_agrees_on_bulk_ess_and_rhat() {
    if !should_run("arviz", "QNMC_REQUIRE_ARVIZ") {
        return;
    }
    let run = hmc_run();
    let (folder, paths) = write_chain_files(&run, "arviz-interop");

    let output = Command::new("python3")
        .args(["-c", ARVIZ_SCRIPT])
        .args(&paths)
        .output()
        .expect("python3 ran a moment ago");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "ArviZ failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!("{stdout}");

    let mut compared = 0;
    let mut divergences_seen = None;
    let mut stats_seen = String::new();
    for line in stdout.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.first().copied() {
            Some("param") => {
                let (name, arviz_ess, arviz_rhat) = (
                    fields[1],
                    fields[2].parse::<f64>().unwrap(),
                    fields[3].parse::<f64>().unwrap(),
                );
                let j = run
                    .names
                    .iter()
                    .position(|n| csv_column_name(n) == name)
                    .unwrap_or_else(|| panic!("ArviZ reported unknown quantity {name}"));
                let chains = run.chains_of(j);
                let slices: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
                let ours = ess_bulk(&slices);
                let rel = ((arviz_ess - ours) / ours).abs();
                assert!(
                    rel < 1e-6,
                    "{name}: ArviZ bulk ESS {arviz_ess}, ours {ours}"
                );
                eprintln!("{name}: bulk ESS ArviZ {arviz_ess} ours {ours} (relative {rel:.1e})");
                let ours_rhat = rank_normalized_rhat(&slices);
                let rel = ((arviz_rhat - ours_rhat) / ours_rhat).abs();
                eprintln!("{name}: R̂ ArviZ {arviz_rhat} ours {ours_rhat} (relative {rel:.1e})");
                assert!(rel < 1e-6, "{name}: ArviZ R̂ {arviz_rhat}, ours {ours_rhat}");
                // A sanity check that the run is worth comparing on.
                assert!(ours > 100.0, "{name}: bulk ESS {ours}");
                compared += 1;
            }
            Some("stats") => stats_seen = fields[1..].join(" "),
            Some("diverging") => divergences_seen = fields[1].parse::<usize>().ok(),
            _ => {}
        }
    }
    assert_eq!(compared, DIMENSION, "ArviZ output:\n{stdout}");
    // The sampler columns arrive as ArviZ's sample_stats.
    for stat in ["lp", "diverging", "acceptance_rate", "step_size", "n_steps"] {
        assert!(
            stats_seen.split(' ').any(|s| s == stat),
            "{stat} missing from {stats_seen}"
        );
    }
    let our_divergences: usize = run
        .chains
        .iter()
        .map(|c| c.divergent.iter().filter(|&&d| d).count())
        .sum();
    assert_eq!(divergences_seen, Some(our_divergences));
    std::fs::remove_dir_all(&folder).unwrap();
}

/// Reads the files with `cmdstanpy.from_csv` and prints the draws of every
/// column, one `name value value …` line each (chains one after another,
/// `repr` so every float64 reads back exactly).
const CMDSTANPY_SCRIPT: &str = r#"
import sys, cmdstanpy
fit = cmdstanpy.from_csv(sys.argv[1:])
frame = fit.draws_pd()
for name in frame.columns:
    print(name, " ".join(repr(float(v)) for v in frame[name]))
"#;

#[test]
fn cmdstanpy_reads_our_csv_back_exactly() {
    if !should_run("cmdstanpy", "QNMC_REQUIRE_CMDSTANPY") {
        return;
    }
    let run = hmc_run();
    let (folder, paths) = write_chain_files(&run, "cmdstanpy-interop");
    let output = Command::new("python3")
        .args(["-c", CMDSTANPY_SCRIPT])
        .args(&paths)
        .output()
        .expect("python3 ran a moment ago");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "CmdStanPy failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let column = |name: &str| -> Vec<f64> {
        let line = stdout
            .lines()
            .find(|l| l.split(' ').next() == Some(name))
            .unwrap_or_else(|| panic!("CmdStanPy has no column {name}"));
        line.split(' ')
            .skip(1)
            .map(|v| v.parse().unwrap())
            .collect()
    };
    // CmdStanPy names vector elements Stan's way: x[1], as we do.
    for (j, name) in run.names.iter().enumerate() {
        let ours: Vec<f64> = run.chains_of(j).concat();
        let theirs = column(name);
        assert_eq!(theirs.len(), CHAINS * DRAWS);
        for (a, b) in ours.iter().zip(&theirs) {
            assert_eq!(a.to_bits(), b.to_bits(), "{name}");
        }
    }
    let lp: Vec<f64> = run.chains.iter().flat_map(|c| c.lp.clone()).collect();
    assert_eq!(column("lp__"), lp);
    std::fs::remove_dir_all(&folder).unwrap();
}

/// N(0, diag(1, 4, 9)) as a runner model.
struct ScaledNormal;

impl Model for ScaledNormal {
    fn name(&self) -> String {
        "scaled-normal".into()
    }
    fn dimension(&self) -> usize {
        3
    }
    fn potential_and_gradient(&self, x: &[f64], g: &mut [f64]) -> f64 {
        let mut u = 0.0;
        for i in 0..3 {
            let variance = ((i + 1) * (i + 1)) as f64;
            g[i] = x[i] / variance;
            u += 0.5 * x[i] * x[i] / variance;
        }
        u
    }
}

/// 4 chains × 1000 NUTS draws of [`ScaledNormal`] by the runner (the default
/// quasi-Newton metric, written as CmdStan's `dense_e`).
fn nuts_run() -> RunDraws {
    let settings = RunSettings {
        chains: CHAINS,
        warmup: 500,
        draws: DRAWS,
        seed: 45,
        ..RunSettings::default()
    };
    qnmc_host::run::run(
        &ScaledNormal,
        SamplerKind::Nuts,
        &settings,
        &Progress::hidden(),
    )
    .unwrap()
}

/// `arviz.from_cmdstan` on NUTS files, then `az.bfmi` (printed per chain)
/// and `az.plot_energy` (saved to the first argument, Agg backend).
const ARVIZ_ENERGY_SCRIPT: &str = r#"
import sys, matplotlib
matplotlib.use("Agg")
import arviz as az
idata = az.from_cmdstan(posterior=sys.argv[2:])
print("stats", " ".join(sorted(idata.sample_stats.data_vars)))
print("bfmi", " ".join(repr(float(b)) for b in az.bfmi(idata)))
ax = az.plot_energy(idata)
ax.figure.savefig(sys.argv[1])
"#;

#[test]
fn arviz_reads_nuts_energy_for_bfmi_and_the_energy_plot() {
    if !should_run("arviz", "QNMC_REQUIRE_ARVIZ") {
        return;
    }
    let run = nuts_run();
    let (folder, paths) = write_chain_files(&run, "arviz-energy");
    let plot = folder.join("energy.png");
    let output = Command::new("python3")
        .args(["-c", ARVIZ_ENERGY_SCRIPT])
        .arg(&plot)
        .args(&paths)
        .output()
        .expect("python3 ran a moment ago");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "ArviZ failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!("{stdout}");
    let field = |key: &str| -> Vec<String> {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key} ")))
            .unwrap_or_else(|| panic!("no {key} line in:\n{stdout}"))
            .split(' ')
            .map(str::to_string)
            .collect()
    };
    let stats = field("stats");
    for stat in ["energy", "tree_depth", "n_steps", "diverging", "lp"] {
        assert!(
            stats.iter().any(|s| s == stat),
            "{stat} missing from {stats:?}"
        );
    }
    let bfmi: Vec<f64> = field("bfmi").iter().map(|v| v.parse().unwrap()).collect();
    assert_eq!(bfmi.len(), CHAINS);
    for (theirs, chain) in bfmi.iter().zip(&run.chains) {
        let ours = ebfmi(&chain.energy);
        assert!(
            ((theirs - ours) / ours).abs() < 1e-9,
            "E-BFMI: ArviZ {theirs}, ours {ours}"
        );
        // NUTS on a Gaussian: well above the 0.3 warning level.
        assert!(ours > 0.5, "E-BFMI {ours}");
    }
    let png = std::fs::read(&plot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 1000,
        "no energy plot"
    );
    std::fs::remove_dir_all(&folder).unwrap();
}

/// `cmdstanpy.from_csv` on NUTS files: the draws of every column, then the
/// metric type, the step sizes and the inverse metrics of the chains.
const CMDSTANPY_NUTS_SCRIPT: &str = r#"
import sys, cmdstanpy
fit = cmdstanpy.from_csv(sys.argv[1:])
frame = fit.draws_pd()
for name in frame.columns:
    print("column", name, " ".join(repr(float(v)) for v in frame[name]))
print("metric_type", fit.metric_type)
print("step_size", " ".join(repr(float(v)) for v in fit.step_size))
print("inv_metric", " ".join(repr(float(v)) for v in fit.inv_metric.ravel()))
print("divergences", " ".join(str(int(v)) for v in fit.divergences))
"#;

#[test]
fn cmdstanpy_reads_a_nuts_run_with_its_adaptation() {
    if !should_run("cmdstanpy", "QNMC_REQUIRE_CMDSTANPY") {
        return;
    }
    let run = nuts_run();
    let (folder, paths) = write_chain_files(&run, "cmdstanpy-nuts");
    let output = Command::new("python3")
        .args(["-c", CMDSTANPY_NUTS_SCRIPT])
        .args(&paths)
        .output()
        .expect("python3 ran a moment ago");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "CmdStanPy failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = |prefix: &str| -> Vec<String> {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no line {prefix:?} in CmdStanPy's output"))
            .split(' ')
            .map(str::to_string)
            .collect()
    };
    let numbers =
        |prefix: &str| -> Vec<f64> { line(prefix).iter().map(|v| v.parse().unwrap()).collect() };
    let all = |pick: &dyn Fn(&ChainDraws) -> Vec<f64>| -> Vec<f64> {
        run.chains.iter().flat_map(pick).collect()
    };
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        bits(&numbers("column lp__ ")),
        bits(&all(&|c| c.lp.clone()))
    );
    assert_eq!(
        bits(&numbers("column energy__ ")),
        bits(&all(&|c| c.energy.clone()))
    );
    assert_eq!(
        numbers("column treedepth__ "),
        all(&|c| c.tree_depth.iter().map(|&d| f64::from(d)).collect())
    );
    assert_eq!(
        numbers("column n_leapfrog__ "),
        all(&|c| c.n_leapfrog.iter().map(|&d| f64::from(d)).collect())
    );
    for (j, name) in run.names.iter().enumerate() {
        let theirs = numbers(&format!("column {name} "));
        assert_eq!(bits(&theirs), bits(&run.chains_of(j).concat()), "{name}");
    }
    assert_eq!(line("metric_type "), ["dense_e"]);
    let step_sizes = numbers("step_size ");
    for (theirs, chain) in step_sizes.iter().zip(&run.chains) {
        assert_eq!(*theirs, chain.step_size[0]);
    }
    // CHAINS inverse metrics of 3 × 3, each symmetric with a positive
    // diagonal.
    let inverse = numbers("inv_metric ");
    assert_eq!(inverse.len(), CHAINS * 9);
    for m in inverse.chunks(9) {
        for i in 0..3 {
            assert!(m[i * 3 + i] > 0.0, "{m:?}");
            for j in 0..3 {
                let (a, b) = (m[i * 3 + j], m[j * 3 + i]);
                assert!((a - b).abs() <= 1e-9 * (a.abs() + b.abs()), "{m:?}");
            }
        }
    }
    let divergences: Vec<usize> = line("divergences ")
        .iter()
        .map(|v| v.parse().unwrap())
        .collect();
    let ours: Vec<usize> = run
        .chains
        .iter()
        .map(|c| c.divergent.iter().filter(|&&d| d).count())
        .collect();
    assert_eq!(divergences, ours);
    std::fs::remove_dir_all(&folder).unwrap();
}

/// [`nuts_run`] with `--save-warmup`.
fn nuts_run_saving_warmup() -> RunDraws {
    let settings = RunSettings {
        chains: CHAINS,
        warmup: 500,
        draws: DRAWS,
        seed: 45,
        save_warmup: true,
        // Every chain's whole warm-up: Python's readers take one length.
        early_end: Some(0),
        ..RunSettings::default()
    };
    qnmc_host::run::run(
        &ScaledNormal,
        SamplerKind::Nuts,
        &settings,
        &Progress::hidden(),
    )
    .unwrap()
}

/// Runs `python3 -c script paths…` and returns its standard output, failing
/// the test (with the output and errors) when the script fails.
fn python_output(script: &str, paths: &[String]) -> String {
    let output = Command::new("python3")
        .args(["-c", script])
        .args(paths)
        .output()
        .expect("python3 ran a moment ago");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "the Python script failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The space-separated words after `prefix` on the first line that starts
/// with it.
fn words_after(stdout: &str, prefix: &str) -> Vec<String> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line {prefix:?} in:\n{stdout}"))
        .split(' ')
        .map(str::to_string)
        .collect()
}

/// The bits of each word read as an `f64`.
fn bits_of(words: &[String]) -> Vec<u64> {
    words
        .iter()
        .map(|w| w.parse::<f64>().unwrap().to_bits())
        .collect()
}

/// `arviz.from_cmdstan(..., save_warmup=True)`: per chain, the warm-up and
/// kept draws of the first quantity and the warm-up's `n_steps`.
const ARVIZ_WARMUP_SCRIPT: &str = r#"
import sys, arviz as az
idata = az.from_cmdstan(posterior=sys.argv[1:], save_warmup=True)
var = list(idata.posterior.data_vars)[0]
for c in range(idata.posterior.sizes["chain"]):
    w = idata.warmup_posterior[var].values[c].reshape(-1, 3)[:, 0]
    k = idata.posterior[var].values[c].reshape(-1, 3)[:, 0]
    print("warmup", c, " ".join(repr(float(v)) for v in w))
    print("kept", c, " ".join(repr(float(v)) for v in k))
    print("steps", c, int(idata.warmup_sample_stats["n_steps"].values[c].sum()))
"#;

/// ArviZ splits our `--save-warmup` files as CmdStan's: the warm-up's
/// draws in `warmup_posterior`, the kept ones in `posterior`, bit for bit.
#[test]
fn arviz_reads_the_saved_warmup_apart_from_the_kept_draws() {
    if !should_run("arviz", "QNMC_REQUIRE_ARVIZ") {
        return;
    }
    let run = nuts_run_saving_warmup();
    let (folder, paths) = write_chain_files(&run, "arviz-warmup");
    let stdout = python_output(ARVIZ_WARMUP_SCRIPT, &paths);
    for (c, chain) in run.chains.iter().enumerate() {
        let w = &chain.saved_warmup;
        assert_eq!(w.len() as u64, chain.warmup_draws);
        let first =
            |values: &[f64]| -> Vec<u64> { values.chunks(3).map(|r| r[0].to_bits()).collect() };
        assert_eq!(
            bits_of(&words_after(&stdout, &format!("warmup {c} "))),
            first(&w.values)
        );
        assert_eq!(
            bits_of(&words_after(&stdout, &format!("kept {c} "))),
            first(&chain.values)
        );
        let steps: u64 = w.n_leapfrog.iter().map(|&n| u64::from(n)).sum();
        assert_eq!(
            words_after(&stdout, &format!("steps {c} ")),
            [steps.to_string()]
        );
    }
    std::fs::remove_dir_all(&folder).unwrap();
}

/// `cmdstanpy.from_csv`: draws with and without the warm-up.
const CMDSTANPY_WARMUP_SCRIPT: &str = r#"
import sys, cmdstanpy
fit = cmdstanpy.from_csv(sys.argv[1:])
print("shape_all", *fit.draws(inc_warmup=True).shape)
print("shape_kept", *fit.draws().shape)
print("lp_kept", " ".join(repr(float(v)) for v in fit.draws_pd()["lp__"]))
"#;

/// CmdStanPy counts our saved warm-up rows as CmdStan's and keeps them out
/// of the draws by default.
#[test]
fn cmdstanpy_reads_the_saved_warmup() {
    if !should_run("cmdstanpy", "QNMC_REQUIRE_CMDSTANPY") {
        return;
    }
    let run = nuts_run_saving_warmup();
    let (folder, paths) = write_chain_files(&run, "cmdstanpy-warmup");
    let stdout = python_output(CMDSTANPY_WARMUP_SCRIPT, &paths);
    let warmup = run.chains[0].warmup_draws as usize;
    assert!(run.chains.iter().all(|c| c.warmup_draws as usize == warmup));
    let kept = words_after(&stdout, "shape_kept ");
    let width = kept[2].clone();
    assert_eq!(kept, [DRAWS.to_string(), CHAINS.to_string(), width.clone()]);
    assert_eq!(
        words_after(&stdout, "shape_all "),
        [(warmup + DRAWS).to_string(), CHAINS.to_string(), width]
    );
    let ours: Vec<u64> = run
        .chains
        .iter()
        .flat_map(|c| c.lp.iter().map(|v| v.to_bits()))
        .collect();
    assert_eq!(bits_of(&words_after(&stdout, "lp_kept ")), ours);
    std::fs::remove_dir_all(&folder).unwrap();
}
