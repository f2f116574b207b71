"""Times ArviZ's bulk and tail ESS and rank-normalised R-hat on the draws of a
`qnmc run --output DIR`, to set beside `cargo bench --bench diagnostics` run
on the same files (QNMC_BENCH_DRAWS=DIR).

    qnmc run --target gaussian --dimension 1000 --plot none --output /tmp/g1000
    python3 benches/arviz_diagnostics.py /tmp/g1000

Needs numpy and arviz (`pip install arviz`). Prints the median wall time of
--repeats calls of each diagnostic over all quantities, and checks that
ArviZ's numbers agree with the ones qnmc wrote to summary.json (the largest
relative difference of each), so that the two tools time the same thing.
"""

import argparse
import glob
import json
import os
import statistics
import time

import arviz as az
import numpy as np


def read_chain(path):
    """The quantity columns (names not ending in `__`) of a CmdStan CSV."""
    with open(path) as f:
        lines = [line for line in f if not line.startswith("#") and line.strip()]
    header = lines[0].strip().split(",")
    keep = [j for j, name in enumerate(header) if not name.endswith("__")]
    values = np.loadtxt(lines[1:], delimiter=",", ndmin=2)
    return [header[j] for j in keep], values[:, keep]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", help="a `qnmc run --output` folder")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    paths = sorted(glob.glob(os.path.join(args.dir, "chain_*.csv")))
    if not paths:
        raise SystemExit(f"{args.dir}: no chain_*.csv files")
    chains = [read_chain(p) for p in paths]
    names = chains[0][0]
    draws = np.stack([c[1] for c in chains])  # (chain, draw, quantity)
    data = az.convert_to_dataset({"x": draws})
    print(
        f"{draws.shape[2]} quantities x {draws.shape[0]} chains x {draws.shape[1]} draws, "
        f"arviz {az.__version__}, numpy {np.__version__}"
    )

    results = {}
    for label, call in [
        ("bulk + tail ESS", lambda: (az.ess(data, method="bulk"), az.ess(data, method="tail"))),
        ("rank R-hat", lambda: az.rhat(data, method="rank")),
    ]:
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            value = call()
            times.append(time.perf_counter() - start)
        results[label] = value
        print(f"{label}: median {statistics.median(times) * 1000:.0f} ms over {args.repeats} calls")

    summary_path = os.path.join(args.dir, "summary.json")
    if os.path.exists(summary_path):
        with open(summary_path) as f:
            summary = json.load(f)
        ours = {q["name"]: q for q in summary["quantities"]}
        bulk, tail = results["bulk + tail ESS"]
        rhat = results["rank R-hat"]
        worst = {"ess_bulk": 0.0, "ess_tail": 0.0, "rhat": 0.0}
        for j, name in enumerate(names):
            q = ours.get(name.replace(".", "[", 1) + "]" if "." in name else name)
            if q is None:
                continue
            for key, theirs in [
                ("ess_bulk", float(bulk["x"][j])),
                ("ess_tail", float(tail["x"][j])),
                ("rhat", float(rhat["x"][j])),
            ]:
                if q.get(key) is not None:
                    worst[key] = max(worst[key], abs(theirs - q[key]) / abs(q[key]))
        print(
            "largest relative difference from qnmc's summary.json: "
            + ", ".join(f"{k} {v:.1e}" for k, v in worst.items())
        )


if __name__ == "__main__":
    main()
