//! `qnmc`: the qnmc command-line tool (`qnmc --help`, `qnmc list`).

use std::process::ExitCode;

fn main() -> ExitCode {
    qnmc_cli::main_with_args(std::env::args_os())
}
