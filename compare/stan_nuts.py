#!/usr/bin/env python3
"""Stan's own NUTS on the vendored posteriordb posteriors, through pystan 3
(offline: `pip install pystan==3.10.0`; it builds with httpstan's stanc and
the system's g++), for `qnmc-compare --posteriordb ... --stan-draws DIR`.

    python3 compare/stan_nuts.py --seeds 1,2,3 --out compare/target/stan-nuts [NAME ...]

Stan's defaults: 4 chains, 1000 warm-up and 1000 kept draws, adapt delta
0.8, max tree depth 10, inits uniform(-2, 2). For each posterior and seed it
writes OUT/NAME.seedS.json: per chain the kept draws of posteriordb's
reference quantities (constrained scale, posteriordb's names), the leapfrog
steps (= gradients) of warm-up and kept draws, divergences, the mean step
size; and the wall time of the whole sample() call (pystan runs its chains in
parallel processes, so it is not comparable with the one-thread chains of
qnmc-compare and is reported only for completeness). A model pystan cannot
build is written as OUT/NAME.error.txt.
"""

import argparse
import json
import os
import re
import sys
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DB = HERE / "posteriordb" / "posterior_database"
REFERENCE = HERE / "posteriordb" / "reference"


def quantity_name(column):
    """pystan's `beta.1` / `a.2.3` -> posteriordb's `beta[1]` / `a[2,3]`."""
    base, _, rest = column.partition(".")
    if rest and all(p.isdigit() for p in rest.split(".")):
        return f"{base}[{rest.replace('.', ',')}]"
    return column


def load_data(path):
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read(z.namelist()[0]))


def run(name, seed, out):
    import stan  # imported here so --help works without pystan

    info = json.loads((DB / "posteriors" / f"{name}.json").read_text())
    code = (DB / "models" / "stan" / f"{info['model_name']}.stan").read_text()
    data = load_data(DB / "data" / "data" / f"{info['data_name']}.json.zip")
    names = json.loads((REFERENCE / f"{name}.json").read_text())["names"]
    try:
        posterior = stan.build(code, data=data, random_seed=seed)
    except Exception as e:  # noqa: BLE001 (any build failure is reported)
        (out / f"{name}.error.txt").write_text(f"pystan could not build the model: {e}\n")
        return
    started = time.time()
    fit = posterior.sample(num_chains=4, num_samples=1000, num_warmup=1000, save_warmup=True)
    seconds = time.time() - started
    draws = fit._draws  # (sampler params + constrained params, warm-up + kept, chains)
    columns = list(fit.sample_and_sampler_param_names) + list(fit.constrained_param_names)
    index = {quantity_name(c): i for i, c in enumerate(columns)}
    warm = fit.num_warmup
    chains = []
    for k in range(draws.shape[2]):
        leapfrog = draws[index["n_leapfrog__"], :, k]
        divergent = draws[index["divergent__"], warm:, k]
        chains.append({
            "gradients_warmup": int(leapfrog[:warm].sum()),
            "gradients_kept": int(leapfrog[warm:].sum()),
            "divergent_kept": int(divergent.sum()),
            "step_size": float(draws[index["stepsize__"], warm:, k].mean()),
            "draws": {n: draws[index[n], warm:, k].tolist() for n in names if n in index},
        })
    result = {
        "posterior": name,
        "seed": seed,
        "sampler": "Stan NUTS (pystan 3.10, httpstan 4.13, Stan 2.35), defaults",
        "missing": [n for n in names if n not in index],
        "seconds_wall_parallel_chains": seconds,
        "chains": chains,
    }
    (out / f"{name}.seed{seed}.json").write_text(json.dumps(result))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="posteriordb names (default: every one with a reference)")
    parser.add_argument("--seeds", default="1", help="comma-separated seeds (default 1)")
    parser.add_argument("--out", type=Path, default=HERE / "target" / "stan-nuts")
    args = parser.parse_args()
    names = args.names or sorted(p.stem for p in REFERENCE.glob("*.json"))
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    # pystan's build leaves a build/ folder in the working directory.
    os.chdir(args.out)
    for name in names:
        for seed in [int(s) for s in args.seeds.split(",")]:
            if (args.out / f"{name}.seed{seed}.json").exists():
                continue
            print(f"stan_nuts: {name} seed {seed}", file=sys.stderr, flush=True)
            run(name, seed, args.out)


if __name__ == "__main__":
    main()
