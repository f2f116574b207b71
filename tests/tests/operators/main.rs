//! Operators: the linear algebra and the adaptation under the samplers,
//! against dense references and closed forms.
//!
//! | module | property | operators (used by) |
//! |---|---|---|
//! | `oracles` | every L-BFGS operator equals the textbook dense BFGS matrices (1e-10 in f64), on random, QNHMC and HAMCMC pairs; the pair ring against a `VecDeque` | `LbfgsMemory`, `PairRing` (QNHMC, HAMCMC, HMC-BFGS, MH-BFGS) |
//! | `metric_identities` | the metrics' operators equal dense matrices from their definitions (f64 to 1e-10, f32 to a stated bound) | `LbfgsMetric`, `DenseMetric` (NUTS) |
//! | `qnhmc_memory_scaling` | the memory QNHMC freezes after warm-up is close to the posterior covariance with the newest-pair γ, not with γ = 1 | `LbfgsMemory` scaling (QNHMC) |
//! | `autodiff_gradients` | forward and reverse automatic differentiation of U written once over `Scalar` equal every built-in target's hand-written ∇U (1e-12 relative per coordinate); a small tape and a NaN give NaN, not a panic | `ForwardGradient`, `ReverseGradient` |
//! | `adaptation_dual_averaging` | dual averaging equals Stan's recursion; acceptance within 0.8 ± 0.05 after warm-up; adapted samplers exact; bad input | `DualAveraging`, `Warmup` (HMC, QNHMC) |

mod common;

mod adaptation_dual_averaging;
mod autodiff_gradients;
mod metric_identities;
mod oracles;
mod qnhmc_memory_scaling;
