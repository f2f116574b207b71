//! Emits the cfg `runtime_avx2` when the kernels choose between their
//! portable and AVX2 copies at run time: the `runtime-avx2` feature (or its
//! alias `std`) is on, the target is x86-64, and AVX2 is not already built
//! in (`-C target-feature=+avx2` or a `target-cpu` that has it, where the
//! portable code is compiled with AVX2 anyway). The source then names that
//! one condition instead of spelling it out.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(runtime_avx2)");
    println!("cargo::rerun-if-changed=build.rs");
    let feature = std::env::var_os("CARGO_FEATURE_RUNTIME_AVX2").is_some();
    let x86_64 = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|arch| arch == "x86_64");
    let built_in = std::env::var("CARGO_CFG_TARGET_FEATURE")
        .is_ok_and(|features| features.split(',').any(|f| f == "avx2"));
    if feature && x86_64 && !built_in {
        println!("cargo::rustc-cfg=runtime_avx2");
    }
}
