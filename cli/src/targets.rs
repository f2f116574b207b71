//! The `--target` catalogue: names, one-line descriptions, and how each is
//! built from the command-line options.

use std::path::PathBuf;

use super::CliError;
use super::args::TargetArgs;
use qnmc_host::model::Model;
use qnmc_host::targets::{
    AmagoldDist1, AmagoldDist2, BayesianPmf, CsvOptions, DoubleWell, EightSchoolsCentered,
    FashionMnist, Funnel, GaussianCovariance, GaussianModel, GaussianPmf, HierLogisticCentered,
    HierLogisticNoncentered, LatentGpCentered, LatentGpNoncentered, LinearGaussian,
    LogisticRegressionModel, LogregDataset, Posteriordb, PosteriordbPosterior, RadonCentered,
    RadonNoncentered, Ratings, RecipeCorrelated2d, RecipeQuadratic, RecipeQuartic, SYNTHETIC_SEED,
    StochasticVolatility, StochasticVolatilityNoncentered, SyntheticRecipe, YearsRegression,
    read_movielens,
};

/// Every `--target` name with a one-line description, as `qnmc list` prints them.
pub const TARGETS: [(&str, &str); 34] = [
    (
        "gaussian",
        "N(0, 11'+4I), the QNHMC paper's benchmark (--dimension, default 100)",
    ),
    (
        "gaussian-cov",
        "N(0, S) with S read from --covariance FILE.csv",
    ),
    (
        "linear-gaussian",
        "HAMCMC paper's linear Gaussian model, N = 1000 (--dimension, default 10)",
    ),
    (
        "logreg-german",
        "logistic regression, German credit (D = 25, built in)",
    ),
    (
        "logreg-australian",
        "logistic regression, Australian credit (D = 15, built in)",
    ),
    (
        "logreg-heart",
        "logistic regression, Statlog heart (D = 14, built in)",
    ),
    (
        "logreg-pima",
        "logistic regression, Pima diabetes (D = 8, needs the shared data folder)",
    ),
    (
        "logreg-ripley",
        "logistic regression, Ripley's synthetic data, cubic (D = 7, needs the shared data folder)",
    ),
    (
        "logreg-csv",
        "logistic regression on --data FILE.csv --label-column NAME",
    ),
    (
        "fashion-mnist",
        "logistic regression, Fashion-MNIST Sneaker vs Ankle boot, 784 pixels, no intercept: the \
         offline stand-in for the QNHMC paper's MNIST 7 vs 9 (--classes A,B; needs Debian's \
         dataset-fashion-mnist or --data DIR)",
    ),
    (
        "double-well",
        "AMAGOLD paper's 1-D double well with gradient noise",
    ),
    ("amagold-dist1", "AMAGOLD paper's 2-D distribution 1"),
    ("amagold-dist2", "AMAGOLD paper's 2-D distribution 2"),
    (
        "recipe-quadratic",
        "complete recipe's U = theta^2/2 with gradient noise",
    ),
    (
        "recipe-quartic",
        "complete recipe's U = theta^4 - 2 theta^2 with gradient noise",
    ),
    ("recipe-2d", "complete recipe's correlated 2-D Gaussian"),
    (
        "eight-schools",
        "posteriordb eight_schools_noncentered (D = 10, needs the shared data folder)",
    ),
    (
        "sblrc-blr",
        "posteriordb sblrc-blr linear regression (D = 6, needs the shared data folder)",
    ),
    (
        "ark",
        "posteriordb arK AR(5) (D = 7, needs the shared data folder)",
    ),
    (
        "years-regression",
        "linear regression on calendar years 1950-2020, corr(a, b) = -0.99995 (D = 3, exact)",
    ),
    (
        "funnel",
        "Neal's funnel v ~ N(0, 9), x_i ~ N(0, e^v) (--dimension, default 10, exact)",
    ),
    (
        "eight-schools-centered",
        "centred eight schools, posteriordb eight_schools_centered (D = 10, built in)",
    ),
    (
        "stochastic-volatility",
        "centred AR(1) stochastic volatility, 100 simulated returns (D = 103, built in)",
    ),
    (
        "stochastic-volatility-noncentered",
        "the same posterior non-centred, h = mu + sigma * AR(1) filter of N(0, 1) z (D = 103)",
    ),
    (
        "radon-centered",
        "centred varying-intercept regression, 197 simulated observations in 20 groups of 1-40 \
         (D = 24, built in)",
    ),
    (
        "radon-noncentered",
        "the same posterior non-centred, alpha = mu_alpha + sigma_alpha * z (D = 24)",
    ),
    (
        "hier-logistic-centered",
        "centred hierarchical logistic regression, varying intercepts, 80 simulated outcomes in \
         12 groups of 2-16 (D = 16, built in)",
    ),
    (
        "hier-logistic-noncentered",
        "the same posterior non-centred, alpha = mu + tau * z (D = 16)",
    ),
    (
        "latent-gp-centered",
        "centred latent Gaussian process, squared-exponential kernel, Poisson counts at 20 \
         evenly spaced inputs (D = 23, built in)",
    ),
    (
        "latent-gp-noncentered",
        "the same posterior non-centred, f = L(alpha, rho) * z with K = L L' (D = 23)",
    ),
    (
        "pmf",
        "HAMCMC's Gaussian matrix factorisation, K = 50, on synthetic MovieLens-1M-shaped \
         ratings (D = 496 150) or --data ratings.dat",
    ),
    (
        "pmf-small",
        "pmf on a tenth of the users and items: 604 x 388, 20 004 synthetic ratings (D = 49 600)",
    ),
    (
        "bpmf",
        "Bayesian PMF (Salakhutdinov & Mnih, diagonal precisions), K = 10, synthetic \
         MovieLens-1M-shaped ratings (D = 99 270) or --data ratings.dat",
    ),
    (
        "bpmf-small",
        "bpmf on 604 x 388 users x items, 20 004 synthetic ratings (D = 9 960)",
    ),
];

