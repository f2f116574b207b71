//! The core never touches the heap: a counting global allocator sees zero
//! allocations, reallocations and deallocations while the samplers step
//! (NUTS with each metric included) and while the L-BFGS operators run (the
//! allocator is `qnmc_tests::heap`, installed once for the binary by `main.rs`).
//!
//! Counting is per thread: the test harness runs tests on parallel threads, so a
//! thread-local "measuring" flag decides whether an allocation is counted and a
//! thread-local counter records it. Only the code inside [`count_heap`] on the
//! calling thread is measured. Everything that legitimately allocates (building
//! a `LinearGaussianModel`, formatting a failure message) happens outside.

use std::hint::black_box;

use qnmc::lbfgs::{CurvaturePolicy, InitialScaling, LbfgsMemory, LbfgsSettings};
use qnmc::metric::{DenseMetric, DiagonalMetric, IdentityMetric, LbfgsMetric, Metric};
use qnmc::{
    FullBatch, Hamcmc, HamcmcSettings, Hmc, HmcSettings, MemoryUpdate, MinibatchPotential, Nuts,
    NutsSettings, Potential, Qnhmc, QnhmcMass, QnhmcSettings, Real, StepSizeSchedule,
};
use qnmc_host::targets::{CorrelatedGaussian, LinearGaussianModel};
use qnmc_tests::heap::count_heap;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

const STEPS: usize = 1000;

/// The counter works: one `Vec::with_capacity(1)` is one allocation plus one
/// deallocation when it drops, a growing `Vec` reallocates, and an empty
/// region counts nothing. Without this check the other tests could pass with a
/// broken counter.
#[test]
fn counter_sees_allocations() {
    let (n, ()) = count_heap(|| {
        let v: Vec<u8> = Vec::with_capacity(1);
        black_box(&v);
    });
    assert_eq!(n, 2, "alloc + dealloc of one Vec");

    let (n, v) = count_heap(|| {
        let v: Vec<u64> = Vec::with_capacity(1);
        black_box(v)
    });
    assert_eq!(n, 1, "one alloc, the Vec escapes the region");
    drop(v);

    let (n, v) = count_heap(|| {
        let mut v: Vec<u64> = Vec::with_capacity(1);
        for i in 0..100 {
            v.push(black_box(i));
        }
        v
    });
    assert!(n >= 2, "growing a Vec allocates and reallocates, saw {n}");
    drop(v);

    let (n, x) = count_heap(|| black_box(1u64 + 2));
    assert_eq!((n, x), (0, 3));
}

/// Runs `steps` MH steps in the measured region and returns the number of
/// acceptances (so a sampler that silently did nothing would show up).
fn hmc_region<T: Real, const D: usize, K: Metric<T, D>, P: Potential<T, D>>(
    sampler: &mut Hmc<T, D, K>,
    target: &P,
    rng: &mut XorShiftRng,
) -> (usize, usize) {
    count_heap(|| {
        let mut accepted = 0usize;
        for _ in 0..STEPS {
            let stats = sampler.step(target, rng);
            accepted += stats.accepted as usize;
        }
        black_box(sampler.position());
        accepted
    })
}

fn qnhmc_region<T: Real, const D: usize, const M: usize, P: Potential<T, D>>(
    sampler: &mut Qnhmc<T, D, M>,
    target: &P,
    rng: &mut XorShiftRng,
) -> (usize, usize) {
    count_heap(|| {
        let mut accepted = 0usize;
        for _ in 0..STEPS {
            let stats = sampler.step(target, rng);
            accepted += stats.accepted as usize;
        }
        black_box(sampler.position());
        accepted
    })
}

fn hamcmc_region<T: Real, const D: usize, const M: usize, P: MinibatchPotential<T, D>>(
    sampler: &mut Hamcmc<T, D, M>,
    target: &P,
    rng: &mut XorShiftRng,
) -> (usize, usize) {
    count_heap(|| {
        let mut ok = 0usize;
        for _ in 0..STEPS {
            ok += sampler.step(target, rng).is_ok() as usize;
        }
        black_box(sampler.position());
        ok
    })
}

