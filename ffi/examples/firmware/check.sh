#!/usr/bin/env bash
# The C firmware example (docs/C_API.md "The C firmware", docs/EMBEDDED.md):
# builds main.c + model.c with arm-none-eabi-gcc for the Cortex-M4F (hard
# float, startup_cm4.c, link.ld, no C library start-up) against the
# thumbv7em-none-eabihf static library built with QNMC_FFI_MAX_DIM=3, runs it
# under QEMU (mps2-an386, semihosting), builds the same sources for the host
# against the host library (default limits) and runs them, and fails unless
#  - both exit 0 (each checks its posterior means and divergences),
#  - their "draws", "posterior mean" and "chain hash" lines are identical
#    (the chain is bit for bit the host's),
#  - a host build with another seed (negative control) does differ,
#  - nm finds no allocator in the firmware ELF, and every object in it uses
#    the hard-float calling convention (VFP registers).
# Prints the firmware's log and its flash/RAM/stack sizes.
#
# Needs: qemu-system-arm, arm-none-eabi-gcc with newlib (Debian:
# gcc-arm-none-eabi libnewlib-arm-none-eabi; .ci/embedded installs them),
# the Rust target thumbv7em-none-eabihf, and cc.
#   bash ffi/examples/firmware/check.sh [OUTDIR]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
out="${1:-$target_dir/c-firmware/out}"
mkdir -p "$out"

# The device library: its own target directory, so that the default-limit
# library at the usual path (ffi/scripts/check.sh) is not replaced.
fw_lib="$(QNMC_FFI_MAX_DIM=3 CARGO_TARGET_DIR="$target_dir/c-firmware" \
    bash "$root/ffi/scripts/build-staticlib.sh" thumbv7em-none-eabihf)"
host_lib="$(bash "$root/ffi/scripts/build-staticlib.sh")"

strict=(-std=c99 -pedantic -Wall -Wextra -Werror -O2 -ffp-contract=off -I"$root/ffi/include")
cpu=(-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16)
for f in startup_cm4 main model; do
    arm-none-eabi-gcc "${cpu[@]}" "${strict[@]}" -ffunction-sections -fdata-sections \
        -c "$here/$f.c" -o "$out/$f.o"
done
arm-none-eabi-gcc "${cpu[@]}" -nostartfiles -T "$here/link.ld" -Wl,--gc-sections \
    -Wl,-z,noexecstack -Wl,-Map="$out/firmware.map" \
    "$out/startup_cm4.o" "$out/main.o" "$out/model.o" "$fw_lib" -lc -lgcc -o "$out/firmware.elf"
cc "${strict[@]}" "$here/main.c" "$here/model.c" "$here/platform_host.c" "$host_lib" -lm \
    -o "$out/host"
cc "${strict[@]}" -DSEED=43u "$here/main.c" "$here/model.c" "$here/platform_host.c" \
    "$host_lib" -lm -o "$out/host-seed43"

allocators="$(arm-none-eabi-nm "$out/firmware.elf" | awk '{ print $NF }' |
    grep -E '^_?(malloc|free|calloc|realloc|_malloc_r|_free_r|_sbrk|_sbrk_r|__rust_alloc|__rg_alloc)$' || true)"
if [ -n "$allocators" ]; then
    echo "FAIL: allocator symbols in the firmware: $allocators" >&2
    exit 1
fi
# The float ABI: the C objects and the ELF must say "VFP registers" (hard
# float, as thumbv7em-none-eabihf); no library member may say otherwise
# (members without floating point carry no tag). ld refuses a mix as well.
for f in "$out"/startup_cm4.o "$out"/main.o "$out"/model.o "$out/firmware.elf"; do
    arm-none-eabi-readelf -A "$f" | grep -q 'Tag_ABI_VFP_args: VFP registers' ||
        { echo "FAIL: $f does not pass floats in VFP registers" >&2; exit 1; }
done
if arm-none-eabi-readelf -A "$fw_lib" | grep 'Tag_ABI_VFP_args' | grep -qv 'VFP registers'; then
    echo "FAIL: a member of $fw_lib does not pass floats in VFP registers" >&2
    exit 1
fi
echo "firmware.elf: no allocator symbol (nm), hard-float calling convention throughout (readelf -A)"

echo "== C firmware under QEMU (mps2-an386, Cortex-M4F)"
start=$SECONDS
set +e
timeout 300 qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -nographic -monitor none \
    -serial none -semihosting-config enable=on,target=native -kernel "$out/firmware.elf" \
    > "$out/firmware.log" 2>&1  # semihosting writes to stderr
status=$?
set -e
cat "$out/firmware.log"
[ "$status" -eq 0 ] || { echo "FAIL: the C firmware exited $status" >&2; exit 1; }
echo "(QEMU: $((SECONDS - start)) s)"
"$out/host" > "$out/host.log" || { cat "$out/host.log"; echo "FAIL: the host build failed" >&2; exit 1; }
"$out/host-seed43" > "$out/host-seed43.log" || true

# The lines that must be the same bits on the device and on the host.
chain_lines() { grep -E '^(draws|posterior mean|chain hash)' "$1"; }
chain_lines "$out/firmware.log" > "$out/firmware.chain"
chain_lines "$out/host.log" > "$out/host.chain"
chain_lines "$out/host-seed43.log" > "$out/host-seed43.chain"
[ "$(wc -l < "$out/host.chain")" -eq 3 ] || { echo "FAIL: the host printed no chain lines" >&2; exit 1; }
if ! diff -u "$out/host.chain" "$out/firmware.chain"; then
    echo "FAIL: the C firmware's chain differs from the host's" >&2
    exit 1
fi
if diff -q "$out/host.chain" "$out/host-seed43.chain" > /dev/null; then
    echo "FAIL: negative control: seed 43 printed seed 42's chain lines" >&2
    exit 1
fi
echo "chain bit-identical to the host build ($(grep '^chain hash' "$out/host.log")); seed 43 differs, as it must"

read -r text data bss flash ram _ < <(python3 "$root/scripts/elf-size.py" "$out/firmware.elf" | tail -n1)
c_code="$(arm-none-eabi-size -t "$out"/startup_cm4.o "$out"/main.o "$out"/model.o | awk 'END { print $1 + $2 }')"
echo "sizes: flash (text+data) $flash B (text $text, data $data; the C code's text+data $c_code B), static RAM (data+bss) $ram B, $(grep '^peak stack' "$out/firmware.log")"
