//! The host build: the same jobs as a plain program.

/// Shown in the log: the target triple (set by build.rs).
pub const NAME: &str = env!("QNMC_TARGET");

struct Stdout;

impl core::fmt::Write for Stdout {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        use std::io::Write as _;
        std::io::stdout()
            .write_all(s.as_bytes())
            .map_err(|_| core::fmt::Error)
    }
}

/// The stack is not measured on the host.
pub fn repaint_stack() {}

/// The stack is not measured on the host: `(0, 0)`.
pub fn peak_stack() -> (usize, usize) {
    (0, 0)
}

/// Runs the jobs and exits with 0 only if every check passed.
pub fn main() {
    let (ok, _) = super::run(&mut Stdout);
    println!("result: {}", if ok { "PASS" } else { "FAIL" });
    std::process::exit(if ok { 0 } else { 1 });
}
