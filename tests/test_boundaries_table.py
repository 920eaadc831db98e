"""ARCHITECTURE.md's table of trust boundaries names, for each, the test that attacks it: each named test exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _named_tests(table: str) -> list[tuple[str, str | None]]:
    """(test file, test function or None) for each `tests/...` or `::test_...` in the table, a bare `::name`
    belonging to the last file named before it in the same cell."""
    out = []
    for row in table.splitlines():
        for cell in row.split(" | "):
            current = None
            for ref in re.findall(r"`([^`]+)`", cell):
                path, _, name = ref.partition("::")
                if path.startswith("tests/"):
                    current = path
                elif path or not name:
                    continue
                if current is not None:
                    out.append((current, name or None))
    return out


def test_every_test_the_boundaries_table_names_exists():
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    table = text.split("## Trust boundaries", 1)[1].split("\n## ", 1)[0]
    named = _named_tests(table)
    assert len({path for path, _ in named}) >= 15
    missing = []
    for path, name in named:
        file = REPO / path
        if not file.is_file():
            missing.append(path)
        elif name is not None:
            functions = {n.name for n in ast.walk(ast.parse(file.read_text(encoding="utf-8")))
                         if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            if name not in functions:
                missing.append(f"{path}::{name}")
    assert missing == []


def test_a_missing_test_is_found():
    assert _named_tests("| a | `tests/x.py::test_y`, `::test_z` | `store/merge.py` |") == [
        ("tests/x.py", "test_y"), ("tests/x.py", "test_z")]
