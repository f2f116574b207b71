//! The protocol's numbers for one run: ESS, R̂, divergences, costs, and the
//! checks that flag a run whose numbers must not be trusted.

use qnmc_host::diagnostics::{ess_bulk, ess_tail, rank_normalized_rhat};

use crate::runs::SamplerRun;

/// Largest R̂ a healthy run may have.
pub const RHAT_LIMIT: f64 = 1.01;
/// Smallest ESS per chain a healthy run may have (bulk and tail).
pub const ESS_PER_CHAIN_LIMIT: f64 = 100.0;

/// Everything reported for one run.
#[derive(Debug, Clone)]
pub struct Metrics {
    pub chains: usize,
    pub draws_per_chain: usize,
    /// Minimum over coordinates of the bulk ESS, and the coordinate (0-based).
    pub ess_bulk_min: f64,
    pub ess_bulk_argmin: usize,
    /// Minimum over coordinates of the tail ESS, and the coordinate.
    pub ess_tail_min: f64,
    pub ess_tail_argmin: usize,
    /// Maximum over coordinates of the rank-normalised split R̂.
    pub rhat_max: f64,
    pub divergences_sampling: u64,
    pub divergences_tuning: Option<u64>,
    pub gradients_tuning: u64,
    pub gradients_sampling: u64,
    pub counted_calls: u64,
    /// Sum over chains of each chain's own clock (the chains ran one after another).
    pub seconds_tuning: f64,
    pub seconds_sampling: f64,
    pub seconds_wall: f64,
    /// Pooled sample correlation of coordinates 0 and 1 (when there are two).
    pub corr01: Option<f64>,
    /// Mean step size of the kept draws over all chains.
    pub step_size_mean: f64,
    /// Each chain alone, on the coordinate with the smallest tail ESS: a
    /// run's ESS over its chains is low when one chain is, and this shows
    /// which.
    pub per_chain: Vec<ChainSummary>,
}

/// One chain's ESS of the run's slowest-tail coordinate, and its mean step size.
#[derive(Debug, Clone, Copy)]
pub struct ChainSummary {
    pub ess_bulk: f64,
    pub ess_tail: f64,
    pub step_size_mean: f64,
}

/// Minimum (or maximum) that is NaN as soon as one value is: a diagnostic
/// that could not be computed must not vanish from the extreme.
fn extreme(values: &[f64], better: impl Fn(f64, f64) -> bool) -> (f64, usize) {
    let mut best = (f64::NAN, 0);
    for (j, &v) in values.iter().enumerate() {
        if v.is_nan() {
            return (f64::NAN, j);
        }
        if j == 0 || better(v, best.0) {
            best = (v, j);
        }
    }
    best
}

fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let ma = a.iter().sum::<f64>() / n;
    let mb = b.iter().sum::<f64>() / n;
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (&x, &y) in a.iter().zip(b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    sab / (saa * sbb).sqrt()
}

impl Metrics {
    /// Computes the metrics of `run` (every coordinate, unconstrained scale).
    pub fn of(run: &SamplerRun) -> Metrics {
        let n = run.dimension;
        let (mut bulk, mut tail, mut rhat) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let mut columns = Vec::with_capacity(n);
        for j in 0..n {
            let col = run.column(j);
            let slices: Vec<&[f64]> = col.iter().map(|c| c.as_slice()).collect();
            bulk[j] = ess_bulk(&slices);
            tail[j] = ess_tail(&slices);
            rhat[j] = rank_normalized_rhat(&slices);
            if j < 2 {
                columns.push(col.concat());
            }
        }
        let (ess_bulk_min, ess_bulk_argmin) = extreme(&bulk, |a, b| a < b);
        let (ess_tail_min, ess_tail_argmin) = extreme(&tail, |a, b| a < b);
        let (rhat_max, _) = extreme(&rhat, |a, b| a > b);
        let sum = |f: &dyn Fn(&crate::runs::ChainRun) -> f64| run.chains.iter().map(f).sum::<f64>();
        let per_chain = if ess_tail_argmin < n {
            run.column(ess_tail_argmin)
                .iter()
                .zip(&run.chains)
                .map(|(draws, chain)| ChainSummary {
                    ess_bulk: ess_bulk(&[draws.as_slice()]),
                    ess_tail: ess_tail(&[draws.as_slice()]),
                    step_size_mean: chain.step_size_sum / draws.len().max(1) as f64,
                })
                .collect()
        } else {
            Vec::new()
        };
        let divergences_tuning = run
            .chains
            .iter()
            .map(|c| c.divergences_tuning)
            .sum::<Option<u64>>();
        Metrics {
            chains: run.chains.len(),
            draws_per_chain: run.chains.first().map_or(0, |c| c.draws.len() / n.max(1)),
            ess_bulk_min,
            ess_bulk_argmin,
            ess_tail_min,
            ess_tail_argmin,
            rhat_max,
            divergences_sampling: run.chains.iter().map(|c| c.divergences_sampling).sum(),
            divergences_tuning,
            gradients_tuning: run.chains.iter().map(|c| c.gradients_tuning).sum(),
            gradients_sampling: run.chains.iter().map(|c| c.gradients_sampling).sum(),
            counted_calls: run.counted_calls,
            seconds_tuning: sum(&|c| c.seconds_tuning),
            seconds_sampling: sum(&|c| c.seconds_sampling),
            seconds_wall: run.seconds_wall,
            corr01: (columns.len() == 2).then(|| correlation(&columns[0], &columns[1])),
            step_size_mean: run.chains.iter().map(|c| c.step_size_sum).sum::<f64>()
                / run
                    .chains
                    .iter()
                    .map(|c| c.draws.len() / n.max(1))
                    .sum::<usize>()
                    .max(1) as f64,
            per_chain,
        }
    }

