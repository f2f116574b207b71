//! [`BayesianPmf`]: Salakhutdinov and Mnih's Bayesian probabilistic matrix
//! factorisation (ICML 2008) in a form a gradient-based sampler moves as a
//! whole, for the QNHMC paper's Table 3 (Fu, Luo and Zhang 2016, §5.3).
//! The model, and where it departs from theirs, is documented on
//! [`BayesianPmf`].

use super::PmfError;
use super::factors::{Layout, Likelihood, uniform_indices};
use super::random::Draws;
use super::ratings::{Ratings, Triples};
use super::report::Report;
use crate::model::{Model, ModelRng};
use serde_json::json;

/// Sd of the factor coordinates of the initial point.
const INITIAL_SD: f64 = 0.1;

/// Seed of the initial point's factor coordinates.
const INITIAL_SEED: u64 = 0xB9F_2008;

/// Bayesian PMF with diagonal precisions.
///
/// # What was kept, and what changed
///
/// Salakhutdinov and Mnih's model, with the settings of their demo code
/// that the QNHMC paper says it follows:
///
/// ```text
/// R_ij | U, V ~ N(m + U_i·V_j, 1/α),   α = 2, m = mean training rating,
/// U_i ~ N(μ_U, Λ_U⁻¹),  V_j ~ N(μ_V, Λ_V⁻¹),
/// μ_U | Λ_U ~ N(μ₀, (β₀Λ_U)⁻¹),  Λ_U ~ Wishart(W₀, ν₀),  likewise for V,
/// μ₀ = 0, β₀ = 2, ν₀ = K, W₀ = I.
/// ```
///
/// Their Gibbs sampler draws (μ, Λ) from its conjugate conditional; a
/// Hamiltonian or Langevin sampler needs a density on ℝⁿ with a gradient
/// instead. Here the precision matrices are **diagonal**,
/// Λ = diag(λ₁, …, λ_K), and each λ_k has the Gamma prior that is the
/// marginal law of a diagonal entry of the Wishart(W₀ = w₀I, ν₀) prior:
/// Gamma(shape a₀ = ν₀/2, rate b₀ = 1/(2w₀)) — Gamma(5, 1/2) for K = 10.
/// A full Wishart matrix would add K(K + 1)/2 coordinates per side behind a
/// Cholesky factor and its Jacobian; the diagonal keeps what the hierarchy
/// does for prediction — each factor dimension's scale and mean are learnt
/// from the data and shrink the factors — with a hand-written gradient.
/// Each λ is sampled as θ = log λ, with the Jacobian. The mean rating m is
/// subtracted as in the demo code (a fixed offset, not a parameter).
///
/// U(x), the normalising constants left out, for a side with n vectors F
/// (n = I for U, J for V), S_k = Σ_i (F_ik − μ_k)²:
///
/// ```text
/// U = (α/2) Σ_(i,j) (m + U_i·V_j − R_ij)²
///   + Σ_sides Σ_k [ λ_k (S_k/2 + β₀μ_k²/2 + b₀) − (n/2 + 1/2 + a₀) θ_k ],
/// ∂U/∂F_ik = λ_k (F_ik − μ_k) + likelihood term,
/// ∂U/∂μ_k  = −λ_k Σ_i (F_ik − μ_k) + β₀ λ_k μ_k,
/// ∂U/∂θ_k  = λ_k (S_k/2 + β₀μ_k²/2 + b₀) − (n/2 + 1/2 + a₀).
/// ```
///
/// (n/2 from the n normal densities, 1/2 from μ's, a₀ − 1 from the Gamma
/// density and 1 from the Jacobian dλ/dθ = λ.)
///
/// **Coordinates**, (I + J)·K + 4K of them, 0-based: U row by row (U_ik at
/// i·K + k, [`u_index`](Self::u_index)), V item by item (V_jk at
/// (I + j)·K + k, [`v_index`](Self::v_index)), then μ_U (K), μ_V (K),
/// log λ_U (K) and log λ_V (K) ([`hyper_index`](Self::hyper_index)).
///
/// **Reported quantities**: `rmse_test` (this draw's predictions
/// m + U_i·V_j on the test ratings, each clipped to the rating range, as
/// the demo code clips to [1, 5]), `rmse_train` (the same on at most 10 000
/// training ratings), `X[u,j]` (unclipped predictions of the first two test
/// ratings' entries), `U[1,1]`, `V[1,1]`, `mu_u[1]`, `mu_v[1]` (not
/// identified alone: the posterior is invariant to flipping the sign of a
/// factor dimension on both sides), and every precision `lambda_u[k]`,
/// `lambda_v[k]` (identified up to the order of the dimensions).
///
/// The minibatch gradient draws b training ratings uniformly with
/// replacement, scaled by N/b, plus the exact gradient of every prior and
/// hyperprior term.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::{BayesianPmf, SyntheticRecipe};
///
/// let ratings = SyntheticRecipe::new(40, 60, 1000, 1).build().unwrap();
/// let model = BayesianPmf::new(ratings, 4).unwrap();
/// assert_eq!(model.dimension(), (40 + 60) * 4 + 4 * 4);
/// assert!(model.output_names().contains(&"lambda_v[4]".to_string()));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct BayesianPmf {
    name: String,
    ratings: Ratings,
    layout: Layout,
    alpha: f64,
    beta0: f64,
    nu0: f64,
    w0: f64,
    offset: f64,
    report: Report,
}

