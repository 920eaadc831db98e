"""The broken-tree corpus: a valid base tree plus one defect per case, all on disk.

tests/lint/base/ is a small valid benchmark (lints clean with --strict).
tests/lint/broken/<case>/ holds the defect:
  tree/         files copied over the base (added or replaced)
  remove.txt    paths (relative to the tree root) deleted from the base, one per line
  expected.txt  `# what is wrong`, then every expected finding as `path:line CODE`, or as
                `path:line:col CODE` to pin the column too (checked by test_lint_positions.py)
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.inprocess import helmbench

HERE = Path(__file__).resolve().parent
BASE = HERE / "base"
BROKEN = HERE / "broken"
REPO = HERE.parents[1]
UPSTREAM = REPO.parent / "shared" / "fixtures" / "upstream-sample"

TEXT_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>HB\d{3})(?P<warn> \(warning\))? (?P<msg>.+)$")


def case_names() -> list[str]:
    return sorted(p.name for p in BROKEN.iterdir() if (p / "expected.txt").is_file())


_WHERE = re.compile(r"^(?P<path>.+?):(?P<line>\d+)(?::(?P<col>\d+))?$")


def expected_located(name: str) -> set[tuple[str, int, int | None, str]]:
    """Every expected finding as (path, line, col, code); col is None when not given."""
    found = set()
    for raw in (BROKEN / name / "expected.txt").read_text(encoding="utf-8").splitlines():
        raw = raw.strip()
        if not raw or raw.startswith("#"):
            continue
        where, code = raw.rsplit(" ", 1)
        m = _WHERE.match(where)
        found.add((m["path"], int(m["line"]), int(m["col"]) if m["col"] else None, code))
    return found


def expected(name: str) -> set[tuple[str, int, str]]:
    """Every expected finding as (path, line, code); `path:line:col CODE` lines also allowed."""
    return {(path, line, code) for path, line, _, code in expected_located(name)}


def build(name: str, dest: Path) -> Path:
    """Materialise case `name` (base + overlay - removals) at `dest`."""
    shutil.copytree(BASE, dest)
    case = BROKEN / name
    if (case / "remove.txt").is_file():
        for rel in (case / "remove.txt").read_text(encoding="utf-8").split():
            target = dest / rel
            shutil.rmtree(target) if target.is_dir() else target.unlink()
    if (case / "tree").is_dir():
        shutil.copytree(case / "tree", dest, dirs_exist_ok=True)
    return dest


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`helmbench ...` answered like subprocess.run, in this process (tests/inprocess.py)."""
    return helmbench(*args, cwd=cwd)


def run_subprocess(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`helmbench ...` as a real subprocess, the way CI and pre-commit call it."""
    return subprocess.run([sys.executable, "-m", "helmbench", *map(str, args)],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


def parse_text(stdout: str) -> list[re.Match]:
    return [m for line in stdout.splitlines() if (m := TEXT_LINE.match(line))]
