"""Load a tree and run every registered rule over it (built-in and plugins' rules alike)."""

from __future__ import annotations

from pathlib import Path

from helmbench.diagnostics import Collector, Diagnostic
from helmbench.lint.registry import run_rules
from helmbench.spec import Benchmark, load_benchmark


def lint_tree(root: str | Path) -> tuple[Benchmark, list[Diagnostic]]:
    bench, out = load_benchmark(root)
    out.extend(run_rules(bench))
    return bench, out.sorted()
