//! The command line, declared with clap's derive: commands and options.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use qnmc::lbfgs::InitialScaling;
use qnmc::{QnhmcMass, SghmcUpdate};

use qnmc_host::input::Separator;
use qnmc_host::run::{MAX_TREE_DEPTH, MetricKind, SamplerKind};
use qnmc_host::targets::Missing;

/// qnmc: quasi-Newton Monte Carlo samplers, targets and diagnostics.
#[derive(Debug, Parser)]
#[command(name = "qnmc", version, about, long_about = None, after_help = super::EXIT_CODES)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The `qnmc` commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Sample a target; write CmdStan CSVs and summary.json (charts with
    /// --plot); print a summary and the run's diagnostics.
    #[command(after_help = super::EXIT_CODES)]
    Run(RunArgs),
    /// Draw the charts of a finished run from its output folder.
    #[command(after_help = super::EXIT_CODES)]
    Plot(PlotArgs),
    /// Sample (or read CmdStan CSVs) and compare with the target's known
    /// posterior; exit 1 when the check fails.
    #[command(after_help = super::EXIT_CODES)]
    Check(CheckArgs),
    /// Reproduce a paper's table or figure (NAME or `all`).
    #[command(after_help = super::EXIT_CODES)]
    Reproduce(ReproduceArgs),
    /// HMC, QNHMC and HAMCMC on the 100-D Gaussian, then the harness on built-in data.
    Demo(DemoArgs),
    /// List the targets and samplers.
    List,
}

fn parse_gamma(s: &str) -> Result<InitialScaling<f64>, String> {
    if s == "newest" {
        return Ok(InitialScaling::NewestPair(1.0));
    }
    match s.parse::<f64>() {
        Ok(g) if g.is_finite() && g > 0.0 => Ok(InitialScaling::Fixed(g)),
        _ => Err(format!("expected a positive number or `newest`, got `{s}`")),
    }
}

fn parse_mass(s: &str) -> Result<QnhmcMass, String> {
    match s {
        "inverse-hessian" => Ok(QnhmcMass::InverseHessian),
        "identity" => Ok(QnhmcMass::Identity),
        _ => Err(format!(
            "expected `inverse-hessian` (M = C) or `identity` (the paper's M = I), got `{s}`"
        )),
    }
}

fn parse_sghmc_update(s: &str) -> Result<SghmcUpdate, String> {
    match s {
        "position-first" => Ok(SghmcUpdate::PositionFirst),
        "recipe-euler" => Ok(SghmcUpdate::RecipeEuler),
        _ => Err(format!(
            "expected `position-first` (Chen et al.'s Algorithm 2) or `recipe-euler` \
             (the complete recipe's eq. 18), got `{s}`"
        )),
    }
}

fn parse_metric(s: &str) -> Result<MetricKind, String> {
    s.parse::<MetricKind>()
}

fn parse_sampler(s: &str) -> Result<SamplerKind, String> {
    s.parse::<SamplerKind>().map_err(|e| e.to_string())
}

/// A whole number, written with or without a sign: a negative or too small
/// one is a range error ("must be at least 4, got -5"), not clap's "unexpected
/// argument" or "invalid digit".
fn whole_number(s: &str, min: i128, max: i128) -> Result<i128, String> {
    let n: i128 = s
        .trim()
        .parse()
        .map_err(|_| format!("expected a whole number, got `{s}`"))?;
    if n < min {
        return Err(format!("must be at least {min}, got {n}"));
    }
    if n > max {
        return Err(format!("must be at most {max}, got {n}"));
    }
    Ok(n)
}

/// A value parser for a count of at least `min`.
fn count(min: usize) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    move |s| whole_number(s, min as i128, usize::MAX as i128).map(|n| n as usize)
}

/// A value parser for a small count (steps, depths) in `min..=max`.
fn small_count(
    min: u32,
    max: u32,
) -> impl Fn(&str) -> Result<u32, String> + Clone + Send + Sync + 'static {
    move |s| whole_number(s, i128::from(min), i128::from(max)).map(|n| n as u32)
}

