"""Shared pieces: CmdStan CSV reading and writing, the qnmc binary, and the
parsing of `qnmc check`'s table."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_QNMC = REPO / "target" / "release" / "qnmc"
DEFAULT_SHARED_DATA = os.environ.get("QNMC_SHARED_DATA", "/work/shared/data")


def qnmc_binary(path: str | None) -> str:
    """The qnmc binary to use; a clear error when it is missing."""
    p = Path(path) if path else DEFAULT_QNMC
    if not p.is_file() or not os.access(p, os.X_OK):
        raise SystemExit(
            f"error: qnmc binary {p} not found or not executable "
            "(build it with `cargo build --release` at the repository root, or pass --qnmc PATH)")
    return str(p)


# ---------------------------------------------------------------- CSV

@dataclass
class CmdStanCsv:
    comments: list[str]
    columns: list[str]
    values: np.ndarray  # (rows, columns)

    def column(self, name: str) -> np.ndarray:
        return self.values[:, self.columns.index(name)]

    def quantity_columns(self) -> list[str]:
        return [c for c in self.columns if not c.endswith("__")]


def read_cmdstan_csv(path: str | Path) -> CmdStanCsv:
    comments, columns, rows = [], None, []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                comments.append(line[1:])
            elif not line.strip():
                continue
            elif columns is None:
                columns = line.split(",")
            else:
                rows.append([float(v) for v in line.split(",")])
    if columns is None:
        raise ValueError(f"{path}: no header line")
    return CmdStanCsv(comments, columns, np.array(rows, dtype=float).reshape(len(rows), len(columns)))


def write_cmdstan_csv(path: Path, *, model: str, chain_id: int, seed: int, num_warmup: int,
                      num_samples: int, num_chains: int, extra_comments: dict[str, str],
                      sampler_columns: dict[str, np.ndarray], quantity_names: list[str],
                      quantities: np.ndarray, warmup_seconds: float, sampling_seconds: float) -> None:
    """One chain as a CmdStan CSV file: the comment keys qnmc's reader uses
    (`model`, `algorithm`, `id`, `seed`, `num_warmup`), the header, one line
    per kept draw (repr: shortest text that reads back to the same float), and
    the Elapsed Time trailer."""
    lines = [
        f"# model = {model}",
        "# method = sample (Default)",
        "#   sample",
        f"#     num_samples = {num_samples}",
        f"#     num_warmup = {num_warmup}",
        "#     save_warmup = false",
        "#     thin = 1",
        "#     algorithm = nuts",
        f"#     num_chains = {num_chains}",
        f"# id = {chain_id}",
        "# random",
        f"#   seed = {seed}",
        "# nutpie",
    ]
    lines += [f"#   {k} = {v}" for k, v in extra_comments.items()]
    header = list(sampler_columns) + quantity_names
    lines.append(",".join(header))
    stats = np.column_stack([np.asarray(v, dtype=float) for v in sampler_columns.values()])
    body = np.column_stack([stats, quantities])
    for row in body:
        lines.append(",".join(_num(v) for v in row))
    lines += [
        "# ",
        f"#  Elapsed Time: {warmup_seconds:.3f} seconds (Warm-up)",
        f"#                {sampling_seconds:.3f} seconds (Sampling)",
        f"#                {warmup_seconds + sampling_seconds:.3f} seconds (Total)",
        "# ",
    ]
    path.write_text("\n".join(lines) + "\n")


def _num(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(float(v))


# ---------------------------------------------------------------- check

ROW = re.compile(r"^\|\s*([^|]+?)\s*\|(.*)\|\s*$")


@dataclass
class CheckResult:
    exit_code: int
    passed: bool
    max_rhat: float
    min_ess_bulk: float
    worst_quantity: str
    rows: int
    output: str
    max_abs_z: float = float("nan")
    z_threshold: float = float("nan")

    def fail_reasons(self) -> list[str]:
        """Why the check failed, from its table: `rhat` (max R-hat >= 1.05),
        `z` (a |z| at or above the Bonferroni threshold), `undefined` (an R-hat
        or ESS qnmc could not compute: a chain constant in a quantity),
        `error` (exit code other than 0 or 1)."""
        reasons = []
        if self.exit_code not in (0, 1):
            reasons.append("error")
        if math.isinf(self.max_rhat) or math.isnan(self.min_ess_bulk):
            reasons.append("undefined")
        elif self.max_rhat >= 1.05:
            reasons.append("rhat")
        if self.max_abs_z >= self.z_threshold:
            reasons.append("z")
        return reasons


def parse_check(stdout: str, exit_code: int) -> CheckResult:
    """Max R-hat and min bulk ESS over the quantities of `qnmc check`'s table
    (columns: quantity, mean, ref mean, z mean, sd, ref sd, z sd, R-hat,
    ESS bulk, verdict). exit 0 = pass, 1 = fail; anything else is an error
    and counts as a failure with NaN numbers."""
    header = None
    rhats, esses, zs = [], [], []
    threshold = float("nan")
    m = re.search(r"every \|z\| < ([0-9.]+)", stdout)
    if m:
        threshold = float(m.group(1))
    worst = ""
    for line in stdout.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if set("".join(cells)) <= set("-: "):
            continue
        try:
            rhat = float(cells[header.index("R-hat")])
            ess = float(cells[header.index("ESS bulk")])
        except (ValueError, IndexError):
            continue
        for col in ("z mean", "z sd"):
            if col in header:
                try:
                    zs.append(abs(float(cells[header.index(col)])))
                except ValueError:
                    zs.append(float("inf"))
        rhats.append(rhat)
        if not esses or math.isnan(ess) or ess < min(esses):
            worst = cells[0]
        esses.append(ess)
    return CheckResult(
        exit_code=exit_code,
        passed=exit_code == 0,
        # A quantity whose R-hat or ESS is undefined (a chain constant in it)
        # makes the run's numbers undefined too: inf and NaN, never a
        # finite value from the other quantities.
        max_rhat=(float("inf") if any(not math.isfinite(r) for r in rhats) else max(rhats)) if rhats else float("nan"),
        min_ess_bulk=(float("nan") if any(math.isnan(e) for e in esses) else min(esses)) if esses else float("nan"),
        worst_quantity=worst,
        rows=len(rhats),
        output=stdout,
        max_abs_z=max(zs) if zs else float("nan"),
        z_threshold=threshold,
    )


def run_check(qnmc: str, target_args: list[str], extra: list[str], log_path: Path) -> CheckResult:
    """Runs `qnmc check` with the given arguments, saves stdout+stderr."""
    cmd = [qnmc, "check", *target_args, "--quiet", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    log_path.write_text("$ " + " ".join(cmd) + "\n" + proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    if proc.returncode not in (0, 1):
        print(f"warning: `{' '.join(cmd)}` exited {proc.returncode}: {proc.stderr.strip()[:500]}")
    return parse_check(proc.stdout, proc.returncode)


def append_jsonl(path: Path, record: dict) -> None:
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


def parse_seeds(text: str) -> list[int]:
    """`1..10`, `1,2,5` or `3`."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if ".." in part:
            a, b = part.split("..")
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out
