//! What each hand-written posteriordb density provides.

/// A posterior density on the unconstrained scale, with the map to the
/// quantities posteriordb's reference draws report.
pub(crate) trait Density: Send + Sync + std::fmt::Debug {
    /// Number of unconstrained coordinates.
    fn dimension(&self) -> usize;
    /// U = −log p(x) − log|J(x)| up to a constant, and ∇U.
    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64;
    /// Names of the reported quantities, as in the reference draws.
    fn output_names(&self) -> Vec<String>;
    /// The reported quantities at unconstrained `x`.
    fn constrain(&self, x: &[f64], out: &mut [f64]);
}

/// `name[1]`, …, `name[n]`.
pub(crate) fn indexed(name: &str, n: usize) -> impl Iterator<Item = String> + '_ {
    (1..=n).map(move |i| format!("{name}[{i}]"))
}
