//! Tests of `recipe-fig3`: the corpus, the gradient of eq. (S.29), the Gibbs
//! expectation, the samplers' operators and reflection, and a tiny run.

use super::corpus::{Corpus, CorpusSpec, Draws, split_document};
use super::dynamics::{LdaChain, Method, reflect};
use super::lda::{
    Sweeps, expected_counts, log_posterior_given_counts, potential_gradient, topic_word,
};
use super::*;

const TINY: CorpusSpec = CorpusSpec {
    vocabulary: 120,
    topics: 4,
    topic_concentration: 0.05,
    document_concentration: 0.1,
    min_length: 50,
    max_length: 80,
    stream: 300,
    held_out: 30,
};

#[test]
fn corpus_is_deterministic_and_has_the_stated_shape() {
    let a = Corpus::generate(TINY, 7);
    let b = Corpus::generate(TINY, 7);
    assert_eq!(a, b);
    assert_ne!(a.stream, Corpus::generate(TINY, 8).stream);
    assert_eq!(a.stream.len(), TINY.stream);
    assert_eq!(a.held_out.len(), TINY.held_out);
    for doc in a.stream.iter().chain(&a.held_out) {
        assert!((TINY.min_length..=TINY.max_length).contains(&doc.len()));
        assert!(doc.iter().all(|&w| (w as usize) < TINY.vocabulary));
    }
    for k in 0..TINY.topics {
        let total: f64 = (0..TINY.vocabulary)
            .map(|w| a.true_topics[w * TINY.topics + k])
            .sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
    }
    // Sparse topics: the 10 % most probable words of a topic carry most of it.
    let mut row: Vec<f64> = (0..TINY.vocabulary)
        .map(|w| a.true_topics[w * TINY.topics])
        .collect();
    row.sort_by(|x, y| y.total_cmp(x));
    assert!(row[..TINY.vocabulary / 10].iter().sum::<f64>() > 0.8);
    let (seen, scored) = split_document(&[1, 2, 3, 4, 5]);
    assert_eq!((seen, scored), (vec![1, 3, 5], vec![2, 4]));
}

fn random_theta(n: usize, seed: u64) -> Vec<f64> {
    let mut d = Draws::new(seed);
    (0..n).map(|_| 0.2 + 3.0 * d.uniform()).collect()
}

#[test]
fn gradient_matches_a_central_difference_with_the_indicators_fixed() {
    let (k, v, alpha) = (3, 5, 0.3);
    let theta = random_theta(k * v, 1);
    let counts: Vec<f64> = random_theta(k * v, 2)
        .iter()
        .map(|x| (x * 3.0).floor())
        .collect();
    let mut g = vec![0.0; k * v];
    potential_gradient(&theta, &counts, k, alpha, 1.0, &mut g);
    for i in 0..k * v {
        let h = 1e-6;
        let (mut up, mut down) = (theta.clone(), theta.clone());
        up[i] += h;
        down[i] -= h;
        let fd = (log_posterior_given_counts(&up, &counts, k, alpha)
            - log_posterior_given_counts(&down, &counts, k, alpha))
            / (2.0 * h);
        assert!(
            (g[i] + fd).abs() < 1e-5 * (1.0 + fd.abs()),
            "{i}: {} vs {fd}",
            -g[i]
        );
    }
}

#[test]
fn minibatch_gradient_averages_to_the_full_corpus_gradient() {
    // Fixed per-document expected counts: the average over the minibatches
    // of a partition of the scaled minibatch gradient is the full gradient.
    let (k, v, docs, batch) = (2, 4, 12, 3);
    let theta = random_theta(k * v, 3);
    let per_doc: Vec<Vec<f64>> = (0..docs)
        .map(|d| random_theta(k * v, 10 + d as u64))
        .collect();
    let mut full_counts = vec![0.0; k * v];
    for c in &per_doc {
        for (f, x) in full_counts.iter_mut().zip(c) {
            *f += x;
        }
    }
    let mut full = vec![0.0; k * v];
    potential_gradient(&theta, &full_counts, k, 0.5, 1.0, &mut full);
    let mut average = vec![0.0; k * v];
    for chunk in per_doc.chunks(batch) {
        let mut counts = vec![0.0; k * v];
        for c in chunk {
            for (f, x) in counts.iter_mut().zip(c) {
                *f += x;
            }
        }
        let mut g = vec![0.0; k * v];
        potential_gradient(&theta, &counts, k, 0.5, (docs / batch) as f64, &mut g);
        for (a, x) in average.iter_mut().zip(&g) {
            *a += x / (docs / batch) as f64;
        }
    }
    for (a, f) in average.iter().zip(&full) {
        assert!((a - f).abs() < 1e-9 * (1.0 + f.abs()), "{a} vs {f}");
    }
}

#[test]
fn gibbs_expectation_of_a_one_word_document_is_the_topic_posterior() {
    // With one word, p(z = k) ∝ γ·β_kw exactly at every sweep.
    let (k, v) = (3, 2);
    let theta = vec![1.0, 2.0, 3.0, 3.0, 2.0, 1.0];
    let mut beta = vec![0.0; k * v];
    topic_word(&theta, k, &mut beta);
    let sweeps = Sweeps {
        burn_in: 1,
        kept: 20_000,
    };
    let mut counts = vec![0.0; k * v];
    expected_counts(
        &[vec![1]],
        &beta,
        k,
        0.1,
        sweeps,
        &mut Draws::new(5),
        &mut counts,
    );
    let row = &beta[k..2 * k];
    let total: f64 = row.iter().sum();
    for j in 0..k {
        let p = row[j] / total;
        let se = (p * (1.0 - p) / sweeps.kept as f64).sqrt();
        assert!(
            (counts[k + j] - p).abs() < 5.0 * se,
            "{j}: {} vs {p}",
            counts[k + j]
        );
        assert_eq!(counts[j], 0.0);
    }
}

