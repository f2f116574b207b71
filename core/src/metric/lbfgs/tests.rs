//! [`LbfgsMetric`] against the dense BFGS recursion in f64 (the
//! definition), by hand for one pair, and on repeated, parallel, overflowing
//! and refused inputs.

use super::*;
use crate::kernels::{axpy, dot_wide};
use crate::lbfgs::{CurvaturePolicy, LbfgsSettings};

/// Dense BFGS inverse update from H⁰ = diag(b), in f64 (the definition).
fn dense_h<const D: usize>(base: &[f64; D], pairs: &[([f64; D], [f64; D])]) -> [[f64; D]; D] {
    let mut h = [[0.0; D]; D];
    for i in 0..D {
        h[i][i] = base[i];
    }
    for (s, y) in pairs {
        let rho = 1.0 / (0..D).map(|i| s[i] * y[i]).sum::<f64>();
        // H⁺ = (I − ρ s yᵀ) H (I − ρ y sᵀ) + ρ s sᵀ.
        let mut left = [[0.0; D]; D];
        for i in 0..D {
            for j in 0..D {
                left[i][j] = f64::from(u8::from(i == j)) - rho * s[i] * y[j];
            }
        }
        let mut lh = [[0.0; D]; D];
        for i in 0..D {
            for j in 0..D {
                lh[i][j] = (0..D).map(|k| left[i][k] * h[k][j]).sum();
            }
        }
        for i in 0..D {
            for j in 0..D {
                h[i][j] = (0..D).map(|k| lh[i][k] * left[j][k]).sum::<f64>() + rho * s[i] * s[j];
            }
        }
    }
    h
}

fn memory<T: Real, const D: usize, const M: usize>(
    pairs: &[([f64; D], [f64; D])],
) -> LbfgsMemory<T, D, M> {
    let settings = LbfgsSettings {
        max_pairs: M,
        scaling: crate::lbfgs::InitialScaling::Fixed(T::ONE),
        curvature: CurvaturePolicy {
            trust_region: T::ZERO,
            min_relative_curvature: T::ZERO,
        },
    };
    let mut memory = LbfgsMemory::new(settings).unwrap();
    for (s, y) in pairs {
        let s: [T; D] = core::array::from_fn(|i| T::from_f64(s[i]));
        let y: [T; D] = core::array::from_fn(|i| T::from_f64(y[i]));
        assert!(memory.try_push(&s, &y));
    }
    memory
}

/// Column j = op(eⱼ), in f64.
fn materialise<T: Real, const D: usize>(op: impl Fn(&[T; D], &mut [T; D])) -> [[f64; D]; D] {
    let mut out = [[0.0; D]; D];
    for j in 0..D {
        let mut e = [T::ZERO; D];
        e[j] = T::ONE;
        let mut col = [T::ZERO; D];
        op(&e, &mut col);
        for i in 0..D {
            out[i][j] = col[i].to_f64();
        }
    }
    out
}

fn max_diff<const D: usize>(a: &[[f64; D]; D], b: &[[f64; D]; D]) -> f64 {
    let mut worst = 0.0f64;
    for i in 0..D {
        for j in 0..D {
            worst = worst.max((a[i][j] - b[i][j]).abs());
        }
    }
    worst
}

fn product_t<const D: usize>(a: &[[f64; D]; D], b: &[[f64; D]; D]) -> [[f64; D]; D] {
    // A Bᵀ
    let mut out = [[0.0; D]; D];
    for i in 0..D {
        for j in 0..D {
            out[i][j] = (0..D).map(|k| a[i][k] * b[j][k]).sum();
        }
    }
    out
}

const PAIRS3: [([f64; 3], [f64; 3]); 4] = [
    ([1.0, 0.5, -0.2], [2.0, 0.4, 0.1]),
    ([0.3, -1.0, 0.7], [0.2, -2.5, 1.9]),
    ([-0.4, 0.2, 1.0], [-0.5, 0.9, 3.1]),
    ([0.6, 0.6, 0.1], [1.1, 1.0, 0.6]),
];
const BASE3: [f64; 3] = [0.5, 2.0, 1.3];

