//! `recipe-fig3`: Figure 3 of Ma, Chen & Fox (2015), §4.2 and Appendix F.2 —
//! online LDA with K = 50 topics and minibatches of 50 documents, sampled by
//! SGLD, SGHMC, SGRLD and SGRHMC (the last two with the Fisher metric
//! G(θ) = diag(θ)⁻¹ on Patterson & Teh's expanded-mean parametrisation),
//! held-out perplexity against documents seen and run time per 100
//! documents.
//!
//! The paper streams Wikipedia, which is not available offline; the stream
//! here is a synthetic LDA corpus built from a seed ([`corpus`]). The model
//! and its stochastic gradient are in [`lda`], the samplers (the core's
//! recipe engine on a K·V slice with boundary reflection) in [`dynamics`],
//! the report in `write_up`.

pub mod corpus;
pub mod dynamics;
pub mod lda;
#[cfg(test)]
mod tests;
mod write_up;

use std::time::Instant;

use corpus::{Corpus, CorpusSpec, Draws, split_document};
use dynamics::{LdaChain, Method};
use lda::{Sweeps, completion_perplexity, expected_counts, potential_gradient, topic_word};

use super::{ReproduceOptions, Reproduction};

/// Topics K of the full run (the paper's).
pub const TOPICS: usize = 50;
/// Topics K of the quick run and of SGRLD's schedule grid.
pub const QUICK_TOPICS: usize = 10;
/// Documents per minibatch (the paper's).
pub const MINIBATCH: usize = 50;
/// Gibbs sweeps per training document (E\[n_dkw\]); the paper does not print
/// them.
pub const TRAIN_SWEEPS: Sweeps = Sweeps {
    burn_in: 10,
    kept: 10,
};
/// Gibbs sweeps per held-out document (its π̂ for document completion).
pub const EVAL_SWEEPS: Sweeps = Sweeps {
    burn_in: 10,
    kept: 10,
};
/// Independent chains per sampler (the paper's three runs).
pub const SEEDS: usize = 3;
/// SGRLD schedule exponent c (fixed; a and b come from the grid).
pub const SCHEDULE_EXPONENTS: [f64; 2] = [0.55, 0.9];
/// SGRLD initial steps ε₀ = a^{−c} tried by the grid.
pub const SCHEDULE_INITIAL_STEPS: [f64; 3] = [0.03, 0.1, 0.3];
/// SGRLD schedule scales b (in minibatches) tried by the grid.
pub const SCHEDULE_SCALES: [f64; 2] = [10.0, 100.0];

/// A step size rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepRule {
    /// ε_t = ε.
    Constant(f64),
    /// ε_t = (a(1 + t/b))^{−c}, t the minibatch index from 0 (Patterson &
    /// Teh's schedule as the recipe's Appendix F.2 prints it).
    Schedule {
        /// a.
        a: f64,
        /// b.
        b: f64,
        /// c.
        c: f64,
    },
}

impl StepRule {
    /// ε at minibatch `t`.
    pub fn at(&self, t: usize) -> f64 {
        match *self {
            StepRule::Constant(e) => e,
            StepRule::Schedule { a, b, c } => (a * (1.0 + t as f64 / b)).powf(-c),
        }
    }
}

/// One sampler's settings: the model's hyperparameters and its step rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MethodSettings {
    /// The sampler.
    pub method: Method,
    /// α: shape of the Gamma(α, 1) prior on each θ_kw (eq. S.29's α).
    pub alpha: f64,
    /// γ: the Dirichlet(γ) prior on each document's π (eq. S.30's γ).
    pub gamma: f64,
    /// The step size rule.
    pub step: StepRule,
}

