//! `hamcmc-fig5`: Figure 5 of Şimşekli, Badeau, Cemgil & Richard (2016) on
//! one machine — test RMSE of Gaussian matrix factorisation (§4.3, eq. 17,
//! K = 50, σ_w² = σ_h² = σ_x² = 1) against iterations and time for DSGLD,
//! PSGLD and HAMCMC with the paper's 4 × 4 block schedule (Fig. 4) and its
//! constant step sizes (Appendix B, Table 3).
//!
//! The data are the MovieLens-1M-shaped synthetic set
//! ([`SyntheticRecipe::movielens_1m`](qnmc_host::targets::SyntheticRecipe::movielens_1m): 6040 users × 3883 items, 1 000 209
//! ratings, 10 % held out), or the real `ratings.dat` when
//! [`RATINGS_VARIABLE`] names it (MovieLens's licence forbids shipping it).
//! The run across machines is a separate piece of work; on one machine the
//! schedule's chain is the same ([`PartTarget`]).

mod part_target;
mod write_up;

use std::time::{Duration, Instant};

use qnmc::{
    Hamcmc, HamcmcSettings, Psgld, PsgldSettings, Sgld, SgldSettings, Step, StepSizeSchedule,
    StepStats,
};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

pub use part_target::PartTarget;

use super::movielens::{AveragedPredictions, ratings};
use super::{ReproduceOptions, Reproduction};
use qnmc_host::model::Model;
use qnmc_host::run::LARGE_DIMENSION;
use qnmc_host::targets::GaussianPmf;

pub use super::movielens::RATINGS_VARIABLE;
/// DSGLD's constant step size (Table 3).
pub const SGLD_STEP: f64 = 1e-4;
/// PSGLD's constant step size, decay α and regulariser λ (Table 3).
pub const PSGLD: (f64, f64, f64) = (1e-3, 0.9, 5.0);
/// HAMCMC's constant step size, initial scaling γ and trust region λ
/// (Table 3).
pub const HAMCMC: (f64, f64, f64) = (3e-4, 1.0, 100.0);
/// Draws discarded before the test predictions are averaged (the paper's
/// 100 samples).
pub const BURN_IN: usize = 100;
/// Iterations of the full run (the paper does not print its count).
pub const ITERATIONS: usize = 1000;
/// Independent chains per sampler in the full run (seeds `seed`, `seed + 1`,
/// …).
pub const SEEDS: usize = 3;
/// Iterations and burn-in of the quick run (on `pmf-small`'s data).
pub const QUICK: (usize, usize) = (120, 40);

/// One sampler's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Variant {
    /// Distributed SGLD: SGLD on one part per step, ε = [`SGLD_STEP`].
    Dsgld,
    /// Distributed PSGLD with [`PSGLD`]'s settings.
    Psgld,
    /// Distributed HAMCMC with memory M and step size ε (γ and λ of
    /// [`HAMCMC`]).
    Hamcmc {
        /// M.
        memory: usize,
        /// ε.
        step: f64,
    },
}

impl Variant {
    /// The samplers compared: the paper's three (HAMCMC with its M = 2),
    /// HAMCMC with M = 5, and HAMCMC at smaller step sizes than the paper's
    /// (its ε = 3·10⁻⁴ diverges on our data: the sensitivity the report
    /// shows), DSGLD's ε = 10⁻⁴ and a third of it.
    pub const ALL: [Variant; 7] = [
        Variant::Dsgld,
        Variant::Psgld,
        Variant::Hamcmc {
            memory: 2,
            step: HAMCMC.0,
        },
        Variant::Hamcmc {
            memory: 5,
            step: HAMCMC.0,
        },
        Variant::Hamcmc {
            memory: 2,
            step: SGLD_STEP,
        },
        Variant::Hamcmc {
            memory: 5,
            step: SGLD_STEP,
        },
        Variant::Hamcmc {
            memory: 2,
            step: SGLD_STEP / 3.0,
        },
    ];

    /// The paper's HAMCMC (M = 2 at its ε).
    pub const PAPER_HAMCMC: Variant = Variant::Hamcmc {
        memory: 2,
        step: HAMCMC.0,
    };

