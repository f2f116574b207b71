#!/usr/bin/env python3
"""How often `qnmc run` would call a run unusable (exit code 3), against
whether the run passed `qnmc check`: the false-alarm rate (unusable but
passed) and the catch rate (unusable among the failed runs).

Two sets of runs:

1. every run whose draws the runners left in `results/draws/SIDE/TARGET/seedS/`
   (qnmc's default, qnmc `--metric diag`, nutpie diag and low-rank): each is
   read back with `qnmc check --target T --draws-files chain_*.csv`, which
   prints the same diagnostics (`unusable: …`) as `qnmc run` and the check's
   verdict;
2. with `--sample TARGET:SEEDS` (repeatable): qnmc's default and `--metric
   diag` sampled here by `qnmc check --target TARGET --seed S`, e.g. targets
   that are not hierarchical (regressions, a Gaussian) as controls, where an
   `unusable:` line is a false alarm unless the check failed too, or more
   seeds of a hierarchical target.

Writes a Markdown table to `results/unusable.md` (or `--out`) and prints it.
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DEFAULT_SHARED_DATA, parse_seeds, qnmc_binary  # noqa: E402
from models import TARGETS, qnmc_target_args  # noqa: E402


def judge(cmd: list[str]) -> tuple[bool, list[str]]:
    """(`qnmc check` passed, its `unusable:` lines)."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"`{' '.join(cmd)}` exited {proc.returncode}: {proc.stderr.strip()[:500]}")
    lines = [l for l in proc.stderr.splitlines() if l.startswith("unusable:")]
    return proc.returncode == 0, lines


def kind(lines: list[str]) -> str:
    """Which rule fired: `apart` (chains that never met), `frozen` (a chain
    at one point for over half its draws), `other`."""
    kinds = set()
    for l in lines:
        if "never visited" in l:
            kinds.add("apart")
        elif "stayed at one point" in l or "never moved" in l:
            kinds.add("frozen")
        else:
            kinds.add("other")
    return "+".join(sorted(kinds))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qnmc", help="qnmc binary (default: target/release/qnmc of the repository)")
    ap.add_argument("--results", default=str(Path(__file__).resolve().parent / "results"))
    ap.add_argument("--shared-data", default=DEFAULT_SHARED_DATA)
    ap.add_argument("--sample", action="append", default=[], metavar="TARGET:SEEDS",
                    help="also sample TARGET with qnmc (default and --metric diag) at SEEDS (e.g. gaussian:1..10)")
    ap.add_argument("--out", help="Markdown output (default: RESULTS/unusable.md)")
    args = ap.parse_args()
    qnmc = qnmc_binary(args.qnmc)
    results = Path(args.results)
    by_name = TARGETS
    # (side, target) -> [runs, passed, unusable & passed, unusable & failed]
    table: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0, 0, 0])
    flagged: list[str] = []

    def count(side: str, target: str, seed: int, passed: bool, lines: list[str]) -> None:
        row = table[(side, target)]
        row[0] += 1
        row[1] += passed
        if lines:
            row[2 if passed else 3] += 1
            flagged.append(f"| {side} | {target} | {seed} | {'passed' if passed else 'failed'} | {kind(lines)} | "
                           + " / ".join(l.removeprefix('unusable: ')[:160] for l in lines) + " |")

    draws = results / "draws"
    for side_dir in sorted(p for p in draws.iterdir() if p.is_dir()) if draws.is_dir() else []:
        for target_dir in sorted(p for p in side_dir.iterdir() if p.is_dir()):
            target = by_name.get(target_dir.name)
            if target is None:
                continue
            for seed_dir in sorted(target_dir.iterdir(), key=lambda p: int(p.name.removeprefix("seed"))):
                files = sorted(seed_dir.glob("chain_*.csv"))
                if not files:
                    continue
                cmd = [qnmc, "check", *qnmc_target_args(target, args.shared_data), "--quiet",
                       "--draws-files", *map(str, files)]
                passed, lines = judge(cmd)
                count(side_dir.name, target.name, int(seed_dir.name.removeprefix("seed")), passed, lines)
    for spec in args.sample:
        name, _, seeds = spec.partition(":")
        seeds = parse_seeds(seeds or "1..10")
        label = f"{name} (seeds {min(seeds)}–{max(seeds)}, sampled here)"
        for side, extra in (("qnmc-default", []), ("qnmc-diag", ["--metric", "diag"])):
            for seed in seeds:
                cmd = [qnmc, "check", "--target", name, "--seed", str(seed), "--quiet", *extra]
                passed, lines = judge(cmd)
                count(side, label, seed, passed, lines)

    out = ["| side | target | runs | passed | unusable and passed (false alarm) | unusable and failed (caught) |",
           "|---|---|---|---|---|---|"]
    for (side, target), (n, p, fa, caught) in sorted(table.items()):
        out.append(f"| {side} | {target} | {n} | {p} | {fa} | {caught} of {n - p} |")
    n = sum(v[0] for v in table.values())
    p = sum(v[1] for v in table.values())
    fa = sum(v[2] for v in table.values())
    caught = sum(v[3] for v in table.values())
    out.append(f"| all | | {n} | {p} | {fa} of {p} | {caught} of {n - p} |")
    if flagged:
        out += ["", "Runs called unusable:", "", "| side | target | seed | check | rule | message |",
                "|---|---|---|---|---|---|", *flagged]
    text = "\n".join(out) + "\n"
    Path(args.out or results / "unusable.md").write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