#[test]
fn hmc_identity_and_diagonal_do_not_allocate() {
    let target = CorrelatedGaussian::<100>::paper();
    let mut rng = XorShiftRng::seed_from_u64(1);

    let mut hmc = Hmc::<f64, 100>::new(HmcSettings::new(0.5, 10), [1.0; 100], &target).unwrap();
    let (n, accepted) = hmc_region(&mut hmc, &target, &mut rng);
    assert_eq!(n, 0, "HMC (identity mass) allocated {n} times");
    assert!(accepted > 100, "HMC accepted only {accepted}");

    let settings = HmcSettings::new(0.5, 10);
    let metric = DiagonalMetric::new(&[5.0; 100]).unwrap();
    let mut hmc = Hmc::with_metric(settings, metric, [1.0; 100], &target).unwrap();
    let (n, accepted) = hmc_region(&mut hmc, &target, &mut rng);
    assert_eq!(n, 0, "HMC (diagonal mass) allocated {n} times");
    assert!(accepted > 100, "HMC accepted only {accepted}");

    // set_settings (valid and invalid) does not allocate either.
    let (n, ()) = count_heap(|| {
        let mut s = *hmc.settings();
        s.step_size = 0.3;
        assert!(hmc.set_settings(s).is_ok());
        s.step_size = f64::NAN;
        assert!(hmc.set_settings(s).is_err());
        assert!(hmc.metric_mut().set_variances(&[4.0; 100]).is_ok());
        assert!(hmc.metric_mut().set_variances(&[f64::NAN; 100]).is_err());
    });
    assert_eq!(n, 0);

    // f32 as well.
    let mut hmc = Hmc::<f32, 100>::new(HmcSettings::new(0.5, 10), [1.0; 100], &target).unwrap();
    let (n, accepted) = hmc_region(&mut hmc, &target, &mut rng);
    assert_eq!(n, 0, "HMC f32 allocated {n} times");
    assert!(accepted > 100);
}

#[test]
fn qnhmc_all_modes_do_not_allocate() {
    let target = CorrelatedGaussian::<100>::paper();
    let mut rng = XorShiftRng::seed_from_u64(2);
    // M = I gives the effective inverse metric H² ≈ Σ²: the leapfrog is stable
    // only for ε ≲ 2/√λ_max(Σ) ≈ 0.2, while M = H tolerates ε ≈ 1.
    // With NewestPair scaling γ itself grows to ~Σ's scale, so the f32 runs use
    // a smaller ε for M = I.
    for (mass, eps, eps32) in [
        (QnhmcMass::Identity, 0.1, 0.02f32),
        (QnhmcMass::InverseHessian, 0.4, 0.4),
    ] {
        for update in [MemoryUpdate::Adaptive, MemoryUpdate::FreezeAfter(300)] {
            let mut settings = QnhmcSettings::new(eps, 10, 8);
            settings.mass = mass;
            settings.memory_update = update;
            let mut q = Qnhmc::<f64, 100, 8>::new(settings, [1.0; 100], &target).unwrap();
            let (n, accepted) = qnhmc_region(&mut q, &target, &mut rng);
            assert_eq!(n, 0, "QNHMC {mass:?} {update:?} allocated {n} times");
            assert!(
                accepted > 100,
                "QNHMC {mass:?} {update:?} accepted {accepted}"
            );
            assert!(
                !q.memory().is_empty(),
                "memory never learned: nothing exercised"
            );
            if update != MemoryUpdate::Adaptive {
                assert!(q.is_memory_frozen());
            }

            // NewestPair scaling and the trust region, in f32.
            let mut settings = QnhmcSettings::<f32>::new(eps32, 10, 5);
            settings.mass = mass;
            settings.memory_update = update;
            settings.lbfgs.scaling = InitialScaling::NewestPair(1.0);
            settings.lbfgs.curvature.trust_region = 0.01;
            let mut q = Qnhmc::<f32, 100, 5>::new(settings, [1.0; 100], &target).unwrap();
            let (n, accepted) = qnhmc_region(&mut q, &target, &mut rng);
            assert_eq!(n, 0, "QNHMC f32 {mass:?} {update:?} allocated {n} times");
            assert!(
                accepted > 50,
                "QNHMC f32 {mass:?} {update:?} accepted {accepted}"
            );
            let (n, ()) = count_heap(|| {
                assert!(q.set_step_size(0.2).is_ok());
                assert!(q.set_step_size(-1.0).is_err());
                q.freeze_memory();
            });
            assert_eq!(n, 0);
        }
    }
}

