//! LDA in the expanded-mean parametrisation (Patterson & Teh 2013; the
//! recipe's Fig. 3, upper left): θ_kw > 0 with Gamma(α, 1) priors,
//! β_kw = θ_kw / θ_k· (θ_k· = Σ_w θ_kw), documents' proportions π_d ~
//! Dirichlet(γ) marginalised out.
//!
//! Everything over topics and words is stored **word-major**: entry
//! `w·K + k` is (topic k, word w), so the K topics of one word are adjacent
//! (what the Gibbs sampler reads for each token).
//!
//! * [`expected_counts`]: the minibatch's expected counts E\[n_dkw\] summed
//!   over its documents, each document's expectation estimated by Gibbs
//!   sampling its topic indicators with the conditional of the recipe's
//!   eq. (S.30), p(z_j = k | ·) ∝ (γ + n_dk^{\j}) β_{k x_j}. The paper
//!   prints θ_{k x_j} there; we read it as β_{k x_j}: with θ the conditional
//!   would weight each topic by its total mass θ_k·, which is not the
//!   conditional of the model whose gradient (S.29) the paper uses (its
//!   n_dk·/θ_k· term comes from β = θ/θ_k·).
//! * [`potential_gradient`]: ∇U = −∇ log p of eq. (S.29) as printed:
//!   ∂ log p/∂θ_kw ≈ (α − 1)/θ_kw − 1 + (|S|/|S̃|) Σ_d E[n_dkw/θ_kw − n_dk·/θ_k·].
//! * [`log_posterior_given_counts`]: log p(θ, z | x) up to a constant with
//!   the indicators fixed (their counts given), whose gradient is (S.29) with
//!   the expectation replaced by those counts (tests compare the two).
//! * [`completion_perplexity`]: document completion (Patterson & Teh): for
//!   each held-out document, π is estimated from its observed half by Gibbs
//!   sweeps with the current β, and the scored half's words are scored under
//!   Σ_k π̂_k β_kw.

use super::corpus::Draws;

/// Gibbs sweeps per document: `burn_in` discarded, then `kept` whose counts
/// are averaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sweeps {
    /// Sweeps discarded.
    pub burn_in: usize,
    /// Sweeps averaged.
    pub kept: usize,
}

/// β from θ, word-major: β_kw = θ_kw / Σ_w θ_kw, with K = `topics`.
pub fn topic_word(theta: &[f64], topics: usize, beta: &mut [f64]) {
    let mut totals = vec![0.0; topics];
    for row in theta.chunks_exact(topics) {
        for (t, &x) in totals.iter_mut().zip(row) {
            *t += x;
        }
    }
    for (out, row) in beta
        .chunks_exact_mut(topics)
        .zip(theta.chunks_exact(topics))
    {
        for ((o, &x), &t) in out.iter_mut().zip(row).zip(&totals) {
            *o = x / t;
        }
    }
}

/// Per-topic sums θ_k· = Σ_w θ_kw of a word-major array.
pub fn topic_totals(values: &[f64], topics: usize) -> Vec<f64> {
    let mut totals = vec![0.0; topics];
    for row in values.chunks_exact(topics) {
        for (t, &x) in totals.iter_mut().zip(row) {
            *t += x;
        }
    }
    totals
}

/// Gibbs-samples the topic indicators of one document (`words`) under β
/// (word-major, K = `topics`) and the document prior Dirichlet(γ), and
/// calls `keep(z, n_dk, weight)` after each kept sweep with weight
/// 1/`sweeps.kept`. Indicators start from p(z_j = k) ∝ β_{k x_j}.
fn gibbs_document(
    words: &[u32],
    beta: &[f64],
    topics: usize,
    gamma: f64,
    sweeps: Sweeps,
    draws: &mut Draws,
    mut keep: impl FnMut(&[usize], &[f64], f64),
) {
    let mut z = Vec::with_capacity(words.len());
    let mut n_dk = vec![0.0; topics];
    for &w in words {
        let row = &beta[w as usize * topics..(w as usize + 1) * topics];
        let k = draws.categorical(row);
        z.push(k);
        n_dk[k] += 1.0;
    }
    let mut p = vec![0.0; topics];
    let weight = 1.0 / sweeps.kept.max(1) as f64;
    for sweep in 0..sweeps.burn_in + sweeps.kept {
        for (j, &w) in words.iter().enumerate() {
            n_dk[z[j]] -= 1.0;
            let row = &beta[w as usize * topics..(w as usize + 1) * topics];
            let mut total = 0.0;
            for ((pk, &b), &n) in p.iter_mut().zip(row).zip(&n_dk) {
                total += (gamma + n) * b;
                *pk = total;
            }
            let target = (1.0 - draws.uniform()) * total;
            let k = p.partition_point(|&c| c <= target).min(topics - 1);
            z[j] = k;
            n_dk[k] += 1.0;
        }
        if sweep >= sweeps.burn_in {
            keep(&z, &n_dk, weight);
        }
    }
}

