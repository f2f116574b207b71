//! Measures the stack the default NUTS needs, built in place on the heap:
//! construction (`AdaptiveNuts::new_boxed`), and the draws of a warm-up of
//! 300 plus 100 kept draws, at D = 25, 100, 1000 (20 pairs, f64).
//!
//! `cargo run -p qnmc-tests-debug --example stack_use` (a debug build, the
//! worst case) or `--release`. Method: stack painting. A 6 MiB thread fills
//! the stack below its current frame with a pattern, runs the work, and
//! reports how deep the pattern was overwritten. Reading the stack below the
//! current frame is outside what Rust defines; this is a measuring tool, not
//! a test.

use qnmc_tests_debug::{DefaultNuts, boxed_default_nuts, run};

const PAINTED: usize = 5 << 20;
const PATTERN: u64 = 0xA5A5_A5A5_A5A5_A5A5;

#[inline(never)]
fn paint() -> usize {
    let here = 0u8;
    let top = (&here as *const u8 as usize) & !7;
    for address in (top - PAINTED..top - 4096).step_by(8) {
        // SAFETY (in practice): unused stack of this thread below the frame.
        unsafe { core::ptr::write_volatile(address as *mut u64, PATTERN) }
    }
    top
}

#[inline(never)]
fn depth(top: usize) -> usize {
    let mut address = top - PAINTED;
    while address < top - 4096 {
        // SAFETY (in practice): as in `paint`.
        if unsafe { core::ptr::read_volatile(address as *const u64) } != PATTERN {
            break;
        }
        address += 8;
    }
    top - address
}

fn measure<const D: usize>() {
    let top = paint();
    let mut chain = boxed_default_nuts::<D>(300);
    let construction = depth(top);
    let top = paint();
    run::<D>(&mut chain, 7, 400);
    let draws = depth(top);
    println!(
        "D = {D:4}: sampler {:7} B on the heap; stack: construction {:6} B, draws {:6} B",
        core::mem::size_of::<DefaultNuts<D>>(),
        construction,
        draws
    );
}

fn main() {
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!("default NUTS (quasi-Newton metric, 20 pairs, f64), {profile} build:");
    std::thread::Builder::new()
        .stack_size(6 << 20)
        .spawn(|| {
            measure::<25>();
            measure::<100>();
            measure::<1000>();
        })
        .expect("a thread")
        .join()
        .expect("measured");
}