#[test]
fn hamcmc_minibatch_and_full_batch_do_not_allocate() {
    // Built outside the measured region: the model holds its data in Vecs.
    let model = LinearGaussianModel::<10, 32>::simulate(1000, 10.0, 0.5, 3);
    let mut rng = XorShiftRng::seed_from_u64(3);
    let schedules = [
        StepSizeSchedule::Constant(1e-5),
        StepSizeSchedule::BlockDecaying {
            scale: 1e-8,
            exponent: 0.51,
        },
    ];
    for schedule in schedules {
        let settings = HamcmcSettings::new(schedule, 1.0, 1.0);
        let mut h = Hamcmc::<f64, 10, 3>::new(settings, [0.0; 10]).unwrap();
        let (n, ok) = hamcmc_region(&mut h, &model, &mut rng);
        assert_eq!(n, 0, "HAMCMC minibatch {schedule:?} allocated {n} times");
        assert_eq!(ok, STEPS);
        assert_eq!(h.memory().len(), 2, "M - 1 pairs held");

        let full = FullBatch(&model);
        let mut h = Hamcmc::<f64, 10, 3>::new(settings, [0.0; 10]).unwrap();
        let (n, ok) = hamcmc_region(&mut h, &full, &mut rng);
        assert_eq!(n, 0, "HAMCMC full batch {schedule:?} allocated {n} times");
        assert_eq!(ok, STEPS);

        // The error path (a NaN proposal from a NaN-free but absurd step) does
        // not allocate either.
        let mut h = Hamcmc::<f64, 10, 3>::new(
            HamcmcSettings::new(StepSizeSchedule::Constant(1e308), 1.0, 1.0),
            [1e10; 10],
        )
        .unwrap();
        let (n, ok) = hamcmc_region(&mut h, &full, &mut rng);
        assert_eq!((n, ok), (0, 0));
    }

    // f32, with the correlated Gaussian as a full batch.
    let target = FullBatch(CorrelatedGaussian::<100>::paper());
    for schedule in [
        StepSizeSchedule::Constant(1e-2f32),
        StepSizeSchedule::BlockDecaying {
            scale: 1e-2,
            exponent: 0.75,
        },
    ] {
        let mut h = Hamcmc::<f32, 100, 4>::new(HamcmcSettings::new(schedule, 1.0, 0.1), [0.5; 100])
            .unwrap();
        let (n, ok) = hamcmc_region(&mut h, &target, &mut rng);
        assert_eq!(n, 0, "HAMCMC f32 {schedule:?} allocated {n} times");
        assert_eq!(ok, STEPS);
    }
}

/// Every public operator of the L-BFGS engine, with a full ring (so pushes
/// evict), factor rebuilds after every push, and both curvature outcomes.
#[test]
fn lbfgs_memory_operators_do_not_allocate() {
    fn exercise<T: Real>() -> usize {
        const D: usize = 20;
        const M: usize = 6;
        let settings = LbfgsSettings {
            max_pairs: M,
            scaling: InitialScaling::NewestPair(T::ONE),
            curvature: CurvaturePolicy {
                trust_region: T::from_f64(0.1),
                min_relative_curvature: T::from_f64(1e-8),
            },
        };
        let (n, admitted) = count_heap(|| {
            let mut memory = LbfgsMemory::<T, D, M>::new(settings).unwrap();
            let mut out = [T::ZERO; D];
            let mut acc = T::ZERO;
            let mut admitted = 0usize;
            for k in 0..200usize {
                let mut s = [T::ZERO; D];
                let mut y = [T::ZERO; D];
                for i in 0..D {
                    let phase = T::from_u64(((k * 7 + i * 13) % 17) as u64) - T::from_f64(8.0);
                    s[i] = phase * T::from_f64(0.1);
                    // y = A s with A = diag(1 + i), plus a perturbation that
                    // occasionally makes the curvature negative (skipped pairs).
                    let sign = if k % 11 == 0 {
                        -T::from_f64(30.0)
                    } else {
                        T::ONE
                    };
                    y[i] = sign * T::from_u64(1 + i as u64) * s[i];
                }
                admitted += memory.try_push(&s, &y) as usize;
                let v = s;
                memory.apply_inverse_hessian(&v, &mut out);
                acc += out[0];
                memory.apply_hessian(&v, &mut out);
                acc += out[1];
                memory.apply_sqrt_inverse_hessian(&v, &mut out);
                acc += out[2];
                memory.apply_sqrt_inverse_hessian_transpose(&v, &mut out);
                acc += out[3];
                memory.apply_sqrt_hessian(&v, &mut out);
                acc += out[4];
                memory.apply_sqrt_hessian_transpose(&v, &mut out);
                acc += out[5];
                acc += memory.log_det_inverse_hessian();
                memory.refresh_factors();
                for (s, y, sy) in memory.pairs().iter() {
                    acc += s[0] + y[0] + sy;
                }
                if k == 150 {
                    memory.clear();
                }
            }
            black_box(acc);
            black_box(memory.gamma());
            assert!(memory.pairs_skipped() > 0, "the skip path was exercised");
            admitted
        });
        assert!(admitted > 100);
        n
    }
    assert_eq!(exercise::<f64>(), 0, "LbfgsMemory<f64> allocated");
    assert_eq!(exercise::<f32>(), 0, "LbfgsMemory<f32> allocated");
}

