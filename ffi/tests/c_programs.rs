//! The C programs against the host static library: the header compiles as
//! strict C99, the C checks of bad input pass under AddressSanitizer and
//! UndefinedBehaviorSanitizer, and the C example's chain is the Rust API's,
//! bit for bit.
//!
//! The static library is `$QNMC_FFI_STATICLIB` if set (ffi/scripts/check.sh
//! builds it first), else built here by ffi/scripts/build-staticlib.sh.
//! Needs `cc` (gcc) with the sanitizers.

mod model;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use model::{Readings, rust_nuts_chain};
use qnmc::adaptation::{LbfgsEstimator, LbfgsEstimatorSettings};
use qnmc_ffi::LBFGS_MEMORY;

const STRICT: [&str; 5] = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ffi-c");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The host static library.
fn staticlib() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        if let Some(path) = std::env::var_os("QNMC_FFI_STATICLIB") {
            return PathBuf::from(path);
        }
        let out = Command::new("bash")
            .arg(root().join("ffi/scripts/build-staticlib.sh"))
            .output()
            .expect("bash");
        assert!(
            out.status.success(),
            "build-staticlib.sh failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    })
}

/// Compiles C sources with `flags` against the static library.
fn compile(sources: &[PathBuf], flags: &[&str], output: &Path) {
    let out = Command::new("cc")
        .args(STRICT)
        .args(flags)
        .arg("-I")
        .arg(root().join("ffi/include"))
        .args(sources)
        .arg(staticlib())
        .arg("-lm")
        .arg("-o")
        .arg(output)
        .output()
        .expect("cc");
    assert!(
        out.status.success(),
        "cc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn run(program: &Path, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{} failed:\n{}\n{}",
        program.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_header_is_strict_c99() {
    let source = out_dir().join("header_only.c");
    std::fs::write(
        &source,
        "#include \"qnmc.h\"\n#include \"qnmc.h\"\nint main(void) { return QNMC_OK; }\n",
    )
    .unwrap();
    for std in ["-std=c99", "-std=c11", "-std=c17"] {
        let out = Command::new("cc")
            .args(STRICT)
            .arg(std)
            .arg("-fsyntax-only")
            .arg("-I")
            .arg(root().join("ffi/include"))
            .arg(&source)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{std}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn c_bad_input_checks_pass_under_sanitizers() {
    let program = out_dir().join("bad_input");
    compile(
        &[root().join("ffi/tests/c/bad_input.c")],
        &[
            "-g",
            "-O1",
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
        ],
        &program,
    );
    let output = run(&program, &[]);
    assert!(output.starts_with("c api checks: all "), "{output}");
}

/// FNV-1a over 64-bit words, as main.c hashes its chain.
fn fnv_word(mut h: u64, w: u64) -> u64 {
    for b in w.to_le_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The Rust API's chain of the C examples' model (seed 42, 1000 warm-up
/// and 1000 kept draws, the C API's defaults) on `data`: each draw's line
/// as main.c's `--print-draws` prints it, the chain hash both C programs
/// print, and the kept draws' means of offset, gain and σ.
fn rust_chain(data: &Readings) -> (Vec<String>, u64, [f64; 3]) {
    let mut estimator = LbfgsEstimatorSettings::new(0.0);
    estimator.max_pairs = LBFGS_MEMORY;
    let mut lines = Vec::new();
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    let mut sums = [0.0; 3];
    rust_nuts_chain::<f64, LbfgsEstimator<f64, 3, LBFGS_MEMORY>>(
        estimator,
        data,
        42,
        1000,
        2000,
        &mut |x, stats, warmup, log_p| {
            let k = lines.len();
            lines.push(format!(
                "draw {k} {} {:016x} {:016x} {:016x} {:016x} {}",
                i32::from(warmup),
                x[0].to_bits(),
                x[1].to_bits(),
                x[2].to_bits(),
                log_p.to_bits(),
                stats.leapfrog_steps
            ));
            for v in x {
                hash = fnv_word(hash, v.to_bits());
            }
            hash = fnv_word(hash, stats.step_size.to_bits());
            hash = fnv_word(
                hash,
                (u64::from(stats.leapfrog_steps) << 8) | u64::from(stats.divergent),
            );
            if !warmup {
                sums[0] += x[0] / 1000.0;
                sums[1] += x[1] / 1000.0;
                sums[2] += (data.exp)(x[2]) / 1000.0;
            }
        },
    );
    (lines, hash, sums)
}

/// The C firmware (`ffi/examples/firmware/main.c` and its model.c, with
/// the portable exp), built for the host, prints the Rust API's chain
/// hash; `ffi/examples/firmware/check.sh` requires the Cortex-M4F under
/// QEMU to print the same line as this host build, so the device's chain
/// is the Rust chain, bit for bit.
#[test]
fn the_c_firmware_chain_is_the_rust_chain() {
    let here = root().join("ffi/examples/firmware");
    let program = out_dir().join("firmware-host");
    compile(
        &[
            here.join("main.c"),
            here.join("model.c"),
            here.join("platform_host.c"),
        ],
        &["-O2", "-ffp-contract=off"],
        &program,
    );
    let output = run(&program, &[]);
    let (_, hash, sums) = rust_chain(&Readings::portable());
    let hash_line = format!("chain hash {hash:016x}");
    assert!(
        output.lines().any(|l| l == hash_line),
        "{hash_line}\n{output}"
    );
    assert!((sums[2] - 0.1).abs() < 0.01, "{sums:?}");
}

#[test]
fn the_c_example_chain_is_the_rust_chain() {
    let program = out_dir().join("example");
    compile(
        &[root().join("ffi/examples/host/main.c")],
        &["-O2", "-ffp-contract=off"],
        &program,
    );
    let output = run(&program, &["--print-draws"]);
    // The same model, seed and settings through the Rust API (size 3).
    let (expected, hash, sums) = rust_chain(&Readings::new());
    let draws: Vec<&str> = output.lines().filter(|l| l.starts_with("draw ")).collect();
    assert_eq!(draws.len(), expected.len(), "{output}");
    for (c, rust) in draws.iter().zip(&expected) {
        assert_eq!(c, rust, "the C chain left the Rust chain");
    }
    let hash_line = format!("chain hash {hash:016x}");
    assert!(
        output.lines().any(|l| l == hash_line),
        "{hash_line}\n{output}"
    );
    // And the posterior is where the data were made.
    assert!((sums[0] - 0.5).abs() < 0.03, "{sums:?}");
    assert!((sums[1] - 2.0).abs() < 0.03, "{sums:?}");
    assert!((sums[2] - 0.1).abs() < 0.01, "{sums:?}");
}
