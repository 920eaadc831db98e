"""A consistent copy of results.db (`VACUUM INTO`), for serving while a run may be writing the original,
and the public copy of it, which holds only what the published leaderboard reads.

Why the copy is made in a fresh folder and then moved: SQLite opens `VACUUM INTO`'s target by
name and would follow a symbolic link planted there; a folder HELMBench has just created holds
none, and the finished file is moved into place by the safe writer (never through a link).
"""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from helmbench import safewrite
from helmbench.errors import explain
from helmbench.store.db import open_readonly

#: The tables a public snapshot (`helmbench serve --publish`) keeps: what the leaderboard, its
#: scores and Datasette's canned queries read. Everything else (clinicians' reviews and notes,
#: generated drafts, any table a later migration adds) is left out until it is listed here.
PUBLIC_TABLES = (
    "manifests", "manifest_cases", "cases", "pillars", "behaviours", "scenarios", "conditions", "user_contexts",
    "perturbations",
    "models", "runs", "results", "responses", "judgements", "result_judgements",
    "turns", "result_turns", "checkpoint_verdicts",
    "run_scores", "migrations", "calls", "imports",
)


@contextmanager
def vacuum_into(src: Path | str, dest: Path | str, root: Path | str | None = None) -> Iterator[Path]:
    """A compact, consistent copy of `src`, yielded (in a fresh folder) for the caller to complete,
    then moved to `dest` (replaced if present) when the block ends without an exception.

    The source is opened (and checked) read-only first, so a corrupt file is refused before
    anything is written; a failure while writing (a full disk) names the copy's folder, not the
    source, and leaves no half-written copy behind.
    """
    dest = Path(dest)
    conn = open_readonly(src)
    work = None
    try:
        work = safewrite.fresh_dir(dest.parent, ".snapshot-", root)
        copy = work / dest.name
        conn.execute("VACUUM INTO ?", [str(copy)])
        conn.close()
        yield copy
        safewrite.place(copy, dest, root)
    except sqlite3.Error as exc:
        raise explain(exc, db=dest.parent) from None
    finally:
        conn.close()
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    return dest


def keep_only(snapshot: Path | str, tables: tuple[str, ...] = PUBLIC_TABLES) -> list[str]:
    """Drop every table of `snapshot` not in `tables` (a full-text index goes with its table), then
    VACUUM, so nothing of a dropped table stays in the file's free pages; returns what was dropped."""
    conn = sqlite3.connect(str(snapshot))
    try:
        conn.execute("PRAGMA secure_delete = ON")
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                           "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        kept = set(tables)
        gone = [n for n in names if n not in kept and not any(n.startswith(f"{t}_fts") for t in kept)]
        virtual = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL%'")}
        with conn:
            for name in sorted(gone, key=lambda n: n not in virtual):  # an FTS table before its shadow tables
                if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", [name]).fetchone():
                    conn.execute(f'DROP TABLE "{name}"')
        conn.execute("VACUUM")
        return gone
    except sqlite3.Error as exc:
        raise explain(exc, db=Path(snapshot).parent) from None
    finally:
        conn.close()


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
