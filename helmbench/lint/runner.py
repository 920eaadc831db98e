"""Load a tree and run every registered rule over it."""

from __future__ import annotations

from pathlib import Path

from helmbench.diagnostics import Collector, Diagnostic
from helmbench.lint import rules as _rules  # noqa: F401  (registers rules)
from helmbench.lint.registry import RULES
from helmbench.spec import Benchmark, load_benchmark


def lint_tree(root: str | Path) -> tuple[Benchmark, list[Diagnostic]]:
    bench, out = load_benchmark(root)
    for r in RULES:
        found = Collector()
        r.fn(bench, found)
        out.extend(found)
    return bench, out.sorted()