impl MethodSettings {
    /// Appendix F.2's settings: γ = 0.01, α = 10⁻⁴ for the Riemannian
    /// samplers, γ = 0.1, α = 0.01 for SGLD and SGHMC; SGLD ε = 0.01,
    /// SGHMC ε = 0.1, SGRHMC ε = 0.02, SGRLD the schedule `schedule`.
    pub fn paper(method: Method, schedule: StepRule) -> Self {
        let (alpha, gamma) = match method {
            Method::Sgld | Method::Sghmc => (0.01, 0.1),
            Method::Sgrld | Method::Sgrhmc => (1e-4, 0.01),
        };
        let step = match method {
            Method::Sgld => StepRule::Constant(0.01),
            Method::Sghmc => StepRule::Constant(0.1),
            Method::Sgrld => schedule,
            Method::Sgrhmc => StepRule::Constant(0.02),
        };
        MethodSettings {
            method,
            alpha,
            gamma,
            step,
        }
    }
}

/// The size of one experiment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// The corpus.
    pub corpus: CorpusSpec,
    /// Model topics K.
    pub topics: usize,
    /// Held-out perplexity is computed every this many minibatches.
    pub evaluate_every: usize,
}

impl Scale {
    /// The full run.
    pub const FULL: Scale = Scale {
        corpus: CorpusSpec::FULL,
        topics: TOPICS,
        evaluate_every: 5,
    };
    /// The quick run (and the corpus of SGRLD's grid).
    pub const QUICK: Scale = Scale {
        corpus: CorpusSpec::QUICK,
        topics: QUICK_TOPICS,
        evaluate_every: 2,
    };
}

/// One chain's record.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Its settings.
    pub settings: MethodSettings,
    /// Chain seed.
    pub seed: u64,
    /// (documents seen, held-out perplexity), from 0 documents.
    pub curve: Vec<(f64, f64)>,
    /// Seconds of training (Gibbs expectations, gradient, update), without
    /// the held-out evaluations.
    pub train_seconds: f64,
    /// The part of `train_seconds` spent in the Gibbs expectations.
    pub gibbs_seconds: f64,
    /// The largest θ_kw at the end of the chain (or just before it failed):
    /// ε·max θ is SGRHMC's friction step ε·G⁻¹ (its Euler update of r is
    /// unstable above 2).
    pub max_theta: f64,
    /// The smallest θ_kw at the same point.
    pub min_theta: f64,
    /// The largest |r_kw| at the same point (0 for the Langevin samplers).
    pub max_momentum: f64,
    /// Documents trained on.
    pub documents: usize,
    /// Coordinates reflected, summed over all steps.
    pub reflections: u64,
    /// Where and why the chain stopped early, if it did.
    pub failure: Option<(usize, String)>,
}

impl Run {
    /// The last held-out perplexity (NaN if the chain failed).
    pub fn final_perplexity(&self) -> f64 {
        if self.failure.is_some() {
            return f64::NAN;
        }
        self.curve.last().map_or(f64::NAN, |p| p.1)
    }

    /// Whether the chain ran through the whole stream.
    pub fn finished(&self) -> bool {
        self.failure.is_none()
    }

    /// Training seconds per 100 documents.
    pub fn seconds_per_100(&self) -> f64 {
        self.train_seconds / self.documents.max(1) as f64 * 100.0
    }
}

/// The held-out documents split for document completion.
pub fn held_out_pairs(corpus: &Corpus) -> Vec<(Vec<u32>, Vec<u32>)> {
    corpus.held_out.iter().map(|d| split_document(d)).collect()
}

