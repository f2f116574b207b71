//! Helpers shared by the CLI integration tests: run the `qnmc` binary, make a
//! scratch folder.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs `qnmc args…` in `dir`: (exit code, stdout, stderr).
pub fn qnmc(args: &[&str], dir: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_qnmc"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the qnmc binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// An empty folder under the system's temporary folder, unique to this
/// process, `group` and `name`.
pub fn scratch(group: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("qnmc-{group}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The command `qnmc args…` with its output streams piped, to be spawned
/// (and signalled) or run.
pub fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_qnmc"));
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}
