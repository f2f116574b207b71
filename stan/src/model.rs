//! [`StanModel`]: a model instance from a BridgeStan-compatible library,
//! run as a [`Model`].

#![allow(unsafe_code)]

use std::ffi::{CStr, CString, c_char, c_void};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rand_core::{Rng, SeedableRng};

use super::StanError;
use super::data_error::{missing_field_message, unread_field};
use super::library::StanLibrary;
use qnmc_host::input::quantity_name;
use qnmc_host::model::{Model, ModelRng};

/// Random starting points tried when the log density fails at the origin
/// (Stan tries 100 inits uniform on (−2, 2) before it gives up).
pub const INITIAL_POINT_TRIES: usize = 100;

/// One Stan model with its data: U(θ) = −log p(θ | data) on the
/// unconstrained scale, with the Jacobian of every constraining transform and
/// without constant terms (BridgeStan's `propto = 1, jacobian = 1`); draws
/// are reported on the constrained scale under Stan's names, parameters and
/// transformed parameters (generated quantities are not written).
///
/// A log density or gradient that throws during sampling (Stan's
/// `reject()`, a domain error in the tails) is U = +∞: the sampler rejects
/// that transition and counts it as divergent, as Stan's samplers do. The
/// number of such calls and the first message are kept
/// ([`exceptions`](Self::exceptions)).
pub struct StanModel {
    library: &'static StanLibrary,
    handle: NonNull<c_void>,
    name: String,
    dimension: usize,
    output_names: Vec<String>,
    initial_point: Vec<f64>,
    data_file: Option<(PathBuf, String)>,
    info: String,
    exceptions: AtomicU64,
    first_exception: Mutex<Option<String>>,
}

// SAFETY: BridgeStan's model functions may be called from several threads at
// once on one model (its documentation says so; qnmc's glue gives every
// thread its own autodiff stack), and the handle is only freed in `drop`.
unsafe impl Send for StanModel {}
// SAFETY: as for `Send`: every method takes the model as `const bs_model*`.
unsafe impl Sync for StanModel {}

impl std::fmt::Debug for StanModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StanModel")
            .field("library", &self.library.path())
            .field("name", &self.name)
            .field("dimension", &self.dimension)
            .finish_non_exhaustive()
    }
}

/// Reads `--data`: a JSON file, or posteriordb's one-entry `.json.zip`.
/// Returns the JSON text and its SHA-256.
fn read_data(path: &Path) -> Result<(String, String), StanError> {
    let fail = |message: String| StanError::Data {
        path: path.to_path_buf(),
        message,
    };
    let text = if path.extension().is_some_and(|e| e == "zip") {
        let value = qnmc_host::input::read_zipped_json(path).map_err(|e| fail(e.to_string()))?;
        value.to_string()
    } else {
        let text =
            std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read it: {e}")))?;
        // Checked here so a syntax error is placed at its line and column.
        serde_json::from_str::<serde_json::Value>(&text).map_err(|e| {
            fail(format!(
                "line {}, column {}: invalid JSON: {e}",
                e.line(),
                e.column()
            ))
        })?;
        text
    };
    let bytes = std::fs::read(path).map_err(|e| fail(format!("cannot read it: {e}")))?;
    let mut hash = qnmc_host::input::Sha256::new();
    hash.update(&bytes);
    Ok((text, hash.hex()))
}

