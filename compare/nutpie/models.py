"""PyMC versions of qnmc's built-in hierarchical targets: the same posterior,
the same data and the same (centred or non-centred) parameterisation.

Each target is a `Target` with
- `build()`: the PyMC model;
- `columns`: the quantities in qnmc's order and CmdStan CSV names
  (`theta.1` for `theta[1]`), as `qnmc run --target NAME` writes them;
- `constrained(idata_group)`: the draws of those quantities, from nutpie's
  posterior (chain, draw, quantity);
- `value_point(row)`: a qnmc CSV row of quantities (constrained scale) mapped
  to PyMC's value variables (its unconstrained scale), for verify_models.py;
- `qnmc_args`: what `qnmc run/check` needs besides `--target`.

The qnmc sources each model copies are named in its docstring; the data are
the ones built into qnmc (eight schools' classic table; stochastic
volatility's returns regenerated here with the documented SplitMix64 +
Box-Muller recipe).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

# ---------------------------------------------------------------- data

#: eight schools (host/src/targets/eight_schools_centered.rs; posteriordb's
#: eight_schools.json holds the same numbers)
EIGHT_Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
EIGHT_SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])

MASK64 = (1 << 64) - 1


class SplitMix64:
    """SplitMix64 as in host/src/targets/stochastic_volatility.rs: add the
    golden-ratio increment, then two xor-shift-multiply rounds."""

    def __init__(self, seed: int):
        self.state = seed & MASK64

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def open_uniform(self) -> float:
        # (top 53 bits + 1) / 2^53, in (0, 1]
        return float((self.next() >> 11) + 1) * (1.0 / float(1 << 53))

    def normal(self) -> float:
        # Box-Muller, cosine branch
        u1 = self.open_uniform()
        u2 = self.open_uniform()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


SV_SEED = 0x5EED00057001
SV_LENGTH = 100
SV_TRUE = dict(mu=-1.0, phi=0.95, sigma=0.25)


def simulate_sv(seed: int = SV_SEED, length: int = SV_LENGTH, mu: float = -1.0,
                phi: float = 0.95, sigma: float = 0.25) -> tuple[np.ndarray, np.ndarray]:
    """(h, y) of the built-in stochastic-volatility data: normals drawn in the
    order eps_1, eta_1, eps_2, eta_2, ...; h_1 = mu + sigma/sqrt(1-phi^2) eps_1,
    h_t = mu + phi (h_{t-1} - mu) + sigma eps_t, y_t = exp(h_t/2) eta_t."""
    rng = SplitMix64(seed)
    h = []
    y = []
    for t in range(length):
        eps = rng.normal()
        eta = rng.normal()
        if t == 0:
            ht = mu + sigma / math.sqrt(1.0 - phi * phi) * eps
        else:
            ht = mu + phi * (h[t - 1] - mu) + sigma * eps
        h.append(ht)
        y.append(math.exp(0.5 * ht) * eta)
    return np.array(h), np.array(y)


#: radon-centered (host/src/targets/radon_centered.rs): group sizes, seed and
#: the values the data were simulated with
RADON_GROUP_SIZES = [1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 25, 30, 40]
RADON_GROUPS = len(RADON_GROUP_SIZES)
RADON_SEED = 0x5EED00AD0001
RADON_TRUE = dict(mu_alpha=1.5, beta=-0.7, sigma_alpha=0.3, sigma_y=0.8)
RADON_FLOOR_PROBABILITY = 0.25


def simulate_radon(seed: int = RADON_SEED) -> dict[str, np.ndarray]:
    """The built-in data of radon-centered: first alpha_j = mu_alpha +
    sigma_alpha eps_j for every group, then observation by observation, group
    after group, x_i = 1 if a uniform is <= 0.25 (else 0) and y_i =
    alpha_j + beta x_i + sigma_y eta_i. Returns group (0-based), x, y and
    the true alpha."""
    t = RADON_TRUE
    rng = SplitMix64(seed)
    alpha = [t["mu_alpha"] + t["sigma_alpha"] * rng.normal() for _ in RADON_GROUP_SIZES]
    group, x, y = [], [], []
    for j, size in enumerate(RADON_GROUP_SIZES):
        for _ in range(size):
            xi = 1.0 if rng.open_uniform() <= RADON_FLOOR_PROBABILITY else 0.0
            y.append(alpha[j] + t["beta"] * xi + t["sigma_y"] * rng.normal())
            group.append(j)
            x.append(xi)
    return dict(group=np.array(group), x=np.array(x), y=np.array(y), alpha=np.array(alpha))


#: hier-logistic-centered (host/src/targets/hier_logistic_centered.rs)
HIER_LOGISTIC_GROUP_SIZES = [2, 3, 3, 4, 4, 5, 6, 7, 8, 10, 12, 16]
HIER_LOGISTIC_GROUPS = len(HIER_LOGISTIC_GROUP_SIZES)
HIER_LOGISTIC_SEED = 0x5EED01061001
HIER_LOGISTIC_TRUE = dict(mu=-0.3, beta=(0.8, -0.5), tau=0.7)


def simulate_hier_logistic(seed: int = HIER_LOGISTIC_SEED) -> dict[str, np.ndarray]:
    """The built-in data of hier-logistic-centered: first alpha_j = mu +
    tau eps_j for every group, then observation by observation, group after
    group, x_i1, x_i2 standard normal and y_i = 1 if a uniform is <=
    1/(1 + exp(-eta_i)), eta_i = alpha_j + beta_1 x_i1 + beta_2 x_i2. Returns
    group (0-based), x (N x 2), y and the true alpha."""
    t = HIER_LOGISTIC_TRUE
    rng = SplitMix64(seed)
    alpha = [t["mu"] + t["tau"] * rng.normal() for _ in HIER_LOGISTIC_GROUP_SIZES]
    group, x, y = [], [], []
    for j, size in enumerate(HIER_LOGISTIC_GROUP_SIZES):
        for _ in range(size):
            xi = [rng.normal(), rng.normal()]
            eta = alpha[j] + t["beta"][0] * xi[0] + t["beta"][1] * xi[1]
            p = 1.0 / (1.0 + math.exp(-eta))
            y.append(1 if rng.open_uniform() <= p else 0)
            group.append(j)
            x.append(xi)
    return dict(group=np.array(group), x=np.array(x), y=np.array(y), alpha=np.array(alpha))


#: latent-gp-centered (host/src/targets/latent_gp_centered.rs): inputs,
#: jitter, seed and the values the data were simulated with
LATENT_GP_POINTS = 20
LATENT_GP_SPAN = 10.0
LATENT_GP_JITTER = 1e-6
LATENT_GP_SEED = 0x5EED00690001
LATENT_GP_TRUE = dict(mu=1.0, alpha=1.0, rho=2.0)


def latent_gp_inputs() -> list[float]:
    """t_i = 10 i / 19, i = 0..19, evaluated as in Rust."""
    return [LATENT_GP_SPAN * float(i) / float(LATENT_GP_POINTS - 1) for i in range(LATENT_GP_POINTS)]


def _cholesky_lower(k: list[list[float]]) -> list[list[float]]:
    """host/src/targets/latent_gp_centered/cholesky.rs, operation for
    operation (row by row; s = K_ij - sum_{k<j} L_ik L_jk subtracted in
    turn; L_ii = sqrt(s), L_ij = s / L_jj), so that the result is the same
    to the last bit."""
    n = len(k)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = k[i][j]
            for m in range(j):
                s -= low[i][m] * low[j][m]
            if i == j:
                if not s > 0.0:
                    raise ValueError(f"not positive definite at row {i}")
                low[i][i] = math.sqrt(s)
            else:
                low[i][j] = s / low[j][j]
    return low


def simulate_latent_gp(seed: int = LATENT_GP_SEED) -> dict[str, np.ndarray]:
    """The built-in data of latent-gp-centered: first N = 20 standard normals
    eps, f = L eps with L the Cholesky factor of K(alpha = 1, rho = 2)
    (K_ij = alpha*alpha * exp(-(d*d) / (2*rho*rho)) + 1e-6 on the
    diagonal, d = t_i - t_j; (L eps)_i summed over k = 0..i in turn), then
    count by count y_i ~ Poisson(exp(1 + f_i)) by Knuth's product of
    uniforms (the smallest k with u_1 ... u_{k+1} <= exp(-lambda)). Returns
    t, y and the true f."""
    tr = LATENT_GP_TRUE
    rng = SplitMix64(seed)
    t = latent_gp_inputs()
    n = LATENT_GP_POINTS
    eps = [rng.normal() for _ in range(n)]
    k = [[tr["alpha"] * tr["alpha"] * math.exp(-((t[i] - t[j]) * (t[i] - t[j])) / (2.0 * tr["rho"] * tr["rho"]))
          + (LATENT_GP_JITTER if i == j else 0.0) for j in range(n)] for i in range(n)]
    low = _cholesky_lower(k)
    f = []
    for i in range(n):
        s = 0.0
        for m in range(i + 1):
            s += low[i][m] * eps[m]
        f.append(s)
    y = []
    for fi in f:
        threshold = math.exp(-math.exp(tr["mu"] + fi))
        count, product = 0, rng.open_uniform()
        while product > threshold:
            count += 1
            product *= rng.open_uniform()
        y.append(count)
    return dict(t=np.array(t), y=np.array(y), f=np.array(f))


# ---------------------------------------------------------------- models

@dataclass
class Target:
    name: str
    build: Callable[[], object]
    columns: list[str]
    #: name of each quantity block in nutpie's posterior, in column order,
    #: with its length
    blocks: list[tuple[str, int]]
    value_point: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]
    qnmc_args: list[str] = field(default_factory=list)
    note: str = ""

    def constrained(self, posterior) -> np.ndarray:
        """(chain, draw, quantity) array in `columns` order from an
        InferenceData group (posterior or warmup_posterior)."""
        parts = []
        for var, size in self.blocks:
            a = np.asarray(posterior[var].values, dtype=float)
            a = a.reshape(a.shape[0], a.shape[1], -1)
            if a.shape[2] != size:
                raise ValueError(f"{self.name}: {var} has {a.shape[2]} entries, expected {size}")
            parts.append(a)
        return np.concatenate(parts, axis=2)

    def split_row(self, row: np.ndarray) -> dict[str, np.ndarray]:
        """A vector of quantities in `columns` order as {block: array}."""
        out = {}
        i = 0
        for var, size in self.blocks:
            out[var] = np.asarray(row[i:i + size], dtype=float)
            i += size
        return out


def _stan_names(base: str, n: int) -> list[str]:
    return [f"{base}.{i}" for i in range(1, n + 1)]


FUNNEL_DIM = 10


def funnel_model():
    """host/src/targets/funnel.rs: v ~ N(0, 3^2), x_i | v ~ N(0, e^v),
    i = 1..9. No constrained coordinates."""
    import pymc as pm

    with pm.Model() as m:
        v = pm.Normal("v", 0.0, 3.0)
        pm.Normal("x", 0.0, sigma=pm.math.exp(0.5 * v), shape=FUNNEL_DIM - 1)
    return m


def funnel_point(q):
    return {"v": np.asarray(q["v"]).reshape(()), "x": q["x"]}


def eight_centered_model():
    """host/src/targets/eight_schools_centered.rs: mu ~ N(0, 5^2),
    tau ~ half-Cauchy(0, 5), theta_j ~ N(mu, tau^2) (centred),
    y_j ~ N(theta_j, sigma_j^2). PyMC samples log tau, as qnmc does."""
    import pymc as pm

    with pm.Model() as m:
        mu = pm.Normal("mu", 0.0, 5.0)
        tau = pm.HalfCauchy("tau", 5.0)
        theta = pm.Normal("theta", mu, tau, shape=8)
        pm.Normal("y", theta, EIGHT_SIGMA, observed=EIGHT_Y)
    return m


def eight_centered_point(q):
    return {"mu": np.asarray(q["mu"]).reshape(()),
            "tau_log__": np.log(q["tau"]).reshape(()),
            "theta": q["theta"]}


def eight_noncentered_model():
    """posteriordb eight_schools_noncentered (qnmc target `eight-schools`):
    theta_trans ~ N(0, 1), mu ~ N(0, 5), tau ~ half-Cauchy(0, 5),
    theta = mu + tau * theta_trans, y ~ N(theta, sigma). Reported: theta, mu,
    tau."""
    import pymc as pm

    with pm.Model() as m:
        theta_trans = pm.Normal("theta_trans", 0.0, 1.0, shape=8)
        mu = pm.Normal("mu", 0.0, 5.0)
        tau = pm.HalfCauchy("tau", 5.0)
        theta = pm.Deterministic("theta", mu + tau * theta_trans)
        pm.Normal("y", theta, EIGHT_SIGMA, observed=EIGHT_Y)
    return m


def eight_noncentered_point(q):
    tau = float(np.asarray(q["tau"]).reshape(()))
    mu = float(np.asarray(q["mu"]).reshape(()))
    return {"theta_trans": (q["theta"] - mu) / tau,
            "mu": np.asarray(mu).reshape(()),
            "tau_log__": np.log(np.asarray(tau)).reshape(())}


def sv_model():
    """host/src/targets/stochastic_volatility.rs, centred:
    mu ~ N(0, 10^2), phi ~ Uniform(-1, 1), sigma ~ half-Cauchy(0, 5),
    h_1 ~ N(mu, sigma^2/(1 - phi^2)), h_t ~ N(mu + phi (h_{t-1} - mu), sigma^2),
    y_t ~ N(0, exp(h_t)). The latent path h is the sampled variable (a flat
    vector whose AR(1) density is added as a potential), so the model stays
    centred. PyMC's interval transform of phi is log((1+phi)/(1-phi)) =
    2 atanh(phi), twice qnmc's atanh: a fixed linear rescaling of one
    coordinate (log-Jacobians differ by the constant log 2)."""
    import pymc as pm

    _, y = simulate_sv()
    with pm.Model() as m:
        mu = pm.Normal("mu", 0.0, 10.0)
        phi = pm.Uniform("phi", -1.0, 1.0)
        sigma = pm.HalfCauchy("sigma", 5.0)
        h = pm.Flat("h", shape=SV_LENGTH)
        stationary_sd = sigma / pm.math.sqrt(1.0 - phi ** 2)
        prior_h = pm.logp(pm.Normal.dist(mu, stationary_sd), h[0]) + pm.math.sum(
            pm.logp(pm.Normal.dist(mu + phi * (h[:-1] - mu), sigma), h[1:]))
        pm.Potential("h_ar1", prior_h)
        pm.Normal("y", 0.0, sigma=pm.math.exp(0.5 * h), observed=y)
    return m


def sv_point(q):
    phi = np.asarray(q["phi"]).reshape(())
    return {"mu": np.asarray(q["mu"]).reshape(()),
            "phi_interval__": np.log1p(phi) - np.log1p(-phi),
            "sigma_log__": np.log(q["sigma"]).reshape(()),
            "h": q["h"]}


def radon_centered_model():
    """host/src/targets/radon_centered.rs, centred: mu_alpha ~ N(0, 10^2),
    beta ~ N(0, 10^2), sigma_alpha ~ half-N(0, 1), sigma_y ~ half-N(0, 1),
    alpha_j ~ N(mu_alpha, sigma_alpha^2), y_i ~ N(alpha_{j[i]} + beta x_i,
    sigma_y^2) on the simulated data (simulate_radon). PyMC samples
    log sigma_alpha and log sigma_y, as qnmc does."""
    import pymc as pm

    d = simulate_radon()
    with pm.Model() as m:
        mu_alpha = pm.Normal("mu_alpha", 0.0, 10.0)
        beta = pm.Normal("beta", 0.0, 10.0)
        sigma_alpha = pm.HalfNormal("sigma_alpha", 1.0)
        sigma_y = pm.HalfNormal("sigma_y", 1.0)
        alpha = pm.Normal("alpha", mu_alpha, sigma_alpha, shape=RADON_GROUPS)
        pm.Normal("y", alpha[d["group"]] + beta * d["x"], sigma_y, observed=d["y"])
    return m


def radon_centered_point(q):
    return {"alpha": q["alpha"],
            "mu_alpha": np.asarray(q["mu_alpha"]).reshape(()),
            "beta": np.asarray(q["beta"]).reshape(()),
            "sigma_alpha_log__": np.log(q["sigma_alpha"]).reshape(()),
            "sigma_y_log__": np.log(q["sigma_y"]).reshape(())}


def hier_logistic_centered_model():
    """host/src/targets/hier_logistic_centered.rs, centred: mu ~ N(0, 2.5^2),
    beta_k ~ N(0, 2.5^2) (k = 1, 2), tau ~ half-N(0, 1), alpha_j ~ N(mu,
    tau^2), y_i ~ Bernoulli(logit^-1(alpha_{j[i]} + x_i . beta)) on the
    simulated data (simulate_hier_logistic). PyMC samples log tau, as qnmc
    does."""
    import pymc as pm

    d = simulate_hier_logistic()
    with pm.Model() as m:
        mu = pm.Normal("mu", 0.0, 2.5)
        beta = pm.Normal("beta", 0.0, 2.5, shape=2)
        tau = pm.HalfNormal("tau", 1.0)
        alpha = pm.Normal("alpha", mu, tau, shape=HIER_LOGISTIC_GROUPS)
        pm.Bernoulli("y", logit_p=alpha[d["group"]] + pm.math.dot(d["x"], beta), observed=d["y"])
    return m


def hier_logistic_centered_point(q):
    return {"alpha": q["alpha"],
            "mu": np.asarray(q["mu"]).reshape(()),
            "beta": q["beta"],
            "tau_log__": np.log(q["tau"]).reshape(())}


def _latent_gp_covariance(alpha, rho):
    """K = alpha^2 exp(-(t_i - t_j)^2 / (2 rho^2)) + 1e-6 I as a PyTensor
    expression."""
    import pytensor.tensor as pt

    t = np.array(latent_gp_inputs())
    d2 = np.subtract.outer(t, t) ** 2
    return alpha ** 2 * pt.exp(-d2 / (2.0 * rho ** 2)) + LATENT_GP_JITTER * np.eye(LATENT_GP_POINTS)


def latent_gp_centered_model():
    """host/src/targets/latent_gp_centered.rs, centred: mu ~ N(0, 2^2),
    alpha ~ half-N(0, 1), rho ~ lognormal(log 2, 0.5^2), f ~ MVN(0, K)
    (sampled directly), y_i ~ Poisson(exp(mu + f_i)) on the simulated counts
    (simulate_latent_gp). PyMC samples log alpha and log rho, as qnmc
    does."""
    import pymc as pm

    d = simulate_latent_gp()
    with pm.Model() as m:
        mu = pm.Normal("mu", 0.0, 2.0)
        alpha = pm.HalfNormal("alpha", 1.0)
        rho = pm.LogNormal("rho", mu=math.log(2.0), sigma=0.5)
        f = pm.MvNormal("f", mu=np.zeros(LATENT_GP_POINTS), cov=_latent_gp_covariance(alpha, rho),
                        shape=LATENT_GP_POINTS)
        pm.Poisson("y", mu=pm.math.exp(mu + f), observed=d["y"])
    return m


def latent_gp_centered_point(q):
    return {"f": q["f"],
            "mu": np.asarray(q["mu"]).reshape(()),
            "alpha_log__": np.log(q["alpha"]).reshape(()),
            "rho_log__": np.log(q["rho"]).reshape(())}


def latent_gp_noncentered_model():
    """The same posterior as `latent_gp_centered_model` written non-centred:
    z ~ N(0, I), f = L z with K = L L^T (qnmc's latent-gp-noncentered). For
    reference_check.py. Reported: f, mu, alpha, rho."""
    import pymc as pm
    import pytensor.tensor as pt

    d = simulate_latent_gp()
    with pm.Model() as m:
        mu = pm.Normal("mu", 0.0, 2.0)
        alpha = pm.HalfNormal("alpha", 1.0)
        rho = pm.LogNormal("rho", mu=math.log(2.0), sigma=0.5)
        z = pm.Normal("z", 0.0, 1.0, shape=LATENT_GP_POINTS)
        low = pt.linalg.cholesky(_latent_gp_covariance(alpha, rho))
        f = pm.Deterministic("f", pt.dot(low, z))
        pm.Poisson("y", mu=pm.math.exp(mu + f), observed=d["y"])
    return m


TARGETS: dict[str, Target] = {
    "funnel": Target(
        "funnel", funnel_model, ["v"] + _stan_names("x", FUNNEL_DIM - 1),
        [("v", 1), ("x", FUNNEL_DIM - 1)], funnel_point,
        ["--dimension", str(FUNNEL_DIM)]),
    "eight-schools-centered": Target(
        "eight-schools-centered", eight_centered_model,
        _stan_names("theta", 8) + ["mu", "tau"],
        [("theta", 8), ("mu", 1), ("tau", 1)], eight_centered_point),
    "stochastic-volatility": Target(
        "stochastic-volatility", sv_model,
        ["mu", "phi", "sigma"] + _stan_names("h", SV_LENGTH),
        [("mu", 1), ("phi", 1), ("sigma", 1), ("h", SV_LENGTH)], sv_point),
    "eight-schools": Target(
        "eight-schools", eight_noncentered_model,
        _stan_names("theta", 8) + ["mu", "tau"],
        [("theta", 8), ("mu", 1), ("tau", 1)], eight_noncentered_point,
        ["--shared-data", "/work/shared/data"],
        note="posteriordb eight_schools_noncentered; qnmc needs --shared-data"),
    "radon-centered": Target(
        "radon-centered", radon_centered_model,
        _stan_names("alpha", RADON_GROUPS) + ["mu_alpha", "beta", "sigma_alpha", "sigma_y"],
        [("alpha", RADON_GROUPS), ("mu_alpha", 1), ("beta", 1), ("sigma_alpha", 1), ("sigma_y", 1)],
        radon_centered_point),
    "hier-logistic-centered": Target(
        "hier-logistic-centered", hier_logistic_centered_model,
        _stan_names("alpha", HIER_LOGISTIC_GROUPS) + ["mu"] + _stan_names("beta", 2) + ["tau"],
        [("alpha", HIER_LOGISTIC_GROUPS), ("mu", 1), ("beta", 2), ("tau", 1)],
        hier_logistic_centered_point),
    "latent-gp-centered": Target(
        "latent-gp-centered", latent_gp_centered_model,
        _stan_names("f", LATENT_GP_POINTS) + ["mu", "alpha", "rho"],
        [("f", LATENT_GP_POINTS), ("mu", 1), ("alpha", 1), ("rho", 1)],
        latent_gp_centered_point),
}

DEFAULT_TARGETS = ["funnel", "eight-schools-centered", "stochastic-volatility", "eight-schools",
                   "radon-centered", "hier-logistic-centered", "latent-gp-centered"]


def missing_data(target: Target, shared_data: str | None) -> str | None:
    """Why `target` cannot run here (its shared data folder is missing), or
    None."""
    if "--shared-data" in target.qnmc_args:
        folder = shared_data or target.qnmc_args[target.qnmc_args.index("--shared-data") + 1]
        if not (Path(folder) / "posteriordb").is_dir():
            return f"{target.name} skipped: it needs the shared data folder (--shared-data), {folder}/posteriordb not found"
    return None


def qnmc_target_args(target: Target, shared_data: str | None) -> list[str]:
    """`--target NAME` plus the target's options; `--shared-data` from the
    command line when given."""
    args = ["--target", target.name]
    extra = list(target.qnmc_args)
    if "--shared-data" in extra:
        i = extra.index("--shared-data")
        if shared_data:
            extra[i + 1] = shared_data
    return args + extra


def sv_noncentered_model():
    """The same posterior as `sv_model` (same priors, same data), written
    non-centred: z_t ~ N(0, 1) i.i.d., c_1 = sigma z_1 / sqrt(1 - phi^2),
    c_t = phi c_{t-1} + sigma z_t, h = mu + c (the AR(1) prior of h is the
    image of the z). Only for reference_check.py: an independent long run to
    judge qnmc check's HMC reference for stochastic-volatility. Reported: mu,
    phi, sigma, h."""
    import pymc as pm
    import pytensor.tensor as pt

    _, y = simulate_sv()
    n = SV_LENGTH
    lag = np.subtract.outer(np.arange(n), np.arange(n))  # t - s
    lower = lag >= 0
    with pm.Model() as m:
        mu = pm.Normal("mu", 0.0, 10.0)
        phi = pm.Uniform("phi", -1.0, 1.0)
        sigma = pm.HalfCauchy("sigma", 5.0)
        z = pm.Normal("z", 0.0, 1.0, shape=n)
        w = pt.set_subtensor(z[0], z[0] / pt.sqrt(1.0 - phi ** 2))
        powers = pt.where(lower, phi ** pt.as_tensor(np.where(lower, lag, 0).astype(float)), 0.0)
        h = pm.Deterministic("h", mu + sigma * pt.dot(powers, w))
        pm.Normal("y", 0.0, sigma=pm.math.exp(0.5 * h), observed=y)
    return m


def eight_noncentered_for_centered():
    """Non-centred eight schools reported as the centred target's quantities
    (the same posterior): for reference_check.py."""
    return eight_noncentered_model()


#: Non-centred rewrites of centred targets (same posterior), for
#: reference_check.py: target name -> (model builder, blocks in the target's
#: column order).
NONCENTERED_TWINS = {
    "stochastic-volatility": (sv_noncentered_model, TARGETS["stochastic-volatility"].blocks),
    "eight-schools-centered": (eight_noncentered_for_centered, TARGETS["eight-schools-centered"].blocks),
    "latent-gp-centered": (latent_gp_noncentered_model, TARGETS["latent-gp-centered"].blocks),
}
