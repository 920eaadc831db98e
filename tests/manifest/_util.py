"""Paths and helpers shared by the manifest tests (fixtures live in conftest.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.inprocess import helmbench

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
GOLDEN_TREE = GOLDEN / "tree"
EXPECTED = GOLDEN / "expected.jsonl"
UPSTREAM = REPO.parent / "shared" / "fixtures" / "upstream-sample"
SHIPPED = REPO / "benchmark"


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """`helmbench ARGS` as a user would run it, answered like subprocess.run (in this process: see
    tests/inprocess.py; tests/benchmark and tests/packaged run the real entry point)."""
    full_env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", **(env or {})}
    return helmbench(*args, cwd=cwd or REPO, env=full_env)


def read_lines(path: Path) -> list[dict]:
    """Every line of a manifest as JSON (header first), without verification."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def cases_by_id(path: Path) -> dict[str, dict]:
    return {c["id"]: c for c in read_lines(path)[1:]}
