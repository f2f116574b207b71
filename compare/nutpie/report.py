#!/usr/bin/env python3
"""Markdown tables from RESULTS/runs.jsonl (run_qnmc.py, run_nutpie.py and
run_nutsrs.py).

Per target:
- pass rate per side over its seeds (a run that errored counts as failed);
- efficiency = min bulk ESS (qnmc check's table) / gradients including
  warm-up; for each seed run by both sides, the ratio qnmc ÷ peer, for each
  peer side in the file (nutpie low-rank and diag, nuts-rs low-rank and
  diag); the geometric mean over seeds with a 90 % interval: a t-interval on
  the log ratios, exp(mean ± t(0.95, n−1) · sd / √n);
- every run counts: failed runs enter the ratio with their measured ESS
  ("as measured"); because a failed run can still report a large ESS (chains
  that agree on a wrong answer), a second ratio sets a failed run's ESS to 1
  ("failed = ESS 1"), which is what an unusable run is worth. A side with a
  failed run is never shown better than that.

Usage: report.py [--results DIR] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats

SIDES = ["qnmc-default", "nutpie-lowrank", "nutpie-diag", "qnmc-diag", "nutsrs-lowrank", "nutsrs-diag"]
BASE = "qnmc-default"
#: The sides qnmc's default is divided by, with their names in the table.
PEERS = {"nutpie-lowrank": "nutpie low-rank", "nutpie-diag": "nutpie diag",
         "nutsrs-lowrank": "nuts-rs low-rank", "nutsrs-diag": "nuts-rs diag"}


def load(path: Path) -> list[dict]:
    runs = {}
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            runs[(r["side"], r["target"], r["seed"])] = r  # a later line replaces an earlier one
    return list(runs.values())


def efficiency(r: dict, penalise: bool) -> float:
    g = r.get("gradients")
    ess = r.get("min_ess_bulk")
    if not g or ess is None or not math.isfinite(ess):
        ess = 1.0  # errored run: worth nothing
    if penalise and not r["pass"]:
        ess = 1.0
    return max(ess, 1.0) / g if g else float("nan")


def interval(logs: list[float]) -> tuple[float, float, float]:
    a = np.array(logs)
    m = a.mean()
    if len(a) < 2:
        return math.exp(m), float("nan"), float("nan")
    half = stats.t.ppf(0.95, len(a) - 1) * a.std(ddof=1) / math.sqrt(len(a))
    return math.exp(m), math.exp(m - half), math.exp(m + half)


def fmt_ratio(x: tuple[float, float, float]) -> str:
    g, lo, hi = x
    if math.isnan(lo):
        return f"{g:.2f}×"
    return f"{g:.2f}× [{lo:.2f}, {hi:.2f}]"


def overall_lines(by: dict, targets: list[str], sides: list[str], others: list[str]) -> list[str]:
    """Over all targets: each side's passes, and qnmc's default ÷ each other
    side as the geometric mean of the targets' rows (the mean over targets of
    each target's mean log ratio), with a 90 % normal interval whose standard
    error adds the targets' variances of their means."""
    lines = ["Over all targets (the geometric mean of the rows; 90 % interval from the targets' "
             "standard errors): passes " + ", ".join(
                 f"{s} {sum(sum(1 for r in by[(t, s)].values() if r['pass']) for t in targets)}"
                 f"/{sum(len(by[(t, s)]) for t in targets)}" for s in sides) + "."]
    for other in others:
        cells = []
        for penalise in (False, True):
            means, variance = [], 0.0
            for t in targets:
                common = sorted(set(by[(t, BASE)]) & set(by[(t, other)]))
                logs = np.array([math.log(efficiency(by[(t, BASE)][s], penalise)
                                          / efficiency(by[(t, other)][s], penalise)) for s in common])
                if len(logs) < 2:
                    continue
                means.append(logs.mean())
                variance += logs.var(ddof=1) / len(logs)
            if not means:
                continue
            m, se = float(np.mean(means)), math.sqrt(variance) / len(means)
            z = stats.norm.ppf(0.95)
            cells.append(fmt_ratio((math.exp(m), math.exp(m - z * se), math.exp(m + z * se)))
                         + (" with every failed run at ESS 1" if penalise else " as measured"))
        if cells:
            lines.append(f"- qnmc default ÷ {PEERS.get(other, other)}: " + "; ".join(cells))
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=str(Path(__file__).resolve().parent / "results"))
    ap.add_argument("--out", help="write the Markdown here too")
    args = ap.parse_args()
    path = Path(args.results) / "runs.jsonl"
    if not path.exists():
        raise SystemExit(f"error: {path} not found: run run_qnmc.py and run_nutpie.py first")
    runs = load(path)
    by = defaultdict(dict)
    for r in runs:
        by[(r["target"], r["side"])][r["seed"]] = r
    targets = []
    for r in runs:
        if r["target"] not in targets:
            targets.append(r["target"])
    sides = [s for s in SIDES if any(s == r["side"] for r in runs)]
    sides += sorted({r["side"] for r in runs} - set(sides))

    peers = [p for p in PEERS if p in sides]
    out = []
    heads = []
    for i, p in enumerate(peers):
        what = ", ESS/gradient (as measured)" if i == 0 else " (as measured)"
        heads += [f"qnmc ÷ {PEERS[p]}{what}", f"qnmc ÷ {PEERS[p]} (failed = ESS 1)"]
    out.append("| target | passes: " + " / ".join(sides) + "".join(f" | {h}" for h in heads) + " | seeds |")
    out.append("|---" * (3 + len(heads)) + "|")
    detail = []
    for t in targets:
        passes = []
        for s in sides:
            rs = by[(t, s)]
            passes.append(f"{sum(1 for r in rs.values() if r['pass'])}/{len(rs)}")
        cells = []
        seeds_used = set()
        for other in peers:
            for penalise in (False, True):
                common = sorted(set(by[(t, BASE)]) & set(by[(t, other)]))
                seeds_used |= set(common)
                logs = [math.log(efficiency(by[(t, BASE)][s], penalise) / efficiency(by[(t, other)][s], penalise))
                        for s in common]
                cells.append(fmt_ratio(interval(logs)) if logs else "–")
        out.append(f"| {t} | " + " / ".join(passes) + " | " + " | ".join(cells) +
                   f" | {len(seeds_used)} |")

        detail.append(f"\n#### {t}\n")
        detail.append("| side | seed | pass | why not | max R̂ | max \\|z\\| | min ESS bulk | gradients incl. warm-up"
                      " | of which before kept draws | ESS / 1000 gradients | divergences | seconds |")
        detail.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for s in sides:
            for seed, r in sorted(by[(t, s)].items()):
                g = r.get("gradients") or 0
                gw = r.get("gradients_warmup")
                ess = r.get("min_ess_bulk", float("nan"))
                eff = 1000 * ess / g if g else float("nan")
                detail.append(
                    f"| {s} | {seed} | {'yes' if r['pass'] else '**no**'} | {', '.join(r.get('fail_reasons', []))} | "
                    f"{r.get('max_rhat', float('nan')):.3f} | {r.get('max_abs_z', float('nan')):.2f} | "
                    f"{ess:.0f} | {g} | {gw if gw is not None else '–'} | {eff:.3f} | "
                    f"{r.get('divergences', '–')} | {r.get('seconds', float('nan')):.2f} |")
    side_rows = ["| target | side | passes | failed on R̂ (or R̂ undefined) | failed on a z-test | median gradients incl. warm-up"
                 " | median min ESS bulk | kept-draw divergences (sum) | restarted chains (qnmc, sum) |",
                 "|---|---|---|---|---|---|---|---|---|"]
    for t in targets:
        for s in sides:
            rs = list(by[(t, s)].values())
            if not rs:
                continue
            reasons = [r.get("fail_reasons", []) for r in rs if not r["pass"]]
            grads = [r["gradients"] for r in rs if r.get("gradients")]
            esses = [r["min_ess_bulk"] for r in rs if r.get("min_ess_bulk") is not None]
            side_rows.append(
                f"| {t} | {s} | {sum(r['pass'] for r in rs)}/{len(rs)} | "
                f"{sum(1 for x in reasons if 'rhat' in x or 'undefined' in x)} | {sum(1 for x in reasons if 'z' in x)} | "
                f"{int(np.median(grads)) if grads else '–'} | {np.nanmedian(esses) if esses else float('nan'):.0f} | "
                f"{sum(int(r.get('divergences') or 0) for r in rs)} | "
                f"{sum(int(r['restarts']) for r in rs) if all('restarts' in r for r in rs) else '–'} |")
    overall = overall_lines(by, targets, sides, peers + [s for s in sides if s == "qnmc-diag"])
    text = ("Ratios: geometric mean over seeds of (min bulk ESS ÷ gradients incl. warm-up) of qnmc's default ÷ "
            f"that of {' or '.join(sorted({PEERS[p].split()[0] for p in peers}, reverse=True)) or 'a peer'}, "
            "[90 % t-interval on the log ratios]; > 1 means qnmc is more efficient.\n\n"
            + "\n".join(out) + "\n\n" + "\n".join(overall) + "\n\n### Per side\n\n" + "\n".join(side_rows) + "\n\n### Per run\n" + "\n".join(detail) + "\n")
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
