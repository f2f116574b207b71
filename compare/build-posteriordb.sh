#!/usr/bin/env bash
# Compiles every Stan model of the vendored posteriordb subset
# (compare/posteriordb/, the posteriors with reference draws) with
# stan/build-model.py into OUT (default compare/target/posteriordb-models),
# two at a time. A model that does not compile is listed, with the
# compiler's last lines, in OUT/failures.txt; the others are OUT/NAME_model.so.
# Needs `pip install httpstan==4.13.0`. About 10 minutes on 2 cores.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
out="${1:-$here/target/posteriordb-models}"
mkdir -p "$out/logs"
: > "$out/failures.txt"
ls "$here"/posteriordb/posterior_database/models/stan/*.stan |
    xargs -P 2 -I{} sh -c '
        name=$(basename "{}" .stan)
        if ! python3 "$0" "{}" -o "$1/${name}_model.so" > "$1/logs/$name.log" 2>&1; then
            { echo "== $name"; tail -n 5 "$1/logs/$name.log"; } >> "$1/failures.txt"
        fi' "$root/stan/build-model.py" "$out"
built=$(ls "$out"/*_model.so 2>/dev/null | wc -l)
echo "build-posteriordb: $built models in $out; failures: $(grep -c '^== ' "$out/failures.txt")"
