//! Fashion-MNIST as a two-class Bayesian logistic regression on raw pixels:
//! the offline stand-in for the QNHMC paper's MNIST "7 vs 9" (Fu, Luo & Zhang
//! 2016, §5.2, d = 784).
//!
//! MNIST itself cannot be fetched offline; Fashion-MNIST (Zalando Research,
//! MIT licence) has the same layout — 28 × 28 grey-level images in IDX files,
//! 60 000 for training and 10 000 for testing, ten classes of 6 000 + 1 000 —
//! and Debian ships it as the package `dataset-fashion-mnist`, which installs
//! the four gzip-compressed IDX files in [`FashionMnist::DEFAULT_DIR`].
//! Its classes 7 (Sneaker) and 9 (Ankle boot) take the place of the digits
//! 7 and 9: 6 000 + 6 000 training and 1 000 + 1 000 test images, against
//! the paper's 6 265 + 5 949 and 1 028 + 1 009.

use super::held_out::HeldOutSet;
use super::load::PAPER_PRIOR_VARIANCE;
use super::model::{DataDescription, Parts};
use super::{LabelMapping, LogisticRegressionModel};
use crate::input::{IdxImages, InputError, InputErrorKind, Sha256, parse_idx, read_idx};
use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// File names (without `.gz`) of the four IDX files, as distributed.
const TRAIN_IMAGES: &str = "train-images-idx3-ubyte";
const TRAIN_LABELS: &str = "train-labels-idx1-ubyte";
const TEST_IMAGES: &str = "t10k-images-idx3-ubyte";
const TEST_LABELS: &str = "t10k-labels-idx1-ubyte";

/// The Fashion-MNIST images of two classes as a Bayesian logistic regression:
/// the training images of the two classes give the likelihood of
/// [`train`](Self::train), the test images of the same classes are held out
/// in [`test`](Self::test) to measure test error.
///
/// Preprocessing, and why:
///
/// - each covariate is one pixel's grey level divided by 255, so in [0, 1]
///   (the usual MNIST scaling), **not standardised**: pixels near the border
///   are 0 in (almost) every image of a class pair, and a column that is
///   constant cannot be standardised; the paper gives no standardisation;
/// - **no intercept**: the paper's d = 784 is exactly the number of pixels,
///   so D = rows × columns = 784 and `w[k]` is pixel k's weight, pixels
///   numbered row by row (`w[1]` top left, `w[29]` the first pixel of the
///   second row; [`column_names`](LogisticRegressionModel::column_names)
///   says `pixel[row,column]`);
/// - the first class named is label 0, the second label 1 (`[7, 9]`:
///   Sneaker → 0, Ankle boot → 1);
/// - prior w ~ N(0, [`PAPER_PRIOR_VARIANCE`]·I) = N(0, 100·I), the weakly
///   informative prior of Zhang & Sutton (2011) and Girolami & Calderhead
///   (2011) that the paper follows.
///
/// The folder holding the files is found by [`locate`](Self::locate): an
/// explicit folder (`--data DIR`), else `$QNMC_FASHION_MNIST`
/// ([`DATA_ENV`](Self::DATA_ENV)), else [`DEFAULT_DIR`](Self::DEFAULT_DIR).
/// Each file is read as `NAME.gz` or, when that is absent, as `NAME`
/// (a decompressed copy).
///
/// ```no_run
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::FashionMnist;
///
/// let dir = FashionMnist::locate(None)?;
/// let data = FashionMnist::load(&dir, FashionMnist::MNIST_STAND_IN)?;
/// assert_eq!(data.train.dimension(), 784);
/// assert_eq!((data.train.len(), data.test.len()), (12_000, 2_000));
/// // At w = 0 every image is predicted label 0: half the test set is wrong.
/// assert_eq!(data.test.test_error(&vec![0.0; 784]), 0.5);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct FashionMnist {
    /// The logistic regression on the training images of the two classes
    /// (target name `fashion-mnist`).
    pub train: LogisticRegressionModel,
    /// The test images of the two classes, with the same columns and labels.
    pub test: HeldOutSet,
    classes: [u8; 2],
    folder: PathBuf,
}

