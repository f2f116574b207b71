//! `eight-schools-centered`: the centred parametrisation of eight schools
//! (posteriordb `eight_schools-eight_schools_centered`; Rubin 1981, Gelman et
//! al., *Bayesian Data Analysis*, §5.5), with the classic data built in.
//!
//! Model, J = 8 schools:
//!
//! ```text
//! μ ~ N(0, 5²),  τ ~ half-Cauchy(0, 5),  θⱼ ~ N(μ, τ²),  yⱼ ~ N(θⱼ, σⱼ²),
//! y = (28, 8, −3, 7, −1, 1, 18, 12),  σ = (15, 10, 16, 11, 9, 11, 10, 18).
//! ```
//!
//! Unconstrained coordinates x = (θ₁, …, θ₈, μ, s = log τ); τ = eˢ has
//! log-Jacobian s. With r = Σⱼ (θⱼ − μ)²,
//!
//! ```text
//! U = μ²/50 + log(1 + τ²/25) − s + J s + r e⁻²ˢ/2 + Σⱼ (yⱼ − θⱼ)²/(2σⱼ²),
//! ∂U/∂θⱼ = (θⱼ − μ) e⁻²ˢ + (θⱼ − yⱼ)/σⱼ²,
//! ∂U/∂μ  = μ/25 − Σⱼ (θⱼ − μ) e⁻²ˢ,
//! ∂U/∂s  = 2τ²/(25 + τ²) − 1 + J − r e⁻²ˢ,
//! ```
//!
//! which is −log π − log|J| minus the constant
//! log 5 + ½ log 2π (μ) + log(5π/2) (τ) + J log 2π + Σⱼ log σⱼ (θ and y).
//! log(1 + τ²/25) is evaluated as softplus(2(s − log 5)), so it stays finite
//! for any finite s.
//!
//! As τ → 0 the θⱼ are pinned to μ with sd τ while s keeps its prior-and-data
//! scale: the funnel in (θ, log τ) that makes this parametrisation hard for
//! HMC (divergences; [`crate::targets::Posteriordb`] has the non-centred one).
//! Reported quantities on the constrained scale: `theta[1]`…`theta[8]`, `mu`,
//! `tau`. No exact posterior moments are known; none are claimed.

use crate::model::Model;

/// Number of schools.
pub const SCHOOLS: usize = 8;
/// Estimated treatment effects yⱼ.
pub const Y: [f64; SCHOOLS] = [28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0];
/// Their standard errors σⱼ.
pub const SIGMA: [f64; SCHOOLS] = [15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0];

const MU_PRIOR_VARIANCE: f64 = 25.0;
const TAU_SCALE: f64 = 5.0;

/// log(1 + eᶻ), without overflow for large z or loss for very negative z.
pub(crate) fn softplus(z: f64) -> f64 {
    z.max(0.0) + (-z.abs()).exp().ln_1p()
}

