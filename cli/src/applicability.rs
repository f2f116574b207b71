//! Options that do not apply to the chosen sampler or target are an error
//! naming the option, never silently ignored.
//!
//! Only options given on the command line are checked (`given`: clap's
//! argument ids, the field names of [`super::args`]); an option without a
//! rule here applies everywhere.

use qnmc_host::run::{MetricKind, REGISTRY, SAMPLER_SPECIFIC_OPTIONS, SamplerEntry, SamplerKind};

use super::args::SamplerArgs;

/// The command-line spelling of an argument id (`leapfrog_steps` →
/// `--leapfrog-steps`).
pub fn flag(id: &str) -> String {
    format!("--{}", id.replace('_', "-"))
}

/// Targets that read the shared data folder (`--shared-data`).
pub const SHARED_DATA_TARGETS: [&str; 5] = [
    "logreg-pima",
    "logreg-ripley",
    "eight-schools",
    "sblrc-blr",
    "ark",
];

/// The first given target option that `target` does not use, with why.
pub fn target_option_error(target: &str, given: &[String]) -> Option<String> {
    for id in given {
        let applies = match id.as_str() {
            "data" => Some((
                target == "logreg-csv"
                    || target == "fashion-mnist"
                    || super::targets::RATINGS_FILE_TARGETS.contains(&target),
                "is for --target logreg-csv (its CSV file), fashion-mnist (its folder) and pmf, bpmf (a MovieLens ratings.dat)",
            )),
            "label_column" | "no_standardize" | "no_intercept" | "prior_variance" => {
                Some((target == "logreg-csv", "is for --target logreg-csv"))
            }
            "classes" => Some((target == "fashion-mnist", "is for --target fashion-mnist")),
            "init" => Some((
                false,
                "is for a Stan model (--model LIB.so); a built-in target starts from its own point",
            )),
            "covariance" => Some((target == "gaussian-cov", "is for --target gaussian-cov")),
            "shared_data" => Some((
                SHARED_DATA_TARGETS.contains(&target),
                "is for the targets that read the shared data folder (logreg-pima, logreg-ripley, \
                 eight-schools, sblrc-blr, ark)",
            )),
            _ => None,
        };
        if let Some((false, why)) = applies {
            return Some(format!(
                "{} does not apply to --target {target}: it {why}",
                flag(id)
            ));
        }
    }
    None
}

/// The first given target option that a `--model` (a Stan library) does
/// not use: everything but `--data`.
pub fn model_option_error(given: &[String]) -> Option<String> {
    const TARGET_OPTIONS: [&str; 12] = [
        "dimension",
        "classes",
        "label_column",
        "no_standardize",
        "no_intercept",
        "prior_variance",
        "delimiter",
        "drop_columns",
        "missing",
        "covariance",
        "shared_data",
        "target",
    ];
    given
        .iter()
        .find(|id| TARGET_OPTIONS.contains(&id.as_str()))
        .map(|id| {
            format!(
                "{} does not apply to --model: a Stan model takes only --data FILE.json",
                flag(id)
            )
        })
}

/// The names of the registry's samplers whose row passes `keep`, in
/// registry order.
fn names_of(keep: impl Fn(&SamplerEntry) -> bool) -> Vec<&'static str> {
    REGISTRY
        .iter()
        .filter(|row| keep(row))
        .map(|row| row.name)
        .collect()
}

/// [`names_of`] joined by commas.
fn names_where(keep: impl Fn(&SamplerEntry) -> bool) -> String {
    names_of(keep).join(", ")
}

/// Which samplers read the sampler-specific option `id`, as the end of an
/// error message: "is for --sampler qnhmc", or "is for hmc, qnhmc and
/// l2mc", from the registry, with a note where one sampler takes it only
/// sometimes or chooses it itself.
fn takers(id: &str) -> String {
    let names = names_of(|row| row.options.contains(&id));
    let list = match names.as_slice() {
        [one] => format!("--sampler {one}"),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
        [] => "no sampler".to_string(),
    };
    let note = match id {
        "memory" => " (nuts with --metric lbfgs only)",
        "leapfrog_steps" => " (nuts chooses its own trajectory length)",
        _ => "",
    };
    format!("is for {list}{note}")
}

/// The first given sampler option that `sampler` does not use on a target
/// with `data_size` data points (`None`: no data to minibatch), with why.
pub fn sampler_option_error(
    args: &SamplerArgs,
    data_size: Option<usize>,
    given: &[String],
) -> Option<String> {
    use SamplerKind as S;
    let sampler = args.sampler;
    let nuts_lbfgs =
        sampler == S::Nuts && args.metric.unwrap_or(MetricKind::Lbfgs) == MetricKind::Lbfgs;
    for id in given {
        let (applies, why): (bool, String) = match id.as_str() {
            "memory" if sampler == S::Nuts => (nuts_lbfgs, takers("memory")),
            id if SAMPLER_SPECIFIC_OPTIONS.contains(&id) => {
                (sampler.takes_option(id), takers(id))
            }
            "batch_size" => match data_size {
                _ if !sampler.uses_minibatches() => (
                    false,
                    format!("is for the minibatch samplers ({})", names_where(|row| row.minibatches)),
                ),
                None => (
                    false,
                    "the target has no data points to draw minibatches from (its gradient noise is built in)".into(),
                ),
                Some(_) => (true, String::new()),
            },
            "target_acceptance" => match args.step_size {
                _ if !sampler.adapts_step_size() => (
                    false,
                    format!(
                        "is for the samplers whose step size is adapted ({})",
                        names_where(|row| row.exact)
                    ),
                ),
                Some(_) => (
                    false,
                    "a fixed --step-size turns the step-size adaptation off".into(),
                ),
                None => (true, String::new()),
            },
            _ => (true, String::new()),
        };
        if !applies {
            return Some(format!(
                "{} does not apply to --sampler {sampler}: {}{why}",
                flag(id),
                if why.starts_with("is ") { "it " } else { "" }
            ));
        }
    }
    None
}

