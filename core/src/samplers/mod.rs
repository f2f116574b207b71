//! The samplers, one file each, named after their papers; every one
//! implements [`Sampler`] and [`Step`] (`sampler.rs`), so generic code names
//! none of them.
//!
//! | sampler | paper | exact? |
//! |---|---|---|
//! | [`Hmc`] | Neal 2011 | yes |
//! | [`Qnhmc`] | Fu, Luo & Zhang 2016, Alg. 2 | adaptive; exact once the memory is frozen |
//! | [`Nuts`] | Hoffman & Gelman 2014 with Stan's multinomial sampling and generalised U-turn (`nuts/`, `docs/NUTS.md`), any [`Metric`](crate::metric::Metric) | yes |
//! | [`Hamcmc`] | Şimşekli et al. 2016, Alg. 1 | stochastic gradient: biased for fixed ε |
//! | [`HmcBfgs`] | Zhang & Sutton 2011, Alg. 1 (`ensemble/hmc_bfgs.rs`) | yes (ensemble of K chains) |
//! | [`MhBfgs`] | Zhang & Sutton 2011, §4.1 eq. 14 (`ensemble/mh_bfgs.rs`) | yes (ensemble of K chains) |
//! | [`Amagold`] | Zhang, Cooper & De Sa 2020, Alg. 2 (`amagold.rs`) | yes (one full-data MH test per T steps) |
//! | [`Sgld`], [`Psgld`], [`Sgrld`], [`DenseSgrld`], [`Sghmc`], [`Sgnht`], [`Sgrhmc`] | Ma, Chen & Fox 2015 and the papers it unifies (`recipe/`) | stochastic gradient: biased O(ε) |

pub mod amagold;
mod dimension;
#[cfg(all(test, feature = "runtime-dimension"))]
mod dimension_tests;
pub mod ensemble;
mod hamcmc;
mod hmc;
mod in_place_constructors;
mod metropolis;
pub mod nuts;
mod qnhmc;
pub mod recipe;
mod sampler;

pub use amagold::{Amagold, AmagoldSettings, L2mc, MomentumRefresh};
pub use ensemble::{HmcBfgs, HmcBfgsSettings, MhBfgs, MhBfgsProposal, MhBfgsSettings};
pub use hamcmc::{Hamcmc, HamcmcSettings, StepSizeSchedule};
pub use hmc::{Hmc, HmcSettings};
pub use metropolis::DIVERGENCE_THRESHOLD;
pub use nuts::{Nuts, NutsSettings, NutsStats};
pub use qnhmc::{MemoryUpdate, Qnhmc, QnhmcMass, QnhmcSettings};
pub use recipe::{
    DenseSgrld, DenseSgrldSettings, Psgld, PsgldSettings, Sghmc, SghmcSettings, SghmcUpdate, Sgld,
    SgldSettings, Sgnht, SgnhtSettings, Sgrhmc, SgrhmcSettings, Sgrld, SgrldSettings,
};
pub use sampler::{Sampler, Step};