/// 1/(1 + e⁻ᶻ), the derivative of [`softplus`], without overflow.
pub(crate) fn logistic(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// The centred eight-schools model; see the module documentation.
///
/// ```
/// use qnmc_host::model::Model;
/// use qnmc_host::targets::EightSchoolsCentered;
/// let model = EightSchoolsCentered::new();
/// assert_eq!(model.name(), "eight-schools-centered");
/// assert_eq!(model.dimension(), 10);
/// let mut out = [0.0; 10];
/// model.constrain(&[0.0; 10], &mut out);
/// assert_eq!(out[9], 1.0); // tau = e^0
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EightSchoolsCentered;

impl EightSchoolsCentered {
    /// The model with the classic data: y = (28, 8, −3, 7, −1, 1, 18, 12),
    /// σ = (15, 10, 16, 11, 9, 11, 10, 18).
    pub fn new() -> Self {
        EightSchoolsCentered
    }
}

impl Model for EightSchoolsCentered {
    fn name(&self) -> String {
        "eight-schools-centered".into()
    }

    fn dimension(&self) -> usize {
        SCHOOLS + 2
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        let (mu, s) = (x[SCHOOLS], x[SCHOOLS + 1]);
        let precision = (-2.0 * s).exp(); // 1/τ²
        let mut u = 0.0;
        let mut spread = 0.0; // Σ (θⱼ − μ)²
        let mut pull = 0.0; // Σ (θⱼ − μ) e⁻²ˢ
        for j in 0..SCHOOLS {
            let theta = x[j];
            let d = theta - mu;
            let miss = theta - Y[j];
            let var = SIGMA[j] * SIGMA[j];
            u += 0.5 * miss * miss / var;
            // d = 0 contributes 0 even where e⁻²ˢ overflows (no 0·∞).
            let shrink = if d == 0.0 { 0.0 } else { d * precision };
            gradient[j] = shrink + miss / var;
            pull += shrink;
            spread += d * d;
        }
        let hierarchy = if spread == 0.0 {
            0.0
        } else {
            0.5 * spread * precision
        };
        let z = 2.0 * (s - TAU_SCALE.ln()); // τ²/25 = eᶻ
        let j = SCHOOLS as f64;
        u += 0.5 * mu * mu / MU_PRIOR_VARIANCE + softplus(z) + (j - 1.0) * s + hierarchy;
        gradient[SCHOOLS] = mu / MU_PRIOR_VARIANCE - pull;
        gradient[SCHOOLS + 1] = 2.0 * logistic(z) + (j - 1.0) - 2.0 * hierarchy;
        u
    }

    fn output_names(&self) -> Vec<String> {
        let mut names: Vec<String> = (1..=SCHOOLS).map(|j| format!("theta[{j}]")).collect();
        names.push("mu".into());
        names.push("tau".into());
        names
    }

    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        out[..SCHOOLS + 1].copy_from_slice(&x[..SCHOOLS + 1]);
        out[SCHOOLS + 1] = x[SCHOOLS + 1].exp();
    }

    /// The non-centred twin (θⱼ = μ + τ θ̃ⱼ, θ̃ⱼ ~ N(0, 1)): the same
    /// posterior without the funnel.
    fn reference_model(&self) -> Option<Box<dyn Model>> {
        Some(Box::new(NoncentredTwin))
    }
}

/// The same posterior non-centred, for `qnmc check`'s reference run
/// ([`crate::run::reference_run`]): x = (θ̃₁, …, θ̃₈, μ, s), θⱼ = μ + τ θ̃ⱼ,
/// θ̃ⱼ ~ N(0, 1), τ = eˢ. With mⱼ = (θⱼ − yⱼ)/σⱼ²,
///
/// ```text
/// U = Σⱼ θ̃ⱼ²/2 + Σⱼ (yⱼ − θⱼ)²/(2σⱼ²) + μ²/50 + log(1 + τ²/25) − s,
/// ∂U/∂θ̃ⱼ = θ̃ⱼ + τ mⱼ,  ∂U/∂μ = μ/25 + Σⱼ mⱼ,
/// ∂U/∂s = 2τ²/(25 + τ²) − 1 + τ Σⱼ θ̃ⱼ mⱼ,
/// ```
///
/// the centred U at θ(θ̃) minus log|∂θ/∂θ̃| = J s (tested), so the same
/// constant. Reports the centred model's quantities (θ, μ, τ).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct NoncentredTwin;

impl Model for NoncentredTwin {
    fn name(&self) -> String {
        "eight-schools-centered (non-centred twin)".into()
    }

    fn dimension(&self) -> usize {
        SCHOOLS + 2
    }

