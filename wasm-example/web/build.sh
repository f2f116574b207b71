#!/usr/bin/env bash
# Builds the browser module (feature `web`: the `web_*` exports and the
# `env.log_density` import of the JS model) and copies it to DEST (default:
# this folder, as qnmc.wasm). Its own target folder, so the import-free
# module `tests/node/` checks is not overwritten; no debug info.
#
# usage: wasm-example/web/build.sh [DEST_DIR]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dest="${1:-$here}"
target_dir="${CARGO_TARGET_DIR:-$here/../../target}/wasm-web"
CARGO_PROFILE_RELEASE_DEBUG=0 cargo build --quiet -p qnmc-wasm-example \
  --manifest-path "$here/../Cargo.toml" --target wasm32-unknown-unknown --release \
  --features web --target-dir "$target_dir"
cp "$target_dir/wasm32-unknown-unknown/release/qnmc_wasm_example.wasm" "$dest/qnmc.wasm"
echo "$dest/qnmc.wasm"
