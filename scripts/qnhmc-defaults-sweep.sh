#!/usr/bin/env bash
# QNHMC's mass (M = I, M = C) and gamma (1, newest pair) on six targets, three
# seeds each, L = 20, frozen memory: the measurement behind the command line's
# defaults (docs/CLI.md). Prints, per seed, the smallest
# bulk ESS / smallest tail ESS / largest R-hat over the target's quantities
# (4 chains x 1000 draws). About 6 minutes on 2 cores.
#
# Usage: scripts/qnhmc-defaults-sweep.sh [SHARED_DATA_DIR]   (default ../shared/data)
set -euo pipefail
cd "$(dirname "$0")/.."
shared="${1:-../shared/data}"
cargo build --release -q -p qnmc-cli
qnmc=target/release/qnmc
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for target in gaussian eight-schools ark sblrc-blr logreg-heart logreg-german; do
  for mass in identity inverse-hessian; do
    for gamma in 1 newest; do
      line="$target mass=$mass gamma=$gamma:"
      for seed in 1 2 3; do
        dir="$out/$target-$mass-$gamma-$seed"
        "$qnmc" run --quiet --shared-data "$shared" --sampler qnhmc --target "$target" \
          --leapfrog-steps 20 --mass "$mass" --gamma "$gamma" --seed "$seed" \
          --output "$dir" >"$out/log" 2>&1 || { cat "$out/log"; exit 1; }
        line="$line  $(python3 - "$dir/summary.json" <<'PY'
import json, sys
q = json.load(open(sys.argv[1]))["quantities"]
print("%5.0f/%5.0f/%.3f" % (min(x["ess_bulk"] for x in q),
                            min(x["ess_tail"] for x in q),
                            max(x["rhat"] for x in q)))
PY
)"
      done
      echo "$line"
    done
  done
done
