"""Open results.db: WAL, foreign keys, a busy timeout, and every pending migration applied.

WAL lets Datasette and the site read while a run writes; `synchronous=NORMAL` in WAL mode
keeps every committed transaction across a process crash (kill -9), which is what
resumability needs (power loss may lose the last commits, never corrupt the file).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlite_utils

from helmbench.store.migrations import migrate

DEFAULT_DB = Path("build/results.db")


def connect(path: Path | str) -> sqlite_utils.Database:
    """A connection with the pragmas every user of the database needs, without migrating."""
    conn = sqlite3.connect(str(path), timeout=30)
    db = sqlite_utils.Database(conn)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA busy_timeout = 30000")
    conn.execute("PRAGMA synchronous = NORMAL")
    return db


def open_db(path: Path | str = DEFAULT_DB) -> sqlite_utils.Database:
    """Open (creating if needed) and migrate; the caller is the one writer."""
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    db = connect(path)
    if str(path) != ":memory:":
        db.conn.execute("PRAGMA journal_mode = WAL")
    migrate(db)
    return db


def open_existing(path: Path | str) -> sqlite_utils.Database | None:
    """For read-mostly commands (dry-run, costs): None when there is no database yet."""
    return open_db(path) if Path(path).exists() else None
