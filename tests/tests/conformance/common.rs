//! Helpers shared by the `bad_input` modules.

use std::panic::{AssertUnwindSafe, catch_unwind};

use qnmc::Error;

/// Runs `f`, failing the test with `what` if it panics.
pub fn no_panic<R>(what: &str, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => panic!("{what}: panicked"),
    }
}

/// Asserts `result` is `InvalidSetting` naming `setting`.
#[track_caller]
pub fn assert_invalid<V: std::fmt::Debug>(result: Result<V, Error>, setting: &str, case: &str) {
    match result {
        Err(Error::InvalidSetting { setting: got, .. }) => {
            assert_eq!(got, setting, "{case}: wrong setting name")
        }
        other => panic!("{case}: expected InvalidSetting({setting}), got {other:?}"),
    }
}
