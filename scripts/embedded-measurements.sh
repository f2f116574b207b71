#!/usr/bin/env bash
# Prints the measurements table of docs/EMBEDDED.md (markdown) from the logs
# that scripts/embedded-check.sh leaves in LOGDIR and from the firmware ELFs.
# Run alone (no LOGDIR), it first runs every firmware itself.
#
# usage: scripts/embedded-measurements.sh [LOGDIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
targets=(thumbv7em-none-eabihf thumbv7m-none-eabi thumbv6m-none-eabi riscv32imac-unknown-none-elf)
declare -A machine=(
  [thumbv7em-none-eabihf]="Cortex-M4F, mps2-an386"
  [thumbv7m-none-eabi]="Cortex-M3, lm3s6965evb"
  [thumbv6m-none-eabi]="Cortex-M0, microbit"
  [riscv32imac-unknown-none-elf]="RV32IMAC, virt"
)

logdir="${1:-}"
if [[ -z "$logdir" ]]; then
  logdir="$(mktemp -d)"
  for t in "${targets[@]}"; do
    bash "$root/scripts/embedded-run.sh" "$t" "$logdir/$t.log" >/dev/null
  done
fi

field() { # field LOG REGEX -> first capture group of the first matching line
  sed -nE "s/$2/\1/p" "$1" | head -n1
}

echo "| target (QEMU machine) | flash (text+data) | static RAM (data+bss) | peak stack | QNHMC draw f32 | HAMCMC draw f32 | QNHMC draw f64 | HAMCMC draw f64 | f64/f32 bits = host |"
echo "|---|---|---|---|---|---|---|---|---|"
for t in "${targets[@]}"; do
  log="$logdir/$t.log"
  elf="$target_dir/$t/release/qnmc-firmware-example"
  read -r text data bss flash ram _ < <(python3 "$root/scripts/elf-size.py" "$elf" | tail -n1)
  stack=$(field "$log" '^peak stack: ([0-9]+) of.*')
  q32=$(field "$log" '^step cost f32: qnhmc=([0-9]+) .*')
  h32=$(field "$log" '^step cost f32: .*hamcmc=([0-9]+) .*')
  q64=$(field "$log" '^step cost f64: qnhmc=([0-9]+) .*')
  h64=$(field "$log" '^step cost f64: .*hamcmc=([0-9]+) .*')
  bits="no"
  if grep -q '^bit-identity f64 .* ok$' "$log" && grep -q '^bit-identity f32 .* ok$' "$log"; then bits="yes"; fi
  if [[ "$t" == riscv* ]]; then stack="$stack (manual paint)"; fi
  echo "| $t (${machine[$t]}) | $flash B | $ram B | $stack B | $q32 | $h32 | $q64 | $h64 | $bits |"
done
echo
echo "Draw costs are instructions per draw (QEMU -icount shift=0), mean of 20 draws after 300 warm-up draws."
echo
echo "NUTS (MAX_DEPTH 6; warm-up: Stan's windows over 300 draws, then 20 draws measured; leapfrog steps per measured draw in parentheses):"
echo
echo "| target | NUTS diag draw f32 | NUTS L-BFGS draw f32 | NUTS diag draw f64 | NUTS L-BFGS draw f64 | NUTS peak stack f32 diag / L-BFGS (once built) | NUTS peak stack f64 diag / L-BFGS (once built) |"
echo "|---|---|---|---|---|---|---|"
for t in "${targets[@]}"; do
  log="$logdir/$t.log"
  cost() { # cost PRECISION METRIC -> "instructions (leapfrogs)"
    sed -nE "s/^step cost $1 nuts: .*$2=([0-9]+) \(([0-9.]+) leapfrog steps\).*/\1 (\2)/p" "$log" | head -n1
  }
  stack() { # stack PRECISION -> "diag / lbfgs (diag / lbfgs)"
    sed -nE "s/^peak stack $1 bit-identity chains: .*nuts-diag=([0-9]+) nuts-lbfgs=([0-9]+) bytes \(NUTS once built: nuts-diag=([0-9]+) nuts-lbfgs=([0-9]+)\).*/\1 \/ \2 B (\3 \/ \4 B)/p" "$log" | head -n1
  }
  echo "| $t | $(cost f32 nuts-diag) | $(cost f32 nuts-lbfgs) | $(cost f64 nuts-diag) | $(cost f64 nuts-lbfgs) | $(stack f32) | $(stack f64) |"