fn check_against_dense<T: Real, const M: usize>(tol: f64) {
    let pairs = &PAIRS3[..M.min(4)];
    let mem = memory::<T, 3, M>(pairs);
    let base: [T; 3] = core::array::from_fn(|i| T::from_f64(BASE3[i]));
    let metric = LbfgsMetric::new(&base, &mem, T::ZERO).unwrap();
    // The dense reference sees the pairs rounded to T, like the metric.
    let rounded: Vec<([f64; 3], [f64; 3])> = mem
        .pairs()
        .iter()
        .map(|(s, y, _)| (s.map(|x| x.to_f64()), y.map(|x| x.to_f64())))
        .collect();
    let h = dense_h(&base.map(|x| x.to_f64()), &rounded);
    let scale = h.iter().flatten().fold(0.0f64, |a, x| a.max(x.abs()));
    let v = materialise::<T, 3>(|p, o| metric.velocity(p, o));
    assert!(max_diff(&v, &h) <= tol * scale, "H: {v:?} vs {h:?}");
    let s = materialise::<T, 3>(|z, o| metric.apply_sqrt_inverse_hessian(z, o));
    assert!(max_diff(&product_t(&s, &s), &h) <= tol * scale);
    // F Fᵀ = H⁻¹, i.e. H (F Fᵀ) = I; B H = I.
    let f = materialise::<T, 3>(|z, o| metric.momentum_from_normals(z, o));
    let fft = product_t(&f, &f);
    let mut hf = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            hf[i][j] = (0..3).map(|k| h[i][k] * fft[k][j]).sum();
        }
    }
    let eye = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    assert!(max_diff(&hf, &eye) <= 10.0 * tol, "H F Fᵀ: {hf:?}");
    let b = materialise::<T, 3>(|x, o| metric.apply_hessian(x, o));
    let bh = product_t(&b, &h); // B Hᵀ = B H
    assert!(max_diff(&bh, &eye) <= 10.0 * tol, "B H: {bh:?}");
    // log det by the 3×3 formula.
    let det = h[0][0] * (h[1][1] * h[2][2] - h[1][2] * h[2][1])
        - h[0][1] * (h[1][0] * h[2][2] - h[1][2] * h[2][0])
        + h[0][2] * (h[1][0] * h[2][1] - h[1][1] * h[2][0]);
    assert!((metric.log_det_inverse_mass().to_f64() - det.ln()).abs() <= 10.0 * tol);
    assert_eq!(metric.pairs_used(), pairs.len());
    assert_eq!(metric.pairs_skipped(), 0);
    assert!(metric.rank() <= 3 && metric.rank() <= 2 * M);
    // Kinetic energy is ½ pᵀ H p.
    let p: [T; 3] = core::array::from_fn(|i| T::from_f64([0.3, -1.2, 0.8][i]));
    let mut vel = [T::ZERO; 3];
    metric.velocity(&p, &mut vel);
    let pf = p.map(|x| x.to_f64());
    let quad: f64 = (0..3)
        .map(|i| (0..3).map(|j| pf[i] * h[i][j] * pf[j]).sum::<f64>())
        .sum();
    assert!((metric.kinetic_energy(&p, &vel).to_f64() - 0.5 * quad).abs() <= 10.0 * tol * quad);
}

#[test]
fn matches_the_dense_bfgs_update() {
    check_against_dense::<f64, 1>(1e-13);
    check_against_dense::<f64, 2>(1e-13);
    check_against_dense::<f64, 4>(1e-13);
    check_against_dense::<f64, 6>(1e-13);
    check_against_dense::<f32, 1>(2e-5);
    check_against_dense::<f32, 2>(2e-5);
    check_against_dense::<f32, 4>(2e-5);
}

