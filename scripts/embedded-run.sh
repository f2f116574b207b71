#!/usr/bin/env bash
# Builds the firmware example for one bare-metal target and runs it under QEMU
# with the runner of firmware-example/.cargo/config.toml (always under
# `timeout`, with -icount shift=0). The log goes to stdout and, if given, to
# LOGFILE; the exit code is the firmware's (0 only if every check passed).
#
# usage: scripts/embedded-run.sh TARGET [LOGFILE] [extra cargo args...]
#   TARGET: thumbv7em-none-eabihf | thumbv7m-none-eabi | thumbv6m-none-eabi |
#           riscv32imac-unknown-none-elf
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${1:?usage: $0 TARGET [LOGFILE] [cargo args...]}"
log="${2:-/dev/null}"
shift $(( $# >= 2 ? 2 : 1 ))
cd "$root/firmware-example"
cargo build --quiet --release --target "$target" "$@"
set +e
cargo run --quiet --release --target "$target" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
exit "$status"
