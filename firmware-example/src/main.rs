//! The qnmc firmware example.
//!
//! On a microcontroller (`target_os = "none"`) this is a bare-metal program:
//! - Cortex-M (thumbv7em-none-eabihf on QEMU `mps2-an386`, thumbv7m-none-eabi on
//!   `lm3s6965evb`, thumbv6m-none-eabi on `microbit`): `cortex-m-rt`, log over
//!   semihosting, semihosting exit code;
//! - RISC-V (riscv32imac-unknown-none-elf on QEMU `virt`): `riscv-rt`, log on the
//!   16550 UART, exit code through the SiFive test device.
//!
//! It runs the jobs of [`qnmc_firmware_example::job`] — the bit-identity chains
//! (f64 and f32), on-device Bayesian logistic regression with QNHMC, HAMCMC and
//! NUTS (diagonal and L-BFGS metrics, Stan's warm-up) in f32, the state sizes
//! and (under `qemu -icount shift=0`) the instruction cost of one draw — and
//! exits with 0 only if every check passed.
//!
//! On the host it is a plain program running the same jobs (no step cost, no
//! stack measurement): `cargo run -p qnmc-firmware-example --release`.

#![cfg_attr(target_os = "none", no_std)]
#![cfg_attr(target_os = "none", no_main)]

use core::fmt::Write;

use qnmc_firmware_example::job;

#[cfg(all(target_os = "none", target_arch = "arm"))]
#[path = "platform_cortex_m.rs"]
mod platform;

#[cfg(all(target_os = "none", target_arch = "riscv32"))]
#[path = "platform_riscv.rs"]
mod platform;

#[cfg(not(target_os = "none"))]
#[path = "platform_host.rs"]
mod platform;

/// Instructions of [`platform::calibration_loop`]`(n)` per iteration.
#[cfg(target_os = "none")]
const CALIBRATION_INSNS_PER_ITERATION: u64 = 2;

/// Draws measured per sampler for the step cost.
#[cfg(target_os = "none")]
const COST_STEPS: u32 = 20;

fn hex_line(out: &mut dyn Write, label: &str, hashes: [u64; 4], expected: [u64; 4]) -> bool {
    let ok = hashes == expected;
    let _ = writeln!(
        out,
        "bit-identity {label} qnhmc={:016x} hamcmc={:016x} nuts-diag={:016x} nuts-lbfgs={:016x} {}",
        hashes[0],
        hashes[1],
        hashes[2],
        hashes[3],
        if ok { "ok" } else { "MISMATCH" }
    );
    ok
}

fn posterior_line(out: &mut dyn Write, check: &job::PosteriorCheck) -> bool {
    let m = &check.moments.mean;
    let sd = check.moments.sd();
    let _ = writeln!(
        out,
        "posterior f32 {}: draws={} accepted={} failures={} mean=[{:.3}, {:.3}, {:.3}] sd=[{:.3}, {:.3}, {:.3}] \
         mean_err/sd=[{:+.3}, {:+.3}, {:+.3}] sd_rel_err=[{:+.3}, {:+.3}, {:+.3}] {}",
        check.sampler,
        check.moments.count,
        check.accepted,
        check.failures,
        m[0],
        m[1],
        m[2],
        sd[0],
        sd[1],
        sd[2],
        check.mean_error_in_sd[0],
        check.mean_error_in_sd[1],
        check.mean_error_in_sd[2],
        check.sd_relative_error[0],
        check.sd_relative_error[1],
        check.sd_relative_error[2],
        if check.passed { "ok" } else { "FAIL" }
    );
    check.passed
}

/// `size_of` the NUTS samplers in one precision, with their minimum
/// (`job::nuts_minimum_scalars`, times `scalar` bytes).
fn nuts_state_line(out: &mut dyn Write, label: &str, sizes: [usize; 4], scalar: usize) {
    let min = job::nuts_minimum_scalars();
    let (depth, m) = (job::NUTS_MAX_DEPTH, job::NUTS_LBFGS_MEMORY);
    let _ = writeln!(
        out,
        "state bytes: nuts_diag<{label},3,{depth}>={} (min {}) adaptive_nuts_diag<{label},3,{depth}>={} (min {}) \
         nuts_lbfgs<{label},3,{m},{depth}>={} (min {}) adaptive_nuts_lbfgs<{label},3,{m},{depth}>={} (min {})",
        sizes[0],
        min[0] * scalar,
        sizes[1],
        min[1] * scalar,
        sizes[2],
        min[2] * scalar,
        sizes[3],
        min[3] * scalar
    );
}

