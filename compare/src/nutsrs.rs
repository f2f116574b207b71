//! The nuts-rs side: a `CpuLogpFunc` over any qnmc-host `Model`, and chains
//! driven one after another through nuts-rs's `Chain` interface.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use nuts_rs::rand::SeedableRng;
use nuts_rs::rand::rngs::ChaCha8Rng;
use nuts_rs::{
    Chain, CpuLogpFunc, CpuMath, CpuMathError, DiagNutsSettings, HasDims, LogpError,
    LowRankNutsSettings, Settings, Storable, Value,
};
use qnmc_host::model::{Model, ModelRng};
use qnmc_host::run::chain_seed;

use crate::runs::{ChainRun, SamplerRun};

/// Which nuts-rs mass-matrix adaptation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NutsRsMetric {
    /// `DiagNutsSettings` (alias `DiagGradNutsSettings`): diagonal mass matrix
    /// from draws and gradients.
    Diag,
    /// `LowRankNutsSettings`: diagonal plus low-rank corrections.
    LowRank,
}

/// U or ∇U was not finite: nuts-rs treats a recoverable error as a divergence,
/// as qnmc rejects such a step and counts it divergent.
#[derive(Debug, thiserror::Error)]
#[error("the potential or its gradient is not finite")]
pub struct NotFinite;

impl LogpError for NotFinite {
    fn is_recoverable(&self) -> bool {
        true
    }
}

/// log p = −U and ∇ log p = −∇U of a qnmc-host model, with a call counter.
struct Density<'a> {
    model: &'a dyn Model,
    calls: &'a AtomicU64,
}

impl HasDims for Density<'_> {
    fn dim_sizes(&self) -> HashMap<String, u64> {
        let n = self.model.dimension() as u64;
        HashMap::from([
            ("unconstrained_parameter".to_string(), n),
            ("dim".to_string(), n),
        ])
    }
}

impl CpuLogpFunc for Density<'_> {
    type LogpError = NotFinite;
    type FlowParameters = ();
    type ExpandedVector = Vec<f64>;

    fn dim(&self) -> usize {
        self.model.dimension()
    }

    fn logp(&mut self, position: &[f64], gradient: &mut [f64]) -> Result<f64, NotFinite> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let u = self.model.potential_and_gradient(position, gradient);
        if !u.is_finite() {
            return Err(NotFinite);
        }
        for g in gradient.iter_mut() {
            if !g.is_finite() {
                return Err(NotFinite);
            }
            *g = -*g;
        }
        Ok(-u)
    }

    fn expand_vector<R: nuts_rs::rand::Rng + ?Sized>(
        &mut self,
        _rng: &mut R,
        position: &[f64],
    ) -> Result<Vec<f64>, CpuMathError> {
        Ok(position.to_vec())
    }
}

/// The starting point of chain `k`: exactly qnmc's (`RunSettings::init_radius`
/// = r): the model's initial point plus r (2u − 1), u uniform on (0, 1] from
/// `ModelRng` seeded with `chain_seed(seed, k)`, in coordinate order. A
/// further attempt (where log p was not finite) continues the same stream.
fn start_point(model: &dyn Model, rng: &mut ModelRng, r: f64) -> Vec<f64> {
    let mut x = model.initial_point();
    for v in x.iter_mut() {
        let u: f64 = qnmc::Real::uniform_open_closed(rng);
        *v += r * (2.0 * u - 1.0);
    }
    x
}

/// What every chain of a nuts-rs run shares.
pub struct NutsRsJob<'a> {
    pub model: &'a dyn Model,
    pub metric: NutsRsMetric,
    pub chains: usize,
    pub tune: u64,
    pub draws: u64,
    pub seed: u64,
    pub init_radius: f64,
}

/// nuts-rs's statistics of one kept draw, the ones a CmdStan CSV holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DrawStats {
    /// log p = −U at the draw (nuts-rs's `logp`: our `Density` returns −U, so
    /// this is qnmc's `lp__`).
    pub lp: f64,
    /// `mean_tree_accept`: mean acceptance probability over the trajectory.
    pub accept_stat: f64,
    /// The step size the transition used (the one nuts-rs set after the
    /// previous draw).
    pub step_size: f64,
    /// Tree depth of the trajectory (`depth`).
    pub tree_depth: u64,
    /// Leapfrog steps of the trajectory (`n_steps`, nutpie's `n_steps`).
    pub n_steps: u64,
    /// The transition diverged.
    pub divergent: bool,
    /// Hamiltonian at the draw (`energy`).
    pub energy: f64,
}