    /// Short label for tables and charts.
    pub fn label(&self) -> String {
        match self {
            Variant::Dsgld => "DSGLD".into(),
            Variant::Psgld => "PSGLD".into(),
            Variant::Hamcmc { memory, step } => {
                format!("HAMCMC M = {memory}, ε = {}", super::report::number(*step))
            }
        }
    }
}

/// One chain's record, one entry per iteration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Curve {
    /// Test RMSE of this iteration's draw (predictions clipped to the
    /// rating range).
    pub draw_rmse: Vec<f64>,
    /// Test RMSE of the average of the predictions of the draws after the
    /// burn-in (NaN during burn-in), the estimate Fig. 5 plots.
    pub mean_rmse: Vec<f64>,
    /// Seconds spent in the sampler's steps up to each iteration (scoring
    /// the test set is not counted).
    pub seconds: Vec<f64>,
    /// Part gradients evaluated.
    pub gradients: u64,
    /// Why the chain stopped early, if it did.
    pub failure: Option<String>,
}

impl Curve {
    /// The last averaged RMSE (NaN when the chain never left burn-in).
    pub fn final_mean_rmse(&self) -> f64 {
        self.mean_rmse.last().copied().unwrap_or(f64::NAN)
    }

    /// The averaged RMSE at iteration `t` (1-based), NaN when not reached.
    pub fn mean_rmse_at(&self, t: usize) -> f64 {
        t.checked_sub(1)
            .and_then(|i| self.mean_rmse.get(i))
            .copied()
            .unwrap_or(f64::NAN)
    }

    /// Median seconds per iteration is not recorded; this is the mean.
    pub fn seconds_per_iteration(&self) -> f64 {
        self.seconds.last().copied().unwrap_or(f64::NAN) / self.seconds.len().max(1) as f64
    }
}

/// Every chain of one sampler.
#[derive(Debug, Clone, PartialEq)]
pub struct Runs {
    /// The sampler.
    pub variant: Variant,
    /// One curve per seed.
    pub curves: Vec<Curve>,
}

/// What the experiment ran on and what came out.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    /// Where the ratings came from.
    pub data: String,
    /// The model's dimension (I + J)·K.
    pub dimension: usize,
    /// Training and test ratings.
    pub sizes: (usize, usize),
    /// The part sizes |Ω⁽ⁱ⁾|.
    pub parts: Vec<usize>,
    /// Iterations and burn-in.
    pub iterations: usize,
    /// Draws before the predictions are averaged.
    pub burn_in: usize,
    /// Test RMSE of predicting every test rating by the training mean.
    pub mean_baseline: f64,
    /// Each sampler's chains.
    pub runs: Vec<Runs>,
}

/// Runs every sampler (one chain per seed in a quick run).
pub fn experiment(options: &ReproduceOptions) -> Result<Experiment, String> {
    let (ratings, data) = ratings(options)?;
    let model = GaussianPmf::new(ratings, GaussianPmf::PAPER_RANK).map_err(|e| e.to_string())?;
    let target =
        PartTarget::<LARGE_DIMENSION>::new(&model).ok_or("the model is larger than 2^20")?;
    let (iterations, burn_in) = if options.quick {
        QUICK
    } else {
        (ITERATIONS, BURN_IN)
    };
    let seeds = if options.quick { 1 } else { SEEDS };
    let train_mean = model.ratings().train().mean();
    let test = model.ratings().test();
    let baseline = model
        .ratings()
        .test_rmse(&vec![model.ratings().clip(train_mean); test.len()]);
    let mut runs = Vec::new();
    for variant in Variant::ALL {
        let curves = (0..seeds as u64)
            .map(|k| {
                let chain = Chain {
                    model: &model,
                    target: &target,
                    iterations,
                    burn_in,
                    seed: options.seed.wrapping_add(k),
                };
                chain.run(variant)
            })
            .collect();
        runs.push(Runs { variant, curves });
    }
    Ok(Experiment {
        data,
        dimension: model.dimension(),
        sizes: (model.ratings().train().len(), test.len()),
        parts: model.partition().sizes(),
        iterations,
        burn_in,
        mean_baseline: baseline,
        runs,
    })
}