done
echo
echo "Peak stack of each job (bytes from the top of the stack, the stack repainted before each job):"
echo
for t in "${targets[@]}"; do
  echo "- $t:"
  grep -h '^peak stack [^:]' "$logdir/$t.log" | sed 's/^/  - /'
done
echo
echo "Sampler state on 32-bit targets (thumbv7em-none-eabihf log):"
echo
echo "| sampler | size_of | algorithmic minimum | ratio |"
echo "|---|---|---|---|"
grep -h '^state bytes:' "$logdir/thumbv7em-none-eabihf.log" | python3 -c '
import re, sys
for line in sys.stdin:
    for name, size, minimum in re.findall(r"(\w+<[^>]+>)=(\d+) \(min (\d+)\)", line):
        print(f"| `{name}` | {size} B | {minimum} B | {int(size) / int(minimum):.2f} |")
'

# Where the flash goes (Cortex-M4F), by symbol sizes; inlined code counts in
# its caller. Needs llvm-nm (skipped without it).
elf="$target_dir/thumbv7em-none-eabihf/release/qnmc-firmware-example"
if command -v llvm-nm >/dev/null && [[ -f "$elf" ]]; then
  echo
  echo "Flash by part (thumbv7em-none-eabihf, llvm-nm --print-size, bytes):"
  echo
  llvm-nm --print-size --size-sort --radix=d -C "$elf" | python3 -c '
import re, sys
parts = [
    ("qnmc NUTS (samplers::nuts, adaptation: warm-up, estimators, dual averaging, lbfgs::minimize; metrics)",
     r"qnmc::(samplers::nuts|adaptation|metric|lbfgs::minimize)|AdaptiveNuts|Nuts<|LbfgsMetric|LbfgsEstimator|DiagonalEstimator|MetricEstimator"),
    ("qnmc QNHMC, HAMCMC, L-BFGS memory, other core", r"qnmc::"),
    ("firmware jobs and platform", r"qnmc_firmware_example|qnmc_wasm_example|firmware_example|platform|\bmain\b"),
    ("core::fmt (log formatting)", r"core::fmt|core::num::flt2dec|core::num::fmt|Formatter|Display|Debug"),
    ("libm", r"libm::"),
    ("compiler-builtins (soft float, memcpy)", r"compiler_builtins|__aeabi|__(add|sub|mul|div)[sd]f3|mem(cpy|set|move)"),
]
totals = {name: 0 for name, _ in parts}
other = 0
seen = set()
for line in sys.stdin:
    fields = line.split(None, 3)
    if len(fields) < 4 or fields[2].lower() not in {"t", "r", "d"}:
        continue
    # Aliases (e.g. `.llvm.N` copies of a name) share an address: count once.
    if fields[0] in seen:
        continue
    seen.add(fields[0])
    size, name = int(fields[1]), fields[3].strip().replace("..", "::")
    for part, pattern in parts:
        if re.search(pattern, name):
            totals[part] += size
            break
    else:
        other += size
for part, _ in parts:
    print(f"- {part}: {totals[part]}")
print(f"- other (start-up, vector table, panics, rand_xorshift): {other}")
'
fi

wasm="$target_dir/wasm32-unknown-unknown/release/qnmc_wasm_example.wasm"
if [[ -f "$wasm" ]]; then
  echo
  python3 - "$wasm" <<'PY'
import sys
# Sums the WebAssembly sections by id: custom sections (id 0: names, DWARF
# debug info from the release profile's debug = 1) are not part of the module's
# executable content.
data = open(sys.argv[1], "rb").read()
pos, total, custom, code, dat = 8, len(data), 0, 0, 0
def leb(p):
    result = shift = 0
    while True:
        b = data[p]; p += 1
        result |= (b & 0x7F) << shift; shift += 7
        if not b & 0x80:
            return result, p
while pos < total:
    sid = data[pos]; size, pos = leb(pos + 1)
    if sid == 0: custom += size
    elif sid == 10: code += size
    elif sid == 11: dat += size
    pos += size
print(f"WebAssembly module (wasm32-unknown-unknown, release): {total} B file, "
      f"{total - custom} B without custom (debug/name) sections, of which code {code} B, data {dat} B.")
PY
fi
