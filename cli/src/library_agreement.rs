//! The library's [`Sampling`] against `qnmc run`: the same defaults for
//! every sampler, the same settings from the builder as from the options,
//! and the same draws, bit for bit.

use clap::Parser;
use qnmc_host::draws::RunDraws;
use qnmc_host::fit::Sampling;
use qnmc_host::run::{REGISTRY, RunSettings, SamplerKind};
use qnmc_host::targets::Funnel;

use crate::{Cli, Command, run_settings};

/// The settings `qnmc ARGS` would run with.
fn cli_settings(args: &[&str]) -> (SamplerKind, RunSettings) {
    let cli = Cli::try_parse_from(args).unwrap();
    match cli.command {
        Command::Run(a) => (a.sampler.sampler, run_settings(&a.sampler)),
        _ => unreachable!(),
    }
}

#[test]
fn every_sampler_has_the_cli_defaults() {
    for entry in REGISTRY {
        let name = entry.kind.name();
        let (kind, cli) = cli_settings(&["qnmc", "run", "--target", "gaussian", "--sampler", name]);
        assert_eq!(kind, entry.kind);
        assert_eq!(
            Sampling::with_sampler(kind).run_settings(),
            &cli,
            "{name}: the library's defaults differ from `qnmc run`'s"
        );
    }
    let (kind, cli) = cli_settings(&["qnmc", "run", "--target", "gaussian"]);
    assert_eq!(kind, Sampling::new().sampler());
    assert_eq!(Sampling::new().run_settings(), &cli);
}

#[test]
fn the_builder_sets_what_the_options_set() {
    let (kind, cli) = cli_settings(&[
        "qnmc",
        "run",
        "--target",
        "gaussian",
        "--sampler",
        "qnhmc",
        "--chains",
        "3",
        "--seed",
        "7",
        "--warmup",
        "300",
        "--draws",
        "40",
        "--thin",
        "2",
    ]);
    let built = Sampling::with_sampler(kind)
        .chains(3)
        .seed(7)
        .warmup(300)
        .draws(40)
        .thin(2);
    // QNHMC's memory freezes after half of the warm-up, as with --warmup.
    assert_eq!(built.run_settings().qnhmc_freeze_after, Some(150));
    assert_eq!(built.run_settings(), &cli);
}

/// `draws` with every wall time zeroed.
fn without_times(mut draws: RunDraws) -> RunDraws {
    for c in &mut draws.chains {
        c.warmup_seconds = 0.0;
        c.sampling_seconds = 0.0;
        c.lp_seconds = 0.0;
    }
    draws
}

/// The CLI's sampling (`qnmc run`'s code path) and the library's give the
/// same draws, bit for bit, for a sampler with a warm-up start (NUTS), a
/// plain one (HMC) and one with a pilot run (SGLD).
#[test]
fn the_cli_and_the_library_draw_the_same_bits() {
    let model = Funnel::new(3).unwrap();
    for sampler in ["nuts", "hmc", "sgld"] {
        let cli = Cli::try_parse_from([
            "qnmc",
            "run",
            "--target",
            "funnel",
            "--sampler",
            sampler,
            "--chains",
            "2",
            "--draws",
            "60",
            "--seed",
            "11",
            "--quiet",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            unreachable!()
        };
        let from_cli = crate::sample_for_tests(&model, &args.sampler).unwrap();
        let fit = Sampling::with_sampler(args.sampler.sampler)
            .chains(2)
            .draws(60)
            .seed(11)
            .run(&model)
            .unwrap();
        // Everything but the wall times, bit for bit (f64 == f64 on the
        // same bits; no NaN in these runs).
        let same = without_times(fit.draws) == without_times(from_cli);
        assert!(same, "{sampler}: the library's draws differ from the CLI's");
    }
}
