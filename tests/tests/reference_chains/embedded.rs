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
#[path = "../../../firmware-example/src/job.rs"]
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

fn hex(h: [u64; 4]) -> String {
    let words: Vec<String> = h.iter().map(|w| format!("0x{w:016x}")).collect();
    format!("[{}]", words.join(", "))
}

/// `["…", "…", …]`: the hashes as JSON strings.
fn json_hex(h: [u64; 4]) -> String {
    let words: Vec<String> = h.iter().map(|w| format!("\"{w:016x}\"")).collect();
    format!("[{}]", words.join(", "))
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
        "{{\n  \"generated_by\": \"QNMC_BLESS=1 cargo test -p qnmc-tests --test reference_chains embedded::\",\n  \"seed\": {},\n  \"steps\": {},\n  \"samplers\": [\"qnhmc\", \"hamcmc\", \"nuts-diag\", \"nuts-lbfgs\"],\n  \"bit_identity_f64\": {},\n  \"bit_identity_f32\": {},\n  \"chain_mean\": [\n{}\n  ]\n}}\n",
        job::BIT_IDENTITY_SEED,
        job::BIT_IDENTITY_STEPS,
        json_hex(f64_hash),
        json_hex(f32_hash),
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
    for k in 0..4 {
        assert_ne!(base[k], other_seed[k], "chain {k}: seed");
        assert_ne!(base[k], longer[k], "chain {k}: length");
    }
    // One ulp.
    let x = 0.3f64;
    let mut a = job::Fnv::new();
    let mut b = job::Fnv::new();
    a.real(x);
    b.real(f64::from_bits(x.to_bits() + 1));
    assert_ne!(a.0, b.0);
    // f32 and f64 chains differ (the f32 chain really runs in f32).
    let base32 = job::bit_identity::<f32>(job::BIT_IDENTITY_SEED, 50);
    for k in 0..4 {
        assert_ne!(base[k], base32[k], "chain {k}: f32 vs f64");
    }
}

/// The NUTS bit-identity chains really exercise what they are meant to: the
/// warm-up adapts (the step size changes, a metric update is made), the kept
/// draws after warm-up all use one step size and build trees without
/// divergence, and the L-BFGS chain's metric has curvature directions.
/// (Warm-up draws may diverge: right after a metric update Stan's step-size
/// heuristic can overshoot on this target, whose potential grows only
/// linearly in the tails, and dual averaging then brings ε down.)
#[test]
fn nuts_bit_identity_chains_cover_the_warmup() {
    for (k, metric) in job::NutsMetric::ALL.into_iter().enumerate() {
        let mut step_sizes = Vec::new();
        let mut depths = Vec::new();
        let mut divergent = [0u32; 2];
        let init = [0.5, -0.5, 0.5];
        job::nuts_run::<f64>(
            metric,
            job::NUTS_BIT_IDENTITY_WARMUP,
            job::BIT_IDENTITY_STEPS,
            init,
            job::BIT_IDENTITY_SEED + 2 + k as u64,
            &mut |_, stats, warming_up| {
                step_sizes.push(stats.step_size);
                depths.push(stats.tree_depth);
                divergent[warming_up as usize] += stats.divergent as u32;
            },
        );
        assert_eq!(step_sizes.len(), job::BIT_IDENTITY_STEPS as usize);
        let warmup = job::NUTS_BIT_IDENTITY_WARMUP as usize;
        let kept = &step_sizes[warmup..];
        assert!(kept.iter().all(|&e| e == kept[0]), "{metric:?}: fixed ε");
        let distinct = step_sizes[..warmup]
            .windows(2)
            .filter(|w| w[0] != w[1])
            .count();
        assert!(distinct > warmup / 2, "{metric:?}: ε adapts ({distinct})");
        assert!(
            depths[warmup..].iter().all(|&d| d >= 1),
            "{metric:?}: depth ≥ 1"
        );
        assert_eq!(divergent[0], 0, "{metric:?}: divergences after warm-up");
        println!(
            "{metric:?}: final ε {:.4}, max depth {}, warm-up divergences {}",
            kept[0],
            depths.iter().max().unwrap(),
            divergent[1]
        );
    }
    // The L-BFGS chain starts from the L-BFGS optimisation's metric, which has
    // curvature directions; its one window end then updates the metric. (With
    // one pair, the window's estimate currently always ends as the diagonal
    // alone: the Fisher criterion compares candidates on the window's last M
    // draws and accepts every candidate when fewer than 2 are kept, so the
    // last, pair-free candidate wins; docs/EMBEDDED.md.)
    let built = job::with_nuts_lbfgs::<f64>(
        job::NUTS_BIT_IDENTITY_WARMUP,
        [0.5, -0.5, 0.5],
        &mut |chain| {
            let mut rng = <rand_xorshift::XorShiftRng as rand_core::SeedableRng>::seed_from_u64(
                job::BIT_IDENTITY_SEED + 3,
            );
            chain.step(&job::Logistic, &mut rng);
            let metric = chain.sampler().metric();
            assert!(metric.rank() > 0, "L-BFGS directions from the optimisation");
            assert_eq!(metric.pairs_used(), job::NUTS_LBFGS_MEMORY);
            for _ in 1..job::NUTS_BIT_IDENTITY_WARMUP {
                chain.step(&job::Logistic, &mut rng);
            }
            assert_eq!(chain.metric_updates(), (1, 0));
            println!(
                "L-BFGS metric after warm-up: rank {}",
                chain.sampler().metric().rank()
            );
        },
    );
    assert!(built);
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
