//! Where the shared data folder is: `shared/data` beside the repository
//! (`<repository>/../shared/data`), holding `logreg/` (Pima, Ripley)
//! and `posteriordb/`. It is not part of the repository
//! (docs/DATA.md, linked from the README, says what is in it and where each
//! file comes from); everything built in (German, Australian, Heart, the synthetic
//! targets) works without it.
//!
//! The folder is found from the repository, never from the current
//! directory ([`locate`]):
//!
//! 1. `--shared-data DIR` (the command line's explicit choice), else
//! 2. `$QNMC_SHARED_DATA` ([`DATA_ENV`]) when set, else
//! 3. `shared/data` beside the repository this binary was built from, else
//! 4. `shared/data` beside a repository that holds the running executable
//!    (a `target/` inside a moved checkout).
//!
//! A folder named by 1 or 2 must exist (no silent fallback); the error of a
//! failed search lists every place it looked.
//!
//! Tests that need the data call [`for_test`]: it returns the folder, or
//! prints one `skipped` line naming the folder and how to get it and returns
//! `None`; with `QNMC_REQUIRE_SHARED_DATA=1` ([`REQUIRE_ENV`], set by CI) a
//! missing folder fails the test instead.
//!
//! ```
//! use qnmc_host::shared_data::{Lookup, locate_in};
//! use std::path::Path;
//!
//! // An explicit folder that does not exist is an error naming it.
//! let lookup = Lookup { explicit: Some(Path::new("/no/such/folder")), ..Lookup::default() };
//! let err = locate_in(&lookup).unwrap_err();
//! assert!(err.to_string().contains("/no/such/folder"));
//! ```

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Environment variable naming the shared data folder (the one holding
/// `logreg/`, `posteriordb/`).
pub const DATA_ENV: &str = "QNMC_SHARED_DATA";

/// Environment variable that turns a test's "skipped: no shared data" into a
/// failure (any value but empty or `0`). CI (`.ci/run`) sets it.
pub const REQUIRE_ENV: &str = "QNMC_REQUIRE_SHARED_DATA";

/// How to get the folder, in one clause (docs/DATA.md has the details).
pub const HOW_TO_GET: &str = "get it: shared/data beside the repository, or QNMC_SHARED_DATA=DIR \
     (docs/DATA.md, linked from the README)";

/// Where to look (the inputs of [`locate_in`]).
#[derive(Debug, Clone, Default)]
pub struct Lookup<'a> {
    /// `--shared-data DIR`.
    pub explicit: Option<&'a Path>,
    /// The value of [`DATA_ENV`] when set and not empty.
    pub environment: Option<PathBuf>,
    /// Default places, in order, each with a few words saying what it is.
    pub defaults: Vec<(PathBuf, String)>,
}

/// The shared data folder was not found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotFound {
    /// Every place looked at, with what it is, in order.
    pub looked: Vec<(PathBuf, String)>,
}

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the shared data folder was not found; looked at ")?;
        for (i, (path, what)) in self.looked.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{} ({what})", path.display())?;
        }
        write!(f, "; {HOW_TO_GET}")
    }
}

impl std::error::Error for NotFound {}

/// The repository this crate was built from (the parent of `host/`).
pub fn repository() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .map_or_else(|| manifest.to_path_buf(), Path::to_path_buf)
}

/// `shared/data` beside `repository`.
fn beside(repository: &Path) -> PathBuf {
    repository.join("..").join("shared").join("data")
}

/// The default places, in order: beside the repository the binary was built
/// from, then beside any ancestor of the running executable that is a qnmc
/// checkout (has `Cargo.toml` and `host/Cargo.toml`).
pub fn default_places() -> Vec<(PathBuf, String)> {
    let built = repository();
    let mut places = vec![(
        beside(&built),
        format!("beside the repository {}", built.display()),
    )];
    if let Ok(exe) = std::env::current_exe() {
        for ancestor in exe.ancestors().skip(1) {
            if ancestor.join("Cargo.toml").is_file() && ancestor.join("host/Cargo.toml").is_file() {
                let place = beside(ancestor);
                if !places.iter().any(|(p, _)| *p == place) {
                    places.push((
                        place,
                        format!("beside the checkout {} holding qnmc", ancestor.display()),
                    ));
                }
                break;
            }
        }
    }
    places
}

