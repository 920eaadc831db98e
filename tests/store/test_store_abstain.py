"""Migration 14 on a database of an earlier release (the ledger test's fixture, commit 794e7ac): every result and
checkpoint row kept with its id, foreign keys intact, and the new verdicts accepted."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "results-794e7ac.sql"


def _rows(path: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_migration_14_keeps_every_row_and_accepts_abstentions(tmp_path):
    from helmbench.store import open_db

    path = tmp_path / "results.db"
    conn = sqlite3.connect(path)
    conn.executescript(FIXTURE.read_text(encoding="utf-8"))
    conn.close()
    results = _rows(path, "SELECT id, run_id, case_hash, sample, verdict, score, reason FROM results ORDER BY id")
    checkpoints = _rows(path, "SELECT * FROM checkpoint_verdicts ORDER BY result_id, checkpoint")
    assert results and checkpoints
    db = open_db(path)
    try:
        assert 14 in {v for (v,) in db.execute("SELECT version FROM migrations")}
        assert [tuple(r) for r in db.execute("SELECT id, run_id, case_hash, sample, verdict, score, reason "
                                             "FROM results ORDER BY id")] == results
        assert [tuple(r) for r in db.execute("SELECT * FROM checkpoint_verdicts "
                                             "ORDER BY result_id, checkpoint")] == checkpoints
        assert not db.execute("PRAGMA foreign_key_check").fetchall()
        first = results[0][0]
        with db.conn:
            db.execute("UPDATE results SET verdict = 'ABSTAIN', score = NULL WHERE id = ?", [first])
            db.execute("UPDATE checkpoint_verdicts SET verdict = 'NOT_APPLICABLE' WHERE rowid = 1")
        with pytest.raises(sqlite3.IntegrityError):
            db.execute("UPDATE results SET verdict = 'MAYBE' WHERE id = ?", [first])
        assert {r[1] for r in db.execute("PRAGMA table_info(runs)")} >= {"n_abstained"}
    finally:
        db.conn.close()
