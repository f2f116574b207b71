#!/usr/bin/env python3
"""Cross-checks the numbers taken from `qnmc check`'s table against ArviZ.

For every run in RESULTS/runs.jsonl whose chain CSVs are still in
RESULTS/draws/SIDE/TARGET/seedS/ (the runners keep them; they are not
committed), ArviZ's rank-normalised split R-hat (max over quantities) and
bulk ESS (min over quantities) are computed from the same CSVs and printed
beside qnmc check's. Nothing is written; the report uses qnmc check's numbers.

Usage: ess_crosscheck.py [--results DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import read_cmdstan_csv  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=str(Path(__file__).resolve().parent / "results"))
    args = ap.parse_args()
    import arviz as az

    results = Path(args.results)
    rows = []
    for line in (results / "runs.jsonl").read_text().splitlines():
        r = json.loads(line)
        d = results / "draws" / r["side"] / r["target"] / f"seed{r['seed']}"
        files = sorted(d.glob("chain_*.csv"))
        if not files:
            continue
        csvs = [read_cmdstan_csv(f) for f in files]
        names = csvs[0].quantity_columns()
        arr = np.stack([c.values[:, [c.columns.index(n) for n in names]] for c in csvs])  # chain, draw, q
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ess = [float(az.ess(arr[:, :, j], method="bulk")) for j in range(arr.shape[2])]
            rhat = [float(az.rhat(arr[:, :, j])) for j in range(arr.shape[2])]
        a_ess, a_rhat = np.nanmin(ess) if not np.isnan(ess).any() else math.nan, np.nanmax(rhat)
        rows.append((r["side"], r["target"], r["seed"], r["min_ess_bulk"], a_ess, r["max_rhat"], a_rhat))
    print("| side | target | seed | min ESS bulk: qnmc check | ArviZ | max R-hat: qnmc check | ArviZ |")
    print("|---|---|---|---|---|---|---|")
    rel = []
    for side, t, s, qe, ae, qr, ar in rows:
        print(f"| {side} | {t} | {s} | {qe:.0f} | {ae:.0f} | {qr:.3f} | {ar:.3f} |")
        if qe and ae and math.isfinite(qe) and math.isfinite(ae):
            rel.append(abs(math.log(qe / ae)))
    if rel:
        print(f"\n{len(rows)} runs; |log(qnmc check ESS / ArviZ ESS)|: median {np.median(rel):.3f}, "
              f"max {np.max(rel):.3f}")
    else:
        print("no runs with draws found")
    return 0


if __name__ == "__main__":
    sys.exit(main())
