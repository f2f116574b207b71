//! Loading a shared library that exposes BridgeStan's C API, and the
//! function pointers qnmc calls.
//!
//! This file and [`super::model`] hold the host's only `unsafe` code: calls
//! through C function pointers. Each call states what it relies on.

#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::path::{Path, PathBuf};

use super::StanError;

/// `bs_model_construct(data, seed, &error) -> model`.
pub(super) type ConstructFn =
    unsafe extern "C" fn(*const c_char, c_uint, *mut *mut c_char) -> *mut c_void;
/// `bs_model_destruct(model)`.
pub(super) type DestructFn = unsafe extern "C" fn(*mut c_void);
/// `bs_free_error_msg(message)`.
pub(super) type FreeErrorFn = unsafe extern "C" fn(*mut c_char);
/// `bs_name(model)`, `bs_model_info(model)`.
pub(super) type ModelStringFn = unsafe extern "C" fn(*const c_void) -> *const c_char;
/// `bs_param_names(model, include_tp, include_gq)`.
pub(super) type NamesFn = unsafe extern "C" fn(*const c_void, bool, bool) -> *const c_char;
/// `bs_param_num(model, include_tp, include_gq)`.
pub(super) type NumFn = unsafe extern "C" fn(*const c_void, bool, bool) -> c_int;
/// `bs_param_unc_num(model)`.
pub(super) type UncNumFn = unsafe extern "C" fn(*const c_void) -> c_int;
/// `bs_param_constrain(model, include_tp, include_gq, theta_unc, theta, rng, &error)`.
pub(super) type ConstrainFn = unsafe extern "C" fn(
    *const c_void,
    bool,
    bool,
    *const f64,
    *mut f64,
    *mut c_void,
    *mut *mut c_char,
) -> c_int;
/// `bs_param_unconstrain_json(model, json, theta_unc, &error)`.
pub(super) type UnconstrainJsonFn =
    unsafe extern "C" fn(*const c_void, *const c_char, *mut f64, *mut *mut c_char) -> c_int;
/// `bs_log_density_gradient(model, propto, jacobian, theta_unc, &lp, grad, &error)`.
pub(super) type GradientFn = unsafe extern "C" fn(
    *const c_void,
    bool,
    bool,
    *const f64,
    *mut f64,
    *mut f64,
    *mut *mut c_char,
) -> c_int;

/// The BridgeStan functions qnmc calls, resolved from one library.
#[derive(Clone, Copy)]
pub(super) struct Api {
    pub construct: ConstructFn,
    pub destruct: DestructFn,
    pub free_error: FreeErrorFn,
    pub name: ModelStringFn,
    pub info: ModelStringFn,
    pub param_names: NamesFn,
    pub param_num: NumFn,
    pub param_unc_num: UncNumFn,
    pub param_constrain: ConstrainFn,
    pub log_density_gradient: GradientFn,
    /// Optional: only `--init` needs it, and libraries built by qnmc's glue
    /// before it exported the function lack it.
    pub param_unconstrain_json: Option<UnconstrainJsonFn>,
}

/// The symbols a model library must export (BridgeStan's names).
pub const REQUIRED_SYMBOLS: [&str; 10] = [
    "bs_model_construct",
    "bs_model_destruct",
    "bs_free_error_msg",
    "bs_name",
    "bs_model_info",
    "bs_param_names",
    "bs_param_num",
    "bs_param_unc_num",
    "bs_param_constrain",
    "bs_log_density_gradient",
];

/// How many bytes of a `--model` file [`not_a_library`] looks at.
const HEAD_BYTES: usize = 4096;

/// The first [`HEAD_BYTES`] bytes of the file (fewer if it is shorter).
fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(HEAD_BYTES);
    std::fs::File::open(path)?
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)?;
    Ok(head)
}

/// How to compile a Stan model into a library `--model` loads, for a
/// `source` file (docs/CLI.md, "Your own Stan model").
fn compile_hint(source: &Path) -> String {
    let stem = source
        .file_stem()
        .map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned());
    let library = source.with_file_name(format!("{stem}_model.so"));
    format!(
        "compile it first, offline with the repository's script: \
         `pip install httpstan==4.13.0`, then `python3 stan/build-model.py {}` \
         (writes {}), or with BridgeStan's `make {}`; then pass that library to \
         --model (docs/CLI.md, \"Your own Stan model\")",
        source.display(),
        library.display(),
        library.display()
    )
}

