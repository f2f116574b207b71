#!/usr/bin/env bash
# Installs the pinned Python packages of the nutpie comparison into the current
# python3's environment (a virtualenv if one is active). Idempotent: pip leaves
# packages that already match the pins alone. Prints the versions in use.
set -euo pipefail
PY=${PYTHON:-python3}
NUTPIE_VERSION=0.16.8
PYMC_VERSION=5.28.5
ARVIZ_VERSION=0.23.4
"$PY" -m pip install --disable-pip-version-check --quiet \
    "nutpie==${NUTPIE_VERSION}" "pymc==${PYMC_VERSION}" "arviz==${ARVIZ_VERSION}"
"$PY" - <<'PY'
import importlib.metadata as md
for name in ("nutpie", "pymc", "pytensor", "arviz", "numpy", "scipy", "pandas"):
    try:
        print(f"{name} {md.version(name)}")
    except md.PackageNotFoundError:
        print(f"{name} NOT INSTALLED")
PY