/// A C string the library returned, as a Rust string (empty for null).
fn c_text(text: *const c_char) -> String {
    if text.is_null() {
        return String::new();
    }
    // SAFETY: BridgeStan returns NUL-terminated strings owned by the model.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

impl StanModel {
    /// Loads the library at `library` and builds its model with the data in
    /// `data` (a JSON file, `.json` or posteriordb's `.json.zip`; `None` for
    /// a model without data).
    ///
    /// Checked before it returns: the library exports BridgeStan's
    /// functions, the data fit the model, it has at least one parameter, and
    /// the log density and its gradient are finite at the origin of the
    /// unconstrained space or, failing that, at one of
    /// [`INITIAL_POINT_TRIES`] points uniform on (−2, 2) (that point becomes
    /// [`initial_point`](Model::initial_point)). Every error names the file.
    pub fn load(library: &Path, data: Option<&Path>) -> Result<Self, StanError> {
        // Loaded once per path per process and never unloaded (see
        // StanLibrary), so the reference lives for the rest of the process.
        let library: &'static StanLibrary = Box::leak(Box::new(StanLibrary::open(library)?));
        let fail = |message: String| StanError::Model {
            path: library.path().to_path_buf(),
            message,
        };
        let data_file = data.map(read_data).transpose()?;
        let data_text = data_file.as_ref().map_or("", |(text, _)| text.as_str());
        let data_c = CString::new(data_text).map_err(|_| StanError::Data {
            path: data.map(Path::to_path_buf).unwrap_or_default(),
            message: "the JSON contains a NUL byte".into(),
        })?;
        let mut error: *mut c_char = std::ptr::null_mut();
        // SAFETY: `data_c` is a NUL-terminated string that outlives the call;
        // `error` is a valid out-pointer.
        let raw = unsafe { (library.api.construct)(data_c.as_ptr(), 0, &mut error) };
        let Some(handle) = NonNull::new(raw) else {
            let message = library.take_error(error);
            return Err(match data {
                Some(path) => {
                    let stan = format!(
                        "model {} does not accept these data: {message}",
                        library.path().display()
                    );
                    let file_name = path.file_name().map_or_else(
                        || path.display().to_string(),
                        |n| n.to_string_lossy().into_owned(),
                    );
                    StanError::Data {
                        path: path.to_path_buf(),
                        message: match missing_field_message(&message, data_text, &file_name) {
                            // Stan's text stays, on the next line.
                            Some(words) => format!("{words}\n{stan}"),
                            None => stan,
                        },
                    }
                }
                None => fail(format!(
                    "the model cannot be built without data (give --data FILE.json): {message}"
                )),
            });
        };
        // From here `model` owns the handle and frees it on every error path.
        let mut model = StanModel {
            library,
            handle,
            name: String::new(),
            dimension: 0,
            output_names: Vec::new(),
            initial_point: Vec::new(),
            data_file: data
                .zip(data_file.map(|(_, hash)| hash))
                .map(|(p, h)| (p.to_path_buf(), h)),
            info: String::new(),
            exceptions: AtomicU64::new(0),
            first_exception: Mutex::new(None),
        };
        let api = library.api;
        let h = model.handle.as_ptr() as *const c_void;
        // SAFETY: `h` is a live model; the functions return counts and
        // strings owned by the model.
        let (name, info, unconstrained, reported, names) = unsafe {
            (
                c_text((api.name)(h)),
                c_text((api.info)(h)),
                (api.param_unc_num)(h),
                (api.param_num)(h, true, false),
                c_text((api.param_names)(h, true, false)),
            )
        };
        if unconstrained < 0 || reported < 0 {
            return Err(fail(format!(
                "the library reports {unconstrained} unconstrained and {reported} constrained parameters"
            )));
        }
        if unconstrained == 0 {
            return Err(fail(
                "the model has no parameters to sample (an empty parameters block)".into(),
            ));
        }
        let output_names: Vec<String> = names.split(',').map(quantity_name).collect();
        if output_names.len() != reported as usize {
            return Err(fail(format!(
                "bs_param_names gives {} names but bs_param_num says {reported}",
                output_names.len()
            )));
        }
        model.name = name;
        model.info = info;
        model.dimension = unconstrained as usize;
        model.output_names = output_names;
        model.initial_point = model.find_initial_point()?;
        Ok(model)
    }

    /// The unconstrained point of the constrained values in `json` (Stan's
    /// init format, what CmdStan's `init=FILE.json` reads: one entry per
    /// parameter, by name, a scalar or nested arrays), by the library's
    /// `bs_param_unconstrain_json`; `qnmc run --init` starts every chain
    /// there. The error says what the library said (a missing parameter, a
    /// value outside its constraint) or that the library lacks the function.
    pub fn unconstrain_json(&self, json: &str) -> Result<Vec<f64>, String> {
        let Some(unconstrain) = self.library.api.param_unconstrain_json else {
            return Err(format!(
                "{} does not export bs_param_unconstrain_json: build it again with \
                 stan/build-model.py or BridgeStan to start from an init file",
                self.library.path().display()
            ));
        };
        let text = CString::new(json).map_err(|_| "the init file holds a NUL byte".to_string())?;
        let mut point = vec![0.0; self.dimension];
        let mut error: *mut c_char = std::ptr::null_mut();
        // SAFETY: the model is live; `text` is NUL-terminated; `point` holds
        // `bs_param_unc_num(model)` values, which the function writes.
        let status = unsafe {
            unconstrain(
                self.handle.as_ptr(),
                text.as_ptr(),
                point.as_mut_ptr(),
                &mut error,
            )
        };
        if status != 0 {
            let message = self.library.take_error(error);
            // Stan's "mismatch in number dimensions … dims found=()" for a
            // parameter the init lacks, in words.
            let absent = unread_field(&message).filter(|field| {
                serde_json::from_str::<serde_json::Value>(json)
                    .ok()
                    .and_then(|v| v.as_object().map(|o| !o.contains_key(&field.name)))
                    .unwrap_or(false)
            });
            return Err(match absent {
                Some(field) => format!(
                    "parameter `{}` is missing from the init (the model declares it {})",
                    field.name, field.declared
                ),
                None => message,
            });
        }
        if let Some(i) = point.iter().position(|v| !v.is_finite()) {
            return Err(format!(
                "unconstrained coordinate {} of the init is not finite ({})",
                i + 1,
                point[i]
            ));
        }
        Ok(point)
    }

    /// Starts the chains at the unconstrained `point` (from
    /// [`unconstrain_json`](Self::unconstrain_json)) instead of the point
    /// [`load`](Self::load) found; an error unless it has the model's
    /// dimension and U and ∇U are finite there.
    pub fn start_at(mut self, point: Vec<f64>) -> Result<Self, String> {
        if point.len() != self.dimension {
            return Err(format!(
                "the init has {} unconstrained values, the model {}",
                point.len(),
                self.dimension
            ));
        }
        let mut g = vec![0.0; self.dimension];
        match self.evaluate(&point, &mut g) {
            Ok(u) if u.is_finite() && g.iter().all(|v| v.is_finite()) => {
                self.initial_point = point;
                Ok(self)
            }
            Ok(u) => Err(format!(
                "the log density is not finite at the init (U = {u}, or a non-finite gradient)"
            )),
            Err(message) => Err(format!("the log density threw at the init: {message}")),
        }
    }

    /// The origin if U and ∇U are finite there, else the first of
    /// [`INITIAL_POINT_TRIES`] points uniform on (−2, 2) where they are.
    fn find_initial_point(&self) -> Result<Vec<f64>, StanError> {
        let n = self.dimension;
        let mut x = vec![0.0; n];
        let mut g = vec![0.0; n];
        let mut rng = ModelRng::seed_from_u64(0x5354_414e);
        let mut first_failure = None;
        for attempt in 0..=INITIAL_POINT_TRIES {
            if attempt > 0 {
                for v in &mut x {
                    let u: f64 = qnmc::Real::uniform_open_closed(&mut rng);
                    *v = 4.0 * u - 2.0;
                }
            }
            match self.evaluate(&x, &mut g) {
                Ok(u) if u.is_finite() && g.iter().all(|v| v.is_finite()) => return Ok(x),
                Ok(u) => {
                    first_failure.get_or_insert_with(|| {
                        format!("U = {u} or a non-finite gradient at the origin")
                    });
                }
                Err(message) => {
                    first_failure.get_or_insert(message);
                }
            }
            let _ = rng.next_u64();
        }
        Err(StanError::Model {
            path: self.library.path().to_path_buf(),
            message: format!(
                "the log density is not finite at the origin nor at {INITIAL_POINT_TRIES} points \
                 uniform on (-2, 2) of the unconstrained space; first failure: {}",
                first_failure.unwrap_or_default()
            ),
        })
    }

    /// U(x) and ∇U(x), or the library's error message.
    fn evaluate(&self, x: &[f64], gradient: &mut [f64]) -> Result<f64, String> {
        debug_assert_eq!(x.len(), self.dimension);
        debug_assert_eq!(gradient.len(), self.dimension);
        let mut lp = 0.0;
        let mut error: *mut c_char = std::ptr::null_mut();
        // SAFETY: the model is live; `x` and `gradient` hold `dimension`
        // values (the Model trait's contract, checked in debug builds).
        let status = unsafe {
            (self.library.api.log_density_gradient)(
                self.handle.as_ptr(),
                true,
                true,
                x.as_ptr(),
                &mut lp,
                gradient.as_mut_ptr(),
                &mut error,
            )
        };
        if status != 0 {
            return Err(self.library.take_error(error));
        }
        for v in gradient.iter_mut() {
            *v = -*v;
        }
        Ok(-lp)
    }

    /// The path of the library.
    pub fn library_path(&self) -> &Path {
        self.library.path()
    }

    /// How many log-density evaluations threw so far, and the first message.
    pub fn exceptions(&self) -> (u64, Option<String>) {
        let count = self.exceptions.load(Ordering::Relaxed);
        let first = self.first_exception.lock().map_or(None, |m| m.clone());
        (count, first)
    }
}

impl Drop for StanModel {
    fn drop(&mut self) {
        // SAFETY: the handle came from bs_model_construct and is freed once.
        unsafe { (self.library.api.destruct)(self.handle.as_ptr()) }
    }
}

impl Model for StanModel {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        match self.evaluate(x, gradient) {
            Ok(u) => u,
            Err(message) => {
                if self.exceptions.fetch_add(1, Ordering::Relaxed) == 0 {
                    if let Ok(mut first) = self.first_exception.lock() {
                        first.get_or_insert(message);
                    }
                }
                gradient.fill(f64::NAN);
                f64::INFINITY
            }
        }
    }

    fn output_names(&self) -> Vec<String> {
        self.output_names.clone()
    }

    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        debug_assert_eq!(out.len(), self.output_names.len());
        let mut error: *mut c_char = std::ptr::null_mut();
        // SAFETY: the model is live; `x` holds `dimension` values and `out`
        // `bs_param_num(model, true, false)` (the Model trait's contract);
        // no generated quantities, so no RNG.
        let status = unsafe {
            (self.library.api.param_constrain)(
                self.handle.as_ptr(),
                true,
                false,
                x.as_ptr(),
                out.as_mut_ptr(),
                std::ptr::null_mut(),
                &mut error,
            )
        };
        if status != 0 {
            let _ = self.library.take_error(error);
            out.fill(f64::NAN);
        }
    }

    fn evaluation_failures(&self) -> Option<String> {
        match self.exceptions() {
            (0, _) => None,
            (n, first) => Some(format!(
                "the log density of {} threw in {n} evaluation{} (those transitions were \
                 rejected and count as divergent); the first: {}",
                self.library.path().display(),
                if n == 1 { "" } else { "s" },
                first.unwrap_or_default()
            )),
        }
    }

    fn initial_point(&self) -> Vec<f64> {
        self.initial_point.clone()
    }

    fn description(&self) -> Option<serde_json::Value> {
        let mut d = serde_json::json!({
            "kind": "stan",
            "library": self.library.path().display().to_string(),
            "model_name": self.name,
            "model_info": self.info,
            "unconstrained_dimension": self.dimension,
            "log_density": "BridgeStan log_density_gradient with propto = 1, jacobian = 1",
            "reported": "parameters and transformed parameters, constrained scale",
        });
        if let Some(v) = self.library.bridgestan_version() {
            d["bridgestan_version"] = v.into();
        }
        if let Some((path, hash)) = &self.data_file {
            d["data"] = serde_json::json!({
                "file": path.display().to_string(),
                "sha256": hash,
            });
        }
        Some(d)
    }
}
