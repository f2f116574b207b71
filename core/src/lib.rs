//! # qnmc: quasi-Newton Monte Carlo without a heap
//!
//! `qnmc` draws samples from a density π(θ) ∝ exp(−U(θ)) with quasi-Newton
//! samplers that run anywhere Rust does: a Cortex-M microcontroller, WebAssembly,
//! another `no_std` crate or a desktop. The crate is `no_std`, never allocates,
//! never panics on bad input, and works in `f32` and `f64`. The dimension `D` and
//! the L-BFGS memory `M` are const generics, so every sampler is a plain struct of
//! arrays that can sit on the stack or in a `static`.
//!
//! | sampler | paper | exact? |
//! |---|---|---|
//! | [`Nuts`] | Hoffman & Gelman 2014 (Stan's multinomial, generalised U-turn), any [`metric`] | yes |
//! | [`Hmc`] | Neal 2011 (baseline) | yes |
//! | [`Qnhmc`] | Fu, Luo & Zhang 2016, Algorithm 2 | adaptive; exact once the memory is frozen |
//! | [`Hamcmc`] | Şimşekli et al. 2016, Algorithm 1 | stochastic gradient, biased for fixed ε |
//! | [`HmcBfgs`], [`MhBfgs`] | Zhang & Sutton 2011 | yes (ensemble of K chains) |
//! | [`Amagold`] | Zhang, Cooper & De Sa 2020, Algorithm 2 (L2MC with full batches) | yes |
//! | [`Sgld`], [`Psgld`], [`Sgrld`], [`Sghmc`], [`Sgnht`], [`Sgrhmc`] | Ma, Chen & Fox 2015 (complete recipe) and the papers it unifies | stochastic gradient, biased |
//!
//! Step sizes of the Hamiltonian samplers can be tuned by dual averaging during
//! warm-up ([`adaptation`]).
//!
//! The L-BFGS engine they share ([`lbfgs::LbfgsMemory`]) provides H·v, B·v, the
//! product-form square-root factors S·z and C·z (in the corrected form of
//! `ALGORITHMS.md` §1) and log det H.
//!
//! No gradient at hand? Write U once, generic over [`Scalar`], and
//! [`autodiff`] differentiates it exactly, forward ([`ForwardGradient`]) or
//! reverse ([`ReverseGradient`], on a fixed-capacity tape), without a heap.
//!
//! ## Example
//!
//! Implement [`Potential`] for the model, pick a generator implementing
//! `rand_core::Rng`, and call `step` once per draw:
//!
//! ```
//! use qnmc::{Potential, Qnhmc, QnhmcSettings, MemoryUpdate};
//! use rand_core::SeedableRng;
//! use rand_xorshift::XorShiftRng;
//!
//! /// A correlated 2-D Gaussian, U(θ) = ½ θᵀ A θ.
//! struct Gaussian;
//! impl Potential<f32, 2> for Gaussian {
//!     fn potential_and_gradient(&self, x: &[f32; 2], g: &mut [f32; 2]) -> f32 {
//!         g[0] = 2.0 * x[0] - 1.5 * x[1];
//!         g[1] = -1.5 * x[0] + 2.0 * x[1];
//!         0.5 * (x[0] * g[0] + x[1] * g[1])
//!     }
//! }
//!
//! let mut settings = QnhmcSettings::new(0.25, 10, 4);
//! settings.memory_update = MemoryUpdate::FreezeAfter(200); // exact after warm-up
//! let mut sampler = Qnhmc::<f32, 2, 4>::new(settings, [1.0, -1.0], &Gaussian).unwrap();
//! let mut rng = XorShiftRng::seed_from_u64(42);
//! let (mut sum, mut accepted) = ([0.0f32; 2], 0);
//! for draw in 0..2200 {
//!     let stats = sampler.step(&Gaussian, &mut rng);
//!     if draw >= 200 {
//!         accepted += stats.accepted as u32;
//!         for i in 0..2 { sum[i] += sampler.position()[i]; }
//!     }
//! }
//! assert!(accepted > 1000);
//! assert!(sum[0].abs() / 2000.0 < 0.3 && sum[1].abs() / 2000.0 < 0.3);
//! ```
//!
//! ## State in a `static`
//!
//! A sampler holds no references (the model and the generator are passed to
//! `step`), so it can live in a `static` behind whatever lock the platform has —
//! `critical_section::Mutex<RefCell<…>>` on a microcontroller, or here `std`'s:
//!
//! ```
//! use std::sync::Mutex;
//! use qnmc::Hmc;
//! static CHAIN: Mutex<Option<Hmc<f32, 3>>> = Mutex::new(None);
//! # use qnmc::{HmcSettings, Potential};
//! # struct Iso;
//! # impl Potential<f32, 3> for Iso {
//! #     fn potential_and_gradient(&self, x: &[f32; 3], g: &mut [f32; 3]) -> f32 {
//! #         *g = *x;
//! #         0.5 * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2])
//! #     }
//! # }
//! *CHAIN.lock().unwrap() = Some(Hmc::new(HmcSettings::new(0.3, 5), [0.0; 3], &Iso).unwrap());
//! assert!(CHAIN.lock().unwrap().is_some());
//! ```
//!
//! ## Bad input
//!
//! Invalid settings are an [`Error`] at construction. In the Metropolis samplers
//! a NaN or infinite U or ∇U is a rejected, counted divergence
//! ([`StepStats::divergent`]); in HAMCMC the step returns an error and the
//! sampler is exactly as before the call.
//!
//! ## Features
//!
//! - `defmt`: derives `defmt::Format` for [`Error`] and [`StepStats`].
//! - `alloc`: constructors that return a sampler in a `Box`, allocated
//!   zeroed and initialised where it lies, so it never crosses the stack
//!   ([`in_place`], e.g. `AdaptiveNuts::new_boxed`).
//! - `runtime-avx2` (alias `std`): on x86-64, the hot kernels also get an
//!   AVX2 copy, chosen at run time when the processor has AVX2; same bits,
//!   more speed ([`kernels`]). Off by default so that the core
//!   stays `no_std`.