/// A seed: any whole number from 0 to 2^64 - 1.
fn parse_seed(s: &str) -> Result<u64, String> {
    whole_number(s, 0, i128::from(u64::MAX)).map(|n| n as u64)
}

// `run --help` and `check --help` group their options by topic, in this
// order (the flattened structs of `RunArgs` come target first).
/// What is sampled: a built-in target or a Stan model, and its data.
const POSTERIOR: &str = "Posterior";
/// Options of particular built-in targets.
const TARGET_OPTIONS: &str = "Built-in targets' options";
/// Settings every sampler has.
const SAMPLING: &str = "Sampling";
/// The default sampler's own settings.
const NUTS: &str = "NUTS (the default sampler)";
/// The fixed-length Hamiltonian and quasi-Newton samplers.
const OTHER_SAMPLERS: &str = "HMC, QNHMC, HAMCMC, HMC-BFGS";
/// The minibatch samplers.
const STOCHASTIC: &str = "Stochastic-gradient samplers and AMAGOLD";
/// Files and what is printed.
const OUTPUT: &str = "Output";

/// Sampler choice and tuning (`qnmc run`, `qnmc check`).
#[derive(Debug, Clone, Args)]
pub struct SamplerArgs {
    /// Sampler (see `qnmc list`). Default: nuts (with the quasi-Newton
    /// metric, --metric lbfgs).
    #[arg(long, value_parser = parse_sampler, default_value = "nuts", help_heading = SAMPLING)]
    pub sampler: SamplerKind,
    /// Independent chains, run in parallel.
    #[arg(long, default_value_t = 4, value_parser = count(1), help_heading = SAMPLING)]
    pub chains: usize,
    /// Seed; chain k uses a seed derived from it and k.
    #[arg(long, default_value_t = 2016, value_parser = parse_seed, help_heading = SAMPLING)]
    pub seed: u64,
    /// Warm-up iterations per chain (discarded). Default: 500 for nuts, 1000
    /// otherwise. A NUTS chain may end its warm-up sooner (two slow windows
    /// in a row kept the metric, --early-end) or later: one whose terminal
    /// buffer diverged, or that cannot move at the adapted step size, runs
    /// its terminal buffer once more (75 draws with the default metric).
    /// summary.json records each chain's warmup_draws.
    #[arg(long, value_parser = count(0), help_heading = SAMPLING)]
    pub warmup: Option<usize>,
    /// Kept draws per chain (at least 4).
    #[arg(long, default_value_t = 1000, value_parser = count(4), help_heading = SAMPLING)]
    pub draws: usize,
    /// Keep every THIN-th iteration. Default 1; for the stochastic-gradient
    /// samplers without --step-size on a target with data, the pilot's
    /// choice (half the slowest direction's relaxation time, at most 1000).
    #[arg(long, value_parser = count(1), help_heading = SAMPLING)]
    pub thin: Option<usize>,
    /// Write the warm-up's draws too (every THIN-th iteration from the
    /// first), before the kept ones in each chain's CSV, as CmdStan's
    /// save_warmup=1 does; summaries and diagnostics use the kept draws only.
    #[arg(long, help_heading = SAMPLING)]
    pub save_warmup: bool,
    /// Step size (default: dual averaging for samplers with an MH test; for
    /// the stochastic-gradient samplers a pilot's choice from the Hessian at
    /// the mode and the minibatch noise, see docs/DEFAULTS.md).
    #[arg(long, help_heading = SAMPLING)]
    pub step_size: Option<f64>,
    /// NUTS metric learned in warm-up: `identity`, `diag`, `dense` (dimension
    /// <= 100) or `lbfgs` (diagonal plus quasi-Newton pairs; the default).
    #[arg(long, value_parser = parse_metric, help_heading = NUTS)]
    pub metric: Option<MetricKind>,
    /// NUTS maximum tree depth, 1-30 (default 10, Stan's: at most 1023
    /// leapfrog steps per transition; each level doubles that).
    #[arg(long, value_parser = small_count(1, MAX_TREE_DEPTH), help_heading = NUTS)]
    pub max_tree_depth: Option<u32>,
    /// NUTS: end the warm-up once N consecutive slow windows kept the metric
    /// with no divergence and no tree at the maximum depth (default 2; 0:
    /// always run the whole --warmup).
    #[arg(long, value_name = "N", help_heading = NUTS)]
    pub early_end: Option<u32>,
    /// NUTS with --metric lbfgs, a model of dimension <= --memory: at each
    /// warm-up window's end where the gradient is close to linear in the
    /// draws, also try the metric of the window's covariances of the draws
    /// and gradients (the default; this flag is kept for older scripts).
    #[arg(long, conflicts_with = "no_window_covariance", help_heading = NUTS)]
    pub window_covariance: bool,
    /// NUTS with --metric lbfgs: learn the metric from the diagonal and the
    /// pairs between draws only, never from the window's covariances (the
    /// default before 2026-11-27).
    #[arg(long, help_heading = NUTS)]
    pub no_window_covariance: bool,
    /// NUTS with --metric lbfgs, a model of dimension <= the L-BFGS storage
    /// (--memory; 32 for 26-32 coordinates): measure the first metric by
    /// central secants at the start's optimum, and start again from the
    /// best chain's initial point a chain whose optimum is a minor mode (the
    /// default; this flag is kept for older scripts).
    #[arg(long, conflicts_with = "no_optimum_secants", help_heading = NUTS)]
    pub optimum_secants: bool,
    /// NUTS with --metric lbfgs: take the first metric from the L-BFGS
    /// path's pairs, and never restart a chain (the default before
    /// 2026-11-28; see docs/NUTS.md "Secants at the optimum").
    #[arg(long, help_heading = NUTS)]
    pub no_optimum_secants: bool,
    /// Leapfrog steps (HMC, QNHMC, HMC-BFGS) or inner steps (AMAGOLD, L2MC); default 10.
    #[arg(long, value_parser = small_count(1, u32::MAX), help_heading = OTHER_SAMPLERS)]
    pub leapfrog_steps: Option<u32>,
    /// L-BFGS memory: QNHMC pairs (1-20, default 10), HAMCMC size (5, 10, 20; default 5).
    #[arg(long, value_parser = count(1), help_heading = OTHER_SAMPLERS)]
    pub memory: Option<usize>,
    /// QNHMC mass: `inverse-hessian` (M = C = H, the default: effective
    /// inverse metric H) or `identity` (the paper's M = I: inverse metric H^2).
    #[arg(long, value_parser = parse_mass, default_value = "inverse-hessian", help_heading = OTHER_SAMPLERS)]
    pub mass: QnhmcMass,
    /// QNHMC: freeze the memory after N warm-up iterations (default: half the warm-up).
    #[arg(long, conflicts_with = "adaptive_memory", value_parser = count(0), help_heading = OTHER_SAMPLERS)]
    pub freeze_after: Option<usize>,
    /// QNHMC: the paper's adaptive memory, never frozen (not an exact kernel).
    #[arg(long, help_heading = OTHER_SAMPLERS)]
    pub adaptive_memory: bool,
    /// HAMCMC: decaying step sizes eps * t^(-KAPPA), KAPPA in (0.5, 1] (paper: 0.51).
    #[arg(long, value_name = "KAPPA", help_heading = OTHER_SAMPLERS)]
    pub step_decay: Option<f64>,
    /// QNHMC, HAMCMC: gamma of the L-BFGS base matrix gamma*I, a number or
    /// `newest` (s'y / y'y of the newest pair). Default: newest for QNHMC,
    /// 1 for HAMCMC (its paper's fixed gamma; it takes only a number).
    #[arg(long, value_parser = parse_gamma, value_name = "GAMMA|newest", help_heading = OTHER_SAMPLERS)]
    pub gamma: Option<InitialScaling<f64>>,
    /// Minibatch size of the stochastic-gradient samplers and AMAGOLD.
    #[arg(long, value_parser = count(1), help_heading = STOCHASTIC)]
    pub batch_size: Option<usize>,
    /// Friction: C of SGHMC, A of SGNHT (default 1), beta of AMAGOLD (default 0.1).
    #[arg(long, help_heading = STOCHASTIC)]
    pub friction: Option<f64>,
    /// SGHMC update order: `position-first` (the default: theta first, then r with
    /// the gradient at the new theta, Chen et al.'s Algorithm 2) or
    /// `recipe-euler` (both from the old state, the complete recipe's eq. 18).
    #[arg(long, value_parser = parse_sghmc_update, default_value = "position-first", help_heading = STOCHASTIC)]
    pub sghmc_update: SghmcUpdate,
    /// Target acceptance of the dual averaging (default 0.8; MH-BFGS 0.3).
    #[arg(long, help_heading = SAMPLING)]
    pub target_acceptance: Option<f64>,
    /// Minibatch samplers without an MH test (hamcmc, sgld, …): `lp__` for
    /// `full` (every kept draw), `none`, or `every N` kept draws; each costs a
    /// full-data pass, timed apart from sampling. Default: full up to 10 000
    /// data points, none above.
    #[arg(long, num_args = 1..=2, value_name = "full|none|every N", help_heading = STOCHASTIC)]
    pub lp: Vec<String>,
    /// Starting points: the target's initial point plus uniform(-R, R) noise
    /// (stochastic-gradient samplers with settings from the pilot: the mode
    /// plus uniform(-R, R) Laplace sds).
    #[arg(long, default_value_t = 2.0, value_name = "R", help_heading = SAMPLING)]
    pub init_radius: f64,
}