/// The targets that read a MovieLens `ratings.dat` with `--data` in place
/// of their synthetic ratings.
pub const RATINGS_FILE_TARGETS: [&str; 2] = ["pmf", "bpmf"];

/// The ratings of a matrix-factorisation target: `--data`'s MovieLens file
/// (for `pmf` and `bpmf`), else the seeded synthetic set of its size.
fn factorisation_ratings(args: &TargetArgs) -> Result<Ratings, CliError> {
    let name = args.target.as_str();
    let small = name.ends_with("-small");
    if let (true, Some(path)) = (small, args.data.as_ref()) {
        return Err(CliError::Usage(format!(
            "target `{name}` is a fixed synthetic set; --data {} goes with `pmf` or `bpmf`",
            path.display()
        )));
    }
    let Some(path) = args.data.as_ref() else {
        let recipe = if small {
            SyntheticRecipe::movielens_1m_tenth(SYNTHETIC_SEED)
        } else {
            SyntheticRecipe::movielens_1m(SYNTHETIC_SEED)
        };
        return recipe.build().map_err(usage);
    };
    let ratings = read_movielens(path)?;
    println!(
        "{name}: {} ({} ratings: {} users x {} movies, {:.2} % observed; {} held out as the \
         test set, seed {})",
        path.display(),
        ratings.len(),
        ratings.users(),
        ratings.items(),
        100.0 * ratings.density(),
        ratings.test().len(),
        qnmc_host::targets::SPLIT_SEED,
    );
    Ok(ratings)
}

/// The shared data folder: `--shared-data`, else `$QNMC_SHARED_DATA`, else
/// `shared/data` beside the repository ([`qnmc_host::shared_data::locate`]); never
/// the current directory.
pub fn shared_data_dir(args: &TargetArgs) -> Result<PathBuf, qnmc_host::shared_data::NotFound> {
    qnmc_host::shared_data::locate(args.shared_data.as_deref())
}

