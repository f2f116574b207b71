#!/usr/bin/env python3
"""Writes a synthetic logistic-regression CSV for `qnmc run --target logreg-csv`.

Covariates x ~ N(0, Σ) with Σ = Q diag(σ²) Qᵀ, σ² spread geometrically so that
cond(Σ) = --condition (Q a random rotation), true coefficients w ~ N(0, 1)
scaled so the linear predictor has sd 1.5, an intercept of 0.3, and labels
y ~ Bernoulli(sigmoid(0.3 + xᵀw)). Columns x1..xD then y. Standard library
only; the same --seed gives the same file on every machine.

    python3 scripts/make-logreg-csv.py --rows 100000 --dim 10 --condition 1000 --seed 1 > lr.csv
"""
import argparse
import math
import random
import sys


def rotation(d, rng):
    """A random orthogonal matrix (Gram-Schmidt of a Gaussian matrix)."""
    q = []
    for _ in range(d):
        v = [rng.gauss(0.0, 1.0) for _ in range(d)]
        for u in q:
            p = sum(a * b for a, b in zip(v, u))
            v = [a - p * b for a, b in zip(v, u)]
        n = math.sqrt(sum(a * a for a in v))
        q.append([a / n for a in v])
    return q


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--dim", type=int, default=10)
    ap.add_argument("--condition", type=float, default=1.0,
                    help="condition number of the covariates' covariance")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    d = a.dim
    sds = [a.condition ** (-0.5 * i / max(d - 1, 1)) for i in range(d)]
    q = rotation(d, rng)
    w = [rng.gauss(0.0, 1.0) for _ in range(d)]
    # sd of xᵀw = ‖diag(sds) Qᵀ w‖ (x = Q diag(sds) z).
    qtw = [sum(q[k][i] * w[i] for i in range(d)) for k in range(d)]
    scale = 1.5 / math.sqrt(sum((s * c) ** 2 for s, c in zip(sds, qtw)))
    w = [scale * v for v in w]
    out = sys.stdout
    out.write(",".join([f"x{i + 1}" for i in range(d)] + ["y"]) + "\n")
    for _ in range(a.rows):
        z = [rng.gauss(0.0, 1.0) * s for s in sds]
        x = [sum(q[k][i] * z[k] for k in range(d)) for i in range(d)]
        eta = 0.3 + sum(xi * wi for xi, wi in zip(x, w))
        y = 1 if rng.random() < 1.0 / (1.0 + math.exp(-eta)) else 0
        out.write(",".join(f"{v:.6g}" for v in x) + f",{y}\n")


if __name__ == "__main__":
    main()
