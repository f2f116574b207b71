//! The hot vectors' alignment on x86-64 (the AVX2 kernels' loads).

use super::*;
use crate::metric::{DiagonalMetric, LbfgsMetric};
use core::mem::{align_of, offset_of, size_of};

/// Every vector the leapfrog loops touch starts on a 32-byte boundary at
/// D = 100 in f64 (800-byte vectors), so no AVX2 load straddles a cache
/// line (the layout note on [`Nuts`]).
#[test]
fn hot_vectors_are_32_byte_aligned_on_x86_64() {
    type Lbfgs = LbfgsMetric<f64, 100, 10>;
    type N = Nuts<f64, 100, Lbfgs>;
    assert_eq!(align_of::<N>(), 64);
    let point = [
        offset_of!(PhasePoint<f64, 100>, position),
        offset_of!(PhasePoint<f64, 100>, momentum),
        offset_of!(PhasePoint<f64, 100>, gradient),
        offset_of!(PhasePoint<f64, 100>, velocity),
        offset_of!(PhasePoint<f64, 100>, gradient_velocity),
    ];
    let span = [
        offset_of!(Span<f64, 100>, rho),
        offset_of!(Span<f64, 100>, momentum_begin),
        offset_of!(Span<f64, 100>, velocity_begin),
        offset_of!(Span<f64, 100>, momentum_end),
        offset_of!(Span<f64, 100>, velocity_end),
    ];
    let sample = [
        offset_of!(Sample<f64, 100>, position),
        offset_of!(Sample<f64, 100>, gradient),
    ];
    let mut offsets = vec![
        offset_of!(N, end_momentum),
        offset_of!(N, end_velocity),
        offset_of!(N, rho),
        offset_of!(N, normals),
        // The metrics' vectors come first in them (repr(C)), 800 bytes each.
        offset_of!(N, metric),
    ];
    for end in [offset_of!(N, backward), offset_of!(N, forward)] {
        offsets.extend(point.iter().map(|o| end + o));
    }
    for k in 0..2 {
        let base = offset_of!(N, samples) + k * size_of::<Sample<f64, 100>>();
        offsets.extend(sample.iter().map(|o| base + o));
    }
    for k in 0..10 {
        let base = offset_of!(N, spans) + k * size_of::<Span<f64, 100>>();
        offsets.extend(span.iter().map(|o| base + o));
    }
    for o in offsets {
        assert_eq!(
            o % 32,
            0,
            "a vector at byte {o} of Nuts is not 32-byte aligned"
        );
    }
    type Diagonal = DiagonalMetric<f64, 100>;
    assert_eq!(align_of::<Nuts<f64, 100, Diagonal>>(), 64);
    assert_eq!(align_of::<Lbfgs>(), 64);
    assert_eq!(align_of::<Diagonal>(), 64);
}
