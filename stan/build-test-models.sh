#!/usr/bin/env bash
# Builds the Stan models that cli/tests/cli_stan_models.rs runs, into
# OUT (default target/stan-models), two compilations at a time:
#   correlated_gaussian (D = 100, stan/models/), and, when the shared data
#   folder is there (../shared/data or $QNMC_SHARED_DATA), posteriordb's
#   eight_schools_noncentered, blr and arK.
# Needs `pip install httpstan==4.13.0` (see stan/build-model.py). Then:
#   QNMC_STAN_MODELS=target/stan-models cargo test -p qnmc-cli --test cli_stan_models
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
out="${1:-$root/target/stan-models}"
mkdir -p "$out"
shared="${QNMC_SHARED_DATA:-$root/../shared/data}"
models=("$here/models/correlated_gaussian.stan")
pdb="$shared/posteriordb/posterior_database/models/stan"
if [ -d "$pdb" ]; then
  models+=("$pdb/eight_schools_noncentered.stan" "$pdb/blr.stan" "$pdb/arK.stan")
else
  echo "build-test-models: no $pdb; building only the built-in model" >&2
fi
for m in "${models[@]}"; do
  name="$(basename "$m" .stan)"
  printf '%s\0%s\0' "$m" "$out/${name}_model.so"
done | xargs -0 -n 2 -P 2 sh -c 'python3 "$0" "$1" -o "$2"' "$here/build-model.py"