/// One chain's inputs.
struct Chain<'a> {
    model: &'a GaussianPmf,
    target: &'a PartTarget<'a, LARGE_DIMENSION>,
    iterations: usize,
    burn_in: usize,
    seed: u64,
}

/// Builds `$sampler` (a `new_boxed` call), gives it the model's dimension
/// and drives it; a construction error becomes the curve's failure.
macro_rules! built {
    ($chain:expr, $sampler:expr) => {
        match $sampler {
            Ok(mut sampler) => match sampler.set_dimension($chain.target.dimension()) {
                Ok(()) => $chain.drive(&mut *sampler),
                Err(e) => Curve::failed(e),
            },
            Err(e) => Curve::failed(e),
        }
    };
}

impl Curve {
    fn failed(e: qnmc::Error) -> Curve {
        Curve {
            failure: Some(format!("not built: {e}")),
            ..Curve::default()
        }
    }
}

impl<'a> Chain<'a> {
    fn run(&self, variant: Variant) -> Curve {
        const D: usize = LARGE_DIMENSION;
        let mut start = vec![0.0; D].into_boxed_slice();
        start[..self.target.dimension()].copy_from_slice(&self.model.initial_point());
        let start: Box<[f64; D]> = start.try_into().expect("the slice has D entries");
        let (_, gamma, trust_region) = HAMCMC;
        match variant {
            Variant::Dsgld => built!(
                self,
                Sgld::<f64, D>::new_boxed(SgldSettings::new(SGLD_STEP), &start)
            ),
            Variant::Psgld => {
                let (step, decay, regulariser) = PSGLD;
                let settings = PsgldSettings::new(step, decay, regulariser);
                built!(self, Psgld::<f64, D>::new_boxed(settings, &start))
            }
            Variant::Hamcmc { memory, step } => {
                let settings =
                    HamcmcSettings::new(StepSizeSchedule::Constant(step), gamma, trust_region);
                match memory {
                    2 => built!(self, Hamcmc::<f64, D, 2>::new_boxed(settings, &start)),
                    5 => built!(self, Hamcmc::<f64, D, 5>::new_boxed(settings, &start)),
                    m => Curve {
                        failure: Some(format!("HAMCMC is compiled here for M = 2 and 5, not {m}")),
                        ..Curve::default()
                    },
                }
            }
        }
    }

    /// Steps `sampler` `iterations` times, scoring each draw on the test
    /// set; stops at the first step error or non-finite coordinate.
    fn drive<S>(&self, sampler: &mut S) -> Curve
    where
        S: Step<f64, LARGE_DIMENSION, PartTarget<'a, LARGE_DIMENSION>> + ?Sized,
    {
        let ratings = self.model.ratings();
        let n = self.target.dimension();
        let tests = ratings.test().len();
        let mut rng = XorShiftRng::seed_from_u64(self.seed);
        let (mut predictions, mut clipped) = (vec![0.0; tests], vec![0.0; tests]);
        let mut average = AveragedPredictions::new(tests);
        let mut curve = Curve::default();
        let mut elapsed = Duration::ZERO;
        for t in 1..=self.iterations {
            let clock = Instant::now();
            let stats = sampler.step(self.target, &mut rng);
            elapsed += clock.elapsed();
            let stats: StepStats<f64> = match stats {
                Ok(s) => s.into(),
                Err(e) => {
                    curve.failure = Some(format!("step {t}: {e}"));
                    break;
                }
            };
            curve.gradients += u64::from(stats.gradient_evaluations);
            let x = &sampler.position()[..n];
            if !x.iter().all(|v| v.is_finite()) {
                curve.failure = Some(format!("non-finite coordinates at step {t}"));
                break;
            }
            self.model.test_predictions(x, &mut predictions);
            for (c, &p) in clipped.iter_mut().zip(&predictions) {
                *c = ratings.clip(p);
            }
            let draw_rmse = ratings.test_rmse(&clipped);
            if !draw_rmse.is_finite() {
                // Finite factors whose products overflow.
                curve.failure = Some(format!("non-finite test predictions at step {t}"));
                break;
            }
            curve.draw_rmse.push(draw_rmse);
            let mean = if t > self.burn_in {
                average.keep(ratings, &predictions)
            } else {
                f64::NAN
            };
            curve.mean_rmse.push(mean);
            curve.seconds.push(elapsed.as_secs_f64());
        }
        curve
    }
}