/// Adds the Gibbs estimates of E\[n_dkw\] of every document of `minibatch`
/// into `counts` (word-major, length K·V; not cleared here).
pub fn expected_counts(
    minibatch: &[Vec<u32>],
    beta: &[f64],
    topics: usize,
    gamma: f64,
    sweeps: Sweeps,
    draws: &mut Draws,
    counts: &mut [f64],
) {
    for doc in minibatch {
        gibbs_document(doc, beta, topics, gamma, sweeps, draws, |z, _, weight| {
            for (&w, &k) in doc.iter().zip(z) {
                counts[w as usize * topics + k] += weight;
            }
        });
    }
}

/// ∇U(θ) = −(S.29): out_kw = −[(α − 1)/θ_kw − 1 + s·(n̂_kw/θ_kw − n̂_k·/θ_k·)]
/// with n̂ the minibatch's summed expected counts (word-major) and
/// s = |S|/|S̃| = `scale`.
pub fn potential_gradient(
    theta: &[f64],
    counts: &[f64],
    topics: usize,
    alpha: f64,
    scale: f64,
    out: &mut [f64],
) {
    let theta_totals = topic_totals(theta, topics);
    let count_totals = topic_totals(counts, topics);
    let ratio: Vec<f64> = count_totals
        .iter()
        .zip(&theta_totals)
        .map(|(n, t)| n / t)
        .collect();
    for ((o, row), n_row) in out
        .chunks_exact_mut(topics)
        .zip(theta.chunks_exact(topics))
        .zip(counts.chunks_exact(topics))
    {
        for k in 0..topics {
            let x = row[k];
            o[k] = -((alpha - 1.0) / x - 1.0 + scale * (n_row[k] / x - ratio[k]));
        }
    }
}

/// log p(θ | z, x) + const = Σ_kw [(α − 1) log θ_kw − θ_kw] + Σ_kw n_kw log β_kw
/// for fixed indicator counts n (word-major). Its gradient is
/// −[`potential_gradient`] with `scale` = 1 and these counts.
pub fn log_posterior_given_counts(theta: &[f64], counts: &[f64], topics: usize, alpha: f64) -> f64 {
    let totals = topic_totals(theta, topics);
    let mut total = 0.0;
    for (row, n_row) in theta.chunks_exact(topics).zip(counts.chunks_exact(topics)) {
        for k in 0..topics {
            let x = row[k];
            total += (alpha - 1.0) * x.ln() - x + n_row[k] * (x / totals[k]).ln();
        }
    }
    total
}

/// Document-completion perplexity of `documents` under β (word-major,
/// K = `topics`) with document prior Dirichlet(γ): for each document, π̂ is
/// the average over the kept sweeps of (n_dk + γ)/(n_d + Kγ) on the observed
/// half, and the scored half contributes log Σ_k π̂_k β_kw per word.
/// Returns exp(−Σ log p / scored words).
pub fn completion_perplexity(
    documents: &[(Vec<u32>, Vec<u32>)],
    beta: &[f64],
    topics: usize,
    gamma: f64,
    sweeps: Sweeps,
    draws: &mut Draws,
) -> f64 {
    let mut log_sum = 0.0;
    let mut words = 0usize;
    let mut pi = vec![0.0; topics];
    for (observed, scored) in documents {
        pi.fill(0.0);
        let denominator = observed.len() as f64 + topics as f64 * gamma;
        gibbs_document(
            observed,
            beta,
            topics,
            gamma,
            sweeps,
            draws,
            |_, n_dk, weight| {
                for (p, &n) in pi.iter_mut().zip(n_dk) {
                    *p += weight * (n + gamma) / denominator;
                }
            },
        );
        for &w in scored {
            let row = &beta[w as usize * topics..(w as usize + 1) * topics];
            let p: f64 = row.iter().zip(&pi).map(|(b, q)| b * q).sum();
            log_sum += p.ln();
            words += 1;
        }
    }
    (-log_sum / words as f64).exp()
}
