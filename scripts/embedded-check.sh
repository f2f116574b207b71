#!/usr/bin/env bash
# The embedded proof (issue 5), run by .ci/embedded after the tools are installed:
#  1. build + run the firmware on QEMU for thumbv7em (mps2-an386, Cortex-M4F),
#     thumbv7m (lm3s6965evb), thumbv6m (microbit, Cortex-M0) and riscv32imac
#     (virt); each must exit 0 (its own checks: bit identity against the baked
#     host hashes, posterior means/sds against the host's quadrature);
#  2. compare the bit-identity lines of every log with the host's run;
#  3. negative control: the `negative-control` build must exit non-zero;
#  4. build the core with the defmt feature for thumbv7em;
#  5. the C firmware (ffi/examples/firmware/check.sh: C API, arm-none-eabi-gcc,
#     Cortex-M4F under QEMU) must print the host build's chain, bit for bit;
#  6. build the WebAssembly module and run `node --test tests/node/`;
#  7. print the measurements table;
#  8. the browser page (wasm-example/web/): headless Chromium samples the JS
#     model and two Rust models; its screenshots and DOM are checked
#     (wasm-example/web/test/check-browser.sh; needs `chromium`).
#
# usage: scripts/embedded-check.sh [LOGDIR]   (logs kept in LOGDIR if given)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
logdir="${1:-$(mktemp -d)}"
mkdir -p "$logdir"
targets=(thumbv7em-none-eabihf thumbv7m-none-eabi thumbv6m-none-eabi riscv32imac-unknown-none-elf)

echo "== host run of the same jobs"
cargo run --quiet --release -p qnmc-firmware-example > "$logdir/host.log"
cat "$logdir/host.log"
grep '^bit-identity' "$logdir/host.log" | sed 's/ ok$//' > "$logdir/host.bits"
[[ $(wc -l < "$logdir/host.bits") -eq 2 ]] || { echo "host run printed no hashes"; exit 1; }

for t in "${targets[@]}"; do
  echo "== $t"
  start=$SECONDS
  if ! bash scripts/embedded-run.sh "$t" "$logdir/$t.log"; then
    echo "FAIL: the $t firmware exited non-zero"
    exit 1
  fi
  grep -q '^result: PASS$' "$logdir/$t.log" || { echo "FAIL: $t printed no PASS"; exit 1; }
  grep '^bit-identity' "$logdir/$t.log" | sed 's/ ok$//' > "$logdir/$t.bits"
  if ! diff -u "$logdir/host.bits" "$logdir/$t.bits"; then
    echo "FAIL: $t chains differ from the host's"
    exit 1
  fi
  echo "($t: $((SECONDS - start)) s, bit-identical to the host)"
done

echo "== negative control (thumbv7em, feature negative-control): must fail"
set +e
bash scripts/embedded-run.sh thumbv7em-none-eabihf "$logdir/negative.log" --features negative-control > /dev/null
status=$?
set -e
if [[ $status -eq 0 ]] || ! grep -q 'MISMATCH' "$logdir/negative.log"; then
  echo "FAIL: the negative control exited $status"
  exit 1
fi
echo "negative control exited $status with a MISMATCH, as it must"

echo "== core with the defmt feature (thumbv7em)"
cargo build --quiet -p qnmc --features defmt --target thumbv7em-none-eabihf

echo "== C firmware (ffi/examples/firmware): the C API on the Cortex-M4F, chain = host's"
start=$SECONDS
bash ffi/examples/firmware/check.sh "$logdir/c-firmware"
echo "(C firmware: $((SECONDS - start)) s)"

echo "== WebAssembly"
cargo build --quiet -p qnmc-wasm-example --target wasm32-unknown-unknown --release
node --test tests/node/

echo "== measurements"
bash scripts/embedded-measurements.sh "$logdir"

# ---- 8. WebAssembly in the browser (issue 25 item 4) -----------------------
# Separate from the rest: the page's module is built with the feature `web`
# into its own target folder, so the module above is untouched.
echo "== WebAssembly in headless Chromium (wasm-example/web)"
command -v chromium >/dev/null || { echo "FAIL: chromium is missing (.ci/embedded installs it)"; exit 1; }
start=$SECONDS
bash wasm-example/web/test/check-browser.sh "$logdir/browser"
echo "(browser test: $((SECONDS - start)) s)"
