//! # qnmc-host
//!
//! The std side of qnmc: targets written by hand with their analytic posteriors,
//! MCMC diagnostics that match Stan's numbers (bulk/tail ESS, R̂, MCSE), and the
//! `qnmc` command-line tool.

#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod diagnostics;
pub mod targets;