/// √(Hᵢᵢ / (H⁻¹)ᵢᵢ) from the eigen-form against the dense H and its
/// inverse (materialised column by column), and bᵢ itself with no pairs.
#[test]
fn geometric_diagonal_matches_the_dense_matrices() {
    let mem = memory::<f64, 3, 4>(&PAIRS3);
    let metric = LbfgsMetric::new(&BASE3, &mem, 0.0).unwrap();
    let h = materialise::<f64, 3>(|p, o| metric.velocity(p, o));
    let inv = materialise::<f64, 3>(|p, o| metric.apply_hessian(p, o));
    let mut got = [0.0; 3];
    metric.geometric_diagonal(&mut got);
    for i in 0..3 {
        let want = (h[i][i] / inv[i][i]).sqrt();
        assert!((got[i] - want).abs() <= 1e-13 * want, "{got:?} vs {want}");
    }
    let empty = memory::<f64, 3, 4>(&[]);
    let diagonal = LbfgsMetric::new(&BASE3, &empty, 0.0).unwrap();
    diagonal.geometric_diagonal(&mut got);
    assert_eq!(got, BASE3);
}

#[test]
fn one_pair_by_hand() {
    // b = (4, 1), s = e₁, y = (1/2, 0): s̃ = (1/2, 0), ỹ = (1, 0), so H̃ =
    // diag(1/2, 1), H = diag(2, 1); μ = 1/2 along e₁ only.
    let mem = memory::<f64, 2, 3>(&[([1.0, 0.0], [0.5, 0.0])]);
    let metric = LbfgsMetric::new(&[4.0, 1.0], &mem, 0.0).unwrap();
    assert_eq!(metric.rank(), 1);
    assert_eq!(metric.eigenvalues(), &[0.5]);
    assert_eq!(metric.direction(0).map(|u| u[0].abs()), Some(1.0));
    assert!(metric.direction(1).is_none());
    let mut v = [0.0; 2];
    metric.velocity(&[1.0, 1.0], &mut v);
    assert_eq!(v, [2.0, 1.0]);
    assert_eq!(metric.log_det_inverse_mass(), 2.0f64.ln());
    assert_eq!(metric.base(), &[4.0, 1.0]);
}

/// The grouped, fused passes of `apply` give the bits of the plain
/// formula post ∘ (x + Σk ck uk), ck = ak · dot_wide(uk, x), x = pre ∘
/// input, summed one direction at a time, at every rank 0..=2M (groups
/// of four plus a remainder of 0–3), with and without pre and post.
#[test]
fn fused_passes_match_the_plain_formula_at_every_rank() {
    const D: usize = 11;
    const M: usize = 5;
    let value = |i: usize, j: usize| ((i * 31 + j * 17 + 7) % 23) as f64 / 7.0 - 1.5;
    let mut metric = LbfgsMetric::<f64, D, M>::identity();
    for (k, u) in metric.directions.as_flattened_mut().iter_mut().enumerate() {
        *u = core::array::from_fn(|i| value(i, k));
    }
    let mut coefficients = [[0.0; M]; 2];
    for (k, a) in coefficients.as_flattened_mut().iter_mut().enumerate() {
        *a = 0.3 + 0.1 * k as f64;
    }
    let input: [f64; D] = core::array::from_fn(|i| value(i, 99) + 0.25);
    let pre: [f64; D] = core::array::from_fn(|i| 0.5 + 0.1 * i as f64);
    let post: [f64; D] = core::array::from_fn(|i| 2.0 - 0.07 * i as f64);
    for rank in 0..=2 * M {
        metric.rank = rank;
        for (pre, post) in [
            (None, None),
            (Some(&pre), None),
            (None, Some(&post)),
            (Some(&pre), Some(&post)),
        ] {
            let mut fused = [0.0; D];
            metric.apply(&input, pre, &coefficients, post, &mut fused, D);
            let mut x: [f64; D] =
                core::array::from_fn(|i| pre.map_or(input[i], |w| w[i] * input[i]));
            let directions = metric.directions.as_flattened();
            let c: [f64; 2 * M] = core::array::from_fn(|k| {
                coefficients.as_flattened()[k] * dot_wide(&directions[k], &x)
            });
            for k in 0..rank {
                axpy(c[k], &directions[k], &mut x);
            }
            if let Some(w) = post {
                for i in 0..D {
                    x[i] *= w[i];
                }
            }
            assert_eq!(
                fused.map(f64::to_bits),
                x.map(f64::to_bits),
                "rank {rank}, pre {}, post {}",
                pre.is_some(),
                post.is_some()
            );
        }
    }
}

