//! The logistic-regression arithmetic shared by the run-time model
//! ([`LogisticRegressionModel`](super::LogisticRegressionModel)) and the
//! const-generic [`LogisticRegression`](crate::targets::LogisticRegression).

/// Sets `g = w/v` and returns the prior term ‖w‖²/(2v) of U.
pub(crate) fn prior(w: &[f64], prior_variance: f64, g: &mut [f64]) -> f64 {
    let inv_v = 1.0 / prior_variance;
    let mut u = 0.0;
    for (gi, &wi) in g.iter_mut().zip(w) {
        *gi = wi * inv_v;
        u += 0.5 * wi * wi * inv_v;
    }
    u
}

/// fₙ = xₙᵀw.
pub(crate) fn linear(x: &[f64], w: &[f64]) -> f64 {
    x.iter().zip(w).map(|(a, b)| a * b).sum()
}

/// Adds one observation's (σ(f) − t)·x to `g` and returns its term
/// log(1 + e^f) − t·f of U, f = xᵀw.
pub(crate) fn add_observation(x: &[f64], t: f64, w: &[f64], g: &mut [f64]) -> f64 {
    let f = linear(x, w);
    // One exponential: e = exp(−|f|) gives both log(1 + e^f) and σ(f)
    // without overflow.
    let e = (-f.abs()).exp();
    let s = if f >= 0.0 {
        1.0 / (1.0 + e)
    } else {
        e / (1.0 + e)
    };
    let r = s - t;
    for (gi, &xi) in g.iter_mut().zip(x) {
        *gi += r * xi;
    }
    f.max(0.0) + e.ln_1p() - t * f
}

/// Adds `weight`·(σ(f) − t)·x to `g` (the gradient part only).
pub(crate) fn add_observation_gradient(x: &[f64], t: f64, w: &[f64], weight: f64, g: &mut [f64]) {
    let r = weight * (sigmoid(linear(x, w)) - t);
    for (gi, &xi) in g.iter_mut().zip(x) {
        *gi += r * xi;
    }
}

/// σ(f) = 1/(1 + e^{−f}), without overflow.
pub(crate) fn sigmoid(f: f64) -> f64 {
    if f >= 0.0 {
        1.0 / (1.0 + (-f).exp())
    } else {
        let e = f.exp();
        e / (1.0 + e)
    }
}
