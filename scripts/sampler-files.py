#!/usr/bin/env python3
"""Checks docs/ARCHITECTURE.md's claim about adding a sampler to the host.

Every sampler but NUTS (the default, with its own start and warm-up) may be
named -- `SamplerKind::Name` -- outside tests and comments only in its
registry row, `host/src/run/registry/<name>.rs`, and in the chain builder,
`host/src/run/chain/mod.rs`. The rest of the host and the CLI read the row,
so adding a sampler touches the files ARCHITECTURE.md lists and no others.

Usage: python3 scripts/sampler-files.py   (from the workspace root)
Exits 1, naming each file and line, when another file names a sampler.
"""

import pathlib
import re
import sys

ROOTS = ["host/src", "cli/src"]
BUILDER = "host/src/run/chain/mod.rs"
REGISTRY = "host/src/run/registry"
EXEMPT = {"Nuts"}
# Files that use a sampler rather than describe it: adding a sampler does not
# touch them.
USERS = {
    # The reference posteriors are long HMC runs.
    ("host/src/run/reference.rs", "Hmc"),
}
NAME = re.compile(r"\bSamplerKind::([A-Z][A-Za-z0-9]*)\b")


def library_lines(path):
    """The lines of `path` before its `#[cfg(test)]` module, comments cut."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        stripped = line.strip()
        if stripped == "#[cfg(test)]":
            return
        if stripped.startswith("//"):
            continue
        yield number, line.split("//")[0]


def is_test_file(path):
    return path.name.endswith("tests.rs") or "tests" in path.parts


def main():
    kinds = set()
    for line in pathlib.Path("host/src/run/sampler_kind.rs").read_text().splitlines():
        m = re.match(r"\s+([A-Z][A-Za-z0-9]*),$", line)
        if m:
            kinds.add(m.group(1))
    if len(kinds) < 10:
        print(f"sampler-files: found only {sorted(kinds)} in SamplerKind")
        return 1
    failures = []
    for root in ROOTS:
        for path in sorted(pathlib.Path(root).rglob("*.rs")):
            if is_test_file(path):
                continue
            rel = path.as_posix()
            for number, line in library_lines(path):
                for kind in NAME.findall(line):
                    if kind not in kinds or kind in EXEMPT:
                        continue
                    own_row = rel.startswith(REGISTRY + "/")
                    if rel == BUILDER or own_row or (rel, kind) in USERS:
                        continue
                    failures.append(f"{rel}:{number}: names SamplerKind::{kind}")
    for f in failures:
        print(f)
    if failures:
        print(
            "sampler-files: knowledge of one sampler outside its registry row and the "
            "chain builder (docs/ARCHITECTURE.md, 'Adding a sampler'); move it to the row"
        )
        return 1
    print(f"sampler-files: {len(kinds) - len(EXEMPT)} samplers named only in their rows and the chain builder")
    return 0


if __name__ == "__main__":
    sys.exit(main())