/// Runs `STEPS` NUTS draws in the measured region, with a step-size change
/// (valid and invalid) every 100 draws; returns the number of draws that
/// moved and the largest tree depth, so a sampler that silently did nothing
/// would show up.
fn nuts_region<T: Real, const D: usize, K: Metric<T, D>, P: Potential<T, D>>(
    sampler: &mut Nuts<T, D, K>,
    target: &P,
    step_size: f64,
    rng: &mut XorShiftRng,
) -> (usize, (usize, u32)) {
    count_heap(|| {
        let (mut moved, mut depth) = (0usize, 0u32);
        for n in 0..STEPS {
            if n % 100 == 0 {
                let scale = if n % 200 == 0 { 1.0 } else { 0.9 };
                assert!(
                    sampler
                        .set_step_size(T::from_f64(step_size * scale))
                        .is_ok()
                );
                assert!(sampler.set_step_size(T::from_f64(f64::NAN)).is_err());
            }
            let stats = sampler.step(target, rng);
            moved += stats.moved as usize;
            depth = depth.max(stats.tree_depth);
        }
        black_box(sampler.position());
        (moved, depth)
    })
}

/// The core's L-BFGS metric from `P` exact pairs of a quadratic with precision
/// Σ⁻¹ of the paper's Gaussian, on the base diag(5) (built outside the
/// measured region).
fn paper_lbfgs_metric<T: Real, const D: usize, const M: usize>(
    pairs: usize,
) -> LbfgsMetric<T, D, M> {
    let mut memory = LbfgsMemory::<T, D, M>::new(LbfgsSettings::with_max_pairs(M)).unwrap();
    let target = CorrelatedGaussian::<D>::paper();
    for k in 0..pairs {
        let s: [T; D] =
            std::array::from_fn(|i| T::from_f64(if (i * 7 + k * 3) % 5 < 2 { 1.0 } else { -0.5 }));
        let mut y = [T::ZERO; D];
        target.potential_and_gradient(&s, &mut y);
        assert!(memory.try_push(&s, &y), "an exact pair is admitted");
    }
    LbfgsMetric::new(&[T::from_f64(5.0); D], &memory, T::ZERO).unwrap()
}

