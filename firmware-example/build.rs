//! Linker set-up for the bare-metal builds (`target_os = "none"`); host builds
//! (tests, clippy, `cargo run`) are untouched.
//!
//! - Cortex-M: one `memory.x` for the three QEMU boards used (mps2-an386,
//!   lm3s6965evb, microbit): 256 KiB of flash at 0 and 16 KiB of RAM at
//!   0x2000_0000 — the micro:bit's (nRF51822) sizes, so the same image fits the
//!   smallest board; `-Tlink.x` from cortex-m-rt.
//! - RISC-V (QEMU virt, loaded at 0x8000_0000 with `-bios none`): riscv-rt's
//!   regions, code and data in one 16 MiB RAM; the stack starts at the top of
//!   RAM and its peak is measured by painting (see `platform_riscv.rs`).

use std::env;
use std::fs;
use std::path::PathBuf;

const CORTEX_M_MEMORY: &str = "MEMORY
{
  FLASH : ORIGIN = 0x00000000, LENGTH = 256K
  RAM : ORIGIN = 0x20000000, LENGTH = 16K
}
";

const RISCV_MEMORY: &str = "MEMORY
{
  RAM : ORIGIN = 0x80000000, LENGTH = 16M
}
REGION_ALIAS(\"REGION_TEXT\", RAM);
REGION_ALIAS(\"REGION_RODATA\", RAM);
REGION_ALIAS(\"REGION_DATA\", RAM);
REGION_ALIAS(\"REGION_BSS\", RAM);
REGION_ALIAS(\"REGION_HEAP\", RAM);
REGION_ALIAS(\"REGION_STACK\", RAM);
";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!(
        "cargo:rustc-env=QNMC_TARGET={}",
        env::var("TARGET").unwrap_or_default()
    );
    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if os != "none" {
        return;
    }
    let memory = match arch.as_str() {
        "arm" => CORTEX_M_MEMORY,
        "riscv32" => RISCV_MEMORY,
        _ => return,
    };
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    fs::write(out.join("memory.x"), memory).expect("write memory.x");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-link-arg-bins=-Tlink.x");
}
