"""Load a tree and run every registered rule over it (built-in and plugins' rules alike)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from helmbench.diagnostics import Collector, Diagnostic
from helmbench.lint.rulebook import run_rules
from helmbench.spec import Benchmark, load_benchmark


def lint_tree(root: str | Path, *, as_of: date | None = None) -> tuple[Benchmark, list[Diagnostic]]:
    """`as_of`: the day findings that age (a registry entry checked too long ago) are judged by; default today."""
    bench, out = load_benchmark(root)
    bench.as_of = as_of or date.today()
    out.extend(run_rules(bench))
    return bench, out.sorted()