#[test]
fn sgrld_step_is_patterson_and_tehs_expanded_mean_update() {
    // θ ← θ + ε(α − θ + s·(n̂ − θ n̂_k/θ_k)) + √(2εθ) w: the engine's
    // −εθ∇U + ε·1 (Γ with +ε) + noise.
    let (k, v, alpha, s, eps) = (2, 3, 0.01, 4.0, 0.05);
    let theta = random_theta(k * v, 4);
    let counts = random_theta(k * v, 5);
    let mut g = vec![0.0; k * v];
    potential_gradient(&theta, &counts, k, alpha, s, &mut g);
    let mut chain = LdaChain::new(Method::Sgrld, &theta);
    chain.step(&g, eps, &mut Draws::new(9)).unwrap();
    let mut noise = Draws::new(9);
    let w: Vec<f64> = (0..k * v).map(|_| noise.normal()).collect();
    let tt = lda::topic_totals(&theta, k);
    let nt = lda::topic_totals(&counts, k);
    for i in 0..k * v {
        let kk = i % k;
        let drift = alpha - theta[i] + s * (counts[i] - theta[i] * nt[kk] / tt[kk]);
        let expected = (theta[i] + eps * drift + (2.0 * eps * theta[i]).sqrt() * w[i]).abs();
        assert!((chain.theta()[i] - expected).abs() < 1e-12, "{i}");
    }
}

#[test]
fn sgrhmc_step_is_algorithm_one_with_the_fisher_metric() {
    // θ ← θ + ε√θ r;  r ← r − ε√θ∇U − εθr + ε/(2√θ) + √(2εθ) w  (from r = 0:
    // θ unchanged, r the rest).
    let (k, v, eps) = (2, 2, 0.02);
    let theta = random_theta(k * v, 6);
    let g = random_theta(k * v, 7);
    let mut chain = LdaChain::new(Method::Sgrhmc, &theta);
    chain.step(&g, eps, &mut Draws::new(3)).unwrap();
    let mut noise = Draws::new(3);
    for i in 0..k * v {
        let w = noise.normal();
        let root = theta[i].sqrt();
        let r = -eps * root * g[i] + eps * 0.5 / root + (2.0 * eps * theta[i]).sqrt() * w;
        assert!((chain.theta()[i] - theta[i]).abs() < 1e-15);
        assert!((chain.momentum()[i] - r).abs() < 1e-12, "{i}");
    }
}

#[test]
fn reflection_keeps_theta_positive_and_flips_momentum() {
    let mut state = vec![-1.0, 2.0, 0.0, 5.0, 6.0, 7.0];
    assert_eq!(reflect(&mut state, 3), 1);
    assert_eq!(state, vec![1.0, 2.0, f64::MIN_POSITIVE, -5.0, 6.0, 7.0]);
    // Every sampler from tiny θ with a gradient pulling θ through zero.
    for method in Method::ALL {
        let n = 200;
        let mut chain = LdaChain::new(method, &vec![1e-3; n]);
        let mut draws = Draws::new(11);
        let gradient = vec![50.0; n];
        for _ in 0..200 {
            chain.step(&gradient, 0.01, &mut draws).unwrap();
            assert!(
                chain.theta().iter().all(|&x| x > 0.0 && x.is_finite()),
                "{method:?}"
            );
        }
    }
}

#[test]
fn sgrld_learns_topics_well_below_the_uniform_perplexity() {
    let corpus = Corpus::generate(TINY, 3);
    let held = held_out_pairs(&corpus);
    let rule = StepRule::Schedule {
        a: 0.1f64.powf(-1.0 / 0.9),
        b: 10.0,
        c: 0.9,
    };
    let run = run_chain(
        &corpus,
        &held,
        MethodSettings::paper(Method::Sgrld, rule),
        4,
        1,
        2,
    );
    let last = run.final_perplexity();
    let first = run.curve[0].1;
    // Uniform β scores V = 120; learned topics must be far below it (the
    // true topics score about 40 on this corpus).
    assert!(last < 0.6 * TINY.vocabulary as f64, "{last}");
    assert!(last < 0.7 * first, "{first} → {last}");
    assert_eq!(run.curve.len(), 1 + TINY.stream / MINIBATCH / 2);
}

#[test]
fn a_tiny_experiment_reports_every_sampler_and_both_charts() {
    let scale = Scale {
        corpus: TINY,
        topics: 4,
        evaluate_every: 3,
    };
    let grid = Scale {
        corpus: CorpusSpec {
            stream: 100,
            ..TINY
        },
        ..scale
    };
    let options = ReproduceOptions {
        seed: 5,
        quick: true,
    };
    let e = experiment_with_grid(scale, grid, 2, &options);
    assert_eq!(e.runs.len(), 2 * Method::ALL.len());
    let md = write_up::report(&e);
    for method in Method::ALL {
        assert!(
            md.contains(&format!("| {} |", method.label())),
            "{}",
            method.label()
        );
    }
    assert!(md.contains("Quick run"));
    let charts = write_up::charts(&e);
    let stems: Vec<&str> = charts.iter().map(|c| c.file_stem.as_str()).collect();
    assert_eq!(stems, ["recipe-fig3-perplexity", "recipe-fig3-runtime"]);
    assert!(charts[0].series.iter().all(|s| !s.points.is_empty()));
}