/// What [`run_recorded`] keeps of one chain besides its [`ChainRun`].
#[derive(Debug, Clone, Default)]
pub struct ChainRecord {
    /// One entry per kept draw.
    pub stats: Vec<DrawStats>,
    /// Calls of the model's `potential_and_gradient` by this chain, by phase:
    /// before the first draw (the start point, failed starts included, and
    /// nuts-rs's initial step-size search), during tuning and during the
    /// kept draws. Each is at least the leapfrog steps of its phase.
    pub calls_start: u64,
    pub calls_tuning: u64,
    pub calls_sampling: u64,
    /// Leapfrog steps (sum of `Progress::num_steps`) during tuning; the kept
    /// draws' are the sum of `stats[i].n_steps`. `ChainRun`'s gradient
    /// counts are `Progress::num_gradients`, equal to these without WALNUTS.
    pub steps_tuning: u64,
}

/// Runs `job.chains` chains one after another on this thread.
pub fn run(job: &NutsRsJob<'_>) -> Result<SamplerRun, String> {
    run_chains(job, false).map(|(run, _)| run)
}

/// As [`run`], and also records nuts-rs's statistics of every kept draw
/// and the model calls by phase ([`ChainRecord`], one per chain). The draws
/// are the same as [`run`]'s for the same job: recording reads statistics
/// after each draw and uses no random numbers.
pub fn run_recorded(job: &NutsRsJob<'_>) -> Result<(SamplerRun, Vec<ChainRecord>), String> {
    run_chains(job, true)
}

fn run_chains(job: &NutsRsJob<'_>, record: bool) -> Result<(SamplerRun, Vec<ChainRecord>), String> {
    let calls = AtomicU64::new(0);
    let wall = Instant::now();
    let mut chains = Vec::with_capacity(job.chains);
    let mut records = Vec::with_capacity(job.chains);
    for k in 0..job.chains {
        let (chain, chain_record) = match job.metric {
            NutsRsMetric::Diag => {
                let settings = DiagNutsSettings {
                    num_tune: job.tune,
                    num_draws: job.draws,
                    num_chains: job.chains,
                    seed: job.seed,
                    ..DiagNutsSettings::default()
                };
                run_chain(job, settings, k, &calls, record)?
            }
            NutsRsMetric::LowRank => {
                let settings = LowRankNutsSettings {
                    num_tune: job.tune,
                    num_draws: job.draws,
                    num_chains: job.chains,
                    seed: job.seed,
                    ..LowRankNutsSettings::default()
                };
                run_chain(job, settings, k, &calls, record)?
            }
        };
        chains.push(chain);
        records.push(chain_record);
    }
    let run = SamplerRun {
        dimension: job.model.dimension(),
        chains,
        counted_calls: calls.load(Ordering::Relaxed),
        seconds_wall: wall.elapsed().as_secs_f64(),
    };
    Ok((run, records))
}

fn run_chain<S: Settings>(
    job: &NutsRsJob<'_>,
    settings: S,
    k: usize,
    calls: &AtomicU64,
    record: bool,
) -> Result<(ChainRun, ChainRecord), String> {
    let n = job.model.dimension();
    let seed = chain_seed(job.seed, k);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let math = CpuMath::new(Density {
        model: job.model,
        calls,
    });
    let mut chain = settings
        .new_chain(k as u64, math, &mut rng)
        .map_err(|e| format!("nuts-rs new_chain: {e:#}"))?;
    let calls_at = || calls.load(Ordering::Relaxed);
    let mut mark = calls_at();
    let mut phase_calls = || {
        let now = calls_at();
        let used = now - mark;
        mark = now;
        used
    };
    let mut init_rng = <ModelRng as rand_core::SeedableRng>::seed_from_u64(seed);
    let mut started = false;
    for _ in 0..100 {
        let x = start_point(job.model, &mut init_rng, job.init_radius);
        if chain.set_position(&x).is_ok() {
            started = true;
            break;
        }
    }
    if !started {
        return Err("nuts-rs: no finite starting point in 100 attempts".into());
    }
    let mut rec = ChainRecord {
        calls_start: phase_calls(),
        ..ChainRecord::default()
    };

    let mut out = ChainRun {
        draws: Vec::with_capacity(job.draws as usize * n),
        divergences_tuning: Some(0),
        ..ChainRun::default()
    };
    // The step size the next transition uses: nuts-rs reports, after each
    // draw, the one it set for the next.
    let mut step_size = f64::NAN;
    let clock = Instant::now();
    for _ in 0..job.tune {
        let (_, progress) = chain.draw().map_err(|e| format!("nuts-rs draw: {e:#}"))?;
        out.gradients_tuning += progress.num_gradients;
        rec.steps_tuning += progress.num_steps;
        if progress.diverging {
            *out.divergences_tuning.as_mut().unwrap() += 1;
        }
        step_size = progress.step_size;
    }
    out.seconds_tuning = clock.elapsed().as_secs_f64();
    rec.calls_tuning = phase_calls();
    if record {
        rec.stats.reserve(job.draws as usize);
    }
    let clock = Instant::now();
    for _ in 0..job.draws {
        let (position, progress) = if record {
            let (position, _, mut stats, progress) = chain
                .expanded_draw()
                .map_err(|e| format!("nuts-rs draw: {e:#}"))?;
            let values = {
                let math = chain.math();
                stat_values(&mut stats, &From::from(&*math))
            };
            let scalar = |name: &str| -> Result<f64, String> {
                values
                    .iter()
                    .find(|(k, _)| k == name)
                    .and_then(|(_, v)| *v)
                    .ok_or_else(|| format!("nuts-rs gave no `{name}` statistic"))
            };
            rec.stats.push(DrawStats {
                lp: scalar("logp")?,
                accept_stat: scalar("mean_tree_accept")?,
                step_size,
                tree_depth: scalar("depth")? as u64,
                n_steps: progress.num_steps,
                divergent: progress.diverging,
                energy: scalar("energy")?,
            });
            (position, progress)
        } else {
            chain.draw().map_err(|e| format!("nuts-rs draw: {e:#}"))?
        };
        out.gradients_sampling += progress.num_gradients;
        out.divergences_sampling += u64::from(progress.diverging);
        out.step_size_sum += progress.step_size;
        out.draws.extend_from_slice(&position);
        step_size = progress.step_size;
    }
    out.seconds_sampling = clock.elapsed().as_secs_f64();
    rec.calls_sampling = phase_calls();
    Ok((out, rec))
}

