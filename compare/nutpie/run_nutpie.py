#!/usr/bin/env python3
"""nutpie on qnmc's hierarchical targets, judged by `qnmc check`.

For each target x metric (nutpie's default diagonal `diag`; `lowrank`:
low_rank_modified_mass_matrix=True) x seed: nutpie with 4 chains, tune 500,
1000 kept draws, `seed`, warm-up stored (save_warmup=True). Each chain's kept
draws are written as a CmdStan CSV in qnmc's column names and constrained
scale, then `qnmc check --target T --draws-files chain_1.csv ...` judges
them (z-tests against the target's known or reference posterior, R-hat <
1.05). One JSON line per run goes to RESULTS/runs.jsonl:

- pass: qnmc check exited 0 (exit 1 = failed; any other exit counts as
  failed and is printed);
- max_rhat, min_ess_bulk: the maximum R-hat and minimum bulk ESS over the
  quantities of qnmc check's table (the same numbers the qnmc side gets);
- gradients: sum of nutpie's n_steps (leapfrog steps, one gradient each)
  over warm-up and kept draws of all chains;
- divergences: kept draws with diverging = True (warm-up ones apart);
- seconds: wall time of nutpie.sample() (compilation excluded).

lp__ in the CSVs is nutpie's logp: PyMC's log density with log-Jacobians on
PyMC's unconstrained scale, which equals qnmc's lp__ minus a constant per
target (verify_models.py prints it).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (DEFAULT_SHARED_DATA, append_jsonl, parse_seeds, qnmc_binary,  # noqa: E402
                    run_check, write_cmdstan_csv)
from models import DEFAULT_TARGETS, TARGETS, missing_data, qnmc_target_args  # noqa: E402

METRICS = {"diag": False, "lowrank": True}


def done_keys(path: Path) -> set:
    keys = set()
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                keys.add((r["side"], r["target"], r["seed"]))
    return keys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qnmc", help="qnmc binary (default: target/release/qnmc of the repository)")
    ap.add_argument("--targets", default=",".join(DEFAULT_TARGETS))
    ap.add_argument("--metrics", default="diag,lowrank")
    ap.add_argument("--seeds", default="1..10", help="e.g. 1..10 or 1,2,3")
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--cores", type=int, default=2, help="chains run in parallel (at most 2 here)")
    ap.add_argument("--tune", type=int, default=500)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--results", default=str(Path(__file__).resolve().parent / "results"))
    ap.add_argument("--shared-data", default=DEFAULT_SHARED_DATA)
    ap.add_argument("--redo", action="store_true", help="rerun runs already in runs.jsonl")
    args = ap.parse_args()

    qnmc = qnmc_binary(args.qnmc)
    import nutpie  # noqa: imported late so that --help works without it

    targets = [t for t in args.targets.split(",") if t]
    metrics = [m for m in args.metrics.split(",") if m]
    for t in targets:
        if t not in TARGETS:
            raise SystemExit(f"error: unknown target {t}; known: {sorted(TARGETS)}")
    for m in metrics:
        if m not in METRICS:
            raise SystemExit(f"error: unknown metric {m}; known: {sorted(METRICS)}")
    seeds = parse_seeds(args.seeds)
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    jsonl = results / "runs.jsonl"
    done = set() if args.redo else done_keys(jsonl)

    for tname in targets:
        target = TARGETS[tname]
        why = missing_data(target, args.shared_data)
        if why:
            print(why)
            continue
        todo = [(m, s) for m in metrics for s in seeds if (f"nutpie-{m}", tname, s) not in done]
        if not todo:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.time()
            compiled = nutpie.compile_pymc_model(target.build())
        print(f"{tname}: compiled in {time.time() - t0:.1f} s", flush=True)
        for metric, seed in todo:
            side = f"nutpie-{metric}"
            run_dir = results / "draws" / side / tname / f"seed{seed}"
            run_dir.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
                warnings.simplefilter("ignore")
                idata = nutpie.sample(compiled, draws=args.draws, tune=args.tune, chains=args.chains,
                                      cores=args.cores, seed=seed, save_warmup=True, progress_bar=False,
                                      low_rank_modified_mass_matrix=METRICS[metric])
            seconds = time.perf_counter() - t0
            stats = idata.sample_stats
            wstats = idata.warmup_sample_stats
            q = target.constrained(idata.posterior)  # (chain, draw, quantity)
            n_chains = q.shape[0]
            grads_warmup = [int(wstats["n_steps"].values[c].sum()) for c in range(n_chains)]
            grads_draws = [int(stats["n_steps"].values[c].sum()) for c in range(n_chains)]
            files = []
            for c in range(n_chains):
                path = run_dir / f"chain_{c + 1}.csv"
                write_cmdstan_csv(
                    path, model=tname, chain_id=c + 1, seed=seed, num_warmup=args.tune,
                    num_samples=args.draws, num_chains=n_chains,
                    extra_comments={
                        "sampler": f"nutpie {nutpie.__version__}, metric {metric}",
                        "lp__": "nutpie logp (PyMC log density with log-Jacobians; qnmc's lp__ minus a constant)",
                        "warmup_gradients": str(grads_warmup[c]),
                    },
                    sampler_columns={
                        "lp__": stats["logp"].values[c],
                        "accept_stat__": stats["mean_tree_accept"].values[c],
                        "stepsize__": stats["step_size"].values[c],
                        "treedepth__": stats["depth"].values[c],
                        "n_leapfrog__": stats["n_steps"].values[c],
                        "divergent__": stats["diverging"].values[c].astype(float),
                        "energy__": stats["energy"].values[c],
                    },
                    quantity_names=target.columns, quantities=q[c],
                    warmup_seconds=0.0, sampling_seconds=0.0)
                files.append(str(path))
            check_log = results / "checks" / side / tname / f"seed{seed}.txt"
            check_log.parent.mkdir(parents=True, exist_ok=True)
            check = run_check(qnmc, qnmc_target_args(target, args.shared_data),
                              ["--draws-files", *files], check_log)
            record = {
                "side": side, "target": tname, "seed": seed, "pass": check.passed,
                "check_exit": check.exit_code, "max_rhat": check.max_rhat,
                "min_ess_bulk": check.min_ess_bulk, "slowest": check.worst_quantity,
                "max_abs_z": check.max_abs_z, "z_threshold": check.z_threshold,
                "fail_reasons": check.fail_reasons(),
                "ess_source": "qnmc check table (min over quantities of ESS bulk)",
                "gradients": sum(grads_warmup) + sum(grads_draws),
                "gradients_warmup": sum(grads_warmup), "gradients_draws": sum(grads_draws),
                "divergences": int(stats["diverging"].values.sum()),
                "divergences_warmup": int(wstats["diverging"].values.sum()),
                "seconds": seconds, "chains": n_chains, "tune": args.tune, "draws": args.draws,
                "version": f"nutpie {nutpie.__version__}",
            }
            append_jsonl(jsonl, record)
            print(f"{side:15s} {tname:24s} seed {seed:3d}: {'PASS' if check.passed else 'FAIL'} "
                  f"max R-hat {check.max_rhat:.3f}, min ESS bulk {check.min_ess_bulk:.0f}, "
                  f"{record['gradients']} gradients, {record['divergences']} divergences, {seconds:.1f} s",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