fn need_shared(args: &TargetArgs) -> Result<PathBuf, CliError> {
    shared_data_dir(args).map_err(|e| {
        CliError::Usage(format!(
            "target `{}` reads the shared data folder (not part of the repository): {e}",
            args.target
        ))
    })
}

fn usage<E: std::fmt::Display>(e: E) -> CliError {
    CliError::Usage(e.to_string())
}

/// Builds the target named in `args`.
#[allow(
    clippy::too_many_lines,
    reason = "the --target catalogue: one arm per target name (the names of TARGETS), a table written out"
)]
pub fn build_target(args: &TargetArgs) -> Result<Box<dyn Model>, CliError> {
    let name = args.target.as_str();
    let model: Box<dyn Model> = match name {
        "gaussian" => Box::new(GaussianModel::paper(args.dimension.unwrap_or(100)).map_err(usage)?),
        "linear-gaussian" => {
            Box::new(LinearGaussian::paper(args.dimension.unwrap_or(10), 2016).map_err(usage)?)
        }
        "gaussian-cov" => {
            let path = args.covariance.as_ref().ok_or_else(|| {
                CliError::Usage("target `gaussian-cov` needs --covariance FILE.csv".into())
            })?;
            let model = GaussianCovariance::from_csv(path)?;
            if let Some(d) = args.dimension {
                if d != model.dimension() {
                    return Err(CliError::Usage(format!(
                        "--dimension {d} does not match the covariance in {}, which is {} x {}",
                        path.display(),
                        model.dimension(),
                        model.dimension()
                    )));
                }
            }
            Box::new(model)
        }
        "logreg-csv" => {
            let path = args.data.as_ref().ok_or_else(|| {
                CliError::Usage("target `logreg-csv` needs --data FILE.csv".into())
            })?;
            let label = args.label_column.as_ref().ok_or_else(|| {
                CliError::Usage("target `logreg-csv` needs --label-column NAME".into())
            })?;
            let mut options = CsvOptions::new(label.clone());
            options.standardize = !args.no_standardize;
            options.intercept = !args.no_intercept;
            if let Some(v) = args.prior_variance {
                options.prior_variance = v;
            }
            if let Some(separator) = args.delimiter {
                options.separator = separator;
            }
            options.drop_columns = args.drop_columns.clone();
            if let Some(missing) = args.missing {
                options.missing = missing;
            }
            let model = LogisticRegressionModel::from_csv(path, &options)?;
            // Say how the file was read: which coefficient is which column and
            // which label became 1, so nothing about the fit is implicit.
            let data = model.data_description();
            let dropped = match data.dropped_rows.as_slice() {
                [] => String::new(),
                lines => {
                    let first: Vec<String> = lines.iter().take(5).map(usize::to_string).collect();
                    format!(
                        "; {} rows with a missing value dropped (lines {}{})",
                        lines.len(),
                        first.join(", "),
                        if lines.len() > 5 { ", …" } else { "" }
                    )
                }
            };
            println!(
                "logreg-csv: {} ({} rows, {} with label 1{dropped}); labels {}; covariates {}; prior N(0, {}·I)\n  coefficients: {}",
                path.display(),
                model.len(),
                model.positives(),
                model.label_mapping(),
                if options.standardize {
                    "standardised (mean 0, sd 1); model.json and coefficients.csv give the original scale"
                } else {
                    "as in the file"
                },
                options.prior_variance,
                model.column_names().join(", ")
            );
            Box::new(model)
        }
        "fashion-mnist" => {
            let classes = match args.classes.as_slice() {
                [] => FashionMnist::MNIST_STAND_IN,
                &[a, b] if a != b => [a, b],
                other => {
                    return Err(CliError::Usage(format!(
                        "--classes takes two different classes 0-9 separated by a comma \
                         (e.g. 7,9), not {other:?}"
                    )));
                }
            };
            let dir = FashionMnist::locate(args.data.as_deref()).map_err(usage)?;
            let start = std::time::Instant::now();
            let data = FashionMnist::load(&dir, classes)?;
            // Say what was read and how, as logreg-csv does.
            let labels = data.train.label_mapping();
            println!(
                "fashion-mnist: {} ({:.1} s): {} training images, {} of them label 1; {} test \
                 images held out; labels {labels}; covariates: the {} pixels / 255, not \
                 standardised, no intercept; prior N(0, {}·I)",
                dir.display(),
                start.elapsed().as_secs_f64(),
                data.train.len(),
                data.train.positives(),
                data.test.len(),
                data.train.dimension(),
                data.train.prior_variance(),
            );
            Box::new(data.train)
        }
        _ if name.starts_with("logreg-") => {
            let dataset: LogregDataset = name.parse().map_err(usage)?;
            match LogisticRegressionModel::builtin(dataset) {
                Some(model) => Box::new(model),
                None => {
                    let dir = need_shared(args)?.join("logreg");
                    Box::new(LogisticRegressionModel::from_dataset(dataset, &dir)?)
                }
            }
        }
        "eight-schools" | "sblrc-blr" | "ark" => {
            let posterior = PosteriordbPosterior::ALL
                .into_iter()
                .find(|p| p.target_name() == name)
                .ok_or_else(|| CliError::Usage(format!("unknown posterior `{name}`")))?;
            let root = need_shared(args)?.join("posteriordb/posterior_database");
            Box::new(Posteriordb::load(posterior, &root)?)
        }
        "double-well" => Box::new(DoubleWell::paper()),
        "amagold-dist1" => Box::new(AmagoldDist1::paper()),
        "amagold-dist2" => Box::new(AmagoldDist2::paper()),
        "recipe-quadratic" => Box::new(RecipeQuadratic::paper()),
        "recipe-quartic" => Box::new(RecipeQuartic::paper()),
        "recipe-2d" => Box::new(RecipeCorrelated2d::paper()),
        "years-regression" => Box::new(YearsRegression::new()),
        "funnel" => {
            Box::new(Funnel::new(args.dimension.unwrap_or(Funnel::NEAL_DIMENSION)).map_err(usage)?)
        }
        "eight-schools-centered" => Box::new(EightSchoolsCentered::new()),
        "stochastic-volatility" => Box::new(StochasticVolatility::new()),
        "stochastic-volatility-noncentered" => Box::new(StochasticVolatilityNoncentered::new()),
        "radon-centered" => Box::new(RadonCentered::new()),
        "radon-noncentered" => Box::new(RadonNoncentered::new()),
        "hier-logistic-centered" => Box::new(HierLogisticCentered::new()),
        "hier-logistic-noncentered" => Box::new(HierLogisticNoncentered::new()),
        "latent-gp-centered" => Box::new(LatentGpCentered::new()),
        "latent-gp-noncentered" => Box::new(LatentGpNoncentered::new()),
        "pmf" | "pmf-small" => Box::new(
            GaussianPmf::new(factorisation_ratings(args)?, GaussianPmf::PAPER_RANK)
                .map_err(usage)?
                .with_name(name),
        ),
        "bpmf" | "bpmf-small" => Box::new(
            BayesianPmf::new(factorisation_ratings(args)?, BayesianPmf::PAPER_RANK)
                .map_err(usage)?
                .with_name(name),
        ),
        _ => {
            let names: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
            return Err(CliError::Usage(format!(
                "unknown target `{name}`; valid targets: {}",
                names.join(", ")
            )));
        }
    };
    match args.dimension {
        Some(d) if d != model.dimension() => Err(CliError::Usage(format!(
            "--dimension {d} does not match target `{name}`, which has dimension {}",
            model.dimension()
        ))),
        _ => Ok(model),
    }
}
