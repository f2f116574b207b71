#!/usr/bin/env bash
# Builds the C static library libqnmc_ffi.a (release) for the host or for
# TARGET, and prints its path. The crate is an rlib in Cargo.toml; the
# static library is the same crate built by `cargo rustc` with its panic
# handler (feature panic-handler) and, needed on a hosted target for a
# no_std library, -C panic=abort (bare-metal targets abort already).
#   bash ffi/scripts/build-staticlib.sh                        # host
#   bash ffi/scripts/build-staticlib.sh thumbv7em-none-eabihf   # a device
# Build-time limits: QNMC_FFI_MAX_DIM, QNMC_FFI_LBFGS_MEMORY,
# QNMC_FFI_MAX_TREE_DEPTH (docs/C_API.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
target="${1:-}"
args=(rustc --manifest-path "$root/ffi/Cargo.toml" --lib --release --quiet
      --features panic-handler --crate-type staticlib)
[ -n "$target" ] && args+=(--target "$target")
cargo "${args[@]}" -- -C panic=abort >&2
dir="${CARGO_TARGET_DIR:-$root/target}"
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
if [ -n "$target" ]; then
    echo "$dir/$target/release/libqnmc_ffi.a"
else
    echo "$dir/release/libqnmc_ffi.a"
fi
