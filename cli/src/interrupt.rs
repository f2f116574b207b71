//! Ctrl-C and SIGTERM in `qnmc run`: the first SIGINT or SIGTERM asks every
//! chain to end at its next iteration ([`StopFlag`]) and says so on stderr;
//! the draws made so far are kept and written. A second SIGINT ends the
//! process at once (exit code 130), for a run that does not stop (a long
//! start, or the writing of the files).
//!
//! Only the command line installs this, and only `qnmc run` ([`install`]):
//! a program using the library gets no process-wide handler by surprise.
//! signal-hook does the signal-safe part (setting atomics, and the second
//! SIGINT's exit, inside the handler; the signals handed to a thread that
//! prints the message), so the crate keeps `#![deny(unsafe_code)]`.

use std::sync::OnceLock;

use qnmc_host::run::{StopFlag, StopReason};

/// What the first SIGINT prints on stderr.
pub(crate) const INTERRUPT_MESSAGE: &str =
    "interrupted: ending every chain at its next draw; press Ctrl-C again to quit at once";

/// What the first SIGTERM prints on stderr.
pub(crate) const TERMINATE_MESSAGE: &str = "terminated: ending every chain at its next draw";

/// The flag the handlers set, once installed.
static INSTALLED: OnceLock<StopFlag> = OnceLock::new();

/// The flag that stops `qnmc run`'s chains: the one the signal handlers set
/// once [`install`] ran, else a flag nothing sets (`qnmc check`, `demo`).
pub(crate) fn stop_flag() -> StopFlag {
    INSTALLED.get().cloned().unwrap_or_default()
}

/// Installs the SIGINT and SIGTERM handling (once per process; later calls
/// return the same flag). Where the handlers cannot be installed (not a
/// Unix, or the system refused), the signals keep their default action and
/// the run is not told: a warning says so.
pub(crate) fn install() -> StopFlag {
    INSTALLED
        .get_or_init(|| {
            let flag = StopFlag::new();
            if let Err(e) = handle_signals(&flag) {
                eprintln!("warning: Ctrl-C will end qnmc at once, without its draws: {e}");
            }
            flag
        })
        .clone()
}

#[cfg(unix)]
fn handle_signals(flag: &StopFlag) -> std::io::Result<()> {
    use std::io::IsTerminal;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::iterator::Signals;

    // Set by the first SIGINT or SIGTERM; a SIGINT that finds it set exits.
    // The exit is registered first so that the first signal only arms it.
    let armed = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register_conditional_shutdown(SIGINT, 130, Arc::clone(&armed))?;
    signal_hook::flag::register(SIGINT, Arc::clone(&armed))?;
    signal_hook::flag::register(SIGTERM, Arc::clone(&armed))?;
    let mut signals = Signals::new([SIGINT, SIGTERM])?;
    let flag = flag.clone();
    std::thread::Builder::new()
        .name("qnmc-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                let (reason, message) = if signal == SIGTERM {
                    (StopReason::Terminate, TERMINATE_MESSAGE)
                } else {
                    (StopReason::Interrupt, INTERRUPT_MESSAGE)
                };
                if flag.request(reason) {
                    // On a terminal, after the progress bar's line.
                    let newline = if std::io::stderr().is_terminal() {
                        "\n"
                    } else {
                        ""
                    };
                    eprintln!("{newline}{message}");
                }
            }
        })?;
    Ok(())
}

#[cfg(not(unix))]
fn handle_signals(_flag: &StopFlag) -> std::io::Result<()> {
    Err(std::io::Error::other(
        "signal handling is implemented for Unix only",
    ))
}