    fn potential_and_gradient(&self, x: &[f64], gradient: &mut [f64]) -> f64 {
        let (mu, s) = (x[SCHOOLS], x[SCHOOLS + 1]);
        let tau = s.exp();
        let mut u = 0.0;
        let (mut sum_m, mut sum_m_raw) = (0.0, 0.0);
        for j in 0..SCHOOLS {
            let raw = x[j];
            // θ̃ = 0 contributes 0 even where τ overflows (no 0·∞).
            let offset = if raw == 0.0 { 0.0 } else { tau * raw };
            let miss = mu + offset - Y[j];
            let m = miss / (SIGMA[j] * SIGMA[j]);
            u += 0.5 * raw * raw + 0.5 * miss * m;
            gradient[j] = raw + if m == 0.0 { 0.0 } else { tau * m };
            sum_m += m;
            sum_m_raw += raw * m;
        }
        let z = 2.0 * (s - TAU_SCALE.ln()); // τ²/25 = eᶻ
        u += 0.5 * mu * mu / MU_PRIOR_VARIANCE + softplus(z) - s;
        gradient[SCHOOLS] = mu / MU_PRIOR_VARIANCE + sum_m;
        gradient[SCHOOLS + 1] = 2.0 * logistic(z) - 1.0
            + if sum_m_raw == 0.0 {
                0.0
            } else {
                tau * sum_m_raw
            };
        u
    }

    fn output_names(&self) -> Vec<String> {
        EightSchoolsCentered.output_names()
    }

