#!/usr/bin/env python3
"""qnmc's default (NUTS, quasi-Newton metric) on the same targets and seeds,
judged by the same `qnmc check`.

For each target x seed: `qnmc check --target T --seed S --output DIR --quiet`
(4 chains, qnmc's default warm-up of 500 with its early end, 1000 kept
draws). One JSON line per run goes to RESULTS/runs.jsonl with the fields
run_nutpie.py writes:

- pass: qnmc check exited 0;
- max_rhat, min_ess_bulk: from qnmc check's table (max R-hat, min ESS bulk
  over quantities), exactly as for nutpie;
- gradients: the sum over chains of summary.json's
  sampler_stats.per_chain[k].gradient_evaluations, documented in
  host/src/draws.rs as "gradient evaluations over the whole chain (warm-up
  included)": the start's evaluations, the L-BFGS optimisation and the
  secant probes at its optimum (prepare_warmup), a restarted chain's first
  start (its count is kept and added to), the warm-up and the kept draws.
  The kept draws' part (sum of n_leapfrog__) is recorded apart;
- divergences: sampler_stats.run.divergences (kept draws);
- seconds: sampler_stats.run.seconds (the run's wall time for sampling,
  without writing files or the reference run of `check`).
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
from common import (DEFAULT_SHARED_DATA, append_jsonl, parse_check, parse_seeds,  # noqa: E402
                    qnmc_binary, read_cmdstan_csv)
from models import DEFAULT_TARGETS, TARGETS, missing_data, qnmc_target_args  # noqa: E402
from run_nutpie import done_keys  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qnmc", help="qnmc binary (default: target/release/qnmc of the repository)")
    ap.add_argument("--targets", default=",".join(DEFAULT_TARGETS))
    ap.add_argument("--seeds", default="1..10")
    ap.add_argument("--results", default=str(Path(__file__).resolve().parent / "results"))
    ap.add_argument("--shared-data", default=DEFAULT_SHARED_DATA)
    ap.add_argument("--side-name", default="qnmc-default",
                    help="name of this side in runs.jsonl (e.g. qnmc-diag with --extra '--metric diag')")
    ap.add_argument("--extra", default="", help="extra qnmc check options, space-separated")
    ap.add_argument("--redo", action="store_true")
    args = ap.parse_args()

    qnmc = qnmc_binary(args.qnmc)
    version = subprocess.run([qnmc, "--version"], capture_output=True, text=True).stdout.strip()
    seeds = parse_seeds(args.seeds)
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    jsonl = results / "runs.jsonl"
    done = set() if args.redo else done_keys(jsonl)
    side = args.side_name
    for tname in [t for t in args.targets.split(",") if t]:
        if tname not in TARGETS:
            raise SystemExit(f"error: unknown target {tname}; known: {sorted(TARGETS)}")
        target = TARGETS[tname]
        why = missing_data(target, args.shared_data)
        if why:
            print(why)
            continue
        for seed in seeds:
            if (side, tname, seed) in done:
                continue
            run_dir = results / "draws" / side / tname / f"seed{seed}"
            if run_dir.exists():
                shutil.rmtree(run_dir)
            run_dir.parent.mkdir(parents=True, exist_ok=True)
            cmd = [qnmc, "check", *qnmc_target_args(target, args.shared_data), "--seed", str(seed),
                   "--output", str(run_dir), "--quiet", *args.extra.split()]
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            elapsed = time.perf_counter() - t0
            check_log = results / "checks" / side / tname / f"seed{seed}.txt"
            check_log.parent.mkdir(parents=True, exist_ok=True)
            check_log.write_text(
                "$ " + " ".join(cmd) + "\n" + proc.stdout + "\n--- stderr ---\n" + proc.stderr)
            check = parse_check(proc.stdout, proc.returncode)
            summary_path = run_dir / "summary.json"
            if proc.returncode not in (0, 1) or not summary_path.exists():
                print(f"warning: `{' '.join(cmd)}` exited {proc.returncode} with no summary.json: "
                      f"{proc.stderr.strip()[:500]}")
                record = {"side": side, "target": tname, "seed": seed, "pass": False,
                          "check_exit": proc.returncode, "max_rhat": float("nan"),
                          "min_ess_bulk": float("nan"), "gradients": None, "fail_reasons": ["error"],
                          "error": proc.stderr[-2000:]}
                append_jsonl(jsonl, record)
                continue
            summary = json.loads(summary_path.read_text())
            per_chain = summary["sampler_stats"]["per_chain"]
            grads = sum(int(c["gradient_evaluations"]) for c in per_chain)
            kept = 0
            for f in sorted(run_dir.glob("chain_*.csv")):
                kept += int(read_cmdstan_csv(f).column("n_leapfrog__").sum())
            record = {
                "side": side, "target": tname, "seed": seed, "pass": check.passed,
                "check_exit": check.exit_code, "max_rhat": check.max_rhat,
                "min_ess_bulk": check.min_ess_bulk, "slowest": check.worst_quantity,
                "max_abs_z": check.max_abs_z, "z_threshold": check.z_threshold,
                "fail_reasons": check.fail_reasons(),
                "ess_source": "qnmc check table (min over quantities of ESS bulk)",
                "gradients": grads, "gradients_draws": kept, "gradients_warmup": grads - kept,
                "divergences": int(summary["sampler_stats"]["run"]["divergences"]),
                "seconds": float(summary["sampler_stats"]["run"]["seconds"]),
                "command_seconds": elapsed,
                "warmup_draws": [int(c["warmup_draws"]) for c in per_chain],
                # restarted chains are reported as diagnostics notes ("... so it
                # started again from chain k's initial point")
                "restarts": sum(1 for n in summary.get("diagnostics", {}).get("notes", [])
                                if "started again" in n),
                "warnings": len(summary.get("diagnostics", {}).get("warnings", [])),
                "chains": len(per_chain), "version": version, "extra": args.extra,
            }
            append_jsonl(jsonl, record)
            # Keep the small files; the CSVs and plots are large.
            for f in run_dir.iterdir():
                if f.suffix in (".png", ".svg"):
                    f.unlink()
            print(f"{side:15s} {tname:24s} seed {seed:3d}: {'PASS' if check.passed else 'FAIL'} "
                  f"max R-hat {check.max_rhat:.3f}, min ESS bulk {check.min_ess_bulk:.0f}, "
                  f"{grads} gradients ({grads - kept} before the kept draws), "
                  f"{record['divergences']} divergences, {record['seconds']:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
