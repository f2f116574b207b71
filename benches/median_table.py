#!/usr/bin/env python3
"""Prints the medians of the last `cargo bench -p qnmc-benches --bench step` run
as Markdown tables (criterion writes them to target/criterion/*/new/estimates.json)."""
import json
import pathlib
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")


def median_us(*parts):
    path = root.joinpath(*parts, "new", "estimates.json")
    if not path.exists():
        return None
    return json.loads(path.read_text())["median"]["point_estimate"] / 1000.0


def fmt(v):
    return "n/a" if v is None else (f"{v:.2f}" if v < 10 else f"{v:.1f}" if v < 100 else f"{v:.0f}")


print("One step, median µs (QNHMC: L = 5 leapfrog steps; HAMCMC: 2 gradients):\n")
print("| sampler | M | D = 10 | D = 100 | D = 1000 | ratio 1000/100 |")
print("|---|---|---|---|---|---|")
for sampler in ("qnhmc_step", "hamcmc_step"):
    for m in (2, 5, 10):
        vals = [median_us(f"{sampler}_M={m}", str(d)) for d in (10, 100, 1000)]
        ratio = "n/a" if None in vals[1:] else f"{vals[2] / vals[1]:.1f}"
        print(f"| {sampler.split('_')[0].upper()} | {m} | " + " | ".join(fmt(v) for v in vals) + f" | {ratio} |")

print("\nL-BFGS kernels, M = 10, median µs:\n")
print("| kernel | D = 100 | D = 1000 |")
print("|---|---|---|")
for kernel in ("apply_inverse_hessian", "apply_sqrt_inverse_hessian", "push_pair_and_refresh_factors"):
    vals = [median_us(f"lbfgs_D={d}_M=10", kernel) for d in (100, 1000)]
    print(f"| `{kernel}` | " + " | ".join(fmt(v) for v in vals) + " |")
