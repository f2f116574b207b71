//! The AVX2 copies of the kernels (`qnmc::kernels`, chosen at run
//! time with the `std` feature) give exactly the bits of the portable copies.
//!
//! The embedded bit-identity hashes compare the host with Cortex-M, RISC-V
//! and wasm, but at D = 3, where no loop has a full block of four. Here whole
//! adaptive NUTS chains at D = 37 and D = 100 (full blocks and a tail) run
//! twice, AVX2 forbidden and allowed, with each metric the warm-up can learn,
//! in f64 and f32, and every draw's position, energy and tree must be equal to
//! the bit. A difference in any kernel changes a trajectory and so, within a
//! few draws, every later bit. On a processor without AVX2 both runs use the
//! portable copies and the test says so on stderr.
//!
//! One `#[test]`, and it runs the comparison in a child process of its own:
//! the switch is global to the process, and this binary runs the other
//! reference-chain tests on parallel threads, whose kernels it must not flip
//! under them (nor they see a half-switched state). The parent re-runs this
//! test binary with `--exact` on this test alone and `QNMC_VECTOR_EXTENSIONS_CHILD`
//! set, passes the child's output on, and fails unless the child ran exactly
//! this one test and it passed.

use qnmc::adaptation::{
    AdaptiveNuts, DiagonalEstimator, LbfgsEstimator, MetricEstimator, WarmupSchedule,
};
use qnmc::kernels::{RUNTIME_DISPATCH, kernels_in_use, set_avx2_allowed};
use qnmc::metric::{DiagonalMetric, LbfgsMetric};
use qnmc::{NutsSettings, Potential, Real};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

/// N(0, Σ) with precision Σ⁻¹ = diag(aᵢ) − b 11ᵀ (positive definite: badly
/// scaled and correlated, so the L-BFGS metric learns several directions).
struct CorrelatedGaussian;

impl<T: Real, const D: usize> Potential<T, D> for CorrelatedGaussian {
    fn potential_and_gradient(&self, x: &[T; D], g: &mut [T; D]) -> T {
        let b = T::from_f64(0.5 / D as f64);
        let sum = x.iter().fold(T::ZERO, |s, &v| s + v);
        let mut u = -T::HALF * b * sum * sum;
        for i in 0..D {
            let a = T::from_f64(1.0 + (i % 7) as f64 * 3.0);
            g[i] = a * x[i] - b * sum;
            u += T::HALF * a * x[i] * x[i];
        }
        u
    }
}

/// Every draw's position and energy bits and its tree size.
fn chain<T: Real, const D: usize, E: MetricEstimator<T, D>>(
    metric: E::Metric,
    estimator: E,
    seed: u64,
) -> Vec<u64> {
    let start: [T; D] = core::array::from_fn(|i| T::from_f64(0.3 * (i as f64 - 10.0) / 7.0));
    let settings = NutsSettings::new(T::from_f64(0.2));
    let mut nuts = AdaptiveNuts::<T, D, E, 10>::new(
        settings,
        WarmupSchedule::stan(150).unwrap(),
        metric,
        estimator,
        start,
        &CorrelatedGaussian,
    )
    .unwrap();
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let mut bits = Vec::new();
    for _ in 0..250 {
        let stats = nuts.step(&CorrelatedGaussian, &mut rng);
        bits.extend(nuts.position().iter().map(|x| x.to_f64().to_bits()));
        bits.push(stats.energy.to_f64().to_bits());
        bits.push(stats.leapfrog_steps as u64);
    }
    bits
}

/// All chains of one setting of the switch.
fn all_chains() -> Vec<(&'static str, Vec<u64>)> {
    vec![
        (
            "f64 D=37 L-BFGS τ=0 (full rank)",
            chain::<f64, 37, _>(
                LbfgsMetric::<f64, 37, 6>::identity(),
                LbfgsEstimator::<f64, 37, 6>::new(0.0).unwrap(),
                1,
            ),
        ),
        (
            "f64 D=100 L-BFGS τ=0.1",
            chain::<f64, 100, _>(
                LbfgsMetric::<f64, 100, 10>::identity(),
                LbfgsEstimator::<f64, 100, 10>::new(0.1).unwrap(),
                2,
            ),
        ),
        (
            "f32 D=37 L-BFGS τ=0 (full rank)",
            chain::<f32, 37, _>(
                LbfgsMetric::<f32, 37, 6>::identity(),
                LbfgsEstimator::<f32, 37, 6>::new(0.0).unwrap(),
                3,
            ),
        ),
        (
            "f64 D=37 diagonal",
            chain::<f64, 37, _>(DiagonalMetric::identity(), DiagonalEstimator::new(), 4),
        ),
        (
            "f32 D=100 diagonal",
            chain::<f32, 100, _>(DiagonalMetric::identity(), DiagonalEstimator::new(), 5),
        ),
    ]
}

/// Set in the child process, which runs the comparison.
const CHILD: &str = "QNMC_VECTOR_EXTENSIONS_CHILD";

#[test]
fn avx2_kernels_give_the_portable_bits() {
    if std::env::var_os(CHILD).is_some() {
        compare_portable_and_avx2();
        return;
    }
    // The test's name in this binary: its module path without the crate name.
    let path = concat!(module_path!(), "::avx2_kernels_give_the_portable_bits");
    let name = path.split_once("::").map_or(path, |(_, rest)| rest);
    let exe = std::env::current_exe().expect("the path of this test binary");
    let out = std::process::Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("running this test binary again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "the child process failed: {}",
        out.status
    );
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "the child process did not run {name}"
    );
}

/// The comparison itself (in the child process: it flips the global switch).
fn compare_portable_and_avx2() {
    let portable_in_use = !set_avx2_allowed(false);
    assert!(portable_in_use);
    let portable = all_chains();
    let avx2 = set_avx2_allowed(true);
    let wide = all_chains();
    if RUNTIME_DISPATCH && std::is_x86_feature_detected!("avx2") {
        assert!(avx2, "AVX2 is present but was not chosen");
        assert_eq!(kernels_in_use(), "avx2 (chosen at run time)");
    } else {
        eprintln!(
            "note: the kernels in use are {:?}: both runs took the same copy",
            kernels_in_use()
        );
    }
    for ((name, a), (_, b)) in portable.iter().zip(&wide) {
        assert_eq!(a.len(), b.len());
        if let Some(i) = a.iter().zip(b).position(|(x, y)| x != y) {
            panic!("{name}: the AVX2 chain leaves the portable one at word {i}");
        }
        // The chains moved (a frozen chain would match trivially).
        assert!(a.windows(2).filter(|w| w[0] != w[1]).count() > a.len() / 2);
    }
}