/// Why the file at `path`, whose first bytes are `head`, is not a model
/// library, when that is clear before the loader sees it: a `.stan` file,
/// or a text file (no NUL byte and valid UTF-8 in its first bytes, while
/// every shared library, ELF or Mach-O, has NUL bytes in its header, and an
/// ELF one starts with `\x7fELF`). `None`: left to the loader.
pub(super) fn not_a_library(path: &Path, head: &[u8]) -> Option<String> {
    let stan_extension = path.extension().is_some_and(|e| e == "stan");
    let elf = head.starts_with(b"\x7fELF");
    // A cut in the middle of a multi-byte character at the end is still text.
    let utf8 = match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    };
    let text = !elf && !head.contains(&0) && utf8;
    if stan_extension && !elf {
        Some(format!(
            "this is Stan source, not a compiled model library: --model takes a Stan \
             model compiled to a shared library; {}",
            compile_hint(path)
        ))
    } else if text {
        Some(format!(
            "this is a text file (Stan source?), not a compiled model library: --model \
             takes a Stan model compiled to a shared library; for a .stan file, {}",
            compile_hint(&path.with_extension("stan"))
        ))
    } else {
        None
    }
}

/// A loaded model library. It stays loaded until the process ends: Stan's
/// libraries start TBB threads and keep thread-local state, which makes
/// unloading unsafe (BridgeStan says the same).
pub struct StanLibrary {
    path: PathBuf,
    pub(super) api: Api,
    /// `bs_major_version.bs_minor_version.bs_patch_version` when the library
    /// exports them (BridgeStan does; qnmc's own glue does not).
    bridgestan_version: Option<String>,
}

impl std::fmt::Debug for StanLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StanLibrary")
            .field("path", &self.path)
            .field("bridgestan_version", &self.bridgestan_version)
            .finish_non_exhaustive()
    }
}

impl StanLibrary {
    /// Loads the library at `path` and resolves [`REQUIRED_SYMBOLS`].
    ///
    /// A relative path is taken from the current directory (never searched
    /// for on the system's library path).
    pub fn open(path: &Path) -> Result<Self, StanError> {
        let fail = |message: String| StanError::Library {
            path: path.to_path_buf(),
            message,
        };
        let metadata = std::fs::metadata(path).map_err(|e| fail(format!("cannot read it: {e}")))?;
        if !metadata.is_file() {
            return Err(fail("not a file".into()));
        }
        let head = read_head(path).map_err(|e| fail(format!("cannot read it: {e}")))?;
        if let Some(message) = not_a_library(path, &head) {
            return Err(fail(message));
        }
        // dlopen searches the library path for a name without a slash.
        let absolute = std::path::absolute(path).map_err(|e| fail(e.to_string()))?;
        // SAFETY: loading a library runs its initialisers. That is what the
        // user asked for by naming it; a Stan model's initialisers only set
        // up static data.
        let library = unsafe { libloading::Library::new(&absolute) }
            .map_err(|e| fail(format!("cannot load it as a shared library: {e}")))?;
        let missing: Vec<&str> = REQUIRED_SYMBOLS
            .iter()
            .copied()
            .filter(|s| {
                // SAFETY: only the symbol's presence is looked at here.
                unsafe { library.get::<*const c_void>(s.as_bytes()) }.is_err()
            })
            .collect();
        if !missing.is_empty() {
            return Err(fail(format!(
                "not a Stan model library built by BridgeStan or stan/build-model.py: \
                 it does not export {}",
                missing.join(", ")
            )));
        }
        // SAFETY: each symbol is one of BridgeStan's functions, whose C
        // signature is the type it is read as (bridgestan.h).
        let api = unsafe {
            Api {
                construct: *library
                    .get(b"bs_model_construct")
                    .map_err(|e| fail(e.to_string()))?,
                destruct: *library
                    .get(b"bs_model_destruct")
                    .map_err(|e| fail(e.to_string()))?,
                free_error: *library
                    .get(b"bs_free_error_msg")
                    .map_err(|e| fail(e.to_string()))?,
                name: *library.get(b"bs_name").map_err(|e| fail(e.to_string()))?,
                info: *library
                    .get(b"bs_model_info")
                    .map_err(|e| fail(e.to_string()))?,
                param_names: *library
                    .get(b"bs_param_names")
                    .map_err(|e| fail(e.to_string()))?,
                param_num: *library
                    .get(b"bs_param_num")
                    .map_err(|e| fail(e.to_string()))?,
                param_unc_num: *library
                    .get(b"bs_param_unc_num")
                    .map_err(|e| fail(e.to_string()))?,
                param_constrain: *library
                    .get(b"bs_param_constrain")
                    .map_err(|e| fail(e.to_string()))?,
                log_density_gradient: *library
                    .get(b"bs_log_density_gradient")
                    .map_err(|e| fail(e.to_string()))?,
                param_unconstrain_json: library
                    .get::<UnconstrainJsonFn>(b"bs_param_unconstrain_json")
                    .ok()
                    .map(|f| *f),
            }
        };
        let version = |symbol: &[u8]| -> Option<c_int> {
            // SAFETY: BridgeStan exports its version numbers as `const int`.
            unsafe { library.get::<*const c_int>(symbol).ok().map(|p| **p) }
        };
        let bridgestan_version = match (
            version(b"bs_major_version"),
            version(b"bs_minor_version"),
            version(b"bs_patch_version"),
        ) {
            (Some(a), Some(b), Some(c)) => Some(format!("{a}.{b}.{c}")),
            _ => None,
        };
        // Never unloaded (see the type's docs): the function pointers above
        // stay valid for the life of the process.
        std::mem::forget(library);
        Ok(StanLibrary {
            path: path.to_path_buf(),
            api,
            bridgestan_version,
        })
    }

