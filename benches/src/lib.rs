//! Criterion benchmarks live in `benches/step.rs`; this crate has no library code.