    /// Bulk ESS_min per 1000 gradients of the kept draws.
    pub fn per_1k_kept(&self) -> f64 {
        1000.0 * self.ess_bulk_min / self.gradients_sampling as f64
    }

    /// Bulk ESS_min per 1000 gradients, tuning included.
    pub fn per_1k_all(&self) -> f64 {
        1000.0 * self.ess_bulk_min / (self.gradients_tuning + self.gradients_sampling) as f64
    }

    /// Bulk ESS_min per second of the chains' wall time, tuning included.
    pub fn per_second(&self) -> f64 {
        self.ess_bulk_min / (self.seconds_tuning + self.seconds_sampling)
    }

    /// The three efficiencies: per 1000 kept gradients, per 1000 gradients
    /// with tuning, per second.
    pub fn efficiencies(&self) -> [f64; 3] {
        [self.per_1k_kept(), self.per_1k_all(), self.per_second()]
    }

    /// What is wrong with this run, as (flag letter, explanation): `R` R̂ above
    /// [`RHAT_LIMIT`], `E` / `T` bulk / tail ESS below [`ESS_PER_CHAIN_LIMIT`]
    /// per chain, `D` divergences after tuning. A diagnostic that could not be
    /// computed (NaN) counts as failed. Empty: healthy.
    pub fn checks(&self) -> Vec<(char, String)> {
        let ess_limit = ESS_PER_CHAIN_LIMIT * self.chains as f64;
        let mut out = Vec::new();
        if self.rhat_max.is_nan() || self.rhat_max > RHAT_LIMIT {
            out.push((
                'R',
                format!("R-hat max {:.4} > {RHAT_LIMIT}", self.rhat_max),
            ));
        }
        if self.ess_bulk_min.is_nan() || self.ess_bulk_min < ess_limit {
            out.push((
                'E',
                format!(
                    "bulk ESS min {:.0} < {ess_limit:.0} (x[{}])",
                    self.ess_bulk_min,
                    self.ess_bulk_argmin + 1
                ),
            ));
        }
        if self.ess_tail_min.is_nan() || self.ess_tail_min < ess_limit {
            out.push((
                'T',
                format!(
                    "tail ESS min {:.0} < {ess_limit:.0} (x[{}])",
                    self.ess_tail_min,
                    self.ess_tail_argmin + 1
                ),
            ));
        }
        if self.divergences_sampling > 0 {
            out.push((
                'D',
                format!(
                    "{} divergent transitions after tuning",
                    self.divergences_sampling
                ),
            ));
        }
        out
    }

    /// The explanations of [`checks`](Self::checks).
    pub fn problems(&self) -> Vec<String> {
        self.checks().into_iter().map(|(_, why)| why).collect()
    }

    /// The table's flag: `!!` and the letters of [`checks`](Self::checks);
    /// empty when healthy.
    pub fn flag(&self) -> String {
        let letters: String = self.checks().into_iter().map(|(c, _)| c).collect();
        if letters.is_empty() {
            letters
        } else {
            format!("!!{letters}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extreme_propagates_nan() {
        assert_eq!(extreme(&[3.0, 1.0, 2.0], |a, b| a < b), (1.0, 1));
        assert!(extreme(&[3.0, f64::NAN, 2.0], |a, b| a < b).0.is_nan());
        assert_eq!(extreme(&[3.0, 5.0, 2.0], |a, b| a > b), (5.0, 1));
    }

    #[test]
    fn bad_runs_are_flagged() {
        let good = Metrics {
            chains: 4,
            draws_per_chain: 1000,
            ess_bulk_min: 1000.0,
            ess_bulk_argmin: 0,
            ess_tail_min: 900.0,
            ess_tail_argmin: 1,
            rhat_max: 1.005,
            divergences_sampling: 0,
            divergences_tuning: Some(3),
            gradients_tuning: 1,
            gradients_sampling: 1,
            counted_calls: 2,
            seconds_tuning: 1.0,
            seconds_sampling: 1.0,
            seconds_wall: 2.0,
            corr01: None,
            step_size_mean: 0.5,
            per_chain: Vec::new(),
        };
        assert_eq!(good.flag(), "");
        let bad = Metrics {
            rhat_max: f64::NAN,
            ess_tail_min: 399.0,
            divergences_sampling: 1,
            ..good.clone()
        };
        assert_eq!(bad.flag(), "!!RTD");
        assert_eq!(bad.problems().len(), 3);
        let low = Metrics {
            ess_bulk_min: f64::NAN,
            ..good
        };
        assert_eq!(low.flag(), "!!E");
    }

    #[test]
    fn correlation_of_a_line_is_minus_one() {
        let a = [1.0, 2.0, 3.0, 4.0];
        let b = [8.0, 6.0, 4.0, 2.0];
        assert!((correlation(&a, &b) + 1.0).abs() < 1e-12);
    }
}