/// Runs one chain of `settings` over `corpus`'s stream with K = `topics`,
/// computing the held-out perplexity every `evaluate_every` minibatches and
/// at the end. θ starts at iid Exp(1) draws from `seed` (the same for every
/// method at a seed), r at 0.
pub fn run_chain(
    corpus: &Corpus,
    held_out: &[(Vec<u32>, Vec<u32>)],
    settings: MethodSettings,
    topics: usize,
    seed: u64,
    evaluate_every: usize,
) -> Run {
    let v = corpus.spec.vocabulary;
    let n = v * topics;
    let mut init = Draws::new(seed);
    let theta0: Vec<f64> = (0..n).map(|_| -init.uniform().ln()).collect();
    let mut chain = LdaChain::new(settings.method, &theta0);
    let mut draws = Draws::new(seed ^ 0x005e_ed0f_c4a1);
    let mut beta = vec![0.0; n];
    let mut counts = vec![0.0; n];
    let mut gradient = vec![0.0; n];
    let scale = corpus.stream.len() as f64 / MINIBATCH as f64;
    let evaluate = |theta: &[f64], beta: &mut [f64], t: usize| {
        topic_word(theta, topics, beta);
        let mut eval_draws = Draws::new(seed ^ 0xe7a1 ^ ((t as u64) << 20));
        completion_perplexity(
            held_out,
            beta,
            topics,
            settings.gamma,
            EVAL_SWEEPS,
            &mut eval_draws,
        )
    };
    let mut curve = vec![(0.0, evaluate(chain.theta(), &mut beta, 0))];
    let mut train_seconds = 0.0;
    let mut gibbs_seconds = 0.0;
    let mut reflections = 0u64;
    let mut documents = 0usize;
    let mut failure = None;
    let batches: Vec<&[Vec<u32>]> = corpus.stream.chunks(MINIBATCH).collect();
    for (t, batch) in batches.iter().enumerate() {
        let start = Instant::now();
        topic_word(chain.theta(), topics, &mut beta);
        counts.fill(0.0);
        let gibbs = Instant::now();
        expected_counts(
            batch,
            &beta,
            topics,
            settings.gamma,
            TRAIN_SWEEPS,
            &mut draws,
            &mut counts,
        );
        gibbs_seconds += gibbs.elapsed().as_secs_f64();
        potential_gradient(
            chain.theta(),
            &counts,
            topics,
            settings.alpha,
            scale,
            &mut gradient,
        );
        let step = chain.step(&gradient, settings.step.at(t), &mut draws);
        train_seconds += start.elapsed().as_secs_f64();
        documents += batch.len();
        match step {
            Ok(r) => reflections += r as u64,
            Err(e) => {
                failure = Some((documents, e));
                break;
            }
        }
        if (t + 1) % evaluate_every == 0 || t + 1 == batches.len() {
            curve.push((documents as f64, evaluate(chain.theta(), &mut beta, t + 1)));
        }
    }
    Run {
        settings,
        seed,
        curve,
        train_seconds,
        gibbs_seconds,
        max_theta: chain.theta().iter().copied().fold(0.0, f64::max),
        min_theta: chain.theta().iter().copied().fold(f64::INFINITY, f64::min),
        max_momentum: chain
            .momentum()
            .iter()
            .fold(0.0, |m: f64, r| m.max(r.abs())),
        documents,
        reflections,
        failure,
    }
}

/// One point of SGRLD's schedule grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GridPoint {
    /// The schedule.
    pub rule: StepRule,
    /// ε₀ = a^{−c}.
    pub initial_step: f64,
    /// Final held-out perplexity on the quick corpus (one chain).
    pub perplexity: f64,
}

/// SGRLD's schedule: every (ε₀, b, c) of the grid on `scale`'s corpus
/// (the quick one in the reproduction; one chain, seed `seed + 1`), the
/// lowest final perplexity chosen.
pub fn schedule_grid(scale: Scale, seed: u64) -> (StepRule, Vec<GridPoint>) {
    let corpus = Corpus::generate(scale.corpus, seed);
    let held = held_out_pairs(&corpus);
    let mut points = Vec::new();
    for &c in &SCHEDULE_EXPONENTS {
        for &initial_step in &SCHEDULE_INITIAL_STEPS {
            for &b in &SCHEDULE_SCALES {
                let rule = StepRule::Schedule {
                    a: initial_step.powf(-1.0 / c),
                    b,
                    c,
                };
                let settings = MethodSettings::paper(Method::Sgrld, rule);
                let run = run_chain(&corpus, &held, settings, scale.topics, seed + 1, usize::MAX);
                points.push(GridPoint {
                    rule,
                    initial_step,
                    perplexity: run.final_perplexity(),
                });
            }
        }
    }
    let best = points
        .iter()
        .filter(|p| p.perplexity.is_finite())
        .min_by(|x, y| x.perplexity.total_cmp(&y.perplexity))
        .map_or(StepRule::Constant(0.01), |p| p.rule);
    (best, points)
}