/// The hyperparameter blocks after the factors, in coordinate order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hyper {
    /// μ_U, the mean of the user vectors.
    MuU,
    /// μ_V, the mean of the item vectors.
    MuV,
    /// log λ_U, the log precisions of the user vectors.
    LogLambdaU,
    /// log λ_V, the log precisions of the item vectors.
    LogLambdaV,
}

impl BayesianPmf {
    /// The QNHMC paper's rank K = 10.
    pub const PAPER_RANK: usize = 10;

    /// The model on `ratings` with rank `rank` and the demo code's settings:
    /// α = 2, β₀ = 2, ν₀ = K, W₀ = I, μ₀ = 0, offset m = the mean training
    /// rating; named `bpmf`. Fails for rank 0.
    pub fn new(ratings: Ratings, rank: usize) -> Result<Self, PmfError> {
        if rank == 0
            || (ratings.users() + ratings.items() + 4)
                .checked_mul(rank)
                .is_none()
        {
            return Err(PmfError::new(format!(
                "the rank must be at least 1 and (users + items + 4) x rank fit in memory, got {rank}"
            )));
        }
        let layout = Layout {
            users: ratings.users(),
            items: ratings.items(),
            rank,
        };
        let report = Report::new(&ratings);
        let offset = ratings.train().mean();
        Ok(BayesianPmf {
            name: "bpmf".to_owned(),
            ratings,
            layout,
            alpha: 2.0,
            beta0: 2.0,
            nu0: rank as f64,
            w0: 1.0,
            offset,
            report,
        })
    }

    /// The same model with observation precision α (finite, positive).
    pub fn with_observation_precision(mut self, alpha: f64) -> Result<Self, PmfError> {
        positive("alpha", alpha)?;
        self.alpha = alpha;
        Ok(self)
    }

    /// The same model with hyperprior β₀, ν₀ and W₀ = `w0`·I (each finite
    /// and positive).
    pub fn with_hyperprior(mut self, beta0: f64, nu0: f64, w0: f64) -> Result<Self, PmfError> {
        positive("beta0", beta0)?;
        positive("nu0", nu0)?;
        positive("w0", w0)?;
        self.beta0 = beta0;
        self.nu0 = nu0;
        self.w0 = w0;
        Ok(self)
    }

    /// The same model of R − `offset` (default: the mean training rating).
    pub fn with_offset(mut self, offset: f64) -> Self {
        self.offset = offset;
        self
    }

    /// The same model under another `--target` name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The ratings (training and test).
    pub fn ratings(&self) -> &Ratings {
        &self.ratings
    }

    /// The rank K.
    pub fn rank(&self) -> usize {
        self.layout.rank
    }