/// Target choice and its options (`Default`: every option unset, for
/// programs that build targets without the CLI, such as `compare/`).
#[derive(Debug, Clone, Default, Args)]
pub struct TargetArgs {
    /// Target (see `qnmc list`); this or --model is required.
    #[arg(long, default_value = "", hide_default_value = true, help_heading = POSTERIOR)]
    pub target: String,
    /// A Stan model compiled to a shared library with BridgeStan's C API
    /// (by BridgeStan, or offline by stan/build-model.py), instead of
    /// --target; its data with --data FILE.json.
    #[arg(long, conflicts_with = "target", value_name = "LIB.so", help_heading = POSTERIOR)]
    pub model: Option<PathBuf>,
    /// Dimension of `gaussian` (default 100), `linear-gaussian` (default 10)
    /// and `funnel` (default 10).
    #[arg(long, value_parser = count(1), help_heading = POSTERIOR)]
    pub dimension: Option<usize>,
    /// Data CSV of `logreg-csv`; MovieLens `ratings.dat` of `pmf` and
    /// `bpmf` (default: their synthetic ratings); the folder of the four IDX
    /// files of `fashion-mnist` (default: $QNMC_FASHION_MNIST, else
    /// /usr/share/datasets/fashion-mnist); JSON data of a --model (`.json`,
    /// or posteriordb's one-entry `.json.zip`).
    #[arg(long, help_heading = POSTERIOR)]
    pub data: Option<PathBuf>,
    /// Start every chain at the values in FILE.json (Stan's init format, as
    /// CmdStan's init=: the constrained parameters by name) instead of a
    /// point drawn around the model's; --init-radius is 0 unless given. For
    /// --model only.
    #[arg(long, value_name = "FILE.json", help_heading = POSTERIOR)]
    pub init: Option<PathBuf>,
    /// `fashion-mnist`: the two classes (0-9) to tell apart, label 0's
    /// first (default 7,9: Sneaker vs Ankle boot).
    #[arg(long, value_delimiter = ',', value_name = "A,B", value_parser = clap::value_parser!(u8).range(0..=9), help_heading = TARGET_OPTIONS)]
    pub classes: Vec<u8>,
    /// Label column of `logreg-csv` (header name).
    #[arg(long, help_heading = TARGET_OPTIONS)]
    pub label_column: Option<String>,
    /// `logreg-csv`: keep covariates as they are (default: standardise).
    #[arg(long, help_heading = TARGET_OPTIONS)]
    pub no_standardize: bool,
    /// `logreg-csv`: no intercept column.
    #[arg(long, help_heading = TARGET_OPTIONS)]
    pub no_intercept: bool,
    /// `logreg-csv`: prior variance of the weights (default 100).
    #[arg(long, help_heading = TARGET_OPTIONS)]
    pub prior_variance: Option<f64>,
    /// `logreg-csv`: field separator: one character, or tab, semicolon,
    /// space, whitespace (default: comma).
    #[arg(long, value_parser = Separator::from_name, value_name = "CHAR", help_heading = TARGET_OPTIONS)]
    pub delimiter: Option<Separator>,
    /// `logreg-csv`: columns to leave out (header names, separated by commas).
    #[arg(long, value_delimiter = ',', value_name = "NAMES", help_heading = TARGET_OPTIONS)]
    pub drop_columns: Vec<String>,
    /// `logreg-csv`: a missing value (empty cell or NA) is an `error` (the
    /// default) or its row is dropped (`drop`; counted in model.json).
    #[arg(long, value_name = "error|drop", help_heading = TARGET_OPTIONS)]
    pub missing: Option<Missing>,
    /// Covariance CSV of `gaussian-cov`.
    #[arg(long, help_heading = TARGET_OPTIONS)]
    pub covariance: Option<PathBuf>,
    /// The shared data folder (logreg/, posteriordb/) for logreg-pima,
    /// logreg-ripley, eight-schools, sblrc-blr and ark; default:
    /// $QNMC_SHARED_DATA, else shared/data beside the repository.
    #[arg(long, help_heading = POSTERIOR)]
    pub shared_data: Option<PathBuf>,
}

