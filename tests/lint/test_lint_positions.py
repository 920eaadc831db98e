"""Findings point at the offending token: for each corpus line written as `path:line:col CODE`,
the finding is at that exact column (test_lint_corpus.py checks path, line and code)."""

from __future__ import annotations

import pytest

from helmbench.lint import lint_tree
from lint_corpus import build, case_names, expected_located

PINNED = [name for name in case_names() if any(col for _, _, col, _ in expected_located(name))]


def test_some_cases_pin_columns():
    assert len(PINNED) >= 8


@pytest.mark.parametrize("name", PINNED)
def test_finding_is_at_the_expected_column(name, tmp_path):
    _, diags = lint_tree(build(name, tmp_path / name))
    got = {(d.path, d.line, d.code): d.col for d in diags}
    for path, line, col, code in expected_located(name):
        if col is not None:
            assert got.get((path, line, code)) == col, [d for d in diags if d.path == path]


def test_severity_on_a_condition_spans_the_key(tmp_path):
    """HB206 underlines the `severity` key itself (as HB201 does an unknown key), not an empty
    point at the start of its line."""
    _, diags = lint_tree(build("severity-on-condition", tmp_path / "t"))
    (d,) = [d for d in diags if d.code == "HB206"]
    assert (d.line, d.col, *d.end) == (2, 1, 2, 1 + len("severity"))
