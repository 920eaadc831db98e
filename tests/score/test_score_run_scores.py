"""The Datasette snapshot's `run_scores` and canned leaderboard come from the scorer itself.

Over a real run database (tests.score.stats_pipeline: the shipped benchmark with its safety
floors, run through litellm against the fake OpenRouter) with a capped model, format failures,
a partial run and a model run twice: every run in the snapshot, not only the latest ones.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from helmbench.publish import datasette  # noqa: E402
from helmbench.score.leaderboard import build_leaderboard, leaderboard_row, manifest_floors  # noqa: E402
from helmbench.store import open_readonly, queries  # noqa: E402


@pytest.fixture(scope="module")
def floored(stats_floored):
    """The session's floored statistics pipeline (tests/conftest.py), read only."""
    return stats_floored


def _canned(snap: Path) -> dict[int, sqlite3.Row]:
    conn = sqlite3.connect(snap)
    conn.row_factory = sqlite3.Row
    try:
        return {r["run_id"]: r for r in conn.execute(datasette.QUERIES["leaderboard"]["sql"])}
    finally:
        conn.close()


def test_every_run_in_the_snapshot_has_the_scorers_numbers(floored, tmp_path):
    snap = datasette.snapshot(floored.db, tmp_path / "snap")
    canned = _canned(snap)
    conn = open_readonly(floored.db)
    try:
        runs = queries.all_runs(conn)
        assert len(runs) >= 5 and set(canned) == {r.id for r in runs}  # the second GOOD run and the partial one too
        capped = 0
        for run in runs:
            n_cases = queries.manifest_meta(conn, run.manifest_hash)[2]
            row = leaderboard_row(conn, run, n_cases, bootstrap=0, floors=manifest_floors(conn, run.manifest_hash))
            got = canned[run.id]
            assert got["weighted_score"] == pytest.approx(row.score, abs=5e-5), run
            assert got["uncapped_score"] == pytest.approx(row.uncapped_score, abs=5e-5), run
            assert got["below_floor"] == (row.floor_note or None)
            assert got["n_format_failures"] == row.n_format_failures
            assert got["pass_rate"] == pytest.approx(row.pass_rate, abs=5e-5)
            capped += row.capped
    finally:
        conn.close()
    assert capped, "a floor must bite for this test to check the capped score"
    board = build_leaderboard(floored.db, bootstrap=0)
    assert any(r.n_format_failures for r in board.rows)
    for row in board.rows:  # and the site's leaderboard rows are among them, equal
        assert canned[row.run.id]["weighted_score"] == pytest.approx(row.score, abs=5e-5)


def test_the_canned_query_no_longer_spells_the_formula():
    sql = datasette.QUERIES["leaderboard"]["sql"]
    assert "run_scores" in sql and "difficulty" not in sql and "max_cost" not in sql
