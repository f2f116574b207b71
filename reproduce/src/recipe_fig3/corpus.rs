//! The synthetic LDA corpus that stands in for the paper's Wikipedia stream
//! (Wikipedia is not available offline), built deterministically from a seed.
//!
//! True topics β*_k ~ Dirichlet(η·1_V) over V words (η small: sparse topics),
//! documents d with π_d ~ Dirichlet(a·1_{K*}) (a small: few topics per
//! document), length uniform in `min_length..=max_length`, and each word
//! drawn as z ~ π_d, w ~ β*_z. The stream and the held-out set are drawn from
//! the same model; each held-out document is split by word position (even
//! positions observed, odd positions scored) for document completion.
//!
//! The random draws (uniform, normal, gamma, Dirichlet) are written here on
//! xorshift rather than taken from a distributions crate, so that a corpus
//! built from a seed stays the same whatever crate versions are in use.

use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

/// A seeded generator with the draws the corpus, the Gibbs sampler and the
/// samplers' noise use.
pub struct Draws {
    rng: XorShiftRng,
    spare: Option<f64>,
}

impl Draws {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Draws {
            rng: XorShiftRng::seed_from_u64(seed),
            spare: None,
        }
    }

    /// Uniform on (0, 1] (never 0, so its logarithm is finite).
    pub fn uniform(&mut self) -> f64 {
        ((self.rng.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal (Box–Muller; the second of each pair is kept for
    /// the next call).
    pub fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let radius = (-2.0 * self.uniform().ln()).sqrt();
        let (sin, cos) = (std::f64::consts::TAU * self.uniform()).sin_cos();
        self.spare = Some(radius * sin);
        radius * cos
    }

    /// A whole number uniform in `0..n` (n ≥ 1), by multiply-shift.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.rng.next_u64()) * n as u128) >> 64) as usize
    }

    /// log of a Gamma(shape, 1) draw (shape > 0). Shapes below 1 use
    /// Gamma(a) = Gamma(a + 1)·U^{1/a} in log space, so that a shape of 0.05
    /// does not underflow to 0; shapes ≥ 1 use Marsaglia & Tsang (2000).
    pub fn log_gamma_draw(&mut self, shape: f64) -> f64 {
        if shape < 1.0 {
            let boost = self.uniform().ln() / shape;
            return self.log_gamma_draw(shape + 1.0) + boost;
        }
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = 1.0 + c * x;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = self.uniform();
            if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
                return (d * v).ln();
            }
        }
    }

    /// A draw of Dirichlet(concentration·1_n), normalised in log space.
    pub fn dirichlet(&mut self, concentration: f64, n: usize) -> Vec<f64> {
        let logs: Vec<f64> = (0..n).map(|_| self.log_gamma_draw(concentration)).collect();
        let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut p: Vec<f64> = logs.iter().map(|l| (l - top).exp()).collect();
        let total: f64 = p.iter().sum();
        for x in &mut p {
            *x /= total;
        }
        p
    }

    /// An index drawn with probability ∝ `weights` (non-negative, positive
    /// sum), by a linear scan.
    pub fn categorical(&mut self, weights: &[f64]) -> usize {
        let total: f64 = weights.iter().sum();
        let mut target = (1.0 - self.uniform()) * total;
        for (k, &w) in weights.iter().enumerate() {
            target -= w;
            if target < 0.0 {
                return k;
            }
        }
        weights.len() - 1
    }
}

/// The shape of a synthetic corpus.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CorpusSpec {
    /// Vocabulary size V.
    pub vocabulary: usize,
    /// Number K* of true topics.
    pub topics: usize,
    /// η: the Dirichlet concentration of each true topic over the words.
    pub topic_concentration: f64,
    /// a: the Dirichlet concentration of each document's topic proportions.
    pub document_concentration: f64,
    /// Shortest document (words).
    pub min_length: usize,
    /// Longest document (words).
    pub max_length: usize,
    /// Documents in the training stream.
    pub stream: usize,
    /// Held-out documents.
    pub held_out: usize,
}

impl CorpusSpec {
    /// The full run's corpus: V = 3000, K* = 30 sparse topics (η = 0.05),
    /// documents of 50–200 words with a = 0.1, 5000 streamed and 300 held
    /// out.
    pub const FULL: CorpusSpec = CorpusSpec {
        vocabulary: 3000,
        topics: 30,
        topic_concentration: 0.05,
        document_concentration: 0.1,
        min_length: 50,
        max_length: 200,
        stream: 5000,
        held_out: 300,
    };

    /// The quick run's corpus (also where SGRLD's schedule is chosen):
    /// V = 500, K* = 8, 1000 streamed documents, 100 held out.
    pub const QUICK: CorpusSpec = CorpusSpec {
        vocabulary: 500,
        topics: 8,
        topic_concentration: 0.05,
        document_concentration: 0.1,
        min_length: 50,
        max_length: 200,
        stream: 1000,
        held_out: 100,
    };
}

/// A generated corpus with its true topics.
#[derive(Debug, Clone, PartialEq)]
pub struct Corpus {
    /// The settings it was built with.
    pub spec: CorpusSpec,
    /// True topic-word probabilities, word-major: `true_topics[w·K* + k]`.
    pub true_topics: Vec<f64>,
    /// The training stream, in order; each document is its word ids.
    pub stream: Vec<Vec<u32>>,
    /// Held-out documents.
    pub held_out: Vec<Vec<u32>>,
}

impl Corpus {
    /// Builds the corpus of `spec` from `seed` (the same seed gives the same
    /// corpus).
    pub fn generate(spec: CorpusSpec, seed: u64) -> Corpus {
        let mut draws = Draws::new(seed ^ 0x1da_c0de);
        let (v, k) = (spec.vocabulary, spec.topics);
        let mut true_topics = vec![0.0; v * k];
        for topic in 0..k {
            let row = draws.dirichlet(spec.topic_concentration, v);
            for (w, p) in row.into_iter().enumerate() {
                true_topics[w * k + topic] = p;
            }
        }
        // Per topic, the words' cumulative probabilities, for fast draws.
        let cumulative: Vec<Vec<f64>> = (0..k)
            .map(|topic| {
                let mut total = 0.0;
                (0..v)
                    .map(|w| {
                        total += true_topics[w * k + topic];
                        total
                    })
                    .collect()
            })
            .collect();
        let document = |draws: &mut Draws| {
            let pi = draws.dirichlet(spec.document_concentration, k);
            let length = spec.min_length + draws.below(spec.max_length - spec.min_length + 1);
            (0..length)
                .map(|_| {
                    let topic = draws.categorical(&pi);
                    let c = &cumulative[topic];
                    let target = (1.0 - draws.uniform()) * c[v - 1];
                    c.partition_point(|&x| x <= target).min(v - 1) as u32
                })
                .collect::<Vec<u32>>()
        };
        let stream = (0..spec.stream).map(|_| document(&mut draws)).collect();
        let held_out = (0..spec.held_out).map(|_| document(&mut draws)).collect();
        Corpus {
            spec,
            true_topics,
            stream,
            held_out,
        }
    }
}

/// The observed half (even positions) and the scored half (odd positions)
/// of a held-out document.
pub fn split_document(words: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let observed = words.iter().step_by(2).copied().collect();
    let scored = words.iter().skip(1).step_by(2).copied().collect();
    (observed, scored)
}