#[test]
fn nuts_every_metric_does_not_allocate() {
    const D: usize = 20;
    let target = CorrelatedGaussian::<D>::paper();
    let mut rng = XorShiftRng::seed_from_u64(4);
    let x0 = [1.0; D];
    let cov: [[f64; D]; D] =
        std::array::from_fn(|i| std::array::from_fn(|j| 1.0 + if i == j { 4.0 } else { 0.0 }));

    let mut nuts =
        Nuts::<f64, D, _>::new(NutsSettings::new(0.9), IdentityMetric, x0, &target).unwrap();
    let (n, (moved, depth)) = nuts_region(&mut nuts, &target, 0.9, &mut rng);
    assert_eq!(n, 0, "NUTS (identity) allocated {n} times");
    assert!(
        moved > STEPS / 2 && depth >= 2,
        "NUTS identity: {moved}, {depth}"
    );

    let metric = DiagonalMetric::new(&[5.0; D]).unwrap();
    let mut nuts = Nuts::<f64, D, _>::new(NutsSettings::new(0.4), metric, x0, &target).unwrap();
    let (n, (moved, depth)) = nuts_region(&mut nuts, &target, 0.4, &mut rng);
    assert_eq!(n, 0, "NUTS (diagonal) allocated {n} times");
    assert!(
        moved > STEPS / 2 && depth >= 2,
        "NUTS diagonal: {moved}, {depth}"
    );

    let metric = DenseMetric::new(&cov).unwrap();
    let mut nuts = Nuts::<f64, D, _>::new(NutsSettings::new(0.8), metric, x0, &target).unwrap();
    let (n, (moved, depth)) = nuts_region(&mut nuts, &target, 0.8, &mut rng);
    assert_eq!(n, 0, "NUTS (dense) allocated {n} times");
    assert!(
        moved > STEPS / 2 && depth >= 1,
        "NUTS dense: {moved}, {depth}"
    );
    // Replacing the covariance (valid and invalid) does not allocate either.
    let (n, ()) = count_heap(|| {
        assert!(nuts.metric_mut().set_covariance(&cov).is_ok());
        assert!(
            nuts.metric_mut()
                .set_covariance(&[[f64::NAN; D]; D])
                .is_err()
        );
    });
    assert_eq!(n, 0);

    let metric = paper_lbfgs_metric::<f64, D, 6>(4);
    let mut nuts = Nuts::<f64, D, _>::new(NutsSettings::new(0.6), metric, x0, &target).unwrap();
    let (n, (moved, depth)) = nuts_region(&mut nuts, &target, 0.6, &mut rng);
    assert_eq!(n, 0, "NUTS (L-BFGS) allocated {n} times");
    assert!(
        moved > STEPS / 2 && depth >= 1,
        "NUTS L-BFGS: {moved}, {depth}"
    );

    // A small maximum depth (saturated trees) and divergent trees.
    let mut settings = NutsSettings::new(0.1);
    settings.max_tree_depth = 3;
    let mut nuts = Nuts::<f64, D, _>::new(settings, IdentityMetric, x0, &target).unwrap();
    let (n, _) = count_heap(|| {
        let mut saturated = 0;
        for _ in 0..STEPS {
            saturated += nuts.step(&target, &mut rng).reached_max_depth as usize;
        }
        saturated
    });
    assert_eq!(n, 0, "NUTS (saturated) allocated {n} times");
    // Divergences: finite energy errors above a small threshold, and from the
    // mode with an absurd ε, positions and potentials that overflow.
    let mut settings = NutsSettings::new(1.5);
    settings.max_energy_error = 0.5;
    let mut nuts = Nuts::<f64, D, _>::new(settings, IdentityMetric, x0, &target).unwrap();
    let mut absurd =
        Nuts::<f64, D, _>::new(NutsSettings::new(1e308), IdentityMetric, [0.0; D], &target)
            .unwrap();
    let (n, (divergent, overflowed)) = count_heap(|| {
        let (mut divergent, mut overflowed) = (0usize, 0usize);
        for _ in 0..STEPS {
            divergent += nuts.step(&target, &mut rng).divergent as usize;
            let stats = absurd.step(&target, &mut rng);
            overflowed += (stats.divergent && stats.gradient_evaluations == 0) as usize;
        }
        (divergent, overflowed)
    });
    assert_eq!(n, 0, "NUTS (divergent) allocated {n} times");
    assert!(divergent > 0 && overflowed > 0, "{divergent}, {overflowed}");

    // f32, diagonal and L-BFGS.
    let metric = DiagonalMetric::new(&[5.0f32; D]).unwrap();
    let mut nuts =
        Nuts::<f32, D, _>::new(NutsSettings::new(0.4), metric, [1.0f32; D], &target).unwrap();
    let (n, (moved, _)) = nuts_region(&mut nuts, &target, 0.4, &mut rng);
    assert_eq!(n, 0, "NUTS f32 (diagonal) allocated {n} times");
    assert!(moved > STEPS / 2);
    let metric = paper_lbfgs_metric::<f32, D, 6>(4);
    let mut nuts =
        Nuts::<f32, D, _>::new(NutsSettings::new(0.6), metric, [1.0f32; D], &target).unwrap();
    let (n, (moved, _)) = nuts_region(&mut nuts, &target, 0.6, &mut rng);
    assert_eq!(n, 0, "NUTS f32 (L-BFGS) allocated {n} times");
    assert!(moved > STEPS / 2);
}
