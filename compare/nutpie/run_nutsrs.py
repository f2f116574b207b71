#!/usr/bin/env python3
"""nuts-rs (the Rust sampler nutpie is built on) on qnmc's own hierarchical
targets, judged by `qnmc check`.

For each target x metric (`lowrank`: nuts-rs's LowRankNutsSettings;
`diag`: DiagNutsSettings, nutpie's default) x seed: `qnmc-compare draws
--target T ... --seed S --metric M --output DIR` (compare/src/draws_command.rs)
with 4 chains, tune 500, 1000 kept draws, nuts-rs's defaults otherwise. It
samples the qnmc model itself (the same Rust log density and gradient qnmc
samples, no PyMC), chain k starting where `qnmc run` starts it, and writes
one CmdStan CSV per chain (qnmc's quantity names, constrained scale) and
nutsrs.json. Then `qnmc check --target T --draws-files chain_1.csv ...`
judges the CSVs exactly as run_nutpie.py's. One JSON line per run goes to
RESULTS/runs.jsonl, side `nutsrs-lowrank` or `nutsrs-diag`, with
run_nutpie.py's fields:

- pass, check_exit, max_rhat, min_ess_bulk, max_abs_z, fail_reasons: from
  qnmc check, as for nutpie;
- gradients, gradients_warmup, gradients_draws: leapfrog steps (one gradient
  each) of the tuning and kept draws of all chains, nuts-rs's num_steps of
  every draw: nutpie's n_steps. Not counted there: each chain's start (its
  start point and nuts-rs's initial step-size search) and evaluations
  outside a trajectory; `model_calls` is every call of the model's gradient
  counted in the model, so model_calls - gradients is that overhead;
- divergences: kept draws (divergences_warmup apart);
- seconds: wall time of all chains, one after another on one thread
  (nutpie runs 2 in parallel; qnmc's chains run on its thread pool).

lp__ in the CSVs is the qnmc model's log density -U, qnmc's lp__ exactly.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (DEFAULT_SHARED_DATA, REPO, append_jsonl, parse_seeds, qnmc_binary,  # noqa: E402
                    run_check)
from models import DEFAULT_TARGETS, TARGETS, missing_data, qnmc_target_args  # noqa: E402
from run_nutpie import done_keys  # noqa: E402

METRICS = ("lowrank", "diag")
DEFAULT_COMPARE = REPO / "compare" / "target" / "release" / "qnmc-compare"


def compare_binary(path: str | None) -> str:
    p = Path(path) if path else DEFAULT_COMPARE
    if not p.is_file():
        raise SystemExit(f"error: {p} not found (cargo build --release --manifest-path compare/Cargo.toml, "
                         "or pass --compare PATH)")
    return str(p)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qnmc", help="qnmc binary for `qnmc check` (default: target/release/qnmc of the repository)")
    ap.add_argument("--compare", help="qnmc-compare binary (default: compare/target/release/qnmc-compare)")
    ap.add_argument("--targets", default=",".join(DEFAULT_TARGETS))
    ap.add_argument("--metrics", default="lowrank,diag")
    ap.add_argument("--seeds", default="1..10", help="e.g. 1..10 or 1,2,3")
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--tune", type=int, default=500)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--results", default=str(Path(__file__).resolve().parent / "results"))
    ap.add_argument("--shared-data", default=DEFAULT_SHARED_DATA)
    ap.add_argument("--redo", action="store_true", help="rerun runs already in runs.jsonl")
    args = ap.parse_args()

    qnmc = qnmc_binary(args.qnmc)
    compare = compare_binary(args.compare)
    targets = [t for t in args.targets.split(",") if t]
    metrics = [m for m in args.metrics.split(",") if m]
    for t in targets:
        if t not in TARGETS:
            raise SystemExit(f"error: unknown target {t}; known: {sorted(TARGETS)}")
    for m in metrics:
        if m not in METRICS:
            raise SystemExit(f"error: unknown metric {m}; known: {list(METRICS)}")
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
        target_args = qnmc_target_args(target, args.shared_data)
        for metric in metrics:
            side = f"nutsrs-{metric}"
            for seed in seeds:
                if (side, tname, seed) in done:
                    continue
                run_dir = results / "draws" / side / tname / f"seed{seed}"
                if run_dir.exists():
                    shutil.rmtree(run_dir)
                cmd = [compare, "draws", *target_args, "--seed", str(seed), "--metric", metric,
                       "--chains", str(args.chains), "--tune", str(args.tune), "--draws", str(args.draws),
                       "--output", str(run_dir)]
                t0 = time.perf_counter()
                proc = subprocess.run(cmd, capture_output=True, text=True)
                elapsed = time.perf_counter() - t0
                summary_path = run_dir / "nutsrs.json"
                if proc.returncode != 0 or not summary_path.exists():
                    print(f"warning: `{' '.join(cmd)}` exited {proc.returncode}: {proc.stderr.strip()[:500]}")
                    append_jsonl(jsonl, {"side": side, "target": tname, "seed": seed, "pass": False,
                                         "check_exit": None, "max_rhat": float("nan"),
                                         "min_ess_bulk": float("nan"), "gradients": None,
                                         "fail_reasons": ["error"], "error": proc.stderr[-2000:]})
                    continue
                summary = json.loads(summary_path.read_text())
                files = [str(run_dir / f"chain_{c + 1}.csv") for c in range(summary["chains"])]
                check_log = results / "checks" / side / tname / f"seed{seed}.txt"
                check_log.parent.mkdir(parents=True, exist_ok=True)
                check = run_check(qnmc, target_args, ["--draws-files", *files], check_log)
                record = {
                    "side": side, "target": tname, "seed": seed, "pass": check.passed,
                    "check_exit": check.exit_code, "max_rhat": check.max_rhat,
                    "min_ess_bulk": check.min_ess_bulk, "slowest": check.worst_quantity,
                    "max_abs_z": check.max_abs_z, "z_threshold": check.z_threshold,
                    "fail_reasons": check.fail_reasons(),
                    "ess_source": "qnmc check table (min over quantities of ESS bulk)",
                    "gradients": summary["gradients"],
                    "gradients_warmup": summary["gradients_warmup"],
                    "gradients_draws": summary["gradients_draws"],
                    "model_calls": summary["model_calls"],
                    "divergences": summary["divergences"],
                    "divergences_warmup": summary["divergences_warmup"],
                    "seconds": summary["seconds"], "command_seconds": elapsed,
                    "step_sizes": [c["step_size_mean"] for c in summary["per_chain"]],
                    "chains": summary["chains"], "tune": summary["tune"], "draws": summary["draws"],
                    "version": summary["sampler"],
                }
                append_jsonl(jsonl, record)
                print(f"{side:15s} {tname:24s} seed {seed:3d}: {'PASS' if check.passed else 'FAIL'} "
                      f"max R-hat {check.max_rhat:.3f}, min ESS bulk {check.min_ess_bulk:.0f}, "
                      f"{record['gradients']} gradients ({record['model_calls']} model calls), "
                      f"{record['divergences']} divergences, {record['seconds']:.2f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