/// Everything one reproduction measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    /// Quick or full.
    pub quick: bool,
    /// The size.
    pub scale: Scale,
    /// The corpus seed.
    pub corpus_seed: u64,
    /// SGRLD's chosen schedule.
    pub schedule: StepRule,
    /// The grid it was chosen from.
    pub grid: Vec<GridPoint>,
    /// Every chain, by method then seed.
    pub runs: Vec<Run>,
    /// Document-completion perplexity of the true topics (K*, with the
    /// corpus's own document concentration).
    pub truth_perplexity: f64,
    /// Wall-clock seconds of the whole experiment.
    pub wall_seconds: f64,
}

/// Runs the experiment at `scale` (seeds `seed + 1`, …; the corpus from
/// `seed`), SGRLD's schedule chosen on the quick corpus.
pub fn experiment(scale: Scale, seeds: usize, options: &ReproduceOptions) -> Experiment {
    experiment_with_grid(scale, Scale::QUICK, seeds, options)
}

/// [`experiment`] with SGRLD's schedule chosen on `grid_scale`'s corpus.
pub fn experiment_with_grid(
    scale: Scale,
    grid_scale: Scale,
    seeds: usize,
    options: &ReproduceOptions,
) -> Experiment {
    let start = Instant::now();
    let (schedule, grid) = schedule_grid(grid_scale, options.seed);
    let corpus = Corpus::generate(scale.corpus, options.seed);
    let held = held_out_pairs(&corpus);
    let truth_perplexity = completion_perplexity(
        &held,
        &corpus.true_topics,
        scale.corpus.topics,
        scale.corpus.document_concentration,
        EVAL_SWEEPS,
        &mut Draws::new(options.seed ^ 0x7a07),
    );
    let mut runs = Vec::new();
    for method in Method::ALL {
        let settings = MethodSettings::paper(method, schedule);
        for s in 0..seeds {
            let seed = options.seed + 1 + s as u64;
            runs.push(run_chain(
                &corpus,
                &held,
                settings,
                scale.topics,
                seed,
                scale.evaluate_every,
            ));
        }
    }
    Experiment {
        quick: options.quick,
        scale,
        corpus_seed: options.seed,
        schedule,
        grid,
        runs,
        truth_perplexity,
        wall_seconds: start.elapsed().as_secs_f64(),
    }
}

/// Runs the reproduction (quick: K = 10 on the small corpus, 2 seeds; full:
/// K = 50, 5000 documents, 3 seeds).
///
/// ```no_run
/// use qnmc_reproduce::{ReproduceOptions, recipe_fig3};
/// let r = recipe_fig3::run(&ReproduceOptions { seed: 2016, quick: true });
/// println!("{}", r.markdown);
/// ```
pub fn run(options: &ReproduceOptions) -> Reproduction {
    let (scale, seeds) = if options.quick {
        (Scale::QUICK, 2)
    } else {
        (Scale::FULL, SEEDS)
    };
    let e = experiment(scale, seeds, options);
    Reproduction {
        name: "recipe-fig3".into(),
        title: "Complete recipe (Ma, Chen & Fox 2015), Fig. 3: online LDA perplexity of SGLD, SGHMC, SGRLD, SGRHMC".into(),
        markdown: write_up::report(&e),
        charts: write_up::charts(&e),
        skipped: Vec::new(),
    }
}