    /// The offset m.
    pub fn offset(&self) -> f64 {
        self.offset
    }

    /// The Gamma prior (shape a₀ = ν₀/2, rate b₀ = 1/(2w₀)) of each λ.
    pub fn precision_prior(&self) -> (f64, f64) {
        (0.5 * self.nu0, 0.5 / self.w0)
    }

    /// β₀, the prior strength of each side's mean: μ | Λ ~ N(μ₀, (β₀Λ)⁻¹).
    pub fn mean_prior_strength(&self) -> f64 {
        self.beta0
    }

    /// The coordinate of U_{user,k}: user·K + k.
    pub fn u_index(&self, user: usize, k: usize) -> usize {
        self.layout.user(user, k)
    }

    /// The coordinate of V_{item,k}: (I + item)·K + k.
    pub fn v_index(&self, item: usize, k: usize) -> usize {
        self.layout.item(item, k)
    }

    /// The coordinate of entry k of hyperparameter block `block`:
    /// (I + J)·K + b·K + k with b the block's position in [`Hyper`].
    pub fn hyper_index(&self, block: Hyper, k: usize) -> usize {
        let b = match block {
            Hyper::MuU => 0,
            Hyper::MuV => 1,
            Hyper::LogLambdaU => 2,
            Hyper::LogLambdaV => 3,
        };
        self.layout.len() + b * self.layout.rank + k
    }

    /// Writes this draw's prediction m + U_i·V_j of every test rating, in
    /// [`Ratings::test`] order, not clipped ([`Ratings::clip`] clips as
    /// `rmse_test` and the demo code do).
    pub fn test_predictions(&self, x: &[f64], out: &mut [f64]) {
        self.likelihood(self.ratings.test()).predict(x, out);
    }

    fn likelihood<'a>(&self, data: &'a Triples) -> Likelihood<'a> {
        Likelihood {
            layout: self.layout,
            data,
            offset: self.offset,
            precision: self.alpha,
        }
    }

    /// Sets the gradient of every prior and hyperprior term (the factor
    /// coordinates' and the hyperparameters') and returns their part of U.
    pub(super) fn prior(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        let k = self.layout.rank;
        let (a0, b0) = self.precision_prior();
        let split = self.layout.item_start();
        let end = self.layout.len();
        let sides = [
            (0..split, self.layout.users, Hyper::MuU, Hyper::LogLambdaU),
            (split..end, self.layout.items, Hyper::MuV, Hyper::LogLambdaV),
        ];
        let mut u = 0.0;
        let mut squares = vec![0.0; k];
        let mut deviations = vec![0.0; k];
        for (range, count, mu_block, theta_block) in sides {
            let mu_at = self.hyper_index(mu_block, 0);
            let theta_at = self.hyper_index(theta_block, 0);
            let mu = &x[mu_at..mu_at + k];
            let lambda: Vec<f64> = x[theta_at..theta_at + k].iter().map(|t| t.exp()).collect();
            squares.fill(0.0);
            deviations.fill(0.0);
            for (g_row, row) in gradient[range.clone()]
                .chunks_exact_mut(k)
                .zip(x[range].chunks_exact(k))
            {
                for d in 0..k {
                    let e = row[d] - mu[d];
                    squares[d] += e * e;
                    deviations[d] += e;
                    g_row[d] = lambda[d] * e;
                }
            }
            let log_terms = 0.5 * count as f64 + 0.5 + a0;
            for d in 0..k {
                let (m, l, theta) = (mu[d], lambda[d], x[theta_at + d]);
                let rate = 0.5 * squares[d] + 0.5 * self.beta0 * m * m + b0;
                u += l * rate - log_terms * theta;
                gradient[mu_at + d] = l * (self.beta0 * m - deviations[d]);
                gradient[theta_at + d] = l * rate - log_terms;
            }
        }
        u
    }
}

fn positive(name: &str, v: f64) -> Result<(), PmfError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(PmfError::new(format!(
            "{name} must be finite and positive, got {v}"
        )))
    }
}

