//! MCMC diagnostics (being written).
