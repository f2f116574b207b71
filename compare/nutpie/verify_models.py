#!/usr/bin/env python3
"""Checks that each PyMC model is qnmc's posterior: at every draw of a qnmc run
of the target, qnmc's lp__ minus PyMC's log density must be one constant.

qnmc's lp__ is -U on qnmc's unconstrained scale, log-Jacobians included
(host/src/draws.rs: "log density (-U) at each kept draw, on the unconstrained
scale with Jacobians, as Stan reports it"), without some normalising
constants. So the comparison is with PyMC's `compile_logp(jacobian=True)` at
the draw mapped to PyMC's value variables (log tau, PyMC's interval transform
of phi): a different but affine-equivalent unconstrained coordinate (log tau
is the same; PyMC's phi coordinate is 2 atanh phi) changes the log-Jacobian
by a constant only. For contrast the spread with jacobian=False is printed
too: it is not constant when the model has a transformed variable, which is
how we know lp__ includes the Jacobian.

Exit 0 when every target's spread (max - min of the difference) is below
--tolerance relative to max(1, |lp__|); 1 otherwise; 2 on a usage error.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DEFAULT_SHARED_DATA, qnmc_binary, read_cmdstan_csv  # noqa: E402
from models import DEFAULT_TARGETS, TARGETS, missing_data, qnmc_target_args  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qnmc", help="qnmc binary (default: target/release/qnmc of the repository)")
    ap.add_argument("--targets", default=",".join(DEFAULT_TARGETS))
    ap.add_argument("--seed", type=int, default=1, help="seed of the qnmc run whose draws are used")
    ap.add_argument("--tolerance", type=float, default=1e-8)
    ap.add_argument("--shared-data", default=DEFAULT_SHARED_DATA)
    args = ap.parse_args()
    qnmc = qnmc_binary(args.qnmc)
    names = [t for t in args.targets.split(",") if t]
    unknown = [t for t in names if t not in TARGETS]
    if unknown:
        print(f"error: unknown targets {unknown}; known: {sorted(TARGETS)}", file=sys.stderr)
        return 2

    failures = 0
    for name in names:
        target = TARGETS[name]
        why = missing_data(target, args.shared_data)
        if why:
            print(why)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "run"
            cmd = [qnmc, "run", *qnmc_target_args(target, args.shared_data), "--seed", str(args.seed),
                   "--output", str(out), "--quiet"]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode not in (0, 3):
                print(f"error: {' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr}", file=sys.stderr)
                failures += 1
                continue
            files = sorted(out.glob("chain_*.csv"))
            csvs = [read_cmdstan_csv(f) for f in files]
        qcols = csvs[0].quantity_columns()
        if qcols != target.columns:
            print(f"FAIL {name}: qnmc's columns {qcols[:5]}... differ from the harness's {target.columns[:5]}...")
            failures += 1
            continue
        lp = np.concatenate([c.column("lp__") for c in csvs])
        q = np.concatenate([c.values[:, [c.columns.index(n) for n in qcols]] for c in csvs])

        model = target.build()
        value_names = sorted(v.name for v in model.value_vars)
        logp_j = model.compile_logp(jacobian=True)
        logp_nj = model.compile_logp(jacobian=False)
        diffs_j, diffs_nj = [], []
        for i in range(len(lp)):
            point = target.value_point(target.split_row(q[i]))
            if sorted(point) != value_names:
                print(f"FAIL {name}: point keys {sorted(point)} are not the value variables {value_names}")
                return 1
            diffs_j.append(lp[i] - float(logp_j(point)))
            diffs_nj.append(lp[i] - float(logp_nj(point)))
        diffs_j = np.array(diffs_j)
        diffs_nj = np.array(diffs_nj)
        finite = np.isfinite(diffs_j)
        scale = np.maximum(1.0, np.abs(lp))
        rel = np.abs(diffs_j - np.median(diffs_j[finite])) / scale
        spread_j = np.ptp(diffs_j[finite])
        spread_nj = np.ptp(diffs_nj[np.isfinite(diffs_nj)])
        ok = finite.all() and rel.max() <= args.tolerance
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {len(lp)} draws of `qnmc run` seed {args.seed}; "
              f"lp__ - PyMC logp(jacobian=True) = {np.median(diffs_j):.10f}, spread {spread_j:.2e}, "
              f"max relative deviation {rel.max():.2e} (tolerance {args.tolerance:g}); "
              f"with jacobian=False the spread is {spread_nj:.3g}; "
              f"lp__ range [{lp.min():.1f}, {lp.max():.1f}]")
        if not ok:
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
