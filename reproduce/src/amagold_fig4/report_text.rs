//! The fixed prose of the `amagold-fig4` report: what the paper leaves open,
//! what we chose and why, and where our error comes from.

/// The settings section and the reading of the error.
pub(super) const SETTINGS: &str = "\
## Where the error comes from

A chain's MSE has three parts: the Monte-Carlo variance of its average, the
start-up transient (every chain starts at w = 0, ‖truth‖²/D away) and the
sampler's stationary bias. The first is measured directly by the spread over
seeds (the *Monte-Carlo* column); the other two are the *systematic* column.

- **Small ε (10⁻⁶ … 10⁻⁴): the transient.** With the momentum resampled every
  outer step, a sample moves the chain about εT per coordinate, a random walk
  with drift (εT)²/2·∇U. In S samples it travels about εT·√S: at ε = 10⁻⁵ and
  S = 10⁵ that is 0.03 against posterior means of order 0.5–1, so the MSE
  stays at the start line whatever the sampler. The paper's 5·10⁶ samples move
  this wall to ε about √50 ≈ 7× smaller; the shape of the curve is the same.
  Here SGHMC and AMAGOLD do not differ, except that AMAGOLD's rejections slow
  it slightly. SGHMC without momentum resampling is the exception: its
  momentum, never reset and hardly damped (by 2εβ per step), keeps what the
  large gradients near w = 0 gave it and carries the chain much further per
  sample (its sd ratio above 1 there says it has not settled).
- **Large ε (10⁻³ … 5·10⁻³): variance against bias.** The chains have mixed;
  the systematic column is then the sampler's bias, and for AMAGOLD only
  noise. How biased SGHMC is depends on a setting the paper leaves open
  (Algorithm 1: \"optionally, resample momentum\"). Resampled every outer step
  (the paper's figures' SGHMC here, as in Figs. 1–3), the momentum is reset to
  N(0, I) before each T = 10 steps, so the minibatch noise (variance ε²·V per
  step, V the gradient noise) only adds about T·ε²·V to a unit variance: at
  these ε SGHMC is close to HMC without a test, and its bias is small. Never
  resampled, the friction alone must balance the noise: the stationary
  momentum variance is about 1 + ε·V/(4β), the chain runs hot and its sd ratio
  climbs above 1. A hot chain's mean moves less than its spread (for a
  Gaussian posterior it would not move at all), so SGHMC's bias shows in the
  sd ratio first (from ε = 10⁻³) and in the MSE of the mean only at the
  larger ε, where it then dominates — the paper's measure is the less
  sensitive of the two. AMAGOLD pays for its exactness with rejections, which
  make its average noisier per sample.

## Settings the paper leaves open, and what we chose

| setting | paper | ours (rule) |
|---|---|---|
| samples per chain | 5 × 10⁶ | 10⁵ kept after 10⁴ burn-in (a few minutes in all; see above for what this moves) |
| \"true\" parameters | 10⁷ HMC samples, as Li et al. (2016a) | 4 × 25 000 HMC draws (L = 10, ε by dual averaging to 0.8) after 1000 warm-up; its MCSE² is printed as the floor and is far below every measured MSE |
| momentum variance σ² | not printed | 1 (unit mass, as in Figs. 1–3) |
| starting point | not printed | w = 0, the prior mean |
| burn-in | not printed | a tenth of the kept samples |
| prior, preprocessing | not printed (Li et al. 2016a) | N(0, 100·I), covariates standardised, intercept — the RMHMC/Zhang & Sutton convention of this project's logistic regressions |
| minibatches | size 32 and 16 | drawn uniformly with replacement, gradient scaled by N/B |
| SGHMC | Algorithm 1, momentum resampling optional | friction C = 2β, no noise estimate (β̂ = 0); momentum resampled every T steps (as in our Figs. 1–3), and, as a sensitivity, never resampled |
| MSE | \"between the estimated and true parameters\" | mean over the D coordinates of the squared error of the posterior-mean estimate |
| step sizes | 10⁻⁶ to 5 × 10⁻³ | 10⁻⁶, 10⁻⁵, 10⁻⁴, 10⁻³, 2·10⁻³, 3·10⁻³, 5·10⁻³ |
| seeds | not printed | 3 per setting, 95 % t intervals |
";
