//! A core [`Potential`] of compile-time dimension `D` as a run-time
//! [`Model`], so that what a `no_std` user wrote (a hand-written gradient, or
//! an `AutodiffModel` in `ForwardGradient`) runs with
//! [`Sampling`](crate::fit::Sampling) and the CLI's machinery.

use core::fmt;

use qnmc::Potential;

use super::Model;

/// `potential` as a [`Model`] named `name`, reporting its `D` coordinates as
/// they are (`x[1]`, …, `x[D]` unless [`with_names`](Self::with_names)
/// says otherwise), starting from the origin unless
/// [`with_initial_point`](Self::with_initial_point) gives a point.
///
/// The chains run in parallel and share the model, so the potential must be
/// `Send + Sync`: `ForwardGradient` of a plain model is; `ReverseGradient`
/// writes its tape through `&self` and is not: wrap it in
/// [`PerThread`](super::PerThread), which lends one to each chain.
///
/// ```
/// use qnmc::autodiff::{AutodiffModel, ForwardGradient};
/// use qnmc::Scalar;
/// use qnmc_host::model::{Model, PotentialModel};
///
/// /// N(1, 1) in both coordinates.
/// struct Shifted;
/// impl AutodiffModel<2> for Shifted {
///     fn potential<S: Scalar>(&self, x: &[S; 2]) -> S {
///         let one = S::from_f64(1.0);
///         S::from_f64(0.5) * ((x[0] - one) * (x[0] - one) + (x[1] - one) * (x[1] - one))
///     }
/// }
///
/// let model = PotentialModel::new("shifted", ForwardGradient::<_, 2>::new(Shifted))
///     .with_names(["a", "b"])
///     .unwrap();
/// let mut g = [0.0; 2];
/// assert_eq!(model.potential_and_gradient(&[1.0, 3.0], &mut g), 2.0);
/// assert_eq!(g, [0.0, 2.0]);
/// assert_eq!(model.output_names(), ["a", "b"]);
/// ```
#[derive(Debug, Clone)]
pub struct PotentialModel<P, const D: usize> {
    name: String,
    potential: P,
    names: Option<Vec<String>>,
    initial_point: [f64; D],
}

/// [`PotentialModel::with_names`] was given a number of names other than
/// the dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrongNameCount {
    /// The model's dimension.
    pub dimension: usize,
    /// The names given.
    pub names: usize,
}

impl fmt::Display for WrongNameCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} names given for a model of dimension {}",
            self.names, self.dimension
        )
    }
}

impl std::error::Error for WrongNameCount {}

impl<P, const D: usize> PotentialModel<P, D> {
    /// Wraps `potential` under `name` (the `target` of the output files).
    pub fn new(name: impl Into<String>, potential: P) -> Self {
        PotentialModel {
            name: name.into(),
            potential,
            names: None,
            initial_point: [0.0; D],
        }
    }

    /// Names the `D` coordinates in the output (Stan style: `mu`,
    /// `theta[1]`); an error unless exactly `D` names are given.
    pub fn with_names<S: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = S>,
    ) -> Result<Self, WrongNameCount> {
        let names: Vec<String> = names.into_iter().map(Into::into).collect();
        if names.len() != D {
            return Err(WrongNameCount {
                dimension: D,
                names: names.len(),
            });
        }
        self.names = Some(names);
        Ok(self)
    }

    /// The point the chains' starts are drawn around (the CLI's
    /// `--init-radius` jitter is added to it).
    pub fn with_initial_point(mut self, point: [f64; D]) -> Self {
        self.initial_point = point;
        self
    }

    /// The wrapped potential.
    pub fn potential(&self) -> &P {
        &self.potential
    }
}

impl<P: Potential<f64, D> + Send + Sync, const D: usize> Model for PotentialModel<P, D> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn dimension(&self) -> usize {
        D
    }

    /// U and ∇U of the potential; NaN (a rejected transition) if the slices
    /// are not of length `D`, which the samplers never do.
    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        match (
            <&[f64; D]>::try_from(x),
            <&mut [f64; D]>::try_from(gradient),
        ) {
            (Ok(x), Ok(gradient)) => self.potential.potential_and_gradient(x, gradient),
            _ => f64::NAN,
        }
    }

    fn output_names(&self) -> Vec<String> {
        match &self.names {
            Some(names) => names.clone(),
            None => (1..=D).map(|i| format!("x[{i}]")).collect(),
        }
    }

    fn initial_point(&self) -> Vec<f64> {
        self.initial_point.to_vec()
    }
}
