//! Running means, variances and covariances (Welford's algorithm) in fixed
//! storage, for the metric estimators.

use crate::real::Real;

/// Running mean and variance of each coordinate.
#[derive(Debug, Clone)]
pub struct Welford<T, const D: usize> {
    count: u64,
    mean: [T; D],
    m2: [T; D],
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize] Welford<T, D> { count, mean, m2 });

impl<T: Real, const D: usize> Default for Welford<T, D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Real, const D: usize> Welford<T, D> {
    /// No observations.
    pub fn new() -> Self {
        Welford {
            count: 0,
            mean: [T::ZERO; D],
            m2: [T::ZERO; D],
        }
    }

    /// Forgets every observation.
    pub fn reset(&mut self) {
        crate::in_place::zero(self);
    }

    /// Adds one observation.
    pub fn add(&mut self, x: &[T; D]) {
        self.count = self.count.saturating_add(1);
        let n = T::from_u64(self.count);
        for i in 0..D {
            let delta = x[i] - self.mean[i];
            self.mean[i] += delta / n;
            self.m2[i] += delta * (x[i] - self.mean[i]);
        }
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The running mean.
    pub fn mean(&self) -> &[T; D] {
        &self.mean
    }

    /// Sample variance (n − 1 denominator) of coordinate `i`; 0 with fewer
    /// than two observations or `i` out of range.
    pub fn variance(&self, i: usize) -> T {
        if self.count < 2 || i >= D {
            return T::ZERO;
        }
        self.m2[i] / T::from_u64(self.count - 1)
    }
}

/// Running mean and covariance matrix (D² storage).
#[derive(Debug, Clone)]
pub struct WelfordCovariance<T, const D: usize> {
    count: u64,
    mean: [T; D],
    comoment: [[T; D]; D],
}

crate::in_place::zero_valid!(impl[T: Real, const D: usize] WelfordCovariance<T, D> { count, mean, comoment });

impl<T: Real, const D: usize> Default for WelfordCovariance<T, D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Real, const D: usize> WelfordCovariance<T, D> {
    /// No observations.
    pub fn new() -> Self {
        WelfordCovariance {
            count: 0,
            mean: [T::ZERO; D],
            comoment: [[T::ZERO; D]; D],
        }
    }

    /// Forgets every observation.
    pub fn reset(&mut self) {
        crate::in_place::zero(self);
    }

    /// Adds one observation.
    pub fn add(&mut self, x: &[T; D]) {
        self.count = self.count.saturating_add(1);
        let n = T::from_u64(self.count);
        let mut before = [T::ZERO; D];
        for i in 0..D {
            before[i] = x[i] - self.mean[i];
            self.mean[i] += before[i] / n;
        }
        for i in 0..D {
            let after_i = x[i] - self.mean[i];
            for j in 0..D {
                self.comoment[i][j] += after_i * before[j];
            }
        }
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Writes the sample covariance (n − 1 denominator, symmetrised); zeros
    /// with fewer than two observations.
    pub fn covariance(&self, out: &mut [[T; D]; D]) {
        let denominator = if self.count < 2 {
            T::ZERO
        } else {
            T::ONE / T::from_u64(self.count - 1)
        };
        for i in 0..D {
            for j in 0..D {
                out[i][j] = T::HALF * (self.comoment[i][j] + self.comoment[j][i]) * denominator;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the two-pass formulas on a small table (exact in binary).
    #[test]
    fn matches_two_pass_variance_and_covariance() {
        let xs = [[1.0f64, 2.0], [3.0, 1.0], [5.0, 7.0], [7.0, 2.0]];
        let mut w = Welford::<f64, 2>::new();
        let mut c = WelfordCovariance::<f64, 2>::new();
        for x in &xs {
            w.add(x);
            c.add(x);
        }
        // Means 4 and 3; variances 20/3 and 22/3; covariance 6/3 = 2.
        assert_eq!(w.mean(), &[4.0, 3.0]);
        assert!((w.variance(0) - 20.0 / 3.0).abs() < 1e-14);
        assert!((w.variance(1) - 22.0 / 3.0).abs() < 1e-14);
        let mut cov = [[0.0; 2]; 2];
        c.covariance(&mut cov);
        assert!((cov[0][0] - 20.0 / 3.0).abs() < 1e-14);
        assert!((cov[1][1] - 22.0 / 3.0).abs() < 1e-14);
        assert!((cov[0][1] - 2.0).abs() < 1e-14);
        assert_eq!(cov[0][1], cov[1][0]);
        assert_eq!(w.variance(5), 0.0);
    }
}
