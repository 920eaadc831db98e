"""The schema as a reader finds it: tables and their columns (Datasette's metadata is generated from it)."""

from __future__ import annotations

import sqlite3


def table_columns(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """table → column names, tables by name (SQLite's own tables left out)."""
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    return {t: [r[1] for r in conn.execute(f"PRAGMA table_info([{t}])")] for t in tables}
