//! [`PartTarget`]: the HAMCMC paper's Fig. 5 data schedule on one machine —
//! each step's stochastic gradient comes from one part Ω⁽ⁱ⁾ of the 4 × 4
//! block partition, drawn with probability |Ω⁽ⁱ⁾| / N.

use qnmc::MinibatchPotential;
use rand_core::{Rng, SeedableRng};

use qnmc_host::model::ModelRng;
use qnmc_host::targets::GaussianPmf;

/// A [`GaussianPmf`] as a core [`MinibatchPotential`] of storage size `D`
/// whose batch is a part of its [`BlockPartition`](qnmc_host::targets::BlockPartition):
/// the gradient is [`GaussianPmf::part_gradient`] (the prior on every
/// coordinate plus N/|Ω⁽ⁱ⁾| times the part's likelihood gradient). The
/// sampler moves only the model's n coordinates (its run-time dimension),
/// so coordinates n.. are never read or written here.
///
/// On one machine this is the whole of the distributed schedule as far as
/// the chain is concerned: which machine holds which block of H decides
/// where the arithmetic happens, not what it computes.
#[derive(Clone, Copy)]
pub struct PartTarget<'a, const D: usize> {
    model: &'a GaussianPmf,
    n: usize,
}

impl<'a, const D: usize> PartTarget<'a, D> {
    /// Wraps `model`; `None` when its dimension exceeds `D`.
    pub fn new(model: &'a GaussianPmf) -> Option<Self> {
        use qnmc_host::model::Model as _;
        let n = model.dimension();
        (n <= D).then_some(PartTarget { model, n })
    }

    /// The model's dimension n (what the sampler must move).
    pub fn dimension(&self) -> usize {
        self.n
    }
}

impl<const D: usize> MinibatchPotential<f64, D> for PartTarget<'_, D> {
    /// The part's index.
    type Batch = usize;

    fn draw_batch<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        let mut part_rng = ModelRng::seed_from_u64(rng.next_u64());
        self.model.partition().choose(&mut part_rng)
    }

    fn minibatch_gradient(&self, part: &usize, x: &[f64; D], gradient: &mut [f64; D]) {
        self.model
            .part_gradient(&x[..self.n], *part, &mut gradient[..self.n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qnmc_host::model::Model;
    use qnmc_host::targets::SyntheticRecipe;
    use rand_xorshift::XorShiftRng;

    const D: usize = 64;

    fn small_model() -> GaussianPmf {
        let ratings = SyntheticRecipe::new(12, 10, 60, 3)
            .with_min_per_user(3)
            .build()
            .unwrap();
        GaussianPmf::new(ratings, 2).unwrap()
    }

    #[test]
    fn refuses_a_model_larger_than_its_storage() {
        let model = small_model();
        assert!(PartTarget::<4>::new(&model).is_none());
        assert_eq!(
            PartTarget::<D>::new(&model).unwrap().dimension(),
            (12 + 10) * 2
        );
    }

    /// The parts' gradients, weighted by how often each is drawn, average to
    /// the full gradient: checked on the empirical draw frequencies of 4000
    /// draws against the part sizes (each frequency within 5 binomial sds),
    /// and exactly with the sizes' own weights.
    #[test]
    fn parts_are_drawn_by_size_and_average_to_the_full_gradient() {
        let model = small_model();
        let target = PartTarget::<D>::new(&model).unwrap();
        let n = target.dimension();
        let sizes = model.partition().sizes();
        let total: usize = sizes.iter().sum();
        let mut rng = XorShiftRng::seed_from_u64(7);
        let mut counts = vec![0usize; sizes.len()];
        let draws = 4000;
        for _ in 0..draws {
            counts[target.draw_batch(&mut rng)] += 1;
        }
        for (&c, &s) in counts.iter().zip(&sizes) {
            let p = s as f64 / total as f64;
            let sd = (draws as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (c as f64 - draws as f64 * p).abs() <= 5.0 * sd + 1e-9,
                "{counts:?} {sizes:?}"
            );
        }
        let x = {
            let mut x = [0.0; D];
            x[..n].copy_from_slice(&model.initial_point());
            x
        };
        let mut full = vec![0.0; n];
        let _ = model.potential_and_gradient(&x[..n], &mut full);
        let mut average = vec![0.0; n];
        for (p, &s) in sizes.iter().enumerate() {
            let mut g = [0.0; D];
            target.minibatch_gradient(&p, &x, &mut g);
            for (a, gi) in average.iter_mut().zip(&g[..n]) {
                *a += s as f64 / total as f64 * gi;
            }
        }
        for (a, f) in average.iter().zip(&full) {
            assert!((a - f).abs() <= 1e-9 * (1.0 + f.abs()), "{a} vs {f}");
        }
    }
}