/// Where the files go.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Output folder (created; must be empty unless --force).
    #[arg(long, help_heading = OUTPUT)]
    pub output: Option<PathBuf>,
    /// Overwrite files in an existing output folder.
    #[arg(long, help_heading = OUTPUT)]
    pub force: bool,
    /// No progress bar, and no line saying what the stochastic-gradient
    /// pilot chose (the CSV headers and summary.json still record it).
    #[arg(long, help_heading = OUTPUT)]
    pub quiet: bool,
}

/// `qnmc run`.
#[derive(Debug, Clone, Args)]
#[command(allow_negative_numbers = true)]
pub struct RunArgs {
    /// Target options (first: `--help` lists the posterior's options first).
    #[command(flatten)]
    pub target: TargetArgs,
    /// Sampler options.
    #[command(flatten)]
    pub sampler: SamplerArgs,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
    /// Charts to draw (with --output): quantity names separated by commas
    /// (`lp__` for the log density), `slowest` (the 4 slowest-mixing
    /// quantities by bulk ESS, then lp__), `all` or `none`. Default: none,
    /// and a last line gives the `qnmc plot FOLDER` command that draws them.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "NAMES|slowest|all|none",
        help_heading = OUTPUT
    )]
    pub plot: Vec<String>,
    /// Fail (exit code 4) when the run has any warning (divergences, R-hat >
    /// 1.01, ESS < 100 per chain, E-BFMI < 0.3, tree depth saturation,
    /// acceptance far from its target).
    #[arg(long, help_heading = OUTPUT)]
    pub strict: bool,
    /// Continue the run that was stopped (Ctrl-C, SIGTERM, a kill) while
    /// writing into FOLDER, from its chains' checkpoints, with the options it
    /// was started with: its draws end as those of the run never stopped,
    /// bit for bit. Takes no other option but --quiet and
    /// --checkpoint-seconds.
    #[arg(long, value_name = "FOLDER", help_heading = OUTPUT)]
    pub resume: Option<PathBuf>,
    /// With --output: seconds between two checkpoints of a chain (each
    /// chain also saves one at the end of its warm-up and when it stops),
    /// from which --resume continues a run that was killed.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = qnmc_host::run::DEFAULT_CHECKPOINT_SECONDS,
        help_heading = OUTPUT
    )]
    pub checkpoint_seconds: f64,
    /// The arguments after `qnmc`, as given (a checkpointed run records
    /// them, for --resume).
    #[arg(skip)]
    pub command_line: Vec<String>,
    /// The options given on the command line (argument ids), filled by the
    /// parser: an option that does not apply to the sampler or target is an
    /// error, and only given ones are checked.
    #[arg(skip)]
    pub given: Vec<String>,
}