#[test]
fn identity_and_empty_memories() {
    let id = LbfgsMetric::<f32, 3, 2>::identity();
    let (mut p, mut v) = ([0.0; 3], [0.0; 3]);
    id.momentum_from_normals(&[1.0, 2.0, 3.0], &mut p);
    id.velocity(&p, &mut v);
    assert_eq!((p, v), ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]));
    assert_eq!((id.rank(), id.log_det_inverse_mass()), (0, 0.0));
    // M = 0, D = 1, D = 0: valid metrics.
    let m0 = LbfgsMemory::<f64, 2, 0>::new(LbfgsSettings::with_max_pairs(0)).unwrap();
    let metric = LbfgsMetric::new(&[4.0, 9.0], &m0, 0.0).unwrap();
    metric.momentum_from_normals(&[2.0, 3.0], &mut [0.0; 2]);
    let mut q = [0.0; 2];
    metric.momentum_from_normals(&[2.0, 3.0], &mut q);
    assert_eq!(q, [1.0, 1.0]);
    let mem1 = memory::<f64, 1, 3>(&[([2.0], [1.0]), ([1.0], [0.5])]);
    let metric = LbfgsMetric::new(&[3.0], &mem1, 0.0).unwrap();
    assert_eq!(metric.rank(), 1);
    assert!((metric.eigenvalues()[0] - 2.0 / 3.0).abs() < 1e-15);
    let empty = LbfgsMemory::<f64, 0, 2>::new(LbfgsSettings::with_max_pairs(2)).unwrap();
    assert_eq!(LbfgsMetric::new(&[], &empty, 0.0).unwrap().rank(), 0);
}

/// Dependent pairs (the same pair twice, a multiple of it) add nothing new:
/// the metric is that of one pair, and Gram–Schmidt drops the copies.
#[test]
fn repeated_and_parallel_pairs() {
    let one = memory::<f64, 3, 4>(&PAIRS3[..1]);
    let (s, y) = PAIRS3[0];
    let many = memory::<f64, 3, 4>(&[(s, y), (s, y), (s.map(|x| 2.0 * x), y.map(|x| 2.0 * x))]);
    let a = LbfgsMetric::new(&BASE3, &one, 0.0).unwrap();
    let b = LbfgsMetric::new(&BASE3, &many, 0.0).unwrap();
    let va = materialise::<f64, 3>(|p, o| a.velocity(p, o));
    let vb = materialise::<f64, 3>(|p, o| b.velocity(p, o));
    assert!(max_diff(&va, &vb) < 1e-14, "{va:?} vs {vb:?}");
    assert_eq!(b.pairs_used(), 3);
    assert!(b.rank() <= 2);
}

#[test]
fn truncation_keeps_only_directions_that_matter() {
    let mem = memory::<f64, 3, 4>(&PAIRS3);
    let full = LbfgsMetric::new(&BASE3, &mem, 0.0).unwrap();
    assert_eq!(full.rank(), 3);
    let mu = full.eigenvalues();
    assert!(mu.windows(2).all(|w| w[0] >= w[1]), "{mu:?}");
    // τ between the smallest and the largest |ln μ|.
    let logs: Vec<f64> = mu.iter().map(|m| m.ln().abs()).collect();
    let tau = 0.5
        * (logs.iter().cloned().fold(f64::INFINITY, f64::min)
            + logs.iter().cloned().fold(0.0, f64::max));
    let cut = LbfgsMetric::new(&BASE3, &mem, tau).unwrap();
    let kept = logs.iter().filter(|l| **l > tau).count();
    assert!((1..3).contains(&kept));
    assert_eq!(cut.rank(), kept);
    assert_eq!(cut.rank_tolerance(), tau);
    for m in cut.eigenvalues() {
        assert!(m.ln().abs() > tau);
    }
    // A huge τ leaves the base.
    let none = LbfgsMetric::new(&BASE3, &mem, 1e9).unwrap();
    assert_eq!(none.rank(), 0);
    assert!(
        (none.log_det_inverse_mass() - BASE3.iter().map(|b| b.ln()).sum::<f64>()).abs() < 1e-15
    );
}

