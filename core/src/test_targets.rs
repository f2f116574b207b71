//! Targets shared by the core's unit tests.

use crate::target::Potential;

/// Variances of [`Scales`]: ten orders of magnitude apart.
pub(crate) const VARIANCES: [f64; 3] = [1e-6, 1.0, 1e4];

/// Independent normals with variances 10⁻⁶, 1 and 10⁴.
pub(crate) struct Scales;

impl Potential<f64, 3> for Scales {
    fn potential_and_gradient(&self, x: &[f64; 3], g: &mut [f64; 3]) -> f64 {
        let mut u = 0.0;
        for i in 0..3 {
            g[i] = x[i] / VARIANCES[i];
            u += 0.5 * x[i] * g[i];
        }
        u
    }
}
