#!/usr/bin/env python3
"""Size limits of the source (issue 46): no file over 800 lines and no
function over 100 lines in the library crates, outside tests, unless a
written reason stands beside it.

usage: scripts/size-limits.py SRC_DIR [SRC_DIR ...]   (e.g. core/src host/src)

Files. A file's length is its lines up to an inline test module at its end
(a top-level `#[cfg(test)]` followed by `mod NAME {`); files named
`tests.rs` or `*_tests.rs`, and folders named `tests`, are tests and are not
counted. A longer file must say why in a line holding
`size-limit: REASON` among its first 60 lines.

Functions. Clippy's `too_many_lines` (threshold 100 in clippy.toml; it
counts lines of code, not comments or blank lines) is turned on in each
crate's lib.rs outside `cfg(test)`, so .ci/run's clippy step (warnings
denied) fails on a longer function. A function allowed to be longer carries
`#[allow(clippy::too_many_lines, reason = "...")]`; this script checks that
every such allow has a reason that is not empty.

Prints each violation and exits with 1 if there is one.
"""
import os
import re
import sys

MAX_FILE_LINES = 800
HEAD_LINES = 60
ALLOW = re.compile(r"allow\(\s*clippy::too_many_lines\s*(,\s*reason\s*=\s*\"([^\"]*)\")?\s*\)")


def is_test_file(path):
    parts = path.split(os.sep)
    name = parts[-1]
    return name == "tests.rs" or name.endswith("_tests.rs") or "tests" in parts[:-1]


def code_length(lines):
    """Lines before a top-level `#[cfg(test)]` that opens an inline module."""
    for i, line in enumerate(lines):
        if line.rstrip() == "#[cfg(test)]" and i + 1 < len(lines):
            following = lines[i + 1]
            if re.match(r"(pub(\([a-z]+\))? )?mod \w+ \{", following):
                return i
    return len(lines)


def main(roots):
    problems = []
    for root in roots:
        for directory, _, names in os.walk(root):
            for name in sorted(names):
                if not name.endswith(".rs"):
                    continue
                path = os.path.join(directory, name)
                with open(path, encoding="utf-8") as f:
                    lines = f.read().split("\n")
                text = "\n".join(lines)
                for match in ALLOW.finditer(text):
                    if not (match.group(2) or "").strip():
                        number = text.count("\n", 0, match.start()) + 1
                        problems.append(
                            f"{path}:{number}: allow(clippy::too_many_lines) without a reason"
                        )
                if is_test_file(os.path.relpath(path, root)):
                    continue
                length = code_length(lines)
                if length > MAX_FILE_LINES and not any(
                    "size-limit:" in line for line in lines[:HEAD_LINES]
                ):
                    problems.append(
                        f"{path}: {length} lines outside tests (limit {MAX_FILE_LINES}); "
                        "split it, or say why in a `size-limit: REASON` line at its head"
                    )
    for problem in problems:
        print(problem)
    print(f"{len(problems)} size-limit violation(s) in {', '.join(roots)}")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
