//! Helpers shared by the reference-chain modules.

use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

/// The sampler stream of a seed (the core and its reference draw from two
/// copies of it).
pub fn rng(seed: u64) -> XorShiftRng {
    XorShiftRng::seed_from_u64(seed)
}
