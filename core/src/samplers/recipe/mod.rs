//! The complete recipe for stochastic-gradient MCMC (Ma, Chen & Fox 2015) and its named instances (being written).