/// `qnmc plot`.
#[derive(Debug, Clone, Args)]
pub struct PlotArgs {
    /// The output folder of a finished `qnmc run` (its chain CSVs and
    /// summary.json); the charts are written into it.
    #[arg(value_name = "FOLDER")]
    pub folder: PathBuf,
    /// Charts to draw: quantity names separated by commas (`lp__` for the
    /// log density), `slowest` (the 4 slowest-mixing quantities by bulk ESS,
    /// then lp__) or `all`. Default: slowest.
    #[arg(long, value_delimiter = ',', value_name = "NAMES|slowest|all")]
    pub plot: Vec<String>,
}

/// `qnmc check`.
#[derive(Debug, Clone, Args)]
#[command(allow_negative_numbers = true)]
pub struct CheckArgs {
    /// Target options (first, as in `RunArgs`).
    #[command(flatten)]
    pub target: TargetArgs,
    /// Sampler options (ignored with --draws-files).
    #[command(flatten)]
    pub sampler: SamplerArgs,
    /// Output options (the run's files are written when --output is given).
    #[command(flatten)]
    pub output: OutputArgs,
    /// Check these CmdStan CSV files (one per chain) instead of sampling.
    #[arg(long = "draws-files", value_name = "FILE", num_args = 1..)]
    pub draws_files: Vec<PathBuf>,
    /// Kept draws per chain of the long reference run (targets without a
    /// known posterior; NUTS with the diagonal metric).
    #[arg(long, default_value_t = 5000, value_parser = count(4))]
    pub reference_draws: usize,
    /// `qnmc run`'s --strict, refused here with a message saying so (else
    /// clap would suggest the similarly spelled --metric).
    #[arg(long, hide = true)]
    pub strict: bool,
    /// The options given on the command line (argument ids), filled by the
    /// parser (see [`RunArgs::given`]).
    #[arg(skip)]
    pub given: Vec<String>,
}

