#!/usr/bin/env python3
"""Geometric means of ESS-per-gradient ratios between two samplers whose rows
may come from different `qnmc-compare --posteriordb ... --json` files (e.g. a
new qnmc variant against the nuts-rs rows of an earlier run; nuts-rs does not
change between runs). The same statistic as the benchmark's own table: per
(posterior, seed) pair, bulk ESS (minimum over the reference quantities) per
1000 gradients kept and including warm-up; geometric mean with the interval
exp(mean ± 2 SE) of the logs.

    python3 compare/ratios.py A_SAMPLER B_SAMPLER FILE.json [FILE.json ...]
        [--by-posterior] [--only NAME,NAME]

A row of A is taken from the last file that has it (so a newer file
overrides an older one); rows of B likewise. Prints also every run of A that
failed its z-tests against the reference (`reference_passed` false).
"""
import json
import math
import sys
from collections import defaultdict


def geo(v):
    logs = [math.log(x) for x in v if x > 0 and math.isfinite(x)]
    if not logs:
        return float("nan"), None
    m = sum(logs) / len(logs)
    if len(logs) < 2:
        return math.exp(m), None
    var = sum((x - m) ** 2 for x in logs) / (len(logs) - 1)
    se = math.sqrt(var / len(logs))
    return math.exp(m), (math.exp(m - 2 * se), math.exp(m + 2 * se))


def fmt(g, iv):
    return f"{g:.2f}" if iv is None else f"{g:.2f} [{iv[0]:.2f}, {iv[1]:.2f}]"


def main(argv):
    flags = [a for a in argv if a.startswith("--")]
    args = [a for a in argv if not a.startswith("--")]
    only = None
    for f in flags:
        if f.startswith("--only="):
            only = set(f.split("=", 1)[1].split(","))
    a_name, b_name, files = args[0], args[1], args[2:]
    rows = {}
    for path in files:
        for r in json.load(open(path)):
            if r.get("sampler") in (a_name, b_name) and "ess_bulk_min" in r:
                rows[(r["sampler"], r["posterior"], r["seed"])] = r
    kept, incl = [], []
    per = defaultdict(lambda: ([], []))
    failed = []
    for (s, p, seed), a in sorted(rows.items()):
        if s != a_name or (only and p not in only):
            continue
        if not a.get("reference_passed", True):
            failed.append((p, seed, a.get("worst"), a.get("worst_z"), a.get("divergences_sampling")))
        b = rows.get((b_name, p, seed))
        if b is None:
            continue
        ea = [a["ess_bulk_min"] / a["gradients_sampling"],
              a["ess_bulk_min"] / (a["gradients_sampling"] + a["gradients_tuning"])]
        eb = [b["ess_bulk_min"] / b["gradients_sampling"],
              b["ess_bulk_min"] / (b["gradients_sampling"] + b["gradients_tuning"])]
        kept.append(ea[0] / eb[0])
        incl.append(ea[1] / eb[1])
        per[p][0].append(ea[0] / eb[0])
        per[p][1].append(ea[1] / eb[1])
    print(f"{a_name} / {b_name}: pairs {len(kept)}; kept {fmt(*geo(kept))}; "
          f"incl. warm-up {fmt(*geo(incl))}")
    if "--by-posterior" in flags:
        for p, (k, i) in sorted(per.items(), key=lambda kv: geo(kv[1][1])[0]):
            print(f"  {p:50s} kept {geo(k)[0]:5.2f}  incl {geo(i)[0]:5.2f}")
    print(f"{a_name} failed z-tests: {len(failed)}")
    for f in failed:
        print("  ", f)


if __name__ == "__main__":
    main(sys.argv[1:])
