//! `gaussian-cov`: parsing, every covariance error, gradient and potential.

use super::*;
use crate::targets::testing::{gradient_error, random_point};

fn temp_csv(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("qnmc-gausscov-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn error(name: &str, text: &str) -> (PathBuf, InputError) {
    let path = temp_csv(name, text);
    let e = GaussianCovariance::from_csv(&path).unwrap_err();
    (path, e)
}

/// A 4×4 covariance A Aᵀ + I with a seeded A, printed with 17 digits.
fn random_covariance_text(seed: u64) -> (String, DMatrix<f64>) {
    let a = DMatrix::from_vec(4, 4, random_point(16, 1.0, seed));
    let sigma = &a * a.transpose() + DMatrix::identity(4, 4);
    let mut text = String::from("# a comment\n");
    for i in 0..4 {
        let row: Vec<String> = (0..4).map(|j| format!("{:.17e}", sigma[(i, j)])).collect();
        text.push_str(&row.join(","));
        text.push('\n');
    }
    (text, sigma)
}

#[test]
fn precision_inverts_the_covariance_and_potential_is_the_quadratic_form() {
    let (text, sigma) = random_covariance_text(3);
    let target = GaussianCovariance::from_csv(temp_csv("random.csv", &text)).unwrap();
    assert_eq!(target.dimension(), 4);
    let product = target.covariance() * target.precision();
    assert!((product - DMatrix::<f64>::identity(4, 4)).amax() < 1e-10);
    // U(x) = ½ yᵀy where Σ y' = x − μ is solved independently by LU.
    let target = target.with_mean(vec![1.0, -2.0, 0.5, 0.0]).unwrap();
    let x = random_point(4, 2.0, 5);
    let centred = DVector::from_iterator(4, x.iter().zip(target.mean()).map(|(a, m)| a - m));
    let solved = sigma.clone().lu().solve(&centred).unwrap();
    let mut g = vec![0.0; 4];
    let u = target.potential_and_gradient(&x, &mut g);
    assert!((u - 0.5 * centred.dot(&solved)).abs() < 1e-10 * (1.0 + u.abs()));
    for i in 0..4 {
        assert!((g[i] - solved[i]).abs() < 1e-10 * (1.0 + solved.amax()));
    }
    let known = target.known_posterior().unwrap();
    assert_eq!(known.mean, [1.0, -2.0, 0.5, 0.0]);
    for i in 0..4 {
        assert_eq!(known.sd[i], sigma[(i, i)].sqrt());
    }
    assert!(known.gaussian_marginals);
    assert_eq!(target.initial_point(), target.mean());
}

#[test]
fn gradient_matches_central_differences() {
    // U is quadratic: central differences are exact up to rounding
    // (~1e-16·|U|/h), far below 1e-7.
    let (text, _) = random_covariance_text(9);
    let target = GaussianCovariance::from_csv(temp_csv("fd.csv", &text)).unwrap();
    for seed in 0..4 {
        let x = random_point(4, 3.0, 40 + seed);
        let err = gradient_error(&target, &x, 1e-4);
        assert!(err < 1e-7, "seed {seed}: relative error {err}");
    }
}

#[test]
fn header_row_is_optional() {
    let with = GaussianCovariance::from_csv(temp_csv("h.csv", "x,y\n2,1\n1,2\n")).unwrap();
    let without = GaussianCovariance::from_csv(temp_csv("nh.csv", "2,1\n1,2\n")).unwrap();
    assert_eq!(with.covariance(), without.covariance());
    assert_eq!(with.name(), "gaussian-cov");
}

#[test]
fn not_square() {
    let (path, e) = error("wide.csv", "1,0,0\n0,1,0\n");
    assert_eq!(e.kind(), InputErrorKind::Dimension);
    assert_eq!(
        e.to_string(),
        format!(
            "{}: the covariance is not square: 2 rows of 3 numbers (expected 3 rows)",
            path.display()
        )
    );
    let (path, e) = error("tall.csv", "1,0\n0,1\n0,0\n");
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3: the covariance is not square: 3 rows of 2 numbers (expected 2 rows)",
            path.display()
        )
    );
}

#[test]
fn not_symmetric() {
    let (path, e) = error("asym.csv", "x,y,z\n1,0,0\n0,1,0.5\n0,0.4,1\n");
    assert_eq!(e.kind(), InputErrorKind::Dimension);
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3:3: the covariance is not symmetric: entry (2, 3) is 0.5 but entry (3, 2) is 0.4",
            path.display()
        )
    );
    // Differences within the tolerance are accepted.
    let ok = temp_csv("almost.csv", "1,0.5\n0.50000000001,1\n");
    assert!(GaussianCovariance::from_csv(ok).is_ok());
}

#[test]
fn not_positive_definite() {
    // Leading 1×1 and 2×2 blocks are fine; the 3×3 one has determinant < 0.
    let (path, e) = error("indefinite.csv", "1,0,0.9\n0,1,0.9\n0.9,0.9,1\n");
    assert_eq!(e.kind(), InputErrorKind::Dimension);
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3:3: the covariance is not positive definite: its leading 3×3 block is not \
             (Cholesky fails at diagonal entry (3, 3))",
            path.display()
        )
    );
    let (path, e) = error("negative.csv", "-1,0\n0,1\n");
    assert!(
        e.to_string()
            .starts_with(&format!("{}:1:1: ", path.display())),
        "{e}"
    );
}

#[test]
fn non_numeric_and_non_finite_entries() {
    let (path, e) = error("text.csv", "a,b\n1,0\n0,one\n");
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3:2: cell \"one\" in column \"b\" is not a number",
            path.display()
        )
    );
    let (path, e) = error("inf.csv", "1,inf\ninf,1\n");
    assert_eq!(
        e.to_string(),
        format!("{}:1:2: covariance entry inf is not finite", path.display())
    );
}

#[test]
fn empty_and_missing_files() {
    let (_, e) = error("empty.csv", "\n");
    assert_eq!(e.kind(), InputErrorKind::Empty);
    let e = GaussianCovariance::from_csv("/nonexistent/qnmc/cov.csv").unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Io);
    assert!(
        e.to_string()
            .contains("cannot read /nonexistent/qnmc/cov.csv")
    );
}

#[test]
fn mean_must_fit() {
    let target = GaussianCovariance::from_csv(temp_csv("m.csv", "1,0\n0,1\n")).unwrap();
    let e = target.clone().with_mean(vec![1.0]).unwrap_err();
    assert_eq!(e.kind(), InputErrorKind::Dimension);
    assert!(
        e.to_string()
            .ends_with("a mean of 1 entries does not fit this 2×2 covariance")
    );
    let e = target.with_mean(vec![1.0, f64::NAN]).unwrap_err();
    assert!(e.to_string().ends_with("mean entry NaN is not finite"));
}