/// The Fashion-MNIST folder was not found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FashionMnistNotFound {
    /// Every place looked at, with what it is, in order.
    pub looked: Vec<(PathBuf, String)>,
}

impl fmt::Display for FashionMnistNotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the Fashion-MNIST folder was not found; looked at ")?;
        for (i, (path, what)) in self.looked.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{} ({what})", path.display())?;
        }
        write!(
            f,
            "; install it with `apt-get install dataset-fashion-mnist` (into {}), or name a \
             folder holding its four IDX files with --data DIR or {}=DIR (docs/DATA.md)",
            FashionMnist::DEFAULT_DIR,
            FashionMnist::DATA_ENV
        )
    }
}

impl std::error::Error for FashionMnistNotFound {}

impl FashionMnist {
    /// Where Debian's package `dataset-fashion-mnist` puts the IDX files.
    pub const DEFAULT_DIR: &'static str = "/usr/share/datasets/fashion-mnist";

    /// Environment variable naming the folder of the IDX files.
    pub const DATA_ENV: &'static str = "QNMC_FASHION_MNIST";

    /// Environment variable that turns a test's "skipped: no Fashion-MNIST"
    /// into a failure (any value but empty or `0`), for CI once it has
    /// installed the package.
    pub const REQUIRE_ENV: &'static str = "QNMC_REQUIRE_FASHION_MNIST";

    /// The classes standing in for MNIST's digits 7 and 9: 7 (Sneaker) and
    /// 9 (Ankle boot).
    pub const MNIST_STAND_IN: [u8; 2] = [7, 9];

    /// The names of Fashion-MNIST's ten classes, by label.
    pub const CLASS_NAMES: [&'static str; 10] = [
        "T-shirt/top",
        "Trouser",
        "Pullover",
        "Dress",
        "Coat",
        "Sandal",
        "Shirt",
        "Sneaker",
        "Bag",
        "Ankle boot",
    ];

    /// A class as messages and `model.json` name it: `7 (Sneaker)`.
    pub fn class_label(class: u8) -> String {
        match Self::CLASS_NAMES.get(usize::from(class)) {
            Some(name) => format!("{class} ({name})"),
            None => format!("{class}"),
        }
    }

    /// The folder: `explicit` (`--data DIR`), else `environment` (the value
    /// of [`DATA_ENV`](Self::DATA_ENV)), else `default`. A folder named by
    /// the first two must exist (no silent fallback).
    pub fn locate_in(
        explicit: Option<&Path>,
        environment: Option<PathBuf>,
        default: &Path,
    ) -> Result<PathBuf, FashionMnistNotFound> {
        let (dir, what) = match (explicit, environment) {
            (Some(dir), _) => (
                dir.to_path_buf(),
                "--data: not an existing folder".to_owned(),
            ),
            (None, Some(dir)) => (dir, format!("{}: not an existing folder", Self::DATA_ENV)),
            (None, None) => (
                default.to_path_buf(),
                "where Debian's dataset-fashion-mnist installs it".to_owned(),
            ),
        };
        if dir.is_dir() {
            Ok(dir)
        } else {
            Err(FashionMnistNotFound {
                looked: vec![(dir, what)],
            })
        }
    }