/// Option ids that make no sense with `check --draws-files` (nothing is
/// sampled, nothing written): any of them given is an error.
pub const NOT_WITH_DRAWS_FILES: [&str; 24] = [
    "sampler",
    "chains",
    "seed",
    "warmup",
    "draws",
    "thin",
    "step_size",
    "leapfrog_steps",
    "memory",
    "mass",
    "freeze_after",
    "adaptive_memory",
    "step_decay",
    "gamma",
    "batch_size",
    "friction",
    "sghmc_update",
    "target_acceptance",
    "metric",
    "max_tree_depth",
    "early_end",
    "init_radius",
    "output",
    "force",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Cli;
    use clap::Parser;

    fn sampler_args(args: &[&str]) -> SamplerArgs {
        let mut all = vec!["qnmc", "run", "--target", "gaussian"];
        all.extend_from_slice(args);
        match Cli::parse_from(all).command {
            crate::Command::Run(a) => a.sampler,
            _ => unreachable!(),
        }
    }

    fn given(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn each_sampler_option_is_refused_where_it_does_not_apply() {
        let nuts = sampler_args(&[]);
        for id in [
            "leapfrog_steps",
            "mass",
            "freeze_after",
            "adaptive_memory",
            "step_decay",
            "gamma",
            "batch_size",
            "friction",
            "sghmc_update",
        ] {
            let e = sampler_option_error(&nuts, Some(100), &given(&[id])).unwrap();
            assert!(
                e.starts_with(&flag(id)) && e.contains("--sampler nuts"),
                "{e}"
            );
        }
        // The default lbfgs metric takes --memory; diag does not.
        assert!(sampler_option_error(&nuts, None, &given(&["memory", "metric"])).is_none());
        let diag = sampler_args(&["--metric", "diag"]);
        assert!(sampler_option_error(&diag, None, &given(&["memory"])).is_some());
        let hmc = sampler_args(&["--sampler", "hmc"]);
        for id in ["metric", "max_tree_depth", "early_end", "memory"] {
            assert!(
                sampler_option_error(&hmc, None, &given(&[id])).is_some(),
                "{id}"
            );
        }
        assert!(
            sampler_option_error(&hmc, None, &given(&["leapfrog_steps", "target_acceptance"]))
                .is_none()
        );
        // A fixed step size leaves nothing to adapt.
        let fixed = sampler_args(&["--sampler", "hmc", "--step-size", "0.1"]);
        let e = sampler_option_error(&fixed, None, &given(&["target_acceptance"])).unwrap();
        assert!(e.contains("fixed --step-size"), "{e}");
        // Minibatches need data.
        let sgld = sampler_args(&["--sampler", "sgld"]);
        assert!(sampler_option_error(&sgld, Some(270), &given(&["batch_size"])).is_none());
        let e = sampler_option_error(&sgld, None, &given(&["batch_size"])).unwrap();
        assert!(e.contains("no data points"), "{e}");
        assert!(sampler_option_error(&sgld, None, &given(&["target_acceptance"])).is_some());
    }

    #[test]
    fn target_options_belong_to_their_targets() {
        assert!(target_option_error("logreg-csv", &given(&["data", "no_intercept"])).is_none());
        let e = target_option_error("logreg-heart", &given(&["no_intercept"])).unwrap();
        assert!(
            e.contains("--no-intercept") && e.contains("logreg-heart"),
            "{e}"
        );
        assert!(target_option_error("gaussian", &given(&["covariance"])).is_some());
        assert!(target_option_error("gaussian", &given(&["shared_data"])).is_some());
        assert!(target_option_error("ark", &given(&["shared_data", "dimension"])).is_none());
        // A ratings file replaces pmf's and bpmf's synthetic ratings, not
        // those of the fixed smaller sets.
        assert!(target_option_error("pmf", &given(&["data"])).is_none());
        assert!(target_option_error("bpmf", &given(&["data"])).is_none());
        let e = target_option_error("pmf-small", &given(&["data"])).unwrap();
        assert!(e.contains("--data") && e.contains("pmf-small"), "{e}");
        assert!(target_option_error("pmf", &given(&["label_column"])).is_some());
        // fashion-mnist takes a folder with --data and --classes, nothing of a CSV fit.
        assert!(target_option_error("fashion-mnist", &given(&["data", "classes"])).is_none());
        let e = target_option_error("fashion-mnist", &given(&["label_column"])).unwrap();
        assert!(e.contains("is for --target logreg-csv"), "{e}");
        let e = target_option_error("logreg-heart", &given(&["data"])).unwrap();
        assert!(e.contains("fashion-mnist (its folder)"), "{e}");
        let e = target_option_error("logreg-csv", &given(&["classes"])).unwrap();
        assert!(e.contains("is for --target fashion-mnist"), "{e}");
        assert!(model_option_error(&given(&["classes"])).is_some());
    }
}
