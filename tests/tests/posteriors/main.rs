//! Posteriors: the samplers' draws have the right distribution (or, for the
//! biased stochastic-gradient samplers, the predicted one), judged by
//! z-scores with Monte-Carlo standard errors, with negative controls showing
//! each judge can fail.
//!
//! | module | property | samplers |
//! |---|---|---|
//! | `hmc` | z-tests on the QNHMC paper's 100-D Gaussian and the HAMCMC paper's linear Gaussian model; HAMCMC's bias within a stated allowance | HMC, frozen QNHMC (both masses), HAMCMC |
//! | `nuts` | z-tests on a correlated and a badly scaled Gaussian | NUTS (identity, diagonal f64/f32, dense, L-BFGS metrics) |
//! | `ensemble` | z-tests on the paper Gaussian (D = 10, 50, 100) and a logistic regression; dual averaging tunes ε | HMC-BFGS, MH-BFGS (random walk, Newton) |
//! | `amagold` | z-tests on Gaussians; the double-well toy, unbiased where SGHMC is not | AMAGOLD, L2MC, core HMC |
//! | `amagold_logreg` | German-credit logistic regression against a long HMC run | AMAGOLD, L2MC, adapted HMC and QNHMC |
//! | `geweke` | Geweke's joint-distribution test | HMC, NUTS (identity, diagonal) |
//! | `recipe_stationary` | exact stationary covariances (discrete Lyapunov); bias linear in ε | SGLD, pSGLD (frozen), SGHMC (both orders), SGNHT |
//! | `recipe_toy` | the recipe's double-well toy: corrected samplers right, naive ones wrong | SGRLD, SGRHMC (with and without Γ) |
//! | `sghmc_stability` | position-first SGHMC is stable where the recipe Euler order is not | SGHMC |
//! | `embedded` | the firmware job's posterior: quadrature truth, z-scores justifying its tolerances | QNHMC, HAMCMC, NUTS (f32, f64) |
//!
//! Seeds are fixed; each module's doc states its thresholds and why.

mod amagold;
mod amagold_logreg;
mod embedded;
mod ensemble;
mod geweke;
mod hmc;
mod nuts;
mod recipe_stationary;
mod recipe_toy;
mod sghmc_stability;