    /// [`locate_in`](Self::locate_in) with `$QNMC_FASHION_MNIST` (when set
    /// and not empty) and [`DEFAULT_DIR`](Self::DEFAULT_DIR).
    pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, FashionMnistNotFound> {
        let environment = std::env::var_os(Self::DATA_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        Self::locate_in(explicit, environment, Path::new(Self::DEFAULT_DIR))
    }

    /// Whether [`REQUIRE_ENV`](Self::REQUIRE_ENV) asks for tests that need
    /// the data to fail rather than skip.
    pub fn required() -> bool {
        std::env::var_os(Self::REQUIRE_ENV).is_some_and(|v| !v.is_empty() && v != "0")
    }

    /// For tests that need the data: the folder, or `None` after printing
    /// one line `skipped <test>: …` on the process's stderr (not the test
    /// harness's captured output) saying where it looked and how to install
    /// the data.
    ///
    /// # Panics
    ///
    /// When the folder is missing and [`REQUIRE_ENV`](Self::REQUIRE_ENV) is
    /// set: a skip is then a failure.
    pub fn for_test(test: &str) -> Option<PathBuf> {
        match Self::locate(None) {
            Ok(dir) => Some(dir),
            Err(e) => {
                assert!(
                    !Self::required(),
                    "{test}: {e} ({} is set)",
                    Self::REQUIRE_ENV
                );
                let _ = writeln!(std::io::stderr(), "skipped {test}: {e}");
                None
            }
        }
    }

    /// Reads the four IDX files in `dir` and keeps the images labelled
    /// `classes[0]` (label 0) or `classes[1]` (label 1); see the type's
    /// documentation for the preprocessing.
    ///
    /// Errors (each naming its file): a file that is missing or not an IDX
    /// file of unsigned bytes of the right rank, image and label files of one
    /// split that disagree on the count, test images of another size than the
    /// training images, two equal classes, a class without images.
    pub fn load(dir: &Path, classes: [u8; 2]) -> Result<Self, InputError> {
        let [zero, one] = classes;
        if zero == one {
            return Err(InputError::new(
                dir,
                InputErrorKind::Label,
                format!("the two classes must differ, not {zero} and {zero}"),
            ));
        }
        let train_images_path = file(dir, TRAIN_IMAGES);
        let train_labels_path = file(dir, TRAIN_LABELS);
        let test_images_path = file(dir, TEST_IMAGES);
        let test_labels_path = file(dir, TEST_LABELS);

        let bytes = std::fs::read(&train_images_path)
            .map_err(|e| InputError::io(&train_images_path, &e))?;
        let mut sha = Sha256::new();
        sha.update(&bytes);
        let train_images =
            parse_idx(&bytes, &train_images_path)?.into_images(&train_images_path)?;
        drop(bytes);
        let train_labels = read_idx(&train_labels_path)?.into_labels(&train_labels_path)?;
        same_count(&train_images, &train_labels, &train_labels_path)?;
        let test_images = read_idx(&test_images_path)?.into_images(&test_images_path)?;
        if (test_images.rows, test_images.columns) != (train_images.rows, train_images.columns) {
            return Err(InputError::new(
                &test_images_path,
                InputErrorKind::Dimension,
                format!(
                    "its images are {} × {} pixels, those of {} are {} × {}",
                    test_images.rows,
                    test_images.columns,
                    train_images_path.display(),
                    train_images.rows,
                    train_images.columns
                ),
            ));
        }
        let test_labels = read_idx(&test_labels_path)?.into_labels(&test_labels_path)?;
        same_count(&test_images, &test_labels, &test_labels_path)?;

        let dimension = train_images.pixels_per_image();
        let train = select(&train_images, &train_labels, classes, &train_labels_path)?;
        let test = select(&test_images, &test_labels, classes, &test_labels_path)?;

        let column_names: Vec<String> = (1..=train_images.rows)
            .flat_map(|r| (1..=train_images.columns).map(move |c| format!("pixel[{r},{c}]")))
            .collect();
        let (zero_name, one_name) = (Self::class_label(zero), Self::class_label(one));
        let mut data = DataDescription::new(
            &train_images_path,
            &format!("{} (one label per image)", train_labels_path.display()),
        );
        data.sha256 = Some(sha.hex());
        data.rows_read = train_images.count;
        data.rows = train.labels.len();
        data.covariates = column_names.clone();
        data.selection = Some(format!(
            "the {} of {} training images labelled {zero_name} ({}) or {one_name} ({}); \
             covariates: the {dimension} pixels ({} x {}, row by row) / 255, in [0, 1], not \
             standardised, no intercept; the {} test images of these classes in {} are held out \
             (not in the likelihood)",
            train.labels.len(),
            train_images.count,
            train.counts[0],
            train.counts[1],
            train_images.rows,
            train_images.columns,
            test.labels.len(),
            test_images_path.display(),
        ));
        data.label_rule = Some(format!(
            "class {zero_name} -> 0, class {one_name} -> 1 (the first class named is 0)"
        ));
        let train = LogisticRegressionModel::from_parts(Parts {
            name: "fashion-mnist".to_owned(),
            design: train.design,
            dimension,
            labels: train.labels,
            prior_variance: PAPER_PRIOR_VARIANCE,
            column_names,
            intercept: false,
            label_mapping: LabelMapping {
                zero: zero_name,
                one: one_name,
            },
            data,
        });
        Ok(FashionMnist {
            train,
            test: HeldOutSet::new(test.design, test.labels, dimension),
            classes,
            folder: dir.to_path_buf(),
        })
    }

    /// The two classes, label 0's first.
    pub fn classes(&self) -> [u8; 2] {
        self.classes
    }

    /// The folder the files were read from.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// The fraction of held-out test images that w misclassifies
    /// ([`HeldOutSet::test_error`]).
    pub fn test_error(&self, w: &[f64]) -> f64 {
        self.test.test_error(w)
    }
}

/// `dir/NAME.gz`, else `dir/NAME` when only that exists (a decompressed
/// copy); the `.gz` name when neither does, so the error names the file as
/// distributed.
fn file(dir: &Path, name: &str) -> PathBuf {
    let gz = dir.join(format!("{name}.gz"));
    let raw = dir.join(name);
    if !gz.exists() && raw.exists() {
        raw
    } else {
        gz
    }
}

fn same_count(images: &IdxImages, labels: &[u8], labels_path: &Path) -> Result<(), InputError> {
    if images.count == labels.len() {
        return Ok(());
    }
    Err(InputError::new(
        labels_path,
        InputErrorKind::Dimension,
        format!(
            "{} labels for {} images: the image and label files do not belong together",
            labels.len(),
            images.count
        ),
    ))
}

/// The images of two classes as a design matrix and 0/1 labels.
struct Selected {
    design: Vec<f64>,
    labels: Vec<f64>,
    /// Images of each class.
    counts: [usize; 2],
}

fn select(
    images: &IdxImages,
    labels: &[u8],
    classes: [u8; 2],
    labels_path: &Path,
) -> Result<Selected, InputError> {
    let mut counts = [0usize; 2];
    for &label in labels {
        if let Some(k) = classes.iter().position(|&c| c == label) {
            counts[k] += 1;
        }
    }
    if let Some(k) = counts.iter().position(|&n| n == 0) {
        let mut present: Vec<u8> = labels.to_vec();
        present.sort_unstable();
        present.dedup();
        let present: Vec<String> = present.iter().map(u8::to_string).collect();
        return Err(InputError::new(
            labels_path,
            InputErrorKind::Label,
            format!(
                "no image has label {}; the labels present are {}",
                classes[k],
                present.join(", ")
            ),
        ));
    }
    let size = images.pixels_per_image();
    let mut design = Vec::with_capacity((counts[0] + counts[1]) * size);
    let mut selected = Vec::with_capacity(counts[0] + counts[1]);
    for (n, &label) in labels.iter().enumerate() {
        let Some(k) = classes.iter().position(|&c| c == label) else {
            continue;
        };
        design.extend(images.image(n).iter().map(|&p| f64::from(p) / 255.0));
        selected.push(k as f64);
    }
    Ok(Selected {
        design,
        labels: selected,
        counts,
    })
}
