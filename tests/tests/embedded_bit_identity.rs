//! Bit identity of the firmware's chains (ALGORITHMS-independent: a property of
//! the core using libm only and no fused multiply-add).
//!
//! The firmware, the WebAssembly module and this test run the same code
//! (`firmware-example/src/job.rs`, included here verbatim). Here the host
//! computes the hashes of the bit-identity chains and of the WebAssembly
//! statistics; they must equal the numbers baked into
//! `firmware-example/src/expected.rs` (which each firmware compares against,
//! exiting non-zero on a mismatch) and `tests/node/expected.json` (which the
//! `node --test` test compares the .wasm against). `QNMC_BLESS=1` rewrites both
//! files instead of failing. `.ci/embedded` also compares the hash lines printed
//! by every emulator with the host's.
//!
//! Negative controls: another seed, one more draw and a one-ulp change of a
//! hashed value all change the hash.

#[allow(dead_code)]
#[path = "../../firmware-example/src/job.rs"]
mod job;

const EXPECTED_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../firmware-example/src/expected.rs"
);
const JSON_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/node/expected.json");

fn bless(name: &str, value: &str) {
    let text = std::fs::read_to_string(EXPECTED_PATH).unwrap();
    let prefix = format!("pub const {name}:");
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with(&prefix) {
                let ty_end = l.find('=').unwrap();
                format!("{}= {value};", &l[..ty_end])
            } else {
                l.to_string()
            }
        })
        .collect();
    std::fs::write(EXPECTED_PATH, out.join("\n") + "\n").unwrap();
}

fn hex(h: [u64; 2]) -> String {
    format!("[0x{:016x}, 0x{:016x}]", h[0], h[1])
}

#[test]
fn baked_hashes_match_host() {
    let f64_hash = job::bit_identity::<f64>(job::BIT_IDENTITY_SEED, job::BIT_IDENTITY_STEPS);
    let f32_hash = job::bit_identity::<f32>(job::BIT_IDENTITY_SEED, job::BIT_IDENTITY_STEPS);
    println!("f64 {} f32 {}", hex(f64_hash), hex(f32_hash));
    let stale =
        f64_hash != job::EXPECTED_BIT_IDENTITY_F64 || f32_hash != job::EXPECTED_BIT_IDENTITY_F32;
    if stale && std::env::var_os("QNMC_BLESS").is_some() {
        bless("EXPECTED_BIT_IDENTITY_F64", &hex(f64_hash));
        bless("EXPECTED_BIT_IDENTITY_F32", &hex(f32_hash));
        return;
    }
    assert!(
        !stale,
        "expected.rs is stale: f64 {} f32 {} (rerun with QNMC_BLESS=1)",
        hex(f64_hash),
        hex(f32_hash)
    );
}

/// The JSON the node test reads: hashes as hex strings (BigInt in JS), the
/// statistic as its f64 bit pattern and as a number.
fn expected_json() -> String {
    let f64_hash = job::bit_identity::<f64>(job::BIT_IDENTITY_SEED, job::BIT_IDENTITY_STEPS);
    let f32_hash = job::bit_identity::<f32>(job::BIT_IDENTITY_SEED, job::BIT_IDENTITY_STEPS);
    let mut cases = Vec::new();
    for (seed, steps) in job::WASM_CASES {
        let v = job::chain_mean::<f64>(seed, steps);
        let v32 = job::chain_mean::<f32>(seed, steps);
        cases.push(format!(
            "    {{ \"seed\": {seed}, \"steps\": {steps}, \"f64\": {v:?}, \"f64_bits\": \"{:016x}\", \"f32\": {v32:?}, \"f32_bits\": \"{:016x}\" }}",
            v.to_bits(),
            v32.to_bits()
        ));
    }
    format!(
        "{{\n  \"generated_by\": \"QNMC_BLESS=1 cargo test -p qnmc-tests --test embedded_bit_identity\",\n  \"seed\": {},\n  \"steps\": {},\n  \"bit_identity_f64\": [\"{:016x}\", \"{:016x}\"],\n  \"bit_identity_f32\": [\"{:016x}\", \"{:016x}\"],\n  \"chain_mean\": [\n{}\n  ]\n}}\n",
        job::BIT_IDENTITY_SEED,
        job::BIT_IDENTITY_STEPS,
        f64_hash[0],
        f64_hash[1],
        f32_hash[0],
        f32_hash[1],
        cases.join(",\n")
    )
}

#[test]
fn node_expectations_match_host() {
    let want = expected_json();
    let have = std::fs::read_to_string(JSON_PATH).unwrap_or_default();
    if have != want && std::env::var_os("QNMC_BLESS").is_some() {
        std::fs::write(JSON_PATH, &want).unwrap();
        return;
    }
    assert_eq!(
        have, want,
        "tests/node/expected.json is stale (rerun with QNMC_BLESS=1)"
    );
}

#[test]
fn hashes_are_sensitive() {
    let base = job::bit_identity::<f64>(job::BIT_IDENTITY_SEED, 50);
    assert_eq!(
        base,
        job::bit_identity::<f64>(job::BIT_IDENTITY_SEED, 50),
        "deterministic"
    );
    let other_seed = job::bit_identity::<f64>(job::BIT_IDENTITY_SEED + 7, 50);
    let longer = job::bit_identity::<f64>(job::BIT_IDENTITY_SEED, 51);
    assert_ne!(base[0], other_seed[0]);
    assert_ne!(base[1], other_seed[1]);
    assert_ne!(base[0], longer[0]);
    assert_ne!(base[1], longer[1]);
    // One ulp.
    let x = 0.3f64;
    let mut a = job::Fnv::new();
    let mut b = job::Fnv::new();
    a.real(x);
    b.real(f64::from_bits(x.to_bits() + 1));
    assert_ne!(a.0, b.0);
    // f32 and f64 chains differ (the f32 chain really runs in f32).
    assert_ne!(base, job::bit_identity::<f32>(job::BIT_IDENTITY_SEED, 50));
}

#[test]
fn chain_mean_is_near_the_posterior_mean() {
    // A sanity check of the WebAssembly statistic: 2000 draws, MCSE ≈ 0.03 sd.
    let v = job::chain_mean::<f64>(2, 2000);
    assert!(
        (v - job::POSTERIOR_MEAN[1]).abs() < 0.3 * job::POSTERIOR_SD[1],
        "{v}"
    );
}
