#!/usr/bin/env python3
"""Is `qnmc check`'s reference trustworthy on the centred targets?

`qnmc check` has no known posterior for eight-schools-centered,
stochastic-volatility and latent-gp-centered; it builds one with a long
run (4 x 5000 draws): it was HMC (identity mass, 10 leapfrog steps) on the
centred coordinates, where HMC has the same funnel trouble as the samplers
under test, and is now NUTS with the diagonal metric on a non-centred twin
(host/src/run/reference.rs; the results/ here were judged against the old
one). This script samples the
same posterior written non-centred (models.NONCENTERED_TWINS: same priors,
same data, only the coordinates differ) with nutpie low-rank, a long run
(default 4 chains x (1000 tune + 5000 draws)), writes the draws in the
centred target's columns, and hands them to `qnmc check --target T
--draws-files ...`: if the non-centred run (which mixes well: see its R-hat
and ESS) fails the check, the reference and it disagree.

Before sampling, each twin is checked to be the same posterior: at the draws
of one `qnmc run` of the centred target, PyMC's non-centred log density at
z(h) minus log|dh/dz| must differ from the centred PyMC log density at h by a
constant.

Exit 0 when every long run passes against qnmc's reference; 1 when a twin is
not the same posterior or a long run fails the check (the reference, or the
long run, is wrong: read the table).

Usage: reference_check.py [--qnmc PATH] [--targets ...] [--draws 5000]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import qnmc_binary, read_cmdstan_csv, run_check, write_cmdstan_csv  # noqa: E402
from models import (LATENT_GP_JITTER, NONCENTERED_TWINS, TARGETS, latent_gp_inputs,  # noqa: E402
                    qnmc_target_args)


def twin_value_point(tname: str, q: dict) -> tuple[dict, float]:
    """The non-centred value point of a centred draw, and log|dh/dz| (or
    log|dtheta/dtheta_trans|)."""
    if tname == "stochastic-volatility":
        mu, phi, sigma = (float(np.asarray(q[k]).reshape(())) for k in ("mu", "phi", "sigma"))
        c = q["h"] - mu
        z = np.empty_like(c)
        z[0] = c[0] * np.sqrt(1 - phi ** 2) / sigma
        z[1:] = (c[1:] - phi * c[:-1]) / sigma
        log_jac = len(c) * np.log(sigma) - 0.5 * np.log(1 - phi ** 2)
        point = {"mu": np.asarray(mu), "phi_interval__": np.asarray(np.log1p(phi) - np.log1p(-phi)),
                 "sigma_log__": np.asarray(np.log(sigma)), "z": z}
        return point, log_jac
    if tname == "eight-schools-centered":
        mu, tau = (float(np.asarray(q[k]).reshape(())) for k in ("mu", "tau"))
        point = {"theta_trans": (q["theta"] - mu) / tau, "mu": np.asarray(mu),
                 "tau_log__": np.asarray(np.log(tau))}
        return point, len(q["theta"]) * np.log(tau)
    if tname == "latent-gp-centered":
        mu, alpha, rho = (float(np.asarray(q[k]).reshape(())) for k in ("mu", "alpha", "rho"))
        t = np.array(latent_gp_inputs())
        cov = alpha ** 2 * np.exp(-np.subtract.outer(t, t) ** 2 / (2.0 * rho ** 2)) + LATENT_GP_JITTER * np.eye(len(t))
        low = np.linalg.cholesky(cov)
        point = {"z": np.linalg.solve(low, q["f"]), "mu": np.asarray(mu),
                 "alpha_log__": np.asarray(np.log(alpha)), "rho_log__": np.asarray(np.log(rho))}
        return point, float(np.sum(np.log(np.diag(low))))
    raise KeyError(tname)


def same_posterior(qnmc: str, tname: str, twin_model) -> float:
    target = TARGETS[tname]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        subprocess.run([qnmc, "run", *qnmc_target_args(target, None), "--seed", "1", "--output", str(out),
                        "--quiet"], capture_output=True, check=False)
        csvs = [read_cmdstan_csv(f) for f in sorted(out.glob("chain_*.csv"))]
    if not csvs:
        raise SystemExit(f"error: qnmc run --target {tname} wrote no draws")
    q = np.concatenate([c.values[:, [c.columns.index(n) for n in target.columns]] for c in csvs])
    centred = target.build()
    lp_c = centred.compile_logp(jacobian=True)
    lp_n = twin_model.compile_logp(jacobian=True)
    diffs = []
    for row in q[::10]:
        blocks = target.split_row(row)
        point, log_jac = twin_value_point(tname, blocks)
        diffs.append(float(lp_c(target.value_point(blocks))) - (float(lp_n(point)) - log_jac))
    diffs = np.array(diffs)
    return float(np.ptp(diffs) / max(1.0, np.abs(diffs).max()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qnmc")
    ap.add_argument("--targets", default=",".join(NONCENTERED_TWINS))
    ap.add_argument("--tune", type=int, default=1000)
    ap.add_argument("--draws", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "reference_check"))
    args = ap.parse_args()
    qnmc = qnmc_binary(args.qnmc)
    import nutpie

    out_root = Path(args.out)
    status = 0
    for tname in [t for t in args.targets.split(",") if t]:
        build, blocks = NONCENTERED_TWINS[tname]
        target = TARGETS[tname]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            twin = build()
            spread = same_posterior(qnmc, tname, twin)
            print(f"{tname}: non-centred twin vs centred PyMC model, relative spread of the log-density "
                  f"difference {spread:.1e} ({'same posterior' if spread < 1e-8 else 'DIFFERENT'})", flush=True)
            if spread >= 1e-8:
                status = 1
                continue
            compiled = nutpie.compile_pymc_model(twin)
            with contextlib.redirect_stderr(io.StringIO()):
                idata = nutpie.sample(compiled, draws=args.draws, tune=args.tune, chains=4, cores=args.cores,
                                      seed=args.seed, progress_bar=False, low_rank_modified_mass_matrix=True)
        q = target.constrained(idata.posterior)
        run_dir = out_root / tname
        run_dir.mkdir(parents=True, exist_ok=True)
        files = []
        st = idata.sample_stats
        for c in range(q.shape[0]):
            p = run_dir / f"chain_{c + 1}.csv"
            write_cmdstan_csv(
                p, model=tname, chain_id=c + 1, seed=args.seed, num_warmup=args.tune, num_samples=args.draws,
                num_chains=q.shape[0], extra_comments={"sampler": "nutpie low-rank on the non-centred twin"},
                sampler_columns={"lp__": st["logp"].values[c], "n_leapfrog__": st["n_steps"].values[c],
                                 "divergent__": st["diverging"].values[c].astype(float)},
                quantity_names=target.columns, quantities=q[c], warmup_seconds=0.0, sampling_seconds=0.0)
            files.append(str(p))
        check = run_check(qnmc, qnmc_target_args(target, None), ["--draws-files", *files],
                          out_root / f"{tname}.check.txt")
        print(f"{tname}: long non-centred nutpie run ({q.shape[0]} x {args.draws} draws, "
              f"{int(st['diverging'].values.sum())} divergences): max R-hat {check.max_rhat:.3f}, "
              f"min ESS bulk {check.min_ess_bulk:.0f}; qnmc check against its reference: "
              f"{'PASS' if check.passed else 'FAIL'} (table: {out_root / (tname + '.check.txt')})", flush=True)
        for line in check.output.splitlines():
            if "FAIL" in line or line.startswith("| quantity") or line.startswith("reference"):
                print("   ", line)
        if not check.passed:
            status = 1
        for f in files:  # large; the check's table is kept
            Path(f).unlink()
    return status


if __name__ == "__main__":
    sys.exit(main())
