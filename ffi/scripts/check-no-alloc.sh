#!/usr/bin/env bash
# Fails if a static library names an allocator: the C allocator (malloc,
# free, calloc, realloc, defined or undefined) or Rust's (__rust_alloc,
# __rust_dealloc, __rust_realloc, __rust_alloc_zeroed, __rg_*, __rdl_*,
# also inside v0-mangled names). Also checks that nm read the library (its
# 20 qnmc_ entry points are there), so an unreadable file cannot pass.
#   bash ffi/scripts/check-no-alloc.sh LIB.a...
set -euo pipefail
status=0
for lib in "$@"; do
    symbols="$(nm -A "$lib" 2>/dev/null | awk '{ print $NF }' | sort -u)"
    entry_points=$(grep -cE '^qnmc_' <<<"$symbols" || true)
    allocators=$(grep -E '^_?(malloc|free|calloc|realloc|posix_memalign|aligned_alloc)$|__rust_(alloc|dealloc|realloc|alloc_zeroed)|__rg_(alloc|dealloc|realloc|alloc_zeroed)|__rdl_' <<<"$symbols" || true)
    if [ "$entry_points" -ne 20 ]; then
        echo "$lib: nm found $entry_points qnmc_ symbols, expected 20" >&2
        status=1
    elif [ -n "$allocators" ]; then
        echo "$lib: allocator symbols:" >&2
        echo "$allocators" >&2
        status=1
    else
        echo "$lib: $(wc -l <<<"$symbols") symbols, 20 qnmc_ entry points, no allocator symbol"
    fi
done
exit "$status"
