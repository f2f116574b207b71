//! The stack tests' chains (`tests/default_thread_stack.rs`) over many
//! seeds, to see how far their loose checks are from failing:
//! `cargo run --release -p qnmc-tests-debug --example seed_scan [-- SEEDS]`
//! (default 40; a release build gives the same draws as the tests' debug
//! build, faster).
//!
//! For each seed it prints the kept draws' mean of Σθᵢ in sds of one draw,
//! their mean spread's distance from 4 in sds of one draw (the tests'
//! bounds are 5 for both), and whether the bound the tests used before
//! session 19 (5 sds/√kept + 0.5 sd on the mean of Σθᵢ, which took the kept
//! draws to be nearly independent) would have held.

use qnmc_tests_debug::{boxed_default_nuts, run};

fn scan<const D: usize>(warmup: u64, draws: usize, seeds: u64) {
    let sum_sd = ((D * D + 4 * D) as f64).sqrt();
    let spread_sd = 4.0 * (2.0 / (D - 1) as f64).sqrt();
    let (mut worst_sum, mut worst_spread, mut old_failures) = (0_f64, 0_f64, 0);
    for seed in 1..=seeds {
        let mut chain = boxed_default_nuts::<D>(warmup);
        let (sum, spread, kept) = run(&mut chain, seed, draws);
        let (z_sum, z_spread) = (sum / sum_sd, (spread - 4.0) / spread_sd);
        let old_bound = 5.0 / (kept as f64).sqrt() + 0.5;
        old_failures += usize::from(z_sum.abs() >= old_bound);
        worst_sum = worst_sum.max(z_sum.abs());
        worst_spread = worst_spread.max(z_spread.abs());
        println!(
            "D = {D}, seed {seed}: {kept} kept, mean of the sum {z_sum:.2} sds, spread {z_spread:.2} sds{}",
            if z_sum.abs() >= old_bound {
                " (fails the old bound)"
            } else {
                ""
            }
        );
    }
    println!(
        "D = {D}: largest |sum| {worst_sum:.2} sds, largest |spread - 4| {worst_spread:.2} sds, \
         old bound failed on {old_failures} of {seeds} seeds"
    );
}

fn main() {
    let seeds = std::env::args()
        .nth(1)
        .map_or(40, |s| s.parse().expect("a number of seeds"));
    scan::<100>(300, 400, seeds);
    scan::<1000>(150, 180, seeds);
}
