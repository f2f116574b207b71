//! Targets with U and ∇U written by hand, each with its known posterior.
//! Every hand-written gradient is checked against finite differences in
//! the target's tests. German credit, Australian and Heart are vendored in
//! `host/data/` with their attribution; the other data sets are read from
//! the shared data folder ([`crate::shared_data`]) or made from a seed.
//!
//! - [`CorrelatedGaussian`]: N(0, c·11ᵀ + a·I), the QNHMC paper's benchmark
//!   (c = 1, a = 4, D = 100), and [`GaussianModel`], its run-time
//!   [`crate::model::Model`] (`--target gaussian`);
//! - [`GaussianCovariance`]: N(μ, Σ) with Σ read from a CSV file (`gaussian-cov`);
//! - [`LinearGaussianModel`]: the HAMCMC paper's linear Gaussian model (eq. 14),
//!   full-data and minibatch, with its analytic posterior, and
//!   [`LinearGaussian`], its run-time model (`--target linear-gaussian`);
//! - [`LogisticRegression`]: Bayesian logistic regression with a compile-time
//!   dimension, with the German credit data built in (D = 25);
//! - [`LogisticRegressionModel`]: the same with a run-time dimension, on the
//!   papers' five data sets ([`LogregDataset`]) or a user's CSV file;
//!   [`FashionMnist`] builds one on two Fashion-MNIST classes (d = 784,
//!   `--target fashion-mnist`, the stand-in for the QNHMC paper's MNIST 7 vs
//!   9) and keeps their test images as a [`HeldOutSet`];
//! - matrix factorisation on ratings: [`GaussianPmf`] (the HAMCMC paper's
//!   eq. 17, `--target pmf`) and [`BayesianPmf`] (Salakhutdinov and Mnih's
//!   model with diagonal precisions, the QNHMC paper's Table 3, `bpmf`), on
//!   [`Ratings`] from a seeded MovieLens-shaped [`SyntheticRecipe`] or a
//!   MovieLens `ratings.dat` ([`read_movielens`]);
//! - [`Posteriordb`]: eight schools (non-centred), sblrc-blr and arK from
//!   posteriordb, with reference moments from its reference draws;
//! - toys with exact normalised densities and artificial gradient noise
//!   ([`AnalyticToy`]): the AMAGOLD paper's [`DoubleWell`], [`AmagoldDist1`]
//!   and [`AmagoldDist2`], the complete recipe's [`RecipeQuadratic`],
//!   [`RecipeQuartic`] and [`RecipeCorrelated2d`] with its metric
//!   [`RecipeMetric`]; [`DensityGrid`] turns densities and draws into cell
//!   probabilities and (symmetric) KL divergences;
//! - [`YearsRegression`]: a linear regression on uncentred calendar years
//!   (posterior corr(a, b) ≈ −0.99995), with its posterior moments computed
//!   exactly (a, b integrated out, 1-D quadrature over log σ);
//! - funnel geometry, data built in: [`Funnel`], Neal's funnel
//!   (`--target funnel`, exact moments); [`EightSchoolsCentered`], the
//!   centred eight-schools model (`eight-schools-centered`, τ = eˢ with its
//!   Jacobian); [`StochasticVolatility`], a centred AR(1)
//!   stochastic-volatility model on 100 simulated returns
//!   (`stochastic-volatility`, φ = tanh a and σ = eˢ with their Jacobians),
//!   and [`StochasticVolatilityNoncentered`], the same posterior non-centred
//!   (`stochastic-volatility-noncentered`, the coordinates of
//!   `stochastic-volatility`'s reference run); [`RadonCentered`], a centred
//!   varying-intercept regression on 197 simulated observations in 20
//!   groups of 1–40 (`radon-centered`), and [`RadonNoncentered`], its
//!   non-centred twin (`radon-noncentered`); [`HierLogisticCentered`], a
//!   centred hierarchical logistic regression (varying intercepts, two
//!   coefficients) on 80 simulated outcomes in 12 groups of 2–16
//!   (`hier-logistic-centered`), and [`HierLogisticNoncentered`], its twin
//!   (`hier-logistic-noncentered`); [`LatentGpCentered`], a centred latent
//!   Gaussian process (squared-exponential kernel) with Poisson counts at 20
//!   evenly spaced inputs (`latent-gp-centered`), and [`LatentGpNoncentered`],
//!   its twin f = L z (`latent-gp-noncentered`). Their data are simulated by the
//!   SplitMix64 generator of `simulation_rng.rs`, which
//!   `compare/nutpie/models.py` repeats in Python.

mod amagold_2d;
pub(crate) mod analytic_toy;
mod correlated_gaussian;
mod density_grid;
mod double_well;
mod eight_schools_centered;
mod funnel;
mod gaussian_covariance;
mod hier_logistic_centered;
mod latent_gp_centered;
mod linear_gaussian;
mod logistic_regression;
mod logreg;
mod pmf;
mod posteriordb;
mod radon_centered;
mod recipe_toys;
mod simulation_rng;
mod stochastic_volatility;
#[cfg(test)]
mod testing;
mod years_regression;

pub use amagold_2d::{AmagoldDist1, AmagoldDist2};
pub use analytic_toy::{AnalyticToy, InvalidNoise};
pub use correlated_gaussian::{
    CorrelatedGaussian, GaussianModel, GaussianModelError, correlated_gaussian_potential,
};
pub use density_grid::{BadGrid, DensityGrid, Histogram, kl_divergence, symmetric_kl_divergence};
pub use double_well::DoubleWell;
pub use eight_schools_centered::EightSchoolsCentered;
pub use funnel::{Funnel, FunnelDimensionError};
pub use gaussian_covariance::{GaussianCovariance, SYMMETRY_TOLERANCE};
pub use hier_logistic_centered::{HierLogisticCentered, HierLogisticNoncentered};
pub use latent_gp_centered::{LatentGpCentered, LatentGpNoncentered};
pub use linear_gaussian::{LinearGaussian, LinearGaussianError, LinearGaussianModel, Posterior};
pub use logistic_regression::LogisticRegression;
pub use logreg::{
    CsvOptions, DataDescription, FashionMnist, FashionMnistNotFound, HeldOutSet, LabelMapping,
    LogisticRegressionModel, LogregDataset, Missing, PAPER_PRIOR_VARIANCE, UnknownDataset,
};
pub use pmf::{
    BayesianPmf, BlockPartition, GaussianPmf, Hyper, MAX_SHARE_PER_USER, MIN_PER_USER, PmfError,
    Ratings, RatingsSource, SPLIT_SEED, SYNTHETIC_SEED, SyntheticRecipe, TEST_FRACTION,
    TRAIN_RMSE_SAMPLE, TRUE_RANK, Triples, factor_dot, read_movielens,
};
pub use posteriordb::{
    Posteriordb, PosteriordbPosterior, ReferenceSummary, UnknownPosterior,
    summarize_reference_draws,
};
pub use radon_centered::{RadonCentered, RadonNoncentered};
pub use recipe_toys::{
    RECIPE_GRADIENT_NOISE_SD, RecipeCorrelated2d, RecipeMetric, RecipeQuadratic, RecipeQuartic,
};
pub use stochastic_volatility::{StochasticVolatility, StochasticVolatilityNoncentered};
pub use years_regression::{
    QUADRATURE_HALF_WIDTH, QUADRATURE_POINTS, YearsPosterior, YearsRegression,
};