/// Peak stack per job: before each job the platform repaints the free stack,
/// after it scans for the deepest overwritten word (bytes from the top of the
/// stack, so the frames of `main` and `run` are included). Zero on the host.
struct StackMeter {
    /// The largest peak of any job.
    max: usize,
}

impl StackMeter {
    /// Runs `f` and returns its result and the peak stack while it ran.
    fn measure<R>(&mut self, f: impl FnOnce() -> R) -> (R, usize) {
        platform::repaint_stack();
        let result = f();
        let (used, _) = platform::peak_stack();
        self.max = self.max.max(used);
        (result, used)
    }

    /// The four bit-identity chains of `T` (as `job::bit_identity`), each
    /// measured on its own; for NUTS also the peak while drawing alone (the
    /// stack is repainted once the sampler is built).
    fn bit_identity<T: qnmc::Real>(&mut self, seed: u64) -> ([u64; 4], [usize; 6]) {
        let steps = job::BIT_IDENTITY_STEPS;
        let (q, q_stack) = self.measure(|| job::qnhmc_bit_identity::<T>(seed, steps));
        let (h, h_stack) =
            self.measure(|| job::hamcmc_bit_identity::<T>(seed.wrapping_add(1), steps));
        let mut nuts = [0u64; 2];
        let mut nuts_stack = [0usize; 2];
        let mut drawing_stack = [0usize; 2];
        for (k, metric) in job::NutsMetric::ALL.into_iter().enumerate() {
            let mut built = 0;
            let (hash, used) = self.measure(|| {
                job::nuts_bit_identity_traced::<T>(
                    metric,
                    seed.wrapping_add(2 + k as u64),
                    steps,
                    &mut || {
                        built = platform::peak_stack().0;
                        platform::repaint_stack();
                    },
                )
            });
            nuts[k] = hash;
            nuts_stack[k] = used.max(built);
            self.max = self.max.max(built);
            drawing_stack[k] = used;
        }
        (
            [q, h, nuts[0], nuts[1]],
            [
                q_stack,
                h_stack,
                nuts_stack[0],
                nuts_stack[1],
                drawing_stack[0],
                drawing_stack[1],
            ],
        )
    }
}

fn stack_line(out: &mut dyn Write, label: &str, stack: [usize; 4], drawing: Option<[usize; 2]>) {
    if stack.iter().all(|&s| s == 0) {
        return;
    }
    let _ = write!(
        out,
        "peak stack {label}: qnhmc={} hamcmc={} nuts-diag={} nuts-lbfgs={} bytes",
        stack[0], stack[1], stack[2], stack[3]
    );
    if let Some([diagonal, lbfgs]) = drawing {
        let _ = write!(
            out,
            " (NUTS once built: nuts-diag={diagonal} nuts-lbfgs={lbfgs})"
        );
    }
    let _ = writeln!(out);
}

