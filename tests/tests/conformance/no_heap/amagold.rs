//! AMAGOLD, L2MC, dual averaging and the warm-up driver never touch the heap:
//! a counting global allocator (`qnmc_tests::heap`, installed by `main.rs`) sees zero
//! allocations, reallocations and deallocations over 1000 steps of each.
//! Building the targets (which allocate) happens outside the measured region.

// Numeric checks index several parallel arrays at once; index loops say that best.
#![allow(clippy::needless_range_loop)]

use std::hint::black_box;

use qnmc::adaptation::{DualAveraging, DualAveragingSettings, Warmup};
use qnmc::samplers::amagold::{Amagold, AmagoldSettings, MomentumRefresh};
use qnmc::{Hmc, HmcSettings};
use qnmc_host::targets::{CorrelatedGaussian, LinearGaussianModel};
use qnmc_tests::heap::count_heap;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

const STEPS: usize = 1000;

/// Negative control: the counter sees a Vec.
#[test]
fn counter_sees_allocations() {
    let (n, ()) = count_heap(|| {
        let v: Vec<u8> = Vec::with_capacity(1);
        black_box(&v);
    });
    assert_eq!(n, 2);
}

#[test]
fn amagold_and_l2mc_steps_do_not_allocate() {
    let model: LinearGaussianModel<10, 5> = LinearGaussianModel::simulate(100, 1.0, 0.5, 2);
    for refresh in [MomentumRefresh::Resample, MomentumRefresh::Persistent] {
        let mut s = AmagoldSettings::new(0.003, 8, 1.0);
        s.momentum_refresh = refresh;
        let mut a = Amagold::new(s, [0.0; 10], &model).unwrap();
        let mut rng = XorShiftRng::seed_from_u64(1);
        let (n, accepted) = count_heap(|| {
            let mut acc = 0usize;
            for _ in 0..STEPS {
                acc += a.step(&model, &mut rng).accepted as usize;
            }
            acc
        });
        assert_eq!(n, 0, "AMAGOLD {refresh:?}: {n} heap events");
        assert!(accepted > 0);
        let (n, _) = count_heap(|| {
            for _ in 0..STEPS {
                black_box(a.step_full_batch(&model, &mut rng));
            }
        });
        assert_eq!(n, 0, "L2MC {refresh:?}: {n} heap events");
    }
    // f32 on a Potential-only target through L2MC.
    let t = CorrelatedGaussian::<20>::paper();
    let mut a = Amagold::<f32, 20>::new(AmagoldSettings::new(0.3, 5, 0.5), [0.0; 20], &t).unwrap();
    let mut rng = XorShiftRng::seed_from_u64(2);
    let (n, _) = count_heap(|| {
        for _ in 0..STEPS {
            black_box(a.step_full_batch(&t, &mut rng));
        }
    });
    assert_eq!(n, 0);
}

#[test]
fn dual_averaging_and_warmup_do_not_allocate() {
    let t = CorrelatedGaussian::<20>::paper();
    let mut h = Hmc::new(HmcSettings::new(0.3, 5), [0.0; 20], &t).unwrap();
    let mut rng = XorShiftRng::seed_from_u64(3);
    let mut w = Warmup::new(DualAveragingSettings::stan(0.3), 500, 0.1)
        .unwrap()
        .with_restart(200);
    let mut da = DualAveraging::new(DualAveragingSettings::<f32>::stan(0.1)).unwrap();
    let (n, _) = count_heap(|| {
        w.start(&mut h, &mut rng).unwrap();
        for k in 0..STEPS {
            let st = h.step(&t, &mut rng);
            w.after_draw(&mut h, &st, &mut rng).unwrap();
            black_box(da.update((k % 10) as f32 / 10.0));
        }
    });
    assert_eq!(n, 0, "{n} heap events");
    assert!(!w.is_adapting());
}
