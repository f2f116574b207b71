//! Posteriors of [posteriordb](https://github.com/stan-dev/posteriordb) with
//! their densities written by hand, and reference moments from posteriordb's
//! reference draws.
//!
//! The posterior database (models, data, reference draws) is © the
//! posteriordb authors, distributed under the BSD 3-Clause licence
//! (`LICENCE.md` beside `posterior_database/`); it is read at run time from a
//! directory the caller names (in this repository
//! `shared/data/posteriordb/posterior_database/`), not shipped in the crate.
//!
//! Each density is U = −log p on the unconstrained scale, positive parameters
//! sampled as their logarithm with the log-Jacobian added, exactly as Stan
//! does; the reported quantities are those of the reference draws, with the
//! same names.
//!
//! | target | posteriordb posterior | D | reported |
//! |---|---|---|---|
//! | `eight-schools` | eight_schools-eight_schools_noncentered | 10 | `theta[1]`…`theta[8]`, `mu`, `tau` |
//! | `sblrc-blr` | sblrc-blr | 6 | `beta[1]`…`beta[5]`, `sigma` |
//! | `ark` | arK-arK | 7 | `alpha`, `beta[1]`…`beta[5]`, `sigma` |

mod ark;
mod blr;
mod density;
mod eight_schools;
mod reference;

#[cfg(test)]
mod tests;

pub use reference::{ReferenceSummary, summarize_reference_draws};

use crate::input::InputError;
use crate::model::{KnownPosterior, Model};
use density::Density;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The posteriordb posteriors implemented here.
///
/// ```
/// use qnmc_host::targets::PosteriordbPosterior;
/// let p: PosteriordbPosterior = "eight-schools".parse().unwrap();
/// assert_eq!(p.posterior_name(), "eight_schools-eight_schools_noncentered");
/// assert_eq!("arK-arK".parse::<PosteriordbPosterior>().unwrap(), PosteriordbPosterior::ArK);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PosteriordbPosterior {
    /// eight_schools-eight_schools_noncentered (D = 10).
    EightSchoolsNoncentered,
    /// sblrc-blr: linear regression, N = 100, 5 coefficients and σ (D = 6).
    SblrcBlr,
    /// arK-arK: AR(5) time series, T = 200 (D = 7).
    ArK,
}

impl PosteriordbPosterior {
    /// All three.
    pub const ALL: [PosteriordbPosterior; 3] = [
        PosteriordbPosterior::EightSchoolsNoncentered,
        PosteriordbPosterior::SblrcBlr,
        PosteriordbPosterior::ArK,
    ];

    /// The `--target` name: `eight-schools`, `sblrc-blr`, `ark`.
    pub fn target_name(self) -> &'static str {
        match self {
            PosteriordbPosterior::EightSchoolsNoncentered => "eight-schools",
            PosteriordbPosterior::SblrcBlr => "sblrc-blr",
            PosteriordbPosterior::ArK => "ark",
        }
    }

    /// posteriordb's name of the posterior.
    pub fn posterior_name(self) -> &'static str {
        match self {
            PosteriordbPosterior::EightSchoolsNoncentered => {
                "eight_schools-eight_schools_noncentered"
            }
            PosteriordbPosterior::SblrcBlr => "sblrc-blr",
            PosteriordbPosterior::ArK => "arK-arK",
        }
    }

    /// posteriordb's name of the data.
    pub fn data_name(self) -> &'static str {
        match self {
            PosteriordbPosterior::EightSchoolsNoncentered => "eight_schools",
            PosteriordbPosterior::SblrcBlr => "sblrc",
            PosteriordbPosterior::ArK => "arK",
        }
    }

    /// Number of unconstrained parameters.
    pub fn dimension(self) -> usize {
        match self {
            PosteriordbPosterior::EightSchoolsNoncentered => 10,
            PosteriordbPosterior::SblrcBlr => 6,
            PosteriordbPosterior::ArK => 7,
        }
    }

    /// `root/data/data/DATA.json.zip`.
    pub fn data_path(self, root: &Path) -> PathBuf {
        root.join("data/data")
            .join(format!("{}.json.zip", self.data_name()))
    }

    /// The posterior's data as posteriordb stores them (`data_path`,
    /// unzipped and parsed): for code that builds the model again, e.g.
    /// written once for automatic differentiation
    /// (`tests/tests/operators/autodiff_gradients.rs`).
    pub fn read_data(self, root: &Path) -> Result<serde_json::Value, InputError> {
        crate::input::read_zipped_json(&self.data_path(root))
    }

    /// `root/reference_posteriors/draws/draws/POSTERIOR.json.zip`.
    pub fn draws_path(self, root: &Path) -> PathBuf {
        root.join("reference_posteriors/draws/draws")
            .join(format!("{}.json.zip", self.posterior_name()))
    }

    /// `root/reference_posteriors/summary_statistics/mean_value/mean_value/POSTERIOR.json`.
    pub fn mean_value_path(self, root: &Path) -> PathBuf {
        root.join("reference_posteriors/summary_statistics/mean_value/mean_value")
            .join(format!("{}.json", self.posterior_name()))
    }
}