/// `qnmc reproduce`.
#[derive(Debug, Clone, Args)]
#[command(allow_negative_numbers = true)]
pub struct ReproduceArgs {
    /// Reproduction name, or `all`.
    pub name: String,
    /// Shorter runs (smoke test; the report says so).
    #[arg(long)]
    pub quick: bool,
    /// Seed.
    #[arg(long, default_value_t = 2016, value_parser = parse_seed)]
    pub seed: u64,
    /// Output folder for `<name>.md` and the charts.
    #[arg(long)]
    pub output: PathBuf,
    /// Overwrite files in an existing output folder.
    #[arg(long)]
    pub force: bool,
}

/// `qnmc demo`.
#[derive(Debug, Clone, Args)]
#[command(allow_negative_numbers = true)]
pub struct DemoArgs {
    /// Seed.
    #[arg(long, default_value_t = 2016, value_parser = parse_seed)]
    pub seed: u64,
    /// Chains per sampler.
    #[arg(long, default_value_t = 4, value_parser = count(1))]
    pub chains: usize,
    /// Warm-up iterations per chain.
    #[arg(long, default_value_t = 1000, value_parser = count(0))]
    pub warmup: usize,
    /// Kept draws per chain.
    #[arg(long, default_value_t = 5000, value_parser = count(4))]
    pub draws: usize,
    /// Folder for the harness part's files (default: print only).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Overwrite files in an existing output folder.
    #[arg(long)]
    pub force: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}