    /// The path the library was loaded from, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// BridgeStan's version numbers when the library exports them.
    pub fn bridgestan_version(&self) -> Option<&str> {
        self.bridgestan_version.as_deref()
    }

    /// Takes a message the library allocated (may be null) and frees it.
    pub(super) fn take_error(&self, message: *mut c_char) -> String {
        if message.is_null() {
            return "(the library gave no message)".into();
        }
        // SAFETY: a non-null error message is a NUL-terminated string the
        // library allocated for us to free with bs_free_error_msg, once.
        unsafe {
            let text = CStr::from_ptr(message).to_string_lossy().into_owned();
            (self.api.free_error)(message);
            text
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "data {\n  int<lower=0> N;\n  vector[N] y;\n}\nparameters {\n  real mu;\n}\nmodel {\n  y ~ normal(mu, 1);\n}\n";

    #[test]
    fn stan_source_is_named_with_the_compile_command() {
        let m = not_a_library(Path::new("dir/eight.stan"), SOURCE.as_bytes()).unwrap();
        assert!(m.starts_with("this is Stan source"), "{m}");
        assert!(
            m.contains("`python3 stan/build-model.py dir/eight.stan` (writes dir/eight_model.so)"),
            "{m}"
        );
        assert!(m.contains("pip install httpstan==4.13.0"), "{m}");
        assert!(m.contains("`make dir/eight_model.so`"), "{m}");
    }

    #[test]
    fn a_text_file_without_the_extension_is_refused_too() {
        let m = not_a_library(Path::new("model"), SOURCE.as_bytes()).unwrap();
        assert!(m.starts_with("this is a text file (Stan source?)"), "{m}");
        assert!(m.contains("python3 stan/build-model.py model.stan"), "{m}");
        // An empty file is text too.
        assert!(not_a_library(Path::new("empty.so"), b"").is_some());
    }

    #[test]
    fn binary_files_are_left_to_the_loader() {
        // An ELF header (truncated), even named .stan by mistake.
        let elf = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0";
        assert_eq!(not_a_library(Path::new("lib_model.so"), elf), None);
        assert_eq!(not_a_library(Path::new("odd.stan"), elf), None);
        // A Mach-O header: NUL bytes, so not text.
        let macho = b"\xcf\xfa\xed\xfe\x07\0\0\x01";
        assert_eq!(not_a_library(Path::new("lib_model.dylib"), macho), None);
    }
}
