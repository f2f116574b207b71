//! Placeholder.

use super::{ReproduceOptions, Reproduction};

/// Runs the experiment.
pub fn run(options: &ReproduceOptions) -> Reproduction {
    let _ = options;
    Reproduction::default()
}
