//! A small in-place radix-2 complex FFT, enough for autocovariances.
//!
//! Iterative Cooley–Tukey with a bit-reversal permutation. The twiddle factors
//! are computed each directly from its angle (no recurrence), so the
//! round-off stays at the O(ε log n) level of the butterflies themselves, and
//! once per length and thread (they cost as much as the butterflies).

use std::cell::RefCell;
use std::f64::consts::PI;
use std::rc::Rc;

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

    let plan = plan(n, direction);
    // Bit-reversal permutation.
    for &(i, j) in &plan.swaps {
        data.swap(i, j);
    }
    let mut len = 2;
    for twiddles in &plan.stages {
        let half = len / 2;
        for block in data.chunks_exact_mut(len) {
            let (low, high) = block.split_at_mut(half);
            for ((a, b), &w) in low.iter_mut().zip(high.iter_mut()).zip(twiddles) {
                let x = *a;
                let y = b.mul(w);
                *a = Complex {
                    re: x.re + y.re,
                    im: x.im + y.im,
                };
                *b = Complex {
                    re: x.re - y.re,
                    im: x.im - y.im,
                };
            }
        }
        len *= 2;
    }
}

/// What a transform of length n in one direction needs besides the data.
struct Plan {
    n: usize,
    direction: Direction,
    /// The pairs (i, j), i < j, that the bit-reversal permutation swaps.
    swaps: Vec<(usize, usize)>,
    /// The twiddle factors stage by stage: for butterflies of length
    /// `len` = 2, 4, …, n the `len/2` factors
    /// w_k = e^{∓2πi k/len} = e^{∓2πi (k·n/len)/n}, each computed from the
    /// angle 2π·(k·n/len)/n.
    stages: Vec<Vec<Complex>>,
}

thread_local! {
    /// Plans made on this thread (a run's diagnostics use one or two
    /// lengths, so a short list suffices).
    static PLANS: RefCell<Vec<Rc<Plan>>> = const { RefCell::new(Vec::new()) };
}

/// The [`Plan`] for length `n` (a power of two ≥ 2), computed once per thread.
fn plan(n: usize, direction: Direction) -> Rc<Plan> {
    PLANS.with(|plans| {
        if let Some(p) = plans
            .borrow()
            .iter()
            .find(|p| p.n == n && p.direction == direction)
        {
            return Rc::clone(p);
        }
        let sign = match direction {
            Direction::Forward => -1.0,
            Direction::Inverse => 1.0,
        };
        // w_k = e^{∓2πi k/n}, k < n/2, each directly from its angle.
        let twiddles: Vec<Complex> = (0..n / 2)
            .map(|k| {
                let (s, c) = (2.0 * PI * k as f64 / n as f64).sin_cos();
                Complex {
                    re: c,
                    im: sign * s,
                }
            })
            .collect();
        let mut stages = Vec::new();
        let mut len = 2;
        while len <= n {
            let stride = n / len;
            stages.push((0..len / 2).map(|k| twiddles[k * stride]).collect());
            len *= 2;
        }
        let bits = n.trailing_zeros();
        let swaps = (0..n)
            .filter_map(|i| {
                let j = i.reverse_bits() >> (usize::BITS - bits);
                (j > i).then_some((i, j))
            })
            .collect();
        let p = Rc::new(Plan {
            n,
            direction,
            swaps,
            stages,
        });
        let mut plans = plans.borrow_mut();
        if plans.len() >= MAX_PLANS {
            plans.remove(0);
        }
        plans.push(Rc::clone(&p));
        p
    })
}

/// Plans kept per thread.
const MAX_PLANS: usize = 8;

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

    /// The transform as computed before plans were cached: twiddles made per
    /// call and indexed with a stride.
    fn unplanned(data: &mut [Complex], direction: Direction) {
        let n = data.len();
        let bits = n.trailing_zeros();
        for i in 0..n {
            let j = i.reverse_bits() >> (usize::BITS - bits);
            if j > i {
                data.swap(i, j);
            }
        }
        let sign = if direction == Direction::Forward {
            -1.0
        } else {
            1.0
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
            let (half, stride) = (len / 2, n / len);
            for start in (0..n).step_by(len) {
                for k in 0..half {
                    let a = data[start + k];
                    let b = data[start + k + half].mul(twiddles[k * stride]);
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

    #[test]
    fn cached_plans_give_the_same_bits() {
        let bits = |v: &[Complex]| -> Vec<(u64, u64)> {
            v.iter().map(|c| (c.re.to_bits(), c.im.to_bits())).collect()
        };
        let mut state = 3_u64;
        for log_n in 1..=11 {
            let n = 1 << log_n;
            let x: Vec<Complex> = (0..n)
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    Complex {
                        re: (state >> 11) as f64 / 9e15 - 0.5,
                        im: (state % 1000) as f64,
                    }
                })
                .collect();
            for direction in [Direction::Forward, Direction::Inverse] {
                let mut expected = x.clone();
                unplanned(&mut expected, direction);
                // Twice: the first call makes the plan, the second reuses it.
                for _ in 0..2 {
                    let mut got = x.clone();
                    fft_in_place(&mut got, direction);
                    assert_eq!(bits(&got), bits(&expected), "n = {n}, {direction:?}");
                }
            }
        }
        // More lengths than the cache keeps still give the right answer.
        for n in [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4] {
            let mut a = vec![Complex { re: 1.0, im: 0.0 }; n];
            fft_in_place(&mut a, Direction::Forward);
            assert_eq!(a[0].re, n as f64);
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
