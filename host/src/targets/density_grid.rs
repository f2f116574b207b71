//! Densities on a regular grid: exact cell probabilities by quadrature,
//! histograms of draws, and the divergences between the two that the toy
//! reproductions report.
//!
//! ```
//! use qnmc_host::targets::DensityGrid;
//! // N(0, 1) on [−6, 6] in 24 cells.
//! let grid = DensityGrid::new([-6.0], [6.0], [24]).unwrap();
//! let exact = grid.cell_probabilities(
//!     |x| (-0.5 * x[0] * x[0]).exp() / (2.0 * std::f64::consts::PI).sqrt(),
//!     20,
//! );
//! let total: f64 = exact.iter().sum();
//! assert!((total - 1.0).abs() < 1e-6);
//! assert_eq!(grid.cell_index(&[0.1]), Some(12));
//! assert_eq!(grid.cell_index(&[7.0]), None);
//! ```

/// A regular grid of cells on the box [lower, upper) in D dimensions, cells
/// numbered row-major (the last coordinate fastest).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DensityGrid<const D: usize> {
    lower: [f64; D],
    upper: [f64; D],
    bins: [usize; D],
}

/// Why a [`DensityGrid`] could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadGrid {
    /// The offending axis.
    pub axis: usize,
}

impl core::fmt::Display for BadGrid {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "grid axis {} needs finite bounds lower < upper and at least one bin",
            self.axis
        )
    }
}

impl std::error::Error for BadGrid {}

impl<const D: usize> DensityGrid<D> {
    /// A grid with `bins[i]` equal cells on `[lower[i], upper[i])`.
    pub fn new(lower: [f64; D], upper: [f64; D], bins: [usize; D]) -> Result<Self, BadGrid> {
        for axis in 0..D {
            let ok = lower[axis].is_finite()
                && upper[axis].is_finite()
                && lower[axis] < upper[axis]
                && bins[axis] > 0;
            if !ok {
                return Err(BadGrid { axis });
            }
        }
        Ok(DensityGrid { lower, upper, bins })
    }

    /// Number of cells.
    pub fn cell_count(&self) -> usize {
        self.bins.iter().product()
    }

    /// Width of a cell along each axis.
    pub fn cell_width(&self) -> [f64; D] {
        let mut w = [0.0; D];
        for i in 0..D {
            w[i] = (self.upper[i] - self.lower[i]) / self.bins[i] as f64;
        }
        w
    }

    /// The cell holding `x`, `None` outside the grid or for a non-finite `x`.
    pub fn cell_index(&self, x: &[f64; D]) -> Option<usize> {
        let w = self.cell_width();
        let mut index = 0;
        for i in 0..D {
            let b = ((x[i] - self.lower[i]) / w[i]).floor();
            if !(b >= 0.0 && b < self.bins[i] as f64) {
                return None;
            }
            index = index * self.bins[i] + b as usize;
        }
        Some(index)
    }

    /// The centre of cell `index`.
    pub fn cell_center(&self, index: usize) -> [f64; D] {
        let w = self.cell_width();
        let mut c = [0.0; D];
        let mut rest = index;
        for i in (0..D).rev() {
            let b = rest % self.bins[i];
            rest /= self.bins[i];
            c[i] = self.lower[i] + (b as f64 + 0.5) * w[i];
        }
        c
    }

    /// ∫ density over each cell by the midpoint rule on `points_per_axis`
    /// sub-points per axis (error O(h²) for a smooth density). Not renormalised:
    /// the sum is the mass inside the grid.
    pub fn cell_probabilities(
        &self,
        density: impl Fn(&[f64; D]) -> f64,
        points_per_axis: usize,
    ) -> Vec<f64> {
        let k = points_per_axis.max(1);
        let w = self.cell_width();
        let sub_volume: f64 = w.iter().map(|wi| wi / k as f64).product();
        let sub_points = k.pow(D as u32);
        (0..self.cell_count())
            .map(|cell| {
                let center = self.cell_center(cell);
                let mut mass = 0.0;
                for s in 0..sub_points {
                    let mut x = [0.0; D];
                    let mut rest = s;
                    for i in 0..D {
                        let j = rest % k;
                        rest /= k;
                        x[i] = center[i] - 0.5 * w[i] + (j as f64 + 0.5) * w[i] / k as f64;
                    }
                    mass += density(&x);
                }
                mass * sub_volume
            })
            .collect()
    }

