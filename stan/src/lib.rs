//! Stan models through BridgeStan's C API: `qnmc run --model LIB.so`.
//!
//! A Stan model compiled to a shared library, by
//! [BridgeStan](https://roualdes.us/bridgestan/) or by the repository's
//! `stan/build-model.py` (offline, with the `httpstan` wheel), exports
//! `bs_model_construct`, `bs_log_density_gradient` and the other functions
//! of [`REQUIRED_SYMBOLS`]. [`StanModel::load`] opens such a library, builds
//! the model with its JSON data and runs it as a [`Model`](qnmc_host::model::Model):
//! U(θ) = −log p(θ | y) on the unconstrained scale, reported on the
//! constrained scale with Stan's names.
//!
//! Why not the `bridgestan` crate: it generates its bindings with `bindgen`
//! at build time, which needs libclang (not on a fresh machine, and not
//! otherwise needed by qnmc), and it requires every function of BridgeStan's
//! API and an exact BridgeStan version, so it would refuse a library from
//! qnmc's own build script. qnmc needs ten functions; it declares them here
//! and loads them with `libloading`.
//!
//! [`StanLibrary`] (`library.rs`) loads the library, resolves those
//! functions and `bs_param_unconstrain_json` when the library has it (for
//! `--init`), and never unloads it. [`StanModel`] (`model.rs`) is the
//! [`Model`](qnmc_host::model::Model) over it: U with `propto = 1, jacobian
//! = 1`, constrained output under Stan's names, a throw during sampling
//! counted as U = +∞, and [`StanModel::unconstrain_json`] and
//! [`StanModel::start_at`] for an init file. Every [`StanError`] names the
//! file at fault. Of the host the crate uses only `model` and `input` (the
//! data's SHA-256, `read_zipped_json` for `.json.zip` data, `quantity_name`
//! for Stan's column names).
//!
//! Those two files hold the workspace's only host-side `unsafe` code, the C
//! calls, each with a SAFETY comment; `qnmc-host` forbids `unsafe`. The
//! library itself is built by BridgeStan or by `stan/build-model.py` at the
//! repository root (stanc and the headers from the httpstan wheel, and our
//! glue `stan/qnmc_stan_glue.cpp`).
//!
//! ```no_run
//! use qnmc_host::model::Model;
//! use qnmc_stan::StanModel;
//! use std::path::Path;
//!
//! let model = StanModel::load(
//!     Path::new("eight_schools_noncentered_model.so"),
//!     Some(Path::new("eight_schools.json")),
//! )?;
//! assert_eq!(model.dimension(), 10);
//! let mut gradient = vec![0.0; 10];
//! let u = model.potential_and_gradient(&[0.0; 10], &mut gradient);
//! assert!(u.is_finite());
//! # Ok::<(), qnmc_stan::StanError>(())
//! ```
//!
//! Sampled as `qnmc run --model` samples it, with the library's
//! [`Sampling`](qnmc_host::fit::Sampling):
//!
//! ```no_run
//! use std::path::Path;
//!
//! use qnmc_host::fit::Sampling;
//! use qnmc_stan::StanModel;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let model = StanModel::load(
//!     Path::new("eight_schools_model.so"),
//!     Some(Path::new("eight_schools.json")),
//! )?;
//! let fit = Sampling::new().seed(1).run(&model)?;
//! print!("{}", fit.table());
//! for line in fit.health.lines() {
//!     eprintln!("{line}");
//! }
//! # Ok(())
//! # }
//! ```

// The crate's only unsafe code is the C calls of `library.rs` and
// `model.rs`, each with a SAFETY comment; those two files allow it.
#![deny(unsafe_code)]
#![deny(missing_docs)]
// At most 100 lines of code per function outside tests (clippy.toml), or
// an allow with its reason beside the function: scripts/size-limits.py.
#![warn(clippy::too_many_lines)]
#![cfg_attr(
    test,
    allow(clippy::too_many_lines, reason = "tests are not held to the limit")
)]

mod data_error;
mod library;
mod model;

use std::path::PathBuf;

pub use library::{REQUIRED_SYMBOLS, StanLibrary};
pub use model::{INITIAL_POINT_TRIES, StanModel};

/// Why a Stan model could not be used. Every variant names the file at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StanError {
    /// The library cannot be read or loaded, or lacks BridgeStan's functions.
    Library {
        /// The library given.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The data file cannot be read, is not JSON, or does not fit the model.
    Data {
        /// The data file given.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The model was built but cannot be sampled (no parameters, a log
    /// density that fails everywhere it was tried).
    Model {
        /// The library given.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

impl std::fmt::Display for StanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StanError::Library { path, message }
            | StanError::Data { path, message }
            | StanError::Model { path, message } => write!(f, "{}: {message}", path.display()),
        }
    }
}

impl std::error::Error for StanError {}