    fn constrain(&self, x: &[f64], out: &mut [f64]) {
        let (mu, tau) = (x[SCHOOLS], x[SCHOOLS + 1].exp());
        for j in 0..SCHOOLS {
            out[j] = mu + if x[j] == 0.0 { 0.0 } else { tau * x[j] };
        }
        out[SCHOOLS] = mu;
        out[SCHOOLS + 1] = tau;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::testing::{gradient_error, random_point};
    use std::f64::consts::PI;

    /// The reference `qnmc check` makes for this target (NUTS with the
    /// diagonal metric on the non-centred twin, 4 × (1000 + 5000) draws)
    /// mixed, and agrees with posteriordb's reference draws of the same
    /// posterior (eight_schools_noncentered: same priors and data; Stan
    /// NUTS, 10 × 1000 draws): z = difference / √(MCSE² + MCSE²) for the 10
    /// means and 10 sds, below the check's own threshold for 20 z-scores
    /// (Bonferroni at family-wise level 0.001: 4.06). Needs the shared data.
    #[test]
    fn the_reference_run_agrees_with_posteriordb() {
        use crate::run::{Progress, ReferenceSettings, check::z_threshold, reference_run};
        use crate::targets::{Posteriordb, PosteriordbPosterior};
        let test = "eight_schools_centered::the_reference_run_agrees_with_posteriordb";
        let Some(root) = crate::targets::testing::shared_data(test) else {
            return;
        };
        let pdb = Posteriordb::load(
            PosteriordbPosterior::EightSchoolsNoncentered,
            &root.join("posteriordb/posterior_database"),
        )
        .expect("posteriordb's eight_schools_noncentered");
        let centred = EightSchoolsCentered::new();
        assert_eq!(pdb.output_names(), centred.output_names());
        let known = pdb.known_posterior().unwrap();
        let made =
            reference_run(&centred, &ReferenceSettings::default(), &Progress::hidden()).unwrap();
        assert!(made.mixing.mixed(), "{}", made.mixing.summary());
        let ours = &made.posterior;
        let threshold = z_threshold(2 * (SCHOOLS + 2));
        let se = |a: &Option<Vec<f64>>, j: usize| a.as_ref().map_or(0.0, |v| v[j]);
        for (j, name) in centred.output_names().iter().enumerate() {
            let z_mean = (ours.mean[j] - known.mean[j])
                / se(&ours.mean_mcse, j).hypot(se(&known.mean_mcse, j));
            let z_sd =
                (ours.sd[j] - known.sd[j]) / se(&ours.sd_mcse, j).hypot(se(&known.sd_mcse, j));
            assert!(
                z_mean.abs() < threshold && z_sd.abs() < threshold,
                "{name}: mean {} vs {} (z {z_mean:+.2}), sd {} vs {} (z {z_sd:+.2})",
                ours.mean[j],
                known.mean[j],
                ours.sd[j],
                known.sd[j]
            );
        }
    }

    /// The non-centred twin: ∇U against central differences, and at
    /// θ = μ + τ θ̃ the centred U equals the twin's plus J s (log|∂θ/∂θ̃|)
    /// to rounding (a missing or wrong Jacobian misses by |J s| ≥ 2.4 at
    /// these points); the same reported quantities.
    #[test]
    fn the_noncentred_twin_is_the_same_posterior() {
        let centred = EightSchoolsCentered::new();
        let twin = centred.reference_model().unwrap();
        assert_eq!(twin.output_names(), centred.output_names());
        let mut g = [0.0; 10];
        for (seed, log_tau) in [(1, 0.3), (2, -3.0), (3, 2.0), (4, -0.7)] {
            let mut x = random_point(10, 1.5, 30 + seed);
            x[8] *= 8.0;
            x[9] = log_tau;
            let err = gradient_error(twin.as_ref(), &x, 1e-6);
            assert!(err < 1e-6, "log tau = {log_tau}: {err:e}");
            let mut centred_x = [0.0; 10];
            twin.constrain(&x, &mut centred_x);
            let mut reported = [0.0; 10];
            centred_x[9] = log_tau;
            centred.constrain(&centred_x, &mut reported);
            let mut twin_reported = [0.0; 10];
            twin.constrain(&x, &mut twin_reported);
            assert_eq!(reported, twin_reported);
            let u_centred = centred.potential_and_gradient(&centred_x, &mut g);
            let u_twin = twin.potential_and_gradient(&x, &mut g);
            let gap = u_centred - (u_twin + SCHOOLS as f64 * log_tau);
            assert!(gap.abs() < 1e-12 * u_centred.abs().max(1.0), "{gap:e}");
        }
    }

    fn normal_lpdf(x: f64, mean: f64, sd: f64) -> f64 {
        let z = (x - mean) / sd;
        -0.5 * z * z - sd.ln() - 0.5 * (2.0 * PI).ln()
    }

    /// The half-Cauchy(0, γ) density on τ > 0: 2 / (π γ (1 + (τ/γ)²)).
    fn half_cauchy_lpdf(tau: f64, scale: f64) -> f64 {
        (2.0 / (PI * scale * (1.0 + (tau / scale).powi(2)))).ln()
    }

    /// ∇U against central differences (step 1e-6), relative error below 1e-6
    /// of max(1, ‖∇U‖∞): random points with log τ from the neck (−3, −5, θ
    /// close to μ) to well above the prior scale (4).
    #[test]
    fn gradient_matches_finite_differences() {
        let model = EightSchoolsCentered::new();
        let tolerance = 1e-6;
        for (seed, log_tau) in [
            (1, 0.5),
            (2, -3.0),
            (3, -5.0),
            (4, 2.0),
            (5, 4.0),
            (6, -1.0),
        ] {
            let tau = f64::exp(log_tau);
            let mut x = random_point(10, 1.0, 10 + seed);
            let mu = 10.0 * x[8];
            for theta in &mut x[..SCHOOLS] {
                // θ at about the conditional scale τ around μ.
                *theta = mu + 2.0 * tau * *theta;
            }
            x[8] = mu;
            x[9] = log_tau;
            let err = gradient_error(&model, &x, 1e-6);
            assert!(err < tolerance, "log tau = {log_tau}: {err:e}");
        }
    }

    /// U plus the documented constant equals −(log prior + log likelihood +
    /// log-Jacobian), each factor evaluated on the constrained scale.
    #[test]
    fn potential_matches_constrained_log_density() {
        let model = EightSchoolsCentered::new();
        let x = [20.0, 7.5, -1.0, 6.0, 1.0, 2.5, 15.0, 9.0, 6.0, 1.7];
        let mut g = [0.0; 10];
        let u = model.potential_and_gradient(&x, &mut g);
        let (mu, tau) = (x[8], x[9].exp());
        let mut log_density = normal_lpdf(mu, 0.0, 5.0) + half_cauchy_lpdf(tau, 5.0) + tau.ln();
        for j in 0..SCHOOLS {
            log_density += normal_lpdf(x[j], mu, tau) + normal_lpdf(Y[j], x[j], SIGMA[j]);
        }
        let constant = 5f64.ln()
            + 0.5 * (2.0 * PI).ln()
            + (2.5 * PI).ln()
            + 8.0 * (2.0 * PI).ln()
            + SIGMA.iter().map(|s| s.ln()).sum::<f64>();
        let difference = u + constant + log_density;
        assert!(
            difference.abs() < 1e-12 * log_density.abs(),
            "U + C = {}, −log π = {}",
            u + constant,
            -log_density
        );
        // By hand at θ = y, μ = 0, s = log 5 (τ = 5): Σ y² = 1376, so
        // U = log 2 + 7 log 5 + 1376/50.
        let mut at_data = [0.0; 10];
        at_data[..SCHOOLS].copy_from_slice(&Y);
        at_data[9] = 5f64.ln();
        let by_hand = 2f64.ln() + 7.0 * 5f64.ln() + 1376.0 / 50.0;
        let u = model.potential_and_gradient(&at_data, &mut g);
        assert!((u - by_hand).abs() < 1e-12 * by_hand, "{u} vs {by_hand}");
    }

    #[test]
    fn names_and_constrain() {
        let model = EightSchoolsCentered::new();
        let names = model.output_names();
        assert_eq!(names.len(), 10);
        assert_eq!(names[0], "theta[1]");
        assert_eq!(names[7], "theta[8]");
        assert_eq!(names[8..], ["mu", "tau"]);
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, -2.0, -3.0];
        let mut out = [0.0; 10];
        model.constrain(&x, &mut out);
        assert_eq!(out[..9], x[..9]);
        assert_eq!(out[9], (-3.0f64).exp());
        assert_eq!(model.initial_point(), vec![0.0; 10]);
        assert!(model.known_posterior().is_none());
    }

