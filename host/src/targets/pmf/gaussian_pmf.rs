//! [`GaussianPmf`]: the HAMCMC paper's probabilistic matrix factorisation
//! (Şimşekli et al. 2016, §4.3, eq. 17), with full-data, minibatch and
//! block-part gradients.

use super::PmfError;
use super::blocks::BlockPartition;
use super::factors::{Layout, Likelihood, uniform_indices};
use super::random::Draws;
use super::ratings::Ratings;
use super::report::Report;
use crate::model::{Model, ModelRng};
use serde_json::json;

/// Sd of the coordinates of the initial point.
const INITIAL_SD: f64 = 0.1;

/// Seed of the initial point's coordinates.
const INITIAL_SEED: u64 = 0x1417_2016;

/// Gaussian matrix factorisation, HAMCMC eq. 17:
///
/// ```text
/// W_ik ~ N(0, σ_w²),  H_kj ~ N(0, σ_h²),
/// X_ij | W, H ~ N(c + Σ_k W_ik H_kj, σ_x²)   for each training rating (i, j),
/// ```
///
/// W ∈ ℝ^{I×K} (users), H ∈ ℝ^{K×J} (items), c a fixed offset (0 in the
/// paper; [`with_offset`](Self::with_offset)). The paper's settings are
/// K = 50 ([`PAPER_RANK`](Self::PAPER_RANK)) and σ_w = σ_h = σ_x = 1
/// ([`new`](Self::new)).
///
/// U = Σ_(i,j) (c + W_i·H_j − X_ij)²/(2σ_x²) + ‖W‖²/(2σ_w²) + ‖H‖²/(2σ_h²)
/// (the normalising constants left out), ∇U by hand, each in
/// O(N·K + (I + J)·K) for N training ratings.
///
/// **Coordinates**, (I + J)·K of them: W row by row, then H column by
/// column, so W_ik is coordinate i·K + k ([`w_index`](Self::w_index)) and
/// H_kj is (I + j)·K + k ([`h_index`](Self::h_index)), 0-based: each
/// rating's two factor vectors are contiguous.
///
/// **Gradients.** [`stochastic_gradient`](Model::stochastic_gradient) draws
/// b training ratings uniformly with replacement and scales their sum by
/// N/b, plus the exact prior gradient on every coordinate (b = 0: the exact
/// gradient). [`part_gradient`](Self::part_gradient) uses part p of the
/// [`BlockPartition`] (4 × 4 blocks by default) scaled by N/|Ω_p|, for the
/// paper's Fig. 5 schedule ([`partition`](Self::partition) gives the part
/// sizes and draws a part with probability |Ω_p|/N).
///
/// **Reported quantities** (not the coordinates): `rmse_test` (this draw's
/// predictions c + W_i·H_j on the test ratings, each clipped to the rating
/// range, e.g. [1, 5]), `rmse_train` (the same on at most 10 000 training
/// ratings spread evenly), `X[u,j]` (the unclipped prediction of the first
/// two test ratings' entries), and `W[1,1]`, `W[1,2]`, `H[1,1]`, `H[1,2]`
/// (1-based; single factor coordinates are not identified — the posterior
/// is invariant to W → WR, H → R⁻¹H for orthogonal R — so they show
/// movement, not convergence). [`test_predictions`](Self::test_predictions)
/// gives all test predictions of a draw, to average over draws.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::{GaussianPmf, SyntheticRecipe};
///
/// let ratings = SyntheticRecipe::new(40, 60, 1000, 1).build().unwrap();
/// let model = GaussianPmf::new(ratings, 5).unwrap();
/// assert_eq!(model.dimension(), (40 + 60) * 5);
/// assert_eq!(model.data_size(), Some(900));
/// assert_eq!(model.h_index(0, 0), 40 * 5);
/// assert_eq!(model.output_names()[..2], ["rmse_test", "rmse_train"]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GaussianPmf {
    name: String,
    ratings: Ratings,
    layout: Layout,
    sigma_w: f64,
    sigma_h: f64,
    sigma_x: f64,
    offset: f64,
    partition: BlockPartition,
    report: Report,
}

