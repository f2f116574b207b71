//! The samplers, one file each, named after their papers.
//!
//! | sampler | paper | exact? |
//! |---|---|---|
//! | [`Hmc`] | Neal 2011 | yes |
//! | [`Qnhmc`] | Fu, Luo & Zhang 2016, Alg. 2 | adaptive; exact once the memory is frozen |
//! | [`Hamcmc`] | Şimşekli et al. 2016, Alg. 1 | stochastic gradient: biased for fixed ε |

pub mod amagold;
pub mod ensemble;
mod hamcmc;
mod hmc;
mod metropolis;
mod qnhmc;
pub mod recipe;

pub use hamcmc::{Hamcmc, HamcmcSettings, StepSizeSchedule};
pub use hmc::{Hmc, HmcSettings, InverseMass};
pub use metropolis::DIVERGENCE_THRESHOLD;
pub use qnhmc::{MemoryUpdate, Qnhmc, QnhmcMass, QnhmcSettings};