    /// Counts of `draws` per cell, and the number that fell outside the grid
    /// (or were not finite).
    pub fn histogram<'a>(&self, draws: impl IntoIterator<Item = &'a [f64; D]>) -> Histogram {
        let mut counts = vec![0.0; self.cell_count()];
        let mut outside = 0.0;
        for x in draws {
            match self.cell_index(x) {
                Some(i) => counts[i] += 1.0,
                None => outside += 1.0,
            }
        }
        Histogram { counts, outside }
    }
}

/// Draws counted per cell of a [`DensityGrid`].
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    /// Count per cell.
    pub counts: Vec<f64>,
    /// Draws outside the grid or not finite.
    pub outside: f64,
}

impl Histogram {
    /// Total number of draws, outside ones included.
    pub fn total(&self) -> f64 {
        self.counts.iter().sum::<f64>() + self.outside
    }

    /// Cell probabilities with add-½ (Jeffreys) smoothing,
    /// (count + ½)/(n + ½·cells), so that no cell has probability 0 and a KL
    /// divergence stays finite. Draws outside the grid count in n: a chain that
    /// wanders off loses mass on the grid.
    pub fn smoothed_probabilities(&self) -> Vec<f64> {
        let n = self.total() + 0.5 * self.counts.len() as f64;
        self.counts.iter().map(|c| (c + 0.5) / n).collect()
    }
}

/// KL(p ‖ q) = Σ p log(p/q) over cells with p > 0 (both renormalised to sum 1
/// first). Infinite if some q = 0 where p > 0; NaN for empty or non-finite input.
pub fn kl_divergence(p: &[f64], q: &[f64]) -> f64 {
    let sp: f64 = p.iter().sum();
    let sq: f64 = q.iter().sum();
    let valid = p.len() == q.len() && sp > 0.0 && sq > 0.0 && sp.is_finite() && sq.is_finite();
    if !valid {
        return f64::NAN;
    }
    p.iter()
        .zip(q)
        .filter(|(pi, _)| **pi > 0.0)
        .map(|(pi, qi)| {
            let (a, b) = (pi / sp, qi / sq);
            a * (a / b).ln()
        })
        .sum()
}

/// Symmetric KL divergence KL(p ‖ q) + KL(q ‖ p), the AMAGOLD paper's measure.
pub fn symmetric_kl_divergence(p: &[f64], q: &[f64]) -> f64 {
    kl_divergence(p, q) + kl_divergence(q, p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cell indices and centres invert each other in 2-D (row-major).
    #[test]
    fn cell_index_and_center_agree() {
        let g = DensityGrid::new([-1.0, 0.0], [1.0, 3.0], [4, 3]).unwrap();
        assert_eq!(g.cell_count(), 12);
        for cell in 0..12 {
            assert_eq!(g.cell_index(&g.cell_center(cell)), Some(cell));
        }
        assert_eq!(g.cell_index(&[-0.9, 2.5]), Some(2));
        assert_eq!(g.cell_index(&[f64::NAN, 0.5]), None);
        assert!(DensityGrid::new([1.0], [1.0], [3]).is_err());
        assert!(DensityGrid::new([0.0], [1.0], [0]).is_err());
    }

    /// KL of a distribution with itself is 0, the symmetric KL is symmetric,
    /// and it matches the closed form for two Bernoulli-like vectors.
    #[test]
    fn divergences_match_closed_forms() {
        let p = [0.25, 0.75];
        let q = [0.5, 0.5];
        assert_eq!(kl_divergence(&p, &p), 0.0);
        let expected = 0.25 * (0.5f64).ln() + 0.75 * (1.5f64).ln();
        assert!((kl_divergence(&p, &q) - expected).abs() < 1e-15);
        assert_eq!(
            symmetric_kl_divergence(&p, &q),
            symmetric_kl_divergence(&q, &p)
        );
        assert!(kl_divergence(&[1.0], &[1.0, 2.0]).is_nan());
        assert!(kl_divergence(&q, &[1.0, 0.0]).is_infinite());
    }

    #[test]
    fn histogram_counts_outside_draws() {
        let g = DensityGrid::new([0.0], [2.0], [2]).unwrap();
        let draws = [[0.5], [1.5], [1.7], [3.0], [f64::INFINITY]];
        let h = g.histogram(&draws);
        assert_eq!(h.counts, vec![1.0, 2.0]);
        assert_eq!(h.outside, 2.0);
        let p = h.smoothed_probabilities();
        assert!((p[0] - 1.5 / 6.0).abs() < 1e-15 && (p[1] - 2.5 / 6.0).abs() < 1e-15);
    }
}