/// Runs the experiment and writes the report.
pub fn run(options: &ReproduceOptions) -> Reproduction {
    let name = "hamcmc-fig5".to_string();
    let title =
        "HAMCMC (Şimşekli et al. 2016), Figure 5: matrix factorisation, test RMSE (one machine)"
            .to_string();
    match experiment(options) {
        Ok(e) => Reproduction {
            name,
            title,
            markdown: write_up::markdown(&e, options),
            charts: write_up::charts(&e),
            skipped: Vec::new(),
        },
        Err(why) => Reproduction {
            name,
            title,
            markdown: format!("# HAMCMC paper, Figure 5\n\nNot run: {why}\n"),
            charts: Vec::new(),
            skipped: vec![format!("hamcmc-fig5: {why}")],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qnmc_host::targets::SyntheticRecipe;

    /// The quick run (pmf-small's data): every sampler runs every iteration,
    /// the averaged RMSE is NaN exactly during burn-in and finite after,
    /// HAMCMC spends two part gradients per iteration and the others one,
    /// and the report and charts name every sampler.
    #[test]
    fn the_quick_run_completes_for_every_sampler() {
        let options = ReproduceOptions {
            quick: true,
            ..ReproduceOptions::default()
        };
        let e = experiment(&options).unwrap();
        let (iterations, burn_in) = QUICK;
        assert_eq!(e.runs.len(), Variant::ALL.len());
        for runs in &e.runs {
            let c = &runs.curves[0];
            assert_eq!(c.failure, None, "{}", runs.variant.label());
            assert_eq!(c.mean_rmse.len(), iterations);
            assert!(c.mean_rmse[..burn_in].iter().all(|r| r.is_nan()));
            assert!(
                c.mean_rmse[burn_in..]
                    .iter()
                    .all(|r| r.is_finite() && *r > 0.0)
            );
            assert!(c.draw_rmse.iter().all(|r| r.is_finite()));
            assert!(c.seconds.windows(2).all(|w| w[0] <= w[1]));
            let per = c.gradients as f64 / iterations as f64;
            let expected = if matches!(runs.variant, Variant::Hamcmc { .. }) {
                2.0
            } else {
                1.0
            };
            assert!(
                (per - expected).abs() < 0.05,
                "{} {per}",
                runs.variant.label()
            );
        }
        let md = write_up::markdown(&e, &options);
        let charts = write_up::charts(&e);
        assert_eq!(charts.len(), 3);
        for v in Variant::ALL {
            assert!(md.contains(&v.label()), "{md}");
            assert!(
                charts
                    .iter()
                    .all(|c| c.series.iter().any(|s| s.label == v.label()))
            );
        }
        assert!(md.contains("Quick run"));
    }

    /// A chain whose step size is far too large stops with a reason instead
    /// of reporting a non-finite RMSE as a result.
    #[test]
    fn a_diverging_chain_is_reported_as_stopped() {
        let ratings = SyntheticRecipe::new(30, 20, 300, 4)
            .with_min_per_user(5)
            .build()
            .unwrap();
        let model = GaussianPmf::new(ratings, 3).unwrap();
        let target = PartTarget::<LARGE_DIMENSION>::new(&model).unwrap();
        let chain = Chain {
            model: &model,
            target: &target,
            iterations: 200,
            burn_in: 10,
            seed: 1,
        };
        let mut start = vec![0.0; LARGE_DIMENSION].into_boxed_slice();
        start[..target.dimension()].copy_from_slice(&model.initial_point());
        let start: Box<[f64; LARGE_DIMENSION]> = start.try_into().unwrap();
        let curve = built!(
            chain,
            Sgld::<f64, LARGE_DIMENSION>::new_boxed(SgldSettings::new(10.0), &start)
        );
        let failure = curve.failure.expect("ε = 10 diverges");
        assert!(failure.contains("step"), "{failure}");
        assert!(curve.draw_rmse.len() < 200);
        assert!(curve.draw_rmse.iter().all(|r| r.is_finite()));
    }
}