impl fmt::Display for PosteriordbPosterior {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.target_name())
    }
}

/// The name given to [`PosteriordbPosterior::from_str`] is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPosterior(pub String);

impl fmt::Display for UnknownPosterior {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown posteriordb posterior {:?}; known: eight-schools, sblrc-blr, ark",
            self.0
        )
    }
}

impl std::error::Error for UnknownPosterior {}

impl FromStr for PosteriordbPosterior {
    type Err = UnknownPosterior;

    /// Accepts the target name or posteriordb's posterior name.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PosteriordbPosterior::ALL
            .into_iter()
            .find(|p| p.target_name() == s || p.posterior_name() == s)
            .ok_or_else(|| UnknownPosterior(s.to_owned()))
    }
}

/// A posteriordb posterior as a [`Model`]: hand-written U and ∇U on the
/// unconstrained scale, reported quantities named as in the reference draws,
/// and [`known_posterior`](Model::known_posterior) = mean and sd of each
/// quantity over the reference draws, with MCSEs from our own
/// [`mcse_mean`](crate::diagnostics::mcse_mean) and
/// [`mcse_sd`](crate::diagnostics::mcse_sd) on the chains.
///
/// ```no_run
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::Posteriordb;
/// use std::path::Path;
///
/// let root = Path::new("shared/data/posteriordb/posterior_database");
/// let model = Posteriordb::eight_schools(root)?;
/// assert_eq!(model.dimension(), 10);
/// assert_eq!(model.output_names()[9], "tau");
/// # Ok::<(), qnmc_host::input::InputError>(())
/// ```
#[derive(Debug)]
pub struct Posteriordb {
    posterior: PosteriordbPosterior,
    density: Box<dyn Density>,
    reference: KnownPosterior,
}

impl Posteriordb {
    /// Reads `posterior`'s data and reference draws from the posteriordb
    /// directory `root` (the one holding `data/`, `models/`,
    /// `reference_posteriors/`).
    pub fn load(posterior: PosteriordbPosterior, root: &Path) -> Result<Self, InputError> {
        let data_path = posterior.data_path(root);
        let data = crate::input::read_zipped_json(&data_path)?;
        let density: Box<dyn Density> = match posterior {
            PosteriordbPosterior::EightSchoolsNoncentered => {
                Box::new(eight_schools::EightSchools::from_data(&data, &data_path)?)
            }
            PosteriordbPosterior::SblrcBlr => {
                Box::new(blr::LinearRegression::from_data(&data, &data_path)?)
            }
            PosteriordbPosterior::ArK => {
                Box::new(ark::AutoRegression::from_data(&data, &data_path)?)
            }
        };
        let reference = reference::summarize_reference_draws(
            &posterior.draws_path(root),
            &density.output_names(),
        )?;
        Ok(Posteriordb {
            posterior,
            density,
            reference,
        })
    }

    /// eight_schools-eight_schools_noncentered (target `eight-schools`, D = 10).
    pub fn eight_schools(root: &Path) -> Result<Self, InputError> {
        Self::load(PosteriordbPosterior::EightSchoolsNoncentered, root)
    }

    /// sblrc-blr (target `sblrc-blr`, D = 6).
    pub fn sblrc_blr(root: &Path) -> Result<Self, InputError> {
        Self::load(PosteriordbPosterior::SblrcBlr, root)
    }

    /// arK-arK (target `ark`, D = 7).
    pub fn ark(root: &Path) -> Result<Self, InputError> {
        Self::load(PosteriordbPosterior::ArK, root)
    }

    /// Which posterior this is.
    pub fn posterior(&self) -> PosteriordbPosterior {
        self.posterior
    }

    /// The moments computed from the reference draws.
    pub fn reference(&self) -> &KnownPosterior {
        &self.reference
    }
}

impl Model for Posteriordb {
    fn name(&self) -> String {
        self.posterior.target_name().to_owned()
    }

    fn dimension(&self) -> usize {
        self.density.dimension()
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        self.density.potential_and_gradient(x, gradient)
    }

    fn output_names(&self) -> Vec<String> {
        self.density.output_names()
    }

    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        self.density.constrain(x, out);
    }

    fn known_posterior(&self) -> Option<KnownPosterior> {
        Some(self.reference.clone())
    }
}
