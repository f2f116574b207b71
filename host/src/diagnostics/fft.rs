//! A small in-place radix-2 complex FFT, enough for autocovariances.
//!
//! Iterative Cooley–Tukey with a bit-reversal permutation. The twiddle factors
//! are computed once per transform, each directly from its angle (no
//! recurrence), so the round-off stays at the O(ε log n) level of the
//! butterflies themselves.

use std::f64::consts::PI;

/// A complex number as (real, imaginary).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Complex {
    pub(crate) re: f64,
    pub(crate) im: f64,
}

impl Complex {
    fn mul(self, other: Self) -> Self {
        Self {
            re: self.re * other.re - self.im * other.im,
            im: self.re * other.im + self.im * other.re,
        }
    }
}

/// Direction of a transform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// X_k = Σ_j x_j e^{−2πi jk/n}.
    Forward,
    /// x_j = Σ_k X_k e^{+2πi jk/n} (unnormalised: divide by n yourself).
    Inverse,
}

/// Transforms `data` in place; its length must be a power of two (or 0/1).
pub(crate) fn fft_in_place(data: &mut [Complex], direction: Direction) {
    let n = data.len();
    if n <= 1 {
        return;
    }
    assert!(n.is_power_of_two(), "FFT length {n} is not a power of two");

    // Bit-reversal permutation.
    let bits = n.trailing_zeros();
    for i in 0..n {
        let j = i.reverse_bits() >> (usize::BITS - bits);
        if j > i {
            data.swap(i, j);
        }
    }

    // Twiddles w_k = e^{∓2πi k/n}, k < n/2.
    let sign = match direction {
        Direction::Forward => -1.0,
        Direction::Inverse => 1.0,
    };
    let twiddles: Vec<Complex> = (0..n / 2)
        .map(|k| {
            let (s, c) = (2.0 * PI * k as f64 / n as f64).sin_cos();
            Complex {
                re: c,
                im: sign * s,
            }
        })
        .collect();

    let mut len = 2;
    while len <= n {
        let half = len / 2;
        let stride = n / len;
        for start in (0..n).step_by(len) {
            for k in 0..half {
                let w = twiddles[k * stride];
                let a = data[start + k];
                let b = data[start + k + half].mul(w);
                data[start + k] = Complex {
                    re: a.re + b.re,
                    im: a.im + b.im,
                };
                data[start + k + half] = Complex {
                    re: a.re - b.re,
                    im: a.im - b.im,
                };
            }
        }
        len *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_dft(x: &[Complex]) -> Vec<Complex> {
        let n = x.len();
        (0..n)
            .map(|k| {
                let mut acc = Complex::default();
                for (j, v) in x.iter().enumerate() {
                    let (s, c) = (-2.0 * PI * (j * k) as f64 / n as f64).sin_cos();
                    let p = v.mul(Complex { re: c, im: s });
                    acc.re += p.re;
                    acc.im += p.im;
                }
                acc
            })
            .collect()
    }

    #[test]
    fn matches_naive_dft_and_inverts() {
        let x: Vec<Complex> = (0..16)
            .map(|i| Complex {
                re: ((i * 7 % 11) as f64) - 5.0,
                im: ((i * 3 % 5) as f64) * 0.25,
            })
            .collect();
        let mut y = x.clone();
        fft_in_place(&mut y, Direction::Forward);
        for (a, b) in y.iter().zip(naive_dft(&x)) {
            assert!((a.re - b.re).abs() < 1e-12 && (a.im - b.im).abs() < 1e-12);
        }
        fft_in_place(&mut y, Direction::Inverse);
        for (a, b) in y.iter().zip(&x) {
            assert!((a.re / 16.0 - b.re).abs() < 1e-14 && (a.im / 16.0 - b.im).abs() < 1e-14);
        }
    }

    #[test]
    fn impulse_transforms_to_constant() {
        let mut x = vec![Complex::default(); 8];
        x[0].re = 1.0;
        fft_in_place(&mut x, Direction::Forward);
        assert!(x.iter().all(|c| c.re == 1.0 && c.im == 0.0));
    }
}