#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]
// At most 100 lines of code per function outside tests (clippy.toml), or
// an allow with its reason beside the function: scripts/size-limits.py.
#![warn(clippy::too_many_lines)]
#![cfg_attr(
    test,
    allow(clippy::too_many_lines, reason = "tests are not held to the limit")
)]
#![deny(unsafe_code)]
// Numeric kernels index several parallel arrays at once; index loops say that best.
#![allow(clippy::needless_range_loop)]

#[cfg(all(runtime_avx2, not(test)))]
extern crate std;

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod adaptation;
pub mod autodiff;
mod error;
pub mod in_place;
mod integrator;
pub mod kernels;
pub mod lbfgs;
pub mod metric;
pub mod random;
mod real;
pub mod samplers;
pub mod saved_state;
mod scalar;
mod stats;
mod target;
#[cfg(test)]
mod test_targets;

pub use adaptation::{DualAveraging, DualAveragingSettings, Warmup};
pub use autodiff::{AutodiffModel, ForwardGradient, ReverseGradient};
pub use error::Error;
pub use real::Real;
pub use samplers::{
    Amagold, AmagoldSettings, DenseSgrld, DenseSgrldSettings, Hamcmc, HamcmcSettings, Hmc, HmcBfgs,
    HmcBfgsSettings, HmcSettings, L2mc, MemoryUpdate, MhBfgs, MhBfgsProposal, MhBfgsSettings,
    MomentumRefresh, Nuts, NutsSettings, NutsStats, Psgld, PsgldSettings, Qnhmc, QnhmcMass,
    QnhmcSettings, Sampler, Sghmc, SghmcSettings, SghmcUpdate, Sgld, SgldSettings, Sgnht,
    SgnhtSettings, Sgrhmc, SgrhmcSettings, Sgrld, SgrldSettings, Step, StepSizeSchedule,
};
pub use scalar::Scalar;
pub use stats::StepStats;
pub use target::{FullBatch, MinibatchPotential, Potential};

/// The Rust examples of `docs/SAMPLERS.md` (QNHMC, building in place),
/// compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/SAMPLERS.md")]
struct SamplersDoctests;
