#!/usr/bin/env bash
# Runs `qnmc check` with every sampler's default settings on the targets of
# issue 11 and prints a Markdown table: PASS, FAIL (with the worst |z| and
# R-hat), or REFUSED (the CLI's reason, exit 2). docs/DEFAULTS.md quotes it.
#
#   bash scripts/check-defaults.sh [seed] [targets...]
#
# Default targets: logreg-heart logreg-german, plus eight-schools sblrc-blr
# ark when the shared data folder is found. About 10 minutes on 2 cores.
set -uo pipefail
cd "$(dirname "$0")/.."
seed="${1:-2016}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(logreg-heart logreg-german years-regression)
    if [ -d ../shared/data ] || [ -n "${QNMC_SHARED_DATA:-}" ]; then
        targets+=(eight-schools sblrc-blr ark)
    fi
fi
# SAMPLERS="sgld hamcmc" restricts the rows.
read -r -a samplers <<< "${SAMPLERS:-nuts hmc qnhmc hamcmc hmc-bfgs mh-bfgs amagold l2mc sgld psgld sgrld sghmc sgnht sgrhmc}"
cargo build --release -q -p qnmc-cli || exit 1
qnmc=target/release/qnmc
printf '| sampler |'; for t in "${targets[@]}"; do printf ' %s |' "$t"; done; printf '\n|---|'
for _ in "${targets[@]}"; do printf '%s' '---|'; done; printf '\n'
for s in "${samplers[@]}"; do
    printf '| %s |' "$s"
    for t in "${targets[@]}"; do
        out="$($qnmc check --target "$t" --sampler "$s" --seed "$seed" --quiet 2>&1)"
        code=$?
        case $code in
            0) cell="PASS" ;;
            1) rhat=$(printf '%s\n' "$out" | awk -F'|' '/^\| /{ if ($9+0 > m) m = $9+0 } END { printf "%.3f", m }')
               cell="FAIL (max R-hat $rhat)" ;;
            2) cell="REFUSED" ;;
            *) cell="exit $code" ;;
        esac
        printf ' %s |' "$cell"
    done
    printf '\n'
done