impl GaussianPmf {
    /// The HAMCMC paper's rank K = 50.
    pub const PAPER_RANK: usize = 50;

    /// The model on `ratings` with rank `rank` and the paper's σ_w = σ_h =
    /// σ_x = 1, offset 0, a 4 × 4 block grid, named `pmf`. Fails for rank 0
    /// or a dimension that overflows.
    pub fn new(ratings: Ratings, rank: usize) -> Result<Self, PmfError> {
        let layout = Layout {
            users: ratings.users(),
            items: ratings.items(),
            rank,
        };
        if rank == 0
            || (ratings.users() + ratings.items())
                .checked_mul(rank)
                .is_none()
        {
            return Err(PmfError::new(format!(
                "the rank must be at least 1 and (users + items) x rank fit in memory, got {rank}"
            )));
        }
        let partition = BlockPartition::new(
            &ratings,
            BlockPartition::HAMCMC_BLOCKS
                .min(ratings.users())
                .min(ratings.items()),
        )?;
        let report = Report::new(&ratings);
        Ok(GaussianPmf {
            name: "pmf".to_owned(),
            ratings,
            layout,
            sigma_w: 1.0,
            sigma_h: 1.0,
            sigma_x: 1.0,
            offset: 0.0,
            partition,
            report,
        })
    }

    /// The same model with prior sds σ_w, σ_h and noise sd σ_x (each finite
    /// and positive).
    pub fn with_sds(mut self, sigma_w: f64, sigma_h: f64, sigma_x: f64) -> Result<Self, PmfError> {
        for (name, v) in [
            ("sigma_w", sigma_w),
            ("sigma_h", sigma_h),
            ("sigma_x", sigma_x),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(PmfError::new(format!(
                    "{name} must be finite and positive, got {v}"
                )));
            }
        }
        self.sigma_w = sigma_w;
        self.sigma_h = sigma_h;
        self.sigma_x = sigma_x;
        Ok(self)
    }

    /// The same model of X − `offset` (e.g. the mean training rating, so the
    /// factors need not carry the mean). The paper models X itself (0).
    pub fn with_offset(mut self, offset: f64) -> Self {
        self.offset = offset;
        self
    }

    /// The same model with a `blocks` × `blocks` grid for
    /// [`part_gradient`](Self::part_gradient).
    pub fn with_blocks(mut self, blocks: usize) -> Result<Self, PmfError> {
        self.partition = BlockPartition::new(&self.ratings, blocks)?;
        Ok(self)
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

    /// (σ_w, σ_h, σ_x).
    pub fn sds(&self) -> (f64, f64, f64) {
        (self.sigma_w, self.sigma_h, self.sigma_x)
    }

    /// The offset c.
    pub fn offset(&self) -> f64 {
        self.offset
    }

    /// The coordinate of W_{user,k} (0-based): user·K + k.
    pub fn w_index(&self, user: usize, k: usize) -> usize {
        self.layout.user(user, k)
    }

    /// The coordinate of H_{k,item} (0-based): (I + item)·K + k.
    pub fn h_index(&self, item: usize, k: usize) -> usize {
        self.layout.item(item, k)
    }

    /// The block grid and its parts.
    pub fn partition(&self) -> &BlockPartition {
        &self.partition
    }

    /// Writes this draw's prediction c + W_i·H_j of every test rating, in
    /// [`Ratings::test`] order, not clipped ([`Ratings::clip`] clips as
    /// `rmse_test` does; [`Ratings::test_rmse`] scores them).
    pub fn test_predictions(&self, x: &[f64], out: &mut [f64]) {
        self.likelihood(self.ratings.test()).predict(x, out);
    }

    /// ∇U estimated from part `p` of the [`partition`](Self::partition):
    /// the exact prior gradient plus N/|Ω_p| times the likelihood gradient
    /// of the ratings in Ω_p (only the prior for an empty part). Averaged
    /// over p drawn with probability |Ω_p|/N
    /// ([`BlockPartition::choose`]) it is the exact ∇U.
    pub fn part_gradient(&self, x: &[f64], p: usize, gradient: &mut [f64]) {
        let _ = self.prior(x, gradient);
        let part = self.partition.part(p);
        if part.is_empty() {
            return;
        }
        let weight = self.ratings.train().len() as f64 / part.len() as f64;
        let _ = self.likelihood(self.ratings.train()).add(
            x,
            gradient,
            part.iter().map(|&n| n as usize),
            weight,
        );
    }

    fn likelihood<'a>(&self, data: &'a super::ratings::Triples) -> Likelihood<'a> {
        Likelihood {
            layout: self.layout,
            data,
            offset: self.offset,
            precision: 1.0 / (self.sigma_x * self.sigma_x),
        }
    }

    /// Sets `gradient` to the prior's gradient and returns its term of U.
    pub(super) fn prior(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        let split = self.layout.item_start();
        let mut u = 0.0;
        for (side, sigma) in [(0..split, self.sigma_w), (split..x.len(), self.sigma_h)] {
            let precision = 1.0 / (sigma * sigma);
            let mut squares = 0.0;
            for (g, &v) in gradient[side.clone()].iter_mut().zip(&x[side]) {
                *g = precision * v;
                squares += v * v;
            }
            u += 0.5 * precision * squares;
        }
        u
    }

    /// The names of the reported factor coordinates and their indices.
    fn reported_factors(&self) -> Vec<(String, usize)> {
        let k = self.layout.rank;
        let mut out = vec![("W[1,1]".to_owned(), self.w_index(0, 0))];
        if k > 1 {
            out.push(("W[1,2]".to_owned(), self.w_index(0, 1)));
        }
        out.push(("H[1,1]".to_owned(), self.h_index(0, 0)));
        if self.ratings.items() > 1 {
            out.push(("H[1,2]".to_owned(), self.h_index(1, 0)));
        }
        out
    }
}

