#!/usr/bin/env python3
"""Compile a Stan model into a shared library that `qnmc run --model` loads,
without BridgeStan and without the internet.

    python3 stan/build-model.py path/to/model.stan [-o path/to/libmodel_model.so]

It needs the `httpstan` wheel from PyPI (`pip install httpstan==4.13.0`),
which ships the `stanc` compiler and the Stan, Eigen, Boost, TBB and Sundials
headers, and the system's g++. stanc translates the model to C++; g++ compiles
that together with `qnmc_stan_glue.cpp` (the C functions of BridgeStan's API
that qnmc calls). One model takes about 25 s and 1.7 GB of memory.

The library is written beside the `.stan` file as `<name>_model.so` unless
`-o` says otherwise, and rebuilt only when the model, the glue or this script
changed (pass --force to rebuild anyway). With BridgeStan installed, its own
`make path/to/model_model.so` makes a library that qnmc loads the same way.
"""

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
GLUE = HERE / "qnmc_stan_glue.cpp"
HTTPSTAN_VERSION = "4.13.0"

CXXFLAGS = [
    "-std=c++17",
    "-O2",
    "-fPIC",
    "-shared",
    "-DBOOST_DISABLE_ASSERTS",
    "-D_REENTRANT",
    "-DSTAN_THREADS",
    "-DBOOST_PHOENIX_NO_VARIADIC_EXPRESSION",
    "-Wno-deprecated-declarations",
    "-Wno-ignored-attributes",
    "-Wno-sign-compare",
]


def fail(message):
    print(f"build-model: {message}", file=sys.stderr)
    sys.exit(2)


def httpstan_root():
    try:
        import httpstan  # noqa: F401  (only its folder is used)
    except ImportError:
        fail(
            "the Python package httpstan is not installed; it ships stanc and "
            f"the Stan headers: pip install httpstan=={HTTPSTAN_VERSION}"
        )
    root = Path(httpstan.__file__).resolve().parent
    for needed in ("stanc", "include/stan", "lib"):
        if not (root / needed).exists():
            fail(f"{root} has no {needed}: is httpstan {HTTPSTAN_VERSION} installed?")
    return root


def model_name(stan_file):
    """The C++ model name: the file's stem with characters stanc would
    reject replaced, plus `_model` (BridgeStan's convention)."""
    stem = re.sub(r"[^A-Za-z0-9_]", "_", stan_file.stem)
    if not stem or stem[0].isdigit():
        stem = "m_" + stem
    return stem + "_model"


def fingerprint(stan_file, root):
    digest = hashlib.sha256()
    for part in (stan_file.read_bytes(), GLUE.read_bytes(),
                 Path(__file__).read_bytes(), str(root).encode()):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stan_file", type=Path, help="the model, a .stan file")
    parser.add_argument("-o", "--output", type=Path,
                        help="the library to write (default: beside the model, NAME_model.so)")
    parser.add_argument("--force", action="store_true", help="rebuild even when up to date")
    parser.add_argument("--cxx", default=os.environ.get("CXX", "g++"),
                        help="the C++ compiler (default: $CXX, else g++)")
    args = parser.parse_args()

    stan_file = args.stan_file.resolve()
    if not stan_file.is_file():
        fail(f"{args.stan_file}: no such file")
    name = model_name(stan_file)
    output = (args.output or stan_file.with_name(name + ".so")).resolve()
    root = httpstan_root()
    stamp = output.with_name(output.name + ".sha256")
    print_ = fingerprint(stan_file, root)
    if not args.force and output.is_file() and stamp.is_file() \
            and stamp.read_text().strip() == print_:
        print(f"build-model: {output} is up to date")
        return
    if shutil.which(args.cxx) is None:
        fail(f"no C++ compiler `{args.cxx}` (set CXX or install g++)")

    with tempfile.TemporaryDirectory(prefix="qnmc-stan-") as tmp:
        hpp = Path(tmp) / (name + ".hpp")
        stanc = [str(root / "stanc"), "--name", name, "--o", str(hpp), str(stan_file)]
        result = subprocess.run(stanc, capture_output=True, text=True)
        if result.returncode != 0:
            fail(f"stanc rejected {args.stan_file}:\n{result.stderr}{result.stdout}")
        partial = output.with_name(output.name + ".partial")
        compile_ = [
            args.cxx, *CXXFLAGS,
            f'-DQNMC_STAN_MODEL_HPP="{hpp}"',
            "-I", str(root / "include"),
            str(GLUE), "-o", str(partial),
            # Sundials (static, position-independent) serves the ODE and
            # algebraic solvers; a model that uses none links nothing from it.
            "-L", str(root / "lib"), "-lsundials_cvodes", "-lsundials_idas",
            "-lsundials_kinsol", "-lsundials_nvecserial", "-ltbb",
            f"-Wl,-rpath,{root / 'lib'}", "-Wl,--no-undefined",
        ]
        print(f"build-model: compiling {args.stan_file} -> {output} (about 25 s)", flush=True)
        result = subprocess.run(compile_, capture_output=True, text=True)
        if result.returncode != 0:
            partial.unlink(missing_ok=True)
            fail(f"the C++ compiler failed on {args.stan_file}:\n{result.stderr[-4000:]}")
        # Written under another name and moved, so a library that exists is complete.
        os.replace(partial, output)
        stamp.write_text(print_ + "\n")
    print(f"build-model: wrote {output}")


if __name__ == "__main__":
    main()
