//! The five logistic-regression data sets of the papers.

use std::fmt;
use std::str::FromStr;

/// A data set of Girolami & Calderhead (RMHMC, 2011) and Zhang & Sutton
/// (2011); AMAGOLD uses Australian and Heart.
///
/// | data set | N | D | where it comes from |
/// |---|---|---|---|
/// | German | 1000 | 25 | built in (UCI Statlog, CC BY 4.0) |
/// | Australian | 690 | 15 | built in (UCI Statlog, CC BY 4.0) |
/// | Heart | 270 | 14 | built in (UCI Statlog, CC BY 4.0) |
/// | Pima | 532 | 8 | `Pima.tr.csv` + `Pima.te.csv` in a data directory (R package MASS, GPL: not shipped) |
/// | Ripley | 250 | 7 | `synth.tr.csv` in a data directory (R package MASS, GPL: not shipped) |
///
/// ```
/// use qnmc_host::targets::LogregDataset;
/// let d: LogregDataset = "pima".parse().unwrap();
/// assert_eq!(d, LogregDataset::Pima);
/// assert_eq!(d.name(), "pima");
/// assert_eq!(d.target_name(), "logreg-pima");
/// assert_eq!("logreg-heart".parse::<LogregDataset>().unwrap(), LogregDataset::Heart);
/// assert!("iris".parse::<LogregDataset>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogregDataset {
    /// German credit (Statlog), 24 covariates.
    German,
    /// Australian credit approval (Statlog), 14 covariates.
    Australian,
    /// Heart disease (Statlog), 13 covariates.
    Heart,
    /// Pima Indians diabetes (MASS `Pima.tr` + `Pima.te`), 7 covariates.
    Pima,
    /// Ripley's synthetic two-class data (MASS `synth.tr`), 2 covariates,
    /// cubic expansion.
    Ripley,
}

impl LogregDataset {
    /// All five, in the papers' table order.
    pub const ALL: [LogregDataset; 5] = [
        LogregDataset::Australian,
        LogregDataset::German,
        LogregDataset::Heart,
        LogregDataset::Pima,
        LogregDataset::Ripley,
    ];

    /// Lower-case name: `german`, `australian`, `heart`, `pima`, `ripley`.
    pub fn name(self) -> &'static str {
        match self {
            LogregDataset::German => "german",
            LogregDataset::Australian => "australian",
            LogregDataset::Heart => "heart",
            LogregDataset::Pima => "pima",
            LogregDataset::Ripley => "ripley",
        }
    }

    /// The `--target` name: `logreg-` and [`name`](Self::name).
    pub fn target_name(self) -> String {
        format!("logreg-{}", self.name())
    }

    /// Number of regression coefficients D (intercept included).
    pub fn dimension(self) -> usize {
        match self {
            LogregDataset::German => 25,
            LogregDataset::Australian => 15,
            LogregDataset::Heart => 14,
            LogregDataset::Pima => 8,
            LogregDataset::Ripley => 7,
        }
    }

    /// Number of observations N.
    pub fn observations(self) -> usize {
        match self {
            LogregDataset::German => 1000,
            LogregDataset::Australian => 690,
            LogregDataset::Heart => 270,
            LogregDataset::Pima => 532,
            LogregDataset::Ripley => 250,
        }
    }

    /// `true` for the data sets shipped inside the crate (German, Australian,
    /// Heart); Pima and Ripley are read from a directory.
    pub fn is_builtin(self) -> bool {
        matches!(
            self,
            LogregDataset::German | LogregDataset::Australian | LogregDataset::Heart
        )
    }
}

impl fmt::Display for LogregDataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The name given to [`LogregDataset::from_str`] is not a data set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownDataset(pub String);

impl fmt::Display for UnknownDataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown logistic-regression data set {:?}; known: german, australian, heart, pima, ripley",
            self.0
        )
    }
}

impl std::error::Error for UnknownDataset {}

impl FromStr for LogregDataset {
    type Err = UnknownDataset;

    /// Accepts the [`name`](LogregDataset::name), with or without the
    /// `logreg-` prefix, in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        let bare = lower.strip_prefix("logreg-").unwrap_or(&lower);
        LogregDataset::ALL
            .into_iter()
            .find(|d| d.name() == bare)
            .ok_or_else(|| UnknownDataset(s.to_owned()))
    }
}
