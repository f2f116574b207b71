#!/usr/bin/env bash
# The C API's checks (the CI step; docs/C_API.md): the static library for the
# host and three devices, no allocator symbol in them (nm), the header as
# strict C99, the C checks of bad input under AddressSanitizer and
# UndefinedBehaviorSanitizer, and the C example. The Rust tests
# (`cargo test -p qnmc-ffi`, part of `cargo test --workspace`) add the
# bit-for-bit comparisons of the C and Rust chains.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
targets=(thumbv6m-none-eabi thumbv7em-none-eabihf riscv32imac-unknown-none-elf)
installed="$(rustup target list --installed)"
for t in "${targets[@]}"; do
    grep -qx "$t" <<<"$installed" || rustup target add "$t"
done
host_lib="$(bash ffi/scripts/build-staticlib.sh)"
libs=("$host_lib")
for t in "${targets[@]}"; do
    libs+=("$(bash ffi/scripts/build-staticlib.sh "$t")")
done
bash ffi/scripts/check-no-alloc.sh "${libs[@]}"

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# Negative control: the nm check must reject a library that calls malloc.
{
    # 19 entry points plus the leak (no `| head`: under pipefail the writer's
    # SIGPIPE fails the script, exit 141, whenever head closes first).
    for i in $(seq 1 19); do echo "void qnmc_f$i(void) {}"; done
    echo '#include <stdlib.h>'
    echo 'void *qnmc_leak(void) { return malloc(8); }'
} >"$out/leak.c"
cc -c "$out/leak.c" -o "$out/leak.o" && ar rcs "$out/libleak.a" "$out/leak.o"
if bash ffi/scripts/check-no-alloc.sh "$out/libleak.a" 2>/dev/null; then
    echo "check-no-alloc.sh accepted a library that calls malloc" >&2
    exit 1
fi
strict=(-std=c99 -pedantic -Wall -Wextra -Werror)
printf '#include "qnmc.h"\nint main(void) { return QNMC_OK; }\n' >"$out/header.c"
cc "${strict[@]}" -Iffi/include -fsyntax-only "$out/header.c"
echo "qnmc.h compiles with ${strict[*]}"
cc "${strict[@]}" -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
    -Iffi/include ffi/tests/c/bad_input.c "$host_lib" -lm -o "$out/bad_input"
"$out/bad_input"
make -s -C ffi/examples/host LIB="$host_lib" clean run
make -s -C ffi/examples/host clean
