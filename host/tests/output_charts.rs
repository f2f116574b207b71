//! Charts of a real HMC run are written as non-empty SVG and PNG files.
//!
//! Set `QNMC_KEEP_TEST_OUTPUT=1` to keep the folder (its path is printed) and
//! look at the pictures.

use qnmc::{Hmc, HmcSettings};
use qnmc_host::draws::{ChainDraws, RunDraws};
use qnmc_host::model::KnownPosterior;
use qnmc_host::output::{OutputDir, PlotSelection, render_chart, run_charts};
use qnmc_host::targets::CorrelatedGaussian;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

const DIMENSION: usize = 2;

fn hmc_run(chains: usize, draws: usize) -> RunDraws {
    let target = CorrelatedGaussian::<DIMENSION>::paper();
    let chains = (0..chains)
        .map(|c| {
            let seed = 77 + c as u64;
            let mut rng = XorShiftRng::seed_from_u64(seed);
            let mut hmc =
                Hmc::<f64, DIMENSION>::new(HmcSettings::new(0.5, 5), [3.0, -3.0], &target).unwrap();
            let mut chain = ChainDraws {
                chain_id: c + 1,
                seed,
                ..ChainDraws::default()
            };
            for _ in 0..draws {
                let stats = hmc.step(&target, &mut rng);
                chain.lp.push(-hmc.potential());
                chain.accept_stat.push(stats.acceptance_probability);
                chain.step_size.push(stats.step_size);
                chain.n_leapfrog.push(stats.gradient_evaluations);
                chain.divergent.push(stats.divergent);
                chain.values.extend_from_slice(hmc.position());
            }
            chain
        })
        .collect();
    RunDraws {
        target: "gaussian".into(),
        sampler: "hmc".into(),
        settings: vec![],
        names: vec!["x[1]".into(), "x[2]".into()],
        chains,
        ..RunDraws::default()
    }
}

#[test]
fn run_charts_render_to_png_and_svg() {
    let run = hmc_run(2, 1500);
    // Σ = 11ᵀ + 4I: every marginal is N(0, 5).
    let known = KnownPosterior {
        source: "analytic".into(),
        mean: vec![0.0; DIMENSION],
        sd: vec![5f64.sqrt(); DIMENSION],
        mean_mcse: None,
        sd_mcse: None,
        gaussian_marginals: true,
    };
    let folder = std::env::temp_dir().join(format!("qnmc-output-charts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    let dir = OutputDir::create(&folder, false).unwrap();
    let charts = run_charts(&run, Some(&known), &PlotSelection::Slowest(5));
    // Trace, autocorrelation, density and rank of x[1], x[2] and lp__.
    assert_eq!(charts.len(), 4 * (DIMENSION + 1));
    for chart in &charts {
        let paths = render_chart(chart, &dir).unwrap();
        assert_eq!(paths.len(), 2);
        let svg = std::fs::read_to_string(&paths[0]).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("<polyline") || svg.contains("<rect"));
        let png = std::fs::read(&paths[1]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert!(
            png.len() > 5_000,
            "{} is {} bytes",
            paths[1].display(),
            png.len()
        );
    }
    dir.finish().unwrap();
    if std::env::var("QNMC_KEEP_TEST_OUTPUT").as_deref() == Ok("1") {
        eprintln!("charts kept in {}", folder.display());
    } else {
        std::fs::remove_dir_all(&folder).unwrap();
    }
}
