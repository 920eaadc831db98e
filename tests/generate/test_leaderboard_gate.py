"""Unreviewed cases never reach the leaderboard: a run of a manifest that includes them is a
preview (kept apart, never ranked), run for real against the fake OpenRouter."""

from __future__ import annotations

import sqlite3

from rich.console import Console

from helmbench.run.config import RetryPolicy, RunOptions
from helmbench.run.session import run
from helmbench.score.leaderboard import build_leaderboard
from tests.generate.conftest import cli


def _run(tree, out, db):
    opts = RunOptions(manifest=str(out / "manifest.jsonl"), models_file=str(tree / "models.yml"), db=str(db),
                      logs_dir=str(out / "logs"), retry=RetryPolicy(base_delay=0.01, max_delay=0.05, max_attempts=3))
    return run(opts, Console(stderr=True, width=160), live=False)


def test_a_run_with_unreviewed_cases_is_a_preview_and_never_ranked(tree, env, tmp_path):
    assert cli("generate", "noise", "P1-B1-S1-PT1", tree, "--transform", "typo").exit_code == 0
    db = tmp_path / "results.db"
    tried = tmp_path / "tried"
    assert cli("compile", tree, "--out", tried, "--include-unreviewed").exit_code == 0
    report = _run(tree, tried, db)
    assert report.status == "completed", report.status
    conn = sqlite3.connect(db)
    statuses = {row[0] for row in conn.execute("SELECT status FROM runs")}
    assert statuses == {"preview"}
    assert conn.execute("SELECT count(*) FROM results").fetchone()[0] > 0  # it did run: results kept apart
    board = build_leaderboard(db, bootstrap=0)
    assert board.rows == [] or all(r.rank is None for r in board.rows)
    assert board.manifest_hash is None
    listed = cli("costs", "--db", db, "--manifest", tried / "manifest.jsonl", "--models-file", tree / "models.yml")
    assert listed.exit_code == 0 and listed.output.count("preview") >= 2, listed.output  # listed apart: one per model
    # the reviewed manifest (the default compile) is ranked, and holds none of the unreviewed cases
    reviewed = tmp_path / "reviewed"
    assert cli("compile", tree, "--out", reviewed).exit_code == 0
    assert _run(tree, reviewed, db).status == "completed"
    board = build_leaderboard(db, bootstrap=0)
    assert len(board.rows) == 2 and all(r.rank is not None for r in board.rows)
    ranked = {r[0] for r in conn.execute(
        "SELECT c.id FROM results res JOIN runs ON runs.id = res.run_id JOIN cases c ON c.hash = res.case_hash "
        "WHERE runs.status != 'preview'")}
    assert ranked and not any(case.endswith("-PT3") for case in ranked)  # PT3: the typo variant
    # and the answers the preview paid for were reused, not paid again
    assert env.stats()["total"] == len({k for k, n in env.stats()["by_key"].items()})
