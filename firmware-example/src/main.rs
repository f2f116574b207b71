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
//! (f64 and f32), on-device Bayesian logistic regression with QNHMC and HAMCMC in
//! f32, the state sizes and (under `qemu -icount shift=0`) the instruction cost
//! of one draw — and exits with 0 only if every check passed.
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

fn hex_line(out: &mut dyn Write, label: &str, hashes: [u64; 2], expected: [u64; 2]) -> bool {
    let ok = hashes == expected;
    let _ = writeln!(
        out,
        "bit-identity {label} qnhmc={:016x} hamcmc={:016x} {}",
        hashes[0],
        hashes[1],
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

/// Runs every job, logs to `out`, returns whether all checks passed.
pub fn run(out: &mut dyn Write) -> bool {
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

    // The `negative-control` feature hashes a chain from another seed: the
    // comparison must then fail and the firmware exit non-zero (.ci/embedded
    // checks that it does).
    let seed = if cfg!(feature = "negative-control") {
        let _ = writeln!(out, "negative control: hashing the f64 chains of seed + 1");
        job::BIT_IDENTITY_SEED + 1
    } else {
        job::BIT_IDENTITY_SEED
    };
    let f64_hashes = job::bit_identity::<f64>(seed, job::BIT_IDENTITY_STEPS);
    ok &= hex_line(out, "f64", f64_hashes, job::EXPECTED_BIT_IDENTITY_F64);
    let f32_hashes = job::bit_identity::<f32>(job::BIT_IDENTITY_SEED, job::BIT_IDENTITY_STEPS);
    ok &= hex_line(out, "f32", f32_hashes, job::EXPECTED_BIT_IDENTITY_F32);

    ok &= posterior_line(out, &job::qnhmc_posterior::<f32>(job::POSTERIOR_SEED));
    ok &= posterior_line(out, &job::hamcmc_posterior::<f32>(job::POSTERIOR_SEED));

    step_cost(out);
    ok
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
}

#[cfg(not(target_os = "none"))]
fn step_cost(out: &mut dyn Write) {
    let _ = writeln!(out, "step cost: measured on the emulators only");
}

#[cfg(not(target_os = "none"))]
fn main() {
    platform::main();
}
