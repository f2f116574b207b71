//! The `qnmc` command line: `run`, `plot`, `check`, `reproduce`, `demo`, `list`.
//!
//! Exit codes ([`EXIT_CODES`]): 0 success; 1 `check` failed; 2 usage or
//! input error (the message is printed as `error: …`, with
//! `FILE:LINE:COLUMN:` for bad data files); 3 `run` finished but
//! the draws are unusable (every transition divergent, a chain that never
//! moved, non-finite `lp__`); 4 `--strict` and the run has warnings; 5
//! `reproduce` skipped parts whose data were not found; 130 and 143 `run`
//! was stopped by SIGINT (Ctrl-C) or SIGTERM and kept its draws so far.
//!
//! This crate is the command line only: the chains, targets, output and
//! charts are the library `qnmc-host`, which the commands call (the library's
//! [`Sampling`](qnmc_host::fit::Sampling) and `qnmc run` share one code path).
//!
//! The options are declared in `args.rs` (clap derive) and each command has
//! its file: `run_command.rs`, `plot_command.rs` (a finished run's charts
//! from its folder), `check_command.rs`, `reproduce_command.rs`,
//! `demo_command.rs` (on [`demo`]) and `list_command.rs`. Beside them: the
//! `--target` catalogue (`targets.rs`); which options apply to which
//! sampler and target (`applicability.rs`); the signal handling, installed
//! for `run` only (`interrupt.rs`); the files and summary of the draws a
//! stopped run kept (`interrupted_run.rs`); `run --resume`, the stopped
//! run's recorded command run again from its checkpoints
//! (`resume_command.rs`); and the exit codes (`error.rs`). The binary is
//! `bin/qnmc.rs`.

#![deny(missing_docs)]
// At most 100 lines of code per function outside tests (clippy.toml), or
// an allow with its reason beside the function: scripts/size-limits.py.
#![warn(clippy::too_many_lines)]
#![cfg_attr(
    test,
    allow(clippy::too_many_lines, reason = "tests are not held to the limit")
)]
#![deny(unsafe_code)]

mod applicability;
mod args;
mod check_command;
pub mod demo;
mod demo_command;
mod error;
mod interrupt;
mod interrupted_run;
#[cfg(test)]
mod library_agreement;
mod list_command;
mod plot_command;
mod reproduce_command;
mod resume_command;
mod run_command;
mod targets;

use std::process::ExitCode;

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches};

pub use args::{
    CheckArgs, Cli, Command, DemoArgs, OutputArgs, PlotArgs, ReproduceArgs, RunArgs, SamplerArgs,
    TargetArgs,
};
pub use error::{
    CliError, EXIT_CHECK_FAILED, EXIT_INTERRUPTED, EXIT_SKIPPED, EXIT_TERMINATED, EXIT_UNUSABLE,
    EXIT_USAGE, EXIT_WARNINGS,
};

/// The exit codes, as `--help` prints them.
pub const EXIT_CODES: &str = "Exit codes: 0 success; 1 `check` failed; 2 usage or input error; \
3 the run finished but its draws are unusable (all transitions divergent, a chain that never \
moved, non-finite lp__, chains that sampled apart and never met); 4 --strict and the run has warnings; 5 `reproduce` skipped parts \
whose data were not found; 130 `run` stopped by Ctrl-C (SIGINT), 143 by SIGTERM, its draws so \
far kept (in --output DIR, marked INCOMPLETE).";
pub use targets::{TARGETS, build_target, shared_data_dir};

use qnmc_host::run::RunSettings;

/// Parses `args` (program name first) and runs the command; returns the
/// process exit code. Help and version print to stdout and return 0; clap's
/// usage errors print to stderr and return 2.
pub fn main_with_args<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    let cli = match parse(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(EXIT_USAGE)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match execute(&cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::CheckFailed) => ExitCode::from(EXIT_CHECK_FAILED),
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}

/// Parses `args` (program name first), filling what the parser does not:
/// the options given, the exact start of an init file, `run`'s command
/// line.
pub(crate) fn parse(args: &[std::ffi::OsString]) -> Result<Cli, clap::Error> {
    let matches = Cli::command().try_get_matches_from(args)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    if let Some((_, sub)) = matches.subcommand() {
        let given = given_options(sub);
        // An init file starts every chain at its point, as CmdStan's
        // init= does, unless --init-radius asks for a spread around it.
        let exact_init = |target: &TargetArgs| {
            target.init.is_some() && !given.iter().any(|g| g == "init_radius")
        };
        match &mut cli.command {
            Command::Run(a) => {
                if exact_init(&a.target) {
                    a.sampler.init_radius = 0.0;
                }
                a.given = given;
                a.command_line = args
                    .iter()
                    .skip(1)
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect();
            }
            Command::Check(a) => {
                if exact_init(&a.target) {
                    a.sampler.init_radius = 0.0;
                }
                a.given = given;
            }
            _ => {}
        }
    }
    Ok(cli)
}

/// The ids of the options given on the command line (not defaults).
fn given_options(matches: &ArgMatches) -> Vec<String> {
    matches
        .ids()
        .filter(|id| matches.value_source(id.as_str()) == Some(ValueSource::CommandLine))
        .map(|id| id.as_str().to_string())
        .collect()
}

/// Runs one parsed command.
pub fn execute(command: &Command) -> Result<(), CliError> {
    match command {
        Command::Run(a) => run_command::run(a),
        Command::Plot(a) => plot_command::plot(a),
        Command::Check(a) => check_command::check(a),
        Command::Reproduce(a) => reproduce_command::reproduce(a),
        Command::Demo(a) => demo_command::demo(a),
        Command::List => {
            print!("{}", list_command::listing());
            Ok(())
        }
    }
}

pub use qnmc_host::run::default_warmup;

/// `qnmc run`'s sampling of `model` (no progress bar), for the tests that
/// compare it with the library's.
#[cfg(test)]
pub(crate) fn sample_for_tests(
    model: &dyn qnmc_host::model::Model,
    sampler: &SamplerArgs,
) -> Result<qnmc_host::draws::RunDraws, CliError> {
    run_command::sample(model, sampler, true)
}

/// The run settings the sampler options describe.
pub fn run_settings(a: &SamplerArgs) -> RunSettings {
    let warmup = a.warmup.unwrap_or_else(|| default_warmup(a.sampler));
    RunSettings {
        chains: a.chains,
        seed: a.seed,
        warmup,
        draws: a.draws,
        thin: a.thin.unwrap_or(1),
        save_warmup: a.save_warmup,
        step_size: a.step_size,
        leapfrog_steps: a.leapfrog_steps,
        memory: a.memory,
        qnhmc_mass: a.mass,
        qnhmc_freeze_after: if a.adaptive_memory {
            None
        } else {
            Some(a.freeze_after.unwrap_or(warmup / 2))
        },
        hamcmc_decay: a.step_decay,
        gamma: a.gamma,
        batch_size: a.batch_size,
        friction: a.friction,
        sghmc_update: a.sghmc_update,
        target_acceptance: a.target_acceptance,
        init_radius: a.init_radius,
        metric: a.metric,
        max_tree_depth: a.max_tree_depth,
        early_end: a.early_end,
        window_covariance: !a.no_window_covariance,
        optimum_secants: !a.no_optimum_secants,
        // Checked (with its message) in `sample`.
        lp: qnmc_host::run::LpMode::from_words(&a.lp).ok(),
        pilot: None,
    }
}