/// The scalar statistics of one draw by name (numbers and flags as `f64`;
/// vectors and statistics nuts-rs did not fill are `None`). `dims` is
/// nuts-rs's description of the model's dimensions, made from its `Math`.
fn stat_values<P: HasDims, T: Storable<P>>(stats: &mut T, dims: &P) -> Vec<(String, Option<f64>)> {
    stats
        .get_all(dims)
        .into_iter()
        .map(|(name, value)| {
            let x = match value {
                Some(Value::ScalarF64(v)) => Some(v),
                Some(Value::ScalarF32(v)) => Some(f64::from(v)),
                Some(Value::ScalarU64(v)) => Some(v as f64),
                Some(Value::ScalarI64(v)) => Some(v as f64),
                Some(Value::ScalarBool(v)) => Some(f64::from(u8::from(v))),
                _ => None,
            };
            (name.to_string(), x)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use qnmc_cli::{TargetArgs, build_target};

    /// The centred eight schools: a constrained τ, so lp__ holds a
    /// log-Jacobian.
    fn eight_schools() -> Box<dyn Model> {
        build_target(&TargetArgs {
            target: "eight-schools-centered".into(),
            ..TargetArgs::default()
        })
        .unwrap()
    }

    fn job(model: &dyn Model, metric: NutsRsMetric) -> NutsRsJob<'_> {
        NutsRsJob {
            model,
            metric,
            chains: 2,
            tune: 60,
            draws: 40,
            seed: 3,
            init_radius: 2.0,
        }
    }

    #[test]
    fn recorded_statistics_match_the_model_and_the_counts() {
        let model = eight_schools();
        let n = model.dimension();
        for metric in [NutsRsMetric::LowRank, NutsRsMetric::Diag] {
            let (run, records) = run_recorded(&job(&*model, metric)).unwrap();
            let mut g = vec![0.0; n];
            for (chain, rec) in run.chains.iter().zip(&records) {
                assert_eq!(rec.stats.len(), 40);
                for (x, s) in chain.draws.chunks(n).zip(&rec.stats) {
                    let lp = -model.potential_and_gradient(x, &mut g);
                    assert!(
                        (s.lp - lp).abs() <= 1e-12 * lp.abs().max(1.0),
                        "{metric:?}: lp__ {} but -U = {lp}",
                        s.lp
                    );
                    assert!(s.n_steps >= 1 && s.n_steps < 1 << (s.tree_depth + 1));
                    assert!(s.step_size > 0.0 && (0.0..=1.0).contains(&s.accept_stat));
                }
                let kept: u64 = rec.stats.iter().map(|s| s.n_steps).sum();
                assert_eq!(kept, chain.gradients_sampling);
                assert_eq!(rec.steps_tuning, chain.gradients_tuning);
                // Every model call of the kept draws is a leapfrog step;
                // tuning may add a few outside trajectories.
                assert_eq!(rec.calls_sampling, kept);
                assert!(rec.calls_tuning >= rec.steps_tuning);
                assert!(rec.calls_start >= 1);
            }
            let calls: u64 = records
                .iter()
                .map(|r| r.calls_start + r.calls_tuning + r.calls_sampling)
                .sum();
            assert_eq!(calls, run.counted_calls);
        }
    }

    #[test]
    fn recording_leaves_the_draws_unchanged() {
        let model = eight_schools();
        for metric in [NutsRsMetric::LowRank, NutsRsMetric::Diag] {
            let plain = run(&job(&*model, metric)).unwrap();
            let (recorded, _) = run_recorded(&job(&*model, metric)).unwrap();
            for (a, b) in plain.chains.iter().zip(&recorded.chains) {
                assert_eq!(a.draws, b.draws);
                assert_eq!(a.gradients_tuning, b.gradients_tuning);
                assert_eq!(a.gradients_sampling, b.gradients_sampling);
            }
        }
    }
}
