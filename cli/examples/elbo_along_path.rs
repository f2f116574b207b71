//! The ELBO along the L-BFGS start's path: why the NUTS warm-up refuses an
//! optimum in a funnel's neck (docs/NUTS.md, "The start's choice along the
//! path").
//!
//! For each seed the chain's start is drawn as `qnmc run` draws it (the
//! target's initial point plus uniform(−2, 2)), L-BFGS runs as the warm-up's
//! start runs it (at most 1000 iterations and 1000 evaluations, 10 pairs, no
//! early stop here), and at iterations 1, 2, 4, … the ELBO of N(x, H) is
//! estimated with `qnmc::lbfgs::elbo_estimate` (4 antithetic draws from one
//! vector of normals, the same at every point). One line per seed:
//! `iteration:ELBO(U, ½ log det H, ‖∇U‖ against the initial point's, target
//! evaluations so far)` for each scored point, then where the path ended.
//! The path runs on past the warm-up's early stops (the ELBO going down,
//! ‖∇U‖ growing past `NECK_GRADIENT_GROWTH` = 100 times the initial
//! point's); the last line says where ‖∇U‖ first grew that far.
//!
//! ```sh
//! cargo run --release -p qnmc-cli --example elbo_along_path -- TARGET [SEEDS]
//! ```
//!
//! TARGET is any `--target` of `qnmc list` that needs no options (e.g.
//! `funnel`, `eight-schools-centered`, `stochastic-volatility`,
//! `logreg-german`); SEEDS defaults to 3.

use qnmc::Real;
use qnmc::lbfgs::{InitialScaling, LbfgsMemory, LbfgsSettings, elbo_estimate, minimize_observed};
use qnmc::random::fill_standard_normal;
use qnmc_cli::{TargetArgs, build_target};
use qnmc_host::model::PaddedModel;
use rand_core::SeedableRng;
use std::fmt::Write;

/// Storage: every built-in target that needs no options fits.
const D: usize = 128;
/// Pairs, as the warm-up's start keeps with `--memory 10`.
const M: usize = 10;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(target) = args.get(1) else {
        eprintln!("usage: elbo_along_path TARGET [SEEDS]");
        std::process::exit(2);
    };
    let seeds: u64 = match args.get(2).map(|s| s.parse()) {
        None => 3,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("SEEDS: {e}");
            std::process::exit(2);
        }
    };
    let model = build_target(&TargetArgs {
        target: target.clone(),
        ..TargetArgs::default()
    })
    .unwrap_or_else(|e| {
        eprintln!("{target}: {e}");
        std::process::exit(2);
    });
    let padded = PaddedModel::<D>::new(model.as_ref())
        .unwrap_or_else(|e| {
            eprintln!("{target}: {e}");
            std::process::exit(2);
        })
        .frozen_padding();
    let n = padded.model_dimension();
    for seed in 1..=seeds {
        let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(seed);
        let mut start = padded.initial_point();
        for v in start[..n].iter_mut() {
            *v += 4.0 * f64::uniform_open_closed(&mut rng) - 2.0;
        }
        let mut normals = [0.0; D];
        fill_standard_normal(&mut rng, &mut normals[..n]);
        let mut settings = LbfgsSettings::with_max_pairs(M);
        settings.scaling = InitialScaling::NewestPair(1.0);
        let mut memory = LbfgsMemory::<f64, D, M>::new(settings).expect("M ≥ 1");
        memory.set_dimension(n).expect("1 ≤ n ≤ D");
        let mut line = String::new();
        let mut spent = 0;
        // Where ‖∇U‖ first exceeded 100 times the start's (the warm-up's
        // NECK_GRADIENT_GROWTH): iteration and evaluations so far.
        let mut grew: Option<(u32, u32)> = None;
        let outcome = minimize_observed(
            &padded,
            &start,
            &mut memory,
            1000,
            1000,
            1e-13,
            |at, memory| {
                if grew.is_none() && at.gradient_reduction() > 100.0 {
                    grew = Some((at.iterations, at.gradient_evaluations));
                }
                if at.iterations.is_power_of_two() {
                    let (elbo, evaluations) =
                        elbo_estimate(&padded, &at.position, memory, &normals, n);
                    spent += evaluations;
                    let half_log_det = 0.5 * memory.log_det_inverse_hessian();
                    let _ = write!(
                        line,
                        " {}:{elbo:.1}(U {:.1}, ½log det H {half_log_det:.1}, ‖∇U‖/‖∇U₀‖ {:.3}, {} evaluations)",
                        at.iterations,
                        at.potential,
                        at.gradient_reduction(),
                        at.gradient_evaluations
                    );
                }
                true
            },
        );
        let growth = match grew {
            Some((iteration, evaluations)) => {
                format!(
                    "‖∇U‖ above 100 × the start's from iteration {iteration} ({evaluations} evaluations)"
                )
            }
            None => "‖∇U‖ never above 100 × the start's".to_string(),
        };
        match outcome {
            Some(o) => println!(
                "{target} seed {seed}:{line}\n  end: {} iterations, {} evaluations (+{spent} for the ELBOs), converged {}, U {:.2}; {growth}",
                o.iterations, o.gradient_evaluations, o.converged, o.potential
            ),
            None => println!("{target} seed {seed}: U or its gradient is not finite at the start"),
        }
    }
}