    /// Huge |s|: U and ∇U stay finite where they can (the softplus of the
    /// prior), and are +∞ rather than NaN where the true value overflows.
    #[test]
    fn extreme_log_tau_is_not_nan() {
        let model = EightSchoolsCentered::new();
        let mut g = [0.0; 10];
        let mut x = [0.0; 10];
        x[9] = 800.0;
        let u = model.potential_and_gradient(&x, &mut g);
        assert!(
            u.is_finite() && g.iter().all(|v| v.is_finite()),
            "{u} {g:?}"
        );
        // Every θ = μ: the hierarchy term is 0 even as e⁻²ˢ overflows.
        x[9] = -800.0;
        let u = model.potential_and_gradient(&x, &mut g);
        assert!(
            u.is_finite() && g.iter().all(|v| v.is_finite()),
            "{u} {g:?}"
        );
        x[0] = 1.0;
        let u = model.potential_and_gradient(&x, &mut g);
        assert!(
            u == f64::INFINITY && !g.iter().any(|v| v.is_nan()),
            "{u} {g:?}"
        );
        for z in [-5.0, -1.0, 0.0, 1.0, 5.0, 30.0] {
            let direct = f64::exp(z).ln_1p();
            assert!((softplus(z) - direct).abs() <= 1e-14 * direct, "{z}");
            let sigmoid = 1.0 / (1.0 + f64::exp(-z));
            assert!((logistic(z) - sigmoid).abs() <= 1e-15, "{z}");
        }
        assert_eq!(softplus(800.0), 800.0);
        assert_eq!(softplus(-800.0), 0.0);
        assert_eq!((logistic(800.0), logistic(-800.0)), (1.0, 0.0));
    }
}
