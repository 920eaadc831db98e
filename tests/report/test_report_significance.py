"""`helmbench report`, the site and the simulation harness compute the tests and intervals with the same
functions (issue 24): one implementation, so the harness's table measures what a reader sees."""

from __future__ import annotations

from collections import Counter

import pytest
from typer.testing import CliRunner

from helmbench.cli import app
from helmbench.score import inference, pairwise

SHARED = ("flip_pvalues", "score_intervals", "difference_intervals")


@pytest.fixture
def calls(monkeypatch):
    """Counts the calls of the shared functions (the real ones still run)."""
    counted: Counter = Counter()

    def spy(name, real):
        def wrapper(*args, **kwargs):
            counted[name] += 1
            return real(*args, **kwargs)
        return wrapper

    for name in SHARED:
        monkeypatch.setattr(inference, name, spy(name, getattr(inference, name)))
    monkeypatch.setattr(pairwise, "holm_decisions", spy("holm_decisions", pairwise.holm_decisions))
    return counted


def test_report_site_and_harness_call_the_same_functions(stats_plain, calls):
    result = CliRunner().invoke(app, ["report", "--db", str(stats_plain.db), "--manifest", str(stats_plain.manifest),
                                      "--bootstrap", "200", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert all(calls[name] for name in (*SHARED, "holm_decisions")), calls
    calls.clear()

    from helmbench.publish.reader import load
    from helmbench.publish.settings import PublishSettings

    data = load(PublishSettings(db=stats_plain.db, manifest=stats_plain.manifest, datasette_url="http://x"), cache=None)
    assert data.leaderboard.comparisons
    assert all(calls[name] for name in (*SHARED, "holm_decisions")), calls
    calls.clear()

    from benchmarks import significance
    assert significance.inference is inference and significance.pairwise is pairwise  # no copy of its own
    significance.configuration(10, 3, False, 20, seed=1)
    assert all(calls[name] for name in (*SHARED, "holm_decisions")), calls