/// Pairs that overflow in scaled coordinates are skipped and counted.
#[test]
fn pairs_that_overflow_after_scaling_are_skipped() {
    let mem = memory::<f64, 2, 3>(&[([1e200, 1.0], [1e-10, 1.0]), ([1.0, 0.0], [2.0, 0.0])]);
    let metric = LbfgsMetric::new(&[1e-300, 1.0], &mem, 0.0).unwrap();
    assert_eq!((metric.pairs_used(), metric.pairs_skipped()), (1, 1));
    let mut v = [0.0; 2];
    metric.velocity(&[1.0, 1.0], &mut v);
    assert!(v.iter().all(|x| x.is_finite()));
}

/// A pair whose compact form overflows (sᵀy = 1e-200 with ‖s‖ = ‖y‖ = 1:
/// its ρ²·yᵀy·ssᵀ term is 1e400) is left out, oldest first: the metric
/// stays finite and is bit for bit the metric of the newer pairs alone.
#[test]
fn overflowing_compact_form_falls_back_to_fewer_pairs() {
    let bad = ([0.0, 1.0, 0.0], [1.0, 1e-200, 0.0]);
    let mem = memory::<f64, 3, 3>(&[bad, PAIRS3[0], PAIRS3[1]]);
    let metric = LbfgsMetric::new(&BASE3, &mem, 0.0).unwrap();
    assert_eq!((metric.pairs_used(), metric.pairs_skipped()), (2, 1));
    let alone = LbfgsMetric::new(&BASE3, &memory::<f64, 3, 3>(&PAIRS3[..2]), 0.0).unwrap();
    let a = materialise::<f64, 3>(|p, o| metric.velocity(p, o));
    let b = materialise::<f64, 3>(|p, o| alone.velocity(p, o));
    assert_eq!(a, b);
    assert!(metric.log_det_inverse_mass().is_finite());
    // Alone, the bad pair leaves the base.
    let worst = LbfgsMetric::new(&BASE3, &memory::<f64, 3, 3>(&[bad]), 0.0).unwrap();
    assert_eq!(
        (worst.rank(), worst.pairs_used(), worst.pairs_skipped()),
        (0, 0, 1)
    );
}

#[test]
fn bad_settings_are_refused_and_leave_the_metric() {
    let mem = memory::<f32, 3, 4>(&PAIRS3);
    let base: [f32; 3] = BASE3.map(|x| x as f32);
    let mut metric = LbfgsMetric::new(&base, &mem, 0.0).unwrap();
    let before = materialise::<f32, 3>(|p, o| metric.velocity(p, o));
    let (rank, log_det) = (metric.rank(), metric.log_det_inverse_mass());
    let other = memory::<f32, 3, 4>(&PAIRS3[..1]);
    for bad in [0.0, -1.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let r = metric.rebuild(&[1.0, bad, 1.0], &other, 0.0);
        assert!(
            matches!(
                r,
                Err(Error::InvalidSetting {
                    setting: "base",
                    ..
                })
            ),
            "{bad}: {r:?}"
        );
    }
    for bad in [-0.5, f32::NAN, f32::INFINITY] {
        let r = metric.rebuild(&[1.0; 3], &other, bad);
        assert!(matches!(
            r,
            Err(Error::InvalidSetting {
                setting: "rank_tolerance",
                ..
            })
        ));
    }
    assert!(LbfgsMetric::new(&[f32::NAN; 3], &other, 0.0).is_err());
    assert_eq!(metric.base(), &base);
    assert_eq!(
        (metric.rank(), metric.log_det_inverse_mass()),
        (rank, log_det)
    );
    assert_eq!(metric.pairs_used(), 4);
    let after = materialise::<f32, 3>(|p, o| metric.velocity(p, o));
    assert_eq!(before, after);
    // A rebuild is deterministic: the same inputs give the same bits.
    metric.rebuild(&base, &mem, 0.0).unwrap();
    assert_eq!(materialise::<f32, 3>(|p, o| metric.velocity(p, o)), before);
}