/// The value of [`DATA_ENV`], when set and not empty.
pub fn environment() -> Option<PathBuf> {
    std::env::var_os(DATA_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Finds the folder from `lookup` (see the module docs for the order).
pub fn locate_in(lookup: &Lookup<'_>) -> Result<PathBuf, NotFound> {
    if let Some(dir) = lookup.explicit {
        return if dir.is_dir() {
            Ok(dir.to_path_buf())
        } else {
            Err(NotFound {
                looked: vec![(
                    dir.to_path_buf(),
                    "--shared-data: not an existing folder".to_string(),
                )],
            })
        };
    }
    if let Some(dir) = &lookup.environment {
        return if dir.is_dir() {
            Ok(dir.clone())
        } else {
            Err(NotFound {
                looked: vec![(dir.clone(), format!("{DATA_ENV}: not an existing folder"))],
            })
        };
    }
    for (dir, _) in &lookup.defaults {
        if dir.is_dir() {
            return Ok(dir.clone());
        }
    }
    Err(NotFound {
        looked: lookup.defaults.clone(),
    })
}

/// Finds the folder: `explicit` (`--shared-data`), else [`DATA_ENV`], else
/// the [`default_places`].
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, NotFound> {
    locate_in(&Lookup {
        explicit,
        environment: environment(),
        defaults: default_places(),
    })
}

/// Whether [`REQUIRE_ENV`] asks for data-dependent tests to fail rather than
/// skip.
pub fn required() -> bool {
    std::env::var_os(REQUIRE_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// For tests that need the data: the folder, or `None` after printing one
/// line `skipped <test>: …` naming where it looked and how to get the data.
/// The line goes straight to the process's stderr (not the test harness's
/// captured output), so `cargo test` shows it.
///
/// # Panics
///
/// When the folder is missing and [`REQUIRE_ENV`] is set (CI): a skip is then
/// a failure.
pub fn for_test(test: &str) -> Option<PathBuf> {
    match locate(None) {
        Ok(dir) => Some(dir),
        Err(e) => {
            assert!(!required(), "{test}: {e} ({REQUIRE_ENV} is set)");
            let _ = writeln!(std::io::stderr(), "skipped {test}: {e}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("qnmc-shared-data-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn explicit_then_environment_then_defaults_in_order() {
        let root = scratch("order");
        let (a, b, c) = (root.join("a"), root.join("b"), root.join("c"));
        for d in [&a, &b, &c] {
            std::fs::create_dir_all(d).unwrap();
        }
        let missing = root.join("missing");
        let defaults = vec![
            (missing.clone(), "first default".to_string()),
            (c.clone(), "second default".to_string()),
        ];
        let mut lookup = Lookup {
            explicit: Some(&a),
            environment: Some(b.clone()),
            defaults: defaults.clone(),
        };
        assert_eq!(locate_in(&lookup).unwrap(), a);
        lookup.explicit = None;
        assert_eq!(locate_in(&lookup).unwrap(), b);
        lookup.environment = None;
        assert_eq!(locate_in(&lookup).unwrap(), c);
        // A named folder that does not exist is an error, not a fallback.
        lookup.environment = Some(missing.clone());
        let err = locate_in(&lookup).unwrap_err().to_string();
        assert!(err.contains(&missing.display().to_string()), "{err}");
        assert!(err.contains(DATA_ENV), "{err}");
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_failed_search_lists_every_place_and_how_to_get_the_data() {
        let root = scratch("none");
        let lookup = Lookup {
            explicit: None,
            environment: None,
            defaults: vec![
                (root.join("x"), "beside the repository R".to_string()),
                (root.join("y"), "beside the checkout C".to_string()),
            ],
        };
        let err = locate_in(&lookup).unwrap_err().to_string();
        assert!(
            err.contains(&root.join("x").display().to_string())
                && err.contains(&root.join("y").display().to_string()),
            "{err}"
        );
        assert!(err.contains("beside the repository R"), "{err}");
        assert!(err.contains(DATA_ENV) && err.contains("DATA.md"), "{err}");
        assert!(!err.contains('\n'), "one line: {err}");
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn the_default_is_beside_the_repository_not_the_current_directory() {
        let places = default_places();
        let first = &places[0].0;
        assert_eq!(first, &repository().join("../shared/data"));
        assert!(repository().join("host/Cargo.toml").is_file());
    }
}