impl Model for GaussianPmf {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn dimension(&self) -> usize {
        self.layout.len()
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        let prior = self.prior(x, gradient);
        let train = self.ratings.train();
        prior + self.likelihood(train).add(x, gradient, 0..train.len(), 1.0)
    }

    fn output_names(&self) -> Vec<String> {
        let mut names = self.report.names();
        names.extend(self.reported_factors().into_iter().map(|(n, _)| n));
        names
    }

    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        let n = self
            .report
            .write(self.layout, x, &self.ratings, self.offset, out);
        for (slot, (_, i)) in out[n..].iter_mut().zip(self.reported_factors()) {
            *slot = x[i];
        }
    }

    /// Coordinates N(0, 0.1²) from a fixed seed: not the origin, where
    /// ∇U = 0 (a saddle: every W·H term and its gradient vanish).
    fn initial_point(&self) -> Vec<f64> {
        let mut draws = Draws::new(INITIAL_SEED);
        (0..self.dimension())
            .map(|_| INITIAL_SD * draws.normal())
            .collect()
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
        Some(json!({
            "model": "Gaussian matrix factorisation (HAMCMC eq. 17): W_ik ~ N(0, sigma_w^2), \
                      H_kj ~ N(0, sigma_h^2), X_ij ~ N(offset + sum_k W_ik H_kj, sigma_x^2) \
                      over the training ratings",
            "target": self.name,
            "rank": k,
            "sigma_w": self.sigma_w,
            "sigma_h": self.sigma_h,
            "sigma_x": self.sigma_x,
            "offset": self.offset,
            "coordinates": format!(
                "{} = (users {i} + items {j}) x rank {k}: W row by row (W_ik at i*K + k), \
                 then H column by column (H_kj at (I + j)*K + k), 0-based",
                self.layout.len()
            ),
            "data": self.ratings.describe(),
            "reported": self.report.describe(),
            "blocks": self.partition.blocks(),
            "part_sizes": self.partition.sizes(),
        }))
    }
}
