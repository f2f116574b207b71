#!/usr/bin/env python3
"""Import loops between the files of a crate, and imports against the core's
layers (issue 24: "no import loop and no upward import in core").

usage: scripts/import-cycles.py SRC_DIR [SRC_DIR ...]   (e.g. core/src host/src)

For a directory named core/src, every edge must also go from a layer to one
it may use, as the table "Layers inside the core" of docs/ARCHITECTURE.md
says (`CORE_LAYERS` below; a top-level module in no layer is an error too,
so a new module must be placed in a layer here and there).

Each file is a module (a/b.rs and a/b/mod.rs are `a::b`, lib.rs is the
root). Every `use crate::…`, `use super::…` and `use self::…` outside the
file's `#[cfg(test)] mod tests` becomes an edge from the file to the file
that defines the imported item: a path through a parent's `pub use` is
followed to the child that defines the item, so a module importing its
sibling through the parent's re-export is an edge to the sibling, not to
the parent. A file importing from its own ancestors (their items) is not
an edge. Prints every cycle and exits with 1 if there is one.

Checked by hand against the two loops issue 24 named: lbfgs/factors.rs <->
lbfgs/memory.rs (core) and targets/logreg/load.rs <-> model.rs (host), and
found a third, draws.rs <-> run/ (host); all three are gone.
"""
import os
import re
import sys


def expand(tree):
    """`a::{b, c::{d, self}}` -> ['a::b', 'a::c::d', 'a::c']."""
    tree = re.sub(r"\s+", "", tree)
    i = tree.find("{")
    if i < 0:
        return [tree]
    prefix, inner = tree[:i], tree[i + 1 : tree.rfind("}")]
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(inner):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(inner[start:k])
            start = k + 1
    parts.append(inner[start:])
    out = []
    for part in filter(None, parts):
        for leaf in expand(part):
            out.append(prefix[:-2] if leaf == "self" else prefix + leaf)
    return out


def modules(root):
    files = {}
    for directory, _, names in os.walk(root):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(directory, name)
                parts = os.path.relpath(path, root)[:-3].split(os.sep)
                if parts[-1] in ("mod", "lib", "main"):
                    parts = parts[:-1]
                files[tuple(parts)] = path
    return files


def uses(path):
    source = open(path, encoding="utf-8").read()
    cut = re.search(r"#\[cfg\(test\)\]\s*(pub(\(\w+\))?\s+)?mod \w+\s*\{", source)
    if cut:
        source = source[: cut.start()]
    for m in re.finditer(r"^\s*(pub(?:\([\w:]+\))?\s+)?use\s+([^;]+);", source, re.M):
        for leaf in expand(m.group(2)):
            leaf = re.sub(r"\s+as\s+\w+$", "", leaf)
            yield bool(m.group(1)), leaf.split("::")


def absolute(module, segments, files):
    if tuple(module) + (segments[0],) in files:  # a child module, 2018 style
        return list(module) + list(segments)
    if segments[0] == "crate":
        return list(segments[1:])
    if segments[0] in ("super", "self"):
        base = list(module)
        while segments and segments[0] in ("super", "self"):
            if segments[0] == "super":
                base = base[:-1]
            segments = segments[1:]
        return base + list(segments)
    return None  # an external crate


# layer: (its top-level modules, the layers it may use). The crate root
# (lib.rs) may use every layer.
CORE_LAYERS = {
    "scalars": (("real", "scalar", "random"), ()),
    "in-place construction": (("in_place", "saved_state"), ()),
    "kernels": (("kernels",), ("scalars",)),
    "model interface": (("target", "stats", "error", "test_targets"), ("scalars",)),
    "automatic differentiation": (("autodiff",), ("scalars", "model interface")),
    "L-BFGS engine": (("lbfgs",), ("scalars", "kernels", "model interface")),
    "metrics": (("metric",), ("scalars", "kernels", "model interface", "L-BFGS engine")),
    "integrator": (("integrator",), ("scalars", "kernels", "model interface", "metrics")),
    "samplers": (
        ("samplers",),
        ("scalars", "in-place construction", "kernels", "model interface", "L-BFGS engine",
         "metrics", "integrator"),
    ),
    "adaptation": (
        ("adaptation",),
        ("scalars", "in-place construction", "kernels", "model interface", "L-BFGS engine",
         "metrics", "integrator", "samplers"),
    ),
}


def layer_of(module):
    if not module:
        return "crate root"
    for name, (tops, _) in CORE_LAYERS.items():
        if module[0] in tops:
            return name
    return None


def layer_violations(files, edges):
    """Edges of the core that go to a layer their layer may not use."""
    found = []
    for module in sorted(files):
        here = layer_of(module)
        if here is None:
            found.append(f"{files[module]}: in no layer of CORE_LAYERS")
            continue
        for to in sorted(edges.get(module, ())):
            there = layer_of(to)
            if here == "crate root" or there in (here, None):
                continue
            if there not in CORE_LAYERS[here][1]:
                found.append(f"{files[module]} ({here}) imports {files[to]} ({there})")
    return found


def check(root):
    files = modules(root)
    imports = {
        m: [(public, absolute(m, s, files)) for public, s in uses(p)] for m, p in files.items()
    }

    def defining(path, depth=0):
        """The module (file) that defines the item at `path`."""
        for k in range(len(path), -1, -1):
            module = tuple(path[:k])
            if module in files:
                rest = path[k:]
                if not rest or depth > 10:
                    return module
                for public, target in imports[module]:
                    if public and target and target[-1] == rest[0] and target != path:
                        return defining(target + list(rest[1:]), depth + 1)
                return module
        return None

    edges = {}
    for module, items in imports.items():
        for _, target in items:
            if target is None:
                continue
            to = defining(target)
            if to is None or to == module or module[: len(to)] == to:
                continue
            edges.setdefault(module, set()).add(to)

    cycles, seen = [], set()

    def walk(start, node, path):
        for nxt in sorted(edges.get(node, ())):
            if nxt == start:
                key = frozenset(path)
                if key not in seen:
                    seen.add(key)
                    cycles.append(path)
            elif nxt not in path and len(path) < 8:
                walk(start, nxt, path + [nxt])

    for module in sorted(files):
        walk(module, module, [module])
    layered = os.path.normpath(root).endswith(os.path.join("core", "src"))
    violations = layer_violations(files, edges) if layered else []
    return [[files[m] for m in cycle] for cycle in cycles], violations


def main():
    found, against_layers = [], []
    for root in sys.argv[1:]:
        cycles, violations = check(root)
        found += cycles
        against_layers += violations
    for cycle in found:
        print("import loop: " + " -> ".join(cycle + cycle[:1]))
    for violation in against_layers:
        print("against the layers: " + violation)
    print(f"{len(found)} import loop(s) in {', '.join(sys.argv[1:])}")
    print(f"{len(against_layers)} import(s) against the core's layers")
    return 1 if found or against_layers else 0


if __name__ == "__main__":
    sys.exit(main())
