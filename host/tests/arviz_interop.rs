//! ArviZ reads qnmc's CmdStan CSV files and computes the same bulk ESS and
//! R̂ as `qnmc_host::diagnostics`.
//!
//! Runs only where `python3 -c "import arviz"` works; otherwise it prints why
//! it skipped, unless `QNMC_REQUIRE_ARVIZ=1`, when a missing ArviZ fails it.

use std::path::PathBuf;
use std::process::Command;

use qnmc::{Hmc, HmcSettings};
use qnmc_host::diagnostics::{ess_bulk, rank_normalized_rhat};
use qnmc_host::draws::{ChainDraws, RunDraws};
use qnmc_host::output::{OutputDir, cmdstan_csv, csv_column_name};
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
    }
}

/// Whether ArviZ can be imported; `Err` says why not.
fn arviz_available() -> Result<(), String> {
    match Command::new("python3")
        .args(["-c", "import arviz"])
        .output()
    {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "`python3 -c \"import arviz\"` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Err(format!("cannot start python3: {e}")),
    }
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
    if let Err(why) = arviz_available() {
        if std::env::var("QNMC_REQUIRE_ARVIZ").as_deref() == Ok("1") {
            panic!("QNMC_REQUIRE_ARVIZ=1 but ArviZ is unusable: {why}");
        }
        eprintln!("skipping the ArviZ interop test: {why}");
        return;
    }
    let run = hmc_run();
    let folder: PathBuf =
        std::env::temp_dir().join(format!("qnmc-arviz-interop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    let out = OutputDir::create(&folder, false).unwrap();
    let paths: Vec<String> = (0..CHAINS)
        .map(|c| {
            let path = out
                .write(
                    &format!("chain_{}.csv", c + 1),
                    cmdstan_csv(&run, c).as_bytes(),
                )
                .unwrap();
            path.display().to_string()
        })
        .collect();
    out.finish().unwrap();

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
