"""Generation calls (`helmbench generate`): cached by content like every other call.

Why a table of its own: a generated variant is paid for once. The key is the sha256 of the
exact request (model, settings, messages, response format), the same hash the written file
records as `prompt_hash`, so a second identical invocation finds every answer here and makes
no call. Every answer that was paid for is stored as it arrives (the run's writer commits
within a quarter second), usable or not, so a crash or Ctrl-C never loses one and a re-run
never pays for it again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import json
from datetime import datetime, timezone

if TYPE_CHECKING:  # annotations only: importing sqlite_utils costs ~0.25 s (it loads pandas)
    import sqlite_utils

DDL = """
CREATE TABLE generations (
  prompt_hash TEXT PRIMARY KEY,
  purpose TEXT NOT NULL,
  model TEXT NOT NULL,
  settings_json TEXT NOT NULL,
  content TEXT,
  finish_reason TEXT,
  cost REAL,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  provider TEXT,
  generation_id TEXT,
  created_at TEXT NOT NULL
)
"""


def apply(db: sqlite_utils.Database) -> None:
    db.conn.execute(DDL)


def cached(db: sqlite_utils.Database, prompt_hash: str) -> dict | None:
    """The stored answer to this exact request, or None."""
    cur = db.execute("SELECT * FROM generations WHERE prompt_hash = ?", [prompt_hash])
    row = cur.fetchone()
    return dict(zip([d[0] for d in cur.description], row)) if row else None


_INSERT = ("INSERT OR IGNORE INTO generations (prompt_hash, purpose, model, settings_json, content, finish_reason, "
           "cost, prompt_tokens, completion_tokens, provider, generation_id, created_at) "
           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


def store_batch(db: sqlite_utils.Database, rows: list[dict]) -> int:
    """Keep paid answers (one transaction; the run's writer thread calls this). The first answer
    to a request wins: a replayed write never changes what a file's `prompt_hash` points to."""
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    with db.conn as conn:
        conn.executemany(_INSERT, [
            [r["prompt_hash"], r["purpose"], r["model"], json.dumps(r["settings"], sort_keys=True), r["content"],
             r["finish_reason"], r["cost"], r["prompt_tokens"], r["completion_tokens"], r["provider"],
             r["generation_id"], created] for r in rows])
    return len(rows)

