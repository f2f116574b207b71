//! Build-time limits of the C API, from the environment (defaults below):
//! `QNMC_FFI_MAX_DIM` (largest dimension a state holds), `QNMC_FFI_LBFGS_MEMORY`
//! (pairs M of the quasi-Newton metric), `QNMC_FFI_MAX_TREE_DEPTH` (deepest
//! NUTS tree the storage holds). They fix the state sizes
//! (`qnmc_nuts_state_size`), not the header.

use std::env;
use std::fs;
use std::path::PathBuf;

fn limit(name: &str, default: usize, max: usize) -> usize {
    println!("cargo:rerun-if-env-changed={name}");
    let value = match env::var(name) {
        Ok(text) => text
            .trim()
            .parse::<usize>()
            .unwrap_or_else(|_| panic!("{name}={text:?} is not a whole number")),
        Err(_) => default,
    };
    assert!(
        (1..=max).contains(&value),
        "{name}={value} must be in 1..={max}"
    );
    value
}

fn main() {
    let max_dimension = limit("QNMC_FFI_MAX_DIM", 32, 1 << 20);
    let memory = limit("QNMC_FFI_LBFGS_MEMORY", 5, 64);
    let depth = limit("QNMC_FFI_MAX_TREE_DEPTH", 10, 30);
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    fs::write(
        out.join("limits.rs"),
        format!(
            "/// Largest dimension a state holds (`QNMC_FFI_MAX_DIM` at build time).\n\
             pub const MAX_DIMENSION: usize = {max_dimension};\n\
             /// Curvature pairs M of the quasi-Newton metric (`QNMC_FFI_LBFGS_MEMORY`).\n\
             pub const LBFGS_MEMORY: usize = {memory};\n\
             /// Deepest NUTS tree the storage holds (`QNMC_FFI_MAX_TREE_DEPTH`).\n\
             pub const MAX_TREE_DEPTH: usize = {depth};\n"
        ),
    )
    .expect("write limits.rs");
    println!("cargo:rerun-if-changed=build.rs");
}