/// Runs every job, logs to `out`, returns whether all checks passed and the
/// largest peak stack of a job (0 where it is not measured).
pub fn run(out: &mut dyn Write) -> (bool, usize) {
    let _ = writeln!(out, "qnmc firmware example on {}", platform::NAME);
    let mut ok = true;

    let [q64, h64] = job::sampler_sizes::<f64>();
    let [q32, h32] = job::sampler_sizes::<f32>();
    let [qmin, hmin] = job::minimum_scalars();
    let _ = writeln!(
        out,
        "state bytes: qnhmc<f32,3,4>={q32} (min {}) qnhmc<f64,3,4>={q64} (min {}) \
         hamcmc<f32,3,3>={h32} (min {}) hamcmc<f64,3,3>={h64} (min {})",
        qmin * 4,
        qmin * 8,
        hmin * 4,
        hmin * 8
    );
    nuts_state_line(out, "f32", job::nuts_sizes::<f32>(), 4);
    nuts_state_line(out, "f64", job::nuts_sizes::<f64>(), 8);

    // The `negative-control` feature hashes a chain from another seed: the
    // comparison must then fail and the firmware exit non-zero (.ci/embedded
    // checks that it does).
    let seed = if cfg!(feature = "negative-control") {
        let _ = writeln!(out, "negative control: hashing the f64 chains of seed + 1");
        job::BIT_IDENTITY_SEED + 1
    } else {
        job::BIT_IDENTITY_SEED
    };
    let mut stack = StackMeter { max: 0 };
    let (f64_hashes, f64_stack) = stack.bit_identity::<f64>(seed);
    ok &= hex_line(out, "f64", f64_hashes, job::EXPECTED_BIT_IDENTITY_F64);
    let (f32_hashes, f32_stack) = stack.bit_identity::<f32>(job::BIT_IDENTITY_SEED);
    ok &= hex_line(out, "f32", f32_hashes, job::EXPECTED_BIT_IDENTITY_F32);

    // Each job judges and logs its own result, so no check is kept in this
    // frame while the next job runs.
    let seed = job::POSTERIOR_SEED;
    let mut posterior_stack = [0; 4];
    let jobs: [&dyn Fn() -> job::PosteriorCheck; 4] = [
        &|| job::qnhmc_posterior::<f32>(seed),
        &|| job::hamcmc_posterior::<f32>(seed),
        &|| job::nuts_posterior::<f32>(job::NutsMetric::Diagonal, seed),
        &|| job::nuts_posterior::<f32>(job::NutsMetric::Lbfgs, seed),
    ];
    for (k, run_job) in jobs.into_iter().enumerate() {
        let (passed, used) = stack.measure(|| posterior_line(out, &run_job()));
        ok &= passed;
        posterior_stack[k] = used;
    }

    let ((), _) = stack.measure(|| step_cost(out));
    for (label, s) in [
        ("f64 bit-identity chains", f64_stack),
        ("f32 bit-identity chains", f32_stack),
    ] {
        stack_line(out, label, [s[0], s[1], s[2], s[3]], Some([s[4], s[5]]));
    }
    stack_line(out, "f32 posterior jobs", posterior_stack, None);
    (ok, stack.max)
}

#[cfg(target_os = "none")]
fn step_cost(out: &mut dyn Write) {
    let mut counter = platform::counter();
    // Calibration: a loop of exactly 2 instructions per iteration.
    let iterations = 1_000_000u32;
    let start = counter();
    platform::calibration_loop(iterations);
    let ticks = counter().wrapping_sub(start);
    let insns = iterations as u64 * CALIBRATION_INSNS_PER_ITERATION;
    // Instructions per counter tick, in 1/1000.
    let milli = (insns * 1000).checked_div(ticks).unwrap_or(0);
    let _ = writeln!(
        out,
        "counter: {} ticks for {insns} instructions ({}.{:03} instructions per tick)",
        ticks,
        milli / 1000,
        milli % 1000
    );
    let warmup = 300;
    for (label, [q, h]) in [
        (
            "f32",
            job::step_costs::<f32>(&mut counter, warmup, COST_STEPS),
        ),
        (
            "f64",
            job::step_costs::<f64>(&mut counter, warmup, COST_STEPS),
        ),
    ] {
        let per = |total: u64| total * milli / 1000 / COST_STEPS as u64;
        let _ = writeln!(
            out,
            "step cost {label}: qnhmc={} hamcmc={} instructions per draw (mean of {COST_STEPS} draws after {warmup})",
            per(q),
            per(h)
        );
    }
    for label in ["f32", "f64"] {
        let costs = if label == "f32" {
            job::nuts_step_costs::<f32>(&mut counter, warmup, COST_STEPS)
        } else {
            job::nuts_step_costs::<f64>(&mut counter, warmup, COST_STEPS)
        };
        let _ = write!(out, "step cost {label} nuts:");
        for (metric, [total, leapfrogs]) in job::NutsMetric::ALL.into_iter().zip(costs) {
            // Leapfrog steps per draw, in 1/100.
            let centi = leapfrogs * 100 / COST_STEPS as u64;
            let _ = write!(
                out,
                " {}={} ({}.{:02} leapfrog steps)",
                metric.name(),
                total * milli / 1000 / COST_STEPS as u64,
                centi / 100,
                centi % 100
            );
        }
        let _ = writeln!(
            out,
            " instructions per draw (mean of {COST_STEPS} draws after {warmup} warm-up draws)"
        );
    }
}

#[cfg(not(target_os = "none"))]
fn step_cost(out: &mut dyn Write) {
    let _ = writeln!(out, "step cost: measured on the emulators only");
}

#[cfg(not(target_os = "none"))]
fn main() {
    platform::main();
}