impl Model for BayesianPmf {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn dimension(&self) -> usize {
        self.layout.len() + 4 * self.layout.rank
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        let prior = self.prior(x, gradient);
        let train = self.ratings.train();
        prior + self.likelihood(train).add(x, gradient, 0..train.len(), 1.0)
    }

    fn output_names(&self) -> Vec<String> {
        let mut names = self.report.names();
        names.extend(["U[1,1]", "V[1,1]", "mu_u[1]", "mu_v[1]"].map(String::from));
        for side in ["u", "v"] {
            names.extend((1..=self.layout.rank).map(|k| format!("lambda_{side}[{k}]")));
        }
        names
    }

    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        let mut n = self
            .report
            .write(self.layout, x, &self.ratings, self.offset, out);
        for i in [
            self.u_index(0, 0),
            self.v_index(0, 0),
            self.hyper_index(Hyper::MuU, 0),
            self.hyper_index(Hyper::MuV, 0),
        ] {
            out[n] = x[i];
            n += 1;
        }
        for block in [Hyper::LogLambdaU, Hyper::LogLambdaV] {
            for k in 0..self.layout.rank {
                out[n] = x[self.hyper_index(block, k)].exp();
                n += 1;
            }
        }
    }

    /// Factors N(0, 0.1²) from a fixed seed (not the origin, a saddle of
    /// the likelihood), μ = 0, and each λ at its prior mean a₀/b₀ = ν₀w₀.
    fn initial_point(&self) -> Vec<f64> {
        let mut draws = Draws::new(INITIAL_SEED);
        let mut x: Vec<f64> = (0..self.layout.len())
            .map(|_| INITIAL_SD * draws.normal())
            .collect();
        let (a0, b0) = self.precision_prior();
        x.extend(std::iter::repeat_n(0.0, 2 * self.layout.rank));
        x.extend(std::iter::repeat_n((a0 / b0).ln(), 2 * self.layout.rank));
        x
    }

    fn data_size(&self) -> Option<usize> {
        Some(self.ratings.train().len())
    }

    fn stochastic_gradient(
        &self,
        x: &[f64],
        batch_size: usize,
        rng: &mut ModelRng,
        gradient: &mut [f64],
    ) {
        if batch_size == 0 {
            let _ = self.potential_and_gradient(x, gradient);
            return;
        }
        let _ = self.prior(x, gradient);
        let train = self.ratings.train();
        let weight = train.len() as f64 / batch_size as f64;
        let _ = self.likelihood(train).add(
            x,
            gradient,
            uniform_indices(train.len(), batch_size, rng),
            weight,
        );
    }

    fn description(&self) -> Option<serde_json::Value> {
        let (i, j, k) = (self.layout.users, self.layout.items, self.layout.rank);
        let (a0, b0) = self.precision_prior();
        Some(json!({
            "model": "Bayesian PMF (Salakhutdinov & Mnih 2008) with diagonal precisions: \
                      R_ij ~ N(offset + U_i.V_j, 1/alpha), U_ik ~ N(mu_u_k, 1/lambda_u_k), \
                      V_jk ~ N(mu_v_k, 1/lambda_v_k), mu_k ~ N(0, 1/(beta0 lambda_k)), \
                      lambda_k ~ Gamma(nu0/2, rate 1/(2 w0)) (the marginal of a diagonal \
                      entry of Wishart(w0 I, nu0)), sampled as log lambda_k with its Jacobian",
            "target": self.name,
            "rank": k,
            "alpha": self.alpha,
            "beta0": self.beta0,
            "nu0": self.nu0,
            "w0": self.w0,
            "gamma_shape": a0,
            "gamma_rate": b0,
            "offset": self.offset,
            "coordinates": format!(
                "{} = (users {i} + items {j}) x rank {k} + 4 x {k}: U row by row (U_ik at \
                 i*K + k), V item by item (V_jk at (I + j)*K + k), then mu_u, mu_v, \
                 log lambda_u, log lambda_v (K each), 0-based",
                self.dimension()
            ),
            "data": self.ratings.describe(),
            "reported": self.report.describe(),
        }))
    }
}
