"""A consistent copy of results.db (`VACUUM INTO`), for serving while a run may be writing the original."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from helmbench.errors import explain
from helmbench.store.db import open_readonly


def vacuum_into(src: Path | str, dest: Path | str) -> Path:
    """Write a compact, consistent copy of `src` at `dest` (replaced if present).

    The source is opened (and checked) read-only first, so a corrupt file is refused before
    anything is written; a failure while writing (a full disk) names the copy's folder, not the
    source, and leaves no half-written copy behind.
    """
    dest = Path(dest)
    conn = open_readonly(src)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            dest.unlink()
        conn.execute("VACUUM INTO ?", [str(dest)])
    except sqlite3.Error as exc:
        dest.unlink(missing_ok=True)
        raise explain(exc, db=dest.parent) from None
    finally:
        conn.close()
    return dest


#: The one table a snapshot has that results.db has not: every run's scores, computed by the
#: scorer (helmbench.score) when the snapshot is taken, so Datasette's canned leaderboard shows
#: the scorer's numbers instead of a second spelling of the formula in SQL.
RUN_SCORES_DDL = """CREATE TABLE run_scores (
  run_id INTEGER PRIMARY KEY REFERENCES runs(id),
  weighted_score REAL,
  uncapped_score REAL,
  below_floor TEXT,
  pass_rate REAL,
  coverage REAL,
  n_format_failures INTEGER NOT NULL
)"""
RUN_SCORE_COLUMNS = ("run_id", "weighted_score", "uncapped_score", "below_floor", "pass_rate", "coverage",
                     "n_format_failures")


def write_run_scores(snapshot: Path | str, rows: list[dict]) -> None:
    """Add `run_scores` to a snapshot written by `vacuum_into` (never to results.db itself)."""
    conn = sqlite3.connect(str(snapshot))
    try:
        conn.execute("PRAGMA journal_mode = DELETE")  # served immutable: nothing may wait in a WAL file
        with conn:
            conn.execute("DROP TABLE IF EXISTS run_scores")
            conn.execute(RUN_SCORES_DDL)
            conn.executemany(f"INSERT INTO run_scores VALUES ({', '.join('?' * len(RUN_SCORE_COLUMNS))})",
                             [[r[c] for c in RUN_SCORE_COLUMNS] for r in rows])
    except sqlite3.Error as exc:
        raise explain(exc, db=snapshot) from None
    finally:
        conn.close()
