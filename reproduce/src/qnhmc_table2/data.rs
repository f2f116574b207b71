//! The images as this experiment uses them: Fashion-MNIST's Sneaker (7,
//! label 0) and Ankle boot (9, label 1), read by [`FashionMnist::load`], kept
//! as raw grey levels (one byte per pixel) so that a full gradient streams
//! 9.4 MB instead of the 75 MB of the f64 design matrix.
//!
//! The model is the one of `--target fashion-mnist`: covariates pixel / 255,
//! no intercept, prior w ~ N(0, 100·I). Storing the byte p and dividing the
//! linear predictor by 255 once gives the same posterior (up to rounding in
//! the last bits); a test checks U and ∇U against the project's model.

use qnmc::Potential;

use qnmc_host::targets::FashionMnist;

/// The model's dimension: 28 × 28 pixels, no intercept (the paper's d = 784).
pub const DIMENSION: usize = 784;

/// The prior variance of every weight (the papers' weakly informative N(0, 100)).
pub const PRIOR_VARIANCE: f64 = 100.0;

/// Images of two classes with 0/1 labels, and a Gaussian prior of precision
/// `prior_precision` on the weights: the potential U(w) = −log p(w | data)
/// (up to a constant) of a logistic regression on pixel / 255.
#[derive(Debug, Clone)]
pub struct Images {
    pixels: Vec<u8>,
    labels: Vec<f64>,
    /// 1 / prior variance; the gradient-descent baseline varies it (its ℓ2
    /// regulariser λ).
    pub prior_precision: f64,
}

/// The training and test images used.
#[derive(Debug, Clone)]
pub struct Data {
    /// Training images (the likelihood).
    pub train: Images,
    /// Held-out test images (the test error).
    pub test: Images,
    /// Where the files were read from.
    pub folder: String,
}

fn softplus(f: f64) -> f64 {
    if f > 0.0 {
        f + (-f).exp().ln_1p()
    } else {
        f.exp().ln_1p()
    }
}

fn sigmoid(f: f64) -> f64 {
    1.0 / (1.0 + (-f).exp())
}

impl Images {
    /// Every `stride`-th row of `rows` (grey levels recovered as bytes from
    /// the model's pixel / 255).
    fn from_rows<'a>(
        rows: impl Iterator<Item = (&'a [f64], f64)>,
        stride: usize,
        prior_precision: f64,
    ) -> Self {
        let mut pixels = Vec::new();
        let mut labels = Vec::new();
        for (row, label) in rows.step_by(stride.max(1)) {
            pixels.extend(row.iter().map(|&x| (x * 255.0).round() as u8));
            labels.push(label);
        }
        Images {
            pixels,
            labels,
            prior_precision,
        }
    }

    /// Images built from grey levels (row by row, [`DIMENSION`] per image)
    /// and labels (tests).
    pub fn new(pixels: Vec<u8>, labels: Vec<f64>, prior_precision: f64) -> Self {
        assert_eq!(pixels.len(), labels.len() * DIMENSION);
        Images {
            pixels,
            labels,
            prior_precision,
        }
    }

    /// The number of images.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// `true` without images.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    fn rows(&self) -> impl Iterator<Item = (&[u8], f64)> {
        self.pixels
            .chunks_exact(DIMENSION)
            .zip(self.labels.iter().copied())
    }

    /// The linear predictor xᵀw of one image: eight partial sums, so that
    /// the compiler can keep them in vector registers (a single running sum
    /// fixes the order of the additions and is not vectorised).
    fn linear(row: &[u8], w: &[f64]) -> f64 {
        let mut acc = [0.0; 8];
        for (p, v) in row.chunks_exact(8).zip(w.chunks_exact(8)) {
            for ((a, &pk), &vk) in acc.iter_mut().zip(p).zip(v) {
                *a += f64::from(pk) * vk;
            }
        }
        let tail = row.len() / 8 * 8;
        let rest: f64 = row[tail..]
            .iter()
            .zip(&w[tail..])
            .map(|(&p, &v)| f64::from(p) * v)
            .sum();
        (acc.iter().sum::<f64>() + rest) / 255.0
    }

    /// P(label 1 | w) of every image.
    pub fn probabilities(&self, w: &[f64]) -> Vec<f64> {
        self.rows()
            .map(|(row, _)| sigmoid(Self::linear(row, w)))
            .collect()
    }

    /// Adds P(label 1 | w) of every image to `sum` (the posterior
    /// predictive's running sum).
    pub fn add_probabilities(&self, w: &[f64], sum: &mut [f64]) {
        for ((row, _), s) in self.rows().zip(sum.iter_mut()) {
            *s += sigmoid(Self::linear(row, w));
        }
    }

    /// The fraction of images whose label differs from p ≥ 0.5 (ties:
    /// label 1).
    pub fn error_of_probabilities(&self, p: &[f64]) -> f64 {
        let wrong = self
            .labels
            .iter()
            .zip(p)
            .filter(|&(&t, &q)| (q >= 0.5) != (t >= 0.5))
            .count();
        wrong as f64 / self.len().max(1) as f64
    }

    /// The fraction of images the weights w misclassify.
    pub fn error(&self, w: &[f64]) -> f64 {
        self.error_of_probabilities(&self.probabilities(w))
    }
}

impl Potential<f64, DIMENSION> for Images {
    fn potential_and_gradient(&self, w: &[f64; DIMENSION], g: &mut [f64; DIMENSION]) -> f64 {
        let mut u = 0.0;
        for (gi, wi) in g.iter_mut().zip(w) {
            *gi = self.prior_precision * wi;
            u += 0.5 * self.prior_precision * wi * wi;
        }
        for (row, t) in self.rows() {
            let f = Self::linear(row, w);
            u += softplus(f) - t * f;
            let r = (sigmoid(f) - t) / 255.0;
            for (gi, &p) in g.iter_mut().zip(row) {
                *gi += r * f64::from(p);
            }
        }
        u
    }
}

/// Loads the stand-in from [`FashionMnist::locate`]; every `train_stride`-th
/// training image and every `test_stride`-th test image (1: all). `Err` says
/// why the data could not be read.
pub fn load(train_stride: usize, test_stride: usize) -> Result<Data, String> {
    let dir = FashionMnist::locate(None).map_err(|e| e.to_string())?;
    let data = FashionMnist::load(&dir, FashionMnist::MNIST_STAND_IN).map_err(|e| e.to_string())?;
    let precision = 1.0 / PRIOR_VARIANCE;
    let train = Images::from_rows(
        (0..data.train.len()).map(|n| (data.train.design_row(n), data.train.labels()[n])),
        train_stride,
        precision,
    );
    let test = Images::from_rows(
        (0..data.test.len()).map(|n| (data.test.design_row(n), data.test.labels()[n])),
        test_stride,
        precision,
    );
    Ok(Data {
        train,
        test,
        folder: dir.display().to_string(),
    })
}
