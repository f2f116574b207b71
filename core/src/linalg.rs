//! Vector kernels on fixed-size arrays. Plain loops in index order: no fused
//! multiply-add, no reordering, so results are identical on every target.

use crate::Real;

/// Σ aᵢ bᵢ.
#[inline]
pub fn dot<T: Real, const D: usize>(a: &[T; D], b: &[T; D]) -> T {
    let mut acc = T::ZERO;
    for i in 0..D {
        acc += a[i] * b[i];
    }
    acc
}

/// y ← y + α x.
#[inline]
pub fn axpy<T: Real, const D: usize>(alpha: T, x: &[T; D], y: &mut [T; D]) {
    for i in 0..D {
        y[i] += alpha * x[i];
    }
}

/// x ← α x.
#[inline]
pub fn scale<T: Real, const D: usize>(alpha: T, x: &mut [T; D]) {
    for v in x.iter_mut() {
        *v *= alpha;
    }
}

/// out ← a − b.
#[inline]
pub fn difference<T: Real, const D: usize>(a: &[T; D], b: &[T; D], out: &mut [T; D]) {
    for i in 0..D {
        out[i] = a[i] - b[i];
    }
}

/// Euclidean norm √(xᵀx).
#[inline]
pub fn norm<T: Real, const D: usize>(x: &[T; D]) -> T {
    dot(x, x).sqrt()
}

/// `true` when every entry is finite.
#[inline]
pub fn all_finite<T: Real>(x: &[T]) -> bool {
    x.iter().all(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_match_hand_values() {
        let a = [1.0f64, 2.0, 3.0];
        let b = [4.0f64, -5.0, 6.0];
        assert_eq!(dot(&a, &b), 12.0);
        let mut y = b;
        axpy(2.0, &a, &mut y);
        assert_eq!(y, [6.0, -1.0, 12.0]);
        let mut d = [0.0; 3];
        difference(&a, &b, &mut d);
        assert_eq!(d, [-3.0, 7.0, -3.0]);
        scale(0.5, &mut d);
        assert_eq!(d, [-1.5, 3.5, -1.5]);
        assert_eq!(norm(&[3.0f32, 4.0]), 5.0);
        assert!(all_finite(&a));
        assert!(!all_finite(&[1.0, f64::NAN]));
        assert!(!all_finite(&[1.0, f64::INFINITY]));
    }
}
